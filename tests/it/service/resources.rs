//! The service's resources: a chunk reads as `fetch_chunk`'s verified answer (a drifted chunk as
//! its verdict, never as the stored text), a collection's status as `index_status`'s answer, on
//! MCP and on REST alike.

use std::sync::Arc;

use groundkit_tests::TestServer;
use serde_json::{Value, json};

use super::{corpus, state};
use crate::mcp::support::{Stdio, initialize_frame};

/// The JSON text a `resources/read` of `uri` answers over stdio, parsed; or its error.
async fn read(stdio: &mut Stdio, uri: &str) -> Result<Value, Value> {
    let frame =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri}});
    stdio.send(&frame.to_string()).await;
    let answer = stdio.recv().await;
    let Some(contents) = answer["result"]["contents"].as_array() else {
        return Err(answer["error"].clone());
    };
    assert_eq!(contents.len(), 1);
    assert_eq!(contents[0]["uri"], uri);
    assert_eq!(contents[0]["mimeType"], "application/json");
    let text = contents[0]["text"].as_str().expect("text contents");
    Ok(serde_json::from_str(text).expect("JSON text"))
}

#[tokio::test]
async fn a_chunk_reads_as_its_verified_answer_and_once_drifted_as_its_verdict_without_text() {
    let fx = corpus();
    let shared = Arc::new(state(&fx, None));
    let server = TestServer::start_shared(Arc::clone(&shared));
    let mut stdio = Stdio::start_shared(shared);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    let chunk_id = fx.chunk_ids("papers")[0].clone();
    let uri = format!("grk://papers/chunks/{chunk_id}");
    let rest_path = format!("/resources/grk/papers/chunks/{chunk_id}");
    let tool_path = format!("/collections/papers/chunks/{chunk_id}");

    let verified = read(&mut stdio, &uri).await.expect("a verified read");
    assert_eq!(verified["verification"], "verified");
    assert!(verified["content"].is_string());
    assert_eq!(
        verified,
        server.get(&tool_path).json(),
        "fetch_chunk's answer"
    );
    let over_rest = server.get(&rest_path);
    assert_eq!(over_rest.header("content-type"), Some("application/json"));
    assert_eq!(over_rest.json(), verified);

    let source = verified["citation"]["source"].as_str().expect("source");
    fx.write(source, "Rewritten since the ingest.\n");
    let drifted = read(&mut stdio, &uri).await.expect("a drifted read");
    assert_eq!(drifted["verification"], "drifted");
    assert!(drifted.get("content").is_none(), "{drifted}");
    assert!(
        !drifted
            .to_string()
            .contains(verified["content"].as_str().expect("text"))
    );
    assert_eq!(server.get(&rest_path).json(), drifted);
}

#[tokio::test]
async fn a_collection_status_reads_as_index_status_and_bad_names_are_refused() {
    let fx = corpus();
    let shared = Arc::new(state(&fx, None));
    let server = TestServer::start_shared(Arc::clone(&shared));
    let mut stdio = Stdio::start_shared(shared);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;

    let status = read(&mut stdio, "grk://papers/status")
        .await
        .expect("status");
    assert_eq!(status["collection"], "papers");
    assert_eq!(status["chunk_count"], 3);
    let listed = read(&mut stdio, "grk://collections")
        .await
        .expect("collections");
    assert_eq!(listed, json!({"collections": ["papers"]}));

    let missing = read(&mut stdio, "grk://absent/status")
        .await
        .expect_err("absent");
    assert_eq!(missing["code"], -32002, "{missing}");
    assert_eq!(missing["data"]["kind"], "collection_not_found");
    for uri in ["grk://..%2F..%2Fetc/status", "grk://%2E%2E/chunks/x"] {
        let refused = read(&mut stdio, uri).await.expect_err("a traversal");
        assert_eq!(refused["code"], -32602, "{uri}: {refused}");
        assert_eq!(refused["data"]["kind"], "validation_error", "{uri}");
        assert_eq!(refused["data"]["field"], "collection", "{uri}");
    }
    let refused = server.get("/resources/grk/..%2F..%2Fetc/status");
    assert_eq!(refused.status, 422, "{}", refused.body);
}
