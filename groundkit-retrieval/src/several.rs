//! Several collections searched as one: one ranking of all their chunks, as if they were one
//! collection.
//!
//! BM25 scores depend on a collection's statistics (how many chunks it has, how many hold each
//! term, how long they are), so two collections' scores do not compare: the same chunk would
//! score higher in the collection where its words are rarer, and a small collection's hits
//! could rise above a large one's for that alone. Here every collection's chunks are scored with
//! the statistics of all the collections searched, added up: a chunk scores what it would in one
//! collection holding them all, whichever collection it is in. Each collection's exact top k
//! is taken with those statistics (its window maxima raised to bound the new scores,
//! `lexical::top`), and the lists are merged by score. Dense scores are cosine similarities of
//! one embedder's vectors and compare as they are. A hybrid search fuses the merged lexical and
//! dense rankings once, as for one collection. Ties go to the collection named first.

use crate::embed::Embedder;
use crate::filter::select::Selection;
use crate::lexical::{Keep, Scope, Together};
use crate::model::{SearchMetadata, SearchMode, SearchParams, SearchResponse};
use crate::open::OpenCollection;
use crate::search::{
    ChunkAddress, Fusion, check_dense, load_result, nearest_hits, query_terms, query_vector,
    top_hits, validate_params,
};
use groundkit_core::Error;

/// A chunk of one of the collections: the collection's place in the request, and the chunk.
type Place = (usize, ChunkAddress);

/// Searches `collections` (each opened at its current generation, named as the caller named
/// it) as one collection: see the module documentation. With one collection, the answer is
/// [`search`](crate::search)'s, each hit naming its collection.
pub fn search_collections(
    collections: &[(&str, &OpenCollection)],
    params: &SearchParams,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse, Error> {
    validate_params(params)?;
    let selector = params
        .filter
        .as_ref()
        .filter(|f| !f.is_empty())
        .map(|f| f.compile())
        .transpose()?;
    let mut selections = Vec::with_capacity(collections.len());
    for (_, open) in collections {
        selections.push(match (&selector, open.lexical()) {
            (Some(selector), Some(index)) => Some(Selection::new(selector, index)?),
            _ => None,
        });
    }
    let limit = params.top_k as usize;
    let fusion = Fusion::of(params.fusion);
    let (lexical_depth, dense_depth) = match params.mode {
        SearchMode::Lexical => (limit, 0),
        SearchMode::Dense => (0, limit),
        SearchMode::Hybrid => fusion.depths(limit),
    };
    let terms = query_terms(&params.query);
    let mut lexical = Vec::new();
    if lexical_depth > 0 {
        let searchers = collections
            .iter()
            .filter_map(|(_, open)| open.lexical().map(|index| &index.searcher))
            .collect();
        let whole = Together(searchers);
        for (i, (_, open)) in collections.iter().enumerate() {
            let Some(index) = open.lexical() else {
                continue;
            };
            let keep = |address| selections[i].as_ref().is_none_or(|s| s.keeps(address));
            let scope = Scope {
                keep: selections[i].as_ref().map(|_| &keep as Keep<'_>),
                statistics: Some(&whole),
            };
            let hits = top_hits(index, &terms, lexical_depth, scope)?;
            lexical.extend(hits.into_iter().map(|(s, a)| (s, (i, a))));
        }
        lexical = best(lexical, lexical_depth);
    }
    let mut dense = Vec::new();
    if dense_depth > 0 {
        // A collection with nothing ingested has nothing to rank, in any mode.
        let mut checked = None;
        for (_, open) in collections.iter().filter(|(_, o)| o.lexical().is_some()) {
            checked = Some(check_dense(open, embedder)?);
        }
        if let Some(embedder) = checked {
            let vector = query_vector(embedder, &params.query)?;
            for (i, (_, open)) in collections.iter().enumerate() {
                let keep = |address| selections[i].as_ref().is_none_or(|s| s.keeps(address));
                let keep = selections[i].as_ref().map(|_| &keep as Keep<'_>);
                let hits = nearest_hits(open, &vector, dense_depth, keep, limit)?;
                dense.extend(hits.into_iter().map(|(s, a)| (s, (i, a))));
            }
        }
        dense = best(dense, dense_depth);
    }
    let ranked = match params.mode {
        SearchMode::Lexical => lexical,
        SearchMode::Dense => dense,
        SearchMode::Hybrid => fusion.fuse(&lexical, &dense, limit),
    };
    let mut results = Vec::with_capacity(ranked.len());
    for (rank, (score, (i, address))) in ranked.into_iter().enumerate() {
        let (name, open) = collections[i];
        let Some(index) = open.lexical() else {
            continue;
        };
        let mut result = load_result(index, address.0, score, rank as u32 + 1)?;
        result.collection = Some(name.to_owned());
        results.push(result);
    }
    let query_terms = if params.mode == SearchMode::Dense {
        0
    } else {
        terms.len() as u32
    };
    let generations: std::collections::BTreeMap<String, u64> = collections
        .iter()
        .map(|(name, open)| ((*name).to_owned(), open.generation()))
        .collect();
    let mut metadata = SearchMetadata::ranked(params, generations.values().sum(), query_terms);
    metadata.generations = generations;
    Ok(SearchResponse {
        total_results: results.len() as u32,
        results,
        metadata,
        next_cursor: None,
    })
}

/// The best `limit` of `hits`, best first: by score, then by collection, then by place.
fn best(mut hits: Vec<(f32, Place)>, limit: usize) -> Vec<(f32, Place)> {
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    hits.truncate(limit);
    hits
}
