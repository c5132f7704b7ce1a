//! Judging a ranking by lines: a judgement whose corpus id is `PATH#L10-L42` names lines 10 to
//! 42 of document `PATH` (a function, say), and a ranked chunk of `PATH` whose lines overlap
//! them finds that target.
//!
//! The ranking judged is one of targets and chunks: a chunk stands for the first target (in the
//! order of their ids) it overlaps that no chunk ranked before it found, or, when it overlaps only
//! targets already found, for the first of those (so each target counts once, at its best chunk);
//! a chunk that overlaps no target stands for itself. A chunk without lines (an extracted
//! source's) overlaps nothing.

use std::collections::{HashMap, HashSet};

use crate::search::HitPlace;

/// Lines `first..=last` of a document, as a judgement names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineTarget<'a> {
    /// The document.
    pub document_id: &'a str,
    /// First line, from 1.
    pub first: u32,
    /// Last line (inclusive).
    pub last: u32,
}

/// The lines a corpus id names: `PATH#L<first>-L<last>`, `1 <= first <= last`; `None` for any
/// other id (a BEIR document id).
pub fn line_target(corpus_id: &str) -> Option<LineTarget<'_>> {
    let (document_id, lines) = corpus_id.rsplit_once("#L")?;
    let (first, last) = lines.split_once("-L")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if document_id.is_empty() || !digits(first) || !digits(last) {
        return None;
    }
    let (first, last) = (first.parse().ok()?, last.parse().ok()?);
    (1 <= first && first <= last).then_some(LineTarget {
        document_id,
        first,
        last,
    })
}

/// Whether a query's judgements name lines: every corpus id judged is a [`line_target`].
pub fn judges_lines(judged: &HashMap<String, u32>) -> bool {
    !judged.is_empty() && judged.keys().all(|id| line_target(id).is_some())
}

/// What the ranked chunk at `place` stands for in a ranking judged by `judged` (see the module
/// docs), given the ids of the targets and chunks `ranked` before it.
pub fn ranked_unit(
    place: &HitPlace,
    judged: &HashMap<String, u32>,
    ranked: &HashSet<String>,
) -> String {
    let mut overlapped: Vec<&String> = judged
        .keys()
        .filter(|id| line_target(id).is_some_and(|target| overlaps(place, target)))
        .collect();
    overlapped.sort_unstable();
    overlapped
        .iter()
        .find(|id| !ranked.contains(id.as_str()))
        .or(overlapped.first())
        .map_or_else(|| place.chunk_id.clone(), |id| (*id).clone())
}

fn overlaps(place: &HitPlace, target: LineTarget<'_>) -> bool {
    place.document_id == target.document_id
        && place
            .lines
            .is_some_and(|(first, last)| first <= target.last && target.first <= last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(document_id: &str, chunk_id: &str, lines: Option<(u32, u32)>) -> HitPlace {
        HitPlace {
            document_id: document_id.to_owned(),
            chunk_id: chunk_id.to_owned(),
            lines,
        }
    }

    #[test]
    fn only_well_formed_line_ids_are_targets() {
        assert_eq!(
            line_target("src/a.py#L10-L42"),
            Some(LineTarget {
                document_id: "src/a.py",
                first: 10,
                last: 42
            })
        );
        assert_eq!(
            line_target("a#b.py#L3-L3").map(|t| t.document_id),
            Some("a#b.py")
        );
        for id in [
            "4983",
            "a.py#L0-L2",
            "a.py#L5-L4",
            "a.py#L1-2",
            "#L1-L2",
            "a.py#L-1-L2",
            "a.py#L+1-L2",
        ] {
            assert_eq!(line_target(id), None, "{id}");
        }
        let beir: HashMap<String, u32> = [("4983".to_owned(), 1)].into();
        let lines: HashMap<String, u32> = [("a.py#L1-L2".to_owned(), 1)].into();
        assert!(!judges_lines(&beir) && judges_lines(&lines));
    }

    #[test]
    fn a_chunk_stands_for_the_first_target_it_overlaps_not_yet_found_else_itself() {
        let judged: HashMap<String, u32> = [
            ("a.py#L10-L20".to_owned(), 1),
            ("a.py#L15-L30".to_owned(), 1),
        ]
        .into();
        let mut ranked = HashSet::new();
        // Lines 20..25 overlap both targets: the first by id.
        let both = place("a.py", "c1", Some((20, 25)));
        assert_eq!(ranked_unit(&both, &judged, &ranked), "a.py#L10-L20");
        ranked.insert("a.py#L10-L20".to_owned());
        assert_eq!(ranked_unit(&both, &judged, &ranked), "a.py#L15-L30");
        ranked.insert("a.py#L15-L30".to_owned());
        // Everything it overlaps was found: it repeats the first, which a ranking drops.
        assert_eq!(ranked_unit(&both, &judged, &ranked), "a.py#L10-L20");
        // Touching the last line counts; the line after does not; nor another file, nor no lines.
        assert_eq!(
            ranked_unit(
                &place("a.py", "c2", Some((30, 40))),
                &judged,
                &HashSet::new()
            ),
            "a.py#L15-L30"
        );
        assert_eq!(
            ranked_unit(
                &place("a.py", "c3", Some((31, 40))),
                &judged,
                &HashSet::new()
            ),
            "c3"
        );
        assert_eq!(
            ranked_unit(
                &place("b.py", "c4", Some((10, 20))),
                &judged,
                &HashSet::new()
            ),
            "c4"
        );
        assert_eq!(
            ranked_unit(&place("a.py", "c5", None), &judged, &HashSet::new()),
            "c5"
        );
    }
}
