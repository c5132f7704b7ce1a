//! Source code, for ingest (the `code` feature): which files are source code (`language`), which
//! files are not worth reading as such (`skip`: binary, minified or generated, lock files,
//! vendored and build-output folders), and chunking a source file at its definitions with its
//! tree-sitter grammar (`definitions`), each chunk with its scope (`impl Parser › fn parse`).
//!
//! A code file stays a `text` source: every chunk is a byte range of the file, so `fetch_chunk`
//! verifies it by comparing bytes. A file whose language has no grammar here, or that its grammar
//! cannot parse, is chunked by the text chunker instead (without scopes).

mod definitions;
pub mod language;
pub mod skip;

use tree_sitter::{Node, Parser};

pub use crate::chunk::{Span, text_chunks};
pub use language::{Language, SourceKind, source_kind};

/// Between the entries of a scope: `class Session › def close`.
pub const SCOPE_SEPARATOR: &str = " › ";

/// Between the entries of the definitions that share a chunk: `class Session › def name; def
/// close`.
pub const ENTRY_SEPARATOR: &str = "; ";

/// The chunker name recorded for a source file chunked as text: its language has no grammar
/// here, or its grammar could not parse it.
pub const TEXT_CHUNKER: &str = "code-text@1";

/// The largest share of a file that syntax errors may cover for it to be chunked at its
/// definitions; a file with more is chunked as text.
const MAX_ERROR_SHARE: f64 = 0.25;

/// Chunks `text` at its definitions with `language`'s grammar, or `None` when the grammar cannot
/// parse it (the parser gives up, or syntax errors cover more than a quarter of the file).
pub fn chunk_definitions(language: Language, text: &str, max_bytes: usize) -> Option<Vec<Span>> {
    let mut parser = Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    let tree = parser.parse(text, None)?;
    let root = tree.root_node();
    if root.has_error() && error_bytes(root) as f64 > MAX_ERROR_SHARE * text.len() as f64 {
        return None;
    }
    Some(definitions::chunk_tree(language, text, root, max_bytes))
}

/// The bytes covered by syntax errors below `node` (outermost error nodes only).
fn error_bytes(node: Node<'_>) -> usize {
    let mut total = 0;
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            total += node.byte_range().len().max(1);
        } else if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    total
}

#[cfg(test)]
mod tests;
