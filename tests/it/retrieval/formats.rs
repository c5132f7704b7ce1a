//! The document formats a team keeps: plain-text formats read as `text` sources, and office
//! documents, workbooks, notebooks, mail and books (made by their real producers,
//! `tests/fixtures/office/make.py`) read as `extracted` sources whose chunks `fetch_chunk` verifies by re-extracting.
//! A hostile file (a zip bomb, by size or by ratio, a zip lying about its sizes, XML nested
//! without end or declaring entities, a workbook sharing one long string among many cells, a
//! book whose spine names one chapter again and again, JSON nested without end, a spreadsheet
//! row or cell repeated over a whole sheet, RTF groups nested without end, a truncated PDF, a PDF
//! its reader panics on) fails alone, with its reason, in bounded time.

use std::path::Path;
use std::time::{Duration, Instant};

use groundkit_retrieval::{self as retrieval, FetchChunkResponse, SearchResponse, Verification};

use super::Fixture;

const OFFICE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/office");

/// Copies fixture `name` (relative to the office fixtures) into the corpus as `rel`.
pub(super) fn copy_fixture(fx: &Fixture, name: &str, rel: &str) {
    let bytes = std::fs::read(Path::new(OFFICE).join(name)).expect("read fixture");
    fx.write(rel, bytes);
}

pub(super) fn fetch(fx: &Fixture, chunk_id: &str) -> FetchChunkResponse {
    let cache = fx.cache();
    let open = cache.acquire("c").expect("collection opens");
    retrieval::fetch_chunk(&open, chunk_id).expect("fetch answers")
}

/// The top hit of `query`, which must come from `source`; fetched and verified.
pub(super) fn top_hit_verified(fx: &Fixture, query: &str, source: &str) -> FetchChunkResponse {
    let hits: SearchResponse = fx.search("c", query, 3);
    let top = hits
        .results
        .first()
        .unwrap_or_else(|| panic!("no hit for {query:?}"));
    assert_eq!(top.citation.source, source, "top hit of {query:?}");
    let fetched = fetch(fx, &top.chunk_id);
    assert_eq!(
        fetched.verification,
        Verification::Verified,
        "{source}: {:?}",
        fetched.detail
    );
    assert_eq!(fetched.content.as_deref(), Some(top.text()));
    fetched
}

/// `(content, scope)` of each chunk of `document`, in order, read from the store.
fn chunks_of(fx: &Fixture, document: &str) -> Vec<(String, Option<String>)> {
    let conn = rusqlite::Connection::open(fx.index.join("c.sqlite3")).expect("open store");
    let mut stmt = conn
        .prepare("SELECT content, scope FROM chunks WHERE document_id = ?1 ORDER BY chunk_index")
        .expect("query");
    stmt.query_map([document], |row| Ok((row.get(0)?, row.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
}

/// The scope of each chunk of `document`, in order.
fn scopes_of(fx: &Fixture, document: &str) -> Vec<String> {
    chunks_of(fx, document)
        .into_iter()
        .map(|(_, scope)| scope.unwrap_or_default())
        .collect()
}

#[test]
fn plain_text_formats_are_text_sources_verified_byte_for_byte() {
    let fx = Fixture::new();
    let files = [
        (
            "guide.rst",
            "Pelican migration\n=================\n\nThe pelicans rest at the lagoon.\n",
        ),
        (
            "manual.adoc",
            "= Kiln firing\n\nStoneware is fired in the anagama kiln.\n",
        ),
        (
            "plan.org",
            "* TODO Prune the espalier\nThe espalier pears need pruning.\n",
        ),
        (
            "paper.tex",
            "\\section{Sundials}\nA gnomon casts the hour line.\n",
        ),
        (
            "data.json",
            "{\"instrument\": \"theodolite\", \"survey\": \"ridge\"}\n",
        ),
        ("deploy.yaml", "service: cormorant\nreplicas: 3\n"),
        ("steps.yml", "- name: calibrate the hygrometer\n"),
        ("config.toml", "[station]\nname = \"anemometer\"\n"),
        ("counts.csv", "species,count\nostrich,4\n"),
    ];
    for (rel, text) in files {
        fx.write(rel, text);
    }
    let summary = fx.ingest_all("c");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert_eq!(summary.added, files.len() as u64);
    // Data kept as text is not source code.
    assert_eq!(summary.code.no_grammar, 0);
    for (query, rel) in [
        ("pelicans lagoon", "guide.rst"),
        ("anagama", "manual.adoc"),
        ("espalier", "plan.org"),
        ("gnomon", "paper.tex"),
        ("theodolite", "data.json"),
        ("cormorant", "deploy.yaml"),
        ("hygrometer", "steps.yml"),
        ("anemometer", "config.toml"),
        ("ostrich", "counts.csv"),
    ] {
        let fetched = top_hit_verified(&fx, query, rel);
        assert_eq!(fetched.citation.source_class.as_str(), "text");
        assert_eq!(fetched.citation.extractor, None, "{rel}");
    }
    let chunk = fx.search("c", "theodolite", 1).results.remove(0).chunk_id;
    fx.write(
        "data.json",
        "{\"instrument\": \"sextant\", \"survey\": \"ridge\"}\n",
    );
    assert_eq!(fetch(&fx, &chunk).verification, Verification::Drifted);
}

#[test]
fn office_documents_workbooks_notebooks_mail_and_books_are_extracted_and_verified() {
    let fx = Fixture::new();
    for name in [
        "report.docx",
        "deck.pptx",
        "prices.xlsx",
        "tides.ipynb",
        "ledger.odt",
        "glacier.odp",
        "ferry.eml",
        "letters.mbox",
        "lantern.epub",
        "orchard.ods",
        "marsh.rtf",
    ] {
        copy_fixture(&fx, name, name);
    }
    let summary = fx.ingest_all("c");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert_eq!(summary.added, 11);
    for (query, rel, extractor) in [
        ("heliotrope terraces", "report.docx", "groundkit-docx@1"),
        ("lenses winter storms", "deck.pptx", "groundkit-pptx@1"),
        ("cardamom caravan", "prices.xlsx", "groundkit-xlsx@1"),
        ("estuary brackish", "tides.ipynb", "groundkit-ipynb@1"),
        ("apiary lavender honey", "ledger.odt", "groundkit-odt@1"),
        ("moraine valley", "glacier.odp", "groundkit-odp@1"),
        ("ferry lighthouse dawn", "ferry.eml", "groundkit-eml@1"),
        ("granary millstone", "letters.mbox", "groundkit-mbox@1"),
        ("squall shutters", "lantern.epub", "groundkit-epub@1"),
        ("cider press oak screw", "orchard.ods", "groundkit-ods@1"),
        ("curlews equinox", "marsh.rtf", "groundkit-rtf@1"),
    ] {
        let fetched = top_hit_verified(&fx, query, rel);
        assert_eq!(fetched.citation.source_class.as_str(), "extracted");
        assert_eq!(fetched.citation.extractor.as_deref(), Some(extractor));
    }
    // A slide is a unit, with its scope.
    let slides = chunks_of(&fx, "deck.pptx");
    assert_eq!(slides.len(), 2);
    assert_eq!(
        slides[1],
        (
            "Findings\nThree lenses need polishing before the winter storms.".to_owned(),
            Some("slide 2".to_owned())
        )
    );
    // A sheet's rows in blocks of 20, each under the header row.
    let blocks = chunks_of(&fx, "prices.xlsx");
    assert_eq!(
        scopes_of(&fx, "prices.xlsx"),
        [
            "sheet Prices, rows 2-21",
            "sheet Prices, rows 22-41",
            "sheet Prices, rows 42-46",
            "sheet Notes, rows 2-2"
        ]
    );
    for (content, _) in &blocks[..3] {
        assert!(content.starts_with("Item | Price | Origin\n"), "{content}");
    }
    assert!(
        blocks[1].0.contains("saffron lot 30 | 11 | La Mancha"),
        "{}",
        blocks[1].0
    );
    // An OpenDocument sheet the same way, its repeated empty cells kept as columns and its
    // million trailing empty rows costing nothing.
    let blocks = chunks_of(&fx, "orchard.ods");
    assert_eq!(
        scopes_of(&fx, "orchard.ods"),
        [
            "sheet Harvest, rows 2-21",
            "sheet Harvest, rows 22-27",
            "sheet Notes, rows 2-2"
        ]
    );
    let lines: Vec<&str> = blocks[1].0.lines().collect();
    assert_eq!(
        (lines[0], lines[1], lines[lines.len() - 1]),
        (
            "Orchard | Crates | Variety",
            "quince row 21 | 31 | Champion",
            "pruning shears |  |  | sharpened"
        )
    );
    // RTF's paragraphs, without its font and colour tables, its \u escapes decoded.
    let marsh = chunks_of(&fx, "marsh.rtf");
    assert_eq!(
        marsh[0].0,
        "Salt marsh survey\n\nThe curlews returned to the salt marsh before the equinox.\n\n\
         Samphire grows along the creek; the warden\u{2019}s caf\u{e9} sells it pickled."
    );
    // Each notebook cell is a unit; outputs are not indexed, empty cells are left out.
    assert_eq!(
        scopes_of(&fx, "tides.ipynb"),
        ["cell 1 (markdown)", "cell 2 (code)"]
    );
    assert!(fx.search("c", "outputonlyword", 5).results.is_empty());
    // A message is its chosen headers and its text body; its attachment is not read.
    let message = &chunks_of(&fx, "ferry.eml")[0].0;
    assert!(
        message.starts_with(
            "Subject: Ferry timetable change\nFrom: Harbour Office <harbour@example.org>\n\
             To: Archive Team <archive@example.org>\nDate: 2026-03-03"
        ),
        "{message}"
    );
    assert!(fx.search("c", "binaryattachmentword", 5).results.is_empty());
    assert_eq!(scopes_of(&fx, "letters.mbox"), ["message 1", "message 2"]);
    // A book's spine in reading order, each document a unit without its head.
    let sections = chunks_of(&fx, "lantern.epub");
    assert_eq!(
        sections[1],
        (
            "The storm\n\nA squall tore the shutters from the watch room.".to_owned(),
            Some("section 2".to_owned())
        )
    );
}

#[test]
fn a_pdf_is_cut_at_its_pages_and_each_chunk_cites_its_page() {
    let fx = Fixture::new();
    copy_fixture(&fx, "almanac.pdf", "almanac.pdf");
    fx.ingest_all("c");
    // Three pages by fpdf2; the second has no text and gives no chunk. (The reader separates
    // the lines of a paragraph by a blank line.)
    assert_eq!(
        chunks_of(&fx, "almanac.pdf"),
        [
            (
                "Almanac of the salt marsh.\n\nCordgrass holds the mud against the spring tides."
                    .to_owned(),
                Some("page 1".to_owned())
            ),
            (
                "Herons wade the channels at dusk, hunting killifish.".to_owned(),
                Some("page 3".to_owned())
            ),
        ]
    );
    let hits = fx.search("c", "herons killifish", 1);
    assert_eq!(hits.results[0].scope.as_deref(), Some("page 3"));
    let fetched = top_hit_verified(&fx, "herons killifish", "almanac.pdf");
    assert_eq!(
        fetched.citation.extractor.as_deref(),
        Some("groundkit-pdf@1")
    );
    assert_eq!(fetched.scope.as_deref(), Some("page 3"));
}

#[test]
fn a_changed_office_document_drifts() {
    let fx = Fixture::new();
    copy_fixture(&fx, "report.docx", "report.docx");
    fx.ingest_all("c");
    let chunk = fx.search("c", "heliotrope", 1).results.remove(0).chunk_id;
    assert_eq!(fetch(&fx, &chunk).verification, Verification::Verified);
    copy_fixture(&fx, "revised/report.docx", "report.docx");
    let fetched = fetch(&fx, &chunk);
    assert_eq!(fetched.verification, Verification::Drifted);
    assert_eq!(fetched.content, None);
}

#[test]
fn each_hostile_file_fails_alone_with_its_reason_in_bounded_time() {
    let fx = Fixture::new();
    copy_fixture(&fx, "report.docx", "report.docx");
    copy_fixture(&fx, "wide/dimension.xlsx", "dimension.xlsx");
    let hostile = [
        ("bomb.docx", "declares more than 256 MiB uncompressed"),
        ("liar.docx", "larger than its declared uncompressed size"),
        ("ratio.docx", "expands more than 200 times"),
        ("shared.xlsx", "text is larger than 64 MiB"),
        ("echo.epub", "its text is larger than 64 MiB"),
        ("deep.docx", "nested deeper than 256 elements"),
        ("entity.docx", "declares entities"),
        ("deep.ipynb", "recursion limit"),
        ("rows.ods", "holds more than 1000000 cells"),
        ("columns.ods", "wider than 1024 columns"),
        ("deep.rtf", "nested deeper than 256 groups"),
        ("truncated.pdf", "does not parse as PDF"),
        ("fontless.pdf", "the PDF reader failed on its structure"),
    ];
    for (name, _) in hostile {
        copy_fixture(&fx, &format!("hostile/{name}"), name);
    }
    let started = Instant::now();
    let summary = fx.ingest_all("c");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(summary.failed.len(), hostile.len(), "{:?}", summary.failed);
    for (name, reason) in hostile {
        let failure = summary
            .failed
            .iter()
            .find(|f| f.source == name)
            .unwrap_or_else(|| panic!("{name} did not fail"));
        assert!(
            failure.reason.contains(reason),
            "{name}: {}",
            failure.reason
        );
    }
    // The rest of the ingest succeeded; a sheet declaring the largest dimension costs its cells.
    assert_eq!(summary.added, 2);
    top_hit_verified(&fx, "heliotrope", "report.docx");
    let wide = top_hit_verified(&fx, "quince orchard", "dimension.xlsx");
    assert_eq!(
        wide.content.as_deref(),
        Some("Wide | declared dimension of a quince orchard")
    );
}
