//! Cold scan: for each of `.corpora/{lodash,rxjs,django,tokio,four}`, wall
//! seconds, CPU seconds and peak RSS of `dupcheck --no-cache --no-watch`
//! from spawn to its `scanned` line (CPU and peak RSS once the clones'
//! line has followed), beside the parse-only floor (the same
//! files preloaded and parsed in this process on all cores), the scan run
//! in this process, and each peer (jscpd 5, jscpd-rs, jscpd 4) run to
//! completion and reaped with wait4 for its rusage.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use dupcheck::engine::grammar::Registry;
use serde_json::{json, Map, Value};

use crate::env::{
    default_config, parse_floor, proc_cpu_seconds, proc_status_mb, scanned_sources, Counts, Env,
    CORPORA, PEER_FORMATS,
};
use crate::output::{or_dash, progress, verdict, Output};
use crate::server::{parse_summary, Server, RUN_LIMIT};

/// Target of the issue for dupcheck's cold scan over the parse floor.
const TARGET_SCAN_RATIO: f64 = 1.2;

/// One cold run of dupcheck, from spawn to its `scanned` line.
struct DupcheckRun {
    wall: f64,
    cpu: Option<f64>,
    peak_mb: Option<f64>,
    files: Option<u64>,
}

/// Starts dupcheck with neither cache nor watcher on `dir`, times its
/// `scanned` line, reads its CPU and peak RSS once the clones' line has
/// followed, and stops it.
fn dupcheck_cold(env: &Env, dir: &Path) -> Result<DupcheckRun, String> {
    let mut server = Server::dupcheck(env, dir, &["--no-cache", "--no-watch"])?;
    let (at, line) = server.summary(RUN_LIMIT)?;
    let run = DupcheckRun {
        wall: at.duration_since(server.spawned).as_secs_f64(),
        cpu: proc_cpu_seconds(server.pid()),
        peak_mb: proc_status_mb(server.pid(), "VmHWM"),
        files: parse_summary(&line).map(|s| s.files),
    };
    server.stop();
    Ok(run)
}

/// Wall seconds of `dupcheck::project::scan::scan` of `dir` with default options,
/// no cache (the fastest of `runs`, after one untimed run, as the floor).
fn in_process_scan(registry: &Registry, dir: &Path, runs: usize) -> Result<f64, String> {
    let config = default_config(dir, registry)?;
    let scan = || {
        let started = Instant::now();
        let reuse = dupcheck::project::scan::Reuse::previous(None);
        let snapshot = dupcheck::project::scan::scan(
            &config,
            registry,
            &reuse,
            &dupcheck::project::progress::Progress::quiet(),
        )
        .map_err(|e| e.to_string())?;
        let seconds = started.elapsed().as_secs_f64();
        drop(snapshot);
        Ok::<f64, String>(seconds)
    };
    if runs > 1 {
        scan()?;
    }
    (0..runs).try_fold(f64::INFINITY, |fastest, _| Ok(fastest.min(scan()?)))
}

/// A peer installed by `bench/fetch-peers.sh`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Peer {
    Jscpd5,
    JscpdRs,
    Jscpd4,
}

impl Peer {
    const ALL: [Peer; 3] = [Peer::Jscpd5, Peer::JscpdRs, Peer::Jscpd4];

    fn name(self) -> &'static str {
        match self {
            Peer::Jscpd5 => "jscpd v5",
            Peer::JscpdRs => "jscpd-rs",
            Peer::Jscpd4 => "jscpd v4",
        }
    }

    fn program(self, env: &Env) -> PathBuf {
        env.tools.join(match self {
            Peer::Jscpd5 => "jscpd5/node_modules/jscpd-linux-x64-gnu/bin/jscpd",
            Peer::JscpdRs => "jscpd-rs/bin/jscpd",
            Peer::Jscpd4 => "jscpd4/node_modules/jscpd/bin/jscpd",
        })
    }

    /// A silent run on `dir` with dupcheck's thresholds and, where the peer
    /// has the options, its file limits (1 MB, no line limit). `.gitignore`
    /// is off: the corpora have none, and jscpd 4 would otherwise apply the
    /// repository's (which lists `/.corpora`) and find nothing.
    fn command(self, env: &Env, dir: &Path) -> Command {
        let mut cmd = match self {
            Peer::Jscpd4 => {
                let mut cmd = Command::new("node");
                cmd.arg(self.program(env));
                cmd
            }
            _ => Command::new(self.program(env)),
        };
        cmd.arg(dir)
            .args(["--min-tokens", "50", "--min-lines", "5"])
            .args(["--format", PEER_FORMATS, "--no-gitignore", "--silent"])
            .arg("--output")
            .arg(env.tmp.path().join("reports"));
        match self {
            Peer::Jscpd5 => cmd.args(["--reporters", "silent", "--no-tips"]),
            Peer::JscpdRs | Peer::Jscpd4 => cmd
                .args(["--max-size", "1mb", "--max-lines", "1000000"])
                .arg("--noTips"),
        };
        cmd.current_dir(env.tmp.path())
            .env("NO_COLOR", "1")
            .env("JSCPD_NO_TIPS", "1");
        cmd
    }
}

/// Wall, CPU and peak RSS of a process run to completion.
struct Usage {
    wall: f64,
    cpu: f64,
    peak_mb: f64,
    /// `exit 0`, `signal 9`, or `timeout`.
    outcome: String,
}

/// Runs `cmd` (output discarded) to completion or `limit`, reaping it with
/// wait4 for its rusage (which includes its reaped children).
fn run_to_completion(cmd: &mut Command, limit: Duration) -> io::Result<Usage> {
    let started = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    // From here on the child is reaped by wait4, never through `child`.
    drop(child);
    let mut timed_out = false;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if timed_out { 0 } else { libc::WNOHANG };
        // SAFETY: waits for our own child with valid out-pointers.
        let reaped = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if reaped == pid {
            let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let outcome = if timed_out {
                "timeout".to_owned()
            } else if libc::WIFEXITED(status) {
                format!("exit {}", libc::WEXITSTATUS(status))
            } else {
                format!("signal {}", libc::WTERMSIG(status))
            };
            return Ok(Usage {
                wall: started.elapsed().as_secs_f64(),
                cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                peak_mb: usage.ru_maxrss as f64 / 1024.0,
                outcome,
            });
        }
        if reaped < 0 {
            return Err(io::Error::last_os_error());
        }
        if started.elapsed() > limit {
            // SAFETY: the child is not reaped yet, so the pid is still ours.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            timed_out = true;
            continue;
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// One row of the cold-scan table.
fn scan_row(
    corpus: &str,
    tool: &str,
    wall: f64,
    cpu: Option<f64>,
    peak_mb: Option<f64>,
    files: Option<u64>,
    note: &str,
) -> String {
    let files = files.map_or("-".into(), |f| f.to_string());
    format!(
        "  {corpus:<7} {tool:<18} {wall:>8.3} {:>8} {:>8} {files:>6}  {note}",
        or_dash(cpu, 2),
        or_dash(peak_mb, 0)
    )
}

/// For each corpus: the parse floor, dupcheck's cold scans, the same scan
/// in this process, and each peer's runs; adds their rows to the table.
pub(crate) fn cold_scan(env: &Env, counts: &Counts, out: &mut Output) {
    let registry = Registry::builtin();
    out.line("COLD SCAN                     wall s    cpu s  peak MB  files  note");
    let mut json = Map::new();
    for corpus in CORPORA {
        let dir = env.corpus(corpus);
        let mut rows = Map::new();
        // Runs first: its preload also warms the page cache for every run.
        progress(&format!("scan {corpus}: parse-only floor"));
        let floor = scanned_sources(&dir, &registry).map(|sources| {
            (
                parse_floor(&registry, &sources, counts.floor_runs),
                sources.len(),
            )
        });
        let wall = scan_dupcheck(env, corpus, counts, out, &mut rows);
        match &floor {
            Ok((seconds, files)) => {
                let (seconds, files) = (*seconds, *files);
                let ratio = wall.map(|w| w / seconds);
                let note = ratio.map_or(String::new(), |r| {
                    let ok = verdict(r <= TARGET_SCAN_RATIO);
                    format!("dupcheck/floor {r:.2}x (target <= {TARGET_SCAN_RATIO}x: {ok})")
                });
                let files = Some(files as u64);
                out.line(scan_row(
                    corpus,
                    "parse-only floor",
                    seconds,
                    None,
                    None,
                    files,
                    &note,
                ));
                let row = json!({"wallS": seconds, "files": files, "ratio": ratio});
                rows.insert("parseFloor".into(), row);
            }
            Err(e) => out.line(format!("  {corpus:<7} parse-only floor: FAILED: {e}")),
        }
        // The floor is measured warm, in this process; so is this scan, to
        // tell the pipeline's overhead from a fresh process's first touches.
        progress(&format!("scan {corpus}: dupcheck scan in this process"));
        match (in_process_scan(&registry, &dir, counts.floor_runs), &floor) {
            (Ok(seconds), Ok((floor, files))) => {
                let ratio = seconds / floor;
                out.line(scan_row(
                    corpus,
                    "  same, in-process",
                    seconds,
                    None,
                    None,
                    Some(*files as u64),
                    &format!("scan/floor {ratio:.2}x, both warm in this process"),
                ));
                rows.insert(
                    "dupcheckInProcess".into(),
                    json!({"wallS": seconds, "ratio": ratio}),
                );
            }
            (Err(e), _) => out.line(format!("  {corpus:<7} in-process scan: FAILED: {e}")),
            _ => {}
        }
        for peer in Peer::ALL {
            scan_peer(env, peer, corpus, counts, out, &mut rows);
        }
        json.insert(corpus.into(), Value::Object(rows));
    }
    out.line(format!(
        "  (dupcheck and peers: median of {} runs, jscpd v4 one run; floor: fastest of {}; \
         peers: -k 50 -l 5 -f {PEER_FORMATS}, 1 MB and no line limit where they have the option)",
        counts.scan_runs, counts.floor_runs
    ));
    out.line(
        "  reference, all four corpora (measured elsewhere): jscpd v4 30.6 s / 776 MB, \
         v5 1.12 s / 303 MB, jscpd-rs 0.36 s / 152 MB",
    );
    out.json.insert("coldScan".into(), Value::Object(json));
}

/// Cold dupcheck runs on one corpus: prints the median, returns its wall.
fn scan_dupcheck(
    env: &Env,
    corpus: &str,
    counts: &Counts,
    out: &mut Output,
    rows: &mut Map<String, Value>,
) -> Option<f64> {
    let mut runs = Vec::new();
    for run in 0..counts.scan_runs {
        progress(&format!("scan {corpus}: dupcheck run {}", run + 1));
        match dupcheck_cold(env, &env.corpus(corpus)) {
            Ok(r) => runs.push(r),
            Err(e) => out.line(format!("  {corpus:<7} dupcheck: FAILED: {e}")),
        }
    }
    runs.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    let d = runs.get(runs.len() / 2)?;
    out.line(scan_row(
        corpus, "dupcheck", d.wall, d.cpu, d.peak_mb, d.files, "",
    ));
    let walls: Vec<f64> = runs.iter().map(|r| r.wall).collect();
    rows.insert(
        "dupcheck".into(),
        json!({"wallS": d.wall, "cpuS": d.cpu, "peakMb": d.peak_mb, "files": d.files,
               "runsWallS": walls}),
    );
    Some(d.wall)
}

/// Runs of one peer on one corpus, to completion: prints the median.
fn scan_peer(
    env: &Env,
    peer: Peer,
    corpus: &str,
    counts: &Counts,
    out: &mut Output,
    rows: &mut Map<String, Value>,
) {
    let runs = match peer {
        Peer::Jscpd4 if !counts.jscpd4_everywhere && corpus != "lodash" => return,
        Peer::Jscpd4 => 1,
        _ => counts.scan_runs,
    };
    if !peer.program(env).is_file() {
        let name = peer.name();
        out.line(format!(
            "  {corpus:<7} {name}: not installed (bash bench/fetch-peers.sh)"
        ));
        return;
    }
    let mut usages = Vec::new();
    for run in 0..runs {
        progress(&format!("scan {corpus}: {} run {}", peer.name(), run + 1));
        let mut cmd = peer.command(env, &env.corpus(corpus));
        match run_to_completion(&mut cmd, RUN_LIMIT) {
            Ok(u) => usages.push(u),
            Err(e) => out.line(format!("  {corpus:<7} {}: FAILED: {e}", peer.name())),
        }
    }
    usages.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    let Some(u) = usages.get(usages.len() / 2) else {
        return;
    };
    let (cpu, peak) = (Some(u.cpu), Some(u.peak_mb));
    out.line(scan_row(
        corpus,
        peer.name(),
        u.wall,
        cpu,
        peak,
        None,
        &u.outcome,
    ));
    let walls: Vec<f64> = usages.iter().map(|u| u.wall).collect();
    rows.insert(
        peer.name().into(),
        json!({"wallS": u.wall, "cpuS": u.cpu, "peakMb": u.peak_mb, "outcome": u.outcome,
               "runsWallS": walls}),
    );
}
