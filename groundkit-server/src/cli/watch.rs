//! `grk ingest --watch`: the ingest, then the collection kept following its files until the
//! process is stopped (or, with `--stop-on-eof`, until standard input closes). Each ingest
//! prints its summary: with `--json`, one JSON line each (the first ingest's included); else the
//! first ingest's summary, then a line for each burst that changed anything.

use std::io::Write;
use std::time::Duration;

use groundkit_core::Error;
use groundkit_retrieval::watch::{Watch, WatchOptions, WatchReport};
use groundkit_retrieval::{IngestOptions, IngestProgress, IngestSummary, WatchMode};

use super::output;
use super::progress::CliProgress;

/// Follows `options.inputs` until stopped.
pub(super) fn watch(
    options: IngestOptions,
    poll: Option<Duration>,
    stop_on_eof: bool,
    json: bool,
) -> Result<(), Error> {
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
    };
    watch.run(&mut report)
}

struct Report {
    progress: CliProgress,
    json: bool,
    stop_on_eof: bool,
}

impl Report {
    fn json_line(summary: &IngestSummary) {
        if let Ok(line) = serde_json::to_string(summary) {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{line}");
            let _ = stdout.flush();
        }
    }
}

impl WatchReport for Report {
    fn reconciling(&mut self) -> &mut dyn IngestProgress {
        &mut self.progress
    }

    fn following(&mut self, summary: &IngestSummary, mode: WatchMode) {
        self.progress.finish();
        if self.json {
            Self::json_line(summary);
        } else {
            output::print_ingest(summary);
        }
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
        if self.json {
            Self::json_line(summary);
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
