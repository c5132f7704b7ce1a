//! The REST contract generated clients depend on: each error status a route answers is declared
//! on it, with the problem schema and the kinds it carries; the README's table of statuses is
//! the document's; and the names of `components.schemas` are kept in a snapshot.

use std::collections::BTreeMap;

use groundkit_tests::Response;
use serde_json::{Value, json};

use super::rest::search;
use super::{corpus, server};
use crate::framework::schemas::snapshot;

#[test]
fn every_error_the_service_answers_is_declared_on_its_route_with_its_kind() {
    let fx = corpus();
    let server = server(&fx);
    let openapi = server.get("/openapi.json").json();
    let search_with = |extra: Value| {
        let mut body = json!({"collection": "papers", "query": "tea"});
        body.as_object_mut()
            .expect("an object")
            .extend(extra.as_object().cloned().unwrap_or_default());
        search(&server, body)
    };
    let post_raw = |headers: &str, body: &str| {
        server.raw(&format!(
            "POST /search HTTP/1.1\r\nHost: {{addr}}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
    };
    let chunks = "/collections/{collection}/chunks/{chunk_id}";
    let cases: Vec<(&str, &str, Response)> = vec![
        ("post", "/search", search_with(json!({"mode": "dense"}))),
        ("post", "/search", search_with(json!({"rerank": true}))),
        ("post", "/search", search_with(json!({"collection": "nope"}))),
        ("post", "/search", search_with(json!({"top_k": 0}))),
        ("post", "/search", search_with(json!({"index_dir": "/etc"}))),
        (
            "post",
            "/search",
            post_raw("Content-Type: text/plain\r\n", "{}"),
        ),
        (
            "post",
            "/search",
            server.raw(
                "POST /search HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\nConnection: close\r\n\r\n",
            ),
        ),
        (
            "get",
            "/collections/{collection}/status",
            server.get("/collections/nope/status"),
        ),
        (
            "get",
            chunks,
            server.get("/collections/papers/chunks/0000000000"),
        ),
        ("get", "/collections", server.get("/collections?verbose=1")),
        (
            "get",
            "/collections",
            server.raw("GET /collections HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"),
        ),
    ];
    for (method, path, response) in cases {
        let kind = response.json()["kind"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path}: {}", response.body))
            .to_owned();
        let declared = &openapi["paths"][path][method]["responses"][response.status.to_string()];
        let case = format!("{method} {path}: {} {kind}", response.status);
        assert_eq!(
            declared["content"]["application/problem+json"]["schema"]["$ref"],
            "#/components/schemas/Problem",
            "{case}: {declared}"
        );
        let kinds = declared["x-groundkit-kinds"].as_array().cloned();
        assert!(
            kinds.unwrap_or_default().contains(&json!(kind)),
            "{case}: {declared}"
        );
        let description = declared["description"].as_str().unwrap_or_default();
        assert!(
            description.contains(&format!("`{kind}`")),
            "{case}: {description}"
        );
    }
    // A route declares what it can meet: no body, no body refusals.
    let status = &openapi["paths"]["/collections/{collection}/status"]["get"]["responses"];
    assert!(
        status.get("413").is_none() && status.get("415").is_none(),
        "{status}"
    );
    let conflicts = &openapi["paths"]["/search"]["post"]["responses"]["409"]["x-groundkit-kinds"];
    assert!(
        conflicts
            .as_array()
            .is_some_and(|kinds| kinds.contains(&json!("embedding_mismatch"))),
        "{conflicts}"
    );
}

/// Every (kind, status) the served document declares on any route.
fn declared_statuses(openapi: &Value) -> BTreeMap<String, u16> {
    let mut statuses = BTreeMap::new();
    let paths = openapi["paths"].as_object().expect("paths");
    for operation in paths
        .values()
        .flat_map(|p| p.as_object().expect("methods").values())
    {
        for (status, response) in operation["responses"].as_object().expect("responses") {
            let Ok(status) = status.parse::<u16>() else {
                continue;
            };
            for kind in response["x-groundkit-kinds"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let kind = kind.as_str().expect("a kind").to_owned();
                let previous = statuses.insert(kind.clone(), status);
                assert!(
                    previous.is_none_or(|p| p == status),
                    "{kind}: {previous:?} and {status}"
                );
            }
        }
    }
    statuses
}

/// The README's table of error kinds: `| `kind` | status | ... |` rows.
fn readme_statuses() -> BTreeMap<String, u16> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    readme
        .lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix("| `")?.split(" | ");
            let kind = cells.next()?.strip_suffix('`')?;
            if !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                return None;
            }
            let status = cells.next()?.trim_end_matches(" |").parse().ok()?;
            Some((kind.to_owned(), status))
        })
        .collect()
}

#[test]
fn the_readme_lists_the_status_of_every_kind_as_the_openapi_document_declares_it() {
    let fx = corpus();
    let server = server(&fx);
    let declared = declared_statuses(&server.get("/openapi.json").json());
    assert_eq!(declared.get("dense_unavailable"), Some(&409));
    assert_eq!(readme_statuses(), declared);
}

#[test]
fn the_names_of_the_openapi_components_match_their_snapshot() {
    // Code written against a generated client names these types: renaming one breaks it.
    let fx = corpus();
    let server = server(&fx);
    let openapi = server.get("/openapi.json").json();
    let names: Vec<&String> = openapi["components"]["schemas"]
        .as_object()
        .expect("components")
        .keys()
        .collect();
    snapshot("grk-openapi-component-names.json", &json!(names));
}
