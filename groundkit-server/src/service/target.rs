//! What a search searches: its `collection`, one name, several names searched as one, or `"*"`
//! for every collection this server serves; and which backend answers.

use groundkit_retrieval::{self as retrieval, Backend, SearchParams, SearchResponse};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::Backends;
use groundkit_core::Error;

/// The most collections one search names.
pub const MAX_COLLECTIONS: usize = 32;

/// Every collection, as `collection`.
const ALL: &str = "*";

/// A search's `collection`: a name, `"*"`, or a list of names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Collections {
    /// One collection, or `"*"`: every collection.
    One(String),
    /// Several collections, searched as one.
    Several(Vec<String>),
}

impl JsonSchema for Collections {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Collections".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let name = retrieval::COLLECTION_NAME.as_str();
        let one = format!(
            "^(\\*|{})$",
            name.trim_start_matches('^').trim_end_matches('$')
        );
        json_schema!({
            "anyOf": [
                { "type": "string", "pattern": one },
                {
                    "type": "array",
                    "items": { "type": "string", "pattern": name },
                    "minItems": 1,
                    "maxItems": MAX_COLLECTIONS
                }
            ]
        })
    }
}

impl garde::Validate for Collections {
    type Context = ();

    fn validate_into(
        &self,
        _: &(),
        parent: &mut dyn FnMut() -> garde::Path,
        report: &mut garde::Report,
    ) {
        let name = |n: &String| retrieval::COLLECTION_NAME.is_match(n);
        let fault = match self {
            Collections::One(one) if one == ALL || name(one) => None,
            Collections::One(_) => {
                Some("must be a collection name `list_collections` returns, or \"*\"")
            }
            Collections::Several(list) if list.is_empty() || list.len() > MAX_COLLECTIONS => {
                Some("must name 1 to 32 collections")
            }
            Collections::Several(list) if !list.iter().all(name) => {
                Some("each must be a collection name `list_collections` returns")
            }
            Collections::Several(_) => None,
        };
        if let Some(message) = fault {
            report.append(parent(), garde::Error::new(message));
        }
    }
}

/// The collections of a search.
#[derive(Debug, Clone)]
pub(super) enum Target {
    /// One collection.
    One(String),
    /// Several collections, each named once, in the caller's order.
    Several(Vec<String>),
    /// Every collection the server serves.
    All,
}

impl Target {
    /// The target a request's `collection` names.
    pub(super) fn of(collection: Collections) -> Self {
        match collection {
            Collections::One(all) if all == ALL => Target::All,
            Collections::One(one) => Target::One(one),
            Collections::Several(list) => {
                let mut names: Vec<String> = Vec::with_capacity(list.len());
                for name in list {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                Target::Several(names)
            }
        }
    }

    /// A cursor was handed out for this target at `generation`: the backend of a single
    /// collection keeps that generation a while for the next pages, if it can.
    pub(super) fn keep_for_pages(&self, backends: &Backends, generation: u64) {
        // Each backend keeps only what it holds: asking both costs no probe.
        if let Target::One(name) = self {
            backends.local.keep_for_pages(name, generation);
            if let Some(remote) = &backends.remote {
                remote.keep_for_pages(name, generation);
            }
        }
    }

    /// Searches the target on the backend that holds it; at `generation` (a cursor's) for one
    /// collection, which the backend may still keep for pages after it was replaced.
    pub(super) fn search(
        &self,
        backends: &Backends,
        generation: Option<u64>,
        params: &SearchParams,
        embedder: Option<&dyn retrieval::embed::Embedder>,
    ) -> Result<SearchResponse, Error> {
        let names = match (self, generation) {
            (Target::One(name), Some(generation)) => {
                return backends.serve(|b| b.search_at(name, generation, params, embedder));
            }
            (Target::One(name), None) => {
                return backends.serve(|b| b.search(name, params, embedder));
            }
            (Target::Several(names), _) => names.clone(),
            (Target::All, _) => backends.list_collections()?,
        };
        let backend: &dyn Backend = match &backends.remote {
            None => backends.local.as_ref(),
            Some(remote) => {
                let mut held = Vec::with_capacity(names.len());
                for name in &names {
                    held.push(remote.holds(name)?);
                }
                if held.iter().all(|&h| h) && !held.is_empty() {
                    remote.as_ref()
                } else if held.iter().all(|&h| !h) {
                    backends.local.as_ref()
                } else {
                    return Err(Error::Validation {
                        field: "collection".to_owned(),
                        message: "the collections are served from different places (the index \
                                  directory and the search cluster) and cannot be searched as one"
                            .to_owned(),
                    });
                }
            }
        };
        backend.search_collections(&names, params, embedder)
    }
}
