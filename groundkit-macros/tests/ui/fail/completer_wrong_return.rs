use groundkit_core::{Completion, Content, Error, resource};
use garde::Validate;
use schemars::JsonSchema;
use serde::Deserialize;

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Params {
    #[garde(pattern(r"^[a-z]+$"))]
    pub name: String,
}

async fn names(_: &Ctx, _: Completion) -> Result<Vec<&'static str>, Error> {
    Ok(vec!["a"])
}

/// A document by name.
#[resource(read_only, uri = "docs://{name}", mime_type = "text/markdown", complete(name = names))]
async fn doc(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.name))
}

fn main() {}
