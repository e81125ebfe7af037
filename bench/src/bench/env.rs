//! The benchmark's surroundings: where the server, the corpora and the
//! peers are, how much of everything to do (`--quick` or not), whether the
//! server binary is older than its sources, the files dupcheck scans in a
//! corpus (and how long parsing them alone takes), and what /proc says
//! about a process (CPU seconds, RSS) and about every other process (the
//! CPU a shared machine spends elsewhere).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser as _;
use dupcheck::engine::grammar::{FormatId, Registry};
use dupcheck::engine::hash::HashMap;
use dupcheck::engine::parse::Budget;
use dupcheck::project::config::{Cli, Config};
use rayon::prelude::*;

/// Corpora of the cold scan, in table order; `four` holds the other four
/// side by side (`.corpora/all`, which `make quality` serves, holds every
/// language's corpus).
pub(crate) const CORPORA: [&str; 5] = ["lodash", "rxjs", "django", "tokio", "four"];

/// Formats the peers are restricted to.
pub(crate) const PEER_FORMATS: &str = "javascript,typescript,python,rust";

/// How much of everything to do.
pub(crate) struct Counts {
    /// Runs of dupcheck, jscpd 5 and jscpd-rs per corpus (the median is shown).
    pub(crate) scan_runs: usize,
    /// Timed runs of the parse-only floor (the fastest is shown).
    pub(crate) floor_runs: usize,
    /// jscpd 4 runs on every corpus, not only lodash.
    pub(crate) jscpd4_everywhere: bool,
    /// Warm starts (the median is shown).
    pub(crate) warm_runs: usize,
    /// Timed checks per latency measurement of 20 and 100 lines.
    pub(crate) latency: usize,
    /// Timed checks of 1,000 lines.
    pub(crate) latency_large: usize,
    /// Untimed checks before each latency measurement.
    pub(crate) warmup: usize,
    /// Length of each throughput measurement.
    pub(crate) throughput: Duration,
    /// Checks before the second memory reading.
    pub(crate) memory_checks: u64,
    /// Update trials (the median is shown).
    pub(crate) update_trials: usize,
}

impl Counts {
    /// The counts of a full run, or of a `--quick` one.
    pub(crate) fn new(quick: bool) -> Counts {
        if quick {
            Counts {
                scan_runs: 1,
                floor_runs: 1,
                jscpd4_everywhere: false,
                warm_runs: 1,
                latency: 200,
                latency_large: 30,
                warmup: 20,
                throughput: Duration::from_secs(1),
                memory_checks: 10_000,
                update_trials: 3,
            }
        } else {
            Counts {
                scan_runs: 3,
                floor_runs: 3,
                jscpd4_everywhere: true,
                warm_runs: 3,
                latency: 2000,
                latency_large: 300,
                warmup: 200,
                throughput: Duration::from_secs(3),
                memory_checks: 100_000,
                update_trials: 5,
            }
        }
    }
}

/// Paths of the repository, the server, the peers and a scratch folder.
pub(crate) struct Env {
    /// The repository: `.corpora/` and `target/` are in it.
    pub(crate) root: PathBuf,
    /// `target/release/dupcheck`.
    pub(crate) server: PathBuf,
    /// `.bench-tools/`, where `bench/fetch-peers.sh` installs the peers.
    pub(crate) tools: PathBuf,
    /// Scratch space (peers' reports, the update's copy), removed on drop.
    pub(crate) tmp: tempfile::TempDir,
    /// A jscpd config file that turns `.gitignore` off (the repository's
    /// own `.gitignore` lists `/.corpora`, and jscpd-server looks upward).
    pub(crate) jscpd_config: PathBuf,
}

impl Env {
    /// Finds the server and the corpora, and makes the scratch folder.
    pub(crate) fn new() -> Result<Env, String> {
        let env = Env::without_corpora()?;
        for corpus in CORPORA {
            if !env.corpus(corpus).is_dir() {
                return Err(format!(
                    ".corpora/{corpus} is missing: bash bench/fetch-corpora.sh"
                ));
            }
        }
        Ok(env)
    }

    /// Finds the server and makes the scratch folder, whatever corpora
    /// there are (the scale benchmark brings its own).
    pub(crate) fn without_corpora() -> Result<Env, String> {
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let server = root.join("target/release/dupcheck");
        if !server.is_file() {
            return Err(format!(
                "{} is missing: cargo build --release --bin dupcheck",
                server.display()
            ));
        }
        let tmp = tempfile::Builder::new()
            .prefix("dupcheck-bench.")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        let jscpd_config = tmp.path().join("jscpd.json");
        fs::write(&jscpd_config, "{\"gitignore\": false}\n").map_err(|e| e.to_string())?;
        Ok(Env {
            tools: root.join(".bench-tools"),
            root,
            server,
            tmp,
            jscpd_config,
        })
    }

    /// `.corpora/NAME`.
    pub(crate) fn corpus(&self, name: &str) -> PathBuf {
        self.root.join(".corpora").join(name)
    }
}

/// The first input of the server binary that is newer than it, if any: the
/// figures would then describe an older dupcheck.
pub(crate) fn stale_input(env: &Env) -> Option<PathBuf> {
    let built = fs::metadata(&env.server).and_then(|m| m.modified()).ok()?;
    let newer = |path: &Path| {
        fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t > built)
    };
    let mut pending = vec![env.root.join("src")];
    let mut files = vec![env.root.join("grammars.toml"), env.root.join("Cargo.lock")];
    for _ in 0..10_000 {
        let Some(dir) = pending.pop() else { break };
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.into_iter().find(|f| newer(f))
}

// ------------------------------------------------------------------- /proc --

/// User+system CPU seconds of a live process, all threads.
pub(crate) fn proc_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may hold spaces: state is 0,
    // utime 11, stime 12 (fields 14 and 15 of proc(5)).
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / clock_ticks())
}

/// CPU seconds (user+system, reaped children included) of every process
/// that is neither this benchmark nor one of its descendants.
fn others_cpu_seconds() -> f64 {
    let me = std::process::id();
    let mut procs: Vec<(u32, u32, f64)> = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0.0;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat
            .rfind(')')
            .map_or("", |i| &stat[i + 1..])
            .split_whitespace()
            .collect();
        let number = |i: usize| fields.get(i).and_then(|f| f.parse().ok()).unwrap_or(0.0);
        // ppid is field 1; utime, stime, cutime, cstime are 11 to 14.
        let ticks = number(11) + number(12) + number(13) + number(14);
        procs.push((pid, number(1) as u32, ticks));
    }
    let parents: HashMap<u32, u32> = procs.iter().map(|&(pid, ppid, _)| (pid, ppid)).collect();
    let ours = |mut pid: u32| {
        for _ in 0..64 {
            if pid == me {
                return true;
            }
            match parents.get(&pid) {
                Some(&ppid) if ppid != 0 => pid = ppid,
                _ => return false,
            }
        }
        false
    };
    let ticks: f64 = procs.iter().filter(|p| !ours(p.0)).map(|p| p.2).sum();
    ticks / clock_ticks()
}

/// How much CPU other processes used since a moment: the machine is shared,
/// and their work skews every figure measured meanwhile.
pub(crate) struct Others {
    cpu: f64,
    at: Instant,
}

impl Others {
    /// Starts counting now.
    pub(crate) fn start() -> Others {
        Others {
            cpu: others_cpu_seconds(),
            at: Instant::now(),
        }
    }

    /// Other processes' CPU seconds and the wall seconds since the start.
    pub(crate) fn since(&self) -> (f64, f64) {
        let cpu = (others_cpu_seconds() - self.cpu).max(0.0);
        (cpu, self.at.elapsed().as_secs_f64())
    }
}

/// Clock ticks per second, the unit of /proc/PID/stat's times.
fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// A `kB` line of /proc/PID/status (`VmRSS`, `VmHWM`), in MB.
pub(crate) fn proc_status_mb(pid: u32, key: &str) -> Option<f64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

// ----------------------------------------------------------------- sources --

/// A file dupcheck scans, with its text.
pub(crate) struct Source {
    /// Its format, as dupcheck detects it.
    pub(crate) format: FormatId,
    /// Its path relative to the scanned folder.
    pub(crate) rel: String,
    /// Its text, as dupcheck reads it.
    pub(crate) text: String,
}

/// The configuration of `dupcheck DIR` with default options and no cache.
pub(crate) fn default_config(dir: &Path, registry: &Registry) -> Result<Config, String> {
    let args = [OsString::from("dupcheck"), dir.into(), "--no-cache".into()];
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    Config::resolve(&cli, &cwd, registry, |_| {}).map_err(|e| e.to_string())
}

/// Wall seconds to parse every text once on all cores (the fastest of
/// `runs`, after one untimed run that makes each thread's parsers): the
/// floor under a scan of the same files.
pub(crate) fn parse_floor(registry: &Registry, sources: &[Source], runs: usize) -> f64 {
    let parse_all = || {
        let started = Instant::now();
        sources.par_iter().for_each(|s| {
            let budget = Budget::for_file(s.text.len());
            let tree =
                dupcheck::engine::parse::parse(registry.get(s.format), &s.text, None, &budget);
            std::hint::black_box(tree.expect("the corpora parse within their budget"));
        });
        started.elapsed().as_secs_f64()
    };
    if runs > 1 {
        parse_all();
    }
    (0..runs).map(|_| parse_all()).fold(f64::INFINITY, f64::min)
}

/// The files `dupcheck DIR` (default options) scans, read as it reads them.
pub(crate) fn scanned_sources(dir: &Path, registry: &Registry) -> Result<Vec<Source>, String> {
    let config = default_config(dir, registry)?;
    let (candidates, _) =
        dupcheck::project::walk::candidates(&config, registry).map_err(|e| e.to_string())?;
    Ok(candidates
        .into_iter()
        .filter_map(|c| {
            let text =
                dupcheck::project::walk::read(&c.abs, config.max_size, config.max_lines).ok()?;
            Some(Source {
                format: c.format,
                rel: c.rel,
                text,
            })
        })
        .collect())
}
