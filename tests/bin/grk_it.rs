//! `grk` built inside the test package, so integration tests can spawn (and kill) a real process.
//!
//! `grk-it pause-ingest PHASE INDEX_DIR BASE_DIR COLLECTION [MODEL_DIR]` runs the same ingest as
//! `grk ingest` (embedding with the model in MODEL_DIR when given) but stops at PHASE, prints `paused at PHASE` on stderr and waits to be killed: the crash tests
//! use it to kill an ingest at a known step of the commit protocol, through the progress the
//! ingest reports.
//!
//! `grk-it peak-memory GRK_ARGS...` runs `grk GRK_ARGS...` in this process, then prints the
//! process's peak resident memory as the kernel counted it (`VmHWM`), as `peak-rss-kib N` on
//! stderr: the memory tests read it.
//!
//! Anything else runs `grk` itself.

use std::process::ExitCode;

use clap::Parser;
use groundkit_server::cli::Cli;

use groundkit_retrieval::{
    self as retrieval, CommitStep, IngestOptions, IngestProgress, ItemOutcome,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd, phase, index, base, collection, model @ ..] if cmd == "pause-ingest" => {
            let mut options = IngestOptions::new(index, base, collection, vec![base.clone()]);
            if let [model] = model {
                match groundkit_embed::LocalEmbedder::load(std::path::Path::new(model), 2) {
                    Ok(embedder) => options.embedder = Some(std::sync::Arc::new(embedder)),
                    Err(err) => {
                        eprintln!("cannot load the model: {err}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            let mut progress = PauseAt(phase.clone());
            match retrieval::ingest(&options, &mut progress) {
                Ok(_) => {
                    eprintln!("ingest finished without reaching {phase}");
                    ExitCode::FAILURE
                }
                Err(err) => {
                    eprintln!("ingest failed: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        [cmd, grk_args @ ..] if cmd == "peak-memory" => {
            let cli =
                Cli::parse_from(std::iter::once("grk").chain(grk_args.iter().map(String::as_str)));
            let code = groundkit_server::cli::run(cli);
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let peak = status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .map(|rest| rest.trim().trim_end_matches("kB").trim().to_owned())
                .unwrap_or_else(|| "unknown".into());
            eprintln!("peak-rss-kib {peak}");
            code
        }
        _ => groundkit_server::cli::main(),
    }
}

/// Progress that stops the process at one phase: `indexing` (the first document is written to
/// the uncommitted transaction and the new lexical generation), `embedding` (the first batch of
/// the new generation's vectors is computed, more remain), or a commit step.
struct PauseAt(String);

impl PauseAt {
    fn reached(&self, phase: &str) {
        if self.0 == phase {
            eprintln!("paused at {phase}");
            loop {
                std::thread::park();
            }
        }
    }
}

impl IngestProgress for PauseAt {
    fn item(&mut self, _source: &str, outcome: &ItemOutcome) {
        if matches!(outcome, ItemOutcome::Added | ItemOutcome::Updated) {
            self.reached("indexing");
        }
    }

    fn embedding(&mut self, done: u64, total: u64) {
        if done > 0 && done < total {
            self.reached("embedding");
        }
    }

    fn commit_step(&mut self, step: CommitStep) {
        self.reached(match step {
            CommitStep::LexicalCommitted => "lexical-committed",
            CommitStep::VectorsWritten => "vectors-written",
            CommitStep::LexicalPublished => "published",
            CommitStep::StoreCommitted => "committed",
        });
    }
}
