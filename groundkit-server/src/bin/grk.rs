//! `grk`: the grounding service command line.

fn main() {}
