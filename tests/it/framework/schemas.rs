//! Snapshots of the exact schemas and OpenAPI document the `hello` example serves.
//!
//! The checked-in files under `tests/snapshots/` are the contract; a change shows up as a diff to
//! review. Regenerate with `GROUNDKIT_BLESS=1 cargo test -p groundkit-tests --test it schemas`.

use std::path::PathBuf;

use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::hello::HelloContext;
use groundkit_server::{AppState, Limits};
use groundkit_tests::TestServer;
use serde_json::{Value, json};

fn snapshot(name: &str, actual: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(name);
    let rendered = format!(
        "{}\n",
        serde_json::to_string_pretty(actual).expect("render")
    );
    if std::env::var_os("GROUNDKIT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, rendered).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing snapshot {}; run with GROUNDKIT_BLESS=1",
            path.display()
        )
    });
    if rendered != expected {
        let line = rendered
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b);
        let line = line.unwrap_or_else(|| rendered.lines().count().min(expected.lines().count()));
        let show = |text: &str| {
            text.lines()
                .skip(line.saturating_sub(2))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "snapshot {name} changed at line {}; review and re-bless\n--- expected\n{}\n+++ actual\n{}",
            line + 1,
            show(&expected),
            show(&rendered)
        );
    }
}

fn served_openapi() -> Value {
    let registry = Registry::<HelloContext>::collect().expect("hello registry");
    let info = ApiInfo {
        title: "groundkit hello".into(),
        version: "0.1.0".into(),
    };
    let server = TestServer::start(AppState::new(
        registry,
        HelloContext::default(),
        info,
        Limits::default(),
    ));
    let response = server.get("/openapi.json");
    assert_eq!(response.status, 200);
    response.json()
}

#[test]
fn hello_openapi_matches_its_snapshot() {
    snapshot("hello-openapi.json", &served_openapi());
}

#[test]
fn hello_tool_schemas_match_their_snapshot() {
    let registry = Registry::<HelloContext>::collect().expect("hello registry");
    let tools: Vec<Value> = registry
        .tools()
        .iter()
        .map(|spec| json!({"name": spec.name(), "input": spec.input_schema(), "output": spec.output_schema()}))
        .collect();
    snapshot("hello-schemas.json", &Value::Array(tools));
}

/// Rules every client accepts, checked on every schema of every registry in this binary.
#[test]
fn schemas_are_2020_12_objects_without_refs_or_nullable_types() {
    for spec in groundkit_core::registry::TOOLS.iter() {
        for schema in [spec.input_schema(), spec.output_schema()] {
            assert_eq!(schema["type"], "object", "{}: {schema}", spec.name());
            let text = schema.to_string();
            assert!(
                !text.contains("$ref") && !text.contains("$defs"),
                "{}: {text}",
                spec.name()
            );
            assert!(schema.get("$schema").is_none(), "{}", spec.name());
        }
        let input = spec.input_schema().to_string();
        assert!(
            !input.contains("\"null\""),
            "{}: optional rendered as nullable: {input}",
            spec.name()
        );
    }
    let openapi = served_openapi();
    assert_eq!(openapi["openapi"], "3.1.0");
    let greet = &openapi["paths"]["/greetings/{language}/{name}"]["get"];
    assert_eq!(greet["parameters"][0]["schema"]["maxLength"], 3);
    assert!(greet.get("requestBody").is_none());
    let stats = &openapi["paths"]["/text/stats"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(
        stats["properties"]["text"]["maxLength"],
        groundkit_examples::hello::MAX_TEXT_CHARS
    );
    assert_eq!(stats["properties"]["top"]["maximum"], 20);
}
