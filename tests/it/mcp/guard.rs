//! Serving safety over real loopback HTTP: the Host/Origin matrix on REST and `/mcp`, answered
//! before any body is read, and the bind guard of the real binary.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use groundkit_server::{HostPolicy, Limits, mcp};

use super::support::{
    Server, hello_bin, hello_state, initialize_frame, raw, read_response, request,
};

/// One request of the matrix: REST `GET /languages` or MCP `POST /mcp` (initialize), with
/// exactly `headers` besides the ones the route needs.
fn send(server: &Server, mcp: bool, headers: &[(&str, &str)]) -> (u16, Option<String>) {
    let body = initialize_frame(1, "2025-11-25");
    let response = if mcp {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        request(server.addr, "POST", "/mcp", &all, body.as_bytes())
    } else {
        request(server.addr, "GET", "/languages", headers, b"")
    };
    let kind = (response.status >= 400).then(|| {
        response.json()["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    });
    (response.status, kind)
}

/// A matrix row: name, headers, expected status, expected problem `kind`.
type Case<'a> = (&'a str, Vec<(&'a str, String)>, u16, Option<&'a str>);

#[test]
fn host_and_origin_matrix_on_rest_and_mcp() {
    let server = Server::start(hello_state(Limits::default()));
    let port = server.addr.port();
    let good = format!("127.0.0.1:{port}");
    let localhost = format!("localhost:{port}");
    let v6 = format!("[::1]:{port}");
    let wrong_port = format!("127.0.0.1:{}", port.wrapping_add(1));
    let good_origin = format!("http://localhost:{port}");
    let host = |h: &str| ("Host", h.to_owned());
    let cases: Vec<Case> = vec![
        ("loopback literal with port", vec![host(&good)], 200, None),
        ("localhost with port", vec![host(&localhost)], 200, None),
        ("[::1] with port", vec![host(&v6)], 200, None),
        ("localhost without port", vec![host("localhost")], 200, None),
        (
            "same-origin Origin",
            vec![host(&good), ("Origin", good_origin.clone())],
            200,
            None,
        ),
        (
            "forged Host",
            vec![host("evil.example")],
            403,
            Some("forbidden_host"),
        ),
        (
            "forged Host with port",
            vec![host(&format!("evil.example:{port}"))],
            403,
            Some("forbidden_host"),
        ),
        (
            "rebinding name",
            vec![host(&format!("127.0.0.1.nip.io:{port}"))],
            403,
            Some("forbidden_host"),
        ),
        (
            "wrong port",
            vec![host(&wrong_port)],
            403,
            Some("forbidden_host"),
        ),
        (
            "forged Origin",
            vec![host(&good), ("Origin", "http://evil.example".into())],
            403,
            Some("forbidden_origin"),
        ),
        (
            "null Origin",
            vec![host(&good), ("Origin", "null".into())],
            403,
            Some("forbidden_origin"),
        ),
        (
            "Origin on another port",
            vec![host(&good), ("Origin", "http://localhost:1".into())],
            403,
            Some("forbidden_origin"),
        ),
        (
            "forged Host and Origin",
            vec![
                host("evil.example"),
                ("Origin", "http://evil.example".into()),
            ],
            403,
            Some("forbidden_host"),
        ),
        (
            "X-Forwarded-Host cannot rescue a forged Host",
            vec![
                host("evil.example"),
                ("X-Forwarded-Host", localhost.clone()),
            ],
            403,
            Some("forbidden_host"),
        ),
        (
            "Forwarded cannot rescue a forged Host",
            vec![
                host("evil.example"),
                ("Forwarded", format!("host={localhost}")),
            ],
            403,
            Some("forbidden_host"),
        ),
        (
            "a forwarded header does not spoil a good Host",
            vec![
                host(&good),
                ("X-Forwarded-Host", "evil.example".into()),
                ("Forwarded", "host=evil.example".into()),
            ],
            200,
            None,
        ),
        // RFC 9112 §3.2: no Host, or two, is a 400, whichever Host the request names besides.
        ("missing Host", vec![], 400, Some("invalid_host")),
        (
            "duplicated Host",
            vec![host(&good), host(&good)],
            400,
            Some("invalid_host"),
        ),
        (
            "duplicated Host, one forged",
            vec![host(&good), host("evil.example")],
            400,
            Some("invalid_host"),
        ),
        (
            "a client naming a Host fault itself is not refused for it",
            vec![host(&good), ("Groundkit-Host-Fault", "missing".into())],
            200,
            None,
        ),
    ];
    for mcp in [false, true] {
        for (name, headers, status, kind) in &cases {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let (got, got_kind) = send(&server, mcp, &headers);
            let surface = if mcp { "/mcp" } else { "REST" };
            assert_eq!(got, *status, "{surface}: {name}");
            assert_eq!(got_kind.as_deref(), *kind, "{surface}: {name}");
        }
    }
}

#[test]
fn no_host_or_two_is_a_400_problem_with_its_request_id_in_every_http_version() {
    let server = Server::start(hello_state(Limits::default()));
    let host = format!("Host: 127.0.0.1:{}\r\n", server.addr.port());
    for path in ["/languages", "/mcp", "/no/such/route"] {
        for (name, head) in [
            (
                "HTTP/1.1 without Host",
                format!("GET {path} HTTP/1.1\r\n\r\n"),
            ),
            (
                "HTTP/1.0 without Host",
                format!("GET {path} HTTP/1.0\r\n\r\n"),
            ),
            (
                "HTTP/1.1 with two Hosts",
                format!("GET {path} HTTP/1.1\r\n{host}{host}\r\n"),
            ),
            (
                "HTTP/1.0 with two Hosts",
                format!("GET {path} HTTP/1.0\r\n{host}Host: evil.example\r\n\r\n"),
            ),
        ] {
            let response = raw(server.addr, head.as_bytes());
            assert_eq!(response.status, 400, "{path}: {name}");
            assert_eq!(
                response.header("content-type"),
                Some("application/problem+json"),
                "{path}: {name}"
            );
            let problem = response.json();
            assert_eq!(problem["kind"], "invalid_host", "{path}: {name}");
            assert_eq!(
                problem["detail"], "the request must carry exactly one Host header",
                "{path}: {name}"
            );
            let id = response.header("x-request-id").expect("X-Request-ID");
            assert_eq!(problem["request_id"], id, "{path}: {name}");
        }
    }
}

/// Every response on one connection, read until the server closes it: (status, body) pairs.
fn pipelined(server: &Server, bytes: &[u8]) -> Vec<(u16, String)> {
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream.write_all(bytes).expect("write");
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut all).expect("read");
    let all = String::from_utf8(all).expect("UTF-8 responses");
    let mut responses = Vec::new();
    let mut rest = all.as_str();
    while let Some(head_end) = rest.find("\r\n\r\n") {
        let head = &rest[..head_end];
        let status = head[9..12].parse().expect("status");
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().expect("length"))
            })
            .expect("a Content-Length on every answer");
        let body = &rest[head_end + 4..head_end + 4 + length];
        responses.push((status, body.to_owned()));
        rest = &rest[head_end + 4 + length..];
    }
    assert_eq!(rest, "", "nothing after the last response");
    responses
}

#[test]
fn a_host_fault_refuses_only_its_own_request_on_a_kept_alive_connection() {
    let server = Server::start(hello_state(Limits::default()));
    let host = format!("Host: 127.0.0.1:{}\r\n", server.addr.port());
    let json = "Content-Type: application/json\r\nAccept: application/json\r\n";
    let body = r#"{"text":"one two two"}"#;
    let chunked = format!(
        "{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        10,
        &body[..10],
        body.len() - 10,
        &body[10..]
    );
    // Each refusal is found only by following the bodies before it: the gate in front of the
    // parser must frame a Content-Length body and a chunked one as the parser does.
    let stream = [
        format!(
            "POST /text/stats HTTP/1.1\r\n{host}{json}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        "GET /languages HTTP/1.1\r\n\r\n".to_owned(),
        format!(
            "POST /text/stats HTTP/1.1\r\n{host}{json}Transfer-Encoding: chunked\r\n\r\n{chunked}"
        ),
        format!("GET /languages HTTP/1.1\r\n{host}{host}\r\n"),
        format!("GET /languages HTTP/1.1\r\n{host}Connection: close\r\n\r\n"),
    ]
    .concat();
    let responses = pipelined(&server, stream.as_bytes());
    let statuses: Vec<u16> = responses.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses, [200, 400, 200, 400, 200], "{responses:?}");
    for (_, answer) in [&responses[0], &responses[2]] {
        let stats: serde_json::Value = serde_json::from_str(answer).expect("JSON");
        assert_eq!(stats["characters"], 11, "{stats}");
        assert_eq!(stats["words"], 3, "{stats}");
    }
    for (_, answer) in [&responses[1], &responses[3]] {
        assert!(answer.contains("invalid_host"), "{answer}");
    }
}

#[test]
fn a_forbidden_host_is_refused_before_the_body_is_read() {
    let server = Server::start(hello_state(Limits::default()));
    for (path, extra) in [
        ("/mcp", "Accept: application/json\r\n"),
        ("/text/stats", ""),
    ] {
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        // Declares a large body and never sends it: only a server that answers before reading
        // the body can reply at all.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: evil.example\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\n{extra}Content-Length: 100000\r\n\r\n"
        );
        let started = Instant::now();
        stream.write_all(head.as_bytes()).expect("write");
        let response = read_response(&mut stream);
        assert_eq!(response.status, 403, "{path}");
        assert_eq!(response.json()["kind"], "forbidden_host");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{path}: answered without waiting for the body"
        );
        assert!(response.header("x-request-id").is_some());
    }
}

#[test]
fn a_routable_bind_policy_is_unrestricted_and_the_default_policy_fails_closed() {
    let mut state = hello_state(Limits::default());
    state.hosts = HostPolicy::Unrestricted;
    let open = Server::start(state);
    let (status, _) = send(
        &open,
        true,
        &[("Host", "any.example"), ("Origin", "http://any.example")],
    );
    assert_eq!(status, 200);

    let closed = Server::start(hello_state(Limits::default()));
    assert_eq!(send(&closed, false, &[("Host", "any.example")]).0, 403);
}

#[test]
fn the_binary_refuses_non_loopback_binds_without_allow_remote_access() {
    let hello = hello_bin();
    for host in ["0.0.0.0", "localhost", "::", "192.0.2.10"] {
        let started = Instant::now();
        let output = Command::new(&hello)
            .args(["--host", host, "--port", "0"])
            .stdin(Stdio::null())
            .output()
            .expect("run hello");
        assert!(!output.status.success(), "{host} must be refused");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--allow-remote-access"), "{host}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn mcp_mounted_alone_in_an_app_without_a_guard_checks_host_and_origin_itself() {
    // A library user's own app: `/mcp` and nothing else, no app-wide Host/Origin guard.
    let state = Arc::new(hello_state(Limits::default()));
    let (sent, bound) = mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = actix_web::HttpServer::new(move || {
                actix_web::App::new().configure(|cfg| mcp::http::configure(&state, cfg))
            })
            .workers(1)
            .bind(("127.0.0.1", 0))
            .expect("bind");
            sent.send(server.addrs()[0]).expect("send the address");
            server.run().await
        })
    });
    let addr: SocketAddr = bound.recv_timeout(Duration::from_secs(30)).expect("bound");
    let good = format!("127.0.0.1:{}", addr.port());
    let body = initialize_frame(1, "2025-11-25");
    let post = |headers: &[(&str, &str)]| {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        let response = request(addr, "POST", "/mcp", &all, body.as_bytes());
        let kind = response.json()["kind"].as_str().map(str::to_owned);
        (response.status, kind)
    };
    assert_eq!(
        post(&[("Host", "evil.example")]),
        (403, Some("forbidden_host".to_owned()))
    );
    assert_eq!(
        post(&[("Host", &good), ("Origin", "http://evil.example")]),
        (403, Some("forbidden_origin".to_owned()))
    );
    assert_eq!(post(&[("Host", &good)]).0, 200);
}
