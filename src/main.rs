//! The `dupcheck` command: parse flags, set up logging, run the command
//! ([`dupcheck::interfaces::cli::run`]), and on an error print one line and
//! exit with its status. `report` exits 0 or 1 by its outcome.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::process::ExitCode;

use clap::Parser;
use dupcheck::project::config::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DUPCHECK_LOG")
                .unwrap_or_else(|_| "dupcheck=info".into()),
        )
        .with_writer(|| dupcheck::LossyStderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match dupcheck::interfaces::cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            dupcheck::stderr_line(&format!("dupcheck: error: {error}"));
            ExitCode::from(error.exit_code())
        }
    }
}
