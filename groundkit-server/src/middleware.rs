//! Per-request bookkeeping around every route: the request id, the query-string refusal and the
//! INFO access log line.
//!
//! The access line carries request id, method, route pattern, tool, status, latency and result
//! count. It never carries a body or a query (free text travels in bodies precisely so it stays
//! out of logs).

use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest};
use rand::Rng;

use crate::edge::problem::{self, Refusal};

/// Response header carrying the request id.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The id of one request, in its extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

impl RequestId {
    /// A fresh random id (128 bits, hex).
    pub fn generate() -> Self {
        RequestId(format!("{:032x}", rand::rng().random::<u128>()))
    }

    /// The id of `req` (set by [`request_context`]; a fresh one if it is missing).
    pub fn of(req: &HttpRequest) -> String {
        req.extensions()
            .get::<RequestId>()
            .map(|id| id.0.clone())
            .unwrap_or_else(|| Self::generate().0)
    }
}

/// The tool a request was routed to, in its extensions (for the access log).
#[derive(Debug, Clone, Copy)]
pub struct ToolName(pub &'static str);

/// How many results a response carried, in the response's extensions (for the access log).
#[derive(Debug, Clone, Copy)]
pub struct ResultCount(pub usize);

/// Assign the request id, refuse query strings, add `X-Request-ID`, write the access line.
pub async fn request_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    let id = RequestId::generate();
    req.extensions_mut().insert(id.clone());
    let mut res = if !req.query_string().is_empty() {
        let response = problem::response(Refusal::QueryString, &id.0);
        req.into_response(response)
    } else {
        next.call(req).await?.map_into_boxed_body()
    };
    if let Ok(value) = HeaderValue::from_str(&id.0) {
        res.headers_mut()
            .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
    }
    access_log(&res, &id.0, started);
    Ok(res)
}

fn access_log(res: &ServiceResponse<BoxBody>, request_id: &str, started: Instant) {
    let req = res.request();
    let tool = req.extensions().get::<ToolName>().map(|t| t.0);
    let count = res
        .response()
        .extensions()
        .get::<ResultCount>()
        .map(|c| c.0);
    tracing::info!(
        target: "groundkit::access",
        request_id,
        transport = if req.path() == crate::mcp::http::PATH { "mcp-http" } else { "rest" },
        method = %req.method(),
        route = req.match_pattern().as_deref().unwrap_or("-"),
        tool = tool.unwrap_or("-"),
        status = res.status().as_u16(),
        latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        results = count,
        "request"
    );
}
