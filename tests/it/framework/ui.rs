//! Compile-time rules: every broken declaration fails with its own message (`tests/ui/fail`),
//! and tricky valid declarations compile and run (`tests/ui/pass`).
//!
//! Regenerate the reviewed `.stderr` files with `TRYBUILD=overwrite`.

#[test]
fn compile_time_rules() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
