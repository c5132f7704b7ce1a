//! Argument completion: the completers a prompt or a resource template declares next to its
//! arguments (`complete(collection = collection_names)`), and the one rule that turns what a
//! completer offers into an answer ([`Completions::of`]).
//!
//! A completer is an async fn of the same context as its prompt or resource, taking the
//! [`Completion`] being asked for (the argument, the text typed so far, the arguments already
//! given) and returning candidate values. The framework keeps the candidates that begin with
//! the typed text, in the completer's order, without repeats, and answers at most
//! [`MAX_VALUES`] of them with the total and whether more were left out, as MCP's
//! `completion/complete` asks. A completer may filter itself (a large candidate set should);
//! the prefix rule then changes nothing.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use crate::call::RequestContext;
use crate::error::Error;
use crate::tool::{BoxFuture, ErasedContext};

/// The most values one answer carries (MCP's limit).
pub const MAX_VALUES: usize = 100;

/// What a client asks to complete.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// The argument (or URI template variable) being completed.
    pub argument: String,
    /// What has been typed so far.
    pub value: String,
    /// The other arguments already given, by name.
    pub arguments: BTreeMap<String, String>,
}

/// A type-erased completer: context and the request in, candidate values out.
pub type CompleteHandler = for<'a> fn(
    &'a ErasedContext,
    Completion,
    RequestContext,
) -> BoxFuture<'a, Result<Vec<String>, Error>>;

/// The completer of one argument.
#[derive(Clone, Copy)]
pub struct Completer {
    /// The argument (a field of the prompt's argument type, or a URI template variable).
    pub argument: &'static str,
    /// The type-erased completer.
    pub handler: CompleteHandler,
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer")
            .field("argument", &self.argument)
            .finish_non_exhaustive()
    }
}

/// Run the completer among `completers` for `completion.argument`; an argument without one
/// completes to nothing.
pub async fn run(
    completers: &[Completer],
    context: &ErasedContext,
    completion: Completion,
    request: RequestContext,
) -> Result<Completions, Error> {
    let Some(completer) = completers
        .iter()
        .find(|c| c.argument == completion.argument)
    else {
        return Ok(Completions::default());
    };
    let typed = completion.value.clone();
    let candidates = (completer.handler)(context, completion, request).await?;
    Ok(Completions::of(candidates, &typed))
}

/// An answer to a completion request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completions {
    /// At most [`MAX_VALUES`] values, in the completer's order.
    pub values: Vec<String>,
    /// How many values matched in all.
    pub total: usize,
    /// Whether values were left out.
    pub has_more: bool,
}

impl Completions {
    /// The `candidates` that begin with `typed`, first occurrences only, capped at
    /// [`MAX_VALUES`].
    pub fn of(candidates: Vec<String>, typed: &str) -> Self {
        let mut seen = HashSet::new();
        let matching: Vec<String> = candidates
            .into_iter()
            .filter(|c| c.starts_with(typed) && seen.insert(c.clone()))
            .collect();
        let total = matching.len();
        let values: Vec<String> = matching.into_iter().take(MAX_VALUES).collect();
        Self {
            has_more: total > values.len(),
            values,
            total,
        }
    }

    /// As MCP's `CompleteResult` gives it.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "completion": {
                "values": self.values,
                "total": self.total,
                "hasMore": self.has_more,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_filtered_by_what_was_typed_deduplicated_and_capped() {
        let candidates = vec!["park".into(), "paris".into(), "oslo".into(), "park".into()];
        let answer = Completions::of(candidates, "par");
        assert_eq!(answer.values, ["park", "paris"]);
        assert_eq!((answer.total, answer.has_more), (2, false));

        let many: Vec<String> = (0..250).map(|i| format!("c{i:03}")).collect();
        let answer = Completions::of(many, "c");
        assert_eq!(answer.values.len(), 100);
        assert_eq!(answer.values[99], "c099");
        assert_eq!((answer.total, answer.has_more), (250, true));
    }
}
