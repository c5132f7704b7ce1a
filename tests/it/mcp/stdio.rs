//! MCP over stdio: the real `hello` binary (stdout carries frames and nothing else, exit 0 at
//! end of input), and concurrency on the in-process transport.

use std::io::{Read, Write};
use std::process::{Command, Stdio as Pipe};
use std::time::{Duration, Instant};

use groundkit_server::Limits;
use serde_json::Value;

use super::support::{Stdio, hello_bin, initialize_frame, test_state};

#[test]
fn stdout_carries_only_json_rpc_frames_across_real_tool_calls_and_eof_exits_0() {
    let requests = [
        initialize_frame(1, "2025-11-25"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"language":"de","name":"Jo"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_languages","arguments":{}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"a b a"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"greet","arguments":{"language":"??","name":""}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"missing"}}"#.to_owned(),
        "{broken".to_owned(),
    ];
    let mut child = Command::new(hello_bin())
        .arg("--stdio")
        .env("GROUNDKIT_LOG", "trace")
        .stdin(Pipe::piped())
        .stdout(Pipe::piped())
        .stderr(Pipe::piped())
        .spawn()
        .expect("spawn hello --stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    for line in &requests {
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
    }
    let started = Instant::now();
    drop(stdin);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let status = child.wait().expect("wait");
    assert!(status.success(), "exit status {status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "prompt exit at end of input"
    );
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    assert!(
        stderr.contains("groundkit::access"),
        "logs went to stderr: {stderr}"
    );

    let frames: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"))
        })
        .collect();
    assert!(stdout.ends_with('\n'));
    for frame in &frames {
        assert_eq!(frame["jsonrpc"], "2.0", "{frame}");
        assert!(
            frame.get("result").is_some() != frame.get("error").is_some(),
            "{frame}"
        );
    }
    let mut ids: Vec<String> = frames.iter().map(|f| f["id"].to_string()).collect();
    ids.sort();
    assert_eq!(
        ids,
        ["1", "2", "3", "4", "5", "6", "7", "null"],
        "one answer per request, none for the notification"
    );
}

#[tokio::test]
async fn concurrent_requests_may_be_answered_out_of_order() {
    let (state, ctx) = test_state(Limits::default());
    let mut stdio = Stdio::start(state);
    stdio
        .send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":0}}}"#)
        .await;
    stdio
        .send(r#"{"jsonrpc":"2.0","id":"fast","method":"ping"}"#)
        .await;
    assert_eq!(stdio.recv().await["id"], "fast");
    ctx.gate.add_permits(1);
    assert_eq!(stdio.recv().await["id"], "slow");
}

#[tokio::test]
async fn end_of_input_answers_what_is_in_flight_then_returns() {
    let (state, ctx) = test_state(Limits::default());
    let mut stdio = Stdio::start(state);
    stdio
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gated","arguments":{"sleep_ms":0}}}"#)
        .await;
    stdio.close();
    tokio::time::sleep(Duration::from_millis(100)).await;
    ctx.gate.add_permits(1);
    assert_eq!(stdio.recv().await["id"], 1);
    let done = tokio::time::timeout(Duration::from_secs(5), &mut stdio.done)
        .await
        .expect("returns at end of input");
    assert!(matches!(done, Ok(Ok(()))));
}
