//! Chunking each language at its definitions.

use super::*;

/// Each chunk's scope and text (every chunk within the budget and trimmed).
fn chunks(language: Language, text: &str, max_bytes: usize) -> Vec<(String, String)> {
    let chunks = chunk_definitions(language, text, max_bytes).expect("parses");
    for chunk in &chunks {
        assert!(chunk.end - chunk.start <= max_bytes, "{chunk:?}");
        let content = &text[chunk.start..chunk.end];
        assert_eq!(content, content.trim(), "chunks are trimmed");
    }
    chunks
        .iter()
        .map(|c| (c.scope.clone(), text[c.start..c.end].to_owned()))
        .collect()
}

/// The scopes of the chunks of `text`, and each chunk's first line.
fn outline(language: Language, text: &str, max_bytes: usize) -> Vec<(String, String)> {
    chunks(language, text, max_bytes)
        .into_iter()
        .map(|(scope, text)| {
            let first = text.lines().next().unwrap_or_default().to_owned();
            (scope, first)
        })
        .collect()
}

fn scopes(language: Language, text: &str, max_bytes: usize) -> Vec<String> {
    outline(language, text, max_bytes)
        .into_iter()
        .map(|(scope, _)| scope)
        .collect()
}

#[test]
fn rust_definitions_take_their_doc_comments_and_attributes() {
    let text = "use std::fmt;\nuse std::io;\nuse std::path::Path;\n\n/// A parser.\n#[derive(Debug)]\npub struct Parser {\n    pos: usize,\n}\n\nimpl Parser {\n    /// Parses a header.\n    fn parse_header(&self) -> bool {\n        true\n    }\n}\n\nimpl fmt::Display for Parser {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        Ok(())\n    }\n}\n";
    assert_eq!(
        outline(Language::Rust, text, 100),
        vec![
            ("".into(), "use std::fmt;".into()),
            ("struct Parser".into(), "/// A parser.".into()),
            ("impl Parser".into(), "impl Parser {".into()),
            (
                "impl fmt::Display for Parser".into(),
                "impl fmt::Display for Parser {".into()
            ),
            (
                "impl fmt::Display for Parser › fn fmt".into(),
                "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {".into()
            ),
        ]
    );
}

#[test]
fn an_oversized_definition_is_cut_at_its_nested_definitions_then_at_blank_lines() {
    let body: String = (0..12)
        .map(|i| format!("        let value_{i} = compute({i});\n        check(value_{i});\n\n"))
        .collect();
    let text = format!(
        "impl Parser {{\n    /// Parses a header.\n    fn parse_header(&self) {{\n{body}    }}\n\n    fn small(&self) {{}}\n}}\n"
    );
    let outline = outline(Language::Rust, &text, 300);
    assert_eq!(outline[0], ("impl Parser".into(), "impl Parser {".into()));
    assert_eq!(
        outline[1],
        (
            "impl Parser › fn parse_header".into(),
            "/// Parses a header.".into()
        )
    );
    let pieces = outline
        .iter()
        .filter(|(scope, _)| scope == "impl Parser › fn parse_header")
        .count();
    assert!(pieces > 2, "{outline:?}");
    // The small method and the impl's closing brace share the last chunk.
    assert_eq!(
        outline.last(),
        Some(&("impl Parser › fn small".into(), "fn small(&self) {}".into()))
    );
}

#[test]
fn small_neighbouring_definitions_share_a_chunk_up_to_the_budget_listing_their_entries() {
    // At the top level, then in a class cut at its methods (the entries follow the class).
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "MAX = 10\nMIN = 0\n\n\ndef low():\n    return MIN\n\n\ndef high():\n    return MAX\n\n\ndef clamp(v):\n    return max(MIN, min(v, MAX))\n",
            &[
                (
                    "def low; def high",
                    "MAX = 10\nMIN = 0\n\n\ndef low():\n    return MIN\n\n\ndef high():\n    return MAX",
                ),
                (
                    "def clamp",
                    "def clamp(v):\n    return max(MIN, min(v, MAX))",
                ),
            ],
        ),
        (
            "class Range:\n    def low(self): return 0\n    def high(self): return 9\n    def span(self): return self.high() - self.low()\n    def mid(self): return (self.low() + self.high()) // 2\n",
            &[
                (
                    "class Range › def low; def high",
                    "class Range:\n    def low(self): return 0\n    def high(self): return 9",
                ),
                (
                    "class Range › def span",
                    "def span(self): return self.high() - self.low()",
                ),
                (
                    "class Range › def mid",
                    "def mid(self): return (self.low() + self.high()) // 2",
                ),
            ],
        ),
    ];
    for (text, expected) in cases {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(scope, chunk)| (scope.to_string(), chunk.to_string()))
            .collect();
        assert_eq!(chunks(Language::Python, text, 80), expected);
    }
}

#[test]
fn python_methods_are_scoped_by_their_class() {
    let text = "import os\n\nclass Session:\n    \"\"\"A session.\"\"\"\n\n    @property\n    def name(self):\n        return 'x'\n\n    def close(self):\n        pass\n";
    let chunks = chunk_definitions(Language::Python, text, 60).expect("parses");
    let scopes: Vec<&str> = chunks.iter().map(|c| c.scope.as_str()).collect();
    assert_eq!(
        scopes,
        vec![
            "",
            "class Session",
            "class Session › def name",
            "class Session › def close"
        ]
    );
    assert!(text[chunks[2].start..].starts_with("@property"));
}

#[test]
fn every_grammar_finds_its_definitions() {
    let cases: &[(Language, &str, &[&str])] = &[
        (
            Language::JavaScript,
            "// Adds.\nexport function add(a, b) { return a + b; }\nclass Cart { total() { return 0; } }\nconst RATE = 0.2;\nexport const greet = (name) => `hi ${name}`;\n",
            &["function add; class Cart; function greet"],
        ),
        (
            Language::TypeScript,
            "interface Shape { area(): number }\ntype Id = string;\nnamespace Geo { export function dist(): number { return 0; } }\n",
            &["interface Shape; type Id; namespace Geo"],
        ),
        (
            Language::Tsx,
            "export function App(): JSX.Element { return <div/>; }\nconst Row = function (): JSX.Element { return <tr/>; };\n",
            &["function App; function Row"],
        ),
        (
            Language::Go,
            "package main\n\n// Session is open.\ntype Session struct{}\n\nfunc (s *Session) Close() error { return nil }\n\nfunc main() {}\n",
            &["type Session; func (s *Session) Close; func main"],
        ),
        (
            Language::Java,
            "/** A session. */\npublic class Session {\n  public Session() {}\n  void close() {}\n}\n",
            &["class Session"],
        ),
        (
            Language::C,
            "#include <stdio.h>\n\ntypedef struct { int x; } point;\n\nstatic int parse(const char *s) { return 0; }\n",
            &["typedef point; function parse"],
        ),
        (
            Language::Cpp,
            "namespace net {\nclass Socket { void open(); };\nint Socket::port() { return 0; }\n}\n",
            &["namespace net"],
        ),
        (
            Language::CSharp,
            "namespace App {\n  /// <summary>A session.</summary>\n  public class Session { public void Close() {} }\n}\n",
            &["namespace App"],
        ),
        (
            Language::Ruby,
            "module Net\n  class Session\n    def close; end\n    def self.open; end\n  end\nend\n",
            &["module Net"],
        ),
        (
            Language::Php,
            "<?php\nfunction greet($name) { return $name; }\nclass Greeter { public function hello() {} }\n",
            &["function greet; class Greeter"],
        ),
        (
            Language::Shell,
            "#!/bin/sh\nset -e\n\n# Builds it.\nbuild() {\n  make\n}\n",
            &["function build"],
        ),
    ];
    for (language, text, expected) in cases {
        assert_eq!(&scopes(*language, text, 4000), expected, "{language:?}");
    }
}

#[test]
fn nested_scopes_in_other_grammars_when_cut() {
    let cases: &[(Language, &str, &str)] = &[
        (
            Language::Ruby,
            "module Net\n  class Session\n    def close\n      @open = false\n    end\n\n    def self.open\n      new\n    end\n  end\nend\n",
            "module Net › class Session › def self.open",
        ),
        (
            Language::Java,
            "public class Session {\n  public Session() { this.open = true; }\n\n  void close() { this.open = false; }\n}\n",
            "class Session › method close",
        ),
        (
            Language::Cpp,
            "namespace net {\nclass Socket {\n  void open() { fd = 1; }\n};\nint port() { return 8080; }\n}\n",
            "namespace net › function port",
        ),
        (
            Language::CSharp,
            "namespace App {\n  public class Session {\n    public void Close() { open = false; }\n  }\n}\n",
            "namespace App › class Session › method Close",
        ),
    ];
    for (language, text, expected) in cases {
        let found = scopes(*language, text, 64);
        assert!(
            found.iter().any(|s| s == expected),
            "{language:?}: {found:?}"
        );
    }
}

#[test]
fn a_namespace_statement_scopes_the_rest_of_its_file() {
    let php = "<?php\nnamespace App;\n\nclass Greeter {}\n\nnamespace Other;\n\nfunction f() {}\n";
    assert_eq!(
        scopes(Language::Php, php, 4000),
        vec![
            "",
            "namespace App › class Greeter",
            "namespace Other › function f"
        ]
    );
    let csharp = "using System;\nnamespace App;\n\npublic class Session { }\n";
    assert_eq!(
        scopes(Language::CSharp, csharp, 4000),
        vec!["", "namespace App › class Session"]
    );
}

#[test]
fn deeply_nested_input_is_chunked_without_exhausting_the_stack() {
    let depth = 20_000;
    let nested = format!(
        "{}{}",
        "function f() {\n".repeat(depth),
        "}\n".repeat(depth)
    );
    let chunks = chunk_definitions(Language::JavaScript, &nested, 64).expect("parses");
    let deepest = chunks
        .iter()
        .map(|c| c.scope.matches(SCOPE_SEPARATOR).count() + 1)
        .max();
    assert_eq!(deepest, Some(definitions::MAX_DEPTH + 1));
    let parens = format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth));
    assert!(chunk_definitions(Language::Python, &parens, 64).is_some());
    let long_name = format!("fn {}() {{}}\n", "a".repeat(500));
    let chunks = chunk_definitions(Language::Rust, &long_name, 4000).expect("parses");
    assert!(chunks[0].scope.ends_with('…') && chunks[0].scope.chars().count() == 124);
}

#[test]
fn a_file_mostly_of_syntax_errors_is_not_chunked_at_definitions() {
    assert_eq!(
        chunk_definitions(Language::Rust, "}}}} ((( fn fn fn <<<< >>>> ;;; {{", 4000),
        None
    );
    let text = "just some words, not code at all";
    assert_eq!(
        text_chunks(text, 4000),
        vec![Span {
            start: 0,
            end: text.len(),
            scope: String::new()
        }]
    );
}
