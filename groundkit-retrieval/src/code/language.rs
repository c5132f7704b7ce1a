//! The languages code chunking knows: which file names are source code, which of them have a
//! grammar compiled in, and for each grammar which syntax nodes are definitions, how they are
//! named in a scope, and which nodes are doc comments and attributes that belong to the
//! definition after them.

use tree_sitter::{Language as Grammar, Node};

/// A language with a tree-sitter grammar in this build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Rust.
    Rust,
    /// Python.
    Python,
    /// JavaScript (JSX included).
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TypeScript with JSX.
    Tsx,
    /// Go.
    Go,
    /// Java.
    Java,
    /// C.
    C,
    /// C++.
    Cpp,
    /// C#.
    CSharp,
    /// Ruby.
    Ruby,
    /// PHP.
    Php,
    /// Bash and POSIX shell.
    Shell,
}

/// What kind of source a file name says a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// Source code of a language with a grammar: chunked at its definitions.
    Parsed(Language),
    /// Source code or configuration of a language without a grammar in this build: chunked as
    /// text.
    Unparsed,
}

/// Extensions of languages without a grammar here, read as source code and chunked as text.
const UNPARSED_EXTENSIONS: &[&str] = &[
    "kt", "kts", "swift", "scala", "sc", "lua", "pl", "pm", "r", "hs", "ml", "mli", "ex", "exs",
    "erl", "clj", "cljs", "dart", "zig", "nim", "jl", "sql", "groovy", "gradle", "vue", "svelte",
    "css", "scss", "less", "m", "mm", "fs", "vb", "ps1", "proto", "ini", "cfg", "xml", "cmake",
    "mk",
];

/// Whole file names that are source code without a telling extension.
const UNPARSED_NAMES: &[&str] = &["Makefile", "Dockerfile", "CMakeLists.txt", "Justfile"];

/// The kind of source `name` (a file name, without directories) is, if it is source code.
pub fn source_kind(name: &str) -> Option<SourceKind> {
    if UNPARSED_NAMES.contains(&name) {
        return Some(SourceKind::Unparsed);
    }
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    let language = match ext.as_str() {
        "rs" => Language::Rust,
        "py" | "pyi" => Language::Python,
        "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
        "ts" | "mts" | "cts" => Language::TypeScript,
        "tsx" => Language::Tsx,
        "go" => Language::Go,
        "java" => Language::Java,
        "c" | "h" => Language::C,
        "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => Language::Cpp,
        "cs" => Language::CSharp,
        "rb" | "rake" => Language::Ruby,
        "php" => Language::Php,
        "sh" | "bash" => Language::Shell,
        other if UNPARSED_EXTENSIONS.contains(&other) => return Some(SourceKind::Unparsed),
        _ => return None,
    };
    Some(SourceKind::Parsed(language))
}

/// How one kind of definition node appears in a scope.
struct Definition {
    /// The node kind.
    kind: &'static str,
    /// The word put before its name in a scope (`fn`, `class`, `def`, ...).
    label: &'static str,
}

const fn def(kind: &'static str, label: &'static str) -> Definition {
    Definition { kind, label }
}

const RUST: &[Definition] = &[
    def("function_item", "fn"),
    def("function_signature_item", "fn"),
    def("struct_item", "struct"),
    def("enum_item", "enum"),
    def("union_item", "union"),
    def("trait_item", "trait"),
    def("impl_item", "impl"),
    def("mod_item", "mod"),
    def("macro_definition", "macro_rules!"),
];
const PYTHON: &[Definition] = &[
    def("function_definition", "def"),
    def("class_definition", "class"),
];
const JAVASCRIPT: &[Definition] = &[
    def("function_declaration", "function"),
    def("lexical_declaration", "function"),
    def("variable_declaration", "function"),
    def("generator_function_declaration", "function*"),
    def("class_declaration", "class"),
    def("method_definition", "method"),
];
const TYPESCRIPT: &[Definition] = &[
    def("function_declaration", "function"),
    def("lexical_declaration", "function"),
    def("variable_declaration", "function"),
    def("generator_function_declaration", "function*"),
    def("function_signature", "function"),
    def("class_declaration", "class"),
    def("abstract_class_declaration", "class"),
    def("method_definition", "method"),
    def("method_signature", "method"),
    def("abstract_method_signature", "method"),
    def("interface_declaration", "interface"),
    def("type_alias_declaration", "type"),
    def("enum_declaration", "enum"),
    def("internal_module", "namespace"),
    def("module", "module"),
];
const GO: &[Definition] = &[
    def("function_declaration", "func"),
    def("method_declaration", "func"),
    def("type_declaration", "type"),
];
const JAVA: &[Definition] = &[
    def("class_declaration", "class"),
    def("interface_declaration", "interface"),
    def("enum_declaration", "enum"),
    def("record_declaration", "record"),
    def("annotation_type_declaration", "@interface"),
    def("method_declaration", "method"),
    def("constructor_declaration", "constructor"),
];
const C: &[Definition] = &[
    def("function_definition", "function"),
    def("type_definition", "typedef"),
    def("struct_specifier", "struct"),
    def("union_specifier", "union"),
    def("enum_specifier", "enum"),
];
const CPP: &[Definition] = &[
    def("function_definition", "function"),
    def("type_definition", "typedef"),
    def("class_specifier", "class"),
    def("struct_specifier", "struct"),
    def("union_specifier", "union"),
    def("enum_specifier", "enum"),
    def("namespace_definition", "namespace"),
];
const CSHARP: &[Definition] = &[
    def("class_declaration", "class"),
    def("struct_declaration", "struct"),
    def("interface_declaration", "interface"),
    def("enum_declaration", "enum"),
    def("record_declaration", "record"),
    def("method_declaration", "method"),
    def("constructor_declaration", "constructor"),
    def("namespace_declaration", "namespace"),
    def("local_function_statement", "function"),
];
const RUBY: &[Definition] = &[
    def("method", "def"),
    def("singleton_method", "def"),
    def("class", "class"),
    def("module", "module"),
];
const PHP: &[Definition] = &[
    def("function_definition", "function"),
    def("class_declaration", "class"),
    def("interface_declaration", "interface"),
    def("trait_declaration", "trait"),
    def("enum_declaration", "enum"),
    def("method_declaration", "function"),
    def("namespace_definition", "namespace"),
];
const SHELL: &[Definition] = &[def("function_definition", "function")];

/// Nodes that wrap a definition and belong to its chunk (`export`, decorators, `template<>`).
const WRAPPERS: &[&str] = &[
    "export_statement",
    "decorated_definition",
    "template_declaration",
];

/// Nodes that, placed right before a definition, belong to it: comments, attributes, decorators.
const LEADING: &[&str] = &[
    "comment",
    "line_comment",
    "block_comment",
    "attribute_item",
    "decorator",
    "attribute_list",
];

impl Language {
    /// The tree-sitter grammar.
    pub(crate) fn grammar(self) -> Grammar {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Language::Shell => tree_sitter_bash::LANGUAGE.into(),
        }
    }

    /// The versioned name of the chunker for this language, recorded as a code document's
    /// extractor: a change to how the language is chunked changes the version, so the next
    /// ingest chunks its files again.
    pub fn chunker(self) -> &'static str {
        match self {
            Language::Rust => "code-rust@2",
            Language::Python => "code-python@2",
            Language::JavaScript => "code-javascript@2",
            Language::TypeScript => "code-typescript@2",
            Language::Tsx => "code-tsx@2",
            Language::Go => "code-go@2",
            Language::Java => "code-java@2",
            Language::C => "code-c@2",
            Language::Cpp => "code-cpp@2",
            Language::CSharp => "code-csharp@2",
            Language::Ruby => "code-ruby@2",
            Language::Php => "code-php@2",
            Language::Shell => "code-shell@2",
        }
    }

    fn definitions(self) -> &'static [Definition] {
        match self {
            Language::Rust => RUST,
            Language::Python => PYTHON,
            Language::JavaScript => JAVASCRIPT,
            Language::TypeScript | Language::Tsx => TYPESCRIPT,
            Language::Go => GO,
            Language::Java => JAVA,
            Language::C => C,
            Language::Cpp => CPP,
            Language::CSharp => CSHARP,
            Language::Ruby => RUBY,
            Language::Php => PHP,
            Language::Shell => SHELL,
        }
    }

    /// The definition `node` is or wraps, if any.
    pub(crate) fn definition<'t>(self, node: Node<'t>) -> Option<Node<'t>> {
        if WRAPPERS.contains(&node.kind()) {
            let mut cursor = node.walk();
            return node
                .named_children(&mut cursor)
                .find_map(|child| self.definition(child));
        }
        let listed = self.definitions().iter().any(|d| d.kind == node.kind());
        // A C or C++ `struct`, `union`, `enum` or `class` counts only with its body:
        // `struct point p;` names a type, it does not define one. Neither does PHP's
        // `namespace App;` enclose anything.
        let named_only = (node.kind().ends_with("_specifier")
            || node.kind() == "namespace_definition")
            && node.child_by_field_name("body").is_none();
        // A JavaScript or TypeScript `const`, `let` or `var` defines a function only when its
        // value is one: `const parse = (text) => ...`.
        let not_a_function = matches!(node.kind(), "lexical_declaration" | "variable_declaration")
            && function_declarator(node).is_none();
        (listed && !named_only && !not_a_function).then_some(node)
    }

    /// The scope entry of a statement that scopes the rest of its file (`namespace App;` in PHP
    /// and C#), if `node` is one.
    pub(crate) fn file_scope(self, node: Node<'_>, text: &str) -> Option<String> {
        let statement = match (self, node.kind()) {
            (Language::Php, "namespace_definition") => node.child_by_field_name("body").is_none(),
            (Language::CSharp, "file_scoped_namespace_declaration") => true,
            _ => false,
        };
        let name = node.child_by_field_name("name")?;
        statement.then(|| format!("namespace {}", one_line(&text[name.byte_range()])))
    }

    /// Whether `node` belongs to the definition after it (a comment, an attribute).
    pub(crate) fn is_leading(self, node: Node<'_>) -> bool {
        LEADING.contains(&node.kind())
    }

    /// How definition `node` appears in a scope: its label and its name (`impl Parser`,
    /// `class Session`, `def close`).
    pub(crate) fn scope_entry(self, node: Node<'_>, text: &str) -> String {
        let label = self
            .definitions()
            .iter()
            .find(|d| d.kind == node.kind())
            .map_or("", |d| d.label);
        let name = self.name(node, text);
        if name.is_empty() {
            label.to_owned()
        } else {
            format!("{label} {name}")
        }
    }

    fn name(self, node: Node<'_>, text: &str) -> String {
        let source = |n: Node<'_>| one_line(&text[n.byte_range()]);
        // The given fields' text, those present, joined by `separator`.
        let fields = |names: [&str; 2], separator: &str| {
            names
                .iter()
                .filter_map(|name| node.child_by_field_name(name).map(source))
                .collect::<Vec<_>>()
                .join(separator)
        };
        match (self, node.kind()) {
            (Language::Rust, "impl_item") => {
                let ty = node.child_by_field_name("type").map(source);
                match (node.child_by_field_name("trait").map(source), ty) {
                    (Some(tr), Some(ty)) => format!("{tr} for {ty}"),
                    (_, ty) => ty.unwrap_or_default(),
                }
            }
            (Language::Go, "method_declaration") => fields(["receiver", "name"], " "),
            (Language::Go, "type_declaration") => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor)
                    .filter_map(|spec| spec.child_by_field_name("name"))
                    .map(source)
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            (Language::Ruby, "singleton_method") => fields(["object", "name"], "."),
            (_, "lexical_declaration" | "variable_declaration") => function_declarator(node)
                .and_then(|declarator| declarator.child_by_field_name("name"))
                .map(source)
                .unwrap_or_default(),
            (Language::C | Language::Cpp, "function_definition" | "type_definition") => node
                .child_by_field_name("declarator")
                .and_then(declared_name)
                .map(source)
                .unwrap_or_default(),
            _ => node
                .child_by_field_name("name")
                .map(source)
                .unwrap_or_default(),
        }
    }
}

/// The declarator of a JavaScript or TypeScript variable declaration whose value is a function.
fn function_declarator(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|child| child.kind() == "variable_declarator")
        .find(|declarator| {
            declarator
                .child_by_field_name("value")
                .is_some_and(|value| {
                    matches!(
                        value.kind(),
                        "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function"
                    )
                })
        })
}

/// The name a C or C++ declarator declares (`parse` in `static int *parse(char *s)`).
fn declared_name(mut node: Node<'_>) -> Option<Node<'_>> {
    while let Some(inner) = node.child_by_field_name("declarator") {
        node = inner;
    }
    Some(node)
}

/// The longest name a scope shows, in characters; a longer one is cut and ends in `…`.
const MAX_NAME_CHARS: usize = 120;

/// `text` on one line (runs of whitespace become one space), at most [`MAX_NAME_CHARS`] long.
fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MAX_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_say_the_language() {
        assert_eq!(
            source_kind("lib.rs"),
            Some(SourceKind::Parsed(Language::Rust))
        );
        assert_eq!(
            source_kind("App.TSX"),
            Some(SourceKind::Parsed(Language::Tsx))
        );
        assert_eq!(source_kind("build.gradle"), Some(SourceKind::Unparsed));
        assert_eq!(source_kind("Makefile"), Some(SourceKind::Unparsed));
        assert_eq!(source_kind("notes.md"), None);
        assert_eq!(source_kind("photo.png"), None);
        assert_eq!(source_kind("README"), None);
    }
}
