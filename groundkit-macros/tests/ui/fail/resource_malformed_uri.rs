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
#[resource(read_only, uri = "docs://{+name}/v{version}/{name}", mime_type = "text/markdown")]
async fn doc(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.name))
}

/// A document without a scheme.
#[resource(read_only, uri = "/docs/{name}", mime_type = "text/markdown")]
async fn unschemed(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.name))
}

/// A document named twice.
#[resource(read_only, uri = "docs://{name}/{name}", mime_type = "text/markdown")]
async fn twice(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.name))
}

fn main() {}
