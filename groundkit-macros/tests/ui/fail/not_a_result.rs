use garde::Validate;
use groundkit_core::{Error, tool};
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

/// Get a thing.
#[tool(read_only, rest = "GET /things/{id}")]
async fn thing(_: &Ctx, request: Req) -> Resp {
    Resp { id: request.id }
}

fn main() {}
