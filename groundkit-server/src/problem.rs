//! Rendering an [`Error`] as RFC 9457 problem details: the REST edge of the one error mapping.
//!
//! The status, `kind` and shown detail all come from [`Error::mapping`]; this module only
//! formats them. The full error, with its source chain, is logged against the request id for
//! the operator and never rendered.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use groundkit_core::Error;
use serde_json::json;

/// The problem-details body for `error`.
pub fn body(error: &Error, request_id: &str) -> serde_json::Value {
    let mapping = error.mapping();
    let status =
        StatusCode::from_u16(mapping.http_status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut body = json!({
        "type": format!("urn:groundkit:error:{}", mapping.kind),
        "title": status.canonical_reason().unwrap_or("Error"),
        "status": status.as_u16(),
        "detail": error.public_detail(),
        "kind": mapping.kind,
        "request_id": request_id,
    });
    if let Some(field) = error.field() {
        body["field"] = json!(field);
    }
    body
}

/// The `application/problem+json` response for `error`, logging it server-side first.
pub fn response(error: &Error, request_id: &str) -> HttpResponse {
    log(error, request_id);
    let status = StatusCode::from_u16(error.mapping().http_status)
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpResponse::build(status)
        .content_type("application/problem+json")
        .body(body(error, request_id).to_string())
}

/// Log the full error for the operator: opaque kinds at ERROR with their sources, caller errors
/// at DEBUG (the access log already records their status).
pub fn log(error: &Error, request_id: &str) {
    if error.mapping().expose_message {
        tracing::debug!(request_id, kind = error.kind(), "request refused: {error}");
    } else {
        tracing::error!(request_id, kind = error.kind(), error = ?error, "request failed: {error}");
    }
}
