//! `prompts/list`, `prompts/get` and `completion/complete`: registry specs in, MCP JSON out.
//!
//! A prompt's arguments arrive as an object of strings and are parsed by its argument type's
//! own rules, like a tool's; its answer is [`rendered`](groundkit_core::prompt::rendered), the
//! same JSON its REST route answers. A completion names a prompt (`ref/prompt`) or a resource
//! template, by its template as listed (`ref/resource`); an argument without a completer
//! completes to no values, and an unknown prompt or template is -32602. A failed get or
//! completion is a JSON-RPC error rendered like a failed read ([`resources::failure`]).

use std::collections::BTreeMap;

use groundkit_core::prompt::{self, PromptSpec};
use groundkit_core::{Completion, Error};
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::{Map, Value, json};

use super::methods::Call;
use super::protocol::Revision;
use super::resources;
use super::tools::{effect_meta, icons};
use crate::edge::problem::{self, Problem, rpc_code};
use crate::invoke;
use crate::state::AppState;

type RpcResult = Result<Value, ErrorObjectOwned>;

fn invalid_params(message: impl Into<String>) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(rpc_code::INVALID_PARAMS, message.into(), None::<()>)
}

/// A prompt as `prompts/list` describes it.
pub fn entry(spec: &PromptSpec, revision: Revision) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(spec.name()));
    if revision.has_structured_output()
        && let Some(title) = spec.title()
    {
        entry.insert("title".into(), json!(title));
    }
    entry.insert("description".into(), json!(spec.description()));
    let arguments: Vec<Value> = spec
        .arguments()
        .into_iter()
        .map(|argument| {
            let mut item = json!({ "name": argument.name, "required": argument.required });
            if let Some(description) = argument.description {
                item["description"] = json!(description);
            }
            item
        })
        .collect();
    entry.insert("arguments".into(), json!(arguments));
    if let Some(icons) = icons(spec.icon(), revision) {
        entry.insert("icons".into(), icons);
    }
    if revision.has_structured_output() {
        entry.insert("_meta".into(), effect_meta(spec.side_effect()));
    }
    Value::Object(entry)
}

/// `prompts/get`: the named prompt with the params' `arguments`.
pub async fn get<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    params: &Map<String, Value>,
    call: &Call,
) -> RpcResult {
    let (request_id, revision) = (call.request_id.as_str(), call.revision);
    let Some(Value::String(name)) = params.get("name") else {
        return Err(invalid_params("Invalid params: name must be a string"));
    };
    let Some(spec) = state.registry.prompt(name) else {
        return Err(invalid_params(format!(
            "Invalid params: unknown prompt '{name}'"
        )));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(arguments)) => Value::Object(arguments.clone()),
        Some(_) => {
            return Err(invalid_params(
                "Invalid params: arguments must be an object",
            ));
        }
    };
    let outcome = invoke::get_prompt(state, spec, arguments, call.request_context()).await;
    match outcome {
        Ok(messages) => Ok(complete_result(prompt::rendered(spec, &messages), revision)),
        Err(error) => Err(failed(error, request_id, revision)),
    }
}

/// `completion/complete`: the completer of the referenced prompt's or template's argument.
pub async fn complete<Ctx: Send + Sync + 'static>(
    state: &AppState<Ctx>,
    params: &Map<String, Value>,
    call: &Call,
) -> RpcResult {
    let (request_id, revision) = (call.request_id.as_str(), call.revision);
    let reference = params.get("ref").and_then(Value::as_object);
    let (name, completers) = match reference
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str)
    {
        Some("ref/prompt") => {
            let Some(name) = reference
                .and_then(|r| r.get("name"))
                .and_then(Value::as_str)
            else {
                return Err(invalid_params("Invalid params: ref.name must be a string"));
            };
            match state.registry.prompt(name) {
                Some(spec) => (spec.name(), spec.completers()),
                None => {
                    return Err(invalid_params(format!(
                        "Invalid params: unknown prompt '{name}'"
                    )));
                }
            }
        }
        Some("ref/resource") => {
            let Some(uri) = reference.and_then(|r| r.get("uri")).and_then(Value::as_str) else {
                return Err(invalid_params("Invalid params: ref.uri must be a string"));
            };
            match state.registry.resource_template(uri) {
                Some(spec) => (spec.uri().template, spec.completers()),
                None => {
                    return Err(invalid_params(format!(
                        "Invalid params: unknown resource template '{uri}'"
                    )));
                }
            }
        }
        _ => {
            return Err(invalid_params(
                "Invalid params: ref.type must be \"ref/prompt\" or \"ref/resource\"",
            ));
        }
    };
    let completion = completion(params)?;
    match invoke::complete(state, name, completers, completion, call.request_context()).await {
        Ok(completions) => Ok(complete_result(completions.to_json(), revision)),
        Err(error) => Err(failed(error, request_id, revision)),
    }
}

/// `result`, marked whole (`resultType`) as the stateless era requires of every result.
fn complete_result(mut result: Value, revision: Revision) -> Value {
    if revision.is_stateless() {
        result["resultType"] = json!("complete");
    }
    result
}

/// The argument, its typed value and the arguments already given.
fn completion(params: &Map<String, Value>) -> Result<Completion, ErrorObjectOwned> {
    let argument = params.get("argument").and_then(Value::as_object);
    let text = |key: &str| argument.and_then(|a| a.get(key)).and_then(Value::as_str);
    let (Some(name), Some(value)) = (text("name"), text("value")) else {
        return Err(invalid_params(
            "Invalid params: argument must have a string name and value",
        ));
    };
    let mut arguments = BTreeMap::new();
    let given = params
        .get("context")
        .and_then(|c| c.get("arguments"))
        .and_then(Value::as_object);
    for (key, value) in given.into_iter().flatten() {
        let Some(value) = value.as_str() else {
            return Err(invalid_params(
                "Invalid params: context.arguments must map names to strings",
            ));
        };
        arguments.insert(key.clone(), value.to_owned());
    }
    Ok(Completion {
        argument: name.to_owned(),
        value: value.to_owned(),
        arguments,
    })
}

/// The error answering a get or completion that failed with `error`, logged.
fn failed(error: Error, request_id: &str, revision: Revision) -> ErrorObjectOwned {
    let problem = Problem::from(error);
    problem::log(&problem, request_id);
    resources::failure(&problem, None, request_id, revision)
}
