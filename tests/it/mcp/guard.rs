//! Serving safety over real loopback HTTP: the Host/Origin matrix on REST and `/mcp`, answered
//! before any body is read, and the bind guard of the real binary.

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use groundkit_server::Limits;
use groundkit_server::guard::HostPolicy;

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
    let kind = (response.status == 403).then(|| {
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
        // HTTP/1.1 requires Host: actix's parser refuses the request before routing.
        ("missing Host", vec![], 400, None),
        // Two Host headers are refused by the parser too (and by the guard if one got through).
        ("duplicated Host", vec![host(&good), host(&good)], 400, None),
        (
            "duplicated Host, one forged",
            vec![host(&good), host("evil.example")],
            400,
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
fn an_http_1_0_request_without_host_is_a_403_problem_with_its_request_id() {
    let server = Server::start(hello_state(Limits::default()));
    for path in ["/languages", "/mcp"] {
        let response = raw(
            server.addr,
            format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes(),
        );
        assert_eq!(response.status, 403, "{path}");
        assert_eq!(
            response.header("content-type"),
            Some("application/problem+json"),
            "{path}"
        );
        let problem = response.json();
        assert_eq!(problem["kind"], "forbidden_host", "{path}");
        let id = response.header("x-request-id").expect("X-Request-ID");
        assert_eq!(problem["request_id"], id, "{path}");
    }
}

/// The documented gap (docs/limits.md): actix-http's request parser answers these before the
/// application sees them, so they carry no problem body and no request id.
#[test]
fn http_1_1_without_host_and_any_request_with_two_hosts_get_the_parsers_empty_400() {
    let server = Server::start(hello_state(Limits::default()));
    let host = format!("Host: 127.0.0.1:{}\r\n", server.addr.port());
    for path in ["/languages", "/mcp"] {
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
                format!("GET {path} HTTP/1.0\r\n{host}{host}\r\n"),
            ),
        ] {
            let response = raw(server.addr, head.as_bytes());
            assert_eq!(response.status, 400, "{path}: {name}");
            assert_eq!(response.body, "", "{path}: {name}");
            assert_eq!(response.header("content-type"), None, "{path}: {name}");
            assert_eq!(response.header("x-request-id"), None, "{path}: {name}");
            assert_eq!(
                response.header("connection"),
                Some("close"),
                "{path}: {name}"
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
