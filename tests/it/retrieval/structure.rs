//! The retrieval engine's module graph is a line: each module uses only modules before it in
//! [`ORDER`], the order ARCHITECTURE.md's module table lists them in. A cycle, or a read module
//! reaching into the write surface, fails here.

use std::path::{Path, PathBuf};

/// The modules of `groundkit-retrieval/src/`, each allowed to use only those before it. The
/// write surface (`chunk`, `code`, `snapshot_fetch`, `ingest`, `watch`) comes last: nothing of the read surface
/// may use it.
const ORDER: &[&str] = &[
    "model",
    "embed",
    "rerank",
    "source_file",
    "analysis",
    "units",
    "office",
    "extract",
    "collection",
    "store",
    "lexical",
    "filter",
    "vectors",
    "fusion",
    "open",
    "cache",
    "search",
    "several",
    "budget",
    "citation",
    "status",
    "eval",
    "export",
    "backend",
    "chunk",
    "code",
    "snapshot_fetch",
    "ingest",
    "watch",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src/` belongs to (`None` for `lib.rs`, the root).
fn module_of(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).expect("under the root");
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    match first.strip_suffix(".rs") {
        Some("lib") => None,
        Some(name) => Some(name.to_owned()),
        None => Some(first),
    }
}

/// Every engine module named after `crate::` in `text`.
fn uses(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.push(name);
        }
    }
    found
}

#[test]
fn each_retrieval_module_uses_only_the_modules_before_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../groundkit-retrieval/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut modules_seen = std::collections::BTreeSet::new();
    let mut wrong = Vec::new();
    for file in &files {
        let Some(module) = module_of(&root, file) else {
            continue;
        };
        let rank = ORDER
            .iter()
            .position(|m| *m == module)
            .unwrap_or_else(|| panic!("{module} is not in ORDER (and ARCHITECTURE.md)"));
        modules_seen.insert(module.clone());
        let text = std::fs::read_to_string(file).expect("read source");
        for used in uses(&text) {
            let used_rank = ORDER.iter().position(|m| *m == used);
            if used_rank.is_none_or(|r| r >= rank) && used != module {
                wrong.push(format!("{} uses {used}", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(
        modules_seen.len(),
        ORDER.len(),
        "every module in ORDER exists"
    );
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md");
    for module in ORDER {
        assert!(
            architecture.contains(&format!("`{module}`")),
            "ARCHITECTURE.md lists {module}"
        );
    }
}
