//! Generated code is warning-free, including under `missing_docs` and clippy-style strictness.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub)]

use garde::Validate;
use groundkit_core::{Error, Registry, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Context.
pub struct Ctx;

/// Request.
#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Req {
    /// Free text.
    #[garde(length(chars, min = 1, max = 100))]
    pub text: String,
}

/// Response.
#[derive(Serialize, JsonSchema)]
pub struct Resp {
    /// Length.
    pub length: usize,
}

/// Measure a text.
///
/// Longer description.
#[tool(read_only, rest = "POST /measure")]
pub async fn measure(_: &Ctx, request: Req) -> Result<Resp, Error> {
    Ok(Resp { length: request.text.len() })
}

fn main() {
    let registry = Registry::<Ctx>::collect().expect("registry");
    assert_eq!(registry.tools()[0].summary(), "Measure a text.");
    assert_eq!(registry.tools()[0].description(), "Measure a text.\n\nLonger description.");
}
