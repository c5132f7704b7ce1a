//! Request bodies: the JSON content-type check and the bounded body reader, shared by REST and
//! MCP over HTTP.

use actix_web::http::header;
use actix_web::{HttpMessage, HttpRequest, web};
use futures_util::StreamExt;
use groundkit_core::Error;

use super::problem::{Problem, Refusal};
use crate::state::Limits;

/// Whether the request declares a JSON body (`application/json` or `application/*+json`).
pub fn is_json(req: &HttpRequest) -> bool {
    req.mime_type().ok().flatten().is_some_and(|mime| {
        mime.type_() == "application"
            && (mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"))
    })
}

/// Read a request body of at most [`Limits::max_body_bytes`] within [`Limits::body_timeout`]:
/// refused from its declared `Content-Length` before any byte is read, as soon as the streamed
/// bytes pass the limit, and when the deadline passes, so an oversized or stalled body is never
/// held.
pub async fn read(
    req: &HttpRequest,
    body: web::Payload,
    limits: &Limits,
) -> Result<web::Bytes, Problem> {
    let deadline = limits.body_timeout;
    tokio::time::timeout(deadline, read_capped(req, body, limits.max_body_bytes))
        .await
        .unwrap_or(Err(Problem::Refused(Refusal::BodyTimeout {
            seconds: deadline.as_secs(),
        })))
}

async fn read_capped(
    req: &HttpRequest,
    mut body: web::Payload,
    limit: usize,
) -> Result<web::Bytes, Problem> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > limit) {
        return Err(Refusal::PayloadTooLarge { limit }.into());
    }
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|_| Error::InvalidRequest {
            field: None,
            message: "the request body could not be read".into(),
        })?;
        if bytes.len() + chunk.len() > limit {
            return Err(Refusal::PayloadTooLarge { limit }.into());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes.freeze())
}
