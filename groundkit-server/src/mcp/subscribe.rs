//! The subscription methods of the table: `resources/subscribe` and `resources/unsubscribe` in
//! a conversation of the handshake era, `subscriptions/listen` in the stateless era. Who follows
//! what, and where it is pushed, is `subscriptions`'.

use groundkit_core::{Error, RequestContext};
use serde_json::{Map, Value, json};

use super::methods::{Call, RpcResult, invalid_params, rpc_error};
use super::resources;
use crate::edge::problem::{Problem, rpc_code};
use crate::state::AppState;

/// `resources/subscribe` (`follow`) or `resources/unsubscribe`: the conversation follows, or no
/// longer follows, a URI the registry serves (-32002 for another, as `resources/read` answers).
pub(super) fn subscribe<Ctx>(
    state: &AppState<Ctx>,
    params: &Map<String, Value>,
    call: &Call,
    follow: bool,
) -> RpcResult {
    if state.registry.resources().is_empty() {
        return Err(rpc_error(rpc_code::METHOD_NOT_FOUND, "Method not found"));
    }
    let Some(Value::String(uri)) = params.get("uri") else {
        return Err(invalid_params("Invalid params: uri must be a string"));
    };
    if !follow {
        state.mcp.updates.unsubscribe(call.peer.id(), uri);
        return Ok(json!({}));
    }
    if state.registry.resource_for(uri).is_none() {
        let problem = Problem::from(Error::NotFound {
            resource: "resource",
            id: uri.clone(),
        });
        return Err(resources::failure(
            &problem,
            Some(uri),
            &call.request_id,
            call.revision,
        ));
    }
    match call.peer.subscribe(&state.mcp.updates, uri) {
        Ok(()) => Ok(json!({})),
        Err(_) => Err(invalid_params(format!(
            "Invalid params: a conversation may follow at most {} resources",
            crate::mcp::subscriptions::MAX_SUBSCRIPTIONS
        ))),
    }
}

/// `subscriptions/listen` (stateless era): follows the URIs of
/// `notifications.resourceSubscriptions` the registry serves until the request ends (its
/// connection closes, the client cancels it, or the stdio input ends), acknowledging first with
/// what it honors: those URIs (no list changes: this server's lists never change). Its
/// notifications go down the channel its answer goes down, so it needs one that streams (over
/// HTTP, `Accept: text/event-stream`).
pub(super) async fn listen<Ctx>(
    state: &AppState<Ctx>,
    params: &Map<String, Value>,
    call: &Call,
) -> RpcResult {
    let Some(push) = call.notify.clone() else {
        return Err(rpc_error(
            rpc_code::INVALID_REQUEST,
            "Invalid Request: subscriptions/listen is answered as a stream; accept text/event-stream",
        ));
    };
    let id: Value = call
        .id
        .as_deref()
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Null);
    let Some(filter) = params.get("notifications").and_then(Value::as_object) else {
        return Err(invalid_params(
            "Invalid params: notifications must be an object",
        ));
    };
    let requested = match filter.get("resourceSubscriptions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(uris)) => uris
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                invalid_params("Invalid params: resourceSubscriptions must be a list of URIs")
            })?,
        Some(_) => {
            return Err(invalid_params(
                "Invalid params: resourceSubscriptions must be a list of URIs",
            ));
        }
    };
    // The first URIs the registry serves, each once, up to the limit.
    let mut honored: Vec<String> = Vec::new();
    for uri in requested {
        if honored.len() == crate::mcp::subscriptions::MAX_SUBSCRIPTIONS {
            break;
        }
        if state.registry.resource_for(uri).is_some() && !honored.iter().any(|h| h == uri) {
            honored.push(uri.to_owned());
        }
    }
    let tag = json!({ crate::mcp::subscriptions::SUBSCRIPTION_ID: id });
    let _listening = state.mcp.updates.listen(id, &honored, push.clone());
    let mut notifications = json!({});
    if !honored.is_empty() {
        notifications["resourceSubscriptions"] = json!(honored);
    }
    let acknowledged = json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": { "notifications": notifications, "_meta": tag },
    });
    let _ = push.send(acknowledged.to_string());
    let closed = call.request_context();
    let ended = RequestContext::new(call.request_id.as_str(), call.transport)
        .cancelled_with(call.peer.ended());
    tokio::select! {
        () = closed.cancelled(), if call.closed.is_some() => {}
        () = ended.cancelled() => {}
    }
    Ok(json!({ "_meta": tag, "resultType": "complete" }))
}
