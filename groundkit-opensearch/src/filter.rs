//! A search filter as a clause of the cluster's query: the same chunks pass as in the local
//! engine. Path prefixes become `term` and `prefix` queries on the `source` keyword; a glob
//! becomes a `regexp` query, its regular expression the one the local engine matches with
//! (`globset`'s), rewritten into Lucene's syntax; classes, formats and document ids become
//! `terms` queries. A lexical search takes the clause as a `bool` filter, a k-NN search as the
//! Lucene engine's filter, which searches the filtered graph or, when few chunks pass, every
//! passing vector.

use groundkit_retrieval::filter::{Filter, PathPattern};
use serde_json::{Value, json};

use crate::layout::modified_text;

use groundkit_core::Error;

/// The clause `filter` puts in a query (its check included: a malformed filter is the same
/// `validation_error` as in the local engine).
pub(crate) fn clause(filter: &Filter) -> Result<Value, Error> {
    let selector = filter.compile()?;
    let queries = |patterns: &[PathPattern], name: &str| {
        patterns
            .iter()
            .enumerate()
            .map(|(i, p)| path_query(p, &format!("filter.{name}[{i}]")))
            .collect::<Result<Vec<_>, _>>()
    };
    let mut must = Vec::new();
    if !selector.include().is_empty() {
        let any = queries(selector.include(), "paths")?;
        must.push(json!({ "bool": { "should": any, "minimum_should_match": 1 } }));
    }
    let must_not = queries(selector.exclude(), "exclude_paths")?;
    if !selector.classes().is_empty() {
        must.push(json!({ "terms": { "source_class": selector.classes() } }));
    }
    if !selector.formats().is_empty() {
        must.push(json!({ "terms": { "format": selector.formats() } }));
    }
    if !selector.document_ids().is_empty() {
        must.push(json!({ "terms": { "document_id": selector.document_ids() } }));
    }
    if let Some((start, end)) = selector.modified() {
        let mut range = json!({ "gte": modified_text(start) });
        if end < u64::MAX {
            range["lt"] = json!(modified_text(end));
        }
        must.push(json!({ "range": { "modified": range } }));
    }
    for terms in selector.metadata() {
        must.push(json!({ "terms": { "meta": terms } }));
    }
    Ok(json!({ "bool": { "filter": must, "must_not": must_not } }))
}

/// The query of the sources `pattern` matches.
fn path_query(pattern: &PathPattern, field: &str) -> Result<Value, Error> {
    Ok(match pattern {
        PathPattern::Prefix(prefix) if prefix.ends_with('/') => {
            json!({ "prefix": { "source": prefix } })
        }
        PathPattern::Prefix(prefix) => json!({ "bool": {
            "should": [
                { "term": { "source": prefix } },
                { "prefix": { "source": format!("{prefix}/") } }
            ],
            "minimum_should_match": 1
        } }),
        PathPattern::Glob { matcher, .. } => {
            let Some(regexp) = lucene_regexp(matcher.glob().regex()) else {
                return Err(Error::Validation {
                    field: field.to_owned(),
                    message: "is a glob the search cluster cannot match".to_owned(),
                });
            };
            json!({ "regexp": { "source": { "value": regexp, "flags": "NONE" } } })
        }
    })
}

/// `regex` (a glob's regular expression in the syntax of Rust's `regex` crate, as `globset`
/// writes it: anchored, bytes, non-capturing groups) in Lucene's syntax with no optional
/// operators, matching the same strings; `None` for a construct it does not write that way.
fn lucene_regexp(regex: &str) -> Option<String> {
    let mut rest = regex.strip_prefix("(?-u)")?;
    rest = rest.strip_prefix('^')?.strip_suffix('$')?;
    let mut out = String::with_capacity(rest.len());
    let mut bytes: Vec<u8> = Vec::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let escaped = chars.next()?;
            if escaped == 'x' {
                let hex: String = [chars.next()?, chars.next()?].iter().collect();
                bytes.push(u8::from_str_radix(&hex, 16).ok()?);
                if let Ok(text) = std::str::from_utf8(&bytes) {
                    out.push_str(text);
                    bytes.clear();
                }
                continue;
            }
            if !escaped.is_ascii_punctuation() {
                return None; // a class such as `\s`: not what a glob writes
            }
            out.push('\\');
            out.push(escaped);
            continue;
        }
        if !bytes.is_empty() {
            return None; // a byte escape that was not a whole character
        }
        match c {
            '(' if chars.peek() == Some(&'?') => {
                chars.next();
                if chars.next()? != ':' {
                    return None;
                }
                out.push('(');
            }
            // Reserved in Lucene's syntax (a quoted string), a literal in Rust's. (`#`, `@`,
            // `&`, `~`, `<` and `>` are operators only with flags this query turns off.)
            '"' => out.push_str("\\\""),
            _ => out.push(c),
        }
    }
    bytes.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::lucene_regexp;

    fn glob_regex(glob: &str) -> String {
        globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .expect("a glob")
            .regex()
            .to_owned()
    }

    /// Each rewritten expression, read as a regular expression of the same (Lucene-compatible)
    /// constructs, matches exactly the paths the glob matches.
    #[test]
    fn a_rewritten_glob_matches_what_the_glob_matches() {
        let globs = [
            "*.md",
            "**/*.py",
            "src/**",
            "src/**/test_*.rs",
            "docs/?.txt",
            "{src,docs}/**/*.{md,txt}",
            "notes/[a-c]*.md",
            "notes/[!a]*",
            "**",
            "a\\*b/*",
            "été/*.md",
            "x\"y/#@~&<>.txt",
            "(a)+|b.txt",
        ];
        let paths = [
            "a.md",
            "docs/a.md",
            "src/x/y.py",
            "y.py",
            "src",
            "src/a",
            "src/a/b/test_one.rs",
            "src/test_two.rs",
            "docs/a.txt",
            "docs/ab.txt",
            "docs/x/a.txt",
            "notes/apple.md",
            "notes/cherry.md",
            "notes/date.md",
            "notes/a/b",
            "a*b/c",
            "aXb/c",
            "été/a.md",
            "ete/a.md",
            "x\"y/#@~&<>.txt",
            "(a)+|b.txt",
            "aa|b.txt",
        ];
        for glob in globs {
            let matcher = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .expect("a glob")
                .compile_matcher();
            let lucene = lucene_regexp(&glob_regex(glob)).expect("rewritten");
            let read = regex::Regex::new(&format!("^(?:{lucene})$")).expect("a regex");
            for path in paths {
                assert_eq!(
                    read.is_match(path),
                    matcher.is_match(path),
                    "{glob} ({lucene}) on {path}"
                );
            }
        }
    }
}
