//! The README's Rust blocks are the examples they show: its first is the example `#[tool]`'s
//! documentation includes, `groundkit-macros/doc/library.rs`, and another is
//! `examples/src/bin/notes.rs`, so neither can drift apart from its file.

/// The README's Rust blocks compiled as doctests (` ```rust` and ` ```rust,no_run`), in order.
fn rust_blocks() -> Vec<String> {
    let readme = include_str!("../../README.md");
    readme
        .split("\n```rust")
        .skip(1)
        .filter_map(|rest| {
            let (info, body) = rest.split_once('\n')?;
            let compiled = info.is_empty() || info == ",no_run";
            let (block, _) = body.split_once("\n```\n")?;
            compiled.then(|| format!("{block}\n"))
        })
        .collect()
}

#[test]
fn readme_shows_the_library_example_byte_for_byte() {
    let example = include_str!("../doc/library.rs");
    let blocks = rust_blocks();
    assert_eq!(
        blocks.first(),
        Some(&example.to_owned()),
        "the README's first Rust block differs from groundkit-macros/doc/library.rs; copy the file into it"
    );
}

#[test]
fn readme_shows_the_notes_example_byte_for_byte() {
    let example = include_str!("../../examples/src/bin/notes.rs");
    assert!(
        rust_blocks().iter().any(|block| block == example),
        "no Rust block of the README is examples/src/bin/notes.rs; copy the file into it"
    );
}
