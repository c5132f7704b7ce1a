//! Random ids: the one generator behind request ids and MCP session ids, and the request id a
//! request carries in its extensions.

use actix_web::{HttpMessage, HttpRequest};
use rand::Rng;

/// Response header carrying the request id.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A fresh random id: 128 bits, as 32 lower-case hex digits.
pub fn random_id() -> String {
    format!("{:032x}", rand::rng().random::<u128>())
}

/// The id of one request, in its extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

impl RequestId {
    /// A fresh random id.
    pub fn generate() -> Self {
        RequestId(random_id())
    }

    /// The id of `req` (set by [`request_context`](super::access::request_context); a fresh
    /// one if it is missing).
    pub fn of(req: &HttpRequest) -> String {
        req.extensions()
            .get::<RequestId>()
            .map(|id| id.0.clone())
            .unwrap_or_else(random_id)
    }
}
