//! Stress run of the release server (issue 8): load, slow clients, bad
//! inputs, pathological snippets and disk churn, each against its own
//! `target/release/dupcheck` on a temporary folder.
//!
//! ```text
//! make stress     # = cargo build --release --workspace --bins
//!                 #   cargo run --release -p dupcheck-bench --bin stress
//! STRESS_LOAD_SECONDS=10 target/release/stress [SCENARIO...]
//! ```
//!
//! Scenarios (one module each; names as arguments run only those):
//!
//! - `load`: 64 keep-alive clients for `STRESS_LOAD_SECONDS` (60), health
//!   latency, RSS growth;
//! - `slow`: 500 connections sending their heads a byte at a time or not
//!   at all get a 408 after `--header-timeout 5`, while health answers;
//! - `bad_inputs`: a table of malformed and hostile requests, each with
//!   the status and JSON error it must get;
//! - `pathological`: snippets that once hung tree-sitter, random bracket
//!   soup, and large checks of repeated code in every mode;
//! - `churn`: 300 file operations under the watcher, then its statistics
//!   against a fresh scan.
//!
//! Every server is stopped with SIGTERM and must exit 0 within 6 s; one that
//! exits on its own fails its row. The run prints one row per scenario
//! (requests, failures, figures) on stdout, failure details on stderr as
//! they are found, and exits 1 if any row failed. Linux only (/proc); it
//! only talks to 127.0.0.1, and every loop is bounded in count and time
//! (about 4 minutes in all with the default load time).

mod bad_inputs;
mod churn;
mod fixture;
mod http;
mod load;
mod pathological;
mod report;
mod server;
mod slow;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::Instant;

use report::Row;

/// The load time unless `STRESS_LOAD_SECONDS` says otherwise.
const DEFAULT_LOAD_SECONDS: u64 = 60;
/// The scenarios, in order.
const SCENARIOS: [&str; 5] = ["load", "slow", "bad_inputs", "pathological", "churn"];

fn main() -> ExitCode {
    let load_seconds = match std::env::var("STRESS_LOAD_SECONDS") {
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(seconds) if seconds > 0 => seconds,
            _ => {
                eprintln!("stress: STRESS_LOAD_SECONDS must be a positive number of seconds, not {text:?}");
                return ExitCode::from(2);
            }
        },
        Err(_) => DEFAULT_LOAD_SECONDS,
    };
    let chosen: Vec<String> = std::env::args().skip(1).collect();
    if let Some(unknown) = chosen
        .iter()
        .find(|name| !SCENARIOS.contains(&name.as_str()))
    {
        eprintln!(
            "stress: unknown scenario {unknown:?}; the scenarios are {}",
            SCENARIOS.join(", ")
        );
        return ExitCode::from(2);
    }
    let binary = server::binary();
    if !binary.is_file() {
        eprintln!(
            "stress: {} is missing; build it with `cargo build --release --workspace --bins`",
            binary.display()
        );
        return ExitCode::from(2);
    }
    let started = Instant::now();
    let mut rows = Vec::new();
    for name in SCENARIOS {
        if !chosen.is_empty() && !chosen.iter().any(|c| c == name) {
            continue;
        }
        eprintln!("stress: {name}...");
        let scenario_started = Instant::now();
        let row = catch_unwind(AssertUnwindSafe(|| match name {
            "load" => load::run(load_seconds),
            "slow" => slow::run(),
            "bad_inputs" => bad_inputs::run(),
            "pathological" => pathological::run(),
            _ => churn::run(),
        }))
        .unwrap_or_else(|panic| {
            let mut row = Row::new(name);
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            row.fail(format!("the harness itself failed: {why}"));
            row
        });
        eprintln!(
            "stress: {name}: {} in {:.1} s",
            if row.passed() { "ok" } else { "FAILED" },
            scenario_started.elapsed().as_secs_f64()
        );
        rows.push(row);
    }
    println!();
    report::print_table(&rows);
    println!(
        "\n{} of {} scenarios passed in {:.0} s",
        rows.iter().filter(|r| r.passed()).count(),
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    if rows.iter().all(Row::passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
