//! Scale benchmark: dupcheck on the Linux kernel (`.corpora/linux-6.12`,
//! fetched by `bench/fetch-kernel.sh`) at 1/8, 1/4, 1/2 and all of its
//! tree, so that the growth of each figure with the size of the codebase
//! shows.
//!
//! Each fraction is a copy of part of the tree made of hard links (in
//! `.corpora/linux-6.12-scale/1-N/`, on the same filesystem): whole
//! folders, picked greedily by the lines dupcheck scans in them so that
//! their sum is close to the share. The tree's top-level folders are the
//! units, except that a folder holding more than an eighth of the lines
//! (drivers/ holds 65%, the other top-level folders 35% together) is
//! split into its subfolders, and its files of its own into one more
//! unit: without that, 1/2 could only be 35% or 65%. Top-level folders
//! are picked first, and the fractions are nested (1/8 within 1/4 within
//! 1/2), so that each figure grows by the code added rather than by
//! another mix of code: 1/8 and 1/4 are top-level folders only, 1/2 adds
//! parts of drivers/. The `.gitignore` of the top and of every split
//! folder is linked into each fraction, so that the same files are
//! ignored. Symbolic links are copied as links: the few that point into a
//! folder the fraction lacks (2 in 1/8) dangle, and the server counts them
//! as unreadable.
//!
//! Measured per fraction (`serve`, `peer`):
//!
//! 1. the parse floor: the texts of the files dupcheck scans, preloaded and
//!    parsed in this process on all cores, once before and once after a
//!    cold start that only scans them (stopped at its `scanned` line): the
//!    machine's speed moves by a quarter within minutes, so the scan is
//!    set against the mean of floors taken on both sides of it;
//! 2. a cold start of `dupcheck --no-cache DIR` (watcher on, as it is
//!    served): files, lines, tokens, seconds from spawn to the `scanned`
//!    line (checks answered) and of clone detection, clones and duplicated
//!    lines, VmRSS right after each of the two lines and VmHWM, and the
//!    server's own memory breakdown after each (its debug lines);
//! 3. on that server: `GET /api/clones?limit=100`, `/api/clone?id=` (the
//!    first of that page), `/api/stats` and `/api/tree`, the median of 5
//!    each with the body's size; the latency p50/p99 of 40-line checks cut
//!    from the fraction's C files over one keep-alive connection; then
//!    checks of them at 16 connections for a minute, and VmRSS and VmHWM
//!    after it; then the same load on a server of the snippets' own
//!    folders alone (hard links, `.corpora/linux-6.12-scale/own-N`, served
//!    since before the fraction's start), so that what the tree's size
//!    adds to a check is told apart from what its snippets ask;
//! 4. a warm restart: a start with the cache on fills it, is stopped with
//!    SIGTERM once the cache file is there and no longer grows, and a
//!    second start reads it: seconds from spawn to `/api/health` ready and
//!    to the clones line, files parsed and reused, and every line either
//!    start printed about the cache (a refusal, such as `not read,
//!    rebuilding`, verbatim);
//! 5. jscpd 5 (`bench/fetch-peers.sh`) on the fraction's C files, for at
//!    most 600 s and killed if its RSS passes two thirds of the machine's
//!    memory or the machine runs low: wall, CPU, peak RSS and how it ended.
//!
//! Once per run: a cold start of `.corpora/libgit2`
//! (`bench/fetch-corpora.sh`) and the same 40-line checks (cut from its
//! own C files), the reference the kernel's checks/s at 16 connections are
//! held against (target: at least 0.8 times). Its server keeps running,
//! idle, and its load runs again just before and just after each
//! fraction's: the fraction's rate is set against the mean of those two,
//! since the machine's speed moves by a quarter within minutes. With
//! `--mild`, a cold start in `--mode mild` on the largest fraction run,
//! beside strict.
//!
//! Progress goes to stderr; at the end one table per group of figures
//! (a row per figure, a column per fraction) is printed on stdout, and the
//! same figures are written to `target/bench-scale.json`. Run it with
//! `make bench-scale`, or:
//!
//! ```text
//! bash bench/fetch-kernel.sh
//! cargo build --release --workspace --bins
//! cargo run --release -p dupcheck-bench --bin scale -- \
//!     [--fractions 8,4,2,1] [--quick] [--no-peer] [--mild]
//! ```
//!
//! `--quick` shortens the loads (10 s instead of a minute at 16
//! connections, fewer latency samples); `--plan` prints the units each
//! fraction would hold and measures nothing. Linux only (/proc, wait4). It only
//! talks to 127.0.0.1, and every loop is bounded in count and time.
//!
//! It borrows the modules of `bench` it needs (`env`, `server`, `measure`,
//! `output`) by path; its own are `fractions` (the units and the linked
//! copies), `serve` (dupcheck's starts, checks and answers), `peer` (jscpd
//! 5) and `report` (the tables and the JSON). This file reads the options
//! and runs the parts in order.

// Shared with `bench`, which uses what this benchmark does not (and the
// other way round): their unused items are not dead code.
#[allow(dead_code)]
#[path = "../bench/env.rs"]
mod env;
#[allow(dead_code)]
#[path = "../bench/measure.rs"]
mod measure;
#[allow(dead_code)]
#[path = "../bench/output.rs"]
mod output;
#[allow(dead_code)]
#[path = "../bench/server.rs"]
mod server;

mod fractions;
mod peer;
mod report;
mod serve;

use std::fs;
use std::process::{Command, ExitCode};
use std::thread;
use std::time::Duration;

use dupcheck::engine::grammar::Registry;
use serde_json::{json, Value};

use env::{stale_input, Env, Others};
use fractions::Fraction;
use output::{load_average, progress, Output};
use report::Measured;

/// Where the report goes, relative to the repository.
const REPORT: &str = "target/bench-scale.json";

/// The shares the tree can be cut into, as denominators, smallest share
/// first.
pub(crate) const SHARES: [u32; 4] = [8, 4, 2, 1];

/// What the command line may hold.
const USAGE: &str = "usage: scale [--fractions 8,4,2,1] [--quick] [--no-peer] [--mild] [--plan]";

/// The command line.
pub(crate) struct Options {
    /// `--fractions`: the denominators of the fractions to run, smallest
    /// fraction first.
    fractions: Vec<u32>,
    /// `--quick`: shorter loads (see [`Counts::new`]).
    quick: bool,
    /// Not `--no-peer`: jscpd 5 on each fraction.
    peer: bool,
    /// `--mild`: a cold start in `--mode mild` on the largest fraction.
    mild: bool,
    /// `--plan`: the units of each fraction printed, nothing run.
    plan: bool,
}

impl Options {
    /// Reads the command line; the error is the line to print.
    fn from_args() -> Result<Options, String> {
        let mut options = Options {
            fractions: SHARES.to_vec(),
            quick: false,
            peer: true,
            mild: false,
            plan: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let list = match arg.as_str() {
                "--quick" => {
                    options.quick = true;
                    continue;
                }
                "--no-peer" => {
                    options.peer = false;
                    continue;
                }
                "--mild" => {
                    options.mild = true;
                    continue;
                }
                "--plan" => {
                    options.plan = true;
                    continue;
                }
                "--fractions" => args.next().ok_or(USAGE)?,
                "-h" | "--help" => return Err(USAGE.into()),
                other => match other.strip_prefix("--fractions=") {
                    Some(list) => list.to_owned(),
                    None => return Err(format!("unknown argument {other:?}; {USAGE}")),
                },
            };
            let mut fractions = Vec::new();
            for item in list.split(',').map(str::trim) {
                match item.parse::<u32>() {
                    Ok(n) if SHARES.contains(&n) => fractions.push(n),
                    _ => return Err(format!("not one of 8, 4, 2, 1: {item:?}; {USAGE}")),
                }
            }
            // Smallest first: a run that fails late has the small ones.
            fractions.sort_unstable_by(|a, b| b.cmp(a));
            fractions.dedup();
            options.fractions = fractions;
        }
        Ok(options)
    }
}

/// How much of everything to do.
pub(crate) struct Counts {
    /// Timed 40-line checks over one connection.
    pub(crate) latency: usize,
    /// Untimed checks before them.
    pub(crate) warmup: usize,
    /// Length of the load at 16 connections.
    pub(crate) load: Duration,
    /// Requests of each other endpoint (the median is shown).
    pub(crate) api_runs: usize,
    /// Longest a start may take to its clones line, or a cache to be
    /// written.
    pub(crate) start_limit: Duration,
    /// Longest a jscpd 5 run may take.
    pub(crate) peer_limit: Duration,
}

impl Counts {
    /// The counts of a full run, or of a `--quick` one.
    fn new(quick: bool) -> Counts {
        Counts {
            latency: if quick { 300 } else { 2000 },
            warmup: if quick { 30 } else { 200 },
            load: Duration::from_secs(if quick { 10 } else { 60 }),
            api_runs: 5,
            start_limit: Duration::from_secs(1800),
            peer_limit: Duration::from_secs(600),
        }
    }
}

fn main() -> ExitCode {
    let options = match Options::from_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("scale: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scale: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The whole run: the tree's units, the reference, each fraction, the
/// report.
fn run(options: &Options) -> Result<(), String> {
    let env = Env::without_corpora()?;
    let tree = env.corpus("linux-6.12");
    if !tree.is_dir() {
        return Err(format!(
            "{} is missing: bash bench/fetch-kernel.sh",
            tree.display()
        ));
    }
    let counts = Counts::new(options.quick);
    let registry = Registry::builtin();
    let mut out = Output::writing(heading(&env, options), REPORT);
    if let Some(input) = stale_input(&env) {
        out.line(format!(
            "WARNING: {} is newer than target/release/dupcheck: these figures are of an older \
             build (cargo build --release --bin dupcheck)",
            input.display()
        ));
    }
    out.json.insert("run".into(), run_json(&env, options));
    progress("scale: counting the lines of the tree's folders");
    let units = fractions::Units::measure(&tree, &registry)?;
    if options.plan {
        for &share in &options.fractions {
            let (names, lines) = Fraction::plan(&units, share);
            let percent = 100.0 * lines as f64 / units.lines.max(1) as f64;
            println!(
                "1/{share}: {percent:.1}% of {} lines: {}",
                units.lines,
                names.join(" ")
            );
        }
        return Ok(());
    }
    // First, on a machine not yet warmed by the kernel's starts; one
    // server for all fractions, its loads run beside theirs.
    let reference = match env.corpus("libgit2").is_dir() {
        true => Some(serve::reference(&env, &registry, &counts)),
        false => None,
    };
    let mut measured = Vec::new();
    let largest = options.fractions.iter().copied().min();
    for &share in &options.fractions {
        let others = Others::start();
        progress(&format!("scale 1/{share}: linking its folders"));
        let fraction = Fraction::build(&env, &units, share)?;
        let beside = reference.as_ref().and_then(|r| r.as_ref().ok());
        let figures = serve::fraction(&env, &registry, &fraction, &counts, beside);
        let peer = options
            .peer
            .then(|| peer::jscpd5(&env, &fraction, counts.peer_limit));
        let mild =
            (options.mild && Some(share) == largest).then(|| serve::mild(&env, &fraction, &counts));
        measured.push(Measured {
            fraction,
            figures,
            peer,
            mild,
            others: others.since(),
        });
    }
    report::write(&mut out, &units, &measured, reference.as_ref());
    out.finish(&env)
}

/// The table's first line: the machine and the run.
fn heading(env: &Env, options: &Options) -> String {
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let commit = git(env, &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "?".into());
    let fractions: Vec<String> = options.fractions.iter().map(|n| format!("1/{n}")).collect();
    format!(
        "dupcheck scale benchmark on {}: {} at {commit}{}; {cores} cores, {:.1} GB; {}; \
         load average {}; fractions {}{}",
        kernel_version(env),
        dupcheck_version(env),
        if src_dirty(env) {
            " with uncommitted changes in src/"
        } else {
            ""
        },
        mem_total_mb().unwrap_or(0.0) / 1024.0,
        now(),
        load_average(),
        fractions.join(", "),
        if options.quick { ", --quick" } else { "" },
    )
}

/// When, the machine, the server and the tree, for the JSON report.
fn run_json(env: &Env, options: &Options) -> Value {
    json!({
        "date": now(),
        "machine": {
            "cores": thread::available_parallelism().map_or(0, |n| n.get()),
            "memTotalMb": mem_total_mb(),
            "loadAverage": load_average(),
        },
        "dupcheck": {
            "version": dupcheck_version(env),
            "commit": git(env, &["rev-parse", "HEAD"]),
            "srcDirty": src_dirty(env),
            "staleBinary": stale_input(env).map(|p| p.display().to_string()),
        },
        "kernel": kernel_version(env),
        "options": {
            "fractions": options.fractions, "quick": options.quick,
            "peer": options.peer, "mild": options.mild,
        },
    })
}

/// The package and version `bench/fetch-kernel.sh` unpacked.
fn kernel_version(env: &Env) -> String {
    fs::read_to_string(env.corpus("linux-6.12.version"))
        .map_or("linux-6.12 (version unknown)".into(), |v| {
            v.trim().to_owned()
        })
}

/// `dupcheck --version` of the binary measured.
fn dupcheck_version(env: &Env) -> String {
    Command::new(&env.server)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or("dupcheck (version unknown)".into(), |v| v.trim().to_owned())
}

/// The output of `git ARGS` in the repository, trimmed.
fn git(env: &Env, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(&env.root)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// Whether `src/` differs from the commit: the binary may then hold work
/// that the commit does not (engineers edit the same checkout).
fn src_dirty(env: &Env) -> bool {
    git(env, &["status", "--porcelain", "--", "src"]).is_some()
}

/// MemTotal of /proc/meminfo, in MB.
pub(crate) fn mem_total_mb() -> Option<f64> {
    meminfo_mb("MemTotal")
}

/// A `kB` line of /proc/meminfo, in MB.
pub(crate) fn meminfo_mb(key: &str) -> Option<f64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo
        .lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The time now in UTC, as `date` writes it.
fn now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M:%S UTC"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or("?".into(), |d| d.trim().to_owned())
}
