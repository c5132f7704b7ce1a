//! Request bodies: the JSON content-type check and the bounded body reader, shared by REST and
//! MCP over HTTP.

use actix_web::http::header;
use actix_web::{HttpRequest, web};
use futures_util::StreamExt;
use groundkit_core::Error;

use super::problem::{Problem, Refusal};

/// What a body may cost: its size and the time to send it. The server's
/// [`Limits`](crate::Limits) hand these two down, so this module needs nothing above it.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    /// Largest body accepted, in bytes.
    pub max_bytes: usize,
    /// Time a client has to send the whole body once its headers are in.
    pub timeout: std::time::Duration,
}

/// Whether the request declares a JSON body (`application/json` or `application/*+json`, in
/// any case, whatever its parameters). Read in place: nothing is allocated for it.
pub fn is_json(req: &HttpRequest) -> bool {
    let Some(value) = req.headers().get(header::CONTENT_TYPE) else {
        return false;
    };
    let essence = value
        .as_bytes()
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default();
    let essence = essence.trim_ascii();
    let Some(slash) = essence.iter().position(|&b| b == b'/') else {
        return false;
    };
    let (kind, subtype) = (&essence[..slash], &essence[slash + 1..]);
    let token = |s: &[u8]| !s.is_empty() && s.iter().all(|&b| b.is_ascii_graphic() && b != b'/');
    let json = subtype.eq_ignore_ascii_case(b"json")
        || (subtype.len() > 5 && subtype[subtype.len() - 5..].eq_ignore_ascii_case(b"+json"));
    kind.eq_ignore_ascii_case(b"application") && token(subtype) && json
}

/// Read a request body of at most [`BodyLimits::max_bytes`] within [`BodyLimits::timeout`]:
/// refused from its declared `Content-Length` before any byte is read, as soon as the streamed
/// bytes pass the limit, and when the deadline passes, so an oversized or stalled body is never
/// held.
pub async fn read(
    req: &HttpRequest,
    body: web::Payload,
    limits: BodyLimits,
) -> Result<web::Bytes, Problem> {
    let deadline = limits.timeout;
    tokio::time::timeout(deadline, read_capped(req, body, limits.max_bytes))
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
    // A declared length is allocated once, at its size: growing by doubling would copy the
    // body as it arrives and leave a larger block behind.
    let mut bytes = web::BytesMut::with_capacity(declared.unwrap_or(0));
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

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::is_json;

    fn declares(content_type: Option<&str>) -> bool {
        let mut req = TestRequest::default();
        if let Some(value) = content_type {
            req = req.insert_header(("content-type", value));
        }
        is_json(&req.to_http_request())
    }

    #[test]
    fn json_is_recognised_by_its_media_type_whatever_its_case_and_parameters() {
        for json in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "  application/json  ;charset=\"utf-8\"",
            "application/vnd.api+json",
            "application/problem+JSON; q=1",
        ] {
            assert!(declares(Some(json)), "{json:?} refused");
        }
        for other in [
            "",
            "json",
            "text/json",
            "text/plain; application/json",
            "application/json-seq",
            "application/jsonx",
            "application/+json",
            "application / json",
            "application/json/x",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=json",
        ] {
            assert!(!declares(Some(other)), "{other:?} taken for JSON");
        }
        assert!(!declares(None));
    }
}
