//! `grk ingest --watch`: the ingest, then the collection kept following its files until the
//! process is stopped (or, with `--stop-on-eof`, until standard input closes). Each ingest
//! prints its summary: with `--json`, one JSON line each (the first ingest's included); else the
//! first ingest's summary, then a line for each burst that changed anything. With
//! `--backend opensearch`, the first ingest's generation and each new one are published to the
//! cluster (grown from the index it serves, so only what changed is sent), and the summary says
//! what the publish did.

use std::io::Write;
use std::time::Duration;

use groundkit_core::Error;
use groundkit_opensearch::Published;
use groundkit_retrieval::watch::{Watch, WatchOptions, WatchReport};
use groundkit_retrieval::{IngestOptions, IngestProgress, IngestSummary, WatchMode};

use super::output;
use super::progress::CliProgress;

/// Publishes the collection's committed generation to a cluster (`None`: it does not exist).
pub(super) type Publisher<'a> = Box<dyn FnMut() -> Result<Option<Published>, Error> + 'a>;

/// How `ingest --watch` was asked to follow and report.
pub(super) struct WatchArgs {
    pub(super) poll: Option<Duration>,
    pub(super) stop_on_eof: bool,
    pub(super) json: bool,
}

/// Follows `options.inputs` until stopped, publishing each new generation through `publisher`
/// when given.
pub(super) fn watch(
    options: IngestOptions,
    args: WatchArgs,
    publisher: Option<Publisher<'_>>,
) -> Result<(), Error> {
    let WatchArgs {
        poll,
        stop_on_eof,
        json,
    } = args;
    let watch = Watch::new(
        options,
        WatchOptions {
            poll,
            ..WatchOptions::default()
        },
    );
    if stop_on_eof {
        let stopper = watch.stopper();
        std::thread::spawn(move || {
            // Whatever is read is discarded; the end of the input (or an error) stops.
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            stopper.stop();
        });
    }
    let mut report = Report {
        progress: CliProgress::new(json),
        json,
        stop_on_eof,
        publisher,
        published: None,
    };
    watch.run(&mut report)
}

struct Report<'a> {
    progress: CliProgress,
    json: bool,
    stop_on_eof: bool,
    publisher: Option<Publisher<'a>>,
    /// The generation the last publish left the cluster serving.
    published: Option<u64>,
}

impl Report<'_> {
    /// Publishes the committed generation unless the cluster already serves it; what the
    /// publish did, or `None`. A publish that fails is said on stderr: the next one (of the
    /// next generation) catches up, whatever the cluster holds.
    fn publish(&mut self, generation: u64) -> Option<Published> {
        let publisher = self.publisher.as_mut()?;
        if self.published == Some(generation) {
            return None;
        }
        match publisher() {
            Ok(published) => {
                self.published = published.as_ref().map(|p| p.generation);
                published
            }
            Err(err) => {
                eprintln!("error: {err}; the next generation is published in full or grown again");
                None
            }
        }
    }

    fn print(&self, summary: &IngestSummary, published: Option<&Published>) {
        if !self.json {
            if let Some(published) = published {
                output::print_published(published);
            }
            return;
        }
        let mut value = match serde_json::to_value(summary) {
            Ok(value) => value,
            Err(_) => return,
        };
        if let Some(published) = published {
            value["published"] = super::ingest::published_json(published);
        }
        if let Ok(line) = serde_json::to_string(&value) {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{line}");
            let _ = stdout.flush();
        }
    }
}

impl WatchReport for Report<'_> {
    fn reconciling(&mut self) -> &mut dyn IngestProgress {
        &mut self.progress
    }

    fn following(&mut self, summary: &IngestSummary, mode: WatchMode) {
        self.progress.finish();
        if !self.json {
            output::print_ingest(summary);
        }
        let published = self.publish(summary.generation);
        self.print(summary, published.as_ref());
        let how = match mode {
            WatchMode::Notify => "file notifications",
            WatchMode::Poll => "polling",
        };
        let stop = if self.stop_on_eof {
            "until its input closes"
        } else {
            "until stopped (Ctrl-C)"
        };
        eprintln!(
            "following the inputs of collection '{}' ({how}) {stop}",
            summary.collection
        );
    }

    fn ingested(&mut self, summary: &IngestSummary, changes: usize) {
        let published = self.publish(summary.generation);
        self.print(summary, published.as_ref());
        if self.json {
            return;
        }
        let changed = summary.added + summary.updated + summary.removed;
        if changed > 0 || !summary.failed.is_empty() {
            eprintln!(
                "generation {}: {} added, {} updated, {} removed, {} failed, from {changes} \
                 changed paths ({:.2}s)",
                summary.generation,
                summary.added,
                summary.updated,
                summary.removed,
                summary.failed.len(),
                summary.seconds
            );
            for failure in &summary.failed {
                eprintln!("  failed  {}: {}", failure.source, failure.reason);
            }
        }
    }

    fn notice(&mut self, message: &str) {
        eprintln!("notice: {message}");
    }

    fn failed(&mut self, err: &Error, retry: Duration) {
        eprintln!(
            "error: {err}; the changes stay pending, tried again in {:.1}s",
            retry.as_secs_f64()
        );
    }
}
