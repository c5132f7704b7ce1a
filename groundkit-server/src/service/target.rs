//! What a search searches: one collection (`collection`), or several as one (`collections`,
//! `["*"]` for every collection this server serves), and which backend answers.

use groundkit_retrieval::{self as retrieval, Backend, SearchParams, SearchResponse};

use super::Backends;
use groundkit_core::Error;

/// The most collections one search names.
pub const MAX_COLLECTIONS: usize = 32;

/// Every collection, in `collections`.
const ALL: &str = "*";

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
    /// The target of a request's `collection` and `collections`: exactly one of them.
    pub(super) fn of(
        collection: Option<String>,
        collections: Option<Vec<String>>,
    ) -> Result<Self, Error> {
        let invalid = |field: &str, message: &str| Error::Validation {
            field: field.to_owned(),
            message: message.to_owned(),
        };
        match (collection, collections) {
            (Some(one), None) => Ok(Target::One(one)),
            (None, Some(list)) if list == [ALL] => Ok(Target::All),
            (None, Some(list)) => {
                let mut names: Vec<String> = Vec::with_capacity(list.len());
                for name in list {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                Ok(Target::Several(names))
            }
            (Some(_), Some(_)) => Err(invalid(
                "collections",
                "give `collection` or `collections`, not both",
            )),
            (None, None) => Err(invalid(
                "collection",
                "is required (or `collections`, for several)",
            )),
        }
    }

    /// Searches the target on the backend that holds it.
    pub(super) fn search(
        &self,
        backends: &Backends,
        params: &SearchParams,
        embedder: Option<&dyn retrieval::embed::Embedder>,
    ) -> Result<SearchResponse, Error> {
        let names = match self {
            Target::One(name) => return backends.serve(|b| b.search(name, params, embedder)),
            Target::Several(names) => names.clone(),
            Target::All => backends.list_collections()?,
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
                        field: "collections".to_owned(),
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

/// Checks a request's `collections`: 1 to [`MAX_COLLECTIONS`] collection names, or `["*"]`.
pub(super) fn check_collections(value: &Option<Vec<String>>, _: &()) -> garde::Result {
    let Some(list) = value else {
        return Ok(());
    };
    if list.is_empty() || list.len() > MAX_COLLECTIONS {
        return Err(garde::Error::new(format!(
            "must name 1 to {MAX_COLLECTIONS} collections, or be [\"*\"]"
        )));
    }
    if list.len() > 1 && list.iter().any(|n| n == ALL) {
        return Err(garde::Error::new("\"*\" stands alone: every collection"));
    }
    if !list
        .iter()
        .all(|n| n == ALL || retrieval::COLLECTION_NAME.is_match(n))
    {
        return Err(garde::Error::new(
            "each must be a collection name `list_collections` returns",
        ));
    }
    Ok(())
}
