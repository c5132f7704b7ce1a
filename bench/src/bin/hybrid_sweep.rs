//! Chooses the hybrid ranking's parameters on SciFact's training split and reports every mode on
//! the test split.
//!
//! ```text
//! grk --index-dir IDX --base-dir ../shared/data/scifact --embed-model MODEL \
//!     ingest -c scifact --format beir ../shared/data/scifact/corpus.jsonl
//! cargo run --release -p groundkit-bench --bin hybrid_sweep -- \
//!     IDX scifact MODEL ../shared/data/scifact [rrf|min-max]
//! ```
//!
//! With `rrf` (the default), sweeps the Reciprocal Rank Fusion constant `k`, each ranking's candidate depth (at least 100,
//! the largest `top_k`; the dense one at most 128, the most a graph search returns) and the dense
//! ranking's weight (the lexical ranking's is 1); with `min-max`, the dense weight and the
//! lexical depth of min-max fusion; either on `queries_train.jsonl` with
//! `qrels/train.tsv`, keeps the parameters with the best mean nDCG@10 (the first in the order
//! swept, so the smaller `k` and depths, on a tie), and then evaluates lexical, dense, hybrid with
//! the shipped defaults of each method and hybrid with the chosen parameters on `queries.jsonl` with
//! `qrels/test.tsv`. Query vectors are computed once and kept. Prints one JSON object per line.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use groundkit_core::Error;
use groundkit_embed::LocalEmbedder;
use groundkit_retrieval::embed::{Embedder, Role};
use groundkit_retrieval::eval::{Ranking, evaluate, read_qrels, read_queries};
use groundkit_retrieval::{CollectionCache, EmbeddingIdentity, Fusion, FusionMethod, SearchMode};

/// The model, remembering every query vector it computed.
struct Remembering {
    inner: LocalEmbedder,
    seen: Mutex<HashMap<String, Vec<f32>>>,
}

impl Embedder for Remembering {
    fn identity(&self) -> &EmbeddingIdentity {
        self.inner.identity()
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            let known = self
                .seen
                .lock()
                .map_err(|_| Error::internal("poisoned"))?
                .get(*text)
                .cloned();
            let vector = match known {
                Some(vector) => vector,
                None => {
                    let vector = self.inner.embed(&[text], role)?.remove(0);
                    self.seen
                        .lock()
                        .map_err(|_| Error::internal("poisoned"))?
                        .insert((*text).to_owned(), vector.clone());
                    vector
                }
            };
            out.push(vector);
        }
        Ok(out)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (index, collection, model, data, method) = match args.as_slice() {
        [index, collection, model, data] => (index, collection, model, data, "rrf"),
        [index, collection, model, data, method] => {
            (index, collection, model, data, method.as_str())
        }
        _ => {
            return Err(
                "usage: hybrid_sweep INDEX_DIR COLLECTION MODEL_DIR SCIFACT_DIR [rrf|min-max]"
                    .into(),
            );
        }
    };
    let data = Path::new(data);
    let embedder = Arc::new(Remembering {
        inner: LocalEmbedder::load(Path::new(model), 2)?,
        seen: Mutex::new(HashMap::new()),
    });
    let cache = CollectionCache::new(index, data, 1);
    let open = cache.acquire(collection)?;
    let train = read_queries(&data.join("queries_train.jsonl"))?;
    let train_qrels = read_qrels(&data.join("qrels/train.tsv"))?;
    let test = read_queries(&data.join("queries.jsonl"))?;
    let test_qrels = read_qrels(&data.join("qrels/test.tsv"))?;
    let ranking = |mode, fusion| Ranking {
        mode,
        embedder: Some(embedder.as_ref() as &dyn Embedder),
        fusion,
    };

    let mut best: Option<(f64, Fusion)> = None;
    let grid: Vec<Fusion> = match method {
        "rrf" => [0.5f32, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 40.0, 60.0, 100.0]
            .into_iter()
            .flat_map(|k| [100usize, 200, 500].map(|lexical_depth| (k, lexical_depth)))
            .flat_map(|(k, lexical)| [100usize, 128].map(|dense| (k, lexical, dense)))
            .flat_map(|(k, lexical, dense)| {
                [0.5f32, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0].map(|w| (k, lexical, dense, w))
            })
            .map(|(k, lexical_depth, dense_depth, dense_weight)| Fusion {
                method: FusionMethod::Rrf,
                k,
                lexical_depth,
                dense_depth,
                dense_weight,
            })
            .collect(),
        // Min-max fusion has no constant: its weight, and the lexical depth that sets the
        // lexical ranking's lowest score.
        "min-max" => [100usize, 500]
            .into_iter()
            .flat_map(|lexical| {
                [0.25f32, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0].map(|w| (lexical, w))
            })
            .map(|(lexical_depth, dense_weight)| Fusion {
                lexical_depth,
                dense_weight,
                ..Fusion::of(FusionMethod::MinMax)
            })
            .collect(),
        other => return Err(format!("no fusion method {other}").into()),
    };
    for fusion in grid {
        let Fusion {
            k,
            lexical_depth,
            dense_depth,
            dense_weight,
            ..
        } = fusion;
        let report = evaluate(
            &open,
            &train,
            &train_qrels,
            &ranking(SearchMode::Hybrid, fusion),
        )?;
        println!(
            "{}",
            serde_json::json!({"split": "train", "method": method, "k": k, "lexical_depth": lexical_depth, "dense_depth": dense_depth, "dense_weight": dense_weight, "ndcg_at_10": report.ndcg_at_10, "recall_at_100": report.recall_at_100})
        );
        if best.is_none_or(|(score, _)| report.ndcg_at_10 > score) {
            best = Some((report.ndcg_at_10, fusion));
        }
    }
    let (train_ndcg, chosen) = best.ok_or("no sweep")?;
    println!(
        "{}",
        serde_json::json!({"chosen": {"method": method, "k": chosen.k, "lexical_depth": chosen.lexical_depth, "dense_depth": chosen.dense_depth, "dense_weight": chosen.dense_weight, "train_ndcg_at_10": train_ndcg}})
    );
    for (name, how) in [
        ("lexical", ranking(SearchMode::Lexical, Fusion::default())),
        ("dense", ranking(SearchMode::Dense, Fusion::default())),
        (
            "hybrid (defaults)",
            ranking(SearchMode::Hybrid, Fusion::default()),
        ),
        (
            "hybrid (min-max defaults)",
            ranking(SearchMode::Hybrid, Fusion::of(FusionMethod::MinMax)),
        ),
        ("hybrid (chosen)", ranking(SearchMode::Hybrid, chosen)),
    ] {
        let report = evaluate(&open, &test, &test_qrels, &how)?;
        println!(
            "{}",
            serde_json::json!({"split": "test", "ranking": name, "queries": report.queries, "ndcg_at_10": report.ndcg_at_10, "recall_at_100": report.recall_at_100, "mrr_at_10": report.mrr_at_10})
        );
    }
    Ok(())
}
