//! A [`Selector`] evaluated over one generation: for each segment and each constrained field,
//! the set of the field's term ordinals that pass, so deciding a chunk is one column read and
//! one bit test per field.
//!
//! The ordinals are found in the segment's sorted dictionary of the field: a path prefix is a
//! range of it, a glob is matched against the terms under its literal prefix only, and a
//! class, format or document id is one lookup. The work is in the number of distinct values a
//! condition touches, never in the number of chunks.

use tantivy::columnar::Column;
use tantivy::{DocAddress, DocId, SegmentReader};

use super::{PathPattern, Selector};
use crate::lexical::LexicalIndex;
use groundkit_core::Error;

/// The chunks of one generation a filter keeps.
pub struct Selection {
    segments: Vec<SegmentSelection>,
}

impl std::fmt::Debug for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selection")
            .field("segments", &self.segments.len())
            .finish()
    }
}

/// The conditions of one segment, each on one column.
struct SegmentSelection {
    checks: Vec<Check>,
}

/// One condition on one column of a segment.
enum Check {
    /// The chunk's one term is among the ordinals.
    One(Column<u64>, Ordinals),
    /// One of the chunk's terms is among the ordinals.
    Any(Column<u64>, Ordinals),
    /// The chunk's value lies in the range (start inclusive, end exclusive).
    Range(Column<u64>, u64, u64),
    /// No chunk passes (the segment lacks the column: none of its chunks has the value).
    None,
}

impl Check {
    fn keeps(&self, doc: DocId) -> bool {
        match self {
            Check::One(column, set) => column.first(doc).is_some_and(|ord| set.contains(ord)),
            Check::Any(column, set) => column.values_for_doc(doc).any(|ord| set.contains(ord)),
            Check::Range(column, start, end) => column
                .first(doc)
                .is_some_and(|t| (*start..*end).contains(&t)),
            Check::None => false,
        }
    }
}

/// A set of term ordinals.
struct Ordinals(Vec<u64>);

impl Ordinals {
    fn new(len: usize) -> Self {
        Self(vec![0; len.div_ceil(64)])
    }

    fn insert(&mut self, ord: u64) {
        if let Some(word) = self.0.get_mut((ord / 64) as usize) {
            *word |= 1 << (ord % 64);
        }
    }

    fn remove(&mut self, ord: u64) {
        if let Some(word) = self.0.get_mut((ord / 64) as usize) {
            *word &= !(1 << (ord % 64));
        }
    }

    fn contains(&self, ord: u64) -> bool {
        self.0
            .get((ord / 64) as usize)
            .is_some_and(|word| word & (1 << (ord % 64)) != 0)
    }

    fn fill(&mut self) {
        self.0.fill(u64::MAX);
    }
}

fn unreadable(err: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::storage("cannot read the fields a filter reads", err)
}

/// An ordinal column of a string fast field and its segment's dictionary.
struct StrField {
    column: tantivy::columnar::StrColumn,
}

impl StrField {
    fn open(segment: &SegmentReader, name: &str) -> Result<Self, Error> {
        let column = segment
            .fast_fields()
            .str(name)
            .map_err(unreadable)?
            .ok_or_else(|| Error::Storage {
                message: format!("a segment has no column of the filtered field {name}"),
                source: None,
            })?;
        Ok(Self { column })
    }

    fn terms(&self) -> usize {
        self.column.dictionary().num_terms()
    }

    /// Calls `each` with the ordinal and text of every term from `start` (inclusive) up to
    /// `end` (exclusive; `None`: to the last).
    fn each_in(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        mut each: impl FnMut(u64, &[u8]),
    ) -> Result<(), Error> {
        let mut range = self.column.dictionary().range().ge(start);
        if let Some(end) = end {
            range = range.lt(end);
        }
        let mut stream = range.into_stream().map_err(unreadable)?;
        while stream.advance() {
            each(stream.term_ord(), stream.key());
        }
        Ok(())
    }

    /// The ordinals of the exact terms `values`.
    fn exact<'a>(&self, values: impl IntoIterator<Item = &'a str>) -> Result<Ordinals, Error> {
        let mut set = Ordinals::new(self.terms());
        for value in values {
            if let Some(ord) = self
                .column
                .dictionary()
                .term_ord(value)
                .map_err(unreadable)?
            {
                set.insert(ord);
            }
        }
        Ok(set)
    }

    /// Applies `pattern` to `set`: `keep` inserts the terms it matches, otherwise removes them.
    fn apply(&self, pattern: &PathPattern, set: &mut Ordinals, keep: bool) -> Result<(), Error> {
        let mut mark = |ord| {
            if keep {
                set.insert(ord);
            } else {
                set.remove(ord);
            }
        };
        match pattern {
            PathPattern::Prefix(prefix) => {
                let prefix = prefix.as_bytes();
                self.each_in(prefix, prefix_end(prefix).as_deref(), |ord, term| {
                    if pattern.matches(std::str::from_utf8(term).unwrap_or_default()) {
                        mark(ord);
                    }
                })
            }
            PathPattern::Glob { literal, .. } => {
                let literal = literal.as_bytes();
                self.each_in(literal, prefix_end(literal).as_deref(), |ord, term| {
                    if std::str::from_utf8(term).is_ok_and(|t| pattern.matches(t)) {
                        mark(ord);
                    }
                })
            }
        }
    }
}

/// The least byte string greater than every string that starts with `prefix` (`None`: no
/// bound, for an empty prefix or one of 0xFF bytes only).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

impl Selection {
    /// The chunks of the generation `index` reads that `selector` keeps.
    pub(crate) fn new(selector: &Selector, index: &LexicalIndex) -> Result<Self, Error> {
        if index.fields.filtered.is_none() {
            return Err(Error::Validation {
                field: "filter".to_owned(),
                message: "this collection was ingested by an older version and cannot be \
                          filtered until it is ingested again"
                    .to_owned(),
            });
        }
        let segments = index
            .searcher
            .segment_readers()
            .iter()
            .map(|segment| SegmentSelection::new(selector, segment))
            .collect::<Result<_, _>>()?;
        Ok(Self { segments })
    }

    /// Whether the chunk at `address` passes.
    pub(crate) fn keeps(&self, address: DocAddress) -> bool {
        self.segments[address.segment_ord as usize].keeps(address.doc_id)
    }
}

impl SegmentSelection {
    fn new(selector: &Selector, segment: &SegmentReader) -> Result<Self, Error> {
        let mut checks = Vec::new();
        if selector.has_paths() {
            let source = StrField::open(segment, "source")?;
            let mut set = Ordinals::new(source.terms());
            if selector.include().is_empty() {
                set.fill();
            }
            for pattern in selector.include() {
                source.apply(pattern, &mut set, true)?;
            }
            for pattern in selector.exclude() {
                source.apply(pattern, &mut set, false)?;
            }
            checks.push(Check::One(source.column.ords().clone(), set));
        }
        let exact = [
            ("source_class", selector.classes().to_vec()),
            (
                "format",
                selector.formats().iter().map(String::as_str).collect(),
            ),
            (
                "document_id",
                selector.document_ids().iter().map(String::as_str).collect(),
            ),
        ];
        for (name, values) in exact {
            if values.is_empty() {
                continue;
            }
            let field = StrField::open(segment, name)?;
            let set = field.exact(values)?;
            checks.push(Check::One(field.column.ords().clone(), set));
        }
        if let Some((start, end)) = selector.modified() {
            let column = segment.fast_fields().u64("modified").ok();
            checks.push(match column {
                Some(column) => Check::Range(column, start, end),
                None => Check::None,
            });
        }
        for terms in selector.metadata() {
            let found = segment.fast_fields().str("meta").map_err(unreadable)?;
            checks.push(match found {
                Some(column) => {
                    let field = StrField { column };
                    let set = field.exact(terms.iter().map(String::as_str))?;
                    Check::Any(field.column.ords().clone(), set)
                }
                None => Check::None,
            });
        }
        Ok(Self { checks })
    }

    fn keeps(&self, doc: DocId) -> bool {
        self.checks.iter().all(|check| check.keeps(doc))
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn the_end_of_a_prefix_range_is_its_last_byte_raised() {
        assert_eq!(prefix_end(b"src/"), Some(b"src0".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        assert_eq!(prefix_end(b""), None);
    }
}
