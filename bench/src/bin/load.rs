//! Load generator for a running `grk serve`: requests/second, p50/p99 latency, and the server's
//! CPU time per request and peak resident size, whole and anonymous (read from `/proc/<pid>`;
//! the anonymous part leaves out mapped index files), over REST or MCP
//! Streamable HTTP, at a given concurrency.
//!
//! ```text
//! cargo run --release -p groundkit-bench --bin load -- \
//!     --addr 127.0.0.1:8080 --pid $(pgrep -f 'grk serve') --collection scifact \
//!     --queries ../shared/data/scifact/queries.jsonl --transport rest --op search \
//!     --concurrency 32 --seconds 10
//! ```
//!
//! `--mode lexical|dense|hybrid` and `--rerank` shape the searches; `--op status` asks for the
//! collection's `index_status` and `--op greet` calls the hello example's trivial tool instead
//! (neither needs `--queries`). `bench/load.sh` runs the
//! whole matrix on SciFact, `bench/rerank_latency.sh` the reranked searches. Each client thread
//! keeps one HTTP/1.1 connection alive and sends its next request as soon as the previous answer
//! is read.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Rest,
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Search,
    Fetch,
    /// The hello example's trivial `greet` tool (`GET /greetings/en/Ada` over REST).
    Greet,
    /// `index_status` of the collection.
    Status,
}

struct Config {
    addr: String,
    pid: Option<u32>,
    collection: String,
    queries: Vec<String>,
    transport: Transport,
    op: Op,
    concurrency: usize,
    seconds: f64,
    top_k: u32,
    mode: String,
    rerank: bool,
}

fn main() {
    let config = match parse_args() {
        Ok(config) => config,
        Err(message) => {
            eprintln!("load: {message}");
            std::process::exit(2);
        }
    };
    if let Err(message) = run(&config) {
        eprintln!("load: {message}");
        std::process::exit(1);
    }
}

fn parse_args() -> Result<Config, String> {
    let mut args = std::env::args().skip(1);
    let mut config = Config {
        addr: "127.0.0.1:8080".into(),
        pid: None,
        collection: "scifact".into(),
        queries: Vec::new(),
        transport: Transport::Rest,
        op: Op::Search,
        concurrency: 1,
        seconds: 10.0,
        top_k: 10,
        mode: "lexical".into(),
        rerank: false,
    };
    let mut queries_path = None;
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--addr" => config.addr = value()?,
            "--pid" => config.pid = Some(value()?.parse().map_err(|_| "--pid is a number")?),
            "--collection" => config.collection = value()?,
            "--queries" => queries_path = Some(value()?),
            "--transport" => {
                config.transport = match value()?.as_str() {
                    "rest" => Transport::Rest,
                    "mcp" => Transport::Mcp,
                    other => return Err(format!("unknown transport {other}")),
                }
            }
            "--op" => {
                config.op = match value()?.as_str() {
                    "search" => Op::Search,
                    "fetch" => Op::Fetch,
                    "greet" => Op::Greet,
                    "status" => Op::Status,
                    other => return Err(format!("unknown op {other}")),
                }
            }
            "--concurrency" => {
                config.concurrency = value()?.parse().map_err(|_| "--concurrency is a number")?
            }
            "--seconds" => {
                config.seconds = value()?.parse().map_err(|_| "--seconds is a number")?
            }
            "--top-k" => config.top_k = value()?.parse().map_err(|_| "--top-k is a number")?,
            "--mode" => config.mode = value()?,
            "--rerank" => config.rerank = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if matches!(config.op, Op::Greet | Op::Status) {
        return Ok(config);
    }
    let path = queries_path.ok_or("--queries (BEIR queries.jsonl) is required")?;
    let text =
        std::fs::read_to_string(&path).map_err(|err| format!("cannot read {path}: {err}"))?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let query: Value =
            serde_json::from_str(line).map_err(|err| format!("bad query line: {err}"))?;
        if let Some(text) = query["text"].as_str() {
            config.queries.push(text.to_owned());
        }
    }
    if config.queries.is_empty() {
        return Err("no queries".into());
    }
    Ok(config)
}

/// Status, lower-cased headers and body of one HTTP response.
type HttpReply = (u16, Vec<(String, String)>, String);

/// One keep-alive HTTP/1.1 connection speaking either surface.
struct Client {
    stream: BufReader<TcpStream>,
    addr: String,
    transport: Transport,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    fn connect(addr: &str, transport: Transport) -> Result<Self, String> {
        let stream = TcpStream::connect(addr).map_err(|err| format!("connect {addr}: {err}"))?;
        stream.set_nodelay(true).map_err(|err| err.to_string())?;
        let mut client = Client {
            stream: BufReader::new(stream),
            addr: addr.to_owned(),
            transport,
            session: None,
            next_id: 1,
        };
        if transport == Transport::Mcp {
            client.initialize()?;
        }
        Ok(client)
    }

    fn initialize(&mut self) -> Result<(), String> {
        let (status, headers, body) = self.mcp_post(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "groundkit-load", "version": "1"},
            },
        }))?;
        if status != 200 {
            return Err(format!("initialize answered {status}: {body}"));
        }
        self.session = headers
            .iter()
            .find(|(name, _)| name == "mcp-session-id")
            .map(|(_, value)| value.clone());
        let (status, _, _) =
            self.mcp_post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        if status != 202 {
            return Err(format!("notifications/initialized answered {status}"));
        }
        Ok(())
    }

    /// End the MCP session, as a well-behaved client does (the server caps live sessions).
    fn close(&mut self) -> Result<(), String> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let headers = [("Mcp-Session-Id", session)];
        let (status, _, body) = self.request("DELETE", "/mcp", &headers, None)?;
        match status {
            200..=299 => Ok(()),
            _ => Err(format!("DELETE /mcp answered {status}: {body}")),
        }
    }

    /// Call `tool` with `arguments` and parse its JSON result (REST body or MCP
    /// `structuredContent`). For preparing a run; the measured loop uses [`Client::call`].
    fn call_json(
        &mut self,
        tool: &str,
        rest_method: &str,
        rest_path: &str,
        arguments: Value,
    ) -> Result<Value, String> {
        let body = self.call(tool, rest_method, rest_path, arguments)?;
        let message: Value =
            serde_json::from_str(&body).map_err(|err| format!("bad JSON: {err}"))?;
        Ok(match self.transport {
            Transport::Rest => message,
            Transport::Mcp => message["result"]["structuredContent"].clone(),
        })
    }

    /// Call `tool` with `arguments`; returns the raw response body once it is known to be a
    /// success. The check reads the status and, for MCP, the `isError` flag without parsing the
    /// body, so the load generator spends its CPU sending requests rather than decoding answers.
    fn call(
        &mut self,
        tool: &str,
        rest_method: &str,
        rest_path: &str,
        arguments: Value,
    ) -> Result<String, String> {
        match self.transport {
            Transport::Rest => {
                let body = if rest_method == "POST" {
                    Some(arguments.to_string())
                } else {
                    None
                };
                let (status, _, body) =
                    self.request(rest_method, rest_path, &[], body.as_deref())?;
                if status != 200 {
                    return Err(format!(
                        "{rest_method} {rest_path} answered {status}: {body}"
                    ));
                }
                Ok(body)
            }
            Transport::Mcp => {
                let id = self.next_id;
                self.next_id += 1;
                let (status, _, body) = self.mcp_post(json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments},
                }))?;
                if status != 200 {
                    return Err(format!("tools/call answered {status}: {body}"));
                }
                // Inside the text block and in any string value quotes are escaped, so this
                // literal can only be the result's own flag.
                if !body.contains(r#""result":"#) || body.contains(r#""isError":true"#) {
                    return Err(format!("tools/call failed: {body}"));
                }
                Ok(body)
            }
        }
    }

    fn mcp_post(&mut self, message: Value) -> Result<HttpReply, String> {
        let mut headers = vec![
            ("Accept", "application/json, text/event-stream".to_owned()),
            ("MCP-Protocol-Version", "2025-11-25".to_owned()),
        ];
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session.clone()));
        }
        let (status, headers, body) =
            self.request("POST", "/mcp", &headers, Some(&message.to_string()))?;
        let is_sse = headers
            .iter()
            .any(|(n, v)| n == "content-type" && v.starts_with("text/event-stream"));
        let body = if is_sse { last_sse_data(&body) } else { body };
        Ok((status, headers, body))
    }

    fn request(
        &mut self,
        method: &str,
        path: &str,
        extra: &[(&str, String)],
        body: Option<&str>,
    ) -> Result<HttpReply, String> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for (name, value) in extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        // The whole request in one write, as hyper's vectored writes send it: written in two,
        // head then body, a request may reach the server in two reads, and the server's cost
        // would then depend on the client's write pattern.
        head.push_str(body.unwrap_or_default());
        self.stream
            .get_mut()
            .write_all(head.as_bytes())
            .map_err(|err| err.to_string())?;
        read_response(&mut self.stream)
    }
}

fn read_response(reader: &mut BufReader<TcpStream>) -> Result<HttpReply, String> {
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|err| err.to_string())?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {line:?}"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).map_err(|err| err.to_string())?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let mut body = Vec::new();
    if let Some(length) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(length, 0);
        reader
            .read_exact(&mut body)
            .map_err(|err| err.to_string())?;
    } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line).map_err(|err| err.to_string())?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| format!("bad chunk size {line:?}"))?;
            let mut chunk = vec![0; size + 2];
            reader
                .read_exact(&mut chunk)
                .map_err(|err| err.to_string())?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Ok((status, headers, String::from_utf8_lossy(&body).into_owned()))
}

fn last_sse_data(body: &str) -> String {
    body.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| !d.is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// Server process counters from `/proc`: CPU seconds (user + system) and resident KiB.
fn proc_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Resident KiB: all of it (`VmRSS:`), or only the anonymous part (`RssAnon:`: heap and stacks,
/// without the mapped index files, which the kernel can drop and read again).
fn proc_rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

fn run(config: &Config) -> Result<(), String> {
    let (tool, method) = match config.op {
        Op::Search => ("search", "POST"),
        Op::Fetch => ("fetch_chunk", "GET"),
        Op::Greet => ("greet", "GET"),
        Op::Status => ("index_status", "GET"),
    };
    // Fetches need real chunk ids: take them from a first pass of searches.
    let chunk_ids: Arc<Vec<String>> = Arc::new(if config.op == Op::Fetch {
        let mut client = Client::connect(&config.addr, Transport::Rest)?;
        let mut ids = Vec::new();
        for query in config.queries.iter().take(100) {
            let response = client.call_json(
                "search",
                "POST",
                "/search",
                json!({"collection": config.collection, "query": query, "top_k": 5}),
            )?;
            ids.extend(
                response["results"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["chunk_id"].as_str().map(str::to_owned)),
            );
        }
        ids
    } else {
        Vec::new()
    });
    let queries = Arc::new(config.queries.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let cpu_before = config.pid.and_then(proc_cpu_seconds);
    let started = Instant::now();
    let mut workers = Vec::new();
    for worker in 0..config.concurrency {
        let (queries, chunk_ids, stop) = (
            Arc::clone(&queries),
            Arc::clone(&chunk_ids),
            Arc::clone(&stop),
        );
        let (addr, collection, transport, op, top_k, mode, rerank) = (
            config.addr.clone(),
            config.collection.clone(),
            config.transport,
            config.op,
            config.top_k,
            config.mode.clone(),
            config.rerank,
        );
        workers.push(std::thread::spawn(
            move || -> Result<Vec<Duration>, String> {
                let mut client = Client::connect(&addr, transport)?;
                let mut latencies = Vec::new();
                let mut i = worker;
                while !stop.load(Ordering::Relaxed) {
                    let begin = Instant::now();
                    match op {
                        Op::Search => {
                            let query = &queries[i % queries.len()];
                            client.call(
                                tool,
                                method,
                                "/search",
                                json!({"collection": collection, "query": query, "top_k": top_k, "mode": mode, "rerank": rerank}),
                            )?;
                        }
                        Op::Fetch => {
                            let chunk = &chunk_ids[i % chunk_ids.len()];
                            let path = format!("/collections/{collection}/chunks/{chunk}");
                            client.call(
                                tool,
                                method,
                                &path,
                                json!({"collection": collection, "chunk_id": chunk}),
                            )?;
                        }
                        Op::Greet => {
                            client.call(
                                tool,
                                method,
                                "/greetings/en/Ada",
                                json!({"language": "en", "name": "Ada"}),
                            )?;
                        }
                        Op::Status => {
                            let path = format!("/collections/{collection}/status");
                            client.call(tool, method, &path, json!({"collection": collection}))?;
                        }
                    }
                    latencies.push(begin.elapsed());
                    i += 1;
                }
                client.close()?;
                Ok(latencies)
            },
        ));
    }
    let rss = |field| {
        config
            .pid
            .and_then(|pid| proc_rss_kib(pid, field))
            .unwrap_or(0)
    };
    let (mut peak_rss, mut peak_anon) = (rss("VmRSS:"), rss("RssAnon:"));
    while started.elapsed().as_secs_f64() < config.seconds {
        std::thread::sleep(Duration::from_millis(100));
        peak_rss = peak_rss.max(rss("VmRSS:"));
        peak_anon = peak_anon.max(rss("RssAnon:"));
    }
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    for worker in workers {
        latencies.extend(worker.join().map_err(|_| "a client thread panicked")??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = match (cpu_before, config.pid.and_then(proc_cpu_seconds)) {
        (Some(before), Some(after)) => Some(after - before),
        _ => None,
    };
    latencies.sort();
    let pct = |p: f64| {
        latencies[((latencies.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
    };
    let requests = latencies.len();
    if requests == 0 {
        return Err("no request completed".into());
    }
    let report = json!({
        "transport": format!("{:?}", config.transport).to_lowercase(),
        "op": tool,
        "concurrency": config.concurrency,
        "requests": requests,
        "requests_per_second": requests as f64 / elapsed,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "server_cpu_us_per_request": cpu.map(|c| c * 1e6 / requests as f64),
        "server_peak_rss_mib": config.pid.map(|_| peak_rss as f64 / 1024.0),
        "server_peak_rss_anon_mib": config.pid.map(|_| peak_anon as f64 / 1024.0),
    });
    println!("{report}");
    Ok(())
}
