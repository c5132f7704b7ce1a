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

/// A document by name.
#[resource(read_only, uri = "docs://{name}")]
async fn doc(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.name))
}

/// The index.
#[resource(read_only, uri = "docs://index", mime_type = "markdown")]
async fn index(_: &Ctx) -> Result<Content, Error> {
    Ok(Content::Text(String::new()))
}

fn main() {}
