//! Search filters: which chunks a search may return, by their source's path, class, format and
//! modification time and their document's id and metadata. A [`Filter`] is checked once per search ([`Filter::compile`], every
//! fault a `validation_error` naming its field) and evaluated per chunk from the generation's
//! fast fields (`select`), before a chunk can enter a ranking, so a filtered search ranks
//! exactly the chunks that pass: its top k are the top k of ranking every passing chunk, scored
//! as the unfiltered search scores them.

pub(crate) mod select;

use globset::{GlobBuilder, GlobMatcher};

pub use crate::model::{Filter, MetaScalar, MetaValue};
use groundkit_core::Error;

/// The most values one list of a filter holds.
pub const MAX_FILTER_VALUES: usize = 100;
/// The most document ids a filter names.
pub const MAX_FILTER_DOCUMENT_IDS: usize = 1_000;
/// The longest path pattern, in bytes.
pub const MAX_PATH_PATTERN_BYTES: usize = 512;

impl Filter {
    /// Checks the filter and prepares it for evaluation.
    pub fn compile(&self) -> Result<Selector, Error> {
        let invalid = |field: String, message: String| Error::Validation {
            field: format!("filter.{field}"),
            message,
        };
        if let Some(field) = self.unknown.keys().next() {
            return Err(invalid(
                field.clone(),
                "is not a filter field (paths, exclude_paths, source_class, format, document_ids, \
                 modified_after, modified_before, metadata)"
                    .into(),
            ));
        }
        let lists = [
            ("paths", self.paths.len(), MAX_FILTER_VALUES),
            ("exclude_paths", self.exclude_paths.len(), MAX_FILTER_VALUES),
            ("source_class", self.source_class.len(), MAX_FILTER_VALUES),
            ("format", self.format.len(), MAX_FILTER_VALUES),
            (
                "document_ids",
                self.document_ids.len(),
                MAX_FILTER_DOCUMENT_IDS,
            ),
        ];
        for (name, len, max) in lists {
            if len > max {
                return Err(invalid(
                    name.into(),
                    format!("must hold at most {max} values"),
                ));
            }
        }
        let patterns = |name: &str, list: &[String]| {
            list.iter()
                .enumerate()
                .map(|(i, p)| PathPattern::parse(p).map_err(|m| invalid(format!("{name}[{i}]"), m)))
                .collect::<Result<Vec<_>, _>>()
        };
        for (i, format) in self.format.iter().enumerate() {
            let valid = (1..=32).contains(&format.len())
                && format
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-_".contains(&b));
            if !valid {
                return Err(invalid(
                    format!("format[{i}]"),
                    "must be a format name: 1 to 32 lowercase letters, digits, `+`, `-` or `_`"
                        .into(),
                ));
            }
        }
        for (i, id) in self.document_ids.iter().enumerate() {
            if id.is_empty() || id.len() > 1024 {
                return Err(invalid(
                    format!("document_ids[{i}]"),
                    "must be a document id of 1 to 1024 bytes".into(),
                ));
            }
        }
        let time = |name: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|v| unix_seconds(v).ok_or_else(|| invalid(name.into(), TIME_FORMS.into())))
                .transpose()
        };
        let modified = match (
            time("modified_after", &self.modified_after)?,
            time("modified_before", &self.modified_before)?,
        ) {
            (None, None) => None,
            (after, before) => Some((after.unwrap_or(0), before.unwrap_or(u64::MAX))),
        };
        if self.metadata.len() > MAX_FILTER_VALUES {
            return Err(invalid(
                "metadata".into(),
                format!("must name at most {MAX_FILTER_VALUES} fields"),
            ));
        }
        let mut metadata = Vec::with_capacity(self.metadata.len());
        for (name, value) in &self.metadata {
            let values = match value {
                MetaValue::One(one) => std::slice::from_ref(one),
                MetaValue::Any(list) => list.as_slice(),
            };
            if values.is_empty() || values.len() > MAX_FILTER_VALUES {
                return Err(invalid(
                    format!("metadata.{name}"),
                    format!("must be a value, or a list of 1 to {MAX_FILTER_VALUES} values"),
                ));
            }
            metadata.push(values.iter().map(|v| meta_term(name, &v.text())).collect());
        }
        Ok(Selector {
            include: patterns("paths", &self.paths)?,
            exclude: patterns("exclude_paths", &self.exclude_paths)?,
            classes: self.source_class.iter().map(|c| c.as_str()).collect(),
            formats: self.format.clone(),
            document_ids: self.document_ids.clone(),
            modified,
            metadata,
        })
    }
}

/// A checked [`Filter`], ready to be evaluated over a generation.
#[derive(Debug, Clone)]
pub struct Selector {
    include: Vec<PathPattern>,
    exclude: Vec<PathPattern>,
    classes: Vec<&'static str>,
    formats: Vec<String>,
    document_ids: Vec<String>,
    modified: Option<(u64, u64)>,
    metadata: Vec<Vec<String>>,
}

impl Selector {
    /// Whether the filter has path conditions.
    fn has_paths(&self) -> bool {
        !(self.include.is_empty() && self.exclude.is_empty())
    }

    /// The path patterns a chunk's source must match one of (empty: any source).
    pub fn include(&self) -> &[PathPattern] {
        &self.include
    }

    /// The path patterns a chunk's source must match none of.
    pub fn exclude(&self) -> &[PathPattern] {
        &self.exclude
    }

    /// The source classes kept (empty: every class).
    pub fn classes(&self) -> &[&'static str] {
        &self.classes
    }

    /// The formats kept (empty: every format).
    pub fn formats(&self) -> &[String] {
        &self.formats
    }

    /// The documents kept (empty: every document).
    pub fn document_ids(&self) -> &[String] {
        &self.document_ids
    }

    /// The modification times kept, from the first (inclusive) to the second (exclusive), in
    /// seconds since the Unix epoch; `None`: any time, or none.
    pub fn modified(&self) -> Option<(u64, u64)> {
        self.modified
    }

    /// Per metadata field named, the terms ([`meta_term`]) a chunk's document must hold one of.
    pub fn metadata(&self) -> &[Vec<String>] {
        &self.metadata
    }
}

/// One path condition: a prefix ending at a `/`, or a glob over the whole source.
#[derive(Debug, Clone)]
pub enum PathPattern {
    /// Sources equal to the prefix or under it (`prefix/...`); a prefix ending in `/` keeps
    /// only what is under it.
    Prefix(String),
    /// Sources the glob matches, and the literal text every one of them starts with.
    Glob {
        /// The glob.
        matcher: GlobMatcher,
        /// Its text before the first wildcard.
        literal: String,
    },
}

impl PathPattern {
    fn parse(pattern: &str) -> Result<Self, String> {
        if pattern.is_empty() || pattern.len() > MAX_PATH_PATTERN_BYTES {
            return Err(format!(
                "must be a path or glob of 1 to {MAX_PATH_PATTERN_BYTES} bytes"
            ));
        }
        let Some(wild) = pattern.find(['*', '?', '[', '{', '\\']) else {
            return Ok(PathPattern::Prefix(pattern.to_owned()));
        };
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| format!("is not a valid glob: {}", err.kind()))?;
        Ok(PathPattern::Glob {
            matcher: glob.compile_matcher(),
            literal: pattern[..wild].to_owned(),
        })
    }

    /// Whether `source` matches.
    pub fn matches(&self, source: &str) -> bool {
        match self {
            PathPattern::Prefix(prefix) => {
                source.strip_prefix(prefix.as_str()).is_some_and(|rest| {
                    rest.is_empty() || prefix.ends_with('/') || rest.starts_with('/')
                })
            }
            PathPattern::Glob { matcher, .. } => matcher.is_match(source),
        }
    }
}

/// What a time in a filter may be.
const TIME_FORMS: &str = "must be an RFC 3339 time (2026-12-01T09:30:00Z) or a date (2026-12-01)";

/// `text` (RFC 3339, or a date: midnight UTC) in seconds since the Unix epoch, a time before the
/// epoch counting as the epoch (no file ingested is older); `None` when it is neither form.
fn unix_seconds(text: &str) -> Option<u64> {
    use time::format_description::well_known::Rfc3339;
    let at = match time::OffsetDateTime::parse(text, &Rfc3339) {
        Ok(at) => at,
        Err(_) => {
            let mut parts = text.splitn(3, '-');
            let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
            let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
            if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
                return None;
            }
            let month = time::Month::try_from(month.parse::<u8>().ok()?).ok()?;
            time::Date::from_calendar_date(year.parse().ok()?, month, day.parse().ok()?)
                .ok()?
                .midnight()
                .assume_utc()
        }
    };
    Some(u64::try_from(at.unix_timestamp()).unwrap_or(0))
}

/// The term a document's metadata field `name` holding `value` is indexed as, and a filter
/// looks for: the two joined by `=` (a field name holds none).
pub fn meta_term(name: &str, value: &str) -> String {
    format!("{name}={value}")
}

/// The format of a chunk of `source`, read with `extractor` (the recorded identity, if any):
/// a code chunker's language, an extractor's format, or else the source's extension (see
/// [`Filter::format`]).
pub fn format_of(source: &str, extractor: Option<&str>) -> String {
    // Source code without a grammar here is chunked as text: its extension says what it is.
    let extractor =
        extractor.filter(|e| !e.is_empty() && !e.starts_with(crate::analysis::CODE_TEXT_CHUNKER));
    if let Some(extractor) = extractor {
        // The last of an attachment's extractors read it: `mail-attachment@1+groundkit-docx@1`.
        let last = extractor.rsplit('+').next().unwrap_or(extractor);
        let name = last.split('@').next().unwrap_or(last);
        let name = name
            .strip_prefix(crate::analysis::CODE_CHUNKER_PREFIX)
            .or_else(|| name.strip_prefix("groundkit-"))
            .unwrap_or(name);
        return match name {
            "beir-jsonl" => "beir".to_owned(),
            "pdf-extract" => "pdf".to_owned(),
            other => other.to_owned(),
        };
    }
    let name = source.rsplit('/').next().unwrap_or(source);
    let extension = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => return "text".to_owned(),
    };
    match extension.as_str() {
        "md" | "markdown" => "markdown",
        "txt" | "text" => "text",
        "yml" | "yaml" => "yaml",
        "htm" | "html" | "xhtml" => "html",
        "adoc" | "asciidoc" => "asciidoc",
        other => other,
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> PathPattern {
        PathPattern::parse(text).expect("a valid pattern")
    }

    #[test]
    fn a_prefix_ends_at_a_slash_and_a_glob_star_stays_in_its_directory() {
        let net = pattern("src/net");
        assert!(net.matches("src/net"));
        assert!(net.matches("src/net/tcp.rs"));
        assert!(!net.matches("src/network.rs"));
        assert!(!pattern("src/net/").matches("src/net"));
        assert!(pattern("src/net/").matches("src/net/a/b.rs"));
        let star = pattern("docs/*.md");
        assert!(star.matches("docs/intro.md"));
        assert!(!star.matches("docs/guide/intro.md"));
        let any = pattern("**/*.py");
        assert!(any.matches("a.py") && any.matches("lib/x/y.py"));
        assert!(!any.matches("lib/y.pyc"));
        assert!(pattern("{src,docs}/**").matches("docs/a/b.md"));
        assert!(pattern("http://example.com/docs").matches("http://example.com/docs/page"));
    }

    #[test]
    fn a_malformed_filter_names_the_field_at_fault() {
        let cases = [
            (
                Filter {
                    paths: vec!["src".into(), "src/[a".into()],
                    ..Filter::default()
                },
                "filter.paths[1]",
            ),
            (
                Filter {
                    exclude_paths: vec![String::new()],
                    ..Filter::default()
                },
                "filter.exclude_paths[0]",
            ),
            (
                Filter {
                    format: vec!["Python".into()],
                    ..Filter::default()
                },
                "filter.format[0]",
            ),
            (
                Filter {
                    document_ids: vec!["x".into(); MAX_FILTER_DOCUMENT_IDS + 1],
                    ..Filter::default()
                },
                "filter.document_ids",
            ),
            (
                serde_json::from_value(serde_json::json!({"paths": ["a"], "author": "x"}))
                    .expect("a filter with an unknown field"),
                "filter.author",
            ),
            (
                Filter {
                    modified_after: Some("2026-13-01".into()),
                    ..Filter::default()
                },
                "filter.modified_after",
            ),
            (
                Filter {
                    modified_before: Some("yesterday".into()),
                    ..Filter::default()
                },
                "filter.modified_before",
            ),
            (
                serde_json::from_value(serde_json::json!({"metadata": {"tags": []}}))
                    .expect("a filter"),
                "filter.metadata.tags",
            ),
        ];
        for (filter, field) in cases {
            match filter.compile() {
                Err(Error::Validation { field: got, .. }) => assert_eq!(got, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn times_are_rfc_3339_or_dates_at_midnight_utc() {
        assert_eq!(unix_seconds("1970-01-01"), Some(0));
        assert_eq!(unix_seconds("1969-12-31"), Some(0));
        assert_eq!(unix_seconds("0001-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_seconds("2026-12-01"), Some(1_796_083_200));
        assert_eq!(
            unix_seconds("2026-12-01T01:00:00+01:00"),
            Some(1_796_083_200)
        );
        assert_eq!(unix_seconds("2026-12-01T00:00:01Z"), Some(1_796_083_201));
        for bad in [
            "2026-2-01",
            "2026-02-30",
            "01/12/2026",
            "",
            "2026-12-01T25:00:00Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_format_is_the_language_the_extractor_or_the_extension() {
        assert_eq!(format_of("src/lib.rs", Some("code-rust@2")), "rust");
        assert_eq!(format_of("a/b.pdf", Some("groundkit-pdf@1")), "pdf");
        assert_eq!(format_of("a/b.pdf", Some("pdf-extract@0.12")), "pdf");
        assert_eq!(
            format_of("m.eml", Some("mail-attachment@1+groundkit-docx@1")),
            "docx"
        );
        assert_eq!(format_of("corpus.jsonl", Some("beir-jsonl@1")), "beir");
        assert_eq!(format_of("notes/A.MD", None), "markdown");
        assert_eq!(format_of("c.yml", None), "yaml");
        assert_eq!(format_of("Makefile", None), "text");
        assert_eq!(format_of(".env", None), "text");
        assert_eq!(format_of("build.gradle", None), "gradle");
        assert_eq!(format_of("app/Main.kt", Some("code-text@1")), "kt");
    }
}
