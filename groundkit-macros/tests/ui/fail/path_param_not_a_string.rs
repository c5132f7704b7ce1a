use garde::Validate;
use groundkit_core::{Error, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Ctx;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Req {
    #[garde(range(max = 10))]
    pub page: u32,
}

#[derive(Serialize, JsonSchema)]
pub struct Resp {
    pub page: u32,
}

/// Get a page.
#[tool(read_only, rest = "GET /pages/{page}")]
async fn page(_: &Ctx, request: Req) -> Result<Resp, Error> {
    Ok(Resp { page: request.page })
}

fn main() {}
