//! `grk` built inside the test package, so integration tests can spawn and kill a real process.

fn main() -> std::process::ExitCode {
    groundkit_server::cli::main()
}
