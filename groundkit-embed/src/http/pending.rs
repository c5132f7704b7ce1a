//! An endpoint embedder whose endpoint has not answered yet: [`PendingEmbedder`] probes it in
//! the background until it does, and is an `embedding_error` until then, so a server can start
//! (and serve lexical search) while its embedding endpoint is down.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use groundkit_core::Error;
use groundkit_retrieval::embed::{Embedder, Role};
use groundkit_retrieval::{EmbedderKind, EmbeddingIdentity};

use super::{HttpEmbedder, HttpEmbedderConfig, Probe};

/// The wait before the first probe in the background; it doubles after each failure.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait between two probes.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// An [`HttpEmbedder`] still to be connected.
pub(super) struct PendingEmbedder {
    shared: Arc<Shared>,
}

struct Shared {
    connected: OnceLock<HttpEmbedder>,
    /// The identity shown until the endpoint answers: no fingerprint, so it matches no
    /// collection's (and [`Embedder::ready`] is checked first anyway).
    unknown: EmbeddingIdentity,
}

impl PendingEmbedder {
    /// Starts probing the endpoint on a thread of its own, which ends when the endpoint has
    /// answered or this embedder is dropped.
    pub(super) fn start(config: HttpEmbedderConfig) -> Self {
        let shared = Arc::new(Shared {
            connected: OnceLock::new(),
            unknown: EmbeddingIdentity {
                kind: EmbedderKind::Http,
                model: config.model.clone(),
                fingerprint: String::new(),
                dimension: 0,
                pooling: "provider".to_owned(),
                normalized: false,
                max_tokens: None,
            },
        });
        let weak = Arc::downgrade(&shared);
        std::thread::Builder::new()
            .name("groundkit-embed-probe".to_owned())
            .spawn(move || keep_probing(&weak, &config))
            .map_err(|err| tracing::error!("the embedding endpoint cannot be probed: {err}"))
            .ok();
        Self { shared }
    }

    fn connected(&self) -> Result<&HttpEmbedder, Error> {
        self.shared
            .connected
            .get()
            .ok_or_else(|| Error::embedding("the embedding endpoint has not answered yet", None))
    }
}

fn keep_probing(shared: &Weak<Shared>, config: &HttpEmbedderConfig) {
    let mut wait = FIRST_WAIT;
    loop {
        std::thread::sleep(wait);
        if shared.strong_count() == 0 {
            return;
        }
        match HttpEmbedder::probe(config.clone()) {
            Ok(embedder) => {
                tracing::info!(identity = ?embedder.identity, "embedder connected");
                if let Some(shared) = shared.upgrade() {
                    let _ = shared.connected.set(embedder);
                }
                return;
            }
            Err(Probe::Unanswered(reason)) => {
                tracing::warn!(
                    "the embedding endpoint still does not answer ({reason}); probing again \
                     in {} s",
                    wait.saturating_mul(2).min(MAX_WAIT).as_secs()
                );
            }
            Err(Probe::Refused(err)) => {
                tracing::error!(
                    "the embedding endpoint refuses the probe ({err}); probing again in {} s",
                    wait.saturating_mul(2).min(MAX_WAIT).as_secs()
                );
            }
        }
        wait = wait.saturating_mul(2).min(MAX_WAIT);
    }
}

impl Embedder for PendingEmbedder {
    fn identity(&self) -> &EmbeddingIdentity {
        self.shared
            .connected
            .get()
            .map_or(&self.shared.unknown, |embedder| embedder.identity())
    }

    fn ready(&self) -> Result<(), Error> {
        self.connected().map(|_| ())
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>, Error> {
        self.connected()?.embed(texts, role)
    }
}
