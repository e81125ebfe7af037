//! Clone-injection quality benchmark: how many injected clones the real
//! server finds, how exactly it places them, how often it reports code that
//! is not there, and how close its cold scan of each corpus comes to the
//! tree-sitter parse floor.
//!
//! For each corpus fetched by `bench/fetch-corpora.sh` (one per language:
//! lodash/JavaScript, rxjs/TypeScript, django/Python, tokio/Rust,
//! client_golang/Go, commons-lang/Java, libgit2/C, imgui/C++,
//! newtonsoft/C#, activesupport/Ruby, dbal/PHP, react-native/Kotlin,
//! expo-modules/Swift, scala/Scala) it samples functions of 8 to 60 lines
//! and at least 50 tokens with a fixed seed and makes clones of each: T0
//! verbatim; T1 new layout (indentation doubled, comment and blank lines
//! inserted, and where the language allows, braces moved to their own line
//! and lines joined after a comma); T2i every local variable and parameter
//! renamed; T2l renamed and every number and string literal changed; T3
//! renamed and one to three one-line statements edited, each at the start
//! (the first statement not yet edited), the middle or the end (the last)
//! and each inserted before, deleted or changed (an infix operator
//! swapped, an argument added to a call, or the statement replaced), all
//! drawn from the function's own seeded generator; T3c ("classic", T3
//! until 2026-11-28) renamed and the one statement nearest the middle
//! inserted or deleted. A variant that parses worse than its original
//! (more ERROR or MISSING nodes) is dropped and counted; one with nothing
//! to change (no local, no literal, no statement) is skipped, as is a T3
//! or T3c left under 50 tokens by its deletions (it shares fewer than
//! min-tokens with the original). What is a function, a local, a statement
//! list and a legal relayout is each language's sampler (`lang/`).
//!
//! Then, for each mode, it serves `.corpora/all` with
//! `target/release/dupcheck` (default thresholds), posts every variant to
//! `/api/check`, and counts it found when the duplications reported in the
//! function's own file cover at least half of its lines; exact when one of
//! them starts and ends within one line of the function (measured on the
//! variants the mode is meant to find whole: T0 and T1, plus T2i in mild and
//! weak, plus T2l in weak; T3x and T3cx are the same for T3 and T3c,
//! near-miss copies, as a share of those found). Functions sampled the same way from a negative
//! corpus of the same language (code that is not indexed) are false
//! positives when anything at all is reported.
//!
//! Each miss is diagnosed locally (`diagnose`): the longest common run of
//! normalized tokens between the variant and the function as tokenized
//! inside its file, and the tokens where that run breaks, with their node
//! kinds. A run under the thresholds makes the miss expected by
//! construction; a longer one that the server did not report is a server
//! miss.
//!
//! Last, the cold scan of each positive corpus alone (`scan`): a fresh
//! `dupcheck DIR --no-cache --no-watch`, from spawn to its summary line,
//! against the parse floor of the same files, their runs alternating and
//! the medians compared.
//!
//! ```text
//! make quality    # = bash bench/fetch-corpora.sh, cargo build --release
//!                 #   --workspace --bins, cargo run --release -p dupcheck-bench --bin quality
//! target/release/quality --corpus django --mode mild --limit 20
//! target/release/quality --corpus rxjs --dump /tmp/variants
//! target/release/quality --corpus client_golang,scala --no-scan
//! target/release/quality --scan-only
//! ```
//!
//! It prints one row per corpus and mode (recall per variant, exact, false
//! positives, latency), the cold scans, the targets of issue 9 per corpus,
//! T3's breakdown in mild and weak mode (single-edit copies by the edit's
//! position and kind, all by their number of edits), and the commonest
//! causes of misses; it writes everything, each miss with
//! its code and diagnosis included, to `target/quality.json`. `--dump DIR`
//! also writes every variant to a file, to compare with `dupcheck
//! --dump-tokens FILE`.

mod args;
mod corpora;
mod diagnose;
mod judge;
mod lang;
mod sample;
mod scan;
mod server;
mod variants;

use std::process::ExitCode;

use clap::Parser;
use dupcheck::engine::grammar::Registry;
use dupcheck::engine::tokens::Mode;
use serde_json::json;

use crate::args::Args;
use crate::corpora::{prepare, require, Corpus, CORPORA};
use crate::server::Server;

/// The server's default thresholds, which the benchmark runs with.
pub const MIN_TOKENS: usize = 50;
pub const MIN_LINES: u32 = 5;
const MODES: [Mode; 3] = [Mode::Strict, Mode::Mild, Mode::Weak];

fn main() -> ExitCode {
    let mut raw = std::env::args_os().skip(1);
    if raw.next().is_some_and(|a| a == scan::COLD_FLOOR_ARG) {
        let list = raw.next().unwrap_or_default();
        return match scan::run_cold_floor(std::path::Path::new(&list)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("quality: error: {message}");
                ExitCode::from(2)
            }
        };
    }
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("quality: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let registry = Registry::builtin();
    let all = args.corpora.join("all");
    require(&all, "run bench/fetch-corpora.sh")?;
    require(&args.server, "run cargo build --release --bins")?;
    let corpora: Vec<&Corpus> = CORPORA
        .iter()
        .filter(|c| args.corpus.is_empty() || args.corpus.iter().any(|n| n == c.name))
        .collect();
    if corpora.is_empty() {
        let names: Vec<&str> = CORPORA.iter().map(|c| c.name).collect();
        return Err(format!("unknown corpus: use {}", names.join(", ")));
    }
    let names: Vec<&'static str> = corpora.iter().map(|c| c.name).collect();
    if args.scan_only {
        let scans = scan::cold_scans(&names, &registry, &args);
        return write(&args, json!({ "coldScans": scans }));
    }
    let mut prepared = Vec::new();
    for corpus in corpora {
        prepared.push(prepare(corpus, &registry, &args)?);
    }
    let mut reports = Vec::new();
    for mode in MODES
        .into_iter()
        .filter(|m| args.mode.is_none_or(|wanted| wanted == *m))
    {
        let log = args
            .out
            .with_file_name(format!("quality-server-{}.log", mode.name()));
        let server = Server::start(&args.server, &all, mode, &log)
            .map_err(|e| format!("cannot start the server: {e} (log: {})", log.display()))?;
        for corpus in &prepared {
            let report = judge::evaluate(corpus, mode, server.port);
            judge::print_row(&report, reports.is_empty());
            reports.push(report);
        }
    }
    let scans = match args.no_scan {
        true => Vec::new(),
        false => scan::cold_scans(&names, &registry, &args),
    };
    judge::print_targets(&prepared, &reports, &scans);
    judge::print_breakdown(&reports);
    judge::print_causes(&reports);
    let results = json!({
        "seed": args.seed,
        "limit": args.limit,
        "results": reports,
        "coldScans": scans,
    });
    write(&args, results)
}

/// Writes the results to `--out`.
fn write(args: &Args, results: serde_json::Value) -> Result<(), String> {
    std::fs::write(&args.out, format!("{results:#}"))
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    println!("\nfull results, misses included: {}", args.out.display());
    Ok(())
}
