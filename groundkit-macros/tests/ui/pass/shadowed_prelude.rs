//! Generated code names everything by absolute path, so shadowing prelude names changes nothing.
#![allow(dead_code, non_camel_case_types)]

mod types {
    use garde::Validate;
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
}

mod tools {
    use super::types::{Ctx, Req, Resp};
    use groundkit_core::tool;

    type Result<T> = ::core::result::Result<T, groundkit_core::Error>;
    struct Option;
    struct Some;
    struct None;
    struct Ok;
    struct Err;
    struct Box;
    struct Vec;
    struct String;
    struct Send;
    struct Sync;
    mod core {}
    mod std {}
    mod serde_json {}
    mod linkme {}

    /// Get a thing by id.
    #[tool(read_only, rest = "GET /things/{id}")]
    pub async fn thing(_: &Ctx, request: Req) -> Result<Resp> {
        Result::Ok(Resp { id: request.id })
    }
}

fn main() {
    let registry = groundkit_core::Registry::<types::Ctx>::collect().expect("registry");
    assert_eq!(registry.len(), 1);
    assert_eq!(registry.tools()[0].name(), "thing");
}
