//! Names and shapes in the cluster: the alias of a collection, the index of a generation, the
//! index's settings and mapping (an analyser that produces the local engine's terms), and the
//! metadata each generation records (and its reading back).

use groundkit_core::Error;
use groundkit_retrieval::{self as retrieval, EmbeddingIdentity, LastChange};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::client::{Cluster, failure};

/// Separates a collection's alias from the generation number in its index names.
const GENERATION_MARK: &str = "--g";

/// Checks that collection `name` can live in a cluster: a valid collection name
/// ([`retrieval::validate_name`]), lowercase (index names are) and free of `--` (which
/// separates the generation in index names).
pub fn check_name(name: &str) -> Result<(), Error> {
    retrieval::validate_name(name)?;
    if name.bytes().any(|b| b.is_ascii_uppercase()) || name.contains("--") {
        return Err(Error::Validation {
            field: "collection".to_owned(),
            message: "a collection served from OpenSearch must be lowercase and contain no `--`"
                .to_owned(),
        });
    }
    Ok(())
}

/// Checks an alias prefix: lowercase letters, digits, `_` and `-`, starting with a letter.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), Error> {
    let ok = prefix.len() <= 32
        && prefix
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase())
        && prefix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !prefix.contains(GENERATION_MARK);
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidRequest {
            field: Some("opensearch-prefix".to_owned()),
            message: "must start with a lowercase letter and hold only lowercase letters, digits, \
                      `_` and `-` (at most 32, no `--g`)"
                .to_owned(),
        })
    }
}

/// The alias that names collection `name`'s current generation.
pub(crate) fn alias(prefix: &str, name: &str) -> String {
    format!("{prefix}{name}")
}

/// The index of generation `generation` of collection `name`.
pub(crate) fn index(prefix: &str, name: &str, generation: u64) -> String {
    format!("{prefix}{name}{GENERATION_MARK}{generation}")
}

/// The pattern matching every generation index of collection `name`.
pub(crate) fn index_pattern(prefix: &str, name: &str) -> String {
    format!("{prefix}{name}{GENERATION_MARK}*")
}

/// The generation of index `index` of the collection whose alias is `alias`.
pub(crate) fn generation_of(alias: &str, index: &str) -> Option<u64> {
    let digits = index.strip_prefix(alias)?.strip_prefix(GENERATION_MARK)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The layout of the generation indices this build publishes. 1: a chunk's `text` holds what a
/// search matches (its content, or for source code its scope and content with their identifiers
/// expanded, as the local engine indexes it) and is not kept in `_source`; 0, generations
/// published before: searches match `content`. 2: besides, `source` and `source_class` are
/// indexed and each chunk has its `format`, its source's `modified` time and its document's
/// `meta` terms, which filters read; generations of earlier layouts are not filtered. The time
/// is a keyword of [`modified_text`]'s zero-padded digits, not a number: the cluster rewrites a
/// numeric range that none of a shard's values can meet to "match nothing" on that shard,
/// which drops the shard from the term statistics a search gathers first, and scores would
/// then depend on the filter. 3: besides, each chunk has its document's `content_hash`, so a
/// publish can tell which documents changed since the index it starts from and send only
/// those; a publish over an index of an earlier layout sends every chunk.
pub(crate) const LAYOUT: u32 = 3;

/// How a chunk's modification time (seconds since the Unix epoch) is indexed: 20 digits, so
/// that text order is number order.
pub(crate) fn modified_text(seconds: u64) -> String {
    format!("{seconds:020}")
}

/// What a generation index records about itself, in its mapping's `_meta.groundkit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GenerationMeta {
    pub(crate) collection: String,
    pub(crate) generation: u64,
    pub(crate) document_count: u64,
    pub(crate) chunk_count: u64,
    pub(crate) schema_version: u32,
    /// Primary shards of the index (0: not recorded).
    #[serde(default)]
    pub(crate) shards: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) embedding: Option<EmbeddingIdentity>,
    /// The index's layout ([`LAYOUT`]; 0: not recorded).
    #[serde(default)]
    pub(crate) layout: u32,
    /// When the staging copy committed the generation, and what it changed (absent when it did
    /// not record it, or in an index published before this was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_change: Option<LastChange>,
}

impl GenerationMeta {
    /// The field a lexical search matches in this generation's index.
    pub(crate) fn matched_field(&self) -> &'static str {
        if self.layout >= 1 { "text" } else { "content" }
    }

    /// Whether this generation's index holds the fields filters read.
    pub(crate) fn filterable(&self) -> bool {
        self.layout >= 2
    }

    /// Whether an index of `next` can start from a copy of this generation's index and take
    /// only the documents that changed: it records each chunk's content hash, and holds its
    /// chunks as `next` would (same engine schema, shards and embedder).
    pub(crate) fn can_grow_into(&self, next: &GenerationMeta) -> bool {
        self.layout >= 3
            && self.layout == next.layout
            && self.collection == next.collection
            && self.generation < next.generation
            && self.schema_version == next.schema_version
            && self.shards == next.shards
            && self.embedding == next.embedding
    }
}

/// The fields of a chunk document that a search result or a fetch reads (everything but the
/// vector).
pub(crate) const RECORD_FIELDS: [&str; 14] = [
    "chunk_id",
    "document_id",
    "chunk_index",
    "start_offset",
    "end_offset",
    "content",
    "source",
    "source_class",
    "extractor",
    "snapshot",
    "record_offset",
    "scope",
    "start_line",
    "end_line",
];

/// What generation index `index` records about itself, read from its mapping.
pub(crate) fn read_meta(cluster: &Cluster, index: &str) -> Result<GenerationMeta, Error> {
    let answer = cluster.ok("GET", &format!("/{index}/_mapping"), None)?;
    answer
        .pointer(&format!("/{index}/mappings/_meta/groundkit"))
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| {
            failure(
                "a generation index carries no groundkit metadata",
                index.to_owned(),
            )
        })
}

/// The analyser of `text`: the local engine's (split on every character that is neither a
/// letter nor a digit, drop tokens of 40 bytes or more, lowercase, Lucene's English stop words,
/// Snowball English stemming), so that both backends index and match the same terms. (The
/// length filter counts UTF-16 units where the local engine counts bytes: they differ only for
/// tokens of non-ASCII letters near the limit.)
fn analysis() -> Value {
    json!({
        "analyzer": {
            "groundkit_en": {
                "type": "custom",
                "tokenizer": "groundkit_words",
                "filter": ["groundkit_short", "lowercase", "groundkit_stop", "groundkit_stem"]
            }
        },
        "tokenizer": {
            "groundkit_words": { "type": "pattern", "pattern": "[^\\p{IsAlphabetic}\\p{N}]+" }
        },
        "filter": {
            "groundkit_short": { "type": "length", "max": 39 },
            "groundkit_stop": { "type": "stop", "stopwords": "_english_" },
            "groundkit_stem": { "type": "snowball", "language": "English" }
        }
    })
}

/// The settings and mapping of a new generation index.
pub(crate) fn index_body(meta: &GenerationMeta, shards: u32, replicas: u32) -> Value {
    let mut properties = json!({
        "chunk_id": { "type": "keyword" },
        "document_id": { "type": "keyword" },
        "content_hash": { "type": "keyword" },
        "chunk_index": { "type": "integer", "index": false },
        "start_offset": { "type": "long", "index": false },
        "end_offset": { "type": "long", "index": false },
        "content": { "type": "text", "index": false },
        "text": { "type": "text", "analyzer": "groundkit_en" },
        "source": { "type": "keyword" },
        "source_class": { "type": "keyword" },
        "format": { "type": "keyword" },
        "modified": { "type": "keyword" },
        "meta": { "type": "keyword" },
        "extractor": { "type": "keyword", "index": false },
        "snapshot": { "type": "keyword", "index": false },
        "record_offset": { "type": "long", "index": false },
        "scope": { "type": "keyword", "index": false },
        "start_line": { "type": "integer", "index": false },
        "end_line": { "type": "integer", "index": false }
    });
    let mut index = json!({
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        "similarity": { "default": { "type": "BM25", "k1": 1.2, "b": 0.75 } },
        "analysis": analysis()
    });
    if let Some(identity) = &meta.embedding {
        properties["vector"] = json!({
            "type": "knn_vector",
            "dimension": identity.dimension,
            "method": { "name": "hnsw", "engine": "lucene", "space_type": "cosinesimil" }
        });
        index["knn"] = json!(true);
    }
    json!({
        "settings": { "index": index },
        "mappings": {
            "dynamic": "strict",
            "_source": { "excludes": ["text"] },
            "_meta": { "groundkit": meta },
            "properties": properties
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_cluster_cannot_hold_or_would_confuse_are_refused() {
        assert!(check_name("scifact").is_ok());
        assert!(check_name("a-b_c9").is_ok());
        for bad in ["SciFact", "a--g1", "a--b", "", "../x", "a b"] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_generation_is_read_back_only_from_its_own_collections_indices() {
        let alias = alias("groundkit-", "docs");
        assert_eq!(alias, "groundkit-docs");
        assert_eq!(index("groundkit-", "docs", 7), "groundkit-docs--g7");
        assert_eq!(generation_of(&alias, "groundkit-docs--g7"), Some(7));
        assert_eq!(generation_of(&alias, "groundkit-docs--g"), None);
        assert_eq!(generation_of(&alias, "groundkit-docs--g7x"), None);
        assert_eq!(generation_of(&alias, "groundkit-docs-x--g7"), None);
        assert_eq!(generation_of(&alias, "groundkit-doc--g7"), None);
    }

    #[test]
    fn prefixes_are_checked() {
        assert!(check_prefix("groundkit-").is_ok());
        assert!(check_prefix("team_a-").is_ok());
        for bad in ["", "-x", "Upper", "a/b", "a--g"] {
            assert!(check_prefix(bad).is_err(), "{bad:?} accepted");
        }
    }
}
