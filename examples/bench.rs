//! Performance benchmark: dupcheck's scan, start, check, update and memory
//! figures, beside its peers, on the corpora of `bench/fetch-corpora.sh`.
//!
//! Measured in one run (each part can be run alone with `--only`):
//!
//! 1. `scan`: cold scan of `.corpora/{lodash,rxjs,django,tokio,all}`: wall
//!    seconds, CPU seconds (user+sys) and peak RSS of `dupcheck --no-cache
//!    --no-watch` from spawn to its stderr summary line (CPU and VmHWM read
//!    from /proc at that moment), of each peer of `bench/fetch-peers.sh`
//!    (jscpd 5, jscpd 4, jscpd-rs) run to completion (wait4 rusage), and the
//!    parse-only floor: the texts of the files dupcheck scans, preloaded, and
//!    parsed in-process with `dupcheck::engine::parse::parse` on all cores.
//! 2. `warm`: spawn to `/api/health` ready (polled every 2 ms) on `all` with
//!    a cache filled by a previous run.
//! 3. `checks`: `/api/check` latency p50/p99 over one keep-alive connection
//!    for snippets of 20, 100 and 1,000 lines cut from the corpora, and
//!    checks/s at 1, 16 and 64 keep-alive connections; the same against
//!    jscpd-rs's `jscpd-server` on the same folder.
//! 4. `update`: in a watched copy of lodash, the time from writing a new file
//!    to the first check that reports a duplication in it.
//! 5. `memory`: dupcheck's VmRSS after the scan of `all` and after 100,000
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
//! cargo build --release --bin dupcheck --example bench
//! cargo run --release --example bench -- [--only scan|warm|checks|update|memory] [--quick]
//! ```
//!
//! `--quick` shrinks every count (and runs jscpd 4 on lodash only) for
//! development. Linux only (/proc, wait4). It only talks to 127.0.0.1, and
//! every loop is bounded in count and time.

use std::ffi::OsString;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use clap::Parser as _;
use dupcheck::engine::grammar::{FormatId, Registry};
use dupcheck::engine::hash::HashMap;
use dupcheck::engine::parse::Budget;
use dupcheck::project::config::{Cli, Config};
use rayon::prelude::*;
use serde_json::{json, Map, Value};

/// Corpora of the cold scan, in table order; `all` holds the other four.
const CORPORA: [&str; 5] = ["lodash", "rxjs", "django", "tokio", "all"];
/// Where snippets are cut from: corpus and the format of its files.
const LANGUAGES: [(&str, &str); 4] = [
    ("lodash", "javascript"),
    ("rxjs", "typescript"),
    ("django", "python"),
    ("tokio", "rust"),
];
/// Formats the peers are restricted to.
const PEER_FORMATS: &str = "javascript,typescript,python,rust";
/// Longest a peer run or a first scan may take.
const RUN_LIMIT: Duration = Duration::from_secs(300);
/// Longest one latency measurement may take.
const LATENCY_LIMIT: Duration = Duration::from_secs(60);
/// Longest one update trial may take.
const UPDATE_LIMIT: Duration = Duration::from_secs(10);
/// Where the JSON report goes, relative to the repository.
const REPORT: &str = "target/bench.json";

/// Targets of the issue, printed beside the figures.
const TARGET_P50_100: f64 = 0.3;
const TARGET_P99_100: f64 = 2.0;
const TARGET_CHECKS_16: f64 = 5000.0;
const TARGET_SCAN_RATIO: f64 = 1.2;
const TARGET_WARM: f64 = 0.3;
const TARGET_UPDATE_MS: f64 = 100.0;
const TARGET_RSS_MB: f64 = 150.0;

// ---------------------------------------------------------------- options --

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

const USAGE: &str = "usage: bench [--only scan|warm|checks|update|memory] [--quick]";

struct Options {
    only: Option<Part>,
    quick: bool,
}

impl Options {
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

    fn wants(&self, part: Part) -> bool {
        self.only.is_none_or(|only| only == part)
    }
}

/// How much of everything to do.
struct Counts {
    /// Runs of dupcheck, jscpd 5 and jscpd-rs per corpus (the median is shown).
    scan_runs: usize,
    /// Timed runs of the parse-only floor (the fastest is shown).
    floor_runs: usize,
    /// jscpd 4 runs on every corpus, not only lodash.
    jscpd4_everywhere: bool,
    /// Warm starts (the median is shown).
    warm_runs: usize,
    /// Timed checks per latency measurement of 20 and 100 lines.
    latency: usize,
    /// Timed checks of 1,000 lines.
    latency_large: usize,
    /// Untimed checks before each latency measurement.
    warmup: usize,
    /// Length of each throughput measurement.
    throughput: Duration,
    /// Checks before the second memory reading.
    memory_checks: u64,
    /// Update trials (the median is shown).
    update_trials: usize,
}

impl Counts {
    fn new(quick: bool) -> Counts {
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

// ------------------------------------------------------------ environment --

/// Paths of the repository, the server, the peers and a scratch folder.
struct Env {
    root: PathBuf,
    server: PathBuf,
    tools: PathBuf,
    tmp: tempfile::TempDir,
    /// A jscpd config file that turns `.gitignore` off (the repository's
    /// own `.gitignore` lists `/.corpora`, and jscpd-server looks upward).
    jscpd_config: PathBuf,
}

impl Env {
    fn new() -> Result<Env, String> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let server = root.join("target/release/dupcheck");
        if !server.is_file() {
            return Err(format!(
                "{} is missing: cargo build --release --bin dupcheck",
                server.display()
            ));
        }
        for corpus in CORPORA {
            if !root.join(".corpora").join(corpus).is_dir() {
                return Err(format!(
                    ".corpora/{corpus} is missing: bash bench/fetch-corpora.sh"
                ));
            }
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

    fn corpus(&self, name: &str) -> PathBuf {
        self.root.join(".corpora").join(name)
    }
}

/// The first input of the server binary that is newer than it, if any: the
/// figures would then describe an older dupcheck.
fn stale_input(env: &Env) -> Option<PathBuf> {
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
fn proc_cpu_seconds(pid: u32) -> Option<f64> {
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
struct Others {
    cpu: f64,
    at: Instant,
}

impl Others {
    fn start() -> Others {
        Others {
            cpu: others_cpu_seconds(),
            at: Instant::now(),
        }
    }

    /// Other processes' CPU seconds and the wall seconds since the start.
    fn since(&self) -> (f64, f64) {
        let cpu = (others_cpu_seconds() - self.cpu).max(0.0);
        (cpu, self.at.elapsed().as_secs_f64())
    }
}

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
fn proc_status_mb(pid: u32, key: &str) -> Option<f64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
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

// ----------------------------------------------------------------- servers --

/// A server process under test; stopped (SIGTERM, then SIGKILL) on drop.
struct Server {
    child: Child,
    port: u16,
    spawned: Instant,
    /// stderr lines with the moment each was read.
    stderr: Receiver<(Instant, String)>,
}

/// Forwards the lines of `reader` to a channel, stamped when read, until EOF
/// (also after the receiver is gone, so the pipe never fills).
fn line_channel<R: Read + Send + 'static>(reader: Option<R>) -> Receiver<(Instant, String)> {
    let (tx, rx) = mpsc::channel();
    if let Some(reader) = reader {
        thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send((Instant::now(), line));
            }
        });
    }
    rx
}

impl Server {
    /// Starts `target/release/dupcheck DIR` on a free port and reads the
    /// port from its `listening on` line.
    fn dupcheck(env: &Env, dir: &Path, flags: &[&str]) -> Result<Server, String> {
        let spawned = Instant::now();
        let mut child = Command::new(&env.server)
            .arg(dir)
            .args(["--port", "0", "--host", "127.0.0.1"])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start dupcheck: {e}"))?;
        let stdout = line_channel(child.stdout.take());
        let stderr = line_channel(child.stderr.take());
        let mut server = Server {
            child,
            port: 0,
            spawned,
            stderr,
        };
        let (_, line) = stdout
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| "dupcheck printed no `listening on` line within 30 s".to_owned())?;
        server.port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|port| port.parse().ok())
            .ok_or(format!("no port in {line:?}"))?;
        Ok(server)
    }

    /// Starts jscpd-rs's `jscpd-server DIR` with the thresholds, formats and
    /// file limits dupcheck uses; it answers once its scan is done.
    fn jscpd(env: &Env, dir: &Path) -> Result<Server, String> {
        let port = free_port()?;
        let spawned = Instant::now();
        let mut child = Command::new(env.tools.join("jscpd-rs/bin/jscpd-server"))
            .arg(dir)
            .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
            .arg("--config")
            .arg(&env.jscpd_config)
            .args(["--format", PEER_FORMATS, "--min-tokens", "50"])
            .args(["--min-lines", "5", "--max-size", "1mb"])
            .args(["--max-lines", "1000000"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start jscpd-server: {e}"))?;
        let _stdout = line_channel(child.stdout.take());
        let stderr = line_channel(child.stderr.take());
        Ok(Server {
            child,
            port,
            spawned,
            stderr,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for dupcheck's `dupcheck: scanned ...` line: when it was read,
    /// and the line.
    fn summary(&self, limit: Duration) -> Result<(Instant, String), String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok((at, line)) if line.starts_with("dupcheck: scanned") => return Ok((at, line)),
                Ok(_) => continue,
                Err(_) => return Err(format!("no summary line within {limit:?}")),
            }
        }
    }

    fn rss_mb(&self) -> Option<f64> {
        proc_status_mb(self.pid(), "VmRSS")
    }

    /// SIGTERM, up to 15 s for a graceful exit, then SIGKILL.
    fn stop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        // SAFETY: signals our own child, which try_wait says is not reaped.
        unsafe { libc::kill(self.pid() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                _ => return,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// What dupcheck's summary line says.
struct Summary {
    files: u64,
    parsed: u64,
    reused: u64,
}

/// Parses `dupcheck: scanned N files, ... in X s (P parsed, R reused): ...`.
fn parse_summary(line: &str) -> Option<Summary> {
    let first_number = |s: &str| s.split_whitespace().next()?.parse().ok();
    let rest = line.strip_prefix("dupcheck: scanned ")?;
    let (_, counts) = rest.split_once('(')?;
    let (_, reused) = counts.split_once(", ")?;
    Some(Summary {
        files: first_number(rest)?,
        parsed: first_number(counts)?,
        reused: first_number(reused)?,
    })
}

// -------------------------------------------------------------------- HTTP --

struct Response {
    status: u16,
    body: Vec<u8>,
}

/// A keep-alive HTTP/1.1 connection to 127.0.0.1.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(port: u16) -> io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        stream.set_write_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            reader: BufReader::with_capacity(1 << 16, stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends a complete request (see [`request`]) and reads the response.
    fn exchange(&mut self, request: &[u8]) -> io::Result<Response> {
        self.writer.write_all(request)?;
        self.read_response()
    }

    fn read_response(&mut self) -> io::Result<Response> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
        let status_line = self.line()?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("bad status line"))?;
        let (mut length, mut chunked) = (None, false);
        for _ in 0..200 {
            let line = self.line()?;
            if line.is_empty() {
                let body = match (chunked, length) {
                    (true, _) => self.chunked_body()?,
                    (false, Some(n)) => self.exact(n)?,
                    (false, None) => return Err(bad("response without Content-Length")),
                };
                return Ok(Response { status, body });
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(bad("bad header line"));
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse().map_err(|_| bad("bad Content-Length"))?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            }
        }
        Err(bad("too many headers"))
    }

    /// One CRLF-terminated line, without its terminator.
    fn line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn exact(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut body = vec![0; n];
        self.reader.read_exact(&mut body)?;
        Ok(body)
    }

    fn chunked_body(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        for _ in 0..1_000_000 {
            let size_line = self.line()?;
            let hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(hex, 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            if size == 0 {
                // Trailers end with an empty line.
                while !self.line()?.is_empty() {}
                return Ok(body);
            }
            body.extend(self.exact(size)?);
            self.line()?;
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "too many chunks",
        ))
    }
}

/// The bytes of one request with a JSON body (empty for GET).
fn request(method: &str, path: &str, port: u16, body: &str) -> Vec<u8> {
    let mut bytes = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

fn check_request(port: u16, code: &str, format: &str) -> Vec<u8> {
    let body = json!({ "code": code, "format": format }).to_string();
    request("POST", "/api/check", port, &body)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Polls `/api/health` every `poll` until it says ready; when it did.
fn wait_ready(port: u16, limit: Duration, poll: Duration) -> Result<Instant, String> {
    let deadline = Instant::now() + limit;
    let health = request("GET", "/api/health", port, "");
    let mut conn: Option<Conn> = None;
    while Instant::now() < deadline {
        if conn.is_none() {
            conn = Conn::open(port).ok();
        }
        if let Some(c) = conn.as_mut() {
            match c.exchange(&health) {
                Ok(r) if r.status == 200 && contains(&r.body, b"\"ready\"") => {
                    return Ok(Instant::now())
                }
                Ok(_) => {}
                Err(_) => conn = None,
            }
        }
        thread::sleep(poll);
    }
    Err(format!("not ready within {limit:?}"))
}

// ----------------------------------------------------------------- sources --

/// A file dupcheck scans, with its text.
struct Source {
    format: FormatId,
    rel: String,
    text: String,
}

/// The configuration of `dupcheck DIR` with default options and no cache.
fn default_config(dir: &Path, registry: &Registry) -> Result<Config, String> {
    let args = [OsString::from("dupcheck"), dir.into(), "--no-cache".into()];
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    Config::resolve(&cli, &cwd, registry, |_| {}).map_err(|e| e.to_string())
}

/// The files `dupcheck DIR` (default options) scans, read as it reads them.
fn scanned_sources(dir: &Path, registry: &Registry) -> Result<Vec<Source>, String> {
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

/// A snippet to check, cut from a real file.
struct Snippet {
    format: &'static str,
    origin: String,
    code: String,
}

/// `per_language` snippets of `lines` lines from each language corpus,
/// interleaved by language: from files spread evenly over the sorted file
/// list, starting a third of the way into the file. Deterministic.
fn cut_snippets(env: &Env, registry: &Registry, lines: usize, per_language: usize) -> Vec<Snippet> {
    let mut by_language: Vec<Vec<Snippet>> = Vec::new();
    for (corpus, format) in LANGUAGES {
        let sources = scanned_sources(&env.corpus(corpus), registry).unwrap_or_default();
        let eligible: Vec<&Source> = sources
            .iter()
            .filter(|s| {
                registry.get(s.format).name == format && s.text.lines().count() > lines + 10
            })
            .collect();
        let picks = per_language.min(eligible.len());
        let snippets = (0..picks).filter_map(|k| {
            let source = eligible[(2 * k + 1) * eligible.len() / (2 * picks)];
            let all: Vec<&str> = source.text.lines().collect();
            let start = (all.len() - lines) / 3;
            let code = all[start..start + lines].join("\n");
            (!code.trim().is_empty()).then(|| Snippet {
                format,
                origin: format!("{corpus}/{}:{}", source.rel, start + 1),
                code,
            })
        });
        by_language.push(snippets.collect());
    }
    let rounds = by_language.iter().map(Vec::len).max().unwrap_or(0);
    let mut languages: Vec<_> = by_language.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    for _ in 0..rounds {
        for language in &mut languages {
            out.extend(language.next());
        }
    }
    out
}

// ---------------------------------------------------------------- measures --

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The value at quantile `q` of sorted values (nearest rank).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

struct Latency {
    requests: usize,
    p50_ms: f64,
    p99_ms: f64,
    mean_ms: f64,
    max_ms: f64,
    errors: usize,
    /// Answers that reported at least one duplication.
    with_duplications: usize,
    /// Mean size of an answer's body.
    mean_bytes: f64,
}

impl Latency {
    fn json(&self) -> Value {
        json!({
            "requests": self.requests, "p50Ms": self.p50_ms, "p99Ms": self.p99_ms,
            "meanMs": self.mean_ms, "maxMs": self.max_ms, "errors": self.errors,
            "withDuplications": self.with_duplications, "meanResponseBytes": self.mean_bytes,
        })
    }

    fn cell(&self) -> String {
        format!(
            "{:.3} / {:.3} ms (n {}{})",
            self.p50_ms,
            self.p99_ms,
            self.requests,
            if self.errors > 0 {
                format!(", {} errors", self.errors)
            } else {
                String::new()
            }
        )
    }
}

/// Latency of `count` checks over one keep-alive connection, after `warmup`
/// untimed ones, cycling through `requests`.
fn latency(
    port: u16,
    requests: &[Vec<u8>],
    warmup: usize,
    count: usize,
) -> Result<Latency, String> {
    let mut conn = Conn::open(port).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + LATENCY_LIMIT;
    let mut samples = Vec::with_capacity(count);
    let (mut errors, mut with_duplications, mut bytes) = (0, 0, 0);
    for i in 0..warmup + count {
        if Instant::now() > deadline {
            break;
        }
        let started = Instant::now();
        let outcome = conn.exchange(&requests[i % requests.len()]);
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let timed = i >= warmup;
        match outcome {
            Ok(r) if r.status == 200 => {
                if timed {
                    samples.push(ms);
                    bytes += r.body.len();
                    with_duplications += usize::from(contains(&r.body, b"\"codebaseLocation\""));
                }
            }
            Ok(_) => errors += usize::from(timed),
            Err(_) => {
                errors += usize::from(timed);
                conn = Conn::open(port).map_err(|e| e.to_string())?;
            }
        }
    }
    samples.sort_by(f64::total_cmp);
    let n = samples.len().max(1) as f64;
    Ok(Latency {
        requests: samples.len(),
        p50_ms: percentile(&samples, 0.50),
        p99_ms: percentile(&samples, 0.99),
        mean_ms: samples.iter().sum::<f64>() / n,
        max_ms: samples.last().copied().unwrap_or(f64::NAN),
        errors,
        with_duplications,
        mean_bytes: bytes as f64 / n,
    })
}

struct Throughput {
    connections: usize,
    checks: u64,
    errors: u64,
    seconds: f64,
}

impl Throughput {
    fn per_second(&self) -> f64 {
        self.checks as f64 / self.seconds.max(1e-9)
    }

    fn json(&self) -> Value {
        json!({
            "connections": self.connections, "checks": self.checks, "errors": self.errors,
            "seconds": self.seconds, "checksPerSecond": self.per_second(),
        })
    }

    fn cell(&self) -> String {
        let errors = if self.errors > 0 {
            format!(", {} errors", self.errors)
        } else {
            String::new()
        };
        format!(
            "{:.0}/s ({} in {:.1} s{errors})",
            self.per_second(),
            self.checks,
            self.seconds
        )
    }
}

/// What one connection of a throughput run did.
#[derive(Default)]
struct Driven {
    ok: u64,
    errors: u64,
    end: Option<Instant>,
}

/// Checks over `connections` keep-alive connections at once, each until
/// `duration` has passed or it has sent `per_connection` checks.
fn throughput(
    port: u16,
    requests: &[Vec<u8>],
    connections: usize,
    duration: Duration,
    per_connection: u64,
) -> Throughput {
    let barrier = Barrier::new(connections + 1);
    let (start, driven) = thread::scope(|scope| {
        let workers: Vec<_> = (0..connections)
            .map(|c| {
                let barrier = &barrier;
                scope.spawn(move || drive(port, requests, c, barrier, duration, per_connection))
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let driven: Vec<Driven> = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect();
        (start, driven)
    });
    let end = driven.iter().filter_map(|d| d.end).max().unwrap_or(start);
    Throughput {
        connections,
        checks: driven.iter().map(|d| d.ok).sum(),
        errors: driven.iter().map(|d| d.errors).sum(),
        seconds: end.saturating_duration_since(start).as_secs_f64(),
    }
}

/// One connection of [`throughput`]: connects, waits for the others, sends.
fn drive(
    port: u16,
    requests: &[Vec<u8>],
    offset: usize,
    barrier: &Barrier,
    duration: Duration,
    max: u64,
) -> Driven {
    let conn = Conn::open(port);
    barrier.wait();
    let deadline = Instant::now() + duration;
    let mut driven = Driven::default();
    let Ok(mut conn) = conn else {
        driven.errors = 1;
        driven.end = Some(Instant::now());
        return driven;
    };
    let mut i = offset;
    while driven.ok + driven.errors < max && Instant::now() < deadline {
        match conn.exchange(&requests[i % requests.len()]) {
            Ok(r) if r.status == 200 => driven.ok += 1,
            Ok(_) => driven.errors += 1,
            Err(_) => {
                driven.errors += 1;
                match Conn::open(port) {
                    Ok(c) => conn = c,
                    Err(_) => break,
                }
            }
        }
        i += 1;
    }
    driven.end = Some(Instant::now());
    driven
}

// ------------------------------------------------------------------ output --

/// The table being built and the JSON report.
struct Output {
    lines: Vec<String>,
    json: Map<String, Value>,
}

impl Output {
    fn line(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    /// Notes how busy other processes kept the machine during `part`.
    fn others(&mut self, part: &str, others: &Others) {
        let (cpu, wall) = others.since();
        let cores = cpu / wall.max(1e-9);
        self.line(format!(
            "  ({part}: other processes used {cpu:.1} CPU s in these {wall:.0} s, {cores:.2} cores on average)"
        ));
        let load = self
            .json
            .entry("otherProcesses")
            .or_insert_with(|| json!({}));
        load[part] = json!({"cpuS": cpu, "wallS": wall});
    }

    /// Notes a part that could not be measured, and goes on with the rest.
    fn failed(&mut self, part: &str, error: &str) {
        eprintln!("bench: {part} failed: {error}");
        self.line(format!("{part}: FAILED: {error}"));
        self.json.insert(part.to_owned(), json!({ "error": error }));
    }

    fn finish(mut self, env: &Env) -> Result<(), String> {
        let load = load_average();
        self.line(format!("load average at the end: {load}"));
        self.json.insert("loadAverageAtEnd".into(), json!(load));
        println!();
        for line in &self.lines {
            println!("{line}");
        }
        let path = env.root.join(REPORT);
        let text =
            serde_json::to_string_pretty(&Value::Object(self.json)).map_err(|e| e.to_string())?;
        fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("\nwritten: {}", path.display());
        Ok(())
    }
}

/// The 1, 5 and 15 minute load averages: other work on the machine skews
/// every figure.
fn load_average() -> String {
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn progress(message: &str) {
    eprintln!("bench: {message}");
}

fn or_dash(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}

// -------------------------------------------------------------- cold scans --

/// One cold run of dupcheck, from spawn to its summary line.
struct DupcheckRun {
    wall: f64,
    cpu: Option<f64>,
    peak_mb: Option<f64>,
    files: Option<u64>,
}

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

/// Wall seconds to parse every text once on all cores (the fastest of
/// `runs`, after one untimed run that makes each thread's parsers).
fn parse_floor(registry: &Registry, sources: &[Source], runs: usize) -> f64 {
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
            &dupcheck::project::scan::Progress::quiet(),
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

fn cold_scan(env: &Env, counts: &Counts, out: &mut Output) {
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

// -------------------------------------------------------------- warm start --

/// Waits until the cache of `dir` was written at or after `since`.
fn wait_for_cache(dir: &Path, since: SystemTime, limit: Duration) -> bool {
    let file = dupcheck::project::cache::file_in(&dir.join(".dupcheck-cache"));
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let written = fs::metadata(&file).and_then(|m| m.modified());
        if written.is_ok_and(|t| t >= since) {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}

/// One start of dupcheck with the cache (default flags) on `dir`: seconds
/// from spawn to ready, the summary, and VmRSS at the summary. Waits for the
/// cache to be written before stopping it.
fn cached_start(env: &Env, dir: &Path) -> Result<(f64, Summary, Option<f64>), String> {
    let since = SystemTime::now();
    let mut server = Server::dupcheck(env, dir, &[])?;
    let ready = wait_ready(server.port, RUN_LIMIT, Duration::from_millis(2))?;
    let seconds = ready.duration_since(server.spawned).as_secs_f64();
    let (_, line) = server.summary(RUN_LIMIT)?;
    let summary = parse_summary(&line).ok_or(format!("unparsable summary {line:?}"))?;
    let rss = server.rss_mb();
    if !wait_for_cache(dir, since, Duration::from_secs(60)) {
        return Err("the cache was not written within 60 s".into());
    }
    server.stop();
    Ok((seconds, summary, rss))
}

fn warm_start(env: &Env, counts: &Counts, out: &mut Output) -> Result<(), String> {
    let dir = env.corpus("all");
    progress("warm: filling the cache of all");
    let (fill_seconds, _, _) = cached_start(env, &dir)?;
    let mut runs = Vec::new();
    for run in 0..counts.warm_runs {
        progress(&format!("warm: start {}", run + 1));
        runs.push(cached_start(env, &dir)?);
    }
    let mut seconds: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let median_s = median(&mut seconds);
    let (_, summary, rss) = runs
        .iter()
        .min_by(|a, b| (a.0 - median_s).abs().total_cmp(&(b.0 - median_s).abs()))
        .ok_or("no warm start")?;
    out.line(format!(
        "WARM START (all, cache filled): {median_s:.3} s spawn -> ready (target <= {TARGET_WARM} s: {}); \
         {} parsed, {} reused of {} files; RSS {} MB; runs {:?} s; the filling start took {fill_seconds:.3} s",
        verdict(median_s <= TARGET_WARM),
        summary.parsed,
        summary.reused,
        summary.files,
        or_dash(*rss, 0),
        seconds.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
    ));
    out.json.insert(
        "warmStart".into(),
        json!({"seconds": median_s, "runsSeconds": seconds, "parsed": summary.parsed,
               "reused": summary.reused, "files": summary.files, "rssMb": rss,
               "fillSeconds": fill_seconds, "target": TARGET_WARM}),
    );
    Ok(())
}

// ------------------------------------------------------- checks and memory --

/// Snippets of each size, as ready requests for one port, and editing
/// sessions.
struct Workload {
    sizes: Vec<(usize, Vec<Snippet>)>,
    /// Milliseconds tree-sitter alone takes to parse each 100-line snippet
    /// once, cut comments blanked (in this process, the fastest of a few
    /// runs), sorted.
    parse_100_ms: Vec<f64>,
    editing: Vec<EditSession>,
}

impl Workload {
    fn new(env: &Env) -> Workload {
        let registry = Registry::builtin();
        let sizes: Vec<(usize, Vec<Snippet>)> = [(20, 4), (100, 4), (1000, 2)]
            .into_iter()
            .map(|(lines, per_language)| (lines, cut_snippets(env, &registry, lines, per_language)))
            .collect();
        let mut parse_100_ms: Vec<f64> = sizes
            .iter()
            .filter(|(lines, _)| *lines == 100)
            .flat_map(|(_, snippets)| snippets)
            .filter_map(|s| {
                let format = registry.lookup(s.format)?;
                // What a check parses at least: the snippet once, the parts
                // cut inside a comment blanked.
                let code = dupcheck::engine::snippet::blank_cut_comments(format, &s.code);
                let fastest = (0..PARSE_RUNS)
                    .map(|_| {
                        let started = Instant::now();
                        let budget = Budget::for_snippet(code.len());
                        let tree = dupcheck::engine::parse::parse(format, &code, None, &budget);
                        std::hint::black_box(tree.expect("snippets parse within their budget"));
                        started.elapsed().as_secs_f64() * 1e3
                    })
                    .fold(f64::INFINITY, f64::min);
                Some(fastest)
            })
            .collect();
        parse_100_ms.sort_by(f64::total_cmp);
        let editing = edit_sessions(env, &registry);
        Workload {
            sizes,
            parse_100_ms,
            editing,
        }
    }

    fn requests(&self, lines: usize, port: u16) -> Vec<Vec<u8>> {
        self.sizes
            .iter()
            .filter(|(n, _)| *n == lines)
            .flat_map(|(_, snippets)| snippets)
            .map(|s| check_request(port, &s.code, s.format))
            .collect()
    }

    fn json(&self) -> Value {
        let sizes: Map<String, Value> = self
            .sizes
            .iter()
            .map(|(lines, snippets)| {
                let origins: Vec<Value> = snippets
                    .iter()
                    .map(|s| json!({"format": s.format, "origin": s.origin}))
                    .collect();
                (lines.to_string(), Value::Array(origins))
            })
            .collect();
        Value::Object(sizes)
    }
}

/// Runs of each tree-sitter parse of a snippet; the fastest counts.
const PARSE_RUNS: usize = 20;

/// Files edited per language in the editing sessions (more in all than
/// the server keeps parses of, so that interleaved they are parsed afresh).
const EDITED_PER_LANGUAGE: usize = 3;

/// What an editor sends while its user types one line into a file: the
/// whole buffer after each keystroke, with the file's path.
struct EditSession {
    path: String,
    format: &'static str,
    versions: Vec<String>,
}

/// Typing `value = other + 1` on a new line in the middle of files of 150
/// to 800 lines, spread over each language corpus.
fn edit_sessions(env: &Env, registry: &Registry) -> Vec<EditSession> {
    const TYPED: &str = "value = other + 1";
    let mut sessions = Vec::new();
    for (corpus, format) in LANGUAGES {
        let sources = scanned_sources(&env.corpus(corpus), registry).unwrap_or_default();
        let eligible: Vec<&Source> = sources
            .iter()
            .filter(|s| {
                registry.get(s.format).name == format
                    && (150..=800).contains(&s.text.lines().count())
            })
            .collect();
        let picks = EDITED_PER_LANGUAGE.min(eligible.len());
        for k in 0..picks {
            let source = eligible[(2 * k + 1) * eligible.len() / (2 * picks)];
            let text = &source.text;
            let Some(at) = text[text.len() / 2..]
                .find('\n')
                .map(|i| text.len() / 2 + i)
            else {
                continue;
            };
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let indent: String = text[line_start..at]
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            let versions = (0..=TYPED.len())
                .map(|typed| {
                    format!(
                        "{}\n{indent}{}{}",
                        &text[..at],
                        &TYPED[..typed],
                        &text[at..]
                    )
                })
                .collect();
            sessions.push(EditSession {
                path: format!("{corpus}/{}", source.rel),
                format,
                versions,
            });
        }
    }
    sessions
}

/// Latency of the editing sessions' checks sent one session after the
/// other (each check reparses from the last of its path), then of the same
/// checks interleaved across sessions (each parsed afresh, the server
/// keeping fewer parses than there are sessions).
fn typing(port: u16, sessions: &[EditSession]) -> Result<(Latency, Latency), String> {
    let request = |s: &EditSession, v: &str| {
        let body = json!({ "code": v, "format": s.format, "path": s.path }).to_string();
        request("POST", "/api/check", port, &body)
    };
    let in_order: Vec<Vec<u8>> = sessions
        .iter()
        .flat_map(|s| s.versions.iter().map(move |v| request(s, v)))
        .collect();
    let rounds = sessions.iter().map(|s| s.versions.len()).max().unwrap_or(0);
    let interleaved: Vec<Vec<u8>> = (0..rounds)
        .flat_map(|i| {
            sessions
                .iter()
                .filter_map(move |s| Some(request(s, s.versions.get(i)?)))
        })
        .collect();
    progress("checks dupcheck: editor typing, one file after the other");
    let kept = latency(port, &in_order, 0, in_order.len())?;
    progress("checks dupcheck: editor typing, interleaved");
    let afresh = latency(port, &interleaved, 0, interleaved.len())?;
    Ok((kept, afresh))
}

/// Latencies per size, and throughputs per connection count, of one server.
#[derive(Default)]
struct CheckFigures {
    latency: Vec<(usize, Latency)>,
    throughput: Vec<Throughput>,
}

impl CheckFigures {
    fn json(&self) -> Value {
        let latency: Map<String, Value> = self
            .latency
            .iter()
            .map(|(lines, l)| (format!("{lines}Lines"), l.json()))
            .collect();
        let throughput: Vec<Value> = self.throughput.iter().map(Throughput::json).collect();
        json!({"latency": latency, "throughput": throughput})
    }

    fn latency_cell(&self, lines: usize) -> String {
        self.latency
            .iter()
            .find(|(n, _)| *n == lines)
            .map_or("-".into(), |(_, l)| l.cell())
    }

    fn throughput_cell(&self, connections: usize) -> String {
        self.throughput
            .iter()
            .find(|t| t.connections == connections)
            .map_or("-".into(), Throughput::cell)
    }
}

/// Latency for each size, then throughput at `connections` with 100 lines.
fn measure_checks(
    port: u16,
    workload: &Workload,
    counts: &Counts,
    connections: &[usize],
    who: &str,
) -> Result<CheckFigures, String> {
    let mut figures = CheckFigures::default();
    for (lines, _) in &workload.sizes {
        let requests = workload.requests(*lines, port);
        if requests.is_empty() {
            continue;
        }
        let (warmup, count) = if *lines >= 1000 {
            (counts.warmup / 10, counts.latency_large)
        } else {
            (counts.warmup, counts.latency)
        };
        progress(&format!("checks {who}: latency of {lines}-line snippets"));
        figures
            .latency
            .push((*lines, latency(port, &requests, warmup, count)?));
    }
    let requests = workload.requests(100, port);
    for &n in connections {
        progress(&format!("checks {who}: throughput at {n} connections"));
        figures
            .throughput
            .push(throughput(port, &requests, n, counts.throughput, u64::MAX));
    }
    Ok(figures)
}

/// Memory figures of the checks server.
struct Memory {
    after_scan_mb: Option<f64>,
    after_checks_mb: Option<f64>,
    run: Throughput,
}

fn checks_and_memory(
    env: &Env,
    options: &Options,
    counts: &Counts,
    out: &mut Output,
) -> Result<(), String> {
    let all = env.corpus("all");
    let workload = Workload::new(env);
    progress("checks: starting dupcheck on all");
    let mut server = Server::dupcheck(env, &all, &["--no-watch", "--no-cache"])?;
    let (scanned, _) = server.summary(RUN_LIMIT)?;
    let after_scan_mb = server.rss_mb();
    let scan_s = scanned.duration_since(server.spawned).as_secs_f64();
    let dupcheck = if options.wants(Part::Checks) {
        Some(measure_checks(
            server.port,
            &workload,
            counts,
            &[1, 16, 64],
            "dupcheck",
        )?)
    } else {
        None
    };
    let typing = dupcheck
        .is_some()
        .then(|| typing(server.port, &workload.editing));
    let memory = if options.wants(Part::Memory) {
        progress(&format!(
            "memory: {} checks of 20 lines",
            counts.memory_checks
        ));
        let requests = workload.requests(20, server.port);
        let run = throughput(
            server.port,
            &requests,
            16,
            RUN_LIMIT,
            counts.memory_checks / 16,
        );
        Some(Memory {
            after_scan_mb,
            after_checks_mb: server.rss_mb(),
            run,
        })
    } else {
        None
    };
    server.stop();
    let peer = dupcheck
        .is_some()
        .then(|| jscpd_checks(env, &all, &workload, counts));
    if let Some(dupcheck) = &dupcheck {
        print_checks(out, dupcheck, peer.as_ref(), scan_s, &workload);
        print_typing(out, typing, &workload);
    }
    if let Some(memory) = memory {
        print_memory(out, &memory);
    }
    Ok(())
}

/// The check figures of jscpd-server, its start time and RSS.
struct PeerChecks {
    figures: CheckFigures,
    ready_s: f64,
    rss_mb: Option<f64>,
}

/// The same checks against jscpd-rs's jscpd-server, with its start time and
/// RSS.
fn jscpd_checks(
    env: &Env,
    dir: &Path,
    workload: &Workload,
    counts: &Counts,
) -> Result<PeerChecks, String> {
    progress("checks: starting jscpd-server on all");
    let mut server = Server::jscpd(env, dir)?;
    let ready = wait_ready(server.port, RUN_LIMIT, Duration::from_millis(10))?;
    let ready_s = ready.duration_since(server.spawned).as_secs_f64();
    let rss = server.rss_mb();
    let figures = measure_checks(server.port, workload, counts, &[16], "jscpd-server")?;
    server.stop();
    Ok(PeerChecks {
        figures,
        ready_s,
        rss_mb: rss,
    })
}

/// Renders one figure of a latency measurement.
type ShowLatency = fn(&Latency) -> String;

fn print_checks(
    out: &mut Output,
    dupcheck: &CheckFigures,
    peer: Option<&Result<PeerChecks, String>>,
    scan_s: f64,
    workload: &Workload,
) {
    let (peer_figures, peer_note) = match peer {
        Some(Ok(p)) => (
            Some(&p.figures),
            format!(
                "jscpd-server ready {:.2} s after spawn, RSS {} MB",
                p.ready_s,
                or_dash(p.rss_mb, 0)
            ),
        ),
        Some(Err(e)) => (None, format!("jscpd-server FAILED: {e}")),
        None => (None, String::new()),
    };
    let cell = |f: Option<&CheckFigures>, pick: &dyn Fn(&CheckFigures) -> String| {
        f.map_or("-".into(), pick)
    };
    out.line(format!(
        "CHECKS on all (dupcheck --no-watch --no-cache, ready {scan_s:.2} s after spawn; {peer_note})"
    ));
    out.line(format!(
        "  {:<22} {:<40} {:<40} target",
        "", "dupcheck", "jscpd-server (jscpd-rs)"
    ));
    for (lines, snippets) in &workload.sizes {
        let target = if *lines == 100 {
            let ok = dupcheck
                .latency
                .iter()
                .find(|(n, _)| *n == 100)
                .is_some_and(|(_, l)| l.p50_ms <= TARGET_P50_100 && l.p99_ms <= TARGET_P99_100);
            format!(
                "<= {TARGET_P50_100} / <= {TARGET_P99_100} ms: {}",
                verdict(ok)
            )
        } else {
            String::new()
        };
        out.line(format!(
            "  {:<22} {:<40} {:<40} {target}",
            format!("p50/p99 {lines} lines ({})", snippets.len()),
            dupcheck.latency_cell(*lines),
            cell(peer_figures, &|f| f.latency_cell(*lines)),
        ));
    }
    for connections in [1, 16, 64] {
        let target = if connections == 16 {
            let ok = dupcheck
                .throughput
                .iter()
                .any(|t| t.connections == 16 && t.per_second() >= TARGET_CHECKS_16);
            format!(">= {TARGET_CHECKS_16}/s: {}", verdict(ok))
        } else {
            String::new()
        };
        out.line(format!(
            "  {:<22} {:<40} {:<40} {target}",
            format!("100 lines, {connections} conn"),
            dupcheck.throughput_cell(connections),
            cell(peer_figures, &|f| f.throughput_cell(connections)),
        ));
    }
    let per_size = |f: &CheckFigures, show: ShowLatency| {
        let cells: Vec<String> = f
            .latency
            .iter()
            .map(|(n, l)| format!("{n}: {}", show(l)))
            .collect();
        cells.join(", ")
    };
    let rows: [(&str, ShowLatency); 2] = [
        ("answers with dups", |l| {
            format!("{}/{}", l.with_duplications, l.requests)
        }),
        ("mean answer KB", |l| {
            format!("{:.1}", l.mean_bytes / 1024.0)
        }),
    ];
    for (name, show) in rows {
        out.line(format!(
            "  {name:<22} {:<40} {:<40}",
            per_size(dupcheck, show),
            cell(peer_figures, &|f| per_size(f, show))
        ));
    }
    out.line(
        "  reference (measured elsewhere): jscpd 4 engine behind the same API \
         2.8-4 ms / 11-17 ms, 160-230 checks/s",
    );
    let json = checks_json(dupcheck, peer, scan_s, workload);
    out.json.insert("checks".into(), json);
}

/// The tree-sitter floor under 100-line checks, and the editing sessions.
fn print_typing(
    out: &mut Output,
    typing: Option<Result<(Latency, Latency), String>>,
    workload: &Workload,
) {
    let parse = &workload.parse_100_ms;
    let mean = parse.iter().sum::<f64>() / parse.len().max(1) as f64;
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let ceiling = cores as f64 * 1e3 / mean;
    out.line(format!(
        "  {:<22} {:.3} / {:.3} ms, mean {mean:.3} ms: at most {ceiling:.0} parses/s on {cores} cores \
         (the {} 100-line snippets parsed in-process: the floor under their checks)",
        "tree-sitter alone",
        percentile(parse, 0.50),
        percentile(parse, 0.99),
        parse.len()
    ));
    let sessions = &workload.editing;
    let lines: usize = sessions
        .iter()
        .filter_map(|s| s.versions.first())
        .map(|v| v.lines().count())
        .sum();
    let mean_lines = lines / sessions.len().max(1);
    let mut json = json!({
        "parse100Ms": {"p50": percentile(parse, 0.50), "p99": percentile(parse, 0.99),
                       "mean": mean, "parsesPerSecondCeiling": ceiling},
        "sessions": sessions.iter().map(|s| &s.path).collect::<Vec<_>>(),
    });
    match typing {
        Some(Ok((kept, afresh))) => {
            out.line(format!(
                "  {:<22} {:<40} parsed afresh: {}",
                "editor typing, path",
                kept.cell(),
                afresh.cell()
            ));
            out.line(format!(
                "  {:<22} {} files of {mean_lines} lines on average, a keystroke per check; \
                 afresh = the same checks interleaved over more files than the {} parses kept",
                "",
                sessions.len(),
                dupcheck::project::buffers::KEPT
            ));
            json["kept"] = kept.json();
            json["afresh"] = afresh.json();
        }
        Some(Err(e)) => out.line(format!("  editor typing: FAILED: {e}")),
        None => {}
    }
    out.json.insert("editing".into(), json);
}

fn checks_json(
    dupcheck: &CheckFigures,
    peer: Option<&Result<PeerChecks, String>>,
    scan_s: f64,
    workload: &Workload,
) -> Value {
    let peer = match peer {
        Some(Ok(p)) => json!({"figures": p.figures.json(), "readyS": p.ready_s, "rssMb": p.rss_mb}),
        Some(Err(e)) => json!({ "error": e }),
        None => Value::Null,
    };
    json!({"dupcheck": dupcheck.json(), "dupcheckReadyS": scan_s, "jscpdServer": peer,
           "snippets": workload.json()})
}

fn print_memory(out: &mut Output, memory: &Memory) {
    let ok = memory.after_scan_mb.is_some_and(|mb| mb <= TARGET_RSS_MB);
    out.line(format!(
        "MEMORY (all): RSS after scan {} MB (target <= {TARGET_RSS_MB} MB: {}); after {} more checks \
         of 20 lines on 16 connections ({}) {} MB",
        or_dash(memory.after_scan_mb, 1),
        verdict(ok),
        memory.run.checks,
        memory.run.cell(),
        or_dash(memory.after_checks_mb, 1),
    ));
    out.json.insert(
        "memory".into(),
        json!({"afterScanMb": memory.after_scan_mb, "afterChecksMb": memory.after_checks_mb,
               "checks": memory.run.json(), "target": TARGET_RSS_MB}),
    );
}

// ------------------------------------------------------------------ update --

/// A unique ~30-line JavaScript function; `tag` makes it unique.
fn fresh_function(tag: &str, number: usize) -> String {
    const TEMPLATE: &str = "\
function benchFresh@(records@, options@) {
  const limit@ = (options@ && options@.limit) || #;
  const seen@ = new Set();
  const result@ = [];
  for (let index@ = 0; index@ < records@.length; index@ += 1) {
    const record@ = records@[index@];
    if (record@ == null || seen@.has(record@.id)) {
      continue;
    }
    seen@.add(record@.id);
    const weight@ = record@.weight * # + index@;
    if (weight@ > limit@) {
      result@.push({ id: record@.id, weight: weight@, tag: 'fresh-@' });
    } else {
      result@.unshift({ id: record@.id, weight: -weight@, tag: 'stale-@' });
    }
    if (result@.length >= limit@) {
      break;
    }
  }
  result@.sort(function (left@, right@) {
    return left@.weight - right@.weight;
  });
  return {
    total: result@.length,
    items: result@,
    label: 'bench-update-@',
    limit: limit@
  };
}
";
    TEMPLATE
        .replace('@', tag)
        .replace('#', &(number + 7).to_string())
}

/// Whether a check answer reports a duplication in `file`.
fn names_file(body: &[u8], file: &str) -> bool {
    let Ok(answer) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    answer["duplications"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["codebaseLocation"]["file"] == file))
}

/// Copies a tree of regular files and folders, skipping hidden entries.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else if kind.is_file() {
            fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// Milliseconds from writing `file` (holding `code`) to the first check of
/// `code` that reports a duplication in it; `None` after [`UPDATE_LIMIT`].
fn update_trial(port: u16, dir: &Path, file: &str, code: &str) -> Result<Option<f64>, String> {
    let check = check_request(port, code, "javascript");
    let mut conn = Conn::open(port).map_err(|e| e.to_string())?;
    let written = Instant::now();
    fs::write(dir.join(file), code).map_err(|e| e.to_string())?;
    while written.elapsed() < UPDATE_LIMIT {
        let answer = conn.exchange(&check).map_err(|e| e.to_string())?;
        if answer.status == 200 && names_file(&answer.body, file) {
            return Ok(Some(written.elapsed().as_secs_f64() * 1e3));
        }
        thread::sleep(Duration::from_millis(1));
    }
    Ok(None)
}

fn update(env: &Env, counts: &Counts, out: &mut Output) -> Result<(), String> {
    let dir = env.tmp.path().join("update/lodash");
    progress("update: copying lodash");
    copy_tree(&env.corpus("lodash"), &dir).map_err(|e| format!("cannot copy lodash: {e}"))?;
    let since = SystemTime::now();
    let mut server = Server::dupcheck(env, &dir, &[])?;
    server.summary(RUN_LIMIT)?;
    // Let the first cache write finish so it does not compete with trials.
    wait_for_cache(&dir, since, Duration::from_secs(60));
    thread::sleep(Duration::from_millis(300));
    let nonce = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() % 1_000_000);
    let mut trials = Vec::new();
    for trial in 0..counts.update_trials {
        progress(&format!("update: trial {}", trial + 1));
        let file = format!("bench_update_{trial}.js");
        let code = fresh_function(&format!("T{trial}N{nonce}"), trial);
        trials.push(update_trial(server.port, &dir, &file, &code)?);
        thread::sleep(Duration::from_millis(300));
    }
    server.stop();
    let mut seen: Vec<f64> = trials.iter().flatten().copied().collect();
    let missed = trials.len() - seen.len();
    let median_ms = median(&mut seen);
    let ok = missed == 0 && median_ms <= TARGET_UPDATE_MS;
    out.line(format!(
        "UPDATE (watched copy of lodash): {median_ms:.1} ms write -> first check that sees it, median of {} \
         (target <= {TARGET_UPDATE_MS} ms: {}); trials {:?} ms{}",
        trials.len(),
        verdict(ok),
        trials
            .iter()
            .map(|t| t.map_or(-1.0, |ms| (ms * 10.0).round() / 10.0))
            .collect::<Vec<_>>(),
        if missed > 0 {
            format!(", {missed} not seen within {UPDATE_LIMIT:?} (-1)")
        } else {
            String::new()
        }
    ));
    out.json.insert(
        "update".into(),
        json!({"medianMs": median_ms, "trialsMs": trials, "missed": missed, "target": TARGET_UPDATE_MS}),
    );
    Ok(())
}

// -------------------------------------------------------------------- main --

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
    let mut out = Output {
        lines: vec![format!(
            "dupcheck benchmark: {cores} cores, load average {load}{}",
            if options.quick { ", --quick" } else { "" }
        )],
        json: Map::new(),
    };
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
        cold_scan(&env, &counts, &mut out);
        out.others("scan", &others);
    }
    if options.wants(Part::Warm) {
        let others = Others::start();
        match warm_start(&env, &counts, &mut out) {
            Ok(()) => out.others("warm", &others),
            Err(e) => out.failed("warmStart", &e),
        }
    }
    if options.wants(Part::Checks) || options.wants(Part::Memory) {
        let others = Others::start();
        match checks_and_memory(&env, &options, &counts, &mut out) {
            Ok(()) => out.others("checks", &others),
            Err(e) => out.failed("checks", &e),
        }
    }
    if options.wants(Part::Update) {
        let others = Others::start();
        match update(&env, &counts, &mut out) {
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
