//! `grk`: the groundkit command line.

fn main() -> std::process::ExitCode {
    groundkit_server::cli::main()
}
