//! Logging set-up: everything to stderr (stdout belongs to MCP frames on stdio), filtered by
//! `GROUNDKIT_LOG` (default `info`): a level (`debug`), or targets with their levels and a
//! default (`groundkit::access=warn,info`); a value that does not parse is `info`.
//!
//! actix-http logs a request it cannot parse (a malformed head, a missing or duplicated `Host`)
//! at ERROR under its dispatcher's target. That is the client's mistake, not the server's, so
//! [`init`] re-logs those lines at DEBUG (target `groundkit::client`) and passes every other
//! line of that target on at ERROR (target `groundkit::http`).

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::{Targets, filter_fn};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Where actix-http's HTTP/1 dispatcher logs.
const DISPATCHER: &str = "actix_http::h1::dispatcher";

/// How the dispatcher words an error the client caused.
const CLIENT_CAUSED: &str = "stream error: request parse error";

fn from_dispatcher(meta: &Metadata<'_>) -> bool {
    meta.target() == DISPATCHER && *meta.level() == Level::ERROR
}

/// Install the stderr subscriber. Call once, before serving anything.
pub fn init() {
    let filter = std::env::var("GROUNDKIT_LOG")
        .ok()
        .and_then(|spec| spec.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(Level::INFO));
    let output = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter_fn(|meta| !from_dispatcher(meta)));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(output)
        .with(Relog)
        .try_init();
}

/// Re-logs the dispatcher's ERROR lines: client-caused ones at DEBUG, the rest at ERROR.
struct Relog;

impl<S: Subscriber> Layer<S> for Relog {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !from_dispatcher(event.metadata()) {
            return;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        let message = message.0;
        if message.starts_with(CLIENT_CAUSED) {
            tracing::debug!(target: "groundkit::client", "{message}");
        } else {
            tracing::error!(target: "groundkit::http", "{message}");
        }
    }
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        }
    }
}
