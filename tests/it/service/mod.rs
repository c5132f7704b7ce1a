//! The grounding service (`search`, `fetch_chunk`, `list_collections`, `index_status`) against a
//! real collection ingested in the test.

mod bounds;
mod client_errors;
mod descriptions;
mod exit_codes;
mod memory;
mod rest;
pub(crate) mod transports;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_server::service::{Reranker, ServiceContext};
use groundkit_server::{AppState, Limits};
use groundkit_tests::TestServer;

use crate::retrieval::Fixture;

/// A corpus of three small documents ingested as collection `papers`.
pub(crate) fn corpus() -> Fixture {
    let fx = Fixture::new();
    fx.write(
        "covid.md",
        "# COVID-19 testing\n\nPCR tests detect viral RNA; antigen tests detect viral proteins.\n",
    );
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.\n",
    );
    fx.write(
        "bikes/chain.md",
        "Clean the bicycle chain, then oil each link sparingly.\n",
    );
    fx.ingest_all("papers");
    fx
}

/// The service state for `fx`, optionally with a reranker.
pub(crate) fn state(fx: &Fixture, reranker: Option<Arc<dyn Reranker>>) -> AppState<ServiceContext> {
    let mut context = ServiceContext::new(fx.cache());
    if let Some(reranker) = reranker {
        context = context.with_reranker(reranker);
    }
    state_with(context)
}

/// The service state for a context the test built.
pub(crate) fn state_with(context: ServiceContext) -> AppState<ServiceContext> {
    let registry = Registry::<ServiceContext>::collect().expect("service registry");
    let info = ApiInfo {
        title: "groundkit".into(),
        version: "test".into(),
    };
    AppState::new(registry, context, info, Limits::default())
}

/// A REST server over `fx`.
pub(crate) fn server(fx: &Fixture) -> TestServer {
    TestServer::start(state(fx, None))
}

/// A `grk serve` process on a port of its choosing; killed when dropped.
pub(crate) struct Serve {
    child: Child,
    /// Where it serves REST and MCP.
    pub(crate) addr: SocketAddr,
}

impl Serve {
    /// Runs `command` (a `grk` with its global options) as `serve --port 0`.
    pub(crate) fn start(command: &mut Command) -> Self {
        let mut child = command
            .args(["serve", "--port", "0"])
            .env("GROUNDKIT_LOG", "info")
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn grk serve");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let addr = loop {
            let mut line = String::new();
            assert!(
                stderr.read_line(&mut line).expect("read") > 0,
                "grk serve exited"
            );
            if let Some(rest) = line.split("serving REST on http://").nth(1) {
                break rest
                    .split_whitespace()
                    .next()
                    .expect("address")
                    .parse()
                    .expect("address");
            }
        };
        // Keep reading the log so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in stderr.lines() {});
        Self { child, addr }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `POST path` with a JSON body.
    pub(crate) fn post(&self, path: &str, body: &str) -> groundkit_tests::Response {
        groundkit_tests::send_raw(
            self.addr,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                self.addr,
                body.len()
            ),
        )
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
