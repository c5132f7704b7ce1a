//! What a model reads when it chooses and calls a tool: descriptions in the caller's terms (no
//! Rust, no transport internals), `rank` counted from 1 in the schema as in the text, `score`
//! explained for every mode.

use groundkit_core::registry::TOOLS;
use serde_json::Value;

/// Every `description` in `schema`, with where it is.
fn descriptions(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(object) => {
            if let Some(text) = object.get("description").and_then(Value::as_str) {
                out.push((at.to_owned(), text.to_owned()));
            }
            for (key, child) in object {
                descriptions(child, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| descriptions(item, at, out)),
        _ => {}
    }
}

#[test]
fn descriptions_speak_to_the_caller_not_to_a_rust_reader() {
    const RUST_READER: &[&str] = &[
        "len()",
        "from the path",
        "by aggregate query",
        "Option<",
        "u32",
        "u64",
        "Arguments of",
        "structured content must",
        "embedding manifest",
    ];
    let mut found = Vec::new();
    for spec in TOOLS.iter() {
        found.push((
            format!("{} description", spec.name()),
            spec.description().to_owned(),
        ));
        descriptions(
            &spec.input_schema(),
            &format!("{} input", spec.name()),
            &mut found,
        );
        descriptions(
            &spec.output_schema(),
            &format!("{} output", spec.name()),
            &mut found,
        );
    }
    let offending: Vec<_> = found
        .iter()
        .filter(|(_, text)| RUST_READER.iter().any(|phrase| text.contains(phrase)))
        .collect();
    assert!(offending.is_empty(), "{offending:#?}");
}

#[test]
fn rank_starts_at_1_and_score_is_described_for_every_mode() {
    let search = TOOLS
        .iter()
        .find(|spec| spec.name() == "search")
        .expect("the search tool");
    let output = search.output_schema();
    let result = &output["properties"]["results"]["items"]["properties"];
    assert_eq!(result["rank"]["minimum"], 1);
    let score = result["score"]["description"].as_str().expect("described");
    for mode in ["lexical", "reranked"] {
        assert!(score.contains(mode), "{mode}: {score}");
    }
}

#[test]
fn citation_lines_start_at_1_and_may_be_absent_in_search_and_fetch_chunk() {
    let output = |name: &str| {
        TOOLS
            .iter()
            .find(|spec| spec.name() == name)
            .expect("the tool")
            .output_schema()
    };
    let search = output("search");
    let fetch = output("fetch_chunk");
    for citation in [
        &search["properties"]["results"]["items"]["properties"]["citation"],
        &fetch["properties"]["citation"],
    ] {
        for field in ["start_line", "end_line"] {
            let line = &citation["properties"][field];
            assert_eq!(line["minimum"], 1, "{field}: {citation:#}");
            assert!(line["description"].is_string(), "{field}: {citation:#}");
            let required = citation["required"].as_array().expect("required fields");
            assert!(
                !required.contains(&Value::from(field)),
                "{field}: {citation:#}"
            );
        }
    }
}

#[test]
fn every_collection_argument_states_the_one_collection_name_rule() {
    let rule = groundkit_retrieval::COLLECTION_NAME.as_str();
    let mut with_collection = Vec::new();
    for spec in TOOLS.iter() {
        let input = spec.input_schema();
        if let Some(collection) = input["properties"].get("collection") {
            if spec.name() == "search" {
                // A name or "*", or a list of names.
                let branches = match collection["$ref"].as_str() {
                    Some(reference) => {
                        let name = reference.rsplit('/').next().unwrap_or_default();
                        &input["$defs"][name]["anyOf"]
                    }
                    None => &collection["anyOf"],
                };
                let rest = rule.trim_start_matches('^').trim_end_matches('$');
                assert_eq!(
                    branches[0]["pattern"],
                    format!("^(\\*|{rest})$"),
                    "{input:#}"
                );
                assert_eq!(branches[1]["items"]["pattern"], rule, "{input:#}");
                assert_eq!(branches[1]["maxItems"], 32, "{input:#}");
            } else {
                assert_eq!(collection["pattern"], rule, "{}", spec.name());
            }
            with_collection.push(spec.name());
        }
    }
    with_collection.sort_unstable();
    assert_eq!(with_collection, ["fetch_chunk", "index_status", "search"]);
    for (name, valid) in [
        ("a", true),
        (&"x".repeat(64), true),
        (&"x".repeat(65), false),
        ("_a", false),
        ("a/b", false),
        ("..", false),
        ("é", false),
    ] {
        assert_eq!(
            groundkit_retrieval::validate_name(name).is_ok(),
            valid,
            "{name}"
        );
    }
}
