//! Resource subscriptions: which conversations (a stdio connection, a Streamable HTTP session
//! of the handshake era) follow which resource URIs, where the server may push to each, and
//! `notifications/resources/updated` sent to the followers of a URI the application says has
//! changed ([`ResourceUpdates::updated`]).
//!
//! In the handshake era a conversation follows URIs with `resources/subscribe`: a stdio
//! connection can always be pushed to; an HTTP session only while it holds a `GET /mcp` stream
//! open (a newer stream replaces the older). A notification for a session without one is not
//! kept: a client that subscribes opens its stream to hear of changes. A conversation's
//! subscriptions end with it (the connection closes, the session is deleted or expires).
//!
//! In the stateless era a `subscriptions/listen` request follows URIs for as long as it is open
//! ([`ResourceUpdates::listen`]): its notifications carry its id in
//! `_meta["io.modelcontextprotocol/subscriptionId"]`, and go where the request's answer goes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

/// The most URIs one conversation (or one `subscriptions/listen` request) may follow at once.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// Where a notification's `_meta` names the listen request it answers.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Keys of `subscriptions/listen` requests among the followers, apart from peers' ids.
static NEXT_LISTEN: AtomicU64 = AtomicU64::new(1 << 62);

/// Which conversation follows which URIs, shared by every transport of one server; a handle
/// the application keeps to say when a resource changed.
#[derive(Clone, Default)]
pub struct ResourceUpdates {
    followers: Arc<Mutex<HashMap<u64, Follower>>>,
    /// Counts the subscriptions made, so whatever notices changes can wait for a new one.
    made: Arc<(Mutex<u64>, Condvar)>,
}

impl std::fmt::Debug for ResourceUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceUpdates").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Follower {
    uris: HashSet<String>,
    push: Option<UnboundedSender<String>>,
    /// The id of the `subscriptions/listen` request it is, stamped into what it is sent.
    listen: Option<Value>,
}

/// An open `subscriptions/listen` request's subscriptions; they end when it is dropped.
pub(crate) struct Listening {
    updates: ResourceUpdates,
    key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.updates.forget(self.key);
    }
}

/// A subscription refused: the conversation follows [`MAX_SUBSCRIPTIONS`] URIs already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooMany;

impl ResourceUpdates {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Follower>> {
        self.followers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The resource at `uri` changed: each conversation that follows it and can be pushed to
    /// is sent `notifications/resources/updated`. Returns how many were.
    pub fn updated(&self, uri: &str) -> usize {
        let frame = |listen: Option<&Value>| {
            let mut params = json!({ "uri": uri });
            if let Some(id) = listen {
                params["_meta"] = json!({ SUBSCRIPTION_ID: id });
            }
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": params,
            })
            .to_string()
        };
        let mut sent = 0;
        for follower in self.lock().values_mut() {
            let Some(push) = follower
                .push
                .as_ref()
                .filter(|_| follower.uris.contains(uri))
            else {
                continue;
            };
            if push.send(frame(follower.listen.as_ref())).is_ok() {
                sent += 1;
            } else {
                // Its stream has ended.
                follower.push = None;
            }
        }
        sent
    }

    /// Every URI some conversation follows, sorted, each once.
    pub fn subscribed(&self) -> Vec<String> {
        let mut uris: Vec<String> = self
            .lock()
            .values()
            .flat_map(|f| f.uris.iter().cloned())
            .collect();
        uris.sort();
        uris.dedup();
        uris
    }

    /// Waits until a subscription is made after the `seen`-th one (updating `seen`), or for
    /// `timeout`: what notices changes looks at a newly followed resource at once, so a change
    /// right after a subscription is not missed.
    pub fn wait_for_subscription(&self, seen: &mut u64, timeout: Duration) {
        let (made, wake) = &*self.made;
        let made = made
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (made, _) = wake
            .wait_timeout_while(made, timeout, |made| *made == *seen)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *seen = *made;
    }

    /// Conversation `peer` follows `uri`.
    pub(crate) fn subscribe(&self, peer: u64, uri: &str) -> Result<(), TooMany> {
        {
            let mut followers = self.lock();
            let follower = followers.entry(peer).or_default();
            if !follower.uris.contains(uri) && follower.uris.len() >= MAX_SUBSCRIPTIONS {
                return Err(TooMany);
            }
            follower.uris.insert(uri.to_owned());
        }
        self.made_one();
        Ok(())
    }

    /// Conversation `peer` no longer follows `uri` (nothing happens if it did not).
    pub(crate) fn unsubscribe(&self, peer: u64, uri: &str) {
        if let Some(follower) = self.lock().get_mut(&peer) {
            follower.uris.remove(uri);
        }
    }

    /// What is pushed to conversation `peer` goes to `push` from now on.
    pub(crate) fn attach(&self, peer: u64, push: UnboundedSender<String>) {
        self.lock().entry(peer).or_default().push = Some(push);
    }

    /// Conversation `peer` has ended.
    pub(crate) fn forget(&self, peer: u64) {
        self.lock().remove(&peer);
    }

    /// The `subscriptions/listen` request `id` follows `uris` (the first [`MAX_SUBSCRIPTIONS`]
    /// of them), its notifications sent to `push`, until the returned guard is dropped.
    pub(crate) fn listen(
        &self,
        id: Value,
        uris: &[String],
        push: UnboundedSender<String>,
    ) -> Listening {
        let key = NEXT_LISTEN.fetch_add(1, Ordering::Relaxed);
        let follower = Follower {
            uris: uris.iter().take(MAX_SUBSCRIPTIONS).cloned().collect(),
            push: Some(push),
            listen: Some(id),
        };
        self.lock().insert(key, follower);
        self.made_one();
        Listening {
            updates: self.clone(),
            key,
        }
    }

    /// Counts a subscription made, waking whatever waits for one.
    fn made_one(&self) {
        let (made, wake) = &*self.made;
        *made
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc::unbounded_channel;

    use super::*;

    #[test]
    fn only_followers_with_a_channel_hear_of_a_change() {
        let updates = ResourceUpdates::default();
        let (tx1, mut rx1) = unbounded_channel();
        let (tx2, mut rx2) = unbounded_channel();
        updates.attach(1, tx1);
        updates.attach(2, tx2);
        updates.subscribe(1, "grk://a/status").expect("room");
        updates.subscribe(3, "grk://a/status").expect("room");
        assert_eq!(updates.subscribed(), ["grk://a/status"]);
        assert_eq!(updates.updated("grk://a/status"), 1);
        let frame: Value = serde_json::from_str(&rx1.try_recv().expect("pushed")).expect("json");
        assert_eq!(frame["method"], "notifications/resources/updated");
        assert_eq!(frame["params"]["uri"], "grk://a/status");
        assert!(rx2.try_recv().is_err(), "2 follows nothing");
        assert_eq!(updates.updated("grk://b/status"), 0);

        updates.unsubscribe(1, "grk://a/status");
        assert_eq!(updates.updated("grk://a/status"), 0);
        updates.subscribe(1, "grk://a/status").expect("room");
        drop(rx1);
        assert_eq!(updates.updated("grk://a/status"), 0, "its stream has ended");
        updates.forget(1);
        updates.forget(3);
        assert!(updates.subscribed().is_empty());
    }

    #[test]
    fn a_conversation_follows_at_most_the_limit() {
        let updates = ResourceUpdates::default();
        for n in 0..MAX_SUBSCRIPTIONS {
            updates.subscribe(1, &format!("u://{n}")).expect("room");
        }
        assert_eq!(
            updates.subscribe(1, "u://0"),
            Ok(()),
            "again: no new room needed"
        );
        assert_eq!(updates.subscribe(1, "u://more"), Err(TooMany));
        assert_eq!(updates.subscribe(2, "u://more"), Ok(()));
    }
}
