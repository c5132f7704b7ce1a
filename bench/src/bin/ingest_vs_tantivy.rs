//! Ingest cost against a bare tantivy index of the same text, measured side by side in one run.
//!
//! Both sides read the same BEIR `corpus.jsonl` (title, blank line, text), analyse it with the
//! same English analyser, field options and index settings, use the same writer threads and
//! memory, commit and wait for merges. groundkit additionally hashes, chunks with offsets, writes SQLite and the
//! per-generation directory. Passes alternate; medians are reported. Run with `--release`:
//!
//! `ingest_vs_tantivy CORPUS_DIR [PASSES]` (CORPUS_DIR holds `corpus.jsonl`)

use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

use groundkit_retrieval::analysis::{ANALYZER_NAME, english_analyzer};
use groundkit_retrieval::extract::BeirRecord;
use groundkit_retrieval::lexical::{WriterConfig, content_options, index_settings};
use groundkit_retrieval::{self as retrieval, IngestOptions, InputFormat, NoProgress};
use tantivy::schema::{STORED, STRING, Schema};
use tantivy::{Index, TantivyDocument};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn bare_tantivy(corpus: &Path, dir: &Path, config: WriterConfig) -> Result<f64> {
    let started = Instant::now();
    let mut builder = Schema::builder();
    let id = builder.add_text_field("id", STRING | STORED);
    let content = builder.add_text_field("content", content_options());
    let index = Index::builder()
        .schema(builder.build())
        .settings(index_settings())
        .create_in_dir(dir)?;
    index
        .tokenizers()
        .register(ANALYZER_NAME, english_analyzer());
    let mut writer: tantivy::IndexWriter =
        index.writer_with_num_threads(config.threads, config.threads * config.per_thread_budget)?;
    let reader = std::io::BufReader::new(std::fs::File::open(corpus.join("corpus.jsonl"))?);
    for line in reader.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let record: BeirRecord = serde_json::from_str(&line)?;
        let mut doc = TantivyDocument::default();
        doc.add_text(id, &record.id);
        doc.add_text(content, record.document_text());
        writer.add_document(doc)?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    Ok(started.elapsed().as_secs_f64())
}

fn groundkit(corpus: &Path, index_dir: &Path) -> Result<f64> {
    let started = Instant::now();
    let mut options = IngestOptions::new(
        index_dir,
        corpus,
        "bench",
        vec![corpus.join("corpus.jsonl").display().to_string()],
    );
    options.format = InputFormat::Beir;
    let summary = retrieval::ingest(&options, &mut NoProgress)?;
    assert!(summary.added > 0 && summary.failed.is_empty());
    Ok(started.elapsed().as_secs_f64())
}

/// CPU seconds (user + system, all threads) this process has used, from `/proc/self/stat`;
/// less sensitive than wall-clock time to other work on a shared machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn timed(f: impl FnOnce() -> Result<f64>) -> Result<(f64, f64)> {
    let cpu = cpu_seconds();
    let wall = f()?;
    Ok((wall, cpu_seconds() - cpu))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let corpus =
        Path::new(args.get(1).map_or("../shared/data/scifact", String::as_str)).canonicalize()?;
    let passes: usize = args.get(2).map(|p| p.parse()).transpose()?.unwrap_or(5);
    // Optional third argument `bare` or `groundkit` runs one side only (for profiling).
    let only = args.get(3).map(String::as_str);
    let config = WriterConfig::default();
    let (mut bare, mut ours) = (Vec::new(), Vec::new());
    let (mut bare_cpu, mut ours_cpu) = (Vec::new(), Vec::new());
    for _ in 0..passes {
        let tmp = tempfile::tempdir()?;
        let bare_dir = tmp.path().join("bare");
        std::fs::create_dir(&bare_dir)?;
        if only != Some("groundkit") {
            let (wall, cpu) = timed(|| bare_tantivy(&corpus, &bare_dir, config))?;
            bare.push(wall);
            bare_cpu.push(cpu);
        }
        if only != Some("bare") {
            let (wall, cpu) = timed(|| groundkit(&corpus, &tmp.path().join("index")))?;
            ours.push(wall);
            ours_cpu.push(cpu);
        }
    }
    let (bare_median, ours_median) = (median(&mut bare.clone()), median(&mut ours.clone()));
    println!(
        "{}",
        serde_json::json!({
            "writer_threads": config.threads,
            "bare_tantivy_seconds": bare,
            "groundkit_seconds": ours,
            "bare_tantivy_median": bare_median,
            "groundkit_median": ours_median,
            "ratio": ours_median / bare_median,
            "bare_tantivy_cpu_median": median(&mut bare_cpu),
            "groundkit_cpu_median": median(&mut ours_cpu),
            "cpu_ratio": median(&mut ours_cpu) / median(&mut bare_cpu),
        })
    );
    Ok(())
}
