//! `crate = path` points generated code at a re-export, for crates that rename or wrap groundkit.

mod reexport {
    pub use groundkit_core as gk;
}

use garde::Validate;
use reexport::gk;
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

/// Get a thing by id.
#[gk::tool(read_only, rest = "GET /things/{id}", name = "get_thing", title = "Get a thing", crate = crate::reexport::gk)]
async fn thing(_: &Ctx, request: Req) -> Result<Resp, gk::Error> {
    Ok(Resp { id: request.id })
}

fn main() {
    let registry = gk::Registry::<Ctx>::collect().expect("registry");
    let spec = registry.get("get_thing").expect("renamed tool");
    assert_eq!(spec.title(), Some("Get a thing"));
    // The function itself is still a plain callable async fn.
    let _future = thing(&Ctx, Req { id: "a".into() });
}
