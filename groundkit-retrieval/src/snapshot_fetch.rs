//! Fetching `http://` URLs for `snapshot` sources (plain HTTP; this build carries no TLS stack,
//! so an `https://` URL is reported as a per-source failure).

use std::io::Read;
use std::time::Duration;

use crate::extract::{HTML_EXTRACTOR, html_to_text};

/// The largest response body accepted.
pub const MAX_BODY_BYTES: u64 = 32 << 20;

/// The text of a fetched URL.
pub struct Fetched {
    /// The text stored as the snapshot (extracted when the response was HTML).
    pub text: String,
    /// The extractor that produced `text`, when one did.
    pub extractor: Option<&'static str>,
}

/// Fetches `url` and turns the response into text. Errors name no URL or path.
pub fn fetch(url: &str, timeout: Duration) -> Result<Fetched, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .build()
        .into();
    let mut response = agent.get(url).call().map_err(|err| match err {
        ureq::Error::StatusCode(code) => format!("the server answered HTTP {code}"),
        other => format!("the fetch failed: {}", describe(&other)),
    })?;
    let is_html = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("html"));
    let mut bytes = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| "the response body could not be read".to_owned())?;
    if bytes.len() as u64 > MAX_BODY_BYTES {
        return Err(format!(
            "the response is larger than {MAX_BODY_BYTES} bytes"
        ));
    }
    if is_html {
        let text = html_to_text(&bytes).map_err(|err| format!("the page {err}"))?;
        return Ok(Fetched {
            text,
            extractor: Some(HTML_EXTRACTOR),
        });
    }
    let text = String::from_utf8(bytes).map_err(|_| "the response is not UTF-8 text".to_owned())?;
    Ok(Fetched {
        text,
        extractor: None,
    })
}

fn describe(err: &ureq::Error) -> &'static str {
    match err {
        ureq::Error::Timeout(_) => "timed out",
        ureq::Error::HostNotFound => "host not found",
        ureq::Error::ConnectionFailed => "connection failed",
        ureq::Error::Io(_) => "connection error",
        ureq::Error::BadUri(_) => "not a valid URL",
        _ => "unsupported URL or protocol error",
    }
}
