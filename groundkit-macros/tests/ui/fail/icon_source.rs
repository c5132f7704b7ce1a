use garde::Validate;
use groundkit_core::{Content, Error, resource, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Req {
    #[garde(length(max = 10))]
    pub id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Resp {
    pub id: String,
}

/// A thing, with an icon served over plain http.
#[tool(read_only, rest = "GET /things/{id}", icon = "http://example.com/thing.png")]
async fn thing(_: &Ctx, request: Req) -> Result<Resp, Error> {
    Ok(Resp { id: request.id })
}

/// A document whose icon is a file path.
#[resource(read_only, uri = "docs://index", mime_type = "text/plain", icon = "/icons/doc.svg")]
async fn index(_: &Ctx) -> Result<Content, Error> {
    Ok(Content::Text(String::new()))
}

/// A thing whose icon is a data URI that is not an image.
#[tool(read_only, rest = "GET /other/{id}", icon = "data:text/html,<b>x</b>")]
async fn other(_: &Ctx, request: Req) -> Result<Resp, Error> {
    Ok(Resp { id: request.id })
}

fn main() {}
