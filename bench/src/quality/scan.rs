//! Cold scans: each positive corpus served alone by a fresh `dupcheck DIR
//! --no-cache --no-watch`, timed from spawn to its `dupcheck: scanned`
//! line (the index is built and answers checks), against
//! the tree-sitter parse floor of the same files: the texts dupcheck scans
//! (its own walk and reader, default options), preloaded, each parsed once
//! in this process with `dupcheck::engine::parse::parse` on all cores: the
//! floor first, once untimed (its preload also warms the page cache for the
//! scans, and the run makes each thread's parsers), then the timed runs
//! alternate, a floor then a scan, so that both see the same load of a
//! shared machine, and the ratio is of their medians (the same statistic
//! on both sides: on this kind of virtual machine one run of either varies
//! by a third); the ratio of the fastest of each is shown beside it. The
//! ratio is what the scan adds to parsing: the process's start, walking,
//! reading, the walk of the trees for tokens, hashing and indexing; the
//! start alone is measured on an empty folder. The whole-project clone
//! detection that follows (the statistics' line) is timed too, from spawn,
//! and shown beside it over the same floor.
//!
//! Beside the floor, not judged: the cold floor, a fresh process that does
//! nothing but read and parse the same files ([`COLD_FLOOR_ARG`]: this
//! binary again, given their list, biggest first, on all cores), timed as
//! the scan is, from spawn to its line, in the same alternation: what a
//! cold scan would take if it only parsed. The scan over it is what
//! dupcheck adds to a cold parse; the warm floor's ratio also holds what
//! any fresh process pays (its start, its threads, its first touch of the
//! grammars' tables and of its heap).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser as _;
use dupcheck::engine::grammar::{FormatId, Registry};
use dupcheck::engine::parse::Budget;
use dupcheck::project::config::{Cli, Config};
use rayon::prelude::*;
use serde::Serialize;

use crate::args::Args;
use crate::judge::TARGET_SCAN_RATIO;

/// A scan that takes longer is abandoned.
const SCAN_LIMIT: Duration = Duration::from_secs(600);

/// The cold scan of one corpus beside its parse floor.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColdScan {
    pub corpus: &'static str,
    /// Files dupcheck scans there.
    pub files: usize,
    /// Seconds: the floor and the scan (median runs), every run of each.
    pub floor_s: Option<f64>,
    pub scan_s: Option<f64>,
    pub floor_runs_s: Vec<f64>,
    pub scan_runs_s: Vec<f64>,
    /// Seconds from spawn to the end of a process that only reads and
    /// parses the same files (median run), every run.
    pub cold_floor_s: Option<f64>,
    pub cold_floor_runs_s: Vec<f64>,
    /// Seconds from spawn to the line of the whole-project clones (median
    /// run), every run.
    pub clones_s: Option<f64>,
    pub clones_runs_s: Vec<f64>,
    /// Scan over floor (medians).
    pub ratio: Option<f64>,
    /// Scan over cold floor (medians).
    pub cold_ratio: Option<f64>,
    /// Clones' line over floor (medians).
    pub clones_ratio: Option<f64>,
    /// The fastest scan over the fastest floor.
    pub fastest_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Measures and prints the cold scan of each corpus of `.corpora/all`
/// named.
pub fn cold_scans(names: &[&'static str], registry: &Registry, args: &Args) -> Vec<ColdScan> {
    let runs = args.scan_runs.max(1);
    let start = startup(&args.server, runs);
    println!(
        "\nCOLD SCAN of each corpus alone (dupcheck DIR --no-cache --no-watch, spawn to its \
         `scanned` line, and to the clones' line after it; floor: its files parsed in-process on \
         all cores; cold floor: a fresh process that only reads and parses them, spawn to its \
         end; {runs} runs of each, alternating, medians; load average {}); the same start on an \
         empty folder takes {}",
        load_average(),
        start
            .as_ref()
            .map_or_else(|e| format!("? ({e})"), |s| format!("{s:.3} s")),
    );
    println!(
        "{:>13} {:>6} {:>8} {:>8} {:>12} {:>15} {:>8} {:>9} {:>10} {:>7} {:>9}",
        "corpus",
        "files",
        "floor s",
        "scan s",
        "scan/floor",
        "(scan-start)/fl",
        "fastest",
        "clones s",
        "clones/fl",
        "cold s",
        "scan/cold"
    );
    let mut scans = Vec::new();
    for &name in names {
        eprintln!("quality: cold scan of {name}");
        let dir = args.corpora.join("all").join(name);
        let scan = cold_scan(name, &dir, registry, &args.server, runs);
        let seconds = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.3}"));
        let verdict = match scan.ratio {
            Some(r) if r <= TARGET_SCAN_RATIO => format!("{r:.2}x"),
            Some(r) => format!("{r:.2}x over"),
            None => "-".into(),
        };
        let net = match (scan.scan_s, scan.floor_s, &start) {
            (Some(scan), Some(floor), Ok(start)) => format!("{:.2}x", (scan - start) / floor),
            _ => "-".into(),
        };
        let times = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}x"));
        println!(
            "{:>13} {:>6} {:>8} {:>8} {verdict:>12} {net:>15} {:>8} {:>9} {:>10} {:>7} {:>9}{}",
            scan.corpus,
            scan.files,
            seconds(scan.floor_s),
            seconds(scan.scan_s),
            times(scan.fastest_ratio),
            seconds(scan.clones_s),
            times(scan.clones_ratio),
            seconds(scan.cold_floor_s),
            times(scan.cold_ratio),
            scan.error
                .as_ref()
                .map_or(String::new(), |e| format!("  FAILED: {e}"))
        );
        scans.push(scan);
    }
    scans
}

/// The median time from spawn to the summary line on an empty folder: the
/// start every scan pays (loading the grammars, the runtime, the port).
fn startup(server: &Path, runs: usize) -> Result<f64, String> {
    let empty = std::env::temp_dir().join(format!("dupcheck-quality-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    let mut times = (0..runs)
        .map(|_| dupcheck_cold(server, &empty).map(|(scanned, _)| scanned))
        .collect::<Result<Vec<f64>, String>>();
    let _ = std::fs::remove_dir(&empty);
    if let Ok(times) = &mut times {
        times.sort_by(f64::total_cmp);
    }
    times.map(|t| t[t.len() / 2])
}

fn cold_scan(
    corpus: &'static str,
    dir: &Path,
    registry: &Registry,
    server: &Path,
    runs: usize,
) -> ColdScan {
    let mut scan = ColdScan {
        corpus,
        files: 0,
        floor_s: None,
        scan_s: None,
        floor_runs_s: Vec::new(),
        scan_runs_s: Vec::new(),
        cold_floor_s: None,
        cold_floor_runs_s: Vec::new(),
        clones_s: None,
        clones_runs_s: Vec::new(),
        ratio: None,
        cold_ratio: None,
        clones_ratio: None,
        fastest_ratio: None,
        error: None,
    };
    // The runs alternate, floor then scan, so that both see the same load
    // on a shared machine.
    let sources = scanned_sources(dir, registry);
    let list = sources.as_ref().map_err(Clone::clone).and_then(|sources| {
        scan.files = sources.len();
        parse_floor(registry, sources);
        cold_floor_list(corpus, sources, registry)
    });
    if let Err(e) = &list {
        scan.error = Some(e.clone());
    }
    for _ in 0..runs {
        if let Ok(sources) = &sources {
            scan.floor_runs_s.push(parse_floor(registry, sources));
        }
        if let Ok(list) = &list {
            match cold_floor(list) {
                Ok(seconds) => scan.cold_floor_runs_s.push(seconds),
                Err(e) => scan.error = Some(e),
            }
        }
        match dupcheck_cold(server, dir) {
            Ok((scanned, clones)) => {
                scan.scan_runs_s.push(scanned);
                scan.clones_runs_s.push(clones);
            }
            Err(e) => scan.error = Some(e),
        }
    }
    scan.floor_s = median(&scan.floor_runs_s);
    scan.scan_s = median(&scan.scan_runs_s);
    scan.clones_s = median(&scan.clones_runs_s);
    scan.cold_floor_s = median(&scan.cold_floor_runs_s);
    if let Ok(list) = &list {
        let _ = std::fs::remove_file(list);
    }
    scan.ratio = scan.scan_s.zip(scan.floor_s).map(|(s, f)| s / f);
    scan.cold_ratio = scan.scan_s.zip(scan.cold_floor_s).map(|(s, f)| s / f);
    scan.clones_ratio = scan.clones_s.zip(scan.floor_s).map(|(s, f)| s / f);
    let fastest = |runs: &[f64]| runs.iter().copied().reduce(f64::min);
    scan.fastest_ratio = fastest(&scan.scan_runs_s)
        .zip(fastest(&scan.floor_runs_s))
        .map(|(s, f)| s / f);
    scan
}

/// The median of `runs` (the upper one of an even count).
fn median(runs: &[f64]) -> Option<f64> {
    let mut sorted = runs.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

/// A file dupcheck scans, with its text.
struct Source {
    format: FormatId,
    path: PathBuf,
    text: String,
}

/// The files `dupcheck DIR` (default options, no cache) scans, read as it
/// reads them.
fn scanned_sources(dir: &Path, registry: &Registry) -> Result<Vec<Source>, String> {
    let args = [OsString::from("dupcheck"), dir.into(), "--no-cache".into()];
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let config = Config::resolve(&cli, &cwd, registry, |_| {}).map_err(|e| e.to_string())?;
    let (candidates, _) =
        dupcheck::project::walk::candidates(&config, registry).map_err(|e| e.to_string())?;
    Ok(candidates
        .into_iter()
        .filter_map(|c| {
            let text =
                dupcheck::project::walk::read(&c.abs, config.max_size, config.max_lines).ok()?;
            Some(Source {
                format: c.format,
                path: c.abs,
                text,
            })
        })
        .collect())
}

/// Wall seconds to parse every text once on all cores (the first run
/// makes each thread's parsers, and is not kept).
fn parse_floor(registry: &Registry, sources: &[Source]) -> f64 {
    let started = Instant::now();
    sources.par_iter().for_each(|s| {
        let budget = Budget::for_file(s.text.len());
        let tree = dupcheck::engine::parse::parse(registry.get(s.format), &s.text, None, &budget);
        std::hint::black_box(tree.ok());
    });
    started.elapsed().as_secs_f64()
}

/// The flag that makes this binary the cold floor: `quality --cold-floor
/// LIST` reads and parses the files LIST names (a line each: format,
/// a tab, path), on all cores, biggest first, prints [`COLD_FLOOR_DONE`]
/// and exits.
pub const COLD_FLOOR_ARG: &str = "--cold-floor";
const COLD_FLOOR_DONE: &str = "quality: parsed";

/// Writes the list of `sources` for the cold floor, biggest first; its path.
fn cold_floor_list(
    corpus: &str,
    sources: &[Source],
    registry: &Registry,
) -> Result<PathBuf, String> {
    let mut sorted: Vec<&Source> = sources.iter().collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.text.len()));
    let lines: String = sorted
        .iter()
        .map(|s| format!("{}\t{}\n", registry.get(s.format).name, s.path.display()))
        .collect();
    let path = std::env::temp_dir().join(format!(
        "dupcheck-quality-{corpus}-{}.list",
        std::process::id()
    ));
    std::fs::write(&path, lines).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Wall seconds from spawning this binary as the cold floor of `list` to
/// its line.
fn cold_floor(list: &Path) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (mut child, lines, started) = spawned(Command::new(&exe).arg(COLD_FLOOR_ARG).arg(list))?;
    let mut result = Err("the cold floor ended without its line".to_string());
    for line in lines {
        let Ok(line) = line else { break };
        if line.starts_with(COLD_FLOOR_DONE) {
            result = Ok(started.elapsed().as_secs_f64());
            break;
        }
        result = Err(line);
    }
    let _ = child.wait();
    result
}

/// The cold floor itself, in the fresh process: reads and parses every
/// file of `list` on all cores, each worker taking the biggest left (one
/// file a task), as dupcheck's scan does; nothing else.
pub fn run_cold_floor(list: &Path) -> Result<(), String> {
    let registry = Registry::builtin();
    let text = std::fs::read_to_string(list)
        .map_err(|e| format!("cannot read {}: {e}", list.display()))?;
    let files: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('\t')).collect();
    files
        .par_iter()
        .with_max_len(1)
        .try_for_each(|&(format, path)| {
            let format = registry
                .lookup(format)
                .ok_or_else(|| format!("unknown format {format}"))?;
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let budget = Budget::for_file(text.len());
            std::hint::black_box(dupcheck::engine::parse::parse(format, &text, None, &budget).ok());
            Ok::<(), String>(())
        })?;
    eprintln!("{COLD_FLOOR_DONE} {} files", files.len());
    Ok(())
}

/// Wall seconds from spawning `dupcheck DIR --no-cache --no-watch` to its
/// `dupcheck: scanned …` line, and to the line of the clones after it.
fn dupcheck_cold(server: &Path, dir: &Path) -> Result<(f64, f64), String> {
    let (mut child, lines, started) = spawned(Command::new(server).arg(dir).args([
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--no-cache",
        "--no-watch",
    ]))?;
    let mut scanned = None;
    let mut result = Err("no summary line".to_string());
    for line in lines {
        let Ok(line) = line else { break };
        let at = started.elapsed().as_secs_f64();
        if line.starts_with("dupcheck: scanned") {
            scanned = Some(at);
        } else if let Some(scanned) = scanned.filter(|_| line.contains(" clones, ")) {
            result = Ok((scanned, at));
            break;
        }
        if started.elapsed() > SCAN_LIMIT {
            result = Err(format!("no summary lines within {SCAN_LIMIT:?}"));
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Spawns `command` with only its stderr open, piped: the child, the lines
/// it writes there, and when it was spawned.
fn spawned(
    command: &mut Command,
) -> Result<(Child, Lines<BufReader<ChildStderr>>, Instant), String> {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {}: {e}",
                command.get_program().to_string_lossy()
            )
        })?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    Ok((child, BufReader::new(stderr).lines(), started))
}

/// The 1, 5 and 15 minute load averages: other work on the machine skews
/// every time.
fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
