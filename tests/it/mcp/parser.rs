//! Requests reach actix-http's parser as the client sent them: where each request starts and
//! ends is decided by that one parser, so bytes inside a body or a trailer section are never
//! served as a request of their own, and no header a client sends can stand for a verdict of
//! the server's.

use groundkit_server::Limits;

use super::support::{Server, hello_state, short_limits, until_closed};

/// A chunked `POST /text/stats` whose last chunk is followed by a bare LF, then `hidden`, then
/// `GET /languages` with a good Host.
fn behind_a_chunked_body(host: &str, hidden: &str) -> String {
    let body = r#"{"text":"one two two"}"#;
    format!(
        "POST /text/stats HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\n{hidden}\
         GET /languages HTTP/1.1\r\nHost: {host}\r\n\r\n",
        body.len()
    )
}

fn statuses(responses: &[(u16, String)]) -> Vec<u16> {
    responses.iter().map(|(status, _)| *status).collect()
}

#[test]
fn what_follows_a_chunked_body_is_framed_by_the_parser_alone() {
    let server = Server::start(hello_state(short_limits()));
    let host = server.host();
    // Lines after the last chunk belong to its trailer section until an empty CRLF line, so a
    // head written with bare LFs there is no request, with a Host or without one, and the good
    // request after it closes the trailer section instead of being served.
    for hidden in [
        "GET /openapi.json HTTP/1.1\nX-A: 1\n\n".to_owned(),
        format!("GET /openapi.json HTTP/1.1\nHost: {host}\n\n"),
    ] {
        let responses = until_closed(
            server.addr,
            behind_a_chunked_body(&host, &hidden).as_bytes(),
        );
        assert_eq!(statuses(&responses), [200], "{hidden:?}: {responses:?}");
        assert!(responses[0].1.contains("\"words\":3"), "{responses:?}");
    }
    // A Content-Length among those lines declares no body: the trailer section ends at the
    // first empty line, and the Host-less head after it is the next request, which the parser
    // refuses (an empty 400) before closing the connection.
    let inner = "\r\n\r\nGET /languages HTTP/1.1\r\n\r\n";
    let hidden = format!(
        "GET /openapi.json HTTP/1.1\nHost: {host}\nContent-Length: {}\n\n{inner}",
        inner.len()
    );
    let responses = until_closed(
        server.addr,
        behind_a_chunked_body(&host, &hidden).as_bytes(),
    );
    assert_eq!(statuses(&responses), [200, 400], "{responses:?}");
    assert_eq!(responses[1].1, "", "the parser's own refusal");
}

#[test]
fn a_client_sent_host_fault_header_changes_nothing_wherever_it_is() {
    let server = Server::start(hello_state(short_limits()));
    let host = server.host();
    let forged = "groundkit-host-fault: missing";
    // Plainly in a head.
    let plain = until_closed(
        server.addr,
        format!("GET /languages HTTP/1.1\r\nHost: {host}\r\n{forged}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(statuses(&plain), [200], "{plain:?}");
    // In a head behind a chunked body.
    let hidden = until_closed(
        server.addr,
        behind_a_chunked_body(
            &host,
            &format!("GET /languages HTTP/1.1\nHost: {host}\n{forged}\n\n"),
        )
        .as_bytes(),
    );
    assert_eq!(statuses(&hidden), [200], "{hidden:?}");
    // In the request after a trailer section that declares a body.
    let inner = format!("\r\n\r\nGET /languages HTTP/1.1\r\nHost: {host}\r\n{forged}\r\n\r\n");
    let declared = until_closed(
        server.addr,
        behind_a_chunked_body(
            &host,
            &format!(
                "GET /openapi.json HTTP/1.1\nHost: {host}\nContent-Length: {}\n\n{inner}",
                inner.len()
            ),
        )
        .as_bytes(),
    );
    assert_eq!(statuses(&declared), [200, 200, 200], "{declared:?}");
    // After a request naming an upgrade the server does not offer (and the parser does not
    // act on: it knows only `websocket`).
    let upgraded = until_closed(
        server.addr,
        format!(
            "GET /languages HTTP/1.1\r\nHost: {host}\r\nUpgrade: h2c\r\n\r\n\
             GET /languages HTTP/1.1\r\nHost: {host}\r\n{forged}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(statuses(&upgraded), [200, 200], "{upgraded:?}");
}

#[test]
fn a_host_less_head_within_the_parsers_limits_is_a_400_never_a_431() {
    let server = Server::start(hello_state(Limits::default()));
    // 96 headers is the parser's limit; 95 and 96 without a Host are refused for the Host.
    for count in [95, 96] {
        let headers: String = (0..count).map(|i| format!("X-H{i}: v\r\n")).collect();
        let head = format!("GET /languages HTTP/1.1\r\n{headers}\r\n");
        let responses = until_closed(server.addr, head.as_bytes());
        assert_eq!(statuses(&responses), [400], "{count} headers");
    }
    // 128 KiB is the parser's buffer; a head just under it without a Host likewise.
    let mut head = "GET /languages HTTP/1.1\r\nX-Pad: ".to_owned();
    head.push_str(&"p".repeat(131_050 - head.len() - 4));
    head.push_str("\r\n\r\n");
    assert_eq!(head.len(), 131_050);
    let responses = until_closed(server.addr, head.as_bytes());
    assert_eq!(
        statuses(&responses),
        [400],
        "a head of {} bytes",
        head.len()
    );
}

/// The parser reads a request target of up to 65,534 bytes (the route is then looked up: no
/// such route is a 404 problem) and refuses a longer one with its own empty 400, well below the
/// 128 KiB head limit.
#[test]
fn a_target_of_65534_bytes_is_read_and_a_longer_one_is_the_parsers_bare_400() {
    let server = Server::start(hello_state(Limits::default()));
    let host = server.host();
    for (len, status, problem) in [(65_534, 404, true), (65_535, 400, false)] {
        let target = format!("/{}", "a".repeat(len - 1));
        let head = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        let responses = until_closed(server.addr, head.as_bytes());
        assert_eq!(statuses(&responses), [status], "a target of {len} bytes");
        assert_eq!(
            responses[0].1.contains("route_not_found"),
            problem,
            "a target of {len} bytes: {responses:?}"
        );
    }
}
