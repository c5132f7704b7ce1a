use garde::Validate;
use groundkit_core::{Content, Error, resource};
use schemars::JsonSchema;
use serde::Deserialize;

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Params {
    #[garde(range(max = 10))]
    pub page: u32,
}

/// A page by number.
#[resource(read_only, uri = "docs://pages/{page}", mime_type = "text/plain")]
async fn page(_: &Ctx, params: Params) -> Result<Content, Error> {
    Ok(Content::Text(params.page.to_string()))
}

fn main() {}
