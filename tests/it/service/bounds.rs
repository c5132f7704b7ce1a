//! The request bounds of the service tools, each at the limit (accepted) and one past it
//! (refused with `validation_error` and the field), over REST: query length, `top_k`, and the
//! lengths of collection names and chunk ids.

use groundkit_retrieval::{MAX_QUERY_CHARS, MAX_TOP_K};
use serde_json::json;

use super::{corpus, server};

#[test]
fn query_length_and_top_k_are_accepted_at_the_limit_and_refused_one_past() {
    let fx = corpus();
    let server = server(&fx);
    let search = |body: serde_json::Value| server.post_json("/search", &body.to_string());

    let at = search(json!({"collection": "papers", "query": "é".repeat(MAX_QUERY_CHARS)}));
    assert_eq!(
        at.status, 200,
        "{} characters: {}",
        MAX_QUERY_CHARS, at.body
    );
    let past = search(json!({"collection": "papers", "query": "é".repeat(MAX_QUERY_CHARS + 1)}));
    assert_eq!(past.status, 422, "{}", past.body);
    assert_eq!(past.json()["field"], "query");

    let at = search(json!({"collection": "papers", "query": "tea", "top_k": MAX_TOP_K}));
    assert_eq!(at.status, 200, "{}", at.body);
    assert_eq!(at.json()["metadata"]["top_k"], MAX_TOP_K);
    let past = search(json!({"collection": "papers", "query": "tea", "top_k": MAX_TOP_K + 1}));
    assert_eq!(past.status, 422, "{}", past.body);
    assert_eq!(past.json()["field"], "top_k");
}

#[test]
fn collection_names_and_chunk_ids_are_accepted_at_their_length_and_refused_one_past() {
    let fx = corpus();
    let server = server(&fx);
    let name_at = "n".repeat(64);
    let at = server.get(&format!("/collections/{name_at}/status"));
    assert_eq!(
        at.status, 404,
        "a valid name, no such collection: {}",
        at.body
    );
    assert_eq!(at.json()["kind"], "collection_not_found");
    let past = server.get(&format!("/collections/{name_at}n/status"));
    assert_eq!(past.status, 422, "{}", past.body);
    assert_eq!(past.json()["field"], "collection");

    let id_at = "c".repeat(128);
    let at = server.get(&format!("/collections/papers/chunks/{id_at}"));
    assert_eq!(at.status, 404, "{}", at.body);
    assert_eq!(at.json()["kind"], "chunk_not_found");
    let past = server.get(&format!("/collections/papers/chunks/{id_at}c"));
    assert_eq!(past.status, 422, "{}", past.body);
    assert_eq!(past.json()["field"], "chunk_id");
}
