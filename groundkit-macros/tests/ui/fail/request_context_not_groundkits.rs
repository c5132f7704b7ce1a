use garde::Validate;
use groundkit_core::{Error, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct Ctx;

/// Not groundkit's.
pub struct RequestContext;

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

#[derive(Serialize, JsonSchema)]
pub struct Done {}

/// Do nothing.
#[tool(read_only, rest = "GET /nothing")]
async fn nothing(_: &Ctx, _: Nothing, _call: RequestContext) -> Result<Done, Error> {
    Ok(Done {})
}

fn main() {}
