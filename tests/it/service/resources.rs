//! The service's resources: a chunk reads as `fetch_chunk`'s verified answer (a drifted chunk as
//! its verdict, never as the stored text), a collection's status as `index_status`'s answer, on
//! MCP and on REST alike; over MCP, each search hit links its chunk resource.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_search_hit_links_its_chunk_resource_over_mcp_and_the_link_reads_as_fetch_chunk() {
    let fx = corpus();
    let mut surfaces = super::transports::Surfaces::start_with_context(|| {
        groundkit_server::service::ServiceContext::new(fx.cache())
    })
    .await;
    let arguments = json!({"collection": "papers", "query": "tests tea chain", "detail": "ids"});
    let (rest, http, stdio) = surfaces.everywhere("search", arguments.clone()).await;
    let answer = rest.json();
    let hits = answer["results"].as_array().expect("results");
    assert_eq!(hits.len(), 3);
    for result in [&http, &stdio] {
        let blocks = result["content"].as_array().expect("content");
        assert_eq!(blocks.len(), 1 + hits.len(), "{result}");
        assert_eq!(blocks[0]["type"], "text");
        assert_eq!(result["structuredContent"], answer);
        for (block, hit) in blocks[1..].iter().zip(hits) {
            let id = hit["chunk_id"].as_str().expect("id");
            let source = hit["citation"]["source"].as_str().expect("source");
            let (start, end) = (&hit["citation"]["start_line"], &hit["citation"]["end_line"]);
            assert_eq!(
                block,
                &json!({"type": "resource_link", "uri": format!("grk://papers/chunks/{id}"),
                    "name": id, "title": format!("{source}:{start}-{end}"),
                    "mimeType": "application/json"})
            );
        }
    }

    // The link reads as fetch_chunk's verified answer.
    let uri = http["content"][1]["uri"].as_str().expect("uri");
    let read = surfaces.read_resource(uri);
    let fetched = surfaces
        .everywhere(
            "fetch_chunk",
            json!({"collection": "papers", "chunk_id": hits[0]["chunk_id"]}),
        )
        .await
        .0
        .json();
    assert_eq!(fetched["verification"], "verified");
    let text: Value =
        serde_json::from_str(read["contents"][0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(text, fetched);

    // A client of revision 2025-03-26, which has no resource links, gets the text alone.
    let mut old = Stdio::start(state(&fx, None));
    old.send(&initialize_frame(0, "2025-03-26")).await;
    let _ = old.recv().await;
    old.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    old.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search", "arguments": arguments}})
        .to_string(),
    )
    .await;
    let result = old.recv().await["result"].clone();
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
}
