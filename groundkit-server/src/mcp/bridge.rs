//! The bridge to the jsonrpsee method table: call one method by name with a per-call [`Call`]
//! (which carries the named params), and get back its result as JSON text or an [`ErrorFrame`].
//!
//! Methods are called through the table's callbacks directly, with the [`Call`] in the
//! request's `Extensions`: `RpcModule::raw_json_request` would need a jsonrpsee request envelope
//! (whose id type cannot hold MCP ids) and cannot carry per-call extensions. The params travel
//! in the [`Call`] as the framing layer parsed them, not as jsonrpsee `Params` text.

use std::sync::Arc;

use jsonrpsee::core::server::{ConnectionId, Extensions, MethodCallback, Methods};
use jsonrpsee::types::{Id, Params};
use serde_json::Value;
use serde_json::value::RawValue;

use super::jsonrpc::ErrorFrame;
use super::methods::{self, Call};
use super::tools::ToolReply;
use crate::edge::problem::rpc_code;
use crate::state::AppState;

/// The method table of one server.
pub struct Table {
    methods: Methods,
}

impl Table {
    /// The table for `state`.
    pub fn new<Ctx: Send + Sync + 'static>(state: Arc<AppState<Ctx>>) -> Self {
        Self {
            methods: methods::table(state),
        }
    }

    /// Call `method` with `call` in its extensions.
    ///
    /// The result comes back as the JSON text the method table serialized, so it is spliced
    /// into the reply as it is rather than parsed and serialized again; a `tools/call` answer
    /// comes back as the frame it wrote.
    pub async fn call(&self, method: &str, call: Call) -> Result<Reply, ErrorFrame> {
        let Some(MethodCallback::Async(callback)) = self.methods.method(method) else {
            return Err(ErrorFrame::new(
                None,
                rpc_code::METHOD_NOT_FOUND,
                "Method not found",
            ));
        };
        let call = Arc::new(call);
        let mut extensions = Extensions::new();
        extensions.insert(Arc::clone(&call));
        let response = callback(
            Id::Number(0),
            Params::new(None),
            ConnectionId(0),
            usize::MAX,
            extensions,
        )
        .await;
        if let Some(reply) = call.result.take() {
            return Ok(Reply::Frame(reply));
        }
        unframe(response.as_json().get()).map(Reply::Result)
    }
}

/// What a method answered.
#[derive(Debug)]
pub enum Reply {
    /// Its result, as JSON text; the dispatcher writes the frame around it.
    Result(String),
    /// A `tools/call` answer, the frame written whole.
    Frame(ToolReply),
}

/// A response frame of the method table, with its result left as raw JSON.
#[derive(serde::Deserialize)]
struct TableFrame<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Value>,
}

/// The result or error inside a frame the table wrote.
fn unframe(json: &str) -> Result<String, ErrorFrame> {
    // jsonrpsee writes a success as exactly this prefix, the result, and `}`.
    if let Some(result) = json
        .strip_prefix(r#"{"jsonrpc":"2.0","id":0,"result":"#)
        .and_then(|rest| rest.strip_suffix('}'))
    {
        return Ok(result.to_owned());
    }
    let internal = || ErrorFrame::new(None, rpc_code::INTERNAL_ERROR, "Internal error");
    let frame: TableFrame<'_> = serde_json::from_str(json).map_err(|_| internal())?;
    if let Some(result) = frame.result {
        return Ok(result.get().to_owned());
    }
    let error = frame.error.ok_or_else(internal)?;
    let code = error
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(rpc_code::INTERNAL_ERROR);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("Internal error");
    let mut frame = ErrorFrame::new(None, code, message);
    frame.data = error.get("data").cloned();
    Err(frame)
}
