//! The REST surface of the `hello` example over real HTTP on loopback.

use std::time::Duration;

use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::hello::HelloContext;
use groundkit_server::{AppState, Limits};
use groundkit_tests::{Response, TestServer, access_line, captured_logs};
use serde_json::json;

use super::toolsets::faults::FaultCtx;

fn info() -> ApiInfo {
    ApiInfo {
        title: "test".into(),
        version: "0".into(),
    }
}

fn hello_with(limits: Limits) -> TestServer {
    let registry = Registry::<HelloContext>::collect().expect("hello registry");
    TestServer::start(AppState::new(
        registry,
        HelloContext::default(),
        info(),
        limits,
    ))
}

fn hello() -> TestServer {
    hello_with(Limits::default())
}

fn assert_problem(response: &Response, status: u16, kind: &str) {
    assert_eq!(response.status, status, "{}", response.body);
    assert_eq!(
        response.header("content-type"),
        Some("application/problem+json")
    );
    let body = response.json();
    assert_eq!(body["kind"], kind, "{body}");
    assert_eq!(body["status"], status);
    assert_eq!(
        body["request_id"],
        response.header("x-request-id").expect("request id")
    );
}

#[test]
fn get_tool_takes_its_arguments_from_the_path() {
    let server = hello();
    let response = server.get("/greetings/fr/Ada");
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.json()["message"], "Bonjour, Ada!");
    assert_eq!(response.header("x-request-id").map(str::len), Some(32));
}

#[test]
fn post_tool_takes_a_json_body_and_returns_nested_output() {
    let server = hello();
    let response = server.post_json(
        "/text/stats",
        r#"{"text": "the cat and the hat", "top": 1}"#,
    );
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        response.json(),
        json!({
            "characters": 19,
            "words": 5,
            "top_words": [{"word": "the", "count": 2}],
            "longest_word": {"word": "the", "count": 3},
        })
    );
}

#[test]
fn unknown_fields_are_refused_naming_the_field() {
    let response = hello().post_json("/text/stats", r#"{"text": "hi", "limit": 3}"#);
    assert_problem(&response, 400, "invalid_request");
    assert_eq!(response.json()["field"], "limit");
}

#[test]
fn declared_bounds_are_enforced_at_the_limit_and_past_it() {
    let server = hello();
    let at_limit = "a".repeat(groundkit_examples::hello::MAX_TEXT_CHARS);
    let response = server.post_json("/text/stats", &json!({ "text": at_limit }).to_string());
    assert_eq!(response.status, 200, "{}", response.body);
    let past = "a".repeat(groundkit_examples::hello::MAX_TEXT_CHARS + 1);
    let response = server.post_json("/text/stats", &json!({ "text": past }).to_string());
    assert_problem(&response, 422, "validation_error");
    assert_eq!(response.json()["field"], "text");
    let response = server.post_json("/text/stats", r#"{"text": "hi", "top": 21}"#);
    assert_problem(&response, 422, "validation_error");
    assert_eq!(response.json()["field"], "top");
    let response = server.get("/greetings/french/Ada");
    assert_problem(&response, 422, "validation_error");
    assert_eq!(response.json()["field"], "language");
}

#[test]
fn malformed_and_non_object_bodies_are_invalid_requests() {
    let server = hello();
    assert_problem(
        &server.post_json("/text/stats", "{\"text\": "),
        400,
        "invalid_request",
    );
    assert_problem(
        &server.post_json("/text/stats", "[1, 2]"),
        400,
        "invalid_request",
    );
    assert_problem(
        &server.post_json("/text/stats", r#"{"text": 5}"#),
        400,
        "invalid_request",
    );
}

#[test]
fn a_non_json_body_is_415() {
    let response = hello().raw(
        "POST /text/stats HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
    );
    assert_problem(&response, 415, "unsupported_media_type");
}

#[test]
fn body_size_is_capped_at_the_limit_and_refused_past_it() {
    let body_at_limit = json!({ "text": "x".repeat(100) }).to_string();
    let server = hello_with(Limits {
        max_body_bytes: body_at_limit.len(),
        ..Limits::default()
    });
    assert_eq!(server.post_json("/text/stats", &body_at_limit).status, 200);
    let past = json!({ "text": "x".repeat(101) }).to_string();
    assert_problem(
        &server.post_json("/text/stats", &past),
        413,
        "payload_too_large",
    );
}

#[test]
fn no_route_accepts_a_query_string() {
    let server = hello();
    for path in [
        "/languages?x=1",
        "/greetings/fr/Ada?name=Bob",
        "/openapi.json?v=3",
        "/nowhere?q=1",
    ] {
        assert_problem(&server.get(path), 400, "query_string_refused");
    }
    let response = server.raw(
        "POST /text/stats?text=secret HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{\"text\":\"hi\"}",
    );
    assert_problem(&response, 400, "query_string_refused");
}

#[test]
fn unknown_routes_and_methods_are_problems_and_a_405_names_the_allowed_method() {
    let server = hello();
    assert_problem(&server.get("/nowhere"), 404, "route_not_found");
    let get_on_post = server.get("/text/stats");
    assert_problem(&get_on_post, 405, "method_not_allowed");
    assert_eq!(get_on_post.header("allow"), Some("POST"));
    let post_on_get = server.post_json("/languages", "{}");
    assert_problem(&post_on_get, 405, "method_not_allowed");
    assert_eq!(post_on_get.header("allow"), Some("GET"));
    let post_on_openapi = server.post_json("/openapi.json", "{}");
    assert_problem(&post_on_openapi, 405, "method_not_allowed");
    assert_eq!(post_on_openapi.header("allow"), Some("GET"));
}

#[test]
fn a_tool_error_keeps_its_kind_and_message() {
    let response = hello().get("/greetings/xx/Ada");
    assert_problem(&response, 404, "not_found");
    assert_eq!(response.json()["detail"], "language 'xx' does not exist");
}

fn faults(limits: Limits) -> TestServer {
    let registry = Registry::<FaultCtx>::collect().expect("fault registry");
    TestServer::start(AppState::new(registry, FaultCtx, info(), limits))
}

#[test]
fn a_handler_panic_is_a_generic_500_and_the_server_keeps_serving() {
    let server = faults(Limits::default());
    let response = server.get("/panic");
    assert_problem(&response, 500, "internal_error");
    assert!(
        !response.body.contains("index out of bounds"),
        "{}",
        response.body
    );
    assert!(!response.body.contains("panicked"), "{}", response.body);
    assert_eq!(server.get("/ok").status, 200);
}

#[test]
fn storage_errors_never_show_paths_or_causes() {
    let response = faults(Limits::default()).get("/storage");
    assert_problem(&response, 500, "storage_error");
    assert_eq!(
        response.json()["detail"],
        groundkit_core::error::GENERIC_DETAIL
    );
    for leak in ["/srv", "os error", "Permission", "sqlite3"] {
        assert!(
            !response.body.contains(leak),
            "{leak} leaked: {}",
            response.body
        );
    }
}

#[test]
fn a_call_past_the_request_timeout_is_504() {
    let server = faults(Limits {
        request_timeout: Duration::from_millis(200),
        ..Limits::default()
    });
    assert_problem(&server.get("/slow"), 504, "timeout");
    assert_eq!(server.get("/ok").status, 200);
}

#[test]
fn the_access_log_has_one_line_per_request_and_never_the_body() {
    groundkit_tests::capture_logs();
    let server = hello();
    let sentinel = "zebrasentinel8841";
    let response = server.post_json("/text/stats", &json!({ "text": sentinel }).to_string());
    assert_eq!(response.status, 200);
    let line = access_line(&response);
    let logs = captured_logs();
    for part in [
        "method=POST",
        "route=\"/text/stats\"",
        "tool=\"text_stats\"",
        "status=200",
        "latency_ms=",
        "results=1",
    ] {
        assert!(line.contains(part), "{part} missing from {line}");
    }
    assert!(!logs.contains(sentinel), "request text reached the log");
}
