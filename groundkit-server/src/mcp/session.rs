//! Peers and sessions: what the server remembers between messages.
//!
//! A [`Peer`] is one conversation: the stdio connection, or one Streamable HTTP session of the
//! handshake era. It holds the negotiated revision and scopes request ids for cancellation.
//! [`Sessions`] is the HTTP session table: random 128-bit ids, an idle timeout, and a cap on how
//! many live at once. A session is created only after its `initialize` has been validated and
//! answered, so a request that fails validation allocates nothing. Stateless-era requests never
//! touch the table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures_util::future::AbortHandle;
use tokio::sync::mpsc::UnboundedSender;

use super::protocol::Revision;
use super::subscriptions::{ResourceUpdates, TooMany};
use crate::edge::id::random_id;

static NEXT_PEER: AtomicU64 = AtomicU64::new(1);

/// One conversation with a client.
#[derive(Debug)]
pub struct Peer {
    id: u64,
    negotiated: Mutex<Option<Revision>>,
    /// Fired when the conversation's input ends (stdio): what stays open until then, a
    /// `subscriptions/listen`, closes.
    ended: groundkit_core::Cancellation,
    /// Where its subscriptions are kept, once it has subscribed: they end with it.
    follows: OnceLock<ResourceUpdates>,
}

impl Peer {
    /// A new conversation with nothing negotiated.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            id: NEXT_PEER.fetch_add(1, Ordering::Relaxed),
            negotiated: Mutex::new(None),
            ended: groundkit_core::Cancellation::new(),
            follows: OnceLock::new(),
        })
    }

    /// Process-unique id (scopes request ids for cancellation).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The revision agreed by `initialize`, if one ran.
    pub fn negotiated(&self) -> Option<Revision> {
        self.negotiated.lock().ok().and_then(|g| *g)
    }

    pub(crate) fn set_negotiated(&self, revision: Revision) {
        if let Ok(mut guard) = self.negotiated.lock() {
            *guard = Some(revision);
        }
    }

    /// Its input has ended: what it holds open closes.
    pub(crate) fn end(&self) {
        self.ended.cancel();
    }

    /// Fired when its input ends.
    pub(crate) fn ended(&self) -> &groundkit_core::Cancellation {
        &self.ended
    }

    /// Follows `uri` in `updates` (until it unsubscribes or ends).
    pub(crate) fn subscribe(&self, updates: &ResourceUpdates, uri: &str) -> Result<(), TooMany> {
        self.follows.get_or_init(|| updates.clone());
        updates.subscribe(self.id, uri)
    }

    /// What `updates` pushes to it goes to `push` (until a newer channel replaces it or it
    /// ends, which drops `push`).
    pub(crate) fn push_to(&self, updates: &ResourceUpdates, push: UnboundedSender<String>) {
        self.follows.get_or_init(|| updates.clone());
        updates.attach(self.id, push);
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(updates) = self.follows.get() {
            updates.forget(self.id);
        }
    }
}

/// Why a session cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionError {
    /// No live session has this id (never issued, deleted, or idle past the timeout): 404.
    Unknown,
    /// The table is full of live sessions: 503.
    Full,
}

struct Entry {
    peer: Arc<Peer>,
    last_seen: Instant,
}

/// The Streamable HTTP session table.
pub struct Sessions {
    map: Mutex<HashMap<String, Entry>>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    /// A table of at most `max` live sessions, each expiring after `idle` without a request.
    pub fn new(max: usize, idle: Duration) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            max,
            idle,
        }
    }

    /// Register `peer` under a fresh id; expired sessions are dropped first to make room.
    pub fn create(&self, peer: Arc<Peer>) -> Result<String, SessionError> {
        let mut map = self.map.lock().map_err(|_| SessionError::Full)?;
        let now = Instant::now();
        if map.len() >= self.max {
            map.retain(|_, e| now.duration_since(e.last_seen) < self.idle);
        }
        if map.len() >= self.max {
            return Err(SessionError::Full);
        }
        let id = random_id();
        map.insert(
            id.clone(),
            Entry {
                peer,
                last_seen: now,
            },
        );
        Ok(id)
    }

    /// The live session `id`, refreshing its idle clock.
    pub fn get(&self, id: &str) -> Result<Arc<Peer>, SessionError> {
        let mut map = self.map.lock().map_err(|_| SessionError::Unknown)?;
        let now = Instant::now();
        match map.get_mut(id) {
            Some(entry) if now.duration_since(entry.last_seen) < self.idle => {
                entry.last_seen = now;
                Ok(Arc::clone(&entry.peer))
            }
            Some(_) => {
                map.remove(id);
                Err(SessionError::Unknown)
            }
            None => Err(SessionError::Unknown),
        }
    }

    /// End session `id`.
    pub fn remove(&self, id: &str) -> Result<(), SessionError> {
        self.get(id)?;
        let mut map = self.map.lock().map_err(|_| SessionError::Unknown)?;
        map.remove(id).map(|_| ()).ok_or(SessionError::Unknown)
    }
}

/// Requests in flight, by peer and raw id, so `notifications/cancelled` can stop one.
#[derive(Default)]
pub struct InFlight {
    map: Mutex<HashMap<(u64, String), AbortHandle>>,
}

impl InFlight {
    pub(crate) fn insert(&self, peer: u64, id: String, handle: AbortHandle) {
        if let Ok(mut map) = self.map.lock() {
            map.insert((peer, id), handle);
        }
    }

    pub(crate) fn remove(&self, peer: u64, id: &str) {
        if let Ok(mut map) = self.map.lock() {
            map.remove(&(peer, id.to_owned()));
        }
    }

    /// Abort the request `id` of `peer`; an unknown id is ignored.
    pub(crate) fn cancel(&self, peer: u64, id: &str) -> bool {
        let handle = self
            .map
            .lock()
            .ok()
            .and_then(|mut map| map.remove(&(peer, id.to_owned())));
        match handle {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }
}

/// The MCP state shared by every worker and transport of one server.
pub struct McpShared {
    /// The HTTP session table.
    pub sessions: Sessions,
    /// Requests that `notifications/cancelled` may stop.
    pub(crate) in_flight: InFlight,
    /// Who follows which resource, and where to tell them it changed.
    pub(crate) updates: ResourceUpdates,
}

impl McpShared {
    /// Shared state with a session table of `max_sessions`, each idle for at most `idle`.
    pub fn new(max_sessions: usize, idle: Duration) -> Self {
        Self {
            sessions: Sessions::new(max_sessions, idle),
            in_flight: InFlight::default(),
            updates: ResourceUpdates::default(),
        }
    }
}
