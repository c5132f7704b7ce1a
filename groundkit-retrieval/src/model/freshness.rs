//! How fresh a collection is: when its committed generation was published and what it changed,
//! and the state of the watcher following its files, as `index_status` reports them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// When a generation was published, and what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LastChange {
    /// When its commit was written (RFC 3339, UTC).
    pub at: String,
    /// Documents it added.
    pub added: u64,
    /// Documents whose content it replaced.
    pub updated: u64,
    /// Documents it removed (their source is gone).
    pub removed: u64,
}

/// A watcher following a collection's files and publishing a generation for each settled burst
/// of changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatcherStatus {
    /// When it started following (RFC 3339, UTC).
    pub since: String,
    /// How it learns of changes.
    pub mode: WatchMode,
    /// Changed paths it has noticed and not yet published; a path changed several times counts
    /// once.
    pub pending_changes: u64,
    /// When the oldest pending change was noticed (RFC 3339, UTC); absent when none is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_since: Option<String>,
    /// Whether it is building a generation now.
    pub publishing: bool,
    /// Generations it has published since it started.
    pub generations: u64,
}

/// How a watcher learns of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WatchMode {
    /// The system's file notifications (inotify, FSEvents, ReadDirectoryChangesW).
    Notify,
    /// Reading the tree's metadata at an interval: where notifications are unavailable, or past
    /// the system's limit on watches.
    Poll,
}

/// `at` as RFC 3339 in UTC, to the millisecond.
pub(crate) fn rfc3339(at: time::OffsetDateTime) -> String {
    use time::format_description::well_known::Rfc3339;
    let at = at.to_offset(time::UtcOffset::UTC);
    at.replace_nanosecond(at.millisecond() as u32 * 1_000_000)
        .unwrap_or(at)
        .format(&Rfc3339)
        .unwrap_or_default()
}
