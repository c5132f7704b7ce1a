//! The fixture tools the official MCP conformance suite's `tools-call-*` scenarios call by name.
//!
//! Only the scenarios a read-only server can honour have a tool here: a text result, a tool
//! error, and progress notifications. The others (image, audio and embedded-resource content,
//! logging, sampling, elicitation) need content types or server-to-client requests that
//! groundkit tools do not produce; `tests/clients/conformance-expected-failures.yml` says why
//! for each.

use std::time::Duration;

use garde::Validate;
use groundkit_core::progress;
use groundkit_core::{Error, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The fixture needs no state.
#[derive(Debug, Clone, Default)]
pub struct ConformanceContext;

/// The fixture tools take no arguments.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

/// A text result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TextResult {
    /// The text.
    pub text: String,
}

/// Return a fixed text (conformance scenario `tools-call-simple-text`).
#[tool(read_only, rest = "GET /conformance/simple-text")]
pub async fn test_simple_text(
    _ctx: &ConformanceContext,
    _request: NoArguments,
) -> Result<TextResult, Error> {
    Ok(TextResult {
        text: "This is a simple text response for testing.".into(),
    })
}

/// Always fail with a tool error (conformance scenario `tools-call-error`).
#[tool(read_only, rest = "GET /conformance/error")]
pub async fn test_error_handling(
    _ctx: &ConformanceContext,
    _request: NoArguments,
) -> Result<TextResult, Error> {
    Err(Error::InvalidRequest {
        field: None,
        message: "This tool intentionally returns an error for testing".into(),
    })
}

/// Report progress 0, 50 and 100 of 100, about 50 ms apart (conformance scenario
/// `tools-call-with-progress`).
#[tool(read_only, rest = "GET /conformance/progress")]
pub async fn test_tool_with_progress(
    _ctx: &ConformanceContext,
    _request: NoArguments,
) -> Result<TextResult, Error> {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress::report(step, Some(100.0), None);
    }
    Ok(TextResult {
        text: "Progress tool completed".into(),
    })
}
