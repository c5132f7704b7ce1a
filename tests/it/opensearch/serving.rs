//! Serving from the cluster: the service's tools on every transport, `grk ingest --backend
//! opensearch`, a publish killed mid-load, and two `grk serve` processes during an alias flip.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use groundkit_opensearch::{Cluster, ClusterBackend, ClusterConfig};
use groundkit_retrieval::CollectionCache;
use groundkit_server::service::ServiceContext;
use groundkit_tests::ServerProcess;
use serde_json::{Value, json};

use super::{TestCluster, cluster, http};
use crate::retrieval::Fixture;
use crate::service::transports::{Surfaces, stable};

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

fn corpus(fx: &Fixture) {
    fx.write(
        "tides.md",
        "Spring tides follow the new and the full moon; neap tides come between.",
    );
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.",
    );
    fx.write(
        "kelp.txt",
        "Kelp forests grow in cold coastal water; otters hunt urchins there.",
    );
}

/// `grk` on `fx` with the cluster at node `node`.
fn grk(fx: &Fixture, cluster: &TestCluster, node: usize) -> Command {
    let mut cmd = fx.grk();
    cmd.arg("--opensearch-url").arg(cluster.url(node));
    cmd
}

/// An answer without what differs per server by design: `index_status`'s runtime counters and a
/// problem's request id.
fn comparable(value: Value) -> Value {
    let mut value = stable(value);
    if let Some(object) = value.as_object_mut() {
        object.remove("request_id");
    }
    value
}

/// Equal JSON, except that floating-point numbers (scores) need only agree to 1e-5, relative: the
/// cluster computes BM25 in another order than the local engine.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= 1e-5 * x.abs().max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn json_of(output: std::process::Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::await_holding_lock,
    reason = "the guard keeps the other cluster tests out for the whole test; nothing else in \
              this runtime takes it"
)]
async fn every_tool_answers_from_the_cluster_as_from_the_index_directory_on_all_transports() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    let published = json_of(
        grk(&fx, &cluster, 0)
            .args([
                "ingest",
                "-c",
                "served",
                "--backend",
                "opensearch",
                "--json",
                ".",
            ])
            .output()
            .expect("run grk"),
    );
    assert_eq!(published["published"]["index"], "groundkit-served--g1");
    assert_eq!(published["published"]["chunks"], 3);
    assert_eq!(published["added"], 3);

    // The cluster-backed server holds nothing: an empty index directory, the same sources.
    let empty = tempfile::tempdir().expect("empty index dir");
    let url = cluster.url(1);
    let base = fx.base.clone();
    let mut remote = Surfaces::start_with_context(|| {
        let client = Cluster::connect(&ClusterConfig::new(url.clone())).expect("connect");
        ServiceContext::new(CollectionCache::new(empty.path(), &base, 4))
            .with_backend(Arc::new(ClusterBackend::new(client, &base, None)))
    })
    .await;
    let mut local = Surfaces::start_with_context(|| ServiceContext::new(fx.cache())).await;

    let found = local
        .everywhere(
            "search",
            json!({"collection": "served", "query": "tea", "top_k": 1}),
        )
        .await
        .0
        .json();
    let chunk_id = found["results"][0]["chunk_id"].clone();
    let calls = [
        json!(["search", {"collection": "served", "query": "moon tides", "top_k": 3}]),
        json!(["search", {"collection": "served", "query": "cold water", "mode": "lexical"}]),
        json!(["fetch_chunk", {"collection": "served", "chunk_id": chunk_id}]),
        json!(["index_status", {"collection": "served"}]),
        json!(["search", {"collection": "served", "query": "tea", "mode": "dense"}]),
        json!(["index_status", {"collection": "absent"}]),
        json!(["fetch_chunk", {"collection": "served", "chunk_id": "0000000000"}]),
    ];
    // The cluster is shared by the suite's tests: it lists this test's collection among others.
    let (listed, _, _) = remote.everywhere("list_collections", json!({})).await;
    let listed = listed.json();
    assert!(
        listed["collections"]
            .as_array()
            .expect("names")
            .contains(&json!("served")),
        "{listed}"
    );
    for call in calls {
        let (tool, arguments) = (call[0].as_str().expect("tool"), call[1].clone());
        let (want_rest, want_http, _) = local.everywhere(tool, arguments.clone()).await;
        let (rest, http_result, stdio_result) = remote.everywhere(tool, arguments).await;
        assert_eq!(rest.status, want_rest.status, "{tool}: {}", rest.body);
        let (got, want) = (comparable(rest.json()), comparable(want_rest.json()));
        assert!(same(&got, &want), "{tool} over REST: {got} != {want}");
        for (surface, result) in [("MCP HTTP", &http_result), ("MCP stdio", &stdio_result)] {
            assert_eq!(
                result["isError"], want_http["isError"],
                "{tool} over {surface}"
            );
            let got = comparable(result["structuredContent"].clone());
            let want = comparable(want_http["structuredContent"].clone());
            assert!(same(&got, &want), "{tool} over {surface}: {got} != {want}");
            let text = |r: &Value| -> Value {
                serde_json::from_str(r["content"][0]["text"].as_str().unwrap_or("null"))
                    .unwrap_or(Value::Null)
            };
            let (got, want) = (comparable(text(result)), comparable(text(&want_http)));
            assert!(
                same(&got, &want),
                "{tool} over {surface}, text: {got} != {want}"
            );
        }
    }
}

#[test]
fn a_publish_killed_while_loading_never_moves_the_alias_and_the_next_ingest_cleans_up() {
    let cluster = cluster();
    let fx = Fixture::new();
    // Enough chunks that loading takes a while: 4000 documents in a BEIR corpus.
    let mut lines = String::new();
    for i in 0..4000 {
        lines.push_str(&json!({"_id": format!("d{i}"), "title": format!("Note {i}"), "text": format!("Tide table {i}: high water at {} and low water at {}.", i % 12, (i + 6) % 12)}).to_string());
        lines.push('\n');
    }
    fx.write("corpus.jsonl", &lines);
    let ingest = |extra: &[&str]| {
        let mut cmd = grk(&fx, &cluster, 0);
        cmd.args([
            "ingest",
            "-c",
            "killed",
            "--backend",
            "opensearch",
            "--format",
            "beir",
        ]);
        cmd.args(extra).arg("corpus.jsonl");
        cmd
    };
    assert!(ingest(&[]).output().expect("first ingest").status.success());
    let before = http(cluster.http[0], "GET", "/_alias/groundkit-killed", "").expect("alias");
    assert!(before.1.contains("groundkit-killed--g1"), "{before:?}");

    // Generation 2: kill the ingest as soon as its index exists in the cluster.
    fx.write("corpus.jsonl", lines.replace("high water", "flood tide"));
    let mut child = ingest(&[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some((200, _)) = http(cluster.http[0], "GET", "/groundkit-killed--g2", "") {
            break;
        }
        assert!(
            child.try_wait().expect("poll").is_none(),
            "the ingest finished before it was killed"
        );
        assert!(Instant::now() < deadline, "generation 2 never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    let alias = http(cluster.http[0], "GET", "/_alias/groundkit-killed", "").expect("alias");
    assert!(
        alias.1.contains("groundkit-killed--g1") && !alias.1.contains("--g2"),
        "{alias:?}"
    );
    let found = json_of(
        grk(&fx, &cluster, 1)
            .args(["search", "-c", "killed", "flood tide", "--json"])
            .current_dir(tempfile::tempdir().expect("elsewhere").path())
            .output()
            .expect("search"),
    );
    assert_eq!(found["metadata"]["generation"], 1);

    // The next ingest publishes generation 2 whole, replacing what the killed one left.
    let done = json_of(ingest(&["--json"]).output().expect("ingest again"));
    assert_eq!(done["published"]["index"], "groundkit-killed--g2");
    assert_eq!(done["published"]["chunks"], 4000);
    let status = json_of(
        grk(&fx, &cluster, 2)
            .args(["status", "-c", "killed", "--json"])
            .output()
            .expect("status"),
    );
    assert_eq!(
        (status["generation"].clone(), status["chunk_count"].clone()),
        (json!(2), json!(4000))
    );
}

/// A `grk serve` process; killed when dropped.
pub(crate) struct Serve {
    process: ServerProcess,
    _index: Option<tempfile::TempDir>,
}

impl Serve {
    /// `grk serve` with an empty index directory, serving the cluster through node `node`.
    fn start(fx: &Fixture, cluster: &TestCluster, node: usize) -> Self {
        let index = tempfile::tempdir().expect("index dir");
        let mut command = Command::new(GRK);
        command
            .arg("--index-dir")
            .arg(index.path())
            .arg("--base-dir")
            .arg(&fx.base)
            .arg("--opensearch-url")
            .arg(cluster.url(node));
        let mut server = Self::start_command(&mut command);
        server._index = Some(index);
        server
    }

    /// Runs `command` (a `grk` with its global options) as `serve --port 0`.
    pub(crate) fn start_command(command: &mut Command) -> Self {
        let process = ServerProcess::spawn(command.args(["serve", "--port", "0"]))
            .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));
        Self {
            process,
            _index: None,
        }
    }

    /// `POST path` with a JSON body.
    pub(crate) fn post(&self, path: &str, body: &str) -> groundkit_tests::Response {
        self.process.post_json(path, body)
    }

    fn search(&self, query: &str) -> Value {
        let body = json!({"collection": "flip", "query": query, "top_k": 5}).to_string();
        let response = self.post("/search", &body);
        assert_eq!(response.status, 200, "{}", response.body);
        response.json()
    }
}

#[test]
fn serve_watch_on_a_cluster_publishes_each_generation_there() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    let mut command = grk(&fx, &cluster, 0);
    command
        .args(["serve", "--port", "0", "--watch"])
        .arg(&fx.base)
        .args(["--watch-collection", "watched"]);
    let watching = ServerProcess::spawn(&mut command)
        .unwrap_or_else(|(status, log)| panic!("grk serve exited ({status}): {log}"));
    // Another server, with an index directory of its own, sees only what is in the cluster.
    let other = Serve::start(&fx, &cluster, 1);
    let until = |query: &str, document: &str, generation: u64| {
        let body = json!({"collection": "watched", "query": query, "top_k": 1}).to_string();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let found = other.post("/search", &body);
            if found.status == 200 {
                let found = found.json();
                if found["metadata"]["generation"] == generation {
                    assert_eq!(found["results"][0]["document_id"], document, "{found}");
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "generation {generation} never published"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    until("kelp forests", "kelp.txt", 1);
    fx.write(
        "tea.txt",
        "Oolong tea is steeped at 90 degrees, several times.",
    );
    until("oolong", "tea.txt", 2);
    // The watching server answers from the cluster too.
    let body = json!({"collection": "watched", "query": "oolong", "top_k": 1}).to_string();
    let found = watching.post_json("/search", &body).json();
    assert_eq!(found["metadata"]["generation"], 2, "{found}");
}

#[test]
fn a_cursor_continues_on_the_generation_index_it_was_ranked_at() {
    let cluster = cluster();
    let fx = Fixture::new();
    for i in 0..4 {
        let text = format!("Note {i}: {}boats at the quay.", "harbour ".repeat(i + 1));
        fx.write(&format!("h{i}.txt"), text);
    }
    let ingest = |keep: &str| {
        json_of(
            grk(&fx, &cluster, 0)
                .args(["ingest", "-c", "paged", "--backend", "opensearch"])
                .args(["--json", "--keep-superseded", keep, "."])
                .output()
                .expect("ingest"),
        )
    };
    ingest("3600");
    let server = Serve::start(&fx, &cluster, 1);
    let search = |server: &Serve, body: Value| {
        let response = server.post("/search", &body.to_string());
        (response.status, response.json())
    };
    let query = json!({"collection": "paged", "query": "harbour", "top_k": 2});
    let (_, whole) = search(
        &server,
        json!({"collection": "paged", "query": "harbour", "top_k": 4}),
    );
    let (_, first) = search(&server, query.clone());
    let cursor = first["next_cursor"].as_str().expect("a cursor").to_owned();
    let ids = |answer: &Value| -> Vec<Value> {
        let hits = answer["results"].as_array().expect("results");
        hits.iter().map(|hit| hit["chunk_id"].clone()).collect()
    };

    // A new generation, published: the cursor still reads the one it was ranked at, on this
    // server and on one that never saw it.
    fx.write(
        "h9.txt",
        "Note 9: harbour harbour harbour harbour harbour harbour harbour.",
    );
    ingest("3600");
    let mut next = query.clone();
    next["cursor"] = json!(cursor);
    let other = Serve::start(&fx, &cluster, 2);
    for server in [&server, &other] {
        let (status, page) = search(server, next.clone());
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["metadata"]["generation"], 1, "{page}");
        assert_eq!(ids(&page), ids(&whole)[2..], "{page}");
    }
    let (_, fresh) = search(&server, query.clone());
    assert_eq!(fresh["metadata"]["generation"], 2);

    // A publish that keeps no older generation: the cursor has expired.
    fx.write("h10.txt", "Note 10: harbour.");
    ingest("0");
    let (status, problem) = search(&other, next);
    assert_eq!(status, 409, "{problem}");
    assert_eq!(problem["kind"], "cursor_expired");
}

#[test]
fn two_servers_round_robin_answer_identically_through_an_alias_flip() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    let ingest = || {
        let output = grk(&fx, &cluster, 0)
            .args(["ingest", "-c", "flip", "--backend", "opensearch", "."])
            .output()
            .expect("ingest");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    ingest();
    let servers = [
        Serve::start(&fx, &cluster, 1),
        Serve::start(&fx, &cluster, 2),
    ];
    let query = "green tea";
    let g1 = servers[0].search(query);
    assert_eq!(servers[1].search(query), g1);
    assert_eq!(g1["metadata"]["generation"], 1);

    fx.write(
        "tea.txt",
        "Green tea is steeped at 70 degrees for three minutes, never boiled.",
    );
    let answers = std::thread::scope(|scope| {
        let flipping = scope.spawn(ingest);
        let mut answers = Vec::new();
        let mut turn = 0;
        while !flipping.is_finished() || answers.len() < 10 {
            answers.push(servers[turn % 2].search(query));
            turn += 1;
        }
        flipping.join().expect("ingest thread");
        answers
    });
    let g2 = servers[0].search(query);
    assert_eq!(g2["metadata"]["generation"], 2);
    assert_eq!(servers[1].search(query), g2);
    assert_ne!(g1["results"], g2["results"]);
    // Every answer during the flip is one generation's whole answer, never a mixture (the two
    // nodes may apply the new alias a moment apart; once the ingest returns, both have).
    for answer in &answers {
        assert!(answer == &g1 || answer == &g2, "{answer}");
    }
}

#[test]
fn a_server_whose_cluster_does_not_answer_refuses_rather_than_answer_from_the_index_directory() {
    let fx = Fixture::new();
    corpus(&fx);
    fx.ingest_all("staged");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let client = Cluster::connect(&ClusterConfig::new(format!("http://127.0.0.1:{closed}")))
        .expect("connect");
    let body = r#"{"collection": "staged", "query": "green tea"}"#;
    let with_cluster = groundkit_tests::TestServer::start(crate::service::state_with(
        ServiceContext::new(fx.cache())
            .with_backend(Arc::new(ClusterBackend::new(client, &fx.base, None))),
    ));
    let refused = with_cluster.post_json("/search", body);
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert_eq!(refused.json()["kind"], "storage_error");
    assert!(
        !refused.body.contains(&closed.to_string()),
        "{}",
        refused.body
    );
    let without = groundkit_tests::TestServer::start(crate::service::state_with(
        ServiceContext::new(fx.cache()),
    ));
    assert_eq!(without.post_json("/search", body).status, 200);
}

#[test]
fn a_watcher_publishes_each_generation_grown_from_the_one_the_cluster_serves() {
    let cluster = cluster();
    let fx = Fixture::new();
    corpus(&fx);
    let mut watcher = grk(&fx, &cluster, 0)
        .args(["ingest", "--collection", "live", "--backend", "opensearch"])
        .args(["--watch", "--json", "--stop-on-eof"])
        .arg(&fx.base)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the watcher");
    let (send, lines) = std::sync::mpsc::channel::<Value>();
    let stdout = watcher.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = send.send(serde_json::from_str(&line).expect("a JSON line"));
        }
    });
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(120))
            .expect("the watcher reports each ingest")
    };
    let first = next();
    assert_eq!(first["published"]["loaded"], 3, "{first}");
    assert_eq!(first["published"]["grown_from"], Value::Null, "{first}");
    let server = Serve::start(&fx, &cluster, 1);

    fx.write(
        "tea.txt",
        "Oolong tea is steeped at 90 degrees, several times.",
    );
    let second = loop {
        let line = next();
        if line["published"].is_object() {
            break line;
        }
    };
    assert_eq!(second["generation"], 2, "{second}");
    assert_eq!(
        (
            &second["published"]["grown_from"],
            &second["published"]["loaded"],
            &second["published"]["deleted_documents"]
        ),
        (&json!("groundkit-live--g1"), &json!(1), &json!(1)),
        "{second}"
    );
    let body = json!({"collection": "live", "query": "oolong", "top_k": 5}).to_string();
    let found = server.post("/search", &body).json();
    assert_eq!(found["metadata"]["generation"], 2, "{found}");
    assert_eq!(found["results"][0]["document_id"], "tea.txt", "{found}");
    drop(watcher.stdin.take());
    assert!(watcher.wait().expect("the watcher stops").success());
}
