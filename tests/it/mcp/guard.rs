//! Serving safety over real loopback HTTP: the Host/Origin matrix on REST and `/mcp`, answered
//! before any body is read (and before an interim `100 Continue`), and the bind guard of the
//! real binaries.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use groundkit_server::{HostPolicy, Limits, mcp};
use groundkit_tests::ServerProcess;

use super::support::{
    Server, hello_bin, hello_state, initialize_frame, raw, read_response, request, short_limits,
    until_closed,
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
    // The parser's own refusals have no body, so no kind.
    let kind = serde_json::from_str::<serde_json::Value>(&response.body)
        .ok()
        .filter(|_| response.status >= 400)
        .map(|problem| problem["kind"].as_str().unwrap_or_default().to_owned());
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
        // An Origin is a scheme, a host and a port: the server's is http, on its own port (a
        // browser leaves out port 80 for http).
        (
            "https Origin on the server's port",
            vec![host(&good), ("Origin", format!("https://localhost:{port}"))],
            403,
            Some("forbidden_origin"),
        ),
        (
            "Origin without the server's port",
            vec![host(&good), ("Origin", "http://localhost".into())],
            403,
            Some("forbidden_origin"),
        ),
        (
            "Origin naming the bound address",
            vec![host(&good), ("Origin", format!("http://127.0.0.1:{port}"))],
            200,
            None,
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
        // RFC 9112 §3.2: no Host, or two, is a 400, whichever Host the request names besides;
        // actix-http's parser answers it, with no body.
        ("missing Host", vec![], 400, None),
        ("duplicated Host", vec![host(&good), host(&good)], 400, None),
        (
            "duplicated Host, one forged",
            vec![host(&good), host("evil.example")],
            400,
            None,
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
fn no_host_in_http_1_1_or_two_in_any_version_is_the_parsers_bare_400_and_the_connection_closes() {
    let server = Server::start(hello_state(short_limits()));
    let host = format!("Host: 127.0.0.1:{}\r\n", server.addr.port());
    let good = format!("GET /languages HTTP/1.1\r\n{host}\r\n");
    for path in ["/languages", "/mcp", "/no/such/route"] {
        for (name, head) in [
            (
                "HTTP/1.1 without Host",
                format!("GET {path} HTTP/1.1\r\n\r\n"),
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
            // A good request follows on the same connection, and is never answered.
            let responses = until_closed(server.addr, format!("{head}{good}").as_bytes());
            assert_eq!(
                responses,
                [(400, String::new())],
                "{path}: {name}: one empty 400, then the connection closes"
            );
        }
        // HTTP/1.0 does not require a Host, so the parser passes one without; the Host guard
        // refuses it, as a problem with its request id.
        let response = raw(
            server.addr,
            format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes(),
        );
        assert_eq!(response.status, 400, "{path}");
        assert_eq!(
            response.header("content-type"),
            Some("application/problem+json"),
            "{path}"
        );
        let problem = response.json();
        assert_eq!(problem["kind"], "invalid_host", "{path}");
        let id = response.header("x-request-id").expect("X-Request-ID");
        assert_eq!(problem["request_id"], id, "{path}");
    }
}

#[test]
fn an_absolute_form_target_names_the_host_and_is_checked_like_one() {
    // RFC 9112 §3.2.2: a request target in absolute form carries the request's host, whatever
    // the Host header says.
    let server = Server::start(hello_state(Limits::default()));
    let port = server.addr.port();
    let good = format!("127.0.0.1:{port}");
    let body = initialize_frame(1, "2025-11-25");
    for (authority, status, kind) in [
        ("evil.example".to_owned(), 403, Some("forbidden_host")),
        (format!("evil.example:{port}"), 403, Some("forbidden_host")),
        (
            format!("127.0.0.1.nip.io:{port}"),
            403,
            Some("forbidden_host"),
        ),
        (
            format!("localhost:{}", port.wrapping_add(1)),
            403,
            Some("forbidden_host"),
        ),
        (format!("localhost:{port}"), 200, None),
        (good.clone(), 200, None),
    ] {
        let rest = request(
            server.addr,
            "GET",
            &format!("http://{authority}/languages"),
            &[("Host", &good)],
            b"",
        );
        let mcp = request(
            server.addr,
            "POST",
            &format!("http://{authority}/mcp"),
            &[
                ("Host", &good),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            body.as_bytes(),
        );
        for (surface, response) in [("REST", rest), ("/mcp", mcp)] {
            assert_eq!(response.status, status, "{surface}: {authority}");
            let got = (status >= 400).then(|| response.json()["kind"].clone());
            assert_eq!(
                got,
                kind.map(serde_json::Value::from),
                "{surface}: {authority}"
            );
        }
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

#[test]
fn every_spelling_of_the_wildcard_must_name_its_hosts_and_then_answers_only_those() {
    // `0`, `0.0` and `0x0` are what the resolver reads as 0.0.0.0: the bind is a wildcard
    // whatever the spelling.
    let spellings = ["0", "0.0", "0x0", "0.0.0.0", "::", "[::]", "::ffff:0.0.0.0"];
    let index = tempfile::tempdir().expect("index dir");
    let grk = |host: &str, extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grk-it"));
        command.arg("--index-dir").arg(index.path()).args([
            "serve",
            "--host",
            host,
            "--port",
            "0",
            "--allow-remote-access",
        ]);
        ServerProcess::spawn(command.args(extra))
    };
    for host in spellings {
        match grk(host, &[]) {
            Ok(server) => {
                let foreign = raw(
                    server.loopback(),
                    b"GET /collections HTTP/1.1\r\nHost: evil.example\r\n\r\n",
                );
                panic!(
                    "{host}: served at {} with no Host named; a foreign Host got {}",
                    server.addr, foreign.status
                );
            }
            Err((status, log)) => {
                assert_eq!(status.code(), Some(2), "{host}: {log}");
                assert!(log.contains("--allowed-host"), "{host}: {log}");
            }
        }
    }
    for host in spellings {
        let server = grk(host, &["--allowed-host", "corpus.lan"])
            .unwrap_or_else(|(status, log)| panic!("{host}: exited {status}: {log}"));
        let port = server.addr.port();
        let get = |host_header: &str| {
            let head = format!("GET /collections HTTP/1.1\r\nHost: {host_header}\r\n\r\n");
            raw(server.loopback(), head.as_bytes())
        };
        let foreign = get(&format!("evil.example:{port}"));
        assert_eq!(foreign.status, 403, "{host}: {}", foreign.body);
        assert_eq!(foreign.json()["kind"], "forbidden_host", "{host}");
        for allowed in [format!("corpus.lan:{port}"), format!("127.0.0.1:{port}")] {
            assert_eq!(get(&allowed).status, 200, "{host}: {allowed}");
        }
    }
}

#[test]
fn a_request_expecting_100_continue_gets_it_only_when_its_host_and_origin_are_allowed() {
    let server = Server::start(hello_state(Limits::default()));
    let good = format!("127.0.0.1:{}", server.addr.port());
    let initialize = initialize_frame(1, "2025-11-25");
    let routes = [
        (
            "/mcp",
            "Accept: application/json, text/event-stream\r\n",
            initialize.as_str(),
        ),
        ("/text/stats", "", r#"{"text": "one two two"}"#),
    ];
    for (path, extra, body) in routes {
        let head = |host: &str, origin: &str| {
            format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\n{extra}Expect: 100-continue\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
        };
        let connect = || {
            let stream = TcpStream::connect(server.addr).expect("connect");
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            stream
        };
        for (name, head, kind) in [
            ("foreign Host", head("evil.example", ""), "forbidden_host"),
            (
                "foreign Origin",
                head(&good, "Origin: http://evil.example\r\n"),
                "forbidden_origin",
            ),
        ] {
            // The body is never sent: the refusal is the first and only answer.
            let mut stream = connect();
            stream.write_all(head.as_bytes()).expect("write the head");
            let response = read_response(&mut stream);
            assert_eq!(response.status, 403, "{path}: {name}: {}", response.body);
            assert_eq!(response.json()["kind"], kind, "{path}: {name}");
            assert!(response.header("x-request-id").is_some(), "{path}: {name}");
        }
        let mut stream = connect();
        stream
            .write_all(head(&good, "").as_bytes())
            .expect("write the head");
        let mut interim = Vec::new();
        let mut byte = [0u8; 1];
        while !interim.ends_with(b"\r\n\r\n") {
            let read =
                std::io::Read::read(&mut stream, &mut byte).expect("read the interim answer");
            assert_eq!(read, 1, "{path}: closed after {interim:?}");
            interim.push(byte[0]);
        }
        assert_eq!(
            String::from_utf8_lossy(&interim),
            "HTTP/1.1 100 Continue\r\n\r\n",
            "{path}"
        );
        stream.write_all(body.as_bytes()).expect("write the body");
        let response = read_response(&mut stream);
        assert_eq!(response.status, 200, "{path}: {}", response.body);
    }
}
