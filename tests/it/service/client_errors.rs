//! A malformed request is the client's mistake: `grk serve` answers it 400 and does not log it
//! at ERROR (it is re-logged at DEBUG), so an operator's error log holds only the server's.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use groundkit_tests::send_raw;

use crate::retrieval::Fixture;

const GRK: &str = env!("CARGO_BIN_EXE_grk-it");

#[test]
fn unparseable_requests_get_400_and_no_error_log_line() {
    let fx = Fixture::new();
    let mut child = Command::new(GRK)
        .arg("--index-dir")
        .arg(&fx.index)
        .args(["serve", "--port", "0"])
        .env_remove("GROUNDKIT_LOG")
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn grk serve");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut log = String::new();
    let addr = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).expect("read") > 0, "{log}");
        log.push_str(&line);
        if let Some(rest) = line.split("serving REST on http://").nth(1) {
            break rest.split_whitespace().next().expect("address").to_owned();
        }
    };
    let addr: std::net::SocketAddr = addr.parse().expect("a socket address");
    for raw in [
        "GARBAGE\r\n\r\n",
        "GET /collections HTTP/1.1\r\nConnection: close\r\n\r\n",
        &format!("GET /collections HTTP/1.1\r\nHost: {addr}\r\nHost: {addr}\r\n\r\n"),
    ] {
        assert_eq!(send_raw(addr, raw).status, 400, "{raw:?}");
    }
    // A request that parses, after the bad ones: its access line proves the log was flushed
    // past them.
    let ok = format!("GET /collections HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    assert_eq!(send_raw(addr, &ok).status, 200);
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).expect("read") == 0 {
            break;
        }
        log.push_str(&line);
        if line.contains("groundkit::access") && line.contains("status=200") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(log.contains("status=200"), "{log}");
    assert!(!log.contains(" ERROR "), "{log}");
}
