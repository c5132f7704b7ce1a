//! Searches of the cluster: the requests (term queries over groundkit's own analysis, k-NN,
//! both in one `_msearch`) and reading their answers into rankings with the local engine's
//! scores, with the generation indices that answered.
//!
//! Every ranking search carries the same `preference` ([`PREFERENCE`]), so every server reads
//! the same copy of each shard. Copies of a shard hold the same documents but may merge their
//! segments at different times, and BM25 counts a deleted document (a grown generation deletes
//! the documents that changed) until its segment is merged: two copies can score one query
//! differently for a while, and two servers must answer alike.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use groundkit_core::Error;
use groundkit_retrieval::{ChunkRecord, Fusion};
use serde_json::{Value, json};

use crate::client::{Cluster, complete, failure, refused};
use crate::layout::{GenerationMeta, RECORD_FIELDS};

/// The `preference` of every ranking search: one string, so one copy of each shard answers.
pub(crate) const PREFERENCE: &str = "groundkit";

/// Lucene's BM25 leaves out the constant factor `k1 + 1` of the formula the local engine
/// scores with (tantivy's); multiplying it back makes lexical scores of both backends equal.
const LUCENE_BM25_SCALE: f32 = 1.2 + 1.0;

/// `answer`, if it covers every shard.
fn whole(answer: Value) -> Result<Value, Error> {
    if complete(&answer) {
        Ok(answer)
    } else {
        Err(failure(
            "the search cluster answered from only some shards",
            answer
                .get("_shards")
                .map(Value::to_string)
                .unwrap_or_default(),
        ))
    }
}

/// The ranking of a lexical search answer, with the local engine's BM25 scores.
fn lexical_ranking(answer: &Value) -> Result<Ranking, Error> {
    hits(answer)
        .iter()
        .map(|hit| Ok((score_of(hit) * LUCENE_BM25_SCALE, record_of(hit)?)))
        .collect()
}

/// The ranking of a k-NN answer, with cosine similarities (the k-NN plugin scores a cosine `c`
/// as `(1 + c) / 2`).
fn dense_ranking(answer: &Value) -> Result<Ranking, Error> {
    hits(answer)
        .iter()
        .map(|hit| Ok((2.0 * score_of(hit) - 1.0, record_of(hit)?)))
        .collect()
}

/// A ranking read from a search answer.
pub(crate) type Ranking = Vec<(f32, ChunkRecord)>;

/// A ranking and the generation indices its hits came from.
#[derive(Default)]
pub(crate) struct Ranked {
    pub(crate) hits: Ranking,
    pub(crate) indices: BTreeSet<String>,
    /// The generation index of each hit, in order.
    pub(crate) from: Vec<String>,
}

impl Ranked {
    /// The ranking `rank` reads from a search answer, with the indices of its hits.
    fn of(answer: &Value, rank: fn(&Value) -> Result<Ranking, Error>) -> Result<Self, Error> {
        let from: Vec<String> = hits(answer)
            .iter()
            .map(|hit| {
                hit.get("_index")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        Ok(Self {
            hits: rank(answer)?,
            indices: from.iter().cloned().collect(),
            from,
        })
    }
}

/// How a lexical search runs: with a first round over every shard for term statistics of
/// everything searched (`dfs_query_then_fetch`), unless it searches one index of one shard,
/// whose statistics are the collection's. Over several collections' indices, those statistics
/// are all of theirs added up, as the local engine scores several collections.
fn search_type(asked: &Asked<'_>) -> &'static str {
    if asked.meta.shards == 1 && !asked.several {
        "query_then_fetch"
    } else {
        "dfs_query_then_fetch"
    }
}

/// A hit's chunk record, read from the `_source` the search asked for.
pub(crate) fn record_of(hit: &Value) -> Result<ChunkRecord, Error> {
    let source = hit.get("_source").cloned().unwrap_or(Value::Null);
    serde_json::from_value(source).map_err(|err| {
        failure(
            "the search cluster sent a chunk groundkit cannot read",
            err.to_string(),
        )
    })
}

pub(crate) fn hits(answer: &Value) -> &[Value] {
    answer
        .pointer("/hits/hits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn score_of(hit: &Value) -> f32 {
    hit.get("_score").and_then(Value::as_f64).unwrap_or(0.0) as f32
}

/// A search's query terms, in the form a generation was laid out in, and the clause of its
/// filter (`None`: unfiltered).
pub(crate) struct Asked<'a> {
    pub(crate) meta: &'a GenerationMeta,
    pub(crate) terms: &'a [String],
    pub(crate) filter: Option<&'a Value>,
    /// Whether the search reads several collections' generation indices at once.
    pub(crate) several: bool,
}

fn lexical_body(asked: &Asked<'_>, limit: usize) -> Value {
    let field = asked.meta.matched_field();
    let should: Vec<Value> = asked
        .terms
        .iter()
        .map(|t| json!({ "term": { field: t } }))
        .collect();
    let mut query = json!({ "bool": { "should": should } });
    if let Some(filter) = asked.filter {
        // A filter clause makes the terms optional unless one is required.
        query["bool"]["filter"] = filter.clone();
        query["bool"]["minimum_should_match"] = json!(1);
    }
    json!({
        "size": limit,
        "track_total_hits": false,
        "_source": RECORD_FIELDS,
        "query": query
    })
}

fn dense_body(vector: &[f32], limit: usize, filter: Option<&Value>) -> Value {
    let mut knn = json!({ "vector": vector, "k": limit });
    if let Some(filter) = filter {
        knn["filter"] = filter.clone();
    }
    json!({
        "size": limit,
        "track_total_hits": false,
        "_source": RECORD_FIELDS,
        "query": { "knn": { "vector": knn } }
    })
}

/// One search of `target` (the collection's alias or one generation index): its ranking as
/// `rank` reads it, or `None` when `target` does not exist.
fn search_one(
    cluster: &Cluster,
    path: &str,
    body: &Value,
    rank: fn(&Value) -> Result<Ranking, Error>,
) -> Result<Option<Ranked>, Error> {
    cluster.search(|cluster| {
        let (status, answer) = cluster.call("POST", path, Some(body))?;
        match status {
            404 => Ok(None),
            200..=299 => Ranked::of(&whole(answer)?, rank).map(Some),
            _ => Err(refused("POST", "/_search", status, &answer)),
        }
    })
}

/// A lexical search of `target`, prepared for a generation laid out as `meta` says.
pub(crate) fn lexical(
    cluster: &Cluster,
    target: &str,
    asked: &Asked<'_>,
    limit: usize,
) -> Result<Option<Ranked>, Error> {
    if asked.terms.is_empty() {
        return Ok(Some(Ranked::default()));
    }
    let path = format!(
        "/{target}/_search?search_type={}&allow_partial_search_results=false&preference={PREFERENCE}",
        search_type(asked)
    );
    search_one(cluster, &path, &lexical_body(asked, limit), lexical_ranking)
}

/// A k-NN search of `target`.
pub(crate) fn dense(
    cluster: &Cluster,
    target: &str,
    vector: &[f32],
    limit: usize,
    filter: Option<&Value>,
) -> Result<Option<Ranked>, Error> {
    let path =
        format!("/{target}/_search?allow_partial_search_results=false&preference={PREFERENCE}");
    search_one(
        cluster,
        &path,
        &dense_body(vector, limit, filter),
        dense_ranking,
    )
}

/// Both rankings of `target` in one `_msearch`, fused here as the local backend fuses them;
/// `None` when `target` does not exist. The candidates' hits carry only their ids (a lexical
/// ranking is hundreds deep), and a second search reads the records of the fused results from
/// the generation index that ranked them.
pub(crate) fn hybrid(
    cluster: &Cluster,
    target: &str,
    asked: &Asked<'_>,
    vector: &[f32],
    limit: usize,
    fusion: Fusion,
) -> Result<Option<Ranked>, Error> {
    let (lexical_depth, dense_depth) = fusion.depths(limit);
    let mut body = Vec::new();
    let mut push = |header: Value, search: Value| {
        body.extend_from_slice(header.to_string().as_bytes());
        body.push(b'\n');
        body.extend_from_slice(search.to_string().as_bytes());
        body.push(b'\n');
    };
    let ids_only = |mut body: Value| {
        body["_source"] = json!(false);
        body
    };
    push(
        json!({
            "search_type": search_type(asked),
            "allow_partial_search_results": false,
            "preference": PREFERENCE
        }),
        ids_only(lexical_body(asked, lexical_depth)),
    );
    push(
        json!({ "allow_partial_search_results": false, "preference": PREFERENCE }),
        ids_only(dense_body(vector, dense_depth, asked.filter)),
    );
    let path = format!("/{target}/_msearch");
    let answer = cluster.search(|cluster| {
        let answer = cluster.ndjson(&path, &body)?;
        let responses = answer.get("responses").and_then(Value::as_array);
        let missing = responses.is_some_and(|r| {
            r.iter()
                .any(|r| r.get("status").and_then(Value::as_u64) == Some(404))
        });
        let whole_answers =
            responses.is_some_and(|r| r.iter().all(|r| complete(r) && r.get("error").is_none()));
        if missing {
            Ok(None)
        } else if whole_answers {
            Ok(Some(answer))
        } else {
            Err(failure(
                "the search cluster failed a search of a multi-search",
                path.clone(),
            ))
        }
    })?;
    let Some(answer) = answer else {
        return Ok(None);
    };
    let responses = answer
        .get("responses")
        .and_then(Value::as_array)
        .filter(|r| r.len() == 2)
        .ok_or_else(|| {
            failure(
                "the search cluster sent no multi-search answer",
                target.to_owned(),
            )
        })?;
    for response in responses {
        if let Some(status) = response
            .get("status")
            .and_then(Value::as_u64)
            .filter(|s| *s >= 300)
        {
            return Err(refused("POST", "/_msearch", status as u16, response));
        }
    }
    let lexical = if asked.terms.is_empty() {
        &[]
    } else {
        hits(&responses[0])
    };
    let dense = hits(&responses[1]);
    let indices: BTreeSet<String> = lexical
        .iter()
        .chain(dense)
        .filter_map(|hit| hit.get("_index").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    if indices.len() != 1 && !asked.several {
        // No hits, or hits from two generations (the alias moved between the two searches):
        // nothing to read records from; the caller searches the current generation again.
        return Ok(Some(Ranked {
            indices,
            ..Ranked::default()
        }));
    }
    let fused = fusion.fuse(&scored(lexical), &scored(dense), limit);
    let mut wanted: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for &(_, (index, id)) in &fused {
        wanted.entry(index).or_default().push(id);
    }
    let mut records = HashMap::new();
    for (index, ids) in wanted {
        let Some(read) = read_records(cluster, index, &ids)? else {
            return Ok(None);
        };
        records.extend(read.into_iter().map(|(id, record)| ((index, id), record)));
    }
    let mut hits = Vec::with_capacity(fused.len());
    let mut from = Vec::with_capacity(fused.len());
    for &(score, (index, id)) in &fused {
        let record = records.remove(&(index, id.to_owned())).ok_or_else(|| {
            failure(
                "the search cluster lost a chunk between ranking and reading it",
                index.to_owned(),
            )
        })?;
        hits.push((score, record));
        from.push(index.to_owned());
    }
    Ok(Some(Ranked {
        hits,
        indices,
        from,
    }))
}

/// The ids of `hits`, each with its generation index, and their scores. Each score is an
/// increasing affine function of the local engine's score (BM25 without its constant factor
/// `k1 + 1`; (1 + cosine) / 2 for a k-NN hit), which min-max scaling undoes, so fusion ranks as
/// the local engine does.
fn scored(hits: &[Value]) -> Vec<(f32, (&str, &str))> {
    hits.iter()
        .filter_map(|hit| {
            let index = hit.get("_index").and_then(Value::as_str)?;
            Some((
                score_of(hit),
                (index, hit.get("_id").and_then(Value::as_str)?),
            ))
        })
        .collect()
}

/// The records of chunks `ids` in generation index `index`, by chunk id; `None` when the
/// index does not exist.
fn read_records(
    cluster: &Cluster,
    index: &str,
    ids: &[&str],
) -> Result<Option<HashMap<String, ChunkRecord>>, Error> {
    let body = json!({
        "size": ids.len(),
        "track_total_hits": false,
        "_source": RECORD_FIELDS,
        "query": { "ids": { "values": ids } }
    });
    let path = format!("/{index}/_search?allow_partial_search_results=false");
    let read = |answer: &Value| {
        hits(answer)
            .iter()
            .map(|hit| Ok((0.0, record_of(hit)?)))
            .collect()
    };
    Ok(search_one(cluster, &path, &body, read)?.map(|ranked| {
        ranked
            .hits
            .into_iter()
            .map(|(_, record)| (record.chunk_id.clone(), record))
            .collect()
    }))
}
