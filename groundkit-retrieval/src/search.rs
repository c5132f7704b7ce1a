//! Search over one open collection: request bounds, the analysed BM25 query, the dense and
//! hybrid rankings, and the response the service returns unchanged.

use std::cell::RefCell;
use std::collections::HashSet;
use std::hash::Hash;

use tantivy::schema::Value;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, Score, TantivyDocument};

use crate::analysis::{english_analyzer, terms};
use crate::embed::{Embedder, Role, unit_vector};
use crate::filter::select::Selection;
use crate::fusion::{
    DENSE_DEPTH, DENSE_WEIGHT, LEXICAL_DEPTH, MIN_MAX_DENSE_WEIGHT, RRF_K, min_max_fusion,
    reciprocal_rank_fusion,
};
use crate::lexical::{Keep, LexicalIndex, Scope, top_k};
use crate::model::{
    Citation, EmbeddingIdentity, Filter, FusionMethod, RetrievalResult, SearchMetadata, SearchMode,
    SearchParams, SearchResponse, SourceClass,
};
use crate::open::OpenCollection;
use crate::vectors::graph::EF_SEARCH;
use crate::{MAX_QUERY_CHARS, MAX_RANK_DEPTH, MAX_TOP_K};
use groundkit_core::Error;

/// Checks the caller-controlled bounds of a search request.
pub fn validate_params(params: &SearchParams) -> Result<(), Error> {
    if params.query.trim().is_empty() {
        return Err(Error::Validation {
            field: "query".to_owned(),
            message: "must contain some text".to_owned(),
        });
    }
    if params.query.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::Validation {
            field: "query".to_owned(),
            message: format!("must be at most {MAX_QUERY_CHARS} characters"),
        });
    }
    if params.top_k == 0 || params.top_k > MAX_RANK_DEPTH {
        return Err(Error::Validation {
            field: "top_k".to_owned(),
            message: format!("must be between 1 and {MAX_RANK_DEPTH}"),
        });
    }
    Ok(())
}

/// Searches `open` at the generation it was opened at. `embedder` embeds the query for `dense`
/// and `hybrid`; it must be the embedder that computed the collection's vectors.
pub fn search(
    open: &OpenCollection,
    params: &SearchParams,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse, Error> {
    validate_params(params)?;
    let ranked = ranked_hits(
        open,
        &params.query,
        params.top_k as usize,
        params.mode,
        embedder,
        Fusion::of(params.fusion),
        params.filter.as_ref(),
    )?;
    let results = match open.lexical() {
        Some(index) => ranked
            .hits
            .into_iter()
            .enumerate()
            .map(|(i, (score, address))| load_result(index, address.0, score, i as u32 + 1))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    Ok(SearchResponse {
        total_results: results.len() as u32,
        results,
        metadata: SearchMetadata::ranked(params, open.generation(), ranked.query_terms),
        next_cursor: None,
    })
}

/// The best chunks of a ranking, best first.
#[derive(Debug, Clone, Default)]
pub struct RankedHits {
    /// The chunks, with their scores.
    pub hits: Vec<(f32, ChunkAddress)>,
    /// The number of analysed query terms (0 in `dense` mode).
    pub query_terms: u32,
}

/// Where a ranked chunk is in the generation the ranking read: valid only with the
/// [`OpenCollection`] it came from ([`hit_document_id`] reads its document id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkAddress(pub(crate) DocAddress);

/// The parameters of hybrid ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// How the two rankings are combined.
    pub method: FusionMethod,
    /// The Reciprocal Rank Fusion constant (unused by [`FusionMethod::MinMax`]).
    pub k: f32,
    /// Candidates taken from the lexical ranking (at least the number of results asked for).
    pub lexical_depth: usize,
    /// Candidates taken from the dense ranking (at least the number of results asked for).
    pub dense_depth: usize,
    /// The dense ranking's weight against the lexical ranking's 1.
    pub dense_weight: f32,
}

impl Fusion {
    /// The shipped parameters of `method`.
    pub fn of(method: FusionMethod) -> Self {
        match method {
            FusionMethod::Rrf => Self {
                method,
                k: RRF_K,
                lexical_depth: LEXICAL_DEPTH,
                dense_depth: DENSE_DEPTH,
                dense_weight: DENSE_WEIGHT,
            },
            FusionMethod::MinMax => Self {
                method,
                k: RRF_K,
                lexical_depth: LEXICAL_DEPTH,
                dense_depth: DENSE_DEPTH,
                dense_weight: MIN_MAX_DENSE_WEIGHT,
            },
        }
    }

    /// The hybrid ranking of `lexical` and `dense` (each best first, with their scores), the
    /// lexical ranking weighing 1 and the dense one `dense_weight`: the best `limit`, best
    /// first, with their fused scores.
    pub fn fuse<T: Copy + Eq + Hash>(
        &self,
        lexical: &[(f32, T)],
        dense: &[(f32, T)],
        limit: usize,
    ) -> Vec<(f32, T)> {
        match self.method {
            FusionMethod::Rrf => {
                let places = |ranking: &[(f32, T)]| ranking.iter().map(|&(_, a)| a).collect();
                let (lexical, dense): (Vec<T>, Vec<T>) = (places(lexical), places(dense));
                reciprocal_rank_fusion(
                    &[(&lexical, 1.0), (&dense, self.dense_weight)],
                    self.k,
                    limit,
                )
            }
            FusionMethod::MinMax => min_max_fusion(lexical, dense, self.dense_weight, limit),
        }
    }

    /// How many candidates the lexical and the dense ranking contribute to a hybrid search for
    /// `limit` results: each ranking's depth, or `limit` where that is more. A caller reading
    /// past [`MAX_TOP_K`] results (an evaluation ranking documents) fuses the candidates of a
    /// search for [`MAX_TOP_K`], so its first results are the ones every search returns.
    pub fn depths(&self, limit: usize) -> (usize, usize) {
        let asked = limit.min(MAX_TOP_K as usize);
        (self.lexical_depth.max(asked), self.dense_depth.max(asked))
    }
}

impl Default for Fusion {
    fn default() -> Self {
        Self::of(FusionMethod::default())
    }
}

/// The best `limit` chunks for `query` in `mode`, best first; with `filter`, the best of the
/// chunks it keeps (checked first: a malformed filter fails even over an empty collection).
pub fn ranked_hits(
    open: &OpenCollection,
    query: &str,
    limit: usize,
    mode: SearchMode,
    embedder: Option<&dyn Embedder>,
    fusion: Fusion,
    filter: Option<&Filter>,
) -> Result<RankedHits, Error> {
    let selector = filter
        .filter(|f| !f.is_empty())
        .map(Filter::compile)
        .transpose()?;
    let Some(index) = open.lexical() else {
        // Nothing ingested yet: nothing to rank, in any mode.
        return Ok(RankedHits::default());
    };
    let selection = selector
        .map(|selector| Selection::new(&selector, index))
        .transpose()?;
    let keep = |address| selection.as_ref().is_none_or(|s| s.keeps(address));
    let selection: Option<Keep<'_>> = selection.is_some().then_some(&keep);
    match mode {
        SearchMode::Lexical => lexical_hits(index, query, limit, selection),
        SearchMode::Dense => Ok(RankedHits {
            hits: dense_hits(open, query, limit, embedder, selection, limit)?,
            ..RankedHits::default()
        }),
        SearchMode::Hybrid => {
            let (lexical_depth, dense_depth) = fusion.depths(limit);
            let dense = dense_hits(open, query, dense_depth, embedder, selection, limit)?;
            let lexical = lexical_hits(index, query, lexical_depth, selection)?;
            Ok(RankedHits {
                hits: fusion.fuse(&lexical.hits, &dense, limit),
                ..lexical
            })
        }
    }
}

/// Checks that `open` can be searched by vectors with `embedder`: the generation has vectors
/// and `embedder` computed them.
pub fn check_dense<'a>(
    open: &OpenCollection,
    embedder: Option<&'a dyn Embedder>,
) -> Result<&'a dyn Embedder, Error> {
    check_embedder(open.name(), open.vectors().map(|v| v.identity()), embedder)
}

/// Checks that collection `name`, whose vectors (if any) were computed by `vectors`, can be
/// searched by vectors with `embedder`, which is [ready](Embedder::ready): the same check on
/// every backend.
pub fn check_embedder<'a>(
    name: &str,
    vectors: Option<&EmbeddingIdentity>,
    embedder: Option<&'a dyn Embedder>,
) -> Result<&'a dyn Embedder, Error> {
    let unavailable = |reason| Error::DenseUnavailable {
        collection: name.to_owned(),
        reason,
    };
    let Some(theirs) = vectors else {
        return Err(unavailable(
            "the collection has no vectors (it was ingested without an embedder)",
        ));
    };
    let Some(embedder) = embedder else {
        return Err(unavailable("this server was started without an embedder"));
    };
    embedder.ready()?;
    let ours = embedder.identity();
    if theirs.fingerprint != ours.fingerprint {
        return Err(Error::EmbeddingMismatch {
            collection: name.to_owned(),
            collection_model: theirs.model.clone(),
            collection_fingerprint: theirs.fingerprint.clone(),
            server_model: ours.model.clone(),
            server_fingerprint: ours.fingerprint.clone(),
        });
    }
    Ok(embedder)
}

/// The unit vector of query `query`.
pub fn query_vector(embedder: &dyn Embedder, query: &str) -> Result<Vec<f32>, Error> {
    let vector = embedder
        .embed(&[query], Role::Query)?
        .pop()
        .ok_or_else(|| Error::embedding("the embedder returned no vector", None))?;
    unit_vector(vector)
}

/// The `limit` chunks nearest to the query's vector, among those `selection` keeps, for a
/// search returning `wanted` results ([`Vectors::nearest`](crate::vectors::Vectors)).
fn dense_hits(
    open: &OpenCollection,
    query: &str,
    limit: usize,
    embedder: Option<&dyn Embedder>,
    selection: Option<Keep<'_>>,
    wanted: usize,
) -> Result<Vec<(Score, ChunkAddress)>, Error> {
    let embedder = check_dense(open, embedder)?;
    if open.vectors().is_none() {
        return Ok(Vec::new());
    }
    let vector = query_vector(embedder, query)?;
    nearest_hits(open, &vector, limit, selection, wanted)
}

/// [`dense_hits`] for a query vector already computed (and its embedder checked).
pub(crate) fn nearest_hits(
    open: &OpenCollection,
    vector: &[f32],
    limit: usize,
    selection: Option<Keep<'_>>,
    wanted: usize,
) -> Result<Vec<(Score, ChunkAddress)>, Error> {
    let Some(vectors) = open.vectors() else {
        return Ok(Vec::new());
    };
    let nearest = vectors.nearest(vector, limit, selection, wanted)?;
    Ok(nearest
        .into_iter()
        .map(|(score, address)| (score, ChunkAddress(address)))
        .collect())
}

// A search through a generation's graph returns at most `EF_SEARCH` chunks: enough for the
// deepest dense ranking a search asks for.
const _: () = assert!(EF_SEARCH >= DENSE_DEPTH && EF_SEARCH >= MAX_TOP_K as usize);

thread_local! {
    /// The query analyser, built once per thread: building one builds its stop-word set and
    /// stemmer (about 14,000 instructions of a SciFact search, against 41,000 for analysing its
    /// query).
    static QUERY_ANALYZER: RefCell<TextAnalyzer> = RefCell::new(english_analyzer());
}

/// The distinct analysed terms of query `text`, in order of first appearance: the clauses of its
/// BM25 query, on every backend.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    QUERY_ANALYZER
        .with_borrow_mut(|analyzer| terms(analyzer, text))
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// The exact top `limit` chunk hits of `text` by BM25 ([`top_k`]) among those `selection`
/// keeps.
fn lexical_hits(
    index: &LexicalIndex,
    text: &str,
    limit: usize,
    selection: Option<Keep<'_>>,
) -> Result<RankedHits, Error> {
    let terms = query_terms(text);
    let scope = Scope {
        keep: selection,
        statistics: None,
    };
    Ok(RankedHits {
        hits: top_hits(index, &terms, limit, scope)?,
        query_terms: terms.len() as u32,
    })
}

/// The exact top `limit` chunks of `index` for analysed `terms` by BM25 ([`top_k`]), within
/// `scope`.
pub(crate) fn top_hits(
    index: &LexicalIndex,
    terms: &[String],
    limit: usize,
    scope: Scope<'_>,
) -> Result<Vec<(Score, ChunkAddress)>, Error> {
    let hits = top_k(
        &index.searcher,
        index.fields.content,
        terms,
        &index.maxima,
        limit,
        scope,
    )
    .map_err(|err| Error::storage("lexical search failed", err))?;
    Ok(hits
        .into_iter()
        .map(|(score, address)| (score, ChunkAddress(address)))
        .collect())
}

/// A stored text field: a plain string, or the text of pre-analysed content (a source-code
/// chunk's).
fn text_field(doc: &TantivyDocument, field: tantivy::schema::Field) -> String {
    doc.get_first(field)
        .and_then(|v| {
            v.as_str()
                .map(str::to_owned)
                .or_else(|| v.as_pre_tokenized_text().map(|p| p.text))
        })
        .unwrap_or_default()
}

/// The document id of a ranked chunk of `open`.
pub fn hit_document_id(open: &OpenCollection, address: ChunkAddress) -> Result<String, Error> {
    Ok(hit_place(open, address)?.document_id)
}

/// Where a ranked chunk lies: its document, its id and its lines (`None` for sources without
/// lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitPlace {
    /// The chunk's document.
    pub document_id: String,
    /// The chunk.
    pub chunk_id: String,
    /// Its first and last line.
    pub lines: Option<(u32, u32)>,
}

/// Where the ranked chunk at `address` of `open` lies.
pub fn hit_place(open: &OpenCollection, address: ChunkAddress) -> Result<HitPlace, Error> {
    let Some(index) = open.lexical() else {
        return Err(Error::Storage {
            message: "a ranked chunk of a collection without a lexical index".to_owned(),
            source: None,
        });
    };
    let doc: TantivyDocument = index
        .searcher
        .doc(address.0)
        .map_err(|err| Error::storage("cannot read a stored chunk", err))?;
    let line = |field: tantivy::schema::Field| {
        doc.get_first(field)
            .and_then(|v| v.as_u64())
            .and_then(|n| u32::try_from(n).ok())
    };
    let f = &index.fields;
    Ok(HitPlace {
        document_id: text_field(&doc, f.document_id),
        chunk_id: text_field(&doc, f.chunk_id),
        lines: f.lines.and_then(|(start, end)| line(start).zip(line(end))),
    })
}

/// The result of rank `rank` for the chunk at `address` of `index`, with its score.
pub(crate) fn load_result(
    index: &LexicalIndex,
    address: DocAddress,
    score: Score,
    rank: u32,
) -> Result<RetrievalResult, Error> {
    let f = &index.fields;
    let doc: TantivyDocument = index
        .searcher
        .doc(address)
        .map_err(|err| Error::storage("cannot read a stored chunk", err))?;
    let chunk_id = text_field(&doc, f.chunk_id);
    let document_id = text_field(&doc, f.document_id);
    let extractor = text_field(&doc, f.extractor);
    let scope = text_field(&doc, f.scope);
    let number = |field| {
        doc.get_first(field)
            .and_then(|v| v.as_u64())
            .unwrap_or_default()
    };
    let line = |field: Option<tantivy::schema::Field>| {
        field
            .and_then(|field| doc.get_first(field))
            .and_then(|v| v.as_u64())
            .and_then(|n| u32::try_from(n).ok())
    };
    let citation = Citation {
        document_id: document_id.clone(),
        chunk_id: chunk_id.clone(),
        source: text_field(&doc, f.source),
        source_class: SourceClass::parse(&text_field(&doc, f.source_class))
            .unwrap_or(SourceClass::Text),
        extractor: (!extractor.is_empty()).then_some(extractor),
        start_offset: number(f.start),
        end_offset: number(f.end),
        start_line: line(f.lines.map(|(start, _)| start)),
        end_line: line(f.lines.map(|(_, end)| end)),
    };
    Ok(RetrievalResult {
        chunk_id,
        document_id,
        score,
        rank,
        content: Some(text_field(&doc, f.content)),
        content_truncated: false,
        snippet: None,
        citation,
        scope: (!scope.is_empty()).then_some(scope),
        collection: None,
    })
}

#[cfg(test)]
mod tests {
    use super::Fusion;
    use crate::MAX_TOP_K;

    #[test]
    fn an_evaluation_reading_past_the_largest_top_k_fuses_the_candidates_a_search_fuses() {
        let shipped = Fusion::default();
        let search = shipped.depths(10);
        assert_eq!(search, (500, 128));
        for deeper in [MAX_TOP_K as usize, 200, 800] {
            assert_eq!(shipped.depths(deeper), search, "{deeper}");
        }
        // Shallower depths than a search asks for give way to its `top_k`, and no further.
        let shallow = Fusion {
            lexical_depth: 20,
            dense_depth: 30,
            ..shipped
        };
        assert_eq!(shallow.depths(10), (20, 30));
        assert_eq!(shallow.depths(25), (25, 30));
        assert_eq!(shallow.depths(400), (100, 100));
    }
}
