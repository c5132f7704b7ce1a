use garde::Validate;
use groundkit_core::{Error, resource};
use schemars::JsonSchema;
use serde::Deserialize;

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Params {
    #[garde(pattern(r"^[a-z]+$"))]
    pub name: String,
}

/// A document by name.
#[resource(read_only, uri = "docs://{name}", mime_type = "text/markdown")]
async fn doc(_: &Ctx, params: Params) -> Result<String, Error> {
    Ok(params.name)
}

fn main() {}
