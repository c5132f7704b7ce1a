//! The REST surface: one actix route per registered tool, resource and prompt, and nothing the
//! registry does not declare besides `GET /openapi.json`.
//!
//! POST tools take a JSON object body; GET tools take only path parameters. A resource is a GET
//! whose path parameters are its URI variables, answered with its content as the body under its
//! MIME type. A prompt is a POST whose JSON body is its arguments, answered with the JSON of
//! MCP's `prompts/get`. Path parameters are
//! merged into the arguments object, which the tool's own handler parses and validates, so REST
//! and MCP share one parser and one error mapping. No route accepts a query string (the
//! [`request_context`](crate::edge::access::request_context) middleware refuses it before
//! routing). Every resource here is tagged [`Transport::Rest`] for the access line.
//!
//! This module imports from [`edge`](crate::edge), never from [`mcp`](crate::mcp).

use std::sync::Arc;

use actix_web::http::Method;
use actix_web::middleware::from_fn;
use actix_web::{HttpRequest, HttpResponse, web};
use groundkit_core::prompt;
use groundkit_core::tool::HttpMethod;
use groundkit_core::{Content, Error, PromptSpec, RequestContext, ResourceSpec, ToolSpec};
use serde_json::{Map, Value};

use crate::edge::access::{self, Transport};
use crate::edge::body::{self, BodyLimits};
use crate::edge::deadline::Closed;
use crate::edge::id::RequestId;
use crate::edge::problem::{self, Problem, Refusal};
use crate::invoke::{get_prompt, invoke, read};
use crate::state::AppState;

/// The path of the OpenAPI document.
pub const OPENAPI_PATH: &str = "/openapi.json";

// No tool may claim the OpenAPI path.
#[linkme::distributed_slice(groundkit_core::registry::RESERVED_PATHS)]
static RESERVED_OPENAPI: &str = OPENAPI_PATH;

/// Register one resource per tool, plus `/openapi.json`.
pub fn configure<Ctx: Send + Sync + 'static>(
    state: &Arc<AppState<Ctx>>,
    cfg: &mut web::ServiceConfig,
) {
    for spec in state.registry.tools() {
        let spec: &'static ToolSpec = spec;
        let route = spec.route();
        let (method, allow) = match route.method {
            HttpMethod::Get => (Method::GET, "GET"),
            HttpMethod::Post => (Method::POST, "POST"),
        };
        let state = Arc::clone(state);
        cfg.service(
            web::resource(route.path)
                .name(spec.name())
                .wrap(from_fn(access::tagged(Transport::Rest)))
                .route(web::route().method(method).to(
                    move |req: HttpRequest, body: web::Payload| {
                        call(Arc::clone(&state), spec, req, body)
                    },
                ))
                .default_service(web::to(move |req| method_not_allowed(req, allow))),
        );
    }
    for spec in state.registry.resources() {
        let spec: &'static ResourceSpec = spec;
        let state = Arc::clone(state);
        cfg.service(
            web::resource(spec.route().path)
                .wrap(from_fn(access::tagged(Transport::Rest)))
                .route(
                    web::get()
                        .to(move |req: HttpRequest| read_resource(Arc::clone(&state), spec, req)),
                )
                .default_service(web::to(|req| method_not_allowed(req, "GET"))),
        );
    }
    for spec in state.registry.prompts() {
        let spec: &'static PromptSpec = spec;
        let state = Arc::clone(state);
        cfg.service(
            web::resource(spec.route().path)
                .wrap(from_fn(access::tagged(Transport::Rest)))
                .route(web::post().to(move |req: HttpRequest, body: web::Payload| {
                    get(Arc::clone(&state), spec, req, body)
                }))
                .default_service(web::to(|req| method_not_allowed(req, "POST"))),
        );
    }
    let openapi = Arc::clone(&state.openapi);
    cfg.service(
        web::resource(OPENAPI_PATH)
            .wrap(from_fn(access::tagged(Transport::Rest)))
            .route(web::get().to(move || {
                let openapi = Arc::clone(&openapi);
                async move {
                    HttpResponse::Ok()
                        .content_type("application/json")
                        .body(openapi.to_string())
                }
            }))
            .default_service(web::to(|req| method_not_allowed(req, "GET"))),
    );
}

/// 405, naming the one method the route serves.
async fn method_not_allowed(req: HttpRequest, allow: &'static str) -> HttpResponse {
    problem::response(Refusal::MethodNotAllowed { allow }, &RequestId::of(&req))
}

async fn call<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    spec: &'static ToolSpec,
    req: HttpRequest,
    body: web::Payload,
) -> HttpResponse {
    access::note(&req, |note| note.tool = Some(spec.name().into()));
    let result = match arguments(spec, &req, body, state.limits.body()).await {
        Ok(arguments) => invoke(&state, spec, arguments, rest_call(&req))
            .await
            .map_err(Problem::from),
        Err(problem) => Err(problem),
    };
    match result {
        Ok(output) => {
            let count = result_count(&output);
            access::note(&req, |note| note.results = count);
            HttpResponse::Ok().json(output)
        }
        Err(problem) => problem::response(problem, &RequestId::of(&req)),
    }
}

async fn read_resource<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    spec: &'static ResourceSpec,
    req: HttpRequest,
) -> HttpResponse {
    access::note(&req, |note| note.tool = Some(spec.name().into()));
    let arguments = path_arguments(spec.route().params, &req, Map::new());
    match arguments {
        Ok(arguments) => {
            match read(&state, spec, Value::Object(arguments), rest_call(&req)).await {
                Ok(Content::Text(text)) => {
                    HttpResponse::Ok().content_type(spec.mime_type()).body(text)
                }
                Ok(Content::Blob(bytes)) => HttpResponse::Ok()
                    .content_type(spec.mime_type())
                    .body(bytes),
                Err(error) => problem::response(error, &RequestId::of(&req)),
            }
        }
        Err(problem) => problem::response(problem, &RequestId::of(&req)),
    }
}

async fn get<Ctx: Send + Sync + 'static>(
    state: Arc<AppState<Ctx>>,
    spec: &'static PromptSpec,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    access::note(&req, |note| note.tool = Some(spec.name().into()));
    let result = match json_body(&req, payload, state.limits.body()).await {
        Ok(arguments) => get_prompt(&state, spec, Value::Object(arguments), rest_call(&req))
            .await
            .map_err(Problem::from),
        Err(problem) => Err(problem),
    };
    match result {
        Ok(messages) => HttpResponse::Ok().json(prompt::rendered(spec, &messages)),
        Err(problem) => problem::response(problem, &RequestId::of(&req)),
    }
}

/// The context of a call on the REST route serving `req`, cancelled if its connection closes.
fn rest_call(req: &HttpRequest) -> RequestContext {
    let call = RequestContext::new(RequestId::of(req), Transport::Rest);
    match req.conn_data::<Closed>() {
        Some(Closed(closed)) => call.cancelled_with(closed),
        None => call,
    }
}

/// A JSON object body.
async fn json_body(
    req: &HttpRequest,
    payload: web::Payload,
    limits: BodyLimits,
) -> Result<Map<String, Value>, Problem> {
    if !body::is_json(req) {
        return Err(Refusal::UnsupportedMediaType.into());
    }
    let bytes = body::read(req, payload, limits).await?;
    Ok(groundkit_core::request::parse_object(&bytes)?)
}

/// The arguments object: the JSON body (POST) with the path parameters merged in.
async fn arguments(
    spec: &ToolSpec,
    req: &HttpRequest,
    payload: web::Payload,
    limits: BodyLimits,
) -> Result<Value, Problem> {
    let route = spec.route();
    let mut object = Map::new();
    if route.method == HttpMethod::Post {
        object = json_body(req, payload, limits).await?;
    }
    path_arguments(route.params, req, object).map(Value::Object)
}

/// `object` with each path parameter added, refusing one the body already gave.
fn path_arguments(
    params: &[&str],
    req: &HttpRequest,
    mut object: Map<String, Value>,
) -> Result<Map<String, Value>, Problem> {
    for param in params {
        let value = req.match_info().get(param).unwrap_or_default();
        if object
            .insert((*param).to_owned(), Value::String(value.to_owned()))
            .is_some()
        {
            return Err(Error::InvalidRequest {
                field: Some((*param).to_owned()),
                message: format!("`{param}` is given by the path; do not repeat it in the body"),
            }
            .into());
        }
    }
    Ok(object)
}

/// How many results a response carries, for the access log: the length of its `results` array,
/// or of its only top-level array.
fn result_count(output: &Value) -> Option<usize> {
    let object = output.as_object()?;
    if let Some(results) = object.get("results").and_then(Value::as_array) {
        return Some(results.len());
    }
    let mut arrays = object.values().filter_map(Value::as_array);
    match (arrays.next(), arrays.next()) {
        (Some(only), None) => Some(only.len()),
        _ => None,
    }
}
