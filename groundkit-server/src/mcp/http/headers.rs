//! What Streamable HTTP adds around a JSON-RPC body: the request's headers, read once, their
//! cross-checks against the body, and the HTTP status an [`Outcome`] travels with.

use actix_web::HttpRequest;
use actix_web::http::StatusCode;
use actix_web::http::header::{ACCEPT, HeaderName};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::super::answer::Outcome;
use super::super::jsonrpc::Request;
use super::super::protocol::HeaderVersion;
use crate::edge::problem::rpc_code;

/// Protocol version header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// The stateless era's method header.
pub const METHOD_HEADER: &str = "mcp-method";
/// The stateless era's name header.
pub const NAME_HEADER: &str = "mcp-name";

const VERSION: HeaderName = HeaderName::from_static(VERSION_HEADER);
const METHOD: HeaderName = HeaderName::from_static(METHOD_HEADER);
const NAME: HeaderName = HeaderName::from_static(NAME_HEADER);

/// The value of header `name`, when it is there and visible ASCII. (Looked up by a
/// [`HeaderName`]: a lookup by `&str` allocates a name for every header HTTP does not define.)
pub fn header<'a>(req: &'a HttpRequest, name: &HeaderName) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The MCP headers of one request (owned: a streamed answer outlives the request).
#[derive(Debug, Clone, Default)]
pub struct Headers {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
    /// `Mcp-Method`.
    pub method: Option<String>,
    /// `Mcp-Name`.
    pub name: Option<String>,
}

impl Headers {
    /// The MCP headers of `req`.
    pub fn of(req: &HttpRequest) -> Self {
        let owned = |name| header(req, name).map(str::to_owned);
        Self {
            protocol_version: owned(&VERSION),
            method: owned(&METHOD),
            name: owned(&NAME),
        }
    }

    /// What `MCP-Protocol-Version` names.
    pub fn version(&self) -> HeaderVersion<'_> {
        HeaderVersion::read(self.protocol_version.as_deref())
    }

    /// Whether the headers agree with a stateless-era `request` whose `_meta` names `version`:
    /// the version, the method, and the tool (or prompt, or resource) name must be repeated.
    pub fn agree_with(&self, request: &Request, version: &str) -> Result<(), &'static str> {
        if self.version().as_str() != Some(version) {
            return Err(
                "Header mismatch: MCP-Protocol-Version must equal params._meta protocolVersion",
            );
        }
        if self.method.as_deref().map(decode) != Some(request.method.clone()) {
            return Err("Header mismatch: Mcp-Method must equal the request method");
        }
        let name = request
            .params
            .as_ref()
            .and_then(|p| match request.method.as_str() {
                "tools/call" | "prompts/get" => p.get("name"),
                "resources/read" => p.get("uri"),
                _ => None,
            });
        if let Some(Value::String(name)) = name
            && self.name.as_deref().map(decode).as_ref() != Some(name)
        {
            return Err("Header mismatch: Mcp-Name must equal params.name");
        }
        Ok(())
    }
}

/// A header value as the sender meant it: trimmed, and `=?base64?…?=` decoded (how non-ASCII
/// names travel). A sentinel that does not decode stays as it is, so it cannot match.
fn decode(value: &str) -> String {
    let value = value.trim();
    value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|b64| STANDARD.decode(b64).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_owned())
}

/// What the client's `Accept` allows.
pub struct Accepts {
    /// `application/json`.
    pub json: bool,
    /// `text/event-stream`.
    pub sse: bool,
}

/// Read `Accept` (absent: anything).
pub fn accepts(req: &HttpRequest) -> Accepts {
    let Some(accept) = header(req, &ACCEPT) else {
        return Accepts {
            json: true,
            sse: true,
        };
    };
    let ranges = || {
        accept
            .split(',')
            .map(|r| r.split(';').next().unwrap_or("").trim())
    };
    let any = |wanted: &[&str]| {
        ranges().any(|range| wanted.iter().any(|w| w.eq_ignore_ascii_case(range)))
    };
    Accepts {
        json: any(&["application/json", "application/*", "*/*"]),
        sse: any(&["text/event-stream", "text/*", "*/*"]),
    }
}

/// The HTTP status of an answer. The stateless era fixes error statuses (404 for an unknown
/// method, 400 for a refused request); the handshake era answers protocol errors with 200 and
/// reserves 400 for frames that are not requests at all.
pub fn status(outcome: Outcome) -> StatusCode {
    match outcome {
        Outcome::Result { .. } | Outcome::ToolError | Outcome::Batch => StatusCode::OK,
        Outcome::Refused => StatusCode::BAD_REQUEST,
        Outcome::Silent | Outcome::Cancelled => StatusCode::ACCEPTED,
        Outcome::RpcError { code, stateless } => match code {
            rpc_code::PARSE_ERROR | rpc_code::INVALID_REQUEST => StatusCode::BAD_REQUEST,
            rpc_code::METHOD_NOT_FOUND if stateless => StatusCode::NOT_FOUND,
            rpc_code::INTERNAL_ERROR if stateless => StatusCode::INTERNAL_SERVER_ERROR,
            _ if stateless => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        },
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    /// Media ranges are read case-insensitively, without their parameters, and wildcards count.
    #[test]
    fn accept_is_read_by_media_range_whatever_its_case_parameters_and_spacing() {
        let read = |accept: Option<&str>| {
            let mut req = TestRequest::default();
            if let Some(accept) = accept {
                req = req.insert_header((ACCEPT, accept));
            }
            let accepts = accepts(&req.to_http_request());
            (accepts.json, accepts.sse)
        };
        assert_eq!(read(None), (true, true));
        assert_eq!(read(Some("Application/JSON; q=0.9")), (true, false));
        assert_eq!(read(Some("TEXT/Event-Stream")), (false, true));
        assert_eq!(
            read(Some(" application/json , text/event-stream ")),
            (true, true)
        );
        assert_eq!(read(Some("text/html, */*;q=0.1")), (true, true));
        assert_eq!(read(Some("application/*")), (true, false));
        assert_eq!(read(Some("text/*;charset=utf-8")), (false, true));
        assert_eq!(read(Some("text/html")), (false, false));
        assert_eq!(
            read(Some("application/jsonx, text/event-streams")),
            (false, false)
        );
    }
}
