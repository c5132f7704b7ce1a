//! Compile-time rules: every broken declaration fails with its own message (`tests/ui/fail`),
//! and tricky valid declarations compile and run (`tests/ui/pass`).
//!
//! trybuild builds the fixtures against this crate's dependencies and dev-dependencies, which
//! are the framework alone. Regenerate the reviewed `.stderr` files with `TRYBUILD=overwrite`.

#[test]
fn compile_time_rules() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
