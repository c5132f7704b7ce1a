//! The README's Rust block is the example `#[tool]`'s documentation includes,
//! `examples/src/bin/library.rs`, so the two cannot drift apart.

#[test]
fn readme_shows_the_library_example_byte_for_byte() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../../examples/src/bin/library.rs");
    let block = readme
        .split_once("\n```rust")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .and_then(|(_, rest)| rest.split_once("\n```\n"))
        .map(|(block, _)| format!("{block}\n"))
        .expect("the README has a Rust block");
    assert_eq!(
        block, example,
        "the README's Rust block differs from examples/src/bin/library.rs; copy the file into it"
    );
}
