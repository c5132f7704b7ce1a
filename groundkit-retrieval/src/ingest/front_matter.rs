//! A Markdown file's front matter as a document's metadata: YAML between `---` lines or TOML
//! between `+++` lines at the very start of the file. Each top-level field whose value is a
//! scalar, or a list of scalars, is kept, as text (`true`, `3`, `2026-05-01`); tables, nested
//! lists and empty values are left out, and so is a block that does not parse (the file is
//! still read, without metadata). A filter matches these fields exactly (`filter::meta_term`).
//!
//! Bounded: a block of at most [`MAX_BLOCK_BYTES`], nested at most [`MAX_NESTING`] brackets deep
//! (checked before parsing), a YAML block without aliases (checked on the parser's events
//! before loading: the loader would copy an anchored node for each), at most [`MAX_FIELDS`] fields of [`MAX_VALUES`] values of
//! [`MAX_VALUE_BYTES`] each.

use std::collections::BTreeMap;

use crate::filter::meta_term;

/// A document's metadata: each field's values, as text.
pub(crate) type Metadata = BTreeMap<String, Vec<String>>;

/// The largest front matter block read.
pub(crate) const MAX_BLOCK_BYTES: usize = 16 * 1024;
/// The deepest bracket nesting a block may have to be parsed.
const MAX_NESTING: usize = 16;
/// The most fields kept.
const MAX_FIELDS: usize = 64;
/// The most values a field keeps.
const MAX_VALUES: usize = 64;
/// The longest value (and field name) kept, in bytes.
const MAX_VALUE_BYTES: usize = 256;

/// Whether a file named `source` can have front matter.
pub(crate) fn applies_to(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// The metadata of the front matter `text` starts with (empty when it has none).
pub(crate) fn read(text: &str) -> Metadata {
    let Some((yaml, block)) = block(text) else {
        return Metadata::new();
    };
    if block.len() > MAX_BLOCK_BYTES || nesting(block) > MAX_NESTING {
        return Metadata::new();
    }
    let fields = if yaml {
        yaml_fields(block)
    } else {
        toml_fields(block)
    };
    let mut metadata = Metadata::new();
    for (name, values) in fields.into_iter().take(MAX_FIELDS) {
        let values: Vec<String> = values
            .into_iter()
            .filter(|v| !v.is_empty() && v.len() <= MAX_VALUE_BYTES)
            .take(MAX_VALUES)
            .collect();
        let name_ok = !name.is_empty()
            && name.len() <= MAX_VALUE_BYTES
            && !name.contains('=')
            && !name.chars().any(char::is_control);
        if name_ok && !values.is_empty() {
            metadata.insert(name, values);
        }
    }
    metadata
}

/// `metadata` as stored with its document: a JSON object of lists of text.
pub(crate) fn metadata_json(metadata: &Metadata) -> String {
    serde_json::to_string(metadata).unwrap_or_else(|_| "{}".to_owned())
}

/// Stored metadata read back (empty when there is none, or it does not parse).
pub(crate) fn parse_metadata(json: Option<&str>) -> Metadata {
    json.and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default()
}

/// The terms a chunk of a document with `metadata` is indexed with, one per value
/// ([`meta_term`]).
pub(crate) fn meta_terms(metadata: &Metadata) -> Vec<String> {
    metadata
        .iter()
        .flat_map(|(name, values)| values.iter().map(move |v| meta_term(name, v)))
        .collect()
}

/// The block between the opening and closing fence, and whether it is YAML.
fn block(text: &str) -> Option<(bool, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (yaml, fence) = if text.starts_with("---") {
        (true, "---")
    } else if text.starts_with("+++") {
        (false, "+++")
    } else {
        return None;
    };
    let first = text.find('\n')?;
    if text[..first].trim_end() != fence {
        return None;
    }
    let body = &text[first + 1..];
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == fence || (yaml && bare == "...") {
            return Some((yaml, &body[..at]));
        }
        at += line.len();
        if at > MAX_BLOCK_BYTES {
            return None;
        }
    }
    None
}

/// The deepest nesting of `[` and `{` in `block`, quotes or not: a bound on what a parser
/// recurses into.
fn nesting(block: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in block.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn yaml_fields(block: &str) -> Vec<(String, Vec<String>)> {
    use yaml_rust2::{Yaml, YamlLoader};
    fn scalar(value: &Yaml) -> Option<String> {
        match value {
            Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
            Yaml::Integer(n) => Some(n.to_string()),
            Yaml::Boolean(b) => Some(b.to_string()),
            _ => None,
        }
    }
    if has_alias(block) {
        return Vec::new();
    }
    let Ok(documents) = YamlLoader::load_from_str(block) else {
        return Vec::new();
    };
    let Some(Yaml::Hash(fields)) = documents.into_iter().next() else {
        return Vec::new();
    };
    fields
        .iter()
        .filter_map(|(name, value)| {
            let name = scalar(name)?;
            let values = match value {
                Yaml::Array(items) => items.iter().filter_map(scalar).collect(),
                other => vec![scalar(other)?],
            };
            Some((name, values))
        })
        .collect()
}

/// Whether YAML `block` uses an alias (`*name`). The loader copies the anchored node for each
/// alias, so a few lines of aliases of aliases stand for billions of nodes ("billion laughs");
/// such a block is not loaded. Front matter has no need of them.
fn has_alias(block: &str) -> bool {
    use yaml_rust2::Event;
    let mut parser = yaml_rust2::parser::Parser::new_from_str(block);
    loop {
        match parser.next_token() {
            Ok((Event::Alias(_), _)) => return true,
            Ok((Event::StreamEnd, _)) | Err(_) => return false,
            Ok(_) => {}
        }
    }
}

fn toml_fields(block: &str) -> Vec<(String, Vec<String>)> {
    use toml::Value;
    fn scalar(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Integer(n) => Some(n.to_string()),
            Value::Float(x) => Some(x.to_string()),
            Value::Boolean(b) => Some(b.to_string()),
            Value::Datetime(d) => Some(d.to_string()),
            Value::Array(_) | Value::Table(_) => None,
        }
    }
    let Ok(table) = block.parse::<toml::Table>() else {
        return Vec::new();
    };
    table
        .iter()
        .filter_map(|(name, value)| {
            let values = match value {
                Value::Array(items) => items.iter().filter_map(scalar).collect(),
                other => vec![scalar(other)?],
            };
            Some((name.clone(), values))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Vec<(String, Vec<String>)> {
        read(text).into_iter().collect()
    }

    fn field(name: &str, values: &[&str]) -> (String, Vec<String>) {
        (
            name.to_owned(),
            values.iter().map(|v| (*v).to_owned()).collect(),
        )
    }

    #[test]
    fn yaml_and_toml_front_matter_give_their_scalar_fields_as_text() {
        let yaml = "---\ntitle: Tide tables\ntags: [harbour, \"tides\"]\ndate: 2026-05-01\n\
                    draft: false\nrevision: 3\nauthors:\n  - Ada\n  - Grace\n\
                    nested: {a: 1}\nempty:\n---\n# Tide tables\n";
        assert_eq!(
            fields(yaml),
            [
                field("authors", &["Ada", "Grace"]),
                field("date", &["2026-05-01"]),
                field("draft", &["false"]),
                field("revision", &["3"]),
                field("tags", &["harbour", "tides"]),
                field("title", &["Tide tables"]),
            ]
        );
        let toml = "+++\ntitle = \"Kettles\"\ntags = [\"tea\", \"water\"]\n\
                    date = 2026-05-01\nweight = 2.5\n[extra]\nx = 1\n+++\nBody\n";
        assert_eq!(
            fields(toml),
            [
                field("date", &["2026-05-01"]),
                field("tags", &["tea", "water"]),
                field("title", &["Kettles"]),
                field("weight", &["2.5"]),
            ]
        );
    }

    #[test]
    fn a_yaml_block_with_aliases_is_not_read_so_it_cannot_multiply_itself() {
        // One alias: read, it would copy the anchored list into `b`.
        assert!(read("---\na: &x [one, two]\nb: *x\n---\n").is_empty());
        // Billion laughs, five levels of ten aliases: 100,000 copies were it read.
        let mut block =
            String::from("---\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..=5 {
            let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
            block.push_str(&format!("l{level}: &l{level} [{aliases}]\n"));
        }
        block.push_str("title: laughs\n---\n");
        assert!(read(&block).is_empty());
        // An anchor alone copies nothing: read.
        assert_eq!(
            fields("---\ntitle: &t Tides\n---\n"),
            [field("title", &["Tides"])]
        );
    }

    #[test]
    fn text_without_a_whole_block_has_no_metadata() {
        for text in [
            "# Title\n---\ntitle: x\n---\n",
            "---\ntitle: never closed\n",
            "--- \ntitle: [unclosed\n---\n",
            "---\n- a list\n- not fields\n---\n",
            &format!("---\nx: {}1{}\n---\n", "[".repeat(40), "]".repeat(40)),
            &format!("---\ntitle: {}\n---\n", "x".repeat(MAX_BLOCK_BYTES)),
        ] {
            assert!(read(text).is_empty(), "{text:.60}");
        }
    }
}
