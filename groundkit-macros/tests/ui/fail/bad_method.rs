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

/// Replace a thing.
#[tool(read_only, rest = "PUT /things/{id}")]
async fn thing(_: &Ctx, request: Req) -> Result<Resp, Error> {
    Ok(Resp { id: request.id })
}

fn main() {}
