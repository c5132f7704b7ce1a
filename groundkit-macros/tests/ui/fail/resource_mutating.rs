use garde::Validate;
use groundkit_core::{Content, Error, resource};
use schemars::JsonSchema;
use serde::Deserialize;

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Params {
    #[garde(pattern(r"^[a-z]+$"))]
    pub name: String,
}

/// Delete a document.
#[resource(mutating, uri = "docs://{name}", mime_type = "text/markdown")]
async fn doc(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.name))
}

fn main() {}
