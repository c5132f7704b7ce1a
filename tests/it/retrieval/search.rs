//! Lexical search: query text is never syntax, bounds, ranks and scores, dense refusal.

use groundkit_retrieval::{
    self as retrieval, MAX_QUERY_CHARS, MAX_RANK_DEPTH, SearchMode, SearchParams,
};

use super::Fixture;

fn corpus() -> Fixture {
    let fx = Fixture::new();
    fx.write(
        "covid.md",
        "COVID-19 rapid antigen tests give results in fifteen minutes.",
    );
    fx.write("flu.md", "Influenza vaccines are updated every year.");
    fx.write(
        "tea.md",
        "Green tea is brewed at 80 degrees; black tea just off the boil.",
    );
    fx.ingest_all("c");
    fx
}

#[test]
fn query_syntax_characters_do_not_change_the_meaning() {
    let fx = corpus();
    let plain = fx.search("c", "covid 19 tests", 5);
    for query in [
        "COVID-19 tests",
        "+covid -19 tests",
        "\"covid 19\" tests",
        "title:covid 19 tests",
        "covid^3 19~ (tests) [AND] OR",
    ] {
        let hits = fx.search("c", query, 5);
        assert_eq!(hits.results[0].document_id, "covid.md", "{query}");
        assert_eq!(
            hits.results.len(),
            1,
            "{query}: a `-` must not exclude and AND must not require"
        );
        assert!(
            (hits.results[0].score - plain.results[0].score).abs() < 1e-4 || query.contains("AND"),
            "{query}"
        );
    }
    // A query that is only punctuation or stop words matches nothing, without an error.
    assert!(fx.search("c", "+-:\" the of", 5).results.is_empty());
}

#[test]
fn results_are_ranked_from_one_with_nonnegative_scores() {
    let fx = corpus();
    let hits = fx.search("c", "tea vaccines tests", 10);
    assert_eq!(hits.total_results as usize, hits.results.len());
    assert_eq!(hits.results.len(), 3);
    for (i, hit) in hits.results.iter().enumerate() {
        assert_eq!(hit.rank as usize, i + 1);
        assert!(hit.score >= 0.0);
        assert_eq!(hit.citation.chunk_id, hit.chunk_id);
    }
    assert!(hits.results.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(hits.metadata.mode, SearchMode::Lexical);
    assert!(!hits.metadata.reranked);
    assert_eq!(hits.metadata.generation, 1);
    assert_eq!(fx.search("c", "tea vaccines tests", 2).results.len(), 2);
}

#[test]
fn out_of_bounds_requests_are_validation_errors() {
    let fx = corpus();
    let cache = fx.cache();
    let open = cache.acquire("c").expect("open");
    let bad = |query: &str, top_k: u32| {
        retrieval::search(
            &open,
            &SearchParams {
                query: query.to_owned(),
                top_k,
                mode: SearchMode::Lexical,
                fusion: Default::default(),
                filter: None,
            },
            None,
        )
        .expect_err("refused")
    };
    assert_eq!(bad("  ", 5).field(), Some("query"));
    assert_eq!(
        bad(&"a".repeat(MAX_QUERY_CHARS + 1), 5).field(),
        Some("query")
    );
    assert_eq!(bad("tea", 0).field(), Some("top_k"));
    // The engine reads rankings as deep as a page of a walk needs; the service bounds `top_k`
    // itself (`service::bounds`).
    assert_eq!(bad("tea", MAX_RANK_DEPTH + 1).field(), Some("top_k"));
}

#[test]
fn search_modes_are_lexical_dense_and_hybrid_and_nothing_else() {
    for (mode, text) in [
        (SearchMode::Lexical, "lexical"),
        (SearchMode::Dense, "dense"),
        (SearchMode::Hybrid, "hybrid"),
    ] {
        assert_eq!(
            serde_json::to_string(&mode).expect("json"),
            format!("\"{text}\"")
        );
        let params: SearchParams =
            serde_json::from_str(&format!(r#"{{"query":"q","top_k":3,"mode":"{text}"}}"#))
                .expect("parse");
        assert_eq!(params.mode, mode);
    }
    for other in ["fuzzy", "Dense", "semantic"] {
        let text = format!(r#"{{"query":"q","top_k":3,"mode":"{other}"}}"#);
        assert!(
            serde_json::from_str::<SearchParams>(&text).is_err(),
            "{other}"
        );
    }
    let params: SearchParams = serde_json::from_str(r#"{"query":"q","top_k":3}"#).expect("parse");
    assert_eq!(params.mode, SearchMode::Lexical);
}
