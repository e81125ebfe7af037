//! Performance benchmark: dupcheck's scan, start, check, update and memory
//! figures, beside its peers, on the corpora of `bench/fetch-corpora.sh`.
//!
//! Measured in one run (each part can be run alone with `--only`):
//!
//! 1. `scan`: cold scan of `.corpora/{lodash,rxjs,django,tokio,four}`: wall
//!    seconds, CPU seconds (user+sys) and peak RSS of `dupcheck --no-cache
//!    --no-watch` from spawn to its stderr `scanned` line (CPU and VmHWM read
//!    from /proc after the clones' line that follows it), of each peer of `bench/fetch-peers.sh`
//!    (jscpd 5, jscpd 4, jscpd-rs) run to completion (wait4 rusage), and the
//!    parse-only floor: the texts of the files dupcheck scans, preloaded, and
//!    parsed in-process with `dupcheck::engine::parse::parse` on all cores.
//! 2. `warm`: spawn to `/api/health` ready (polled every 2 ms) on `four` with
//!    a cache filled by a previous run.
//! 3. `checks`: `/api/check` latency p50/p99 over one keep-alive connection
//!    for snippets of 20, 100 and 1,000 lines cut from the corpora, and
//!    checks/s at 1, 16 and 64 keep-alive connections; the same against
//!    jscpd-rs's `jscpd-server` on the same folder.
//! 4. `update`: in a watched copy of lodash, the time from writing a new file
//!    to the first check that reports a duplication in it.
//! 5. `memory`: dupcheck's VmRSS after the scan of `four` and after 100,000
//!    checks of 20-line snippets over 16 connections.
//!
//! Cold scans are the median of 3 runs (jscpd 4: one run), the floor the
//! fastest of 3. Peers run with `-k 50 -l 5`, the four formats above, files
//! up to 1 MB and no line limit where they have the options, and
//! `.gitignore` off (the repository's own lists `/.corpora`, and jscpd 4 and
//! jscpd-server look upward for it). A latency measurement stops after 60 s.
//! The machine may be shared: each part reports how much CPU other processes
//! used meanwhile, and a warning says when `target/release/dupcheck` is older
//! than its sources.
//!
//! It prints one table (progress goes to stderr) and writes
//! `target/bench.json`. Run it with `make bench`, or:
//!
//! ```text
//! bash bench/fetch-corpora.sh && bash bench/fetch-peers.sh
//! cargo build --release --workspace --bins
//! cargo run --release -p dupcheck-bench --bin bench -- [--only scan|warm|checks|update|memory] [--quick]
//! ```
//!
//! `--quick` shrinks every count (and runs jscpd 4 on lodash only) for
//! development. Linux only (/proc, wait4). It only talks to 127.0.0.1, and
//! every loop is bounded in count and time.
//!
//! One module per part (`scan`, `warm`, `checks`, `update`; memory is
//! measured by `checks` on the same server), beside what they share: `env`
//! (paths, counts, the files a corpus holds, /proc readings), `server` (the
//! processes under test and HTTP to them), `workload` (the snippets and
//! editing sessions the checks send), `measure` (latency and throughput)
//! and `output` (the table and `target/bench.json`). This file reads the
//! options, runs the parts in order and writes the report.

mod checks;
mod env;
mod measure;
mod output;
mod scan;
mod server;
mod update;
mod warm;
mod workload;

use std::process::ExitCode;
use std::thread;

use serde_json::json;

use env::{stale_input, Counts, Env, Others};
use output::{load_average, Output};

/// One part of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Scan,
    Warm,
    Checks,
    Update,
    Memory,
}

impl Part {
    /// The part an `--only` value names.
    fn parse(name: &str) -> Option<Part> {
        Some(match name {
            "scan" => Part::Scan,
            "warm" => Part::Warm,
            "checks" => Part::Checks,
            "update" => Part::Update,
            "memory" => Part::Memory,
            _ => return None,
        })
    }
}

/// What the command line may hold.
const USAGE: &str = "usage: bench [--only scan|warm|checks|update|memory] [--quick]";

/// The command line.
struct Options {
    /// `--only PART`: that part alone.
    only: Option<Part>,
    /// `--quick`: every count shrunk (see [`Counts::new`]).
    quick: bool,
}

impl Options {
    /// Reads the command line; the error is the line to print.
    fn from_args() -> Result<Options, String> {
        let mut options = Options {
            only: None,
            quick: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let value = match arg.as_str() {
                "--quick" => {
                    options.quick = true;
                    continue;
                }
                "--only" => args.next().ok_or(USAGE)?,
                "-h" | "--help" => return Err(USAGE.into()),
                other => match other.strip_prefix("--only=") {
                    Some(value) => value.to_owned(),
                    None => return Err(format!("unknown argument {other:?}; {USAGE}")),
                },
            };
            let part = Part::parse(&value).ok_or(format!("unknown part {value:?}; {USAGE}"))?;
            options.only = Some(part);
        }
        Ok(options)
    }

    /// Whether `part` is to be measured.
    fn wants(&self, part: Part) -> bool {
        self.only.is_none_or(|only| only == part)
    }
}

fn main() -> ExitCode {
    let options = match Options::from_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("bench: {e}");
            return ExitCode::from(2);
        }
    };
    let env = match Env::new() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let counts = Counts::new(options.quick);
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let load = load_average();
    let mut out = Output::new(format!(
        "dupcheck benchmark: {cores} cores, load average {load}{}",
        if options.quick { ", --quick" } else { "" }
    ));
    if let Some(input) = stale_input(&env) {
        out.line(format!(
            "WARNING: {} is newer than target/release/dupcheck: these figures are of an older \
             build (cargo build --release --bin dupcheck)",
            input.display()
        ));
    }
    out.json.insert(
        "machine".into(),
        json!({"cores": cores, "loadAverage": load, "quick": options.quick}),
    );
    if options.wants(Part::Scan) {
        let others = Others::start();
        scan::cold_scan(&env, &counts, &mut out);
        out.others("scan", &others);
    }
    if options.wants(Part::Warm) {
        let others = Others::start();
        match warm::warm_start(&env, &counts, &mut out) {
            Ok(()) => out.others("warm", &others),
            Err(e) => out.failed("warmStart", &e),
        }
    }
    if options.wants(Part::Checks) || options.wants(Part::Memory) {
        let others = Others::start();
        match checks::checks_and_memory(&env, &options, &counts, &mut out) {
            Ok(()) => out.others("checks", &others),
            Err(e) => out.failed("checks", &e),
        }
    }
    if options.wants(Part::Update) {
        let others = Others::start();
        match update::update(&env, &counts, &mut out) {
            Ok(()) => out.others("update", &others),
            Err(e) => out.failed("update", &e),
        }
    }
    match out.finish(&env) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}
