//! The OpenSearch backend against a real three-node cluster on loopback: OpenSearch 3.5 with the
//! netty4 HTTP transport, analysis-common and the k-NN plugin, from Maven Central
//! (`tests/opensearch/setup.sh`, run by `scripts/test.sh`, puts them in `target/opensearch`).
//! The cluster starts once per test process and its nodes stop when the process ends (each node
//! exits when its standard input closes). The tests take turns ([`cluster`] hands out a lock):
//! one of them stops and restarts a node.
//!
//! What this module guards:
//!
//! - Both backends answer alike: `backend.rs` asks `LocalBackend` and `ClusterBackend` the same
//!   questions; `serving::every_tool_answers_from_the_cluster_as_from_the_index_directory_on_all_transports`.
//! - Readers never see a half-published generation, and the next publish cleans up after a dead
//!   one: `serving::a_publish_killed_while_loading_never_moves_the_alias_and_the_next_ingest_cleans_up`,
//!   `backend::an_index_a_dead_publish_left_is_never_served_and_the_next_publish_removes_it`.
//! - A cluster answer names the generation that gave it; what a server remembers only prepares
//!   a query: `serving::two_servers_round_robin_answer_identically_through_an_alias_flip`,
//!   `backend::vectors_a_new_generation_brings_are_searched_at_once_by_a_server_that_saw_the_old_one`,
//!   `backend::a_new_generation_moves_the_alias_at_once_and_an_old_citation_stays_fetchable`.
//! - Nothing of the cluster reaches a caller:
//!   `backend::cluster_failures_are_storage_errors_that_show_nothing_of_the_cluster`; a cluster
//!   behind TLS and a password is reached with the operator's CA and environment: `tls.rs`.

mod backend;
mod serving;
mod tls;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::embed::repo_root;

/// One node process; its standard input is held open for as long as it should run.
struct Node {
    child: Child,
    _stdin: ChildStdin,
}

/// The test cluster.
pub(crate) struct TestCluster {
    nodes: Vec<Option<Node>>,
    /// HTTP ports of the nodes, in node order.
    pub(crate) http: Vec<u16>,
    transport: Vec<u16>,
    home: tempfile::TempDir,
}

const NODES: usize = 3;

fn java() -> PathBuf {
    let home = std::env::var_os("JAVA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64"));
    home.join("bin/java")
}

fn classpath() -> String {
    let dir = repo_root().join("target/opensearch");
    assert!(
        dir.join("classes/groundkit/cluster/Node.class").is_file(),
        "the OpenSearch test cluster is not set up: run tests/opensearch/setup.sh (scripts/test.sh does)"
    );
    format!(
        "{0}/classes:{0}/lib/*:{0}/knn/*",
        dir.to_str().expect("utf-8 path")
    )
}

fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("address").port())
        .collect()
}

/// One HTTP/1.1 request to a node; the status and body (None if the node does not answer).
pub(crate) fn http(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.get(9..12)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}

impl TestCluster {
    fn start() -> Self {
        let home = tempfile::tempdir().expect("cluster home");
        let ports = free_ports(2 * NODES);
        let mut cluster = Self {
            nodes: (0..NODES).map(|_| None).collect(),
            http: ports[..NODES].to_vec(),
            transport: ports[NODES..].to_vec(),
            home,
        };
        for i in 0..NODES {
            cluster.start_node(i);
        }
        cluster.wait_for_nodes(NODES);
        cluster
    }

    fn start_node(&mut self, i: usize) {
        let dir = self.home.path().join(format!("node{i}"));
        std::fs::create_dir_all(&dir).expect("node dir");
        let log = std::fs::File::create(dir.join("out.log")).expect("node log");
        let seeds: Vec<String> = self.transport.iter().map(u16::to_string).collect();
        let managers: Vec<String> = (0..NODES).map(|n| format!("node{n}")).collect();
        let mut child = Command::new(java())
            .args(["-Xms256m", "-Xmx384m", "-XX:+UseSerialGC"])
            .arg("--enable-native-access=ALL-UNNAMED")
            .arg("-cp")
            .arg(classpath())
            .arg("groundkit.cluster.Node")
            .arg(format!("node{i}"))
            .arg(&dir)
            .arg(self.http[i].to_string())
            .arg(self.transport[i].to_string())
            .arg(seeds.join(","))
            .arg(managers.join(","))
            .stdin(Stdio::piped())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start an OpenSearch node (is a JDK 21+ at JAVA_HOME?)");
        let stdin = child.stdin.take().expect("node stdin");
        self.nodes[i] = Some(Node {
            child,
            _stdin: stdin,
        });
    }

    /// Waits until `count` nodes form the cluster and every shard is allocated.
    fn wait_for_nodes(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(240);
        let path =
            format!("/_cluster/health?wait_for_nodes={count}&wait_for_status=green&timeout=20s");
        loop {
            let port = self.http[self.alive().next().expect("a live node")];
            if let Some((200, _)) = http(port, "GET", &path, "") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the OpenSearch cluster did not form; node logs are in {}",
                self.home.path().display()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn alive(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.is_some())
            .map(|(i, _)| i)
    }

    /// Kills node `i` at once (SIGKILL).
    pub(crate) fn kill(&mut self, i: usize) {
        if let Some(mut node) = self.nodes[i].take() {
            node.child.kill().expect("kill node");
            node.child.wait().expect("reap node");
        }
    }

    /// Starts node `i` again on its data and waits for the cluster to be whole and green.
    pub(crate) fn restart(&mut self, i: usize) {
        self.start_node(i);
        self.wait_for_nodes(NODES);
    }

    /// The URL of node `i`.
    pub(crate) fn url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.http[i])
    }
}

/// The test cluster, started on first use, for this test alone until the guard drops.
pub(crate) fn cluster() -> MutexGuard<'static, TestCluster> {
    static CLUSTER: OnceLock<Mutex<TestCluster>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| Mutex::new(TestCluster::start()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
