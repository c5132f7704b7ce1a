//! Cutting a parsed file at its definitions.
//!
//! A definition (with the comments and attributes right before it, no blank line between) fits
//! the budget or is cut at the definitions nested in it, and what lies between those (its header,
//! statements) is cut at blank lines. At each level, the pieces that fit (definitions, and what
//! lies between them: imports, constants, statements) share a chunk with their neighbours up to
//! the budget; a paragraph still too large goes to the text chunker. Every chunk is a trimmed byte
//! range of the file and carries the scope it lies in: a chunk of several definitions lists their
//! entries after their common parent (`class Session › def name; def close`).
//!
//! Trees are walked with explicit stacks, and definitions are cut into nested ones at most
//! [`MAX_DEPTH`] deep (deeper, a definition is cut at blank lines), so no input, however deeply
//! nested, can exhaust the thread's stack.

use tree_sitter::Node;

use crate::chunk::chunk_spans;
use crate::code::language::Language;
use crate::code::{ENTRY_SEPARATOR, SCOPE_SEPARATOR, Span};

/// How many definitions deep an oversized definition is cut at the ones nested in it.
pub(crate) const MAX_DEPTH: usize = 32;

/// Chunks the file `text`, whose syntax tree is `root`, into spans of at most `max_bytes` bytes
/// (where a single paragraph allows).
pub(crate) fn chunk_tree(
    language: Language,
    text: &str,
    root: Node<'_>,
    max_bytes: usize,
) -> Vec<Span> {
    let mut cutter = Cutter {
        language,
        text,
        max_bytes,
        chunks: Vec::new(),
    };
    // A namespace statement (PHP's `namespace App;`, C#'s `namespace App;`) scopes the rest of
    // the file, up to the next one.
    let mut segments = vec![(0, String::new())];
    let mut cursor = root.walk();
    segments.extend(
        root.named_children(&mut cursor)
            .filter_map(|node| Some((node.start_byte(), language.file_scope(node, text)?))),
    );
    for (i, (start, scope)) in segments.iter().enumerate() {
        let end = segments.get(i + 1).map_or(text.len(), |next| next.0);
        cutter.region(*start, end, scope, root, 0);
    }
    cutter.chunks
}

struct Cutter<'a> {
    language: Language,
    text: &'a str,
    max_bytes: usize,
    chunks: Vec<Span>,
}

/// A piece of one level of a region, not yet pushed: a definition that fits the budget (with its
/// scope entry) or a run of what lies between definitions.
struct Leaf {
    start: usize,
    end: usize,
    entry: Option<String>,
}

impl Cutter<'_> {
    /// Cuts `start..end`, in scope `scope`, at the definitions nested in `container` (which is
    /// `depth` definitions deep) that lie in it.
    fn region(&mut self, start: usize, end: usize, scope: &str, container: Node<'_>, depth: usize) {
        let nested = self.nested_definitions(container);
        let mut pending = Vec::new();
        let mut cursor = start;
        let inside = |node: &Node<'_>| node.start_byte() >= start && node.end_byte() <= end;
        for outer in nested.into_iter().filter(inside) {
            let Some(inner) = self.language.definition(outer) else {
                continue;
            };
            let from = self.leading_start(outer, cursor).max(cursor);
            let to = outer.end_byte().min(end);
            if from >= to {
                continue;
            }
            self.between(cursor, from, &mut pending);
            let entry = self.language.scope_entry(inner, self.text);
            if to - from <= self.max_bytes {
                pending.push(Leaf {
                    start: from,
                    end: to,
                    entry: Some(entry),
                });
            } else {
                self.flush(&mut pending, scope);
                let inner_scope = nest(scope, &entry);
                if depth < MAX_DEPTH {
                    self.region(from, to, &inner_scope, inner, depth + 1);
                } else {
                    let mut body = Vec::new();
                    self.between(from, to, &mut body);
                    self.flush(&mut body, &inner_scope);
                }
            }
            cursor = to;
        }
        self.between(cursor, end, &mut pending);
        self.flush(&mut pending, scope);
    }

    /// Pushes the `pending` pieces of a level in scope `scope`, consecutive ones sharing a chunk
    /// up to the budget. A chunk's scope is the level's scope followed by the entries of the
    /// definitions in it (`class Session › def name; def close`), or the level's scope alone
    /// when it holds none.
    fn flush(&mut self, pending: &mut Vec<Leaf>, scope: &str) {
        let mut group: Vec<Leaf> = Vec::new();
        for leaf in pending.drain(..) {
            if group
                .first()
                .is_some_and(|first| leaf.end - first.start > self.max_bytes)
            {
                self.push_group(&group, scope);
                group.clear();
            }
            group.push(leaf);
        }
        self.push_group(&group, scope);
    }

    fn push_group(&mut self, group: &[Leaf], scope: &str) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            return;
        };
        let entries: Vec<&str> = group.iter().filter_map(|l| l.entry.as_deref()).collect();
        let scope = if entries.is_empty() {
            scope.to_owned()
        } else {
            nest(scope, &entries.join(ENTRY_SEPARATOR))
        };
        self.push(first.start, last.end, &scope);
    }

    /// The outermost definitions below `node`, in order (a definition's own nested ones are
    /// found when it is cut).
    fn nested_definitions<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut found = Vec::new();
        let mut stack = named_children_reversed(node);
        while let Some(child) = stack.pop() {
            if self.language.definition(child).is_some() {
                found.push(child);
            } else {
                stack.extend(named_children_reversed(child));
            }
        }
        found
    }

    /// Where definition `node` starts once the comments and attributes right before it (no
    /// blank line between, none before `floor`) are counted in.
    fn leading_start(&self, node: Node<'_>, floor: usize) -> usize {
        let mut start = node.start_byte();
        let mut previous = node.prev_named_sibling();
        while let Some(lead) = previous {
            if lead.start_byte() < floor
                || !self.language.is_leading(lead)
                || !adjoining(self.text, lead.end_byte(), start)
            {
                break;
            }
            start = lead.start_byte();
            previous = lead.prev_named_sibling();
        }
        start
    }

    /// What lies between definitions, as pieces: one when it fits, else cut at blank lines (a
    /// paragraph still too large cut by the text chunker).
    fn between(&self, start: usize, end: usize, out: &mut Vec<Leaf>) {
        let (start, end) = trim(self.text, start, end);
        if start >= end {
            return;
        }
        let mut piece = |start, end| {
            out.push(Leaf {
                start,
                end,
                entry: None,
            })
        };
        if end - start <= self.max_bytes {
            piece(start, end);
            return;
        }
        let mut current: Option<(usize, usize)> = None;
        for (p_start, p_end) in paragraphs(self.text, start, end) {
            match current {
                Some((c_start, _)) if p_end - c_start <= self.max_bytes => {
                    current = Some((c_start, p_end));
                }
                _ => {
                    if let Some((c_start, c_end)) = current.take() {
                        piece(c_start, c_end);
                    }
                    if p_end - p_start <= self.max_bytes {
                        current = Some((p_start, p_end));
                    } else {
                        for (s, e) in chunk_spans(&self.text[p_start..p_end], self.max_bytes) {
                            let (s, e) = trim(self.text, p_start + s, p_start + e);
                            if s < e {
                                piece(s, e);
                            }
                        }
                    }
                }
            }
        }
        if let Some((c_start, c_end)) = current {
            piece(c_start, c_end);
        }
    }

    fn push(&mut self, start: usize, end: usize, scope: &str) {
        let (start, end) = trim(self.text, start, end);
        if start < end {
            self.chunks.push(Span {
                start,
                end,
                scope: scope.to_owned(),
            });
        }
    }
}

/// `scope › entry`, or `entry` at the top level.
fn nest(scope: &str, entry: &str) -> String {
    if scope.is_empty() {
        entry.to_owned()
    } else {
        format!("{scope}{SCOPE_SEPARATOR}{entry}")
    }
}

/// The named children of `node`, last first (so a stack pops them in order).
fn named_children_reversed(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    let mut children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    children.reverse();
    children
}

/// Whether the whitespace between `end` and `start` holds no blank line.
fn adjoining(text: &str, end: usize, start: usize) -> bool {
    let Some(gap) = text.get(end..start) else {
        return false;
    };
    let newlines = gap.matches('\n').count() + usize::from(text[..end].ends_with('\n'));
    gap.trim().is_empty() && newlines < 2
}

/// `start..end` without leading and trailing whitespace.
fn trim(text: &str, start: usize, end: usize) -> (usize, usize) {
    let slice = &text[start..end];
    let lead = slice.len() - slice.trim_start().len();
    let trail = slice.len() - slice.trim_end().len();
    (start + lead, (end - trail).max(start + lead))
}

/// The runs of non-blank lines in `start..end`, each without its surrounding whitespace.
fn paragraphs(text: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut line_start = start;
    for line in text[start..end].split_inclusive('\n') {
        let line_end = line_start + line.len();
        if line.trim().is_empty() {
            out.extend(current.take());
        } else {
            let (s, e) = trim(text, line_start, line_end);
            current = Some(current.map_or((s, e), |(c, _)| (c, e)));
        }
        line_start = line_end;
    }
    out.extend(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_runs_of_non_blank_lines() {
        let text = "a\nb\n\n  \nc\n";
        assert_eq!(paragraphs(text, 0, text.len()), vec![(0, 3), (8, 9)]);
    }

    #[test]
    fn a_comment_separated_by_a_blank_line_does_not_adjoin() {
        assert!(adjoining("// doc\nfn a() {}", 6, 7));
        assert!(!adjoining("// doc\n\nfn a() {}", 6, 8));
    }
}
