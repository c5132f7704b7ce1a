//! Snapshots of the exact schemas and OpenAPI document the `hello` example serves, and the
//! snapshot comparison other modules' snapshots use.
//!
//! The checked-in files under `tests/snapshots/` are the contract; a change shows up as a diff to
//! review. Regenerate with `GROUNDKIT_BLESS=1 cargo test -p groundkit-tests --test it -- schemas openapi`.

use std::path::PathBuf;

use groundkit_core::Registry;
use groundkit_core::openapi::ApiInfo;
use groundkit_examples::hello::HelloContext;
use groundkit_server::{AppState, Limits};
use groundkit_tests::TestServer;
use serde_json::{Value, json};

/// Compare `actual` with the snapshot `name` in `tests/snapshots/` (write it with
/// `GROUNDKIT_BLESS=1`).
pub(crate) fn snapshot(name: &str, actual: &Value) {
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

/// What strict consumers (MCP clients validating `structuredContent`, Ajv, code generators) trip
/// over, found anywhere in `schema`: a `type` array, a `null`, a `oneOf`/`anyOf` of `const`
/// branches instead of an `enum`, or a `format` JSON Schema does not define.
fn portability_problems(schema: &Value, at: &str, problems: &mut Vec<String>) {
    const FORMATS: &[&str] = &[
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "uuid",
        "regex",
    ];
    match schema {
        Value::Object(object) => {
            if object.get("type").is_some_and(Value::is_array) {
                problems.push(format!("{at}: a type array"));
            }
            if object.get("type") == Some(&json!("null"))
                || object.get("const") == Some(&Value::Null)
            {
                problems.push(format!("{at}: null"));
            }
            if let Some(format) = object.get("format").and_then(Value::as_str)
                && !FORMATS.contains(&format)
            {
                problems.push(format!("{at}: format {format}"));
            }
            for key in ["oneOf", "anyOf"] {
                if object
                    .get(key)
                    .and_then(Value::as_array)
                    .is_some_and(|branches| branches.iter().all(|b| b.get("const").is_some()))
                {
                    problems.push(format!("{at}: {key} of consts"));
                }
            }
            for (key, child) in object {
                portability_problems(child, &format!("{at}/{key}"), problems);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                portability_problems(item, &format!("{at}/{i}"), problems);
            }
        }
        _ => {}
    }
}

/// Rules every client accepts, checked on every schema of every registry in this binary.
#[test]
fn schemas_are_portable_2020_12_objects_without_refs_nulls_or_const_enums() {
    let mut problems = Vec::new();
    for spec in groundkit_core::registry::TOOLS.iter() {
        for (which, schema) in [
            ("input", spec.input_schema()),
            ("output", spec.output_schema()),
        ] {
            assert_eq!(schema["type"], "object", "{}: {schema}", spec.name());
            let text = schema.to_string();
            assert!(
                !text.contains("$ref") && !text.contains("$defs"),
                "{}: {text}",
                spec.name()
            );
            assert!(schema.get("$schema").is_none(), "{}", spec.name());
            portability_problems(&schema, &format!("{} {which}", spec.name()), &mut problems);
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn openapi_names_each_type_once_in_components_and_every_reference_resolves() {
    let openapi = served_openapi();
    assert_eq!(openapi["openapi"], "3.1.0");
    let mut problems = Vec::new();
    portability_problems(&openapi, "openapi", &mut problems);
    assert!(problems.is_empty(), "{problems:#?}");
    let components = openapi["components"]["schemas"]
        .as_object()
        .expect("components");
    let text = openapi.to_string();
    for name in components.keys() {
        assert!(
            text.contains(&format!("\"#/components/schemas/{name}\"")),
            "{name} is never referenced"
        );
    }
    for reference in text.split("\"$ref\":\"").skip(1) {
        let target = reference.split('"').next().unwrap_or_default();
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or(target);
        assert!(components.contains_key(name), "{target} does not resolve");
    }
    // A type used by two tools is one component: `WordCount` is both `top_words[]` and
    // `longest_word` of `TextStats`.
    assert_eq!(
        components["TextStats"]["properties"]["top_words"]["items"]["$ref"],
        "#/components/schemas/WordCount"
    );
    let greet = &openapi["paths"]["/greetings/{language}/{name}"]["get"];
    assert_eq!(greet["parameters"][0]["schema"]["maxLength"], 3);
    assert!(greet.get("requestBody").is_none());
    assert_eq!(
        greet["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Greeting"
    );
    let stats = &openapi["paths"]["/text/stats"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(stats["$ref"], "#/components/schemas/TextStatsRequest");
    let body = &components["TextStatsRequest"];
    assert_eq!(
        body["properties"]["text"]["maxLength"],
        groundkit_examples::hello::MAX_TEXT_CHARS
    );
    assert_eq!(body["properties"]["top"]["maximum"], 20);
}
