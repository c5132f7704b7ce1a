//! `grk` built inside the test package, so integration tests can spawn (and kill) a real process.
//!
//! `grk-it pause-ingest PHASE INDEX_DIR BASE_DIR COLLECTION` runs the same ingest as `grk ingest`
//! but stops at PHASE, prints `paused at PHASE` on stderr and waits to be killed: the crash tests
//! use it to kill an ingest at a known step of the commit protocol, through the progress the
//! ingest reports. Anything else runs `grk` itself.

use std::process::ExitCode;

use groundkit_core::retrieval::{self, CommitStep, IngestOptions, IngestProgress, ItemOutcome};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd, phase, index, base, collection] if cmd == "pause-ingest" => {
            let options = IngestOptions::new(index, base, collection, vec![base.clone()]);
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
        _ => groundkit_server::cli::main(),
    }
}

/// Progress that stops the process at one phase: `indexing` (the first document is written to
/// the uncommitted transaction and the new lexical generation), or a commit step.
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

    fn commit_step(&mut self, step: CommitStep) {
        self.reached(match step {
            CommitStep::LexicalCommitted => "lexical-committed",
            CommitStep::LexicalPublished => "published",
            CommitStep::StoreCommitted => "committed",
        });
    }
}
