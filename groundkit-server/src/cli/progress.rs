//! Ingest progress: a progress bar on a terminal, plain lines otherwise.

use std::io::IsTerminal;

use groundkit_retrieval::{CommitStep, IngestProgress, ItemOutcome};
use indicatif::{ProgressBar, ProgressStyle};

pub(super) struct CliProgress {
    bar: Option<ProgressBar>,
    quiet: bool,
    /// The last tenth of the embedding reported as a plain line.
    embedded_tenths: u64,
}

impl CliProgress {
    /// `quiet` suppresses plain lines (the JSON summary is the whole output).
    pub(super) fn new(quiet: bool) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            if let Ok(style) =
                ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {wide_msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        Self {
            bar,
            quiet,
            embedded_tenths: 0,
        }
    }

    pub(super) fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }
}

impl IngestProgress for CliProgress {
    fn start(&mut self, items: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(items as u64);
        }
    }

    fn item(&mut self, source: &str, outcome: &ItemOutcome) {
        match outcome {
            ItemOutcome::Added => self.line(format!("added      {source}")),
            ItemOutcome::Updated => self.line(format!("updated    {source}")),
            ItemOutcome::Unchanged => {
                if self.bar.is_none() {
                    self.line(format!("unchanged  {source}"));
                }
            }
            ItemOutcome::Failed(reason) => self.line(format!("failed     {source}: {reason}")),
            ItemOutcome::NotSource(reason) => {
                if self.bar.is_none() {
                    self.line(format!("skipped    {source}: {reason}"));
                }
            }
            ItemOutcome::Records {
                added,
                updated,
                unchanged,
                failed,
            } => self.line(format!(
                "records    {source}: {added} added, {updated} updated, {unchanged} unchanged, \
                 {failed} failed"
            )),
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(source.to_owned());
        }
    }

    fn phase(&mut self, phase: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(phase.to_owned()),
            None if !self.quiet => eprintln!("{phase}…"),
            None => {}
        }
    }

    /// On a terminal the bar turns into the embedding's, with throughput and time left;
    /// otherwise a line every tenth.
    fn embedding(&mut self, done: u64, total: u64) {
        match &self.bar {
            Some(bar) => {
                if done == 0 {
                    bar.reset();
                    bar.set_length(total);
                    if let Ok(style) = ProgressStyle::with_template(
                        "{bar:30} {pos}/{len} chunks embedded, {per_sec}, {eta} left",
                    ) {
                        bar.set_style(style);
                    }
                }
                bar.set_position(done);
            }
            None if !self.quiet && total > 0 => {
                let tenths = done * 10 / total;
                if done == 0 || tenths > self.embedded_tenths {
                    self.embedded_tenths = tenths;
                    eprintln!("embedding: {done}/{total} chunks");
                }
            }
            None => {}
        }
    }

    fn commit_step(&mut self, step: CommitStep) {
        if let Some(bar) = &self.bar {
            bar.set_message(match step {
                CommitStep::LexicalCommitted => "committing: lexical index written",
                CommitStep::VectorsWritten => "committing: vectors written",
                CommitStep::LexicalPublished => "committing: lexical index published",
                CommitStep::StoreCommitted => "committed",
            });
        }
    }
}
