//! What the commands print: human-readable renderings of their results, and the JSON `--json`
//! prints.

use std::io::Write;
use std::path::Path;

use groundkit_core::Error;

use groundkit_retrieval::{
    Citation, EvalReport, FetchChunkResponse, IndexStatus, IngestSummary, ListCollectionsResponse,
    SearchResponse, Snippet, Verification,
};

const SNIPPET_CHARS: usize = 240;

fn snippet(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= SNIPPET_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(SNIPPET_CHARS).collect();
    format!("{cut}…")
}

/// A snippet on one line, each matched word between `*`.
fn marked(snippet: &Snippet) -> String {
    let mut text = String::with_capacity(snippet.text.len() + 2 * snippet.matches.len());
    let mut at = 0;
    let local = |offset: u64| (offset - snippet.start_offset) as usize;
    for span in &snippet.matches {
        let (start, end) = (local(span.start_offset), local(span.end_offset));
        text.push_str(&snippet.text[at..start]);
        text.push('*');
        text.push_str(&snippet.text[start..end]);
        text.push('*');
        at = end;
    }
    text.push_str(&snippet.text[at..]);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where a citation points, as editors and terminals open it: `path:START-END` (lines from 1,
/// inclusive) when the citation has lines, else the source alone.
fn location(c: &Citation) -> String {
    match (c.start_line, c.end_line) {
        (Some(start), Some(end)) => format!("{}:{start}-{end}", c.source),
        _ => c.source.clone(),
    }
}

pub(super) fn print_ingest(summary: &IngestSummary) {
    println!(
        "{}: {} added, {} updated, {} unchanged, {} removed, {} failed",
        summary.collection,
        summary.added,
        summary.updated,
        summary.unchanged,
        summary.removed,
        summary.failed.len()
    );
    for failure in &summary.failed {
        println!("  failed  {}: {}", failure.source, failure.reason);
    }
    let code = &summary.code;
    if code.definitions + code.no_grammar + code.unparsable > 0 {
        println!(
            "source files: {} chunked at definitions, chunked as text: {} without a grammar, {} \
             unparsable",
            code.definitions, code.no_grammar, code.unparsable
        );
    }
    let skipped = &summary.skipped;
    if !skipped.is_empty() {
        println!(
            "skipped: {} binary, {} minified or generated, {} lock files, {} vendored or build \
             output",
            skipped.binary, skipped.generated, skipped.lock_file, skipped.vendored
        );
    }
    if summary.attachments_skipped > 0 {
        println!(
            "mail attachments not read: {} (of no format read, mail in mail, or past the caps)",
            summary.attachments_skipped
        );
    }
    println!(
        "generation {}: {} documents, {} chunks ({:.2}s)",
        summary.generation, summary.documents, summary.chunks, summary.seconds
    );
}

pub(super) fn print_published(published: &groundkit_opensearch::Published) {
    if published.unchanged {
        println!(
            "published: {} already serves generation {}",
            published.index, published.generation
        );
    } else if let Some(base) = &published.grown_from {
        println!(
            "published: {} ({} chunks) now serves generation {}: grown from {base}, {} chunks \
             sent, {} documents removed",
            published.index,
            published.chunks,
            published.generation,
            published.loaded,
            published.deleted_documents
        );
    } else {
        println!(
            "published: {} ({} chunks) now serves generation {}",
            published.index, published.chunks, published.generation
        );
    }
    for index in &published.removed {
        println!("  removed {index}");
    }
}

pub(super) fn print_search(response: &SearchResponse) {
    if response.results.is_empty() {
        println!("no results (generation {})", response.metadata.generation);
        return;
    }
    for hit in &response.results {
        let c = &hit.citation;
        let collection = hit
            .collection
            .as_ref()
            .map(|name| format!("{name}: "))
            .unwrap_or_default();
        println!(
            "{:>2}. {:.3}  {collection}{}  [{}..{}]  chunk {}",
            hit.rank,
            hit.score,
            location(c),
            c.start_offset,
            c.end_offset,
            hit.chunk_id
        );
        if let Some(scope) = &hit.scope {
            println!("    in {scope}");
        }
        if let Some(content) = &hit.content {
            println!("    {}", snippet(content));
        }
        if let Some(passage) = &hit.snippet {
            println!("    {}", marked(passage));
        }
    }
    let m = &response.metadata;
    if let (true, Some(model), Some(depth)) = (m.reranked, &m.rerank_model, m.rerank_input_depth) {
        println!("reranked by {model} from the first {depth} results");
    }
    if let Some(cursor) = &response.next_cursor {
        println!("more: --cursor {cursor}");
    }
    if m.truncated {
        println!(
            "cut to fit {} characters: {} more results left out (--detail snippets or a smaller \
             --top-k shows more)",
            m.max_chars.unwrap_or_default(),
            m.omitted_results
        );
    }
}

pub(super) fn print_fetch(response: &FetchChunkResponse) {
    let c = &response.citation;
    let verdict = match response.verification {
        Verification::Verified => "verified",
        Verification::Drifted => "drifted (the source changed since ingest)",
        Verification::Unresolvable => "unresolvable (the source cannot be read or checked)",
    };
    println!("chunk      {}", response.chunk_id);
    println!("document   {}", response.document_id);
    println!("source     {} ({})", location(c), c.source_class.as_str());
    if let Some(extractor) = &c.extractor {
        println!("extractor  {extractor}");
    }
    if let Some(scope) = &response.scope {
        println!("scope      {scope}");
    }
    println!("offsets    {}..{}", c.start_offset, c.end_offset);
    println!("verdict    {verdict}");
    if let Some(detail) = &response.detail {
        println!("detail     {detail}");
    }
    if let Some(content) = &response.content {
        println!();
        println!("{content}");
    }
}

pub(super) fn print_status(status: &IndexStatus) {
    println!("collection       {}", status.collection);
    println!("documents        {}", status.document_count);
    println!("chunks           {}", status.chunk_count);
    println!("generation       {}", status.generation);
    println!("schema version   {}", status.schema_version);
    println!(
        "dense search     {}",
        if status.dense_search_available {
            "available"
        } else {
            "unavailable"
        }
    );
    println!(
        "reranker         {}",
        status.rerank_model.as_deref().unwrap_or("none")
    );
}

pub(super) fn print_eval(report: &EvalReport) {
    println!("queries     {}", report.queries);
    println!("nDCG@10     {:.4}", report.ndcg_at_10);
    println!("Recall@100  {:.4}", report.recall_at_100);
    println!("MRR@10      {:.4}", report.mrr_at_10);
    println!("seconds     {:.3}", report.seconds);
}

pub(super) fn print_list(response: &ListCollectionsResponse, index_dir: &Path) {
    if response.collections.is_empty() {
        eprintln!("no collections in {}", index_dir.display());
    }
    for name in &response.collections {
        println!("{name}");
    }
}

/// Prints `value` as pretty JSON on stdout.
pub(super) fn print_json<T: serde::Serialize>(value: &T) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| Error::internal(format!("cannot render JSON: {err}")))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").map_err(|err| Error::storage("cannot write to stdout", err))
}

/// Prints `value` as pretty JSON with `--json`, else through `human`.
pub(super) fn emit<T: serde::Serialize>(
    json: bool,
    value: &T,
    human: impl FnOnce(&T),
) -> Result<(), Error> {
    if json {
        print_json(value)
    } else {
        human(value);
        Ok(())
    }
}
