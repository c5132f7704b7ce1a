//! The service's prompt and completions: `grounded_answer` embeds the chunks a search finds that
//! still match their sources, as the `grk://` resources a client could re-read, and leaves a
//! drifted one out, saying so; every `collection` argument completes to the collections served.

use std::sync::Arc;

use groundkit_tests::TestServer;
use serde_json::{Value, json};

use super::{corpus, state};
use crate::mcp::support::{Stdio, initialize_frame};

async fn ask(stdio: &mut Stdio, method: &str, params: Value) -> Value {
    let frame = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
    stdio.send(&frame.to_string()).await;
    stdio.recv().await
}

#[tokio::test]
async fn a_grounded_answer_embeds_verified_chunks_and_leaves_a_drifted_one_out() {
    let fx = corpus();
    let shared = Arc::new(state(&fx, None));
    let server = TestServer::start_shared(Arc::clone(&shared));
    let mut stdio = Stdio::start_shared(shared);
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    stdio.recv().await;
    let arguments = json!({"collection": "papers", "question": "how hot is green tea steeped"});
    let params = json!({"name": "grounded_answer", "arguments": arguments});

    let answer = ask(&mut stdio, "prompts/get", params.clone()).await;
    let messages = answer["result"]["messages"].as_array().expect("messages");
    let (embedded, instruction) = messages.split_at(messages.len() - 1);
    assert_eq!(embedded.len(), 1, "only tea.txt matches: {answer}");
    let resource = &embedded[0]["content"]["resource"];
    let chunk: Value =
        serde_json::from_str(resource["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(
        resource["uri"],
        format!(
            "grk://papers/chunks/{}",
            chunk["chunk_id"].as_str().expect("id")
        )
    );
    assert_eq!(resource["mimeType"], "application/json");
    assert_eq!(chunk["citation"]["source"], "tea.txt");
    assert_eq!(
        chunk["content"],
        "Green tea is steeped at 80 degrees for two minutes."
    );
    let text = instruction[0]["content"]["text"]
        .as_str()
        .expect("instruction");
    assert!(
        text.contains("using only the 1 chunk(s) above from the collection `papers`"),
        "{text}"
    );
    assert!(
        text.ends_with("Question: how hot is green tea steeped"),
        "{text}"
    );
    assert_eq!(
        server
            .post_json("/prompts/grounded_answer", &arguments.to_string())
            .json(),
        answer["result"],
        "REST answers the same prompt"
    );

    fx.write("tea.txt", "Rewritten since the ingest.\n");
    let answer = ask(&mut stdio, "prompts/get", params).await;
    let messages = answer["result"]["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        1,
        "the drifted chunk is not embedded: {answer}"
    );
    let text = messages[0]["content"]["text"]
        .as_str()
        .expect("instruction");
    assert!(text.contains("using only the 0 chunk(s)"), "{text}");
    assert!(text.contains("1 more hit(s) were left out"), "{text}");
    assert!(!answer.to_string().contains("80 degrees"));
}

#[tokio::test]
async fn collection_arguments_complete_to_the_served_collections() {
    let fx = corpus();
    let mut stdio = Stdio::start(state(&fx, None));
    stdio.send(&initialize_frame(1, "2025-11-25")).await;
    let capabilities = stdio.recv().await["result"]["capabilities"].clone();
    assert_eq!(capabilities["completions"], json!({}));
    for reference in [
        json!({"type": "ref/prompt", "name": "grounded_answer"}),
        json!({"type": "ref/resource", "uri": "grk://{collection}/status"}),
        json!({"type": "ref/resource", "uri": "grk://{collection}/chunks/{chunk_id}"}),
    ] {
        for (typed, values) in [("p", json!(["papers"])), ("q", json!([]))] {
            let params =
                json!({"ref": reference, "argument": {"name": "collection", "value": typed}});
            let answer = ask(&mut stdio, "completion/complete", params).await;
            assert_eq!(
                answer["result"]["completion"]["values"], values,
                "{reference} {typed}"
            );
        }
    }
    let answer = ask(
        &mut stdio,
        "prompts/get",
        json!({"name": "grounded_answer", "arguments": {"collection": "../etc", "question": "x"}}),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(answer["error"]["data"]["kind"], "validation_error");
    assert_eq!(answer["error"]["data"]["field"], "collection");
}
