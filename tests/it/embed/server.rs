//! The real OpenAI-compatible test server (`tests/embed/embed_server.py`, numpy BERT with the
//! all-MiniLM-L6-v2 weights) as a child process that is killed when its guard drops, and a
//! loopback IPv6 relay in front of it (the server listens on IPv4 only).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{embed_python, model_dir, repo_root};

/// A running `embed_server.py` on 127.0.0.1; killed on drop.
pub(crate) struct EmbedServer {
    /// Held for its drop, which stops the server.
    _server: Spawned,
    pub(crate) port: u16,
}

impl EmbedServer {
    /// Starts the server with extra flags (`--fail-first`, `--require-key`, ...) on a free port
    /// and waits for its `listening on http://HOST:PORT` line.
    pub(crate) fn start(flags: &[&str]) -> Self {
        let mut command = Command::new(embed_python());
        command
            .arg(repo_root().join("tests/embed/embed_server.py"))
            .arg("--model-dir")
            .arg(model_dir())
            .args(["--host", "127.0.0.1", "--port", "0"])
            .args(flags);
        let server = spawn_listening(command);
        Self {
            port: server.port,
            _server: server,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The POSTs to `/v1/embeddings` that arrived, and the texts embedded (`GET /stats`).
    pub(crate) fn stats(&self) -> (u64, u64) {
        let stats = get_json(self.port, "/stats");
        let count = |name: &str| stats[name].as_u64().expect("a count");
        (count("requests"), count("inputs"))
    }

    /// The POSTs that arrived.
    pub(crate) fn requests(&self) -> u64 {
        self.stats().0
    }
}

/// `GET PATH` of a test server on 127.0.0.1, its body parsed as JSON.
pub(crate) fn get_json(port: u16, path: &str) -> serde_json::Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let body = answer.split_once("\r\n\r\n").expect("an HTTP answer").1;
    serde_json::from_str(body).expect("json")
}

/// A test server started by [`spawn_listening`]; killed on drop.
pub(crate) struct Spawned {
    child: Child,
    /// Kept open so the server never writes to a closed pipe.
    _stdout: BufReader<ChildStdout>,
    pub(crate) port: u16,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (a test server that prints `listening on http://HOST:PORT` once ready) and
/// waits for that line.
pub(crate) fn spawn_listening(mut command: Command) -> Spawned {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start a test server");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    let read = stdout.read_line(&mut line);
    let port = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.rsplit(':').next())
        .and_then(|port| port.parse().ok());
    let Some(port) = port else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the test server did not start: {read:?} {line:?}");
    };
    Spawned {
        child,
        _stdout: stdout,
        port,
    }
}

/// A relay from `[::1]:PORT` to a server on 127.0.0.1, counting the connections it accepts.
/// Its thread lives as long as the test process.
pub(crate) struct Relay {
    pub(crate) port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Relay {
    /// `None` when this machine cannot listen on `::1`.
    pub(crate) fn to_v4(target: u16) -> Option<Self> {
        let listener = TcpListener::bind("[::1]:0").ok()?;
        let port = listener.local_addr().ok()?.port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                count.fetch_add(1, Ordering::SeqCst);
                if let Ok(server) = TcpStream::connect(("127.0.0.1", target)) {
                    pump(&client, &server);
                    pump(&server, &client);
                }
            }
        });
        Some(Self { port, accepted })
    }

    /// Connections accepted so far.
    pub(crate) fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Copies `from` to `to` on a thread until `from` ends, then ends `to`'s write side.
fn pump(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}
