//! Which error statuses a REST route can answer with, read from the one
//! [`mapping`](super::problem::mapping): the OpenAPI document declares them per route, so a
//! generated client knows the status of every `kind` without a second table to drift from.
//!
//! Tools do not declare which failures they may return, so every route declares every call
//! failure ([`Error`]) with the status the mapping gives it; to those the edge adds the
//! refusals a route can meet ([`reach`]): a query string, a bad Host or Origin on every route,
//! and on routes that take a body (POST) a body that is too large, too slow or not JSON.
//! Refusals of a request no route matches (an unknown path, another method, an MCP session)
//! are not answers of a declared operation. The enumerations ([`every_error`],
//! [`every_refusal`]) match exhaustively, so a new variant does not compile until it is placed
//! in them and [`reach`] says where it is answered.

use std::collections::BTreeMap;

use groundkit_core::Error;
use groundkit_core::openapi::{ErrorStatus, ErrorStatuses};

use super::problem::{Problem, Refusal, mapping};

/// Where a failure can be the answer of a declared REST operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Any route.
    EveryRoute,
    /// Routes that take a JSON body (POST).
    BodyRoutes,
    /// No declared operation: an unmatched route or method, or MCP alone.
    Elsewhere,
}

/// Where `refusal` is answered. Call failures reach every route.
const fn reach(refusal: &Refusal) -> Reach {
    match refusal {
        Refusal::QueryString
        | Refusal::InvalidHost
        | Refusal::ForbiddenHost
        | Refusal::ForbiddenOrigin => Reach::EveryRoute,
        Refusal::PayloadTooLarge { .. }
        | Refusal::BodyTimeout { .. }
        | Refusal::UnsupportedMediaType => Reach::BodyRoutes,
        Refusal::RouteNotFound
        | Refusal::MethodNotAllowed { .. }
        | Refusal::NotAcceptable
        | Refusal::SessionNotFound => Reach::Elsewhere,
    }
}

/// The error statuses of REST routes, each with the kinds it carries.
pub fn error_statuses() -> ErrorStatuses {
    let mut every_route = BTreeMap::new();
    let mut body_routes = BTreeMap::new();
    let calls = every_error()
        .into_iter()
        .map(|e| (Problem::from(e), Reach::EveryRoute));
    let refusals = every_refusal().into_iter().map(|r| {
        let reach = reach(&r);
        (Problem::from(r), reach)
    });
    for (problem, reach) in calls.chain(refusals) {
        let rendering = mapping(&problem);
        let table = match reach {
            Reach::EveryRoute => &mut every_route,
            Reach::BodyRoutes => &mut body_routes,
            Reach::Elsewhere => continue,
        };
        let status: &mut ErrorStatus =
            table
                .entry(rendering.status.as_u16())
                .or_insert_with(|| ErrorStatus {
                    status: rendering.status.as_u16(),
                    reason: rendering.status.canonical_reason().unwrap_or("Error"),
                    kinds: Vec::new(),
                });
        status.kinds.push(rendering.kind);
    }
    ErrorStatuses {
        every_route: every_route.into_values().collect(),
        body_routes: body_routes.into_values().collect(),
    }
}

/// One error of each variant, in declaration order.
fn every_error() -> Vec<Error> {
    let text = String::new;
    let mut all = Vec::new();
    let mut next = Some(Error::InvalidRequest {
        field: None,
        message: text(),
    });
    while let Some(error) = next {
        next = match &error {
            Error::InvalidRequest { .. } => Some(Error::Validation {
                field: text(),
                message: text(),
            }),
            Error::Validation { .. } => Some(Error::CollectionNotFound { name: text() }),
            Error::CollectionNotFound { .. } => Some(Error::ChunkNotFound { chunk_id: text() }),
            Error::ChunkNotFound { .. } => Some(Error::NotFound {
                resource: "",
                id: text(),
            }),
            Error::NotFound { .. } => Some(Error::DenseUnavailable {
                collection: text(),
                reason: "",
            }),
            Error::DenseUnavailable { .. } => Some(Error::EmbeddingMismatch {
                collection: text(),
                collection_model: text(),
                collection_fingerprint: text(),
                server_model: text(),
                server_fingerprint: text(),
            }),
            Error::EmbeddingMismatch { .. } => Some(Error::embedding("", None)),
            Error::Embedding { .. } => Some(Error::rerank("", None)),
            Error::Rerank { .. } => Some(Error::CursorExpired { generation: 0 }),
            Error::CursorExpired { .. } => Some(Error::RerankerNotConfigured),
            Error::RerankerNotConfigured => Some(Error::Overloaded),
            Error::Overloaded => Some(Error::Timeout),
            Error::Timeout => Some(Error::storage("", std::io::Error::other(""))),
            Error::Storage { .. } => Some(Error::internal("")),
            Error::Internal { .. } => None,
        };
        all.push(error);
    }
    all
}

/// One refusal of each variant, in declaration order.
fn every_refusal() -> Vec<Refusal> {
    let mut all = Vec::new();
    let mut next = Some(Refusal::RouteNotFound);
    while let Some(refusal) = next {
        next = match &refusal {
            Refusal::RouteNotFound => Some(Refusal::MethodNotAllowed { allow: "" }),
            Refusal::MethodNotAllowed { .. } => Some(Refusal::QueryString),
            Refusal::QueryString => Some(Refusal::PayloadTooLarge { limit: 0 }),
            Refusal::PayloadTooLarge { .. } => Some(Refusal::BodyTimeout { seconds: 0 }),
            Refusal::BodyTimeout { .. } => Some(Refusal::UnsupportedMediaType),
            Refusal::UnsupportedMediaType => Some(Refusal::NotAcceptable),
            Refusal::NotAcceptable => Some(Refusal::InvalidHost),
            Refusal::InvalidHost => Some(Refusal::ForbiddenHost),
            Refusal::ForbiddenHost => Some(Refusal::ForbiddenOrigin),
            Refusal::ForbiddenOrigin => Some(Refusal::SessionNotFound),
            Refusal::SessionNotFound => None,
        };
        all.push(refusal);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_declared_once_with_the_status_the_mapping_gives_it() {
        let statuses = error_statuses();
        let declared: Vec<(u16, &str)> = statuses
            .every_route
            .iter()
            .chain(&statuses.body_routes)
            .flat_map(|s| s.kinds.iter().map(move |kind| (s.status, *kind)))
            .collect();
        let mut kinds: Vec<&str> = declared.iter().map(|(_, kind)| *kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), declared.len(), "{declared:?}");
        for (status, kind) in [
            (409, "dense_unavailable"),
            (409, "embedding_mismatch"),
            (404, "collection_not_found"),
            (403, "forbidden_host"),
            (500, "storage_error"),
        ] {
            assert!(declared.contains(&(status, kind)), "{kind}");
        }
        let body: Vec<u16> = statuses.body_routes.iter().map(|s| s.status).collect();
        assert_eq!(body, [408, 413, 415]);
        assert!(!declared.iter().any(|(_, kind)| *kind == "route_not_found"));
    }

    #[test]
    fn every_call_failure_has_the_json_rpc_code_a_failed_read_answers_with() {
        use super::super::problem::rpc_code;
        for error in every_error() {
            let kind = error.kind();
            let expected = match kind {
                "invalid_request" | "validation_error" => rpc_code::INVALID_PARAMS,
                "collection_not_found" | "chunk_not_found" | "not_found" => {
                    rpc_code::RESOURCE_NOT_FOUND
                }
                _ => rpc_code::INTERNAL_ERROR,
            };
            assert_eq!(mapping(&error.into()).rpc, Some(expected), "{kind}");
        }
        for refusal in every_refusal() {
            assert_eq!(mapping(&refusal.into()).rpc, None);
        }
    }
}
