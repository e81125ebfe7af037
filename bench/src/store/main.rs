//! Store benchmark (issue 30): the quality corpora published to a
//! PostgreSQL store, and checks answered through it beside a local server
//! over the same files.
//!
//! In one run:
//!
//! 1. its own PostgreSQL 15 (`postgres`: a fresh cluster on a loopback
//!    port, as `nobody` when run as root, `fsync=off`, `shared_buffers` at
//!    its default, `pg_stat_statements` preloaded) and `dupcheck store
//!    init`;
//! 2. the 14 corpora of `make quality` (`.corpora/all/NAME`, `--quick`:
//!    3), each published by `target/release/dupcheck publish --no-cache`
//!    as the repository NAME from a tree of links (one folder per
//!    repository, named as it); per repository its files, lines, scan
//!    seconds, publish seconds after the scan (both from the summary
//!    line) and lines per second after the scan; `--kernel` adds
//!    `.corpora/linux-6.12` as a 15th repository;
//! 3. an unchanged republish of the largest corpus;
//! 4. the store's size on disk (`size`): every table's
//!    `pg_total_relation_size` over the lines indexed;
//! 5. checks (`checks`): snippets of 10 to 60 lines cut from the
//!    repositories' files (fixed seed), each sent to a local server over
//!    the tree and to a server over an empty folder reading the store;
//!    the answers compared, the latency at one connection, checks per
//!    second at 16, and the statements a check costs the database;
//! 6. the plans of a check's two statements for three of the snippets
//!    (`explain`, auto_explain with actual times);
//! 7. a republish of a copy of the largest corpus with one file changed.
//!
//! Progress goes to stderr; a compact table with each target's verdict is
//! printed on stdout, and the figures are written to
//! `target/bench-store.json` (the plans' log to
//! `target/bench-store-explain.log`). Run it with `make bench-store`, or:
//!
//! ```text
//! bash bench/fetch-corpora.sh
//! cargo build --release --bin dupcheck
//! cargo build --release -p dupcheck-bench --bin store_bench
//! target/release/store_bench [--quick] [--kernel] [--corpora DIR] [--samples N] [--seed S]
//! ```
//!
//! `--corpora DIR` (or `DUPCHECK_CORPORA`) reads the corpora from another
//! checkout's `.corpora`; `--compression lz4` stores the contents' text and
//! tokens compressed with lz4 rather than pglz (an experiment: the schema
//! of `store init` is altered before the publishes). Linux only (/proc, setpriv). It only talks to
//! 127.0.0.1, and every loop is bounded in count and time.
//!
//! It borrows the modules of `bench` it needs (`env`, `server`, `measure`,
//! `output`) by path; its own are `postgres` (the cluster), `publish` (the
//! tree, init, publishes), `size`, `checks`, `explain` and `report` (the
//! table, the targets and the JSON). This file reads the options and runs
//! the parts in order.

// Shared with `bench`, which uses what this benchmark does not: their
// unused items are not dead code.
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

mod checks;
mod explain;
mod postgres;
mod publish;
mod report;
mod size;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use dupcheck::engine::grammar::Registry;

use checks::say;
use env::{stale_input, Env, Others};
use output::Output;
use postgres::Postgres;
use publish::Published;
use report::Run;

/// Where the report goes, relative to the repository.
const REPORT: &str = "target/bench-store.json";

/// What the command line may hold.
const USAGE: &str = "usage: store_bench [--quick] [--kernel] [--corpora DIR] [--samples N] \
                     [--seed S] [--compression pglz|lz4]";

/// The repository name of the server through the store: in no corpus.
const OWN: &str = "bench-store/none";

/// The command line.
pub(crate) struct Options {
    /// `--quick`: 3 corpora, fewer checks, shorter loads.
    pub(crate) quick: bool,
    /// `--kernel`: the Linux kernel as a 15th repository.
    pub(crate) kernel: bool,
    /// `--corpora DIR`, else `DUPCHECK_CORPORA`, else `.corpora`.
    pub(crate) corpora: Option<PathBuf>,
    /// `--samples N`: snippets checked (200; `--quick` 60).
    pub(crate) samples: Option<usize>,
    /// `--seed S`: the samples' seed.
    pub(crate) seed: u64,
    /// `--compression lz4`: the contents' text and tokens compressed with
    /// lz4 instead of PostgreSQL's default pglz (`ALTER TABLE` after `store
    /// init`): what a check's detoasting would cost then.
    pub(crate) compression: Option<String>,
}

impl Options {
    /// Reads the command line; the error is the line to print.
    fn from_args() -> Result<Options, String> {
        let mut options = Options {
            quick: false,
            kernel: false,
            corpora: std::env::var_os("DUPCHECK_CORPORA").map(PathBuf::from),
            samples: None,
            seed: 30,
            compression: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
                None => (arg.clone(), None),
            };
            let mut value = || inline.clone().or_else(|| args.next()).ok_or(USAGE);
            let number = |v: String| v.parse::<u64>().map_err(|_| format!("{v:?}: {USAGE}"));
            match flag.as_str() {
                "--quick" => options.quick = true,
                "--kernel" => options.kernel = true,
                "--corpora" => options.corpora = Some(PathBuf::from(value()?)),
                "--samples" => options.samples = Some(number(value()?)? as usize),
                "--seed" => options.seed = number(value()?)?,
                "--compression" => match value()?.as_str() {
                    "pglz" => options.compression = None,
                    "lz4" => options.compression = Some("lz4".into()),
                    other => return Err(format!("--compression {other:?}: {USAGE}")),
                },
                "-h" | "--help" => return Err(USAGE.into()),
                other => return Err(format!("unknown argument {other:?}; {USAGE}")),
            }
        }
        Ok(options)
    }

    /// How much of the checks to do.
    fn counts(&self) -> checks::Counts {
        checks::Counts {
            samples: self.samples.unwrap_or(if self.quick { 60 } else { 200 }),
            seed: self.seed,
            latency: if self.quick { 300 } else { 2000 },
            warmup: if self.quick { 30 } else { 200 },
            load: Duration::from_secs(if self.quick { 3 } else { 10 }),
        }
    }
}

fn main() -> ExitCode {
    let options = match Options::from_args() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("store_bench: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("store_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The whole run, in the order of the module's list.
fn run(options: &Options) -> Result<(), String> {
    let env = Env::without_corpora()?;
    let corpora = options
        .corpora
        .clone()
        .unwrap_or_else(|| env.root.join(".corpora"));
    let counts = options.counts();
    let registry = Registry::builtin();
    let others = Others::start();
    let names: &[&str] = if options.quick {
        &publish::QUICK
    } else {
        &publish::CORPORA
    };
    let tree = env.tmp.path().join("repositories");
    let repositories = publish::link_tree(&corpora, names, options.kernel, &tree)?;

    say("starting PostgreSQL 15");
    let pg = Postgres::start()?;
    let url = pg.url();
    let init = publish::init(&env, &url)?;
    say(&init);
    if let Some(method) = &options.compression {
        pg.psql(&format!(
            "ALTER TABLE contents ALTER COLUMN text SET COMPRESSION {method}, \
             ALTER COLUMN tokens SET COMPRESSION {method}"
        ))?;
    }

    let mut published: Vec<Published> = Vec::new();
    for repository in &repositories {
        say(&format!("publishing {}", repository.name));
        published.push(publish::publish(
            &env,
            &repository.dir,
            &url,
            &repository.name,
        )?);
    }
    let largest = published
        .iter()
        .filter(|p| p.name != publish::KERNEL)
        .max_by_key(|p| p.lines())
        .ok_or("nothing was published")?
        .name
        .clone();
    let largest_dir = tree.join(&largest);
    say(&format!("republishing {largest} unchanged"));
    let unchanged = publish::publish(&env, &largest_dir, &url, &largest)?;

    say("measuring the store's size");
    let size = size::measure(&pg)?;

    say("sampling snippets");
    let samples = checks::sample(&repositories, &registry, &counts)?;
    say("starting the local server over every repository");
    let local = checks::start(&env, &tree, &[])?;
    let empty = env.tmp.path().join("empty");
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    say("starting the server through the store");
    let through = checks::start(&env, &empty, &["--store", &url, "--repository", OWN])?;
    say(&format!("comparing {} checks", samples.len()));
    let comparison = checks::compare(local.server.port, through.server.port, &samples)?;
    say("latency at one connection, local");
    let local_requests = checks::requests(local.server.port, &samples);
    let (local_latency, local_cpu) = checks::cpu_during(
        local.server.pid(),
        &pg,
        || {
            measure::latency(
                local.server.port,
                &local_requests,
                counts.warmup,
                counts.latency,
            )
        },
        |_| counts.warmup + counts.latency,
    );
    let local_latency = local_latency?;
    say("latency at one connection, through the store (counting statements)");
    let store_latency = checks::counted_latency(
        &pg,
        through.server.port,
        through.server.pid(),
        &samples,
        &counts,
    )?;
    say("16 connections, local");
    let (local_load, local_load_cpu) = checks::cpu_during(
        local.server.pid(),
        &pg,
        || checks::load(local.server.port, &samples, &counts),
        |t| t.checks as usize,
    );
    say("16 connections, through the store");
    let (store_load, store_load_cpu) = checks::cpu_during(
        through.server.pid(),
        &pg,
        || checks::load(through.server.port, &samples, &counts),
        |t| t.checks as usize,
    );
    let servers = report::Servers {
        local_files: local.files,
        local_seconds: local.seconds,
        store_files: through.files,
    };
    drop(local);
    drop(through);

    say("explaining the statements of three checks");
    // The slowest through the store, and two others that found something.
    let mut explained: Vec<usize> = comparison.slowest.iter().map(|s| s.1).take(1).collect();
    for &i in &comparison.found {
        if explained.len() < 3 && !explained.contains(&i) {
            explained.push(i);
        }
    }
    let found: Vec<&checks::Sample> = explained.iter().filter_map(|&i| samples.get(i)).collect();
    let explained = explain::explain(&env, &pg, &empty, OWN, &found).unwrap_or_else(|e| {
        say(&format!("explain failed: {e}"));
        serde_json::json!({"error": e})
    });

    say(&format!(
        "republishing a copy of {largest} with one file changed"
    ));
    let copy = env.tmp.path().join("changed");
    publish::copy_tree(&largest_dir, &copy)?;
    let rel = samples
        .iter()
        .find(|s| s.repository == largest)
        .map(|s| s.rel.clone())
        .ok_or(format!("no sample of {largest}"))?;
    let change = publish::change_one_file(&copy, &rel)?;
    let changed = publish::publish(&env, &copy, &url, &largest)?;

    let mut out = Output::writing(report::heading(&env, options, &pg), REPORT);
    if let Some(input) = stale_input(&env) {
        out.line(format!(
            "WARNING: {} is newer than target/release/dupcheck: these figures are of an older \
             build (cargo build --release --bin dupcheck)",
            input.display()
        ));
    }
    let run = Run {
        options,
        pg: &pg,
        init,
        published,
        unchanged,
        changed: (change, changed),
        size,
        samples: &samples,
        servers,
        comparison,
        local_latency,
        store_latency,
        local_load,
        store_load,
        cpu: report::Cpus {
            local: local_cpu,
            local_load: local_load_cpu,
            store_load: store_load_cpu,
        },
        explained,
        others: others.since(),
    };
    report::write(&mut out, &run);
    out.finish(&env)
}
