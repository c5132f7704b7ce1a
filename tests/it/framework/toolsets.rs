//! Small tool sets linked into this binary beside the `hello` example, each with its own context
//! type, so each registry rule can be broken in isolation.

use garde::Validate;
use groundkit_core::{Error, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A request with one path-filled field.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct IdRequest {
    #[garde(length(min = 1, max = 32))]
    pub id: String,
}

/// A request with one other path-filled field.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct NameRequest {
    #[garde(length(min = 1, max = 32))]
    pub name: String,
}

/// An empty request.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// A small response.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Echo {
    pub value: String,
}

pub mod collide {
    use super::*;

    /// Context of two tools whose routes collide.
    pub struct CollideCtx;

    /// Look a thing up by id.
    #[tool(read_only, rest = "GET /things/{id}")]
    pub async fn thing_by_id(_: &CollideCtx, request: IdRequest) -> Result<Echo, Error> {
        Ok(Echo { value: request.id })
    }

    /// Look a thing up by name.
    #[tool(read_only, rest = "GET /things/{name}")]
    pub async fn thing_by_name(_: &CollideCtx, request: NameRequest) -> Result<Echo, Error> {
        Ok(Echo {
            value: request.name,
        })
    }
}

pub mod duplicate {
    use super::*;

    /// Context of two tools sharing a name.
    pub struct DupCtx;

    pub mod a {
        use super::*;
        /// First of two.
        #[tool(read_only, rest = "GET /a", name = "same")]
        pub async fn first(_: &DupCtx, _request: Empty) -> Result<Echo, Error> {
            Ok(Echo { value: "a".into() })
        }
    }

    pub mod b {
        use super::*;
        /// Second of two.
        #[tool(read_only, rest = "GET /b", name = "same")]
        pub async fn second(_: &DupCtx, _request: Empty) -> Result<Echo, Error> {
            Ok(Echo { value: "b".into() })
        }
    }
}

pub mod get_body {
    use super::*;

    /// Context of a GET tool with an argument no path segment carries.
    pub struct GetBodyCtx;

    /// Search by text, wrongly as a GET.
    #[derive(Debug, Deserialize, JsonSchema, Validate)]
    #[serde(deny_unknown_fields)]
    pub struct TextRequest {
        #[garde(length(max = 100))]
        pub id: String,
        #[garde(length(max = 100))]
        pub text: String,
    }

    /// Search with free text in a GET.
    #[tool(read_only, rest = "GET /search/{id}")]
    pub async fn search_by_get(_: &GetBodyCtx, request: TextRequest) -> Result<Echo, Error> {
        Ok(Echo {
            value: request.text,
        })
    }
}

pub mod reserved {
    use super::*;

    /// Context of a tool whose route would shadow `/mcp`.
    pub struct ReservedCtx;

    /// A page by name, at the root.
    #[tool(read_only, rest = "GET /{name}")]
    pub async fn page(_: &ReservedCtx, request: NameRequest) -> Result<Echo, Error> {
        Ok(Echo {
            value: request.name,
        })
    }
}

pub mod faults {
    use std::time::Duration;

    use super::*;

    /// Context of tools that fail in the ways a server must survive.
    pub struct FaultCtx;

    /// Panic.
    #[tool(read_only, rest = "GET /panic")]
    pub async fn panics(_: &FaultCtx, _request: Empty) -> Result<Echo, Error> {
        let values: Vec<String> = Vec::new();
        Ok(Echo {
            value: values[3].clone(),
        })
    }

    /// Fail with a storage error whose message names a server path.
    #[tool(read_only, rest = "GET /storage")]
    pub async fn storage(_: &FaultCtx, _request: Empty) -> Result<Echo, Error> {
        Err(Error::storage(
            "cannot open /srv/private/index/x.sqlite3",
            std::io::Error::other("Permission denied (os error 13)"),
        ))
    }

    /// Take longer than the server's request timeout.
    #[tool(read_only, rest = "GET /slow")]
    pub async fn slow(_: &FaultCtx, _request: Empty) -> Result<Echo, Error> {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(Echo {
            value: "late".into(),
        })
    }

    /// Succeed.
    #[tool(read_only, rest = "GET /ok")]
    pub async fn ok(_: &FaultCtx, _request: Empty) -> Result<Echo, Error> {
        Ok(Echo { value: "ok".into() })
    }
}

/// Resource sets that break one registry rule each.
pub mod resource_faults {
    use super::*;
    use groundkit_core::{Content, resource};

    /// Context of two templates one URI could match.
    pub struct OverlapCtx;

    /// A thing by id.
    #[resource(read_only, uri = "things://{id}/data", mime_type = "text/plain")]
    pub async fn thing_data(_: &OverlapCtx, params: IdRequest) -> Result<Content, Error> {
        Ok(Content::Text(params.id))
    }

    /// A thing by name.
    #[resource(read_only, uri = "things://{name}/data", mime_type = "text/plain")]
    pub async fn named_data(_: &OverlapCtx, params: NameRequest) -> Result<Content, Error> {
        Ok(Content::Text(params.name))
    }

    /// Context of a tool and a resource of one name.
    pub struct SameNameCtx;

    /// A thing, as a tool.
    #[tool(read_only, rest = "GET /things/{id}")]
    pub async fn thing(_: &SameNameCtx, request: IdRequest) -> Result<Echo, Error> {
        Ok(Echo { value: request.id })
    }

    /// A thing, as a resource.
    #[resource(
        read_only,
        uri = "things://{id}",
        mime_type = "text/plain",
        name = "thing"
    )]
    pub async fn thing_resource(_: &SameNameCtx, params: IdRequest) -> Result<Content, Error> {
        Ok(Content::Text(params.id))
    }

    /// Context of a tool whose route a resource's route collides with.
    pub struct RouteCtx;

    /// A thing, by a tool route shaped like a resource's.
    #[tool(read_only, rest = "GET /resources/things/{name}")]
    pub async fn lookalike(_: &RouteCtx, request: NameRequest) -> Result<Echo, Error> {
        Ok(Echo {
            value: request.name,
        })
    }

    /// A thing by id.
    #[resource(read_only, uri = "things://{id}", mime_type = "text/plain")]
    pub async fn by_id(_: &RouteCtx, params: IdRequest) -> Result<Content, Error> {
        Ok(Content::Text(params.id))
    }

    /// Context of a template whose parameters hold a field no URI variable fills.
    pub struct ExtraFieldCtx;

    /// Parameters with a field the URI does not carry.
    #[derive(Debug, Deserialize, JsonSchema, Validate)]
    #[serde(deny_unknown_fields)]
    pub struct Extra {
        #[garde(length(min = 1, max = 32))]
        pub id: String,
        #[garde(length(min = 1, max = 32))]
        pub other: String,
    }

    /// A thing by id, with another field.
    #[resource(read_only, uri = "things://{id}", mime_type = "text/plain")]
    pub async fn with_extra(_: &ExtraFieldCtx, params: Extra) -> Result<Content, Error> {
        Ok(Content::Text(params.other))
    }
}
