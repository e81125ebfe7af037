//! dupcheck on a fraction: the parse floor of its files, a cold start
//! followed line by line (the scan, clone detection, the memory at each),
//! the other endpoints' answers, 40-line checks over one connection and
//! at 16, a warm restart from the cache, and a cold start in mild mode;
//! and the same checks on libgit2, the reference.

use std::collections::VecDeque;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use dupcheck::engine::grammar::Registry;
use serde_json::Value;

use crate::env::{parse_floor, proc_status_mb, scanned_sources, Env, Source};
use crate::fractions::{copy_links, empty_links_folder, Fraction};
use crate::measure::{latency, median, throughput, Latency, Throughput};
use crate::output::progress;
use crate::server::{check_request, parse_summary, request, wait_ready, Conn, Server};
use crate::Counts;

/// The log filter of every dupcheck started here: the scanner's debug
/// lines (the memory breakdowns, the cache's write) and info otherwise.
/// Not `dupcheck=debug`: it logs two lines per check, which the checks
/// measured would pay for.
const LOG: (&str, &str) = (
    "DUPCHECK_LOG",
    "dupcheck=info,dupcheck::project::scanner=debug",
);

/// Lines of each snippet checked.
pub(crate) const SNIPPET_LINES: usize = 40;

/// Snippets cut per corpus, cycled through by the checks.
const SNIPPETS: usize = 16;

/// Connections of the load.
pub(crate) const CONNECTIONS: usize = 16;

/// The longest wait for the memory line that follows the clones line
/// (a binary without it never prints it).
const MEMORY_LINE_WAIT: Duration = Duration::from_secs(10);

/// How long the cache file must keep its size to count as written.
const CACHE_SETTLED: Duration = Duration::from_secs(1);

/// Starts dupcheck on `dir` with `flags` and the log filter [`LOG`].
fn start(env: &Env, dir: &Path, flags: &[&str]) -> Result<Server, String> {
    Server::dupcheck_with(env, dir, flags, &[LOG])
}

/// What a start printed up to its clones line, and the memory then.
#[derive(Default)]
pub(crate) struct Startup {
    /// Seconds from spawn to the `scanned` line: checks are answered.
    pub(crate) scanned_s: f64,
    /// Seconds from spawn to the clones line: the statistics are ready.
    pub(crate) clones_s: Option<f64>,
    /// Files, lines and tokens of the `scanned` line.
    pub(crate) files: Option<u64>,
    pub(crate) lines: Option<u64>,
    pub(crate) tokens: Option<u64>,
    /// Files parsed and files whose tokens came from the cache.
    pub(crate) parsed: Option<u64>,
    pub(crate) reused: Option<u64>,
    /// What the `scanned` line says was skipped, if anything.
    pub(crate) skipped: Option<String>,
    /// Clones, duplicated lines (as printed, `12.3%`) and the seconds of
    /// clone detection, from the clones line.
    pub(crate) clones: Option<u64>,
    pub(crate) duplicated: Option<String>,
    pub(crate) detect_s: Option<f64>,
    /// VmRSS when the `scanned` line was read, in MB.
    pub(crate) rss_scanned_mb: Option<f64>,
    /// VmRSS and VmHWM when the clones line was read, in MB.
    pub(crate) rss_clones_mb: Option<f64>,
    pub(crate) hwm_clones_mb: Option<f64>,
    /// The server's memory breakdowns after the scan and after clone
    /// detection (`memory: N MB (X B/line): tokens ...`).
    pub(crate) memory_scan: Option<String>,
    pub(crate) memory_clones: Option<String>,
    /// Lines about the cache, warnings and errors, verbatim.
    pub(crate) notes: Vec<String>,
}

/// Whether a stderr line is worth reporting as it is: about the cache (a
/// refusal to read it, its write), a warning or an error.
fn noted(line: &str) -> bool {
    line.contains("cache")
        || line.contains(" WARN ")
        || line.contains(" ERROR ")
        || line.contains("error:")
}

/// The whitespace-separated word just before `unit` in `line` (`456` of
/// `456 lines`).
fn word_before<'a>(line: &'a str, unit: &str) -> Option<&'a str> {
    line[..line.find(unit)?].split_whitespace().next_back()
}

/// The number just before `unit` in `line`.
fn number_before(line: &str, unit: &str) -> Option<u64> {
    word_before(line, unit)?
        .trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

/// What follows `marker` in `line`, if it is there.
fn after(line: &str, marker: &str) -> Option<String> {
    line.find(marker)
        .map(|i| line[i + marker.len()..].to_owned())
}

impl Startup {
    /// Reads `server`'s stderr up to its clones line and the memory line
    /// after it, for at most `limit`: the times of the lines, what they
    /// say, and VmRSS as each of the two summary lines is read.
    fn follow(server: &Server, limit: Duration) -> Result<Startup, String> {
        let deadline = Instant::now() + limit;
        let mut s = Startup::default();
        let mut scanned = false;
        let mut clones_at: Option<Instant> = None;
        // The last lines, to say why a start failed.
        let mut last: VecDeque<String> = VecDeque::new();
        for _ in 0..1_000_000 {
            if clones_at.is_some() && s.memory_clones.is_some() {
                break;
            }
            let until = clones_at.map_or(deadline, |at| (at + MEMORY_LINE_WAIT).min(deadline));
            let Some((at, line)) = server.line(until.saturating_duration_since(Instant::now()))
            else {
                if clones_at.is_some() {
                    break;
                }
                let why = match Instant::now() >= deadline {
                    true => format!("no clones line within {limit:?}"),
                    false => "dupcheck ended before its clones line".to_owned(),
                };
                let last: Vec<String> = last.into_iter().collect();
                return Err(format!("{why}; its last lines: {last:?}"));
            };
            let since_spawn = at.duration_since(server.spawned).as_secs_f64();
            if line.starts_with("dupcheck: scanned") {
                s.rss_scanned_mb = server.rss_mb();
                s.scanned_s = since_spawn;
                scanned = true;
                if let Some(summary) = parse_summary(&line) {
                    s.files = Some(summary.files);
                    s.parsed = Some(summary.parsed);
                    s.reused = Some(summary.reused);
                }
                s.lines = number_before(&line, " lines,");
                s.tokens = number_before(&line, " tokens");
                s.skipped = after(&line, "; skipped ");
            } else if line.contains(" duplicated lines, detected in ") {
                s.rss_clones_mb = server.rss_mb();
                s.hwm_clones_mb = proc_status_mb(server.pid(), "VmHWM");
                s.clones_s = Some(since_spawn);
                s.clones = number_before(&line, " clone");
                s.duplicated = word_before(&line, " duplicated lines").map(str::to_owned);
                s.detect_s = after(&line, "detected in ")
                    .and_then(|rest| rest.split_whitespace().next()?.parse().ok());
                clones_at = Some(at);
            } else if let Some(memory) = after(&line, "after the scan, ") {
                s.memory_scan = Some(memory);
            } else if let Some(memory) = after(&line, "after clone detection, ") {
                s.memory_clones = Some(memory);
            } else if noted(&line) {
                s.notes.push(line.clone());
            }
            last.push_back(line);
            if last.len() > 5 {
                last.pop_front();
            }
        }
        match scanned {
            true => Ok(s),
            false => Err("no `scanned` line".into()),
        }
    }
}

/// An endpoint's answer: the median time and the last body's size.
pub(crate) struct Endpoint {
    /// The request's path (`/api/clone?id=` without the id).
    pub(crate) path: String,
    /// Median milliseconds from sending the request to the body's end.
    pub(crate) median_ms: f64,
    /// Bytes of the body.
    pub(crate) bytes: usize,
    /// The status.
    pub(crate) status: u16,
}

/// `GET` of `/api/clones?limit=100`, `/api/clone?id=` (the first of that
/// page), `/api/stats` and `/api/tree`, `runs` times each over one
/// keep-alive connection.
fn endpoints(port: u16, runs: usize) -> Result<Vec<Endpoint>, String> {
    let mut conn = Conn::open(port).map_err(|e| format!("cannot connect: {e}"))?;
    let mut time = |path: &str, label: &str| -> Result<(Endpoint, Vec<u8>), String> {
        let bytes = request("GET", path, port, "");
        let mut ms = Vec::with_capacity(runs);
        let mut body = Vec::new();
        let mut status = 0;
        for _ in 0..runs.max(1) {
            let started = Instant::now();
            let response = conn
                .exchange(&bytes)
                .map_err(|e| format!("GET {path}: {e}"))?;
            ms.push(started.elapsed().as_secs_f64() * 1e3);
            (status, body) = (response.status, response.body);
        }
        let endpoint = Endpoint {
            path: label.to_owned(),
            median_ms: median(&mut ms),
            bytes: body.len(),
            status,
        };
        Ok((endpoint, body))
    };
    let (clones, page) = time("/api/clones?limit=100", "/api/clones?limit=100")?;
    let first = serde_json::from_slice::<Value>(&page)
        .ok()
        .and_then(|v| v["clones"][0]["id"].as_str().map(str::to_owned));
    let mut answers = vec![clones];
    if let Some(id) = first {
        answers.push(time(&format!("/api/clone?id={id}"), "/api/clone?id=")?.0);
    }
    answers.push(time("/api/stats", "/api/stats")?.0);
    answers.push(time("/api/tree", "/api/tree")?.0);
    Ok(answers)
}

/// A snippet checked, and the folder of the file it was cut from.
pub(crate) struct Snippet {
    /// That folder, relative to the scanned one.
    pub(crate) folder: String,
    /// Its [`SNIPPET_LINES`] lines.
    pub(crate) code: String,
}

/// Up to [`SNIPPETS`] snippets of [`SNIPPET_LINES`] lines from the C
/// files among `sources`, cut as `bench` cuts its own: from files spread
/// evenly over the sorted list, a third of the way into the file.
fn c_snippets(sources: &[Source], registry: &Registry) -> Vec<Snippet> {
    let eligible: Vec<&Source> = sources
        .iter()
        .filter(|s| {
            registry.get(s.format).name == "c" && s.text.lines().count() > SNIPPET_LINES + 10
        })
        .collect();
    let picks = SNIPPETS.min(eligible.len());
    (0..picks)
        .filter_map(|k| {
            let source = eligible[(2 * k + 1) * eligible.len() / (2 * picks)];
            let all: Vec<&str> = source.text.lines().collect();
            let start = (all.len() - SNIPPET_LINES) / 3;
            let code = all[start..start + SNIPPET_LINES].join("\n");
            let folder = Path::new(&source.rel)
                .parent()
                .map_or(String::new(), |f| f.to_string_lossy().into_owned());
            (!code.trim().is_empty()).then_some(Snippet { folder, code })
        })
        .collect()
}

/// The checks of a served folder: latency over one connection, then the
/// load at [`CONNECTIONS`], and the memory after it.
pub(crate) struct Checks {
    /// Snippets cycled through.
    pub(crate) snippets: usize,
    /// One at a time over one keep-alive connection.
    pub(crate) latency: Result<Latency, String>,
    /// At [`CONNECTIONS`] connections for [`Counts::load`].
    pub(crate) load: Throughput,
    /// The reference's same load run just before this one and just after
    /// it, on its server kept running: the machine's speed moves by a
    /// quarter within minutes, so a load is set against the mean of the
    /// two around it, not against one run minutes earlier.
    pub(crate) beside: Option<[Throughput; 2]>,
    /// VmRSS and VmHWM after the load, in MB.
    pub(crate) rss_mb: Option<f64>,
    pub(crate) hwm_mb: Option<f64>,
}

/// The check requests of `snippets` (C) to `port`.
fn c_requests(port: u16, snippets: &[Snippet]) -> Vec<Vec<u8>> {
    (snippets.iter())
        .map(|snippet| check_request(port, &snippet.code, "c"))
        .collect()
}

/// Measures the checks of `snippets` (C) on `server`; with a
/// `reference`, its load runs just before and just after `server`'s.
fn checks(
    server: &Server,
    snippets: &[Snippet],
    counts: &Counts,
    reference: Option<&Reference>,
) -> Result<Checks, String> {
    if snippets.is_empty() {
        return Err(format!(
            "no C file longer than {} lines to cut snippets from",
            SNIPPET_LINES + 10
        ));
    }
    let requests = c_requests(server.port, snippets);
    progress(&format!(
        "scale:   latency of {SNIPPET_LINES}-line checks, one connection"
    ));
    let latency = latency(server.port, &requests, counts.warmup, counts.latency);
    let before = reference.map(|r| r.load(counts));
    progress(&format!(
        "scale:   checks at {CONNECTIONS} connections for {:?}",
        counts.load
    ));
    let load = throughput(server.port, &requests, CONNECTIONS, counts.load, u64::MAX);
    let (rss_mb, hwm_mb) = (server.rss_mb(), proc_status_mb(server.pid(), "VmHWM"));
    let after = reference.map(|r| r.load(counts));
    Ok(Checks {
        snippets: snippets.len(),
        latency,
        load,
        beside: before.zip(after).map(|(b, a)| [b, a]),
        rss_mb,
        hwm_mb,
    })
}

/// The parse floor of a fraction's files, measured on both sides of a
/// start that only scans them: this machine's speed moves by a quarter
/// within minutes, and one floor beside one scan measured that as much
/// as the scan.
pub(crate) struct Floor {
    /// Wall seconds to parse them all once on all cores: the mean of the
    /// two runs.
    pub(crate) seconds: f64,
    /// The run before the scan alone, and the one after it.
    pub(crate) runs: [f64; 2],
    /// Seconds from spawning a cold start (`--no-cache`) to its `scanned`
    /// line, between the two runs (the server is stopped there).
    pub(crate) scan_alone: Result<f64, String>,
    /// Files dupcheck scans (read as it reads them).
    pub(crate) files: usize,
}

/// The cold start and what was measured on that server.
pub(crate) struct Cold {
    /// Its start.
    pub(crate) startup: Startup,
    /// The other endpoints.
    pub(crate) endpoints: Result<Vec<Endpoint>, String>,
    /// Its checks.
    pub(crate) checks: Result<Checks, String>,
    /// The same checks on the snippets' own folders alone.
    pub(crate) own: Result<OwnFolders, String>,
}

/// A warm restart: the start that filled the cache and the one that read
/// it.
pub(crate) struct Warm {
    /// The start that filled the cache.
    pub(crate) fill: Startup,
    /// Size of the cache file, in MB.
    pub(crate) cache_mb: f64,
    /// Seconds from the filling start's clones line to the cache file
    /// settled.
    pub(crate) cache_s: f64,
    /// Seconds from the second spawn to `/api/health` ready.
    pub(crate) ready_s: f64,
    /// The second start.
    pub(crate) restart: Startup,
    /// Every line either start printed about the cache, warnings and
    /// errors (a refusal to read the cache among them), verbatim.
    pub(crate) notes: Vec<String>,
}

/// Everything measured of dupcheck on one fraction.
pub(crate) struct Figures {
    /// The parse floor.
    pub(crate) floor: Result<Floor, String>,
    /// The cold start with `--no-cache`, and its checks.
    pub(crate) cold: Result<Cold, String>,
    /// The warm restart.
    pub(crate) warm: Result<Warm, String>,
}

/// The parse floor, a cold start with its answers and checks, and a warm
/// restart, on `fraction`.
pub(crate) fn fraction(
    env: &Env,
    registry: &Registry,
    fraction: &Fraction,
    counts: &Counts,
    reference: Option<&Reference>,
) -> Figures {
    let name = &fraction.name;
    progress(&format!(
        "scale {name}: reading its files and the parse floor"
    ));
    // The texts are dropped before any server starts: on the whole tree
    // they are over a GB.
    let (floor, snippets) = match scanned_sources(&fraction.dir, registry) {
        Ok(sources) => {
            let before = parse_floor(registry, &sources, 1);
            progress(&format!("scale {name}: a start that only scans"));
            let scan_alone = scan_alone(env, fraction, counts.start_limit);
            progress(&format!("scale {name}: the parse floor again"));
            let after = parse_floor(registry, &sources, 1);
            let floor = Floor {
                seconds: (before + after) / 2.0,
                runs: [before, after],
                scan_alone,
                files: sources.len(),
            };
            (Ok(floor), c_snippets(&sources, registry))
        }
        Err(e) => (Err(e), Vec::new()),
    };
    progress(&format!("scale {name}: cold start (--no-cache)"));
    let cold = cold(env, fraction, &snippets, counts, reference);
    let warm = warm(env, fraction, counts);
    Figures { floor, cold, warm }
}

/// Seconds from spawning a cold start (`--no-cache`) of `fraction` to
/// its `scanned` line; the server is stopped there.
fn scan_alone(env: &Env, fraction: &Fraction, limit: Duration) -> Result<f64, String> {
    let mut server = start(env, &fraction.dir, &["--no-cache"])?;
    let deadline = Instant::now() + limit;
    let mut scanned = None;
    while let Some((at, line)) = server.line(deadline.saturating_duration_since(Instant::now())) {
        if line.starts_with("dupcheck: scanned") {
            scanned = Some(at.duration_since(server.spawned).as_secs_f64());
            break;
        }
    }
    server.stop();
    scanned.ok_or_else(|| format!("no scanned line within {limit:?}"))
}

/// A cold start with `--no-cache`, its other endpoints and its checks.
fn cold(
    env: &Env,
    fraction: &Fraction,
    snippets: &[Snippet],
    counts: &Counts,
    reference: Option<&Reference>,
) -> Result<Cold, String> {
    // Served before the fraction's start, it idles through it.
    let own = own_folders(env, fraction, snippets, counts);
    let mut server = start(env, &fraction.dir, &["--no-cache"])?;
    let startup = Startup::follow(&server, counts.start_limit)?;
    progress("scale:   the other endpoints");
    let endpoints = endpoints(server.port, counts.api_runs);
    let checks = checks(&server, snippets, counts, reference);
    server.stop();
    let own = own.map(|(mut own_server, startup, folders)| {
        progress(&format!(
            "scale:   the same checks on their own folders at {CONNECTIONS} connections"
        ));
        let requests = c_requests(own_server.port, snippets);
        let load = throughput(
            own_server.port,
            &requests,
            CONNECTIONS,
            counts.load,
            u64::MAX,
        );
        own_server.stop();
        OwnFolders {
            folders,
            startup,
            load,
        }
    });
    Ok(Cold {
        startup,
        endpoints,
        checks,
        own,
    })
}

/// The checks' load on a tree of their snippets' own folders alone: what
/// a check costs for what it is, set beside what it costs on the whole
/// fraction (the growth), where the reference's tree has other snippets.
pub(crate) struct OwnFolders {
    /// Folders linked.
    pub(crate) folders: usize,
    /// The cold start on them.
    pub(crate) startup: Startup,
    /// At [`CONNECTIONS`] connections for [`Counts::load`], right after
    /// the fraction's load and the reference's loads beside it.
    pub(crate) load: Throughput,
}

/// The distinct folders of `snippets`, none inside another.
fn own_folder_list(snippets: &[Snippet]) -> Vec<&str> {
    let mut folders: Vec<&str> = snippets.iter().map(|s| s.folder.as_str()).collect();
    folders.sort_unstable();
    folders.dedup();
    let inside = |f: &str, of: &str| f.starts_with(&format!("{of}/"));
    (folders.iter())
        .filter(|f| !folders.iter().any(|of| of != *f && inside(f, of)))
        .copied()
        .collect()
}

/// Links the folders of `snippets` from `fraction` (hard links, as its
/// own copy) into `.corpora/linux-6.12-scale/own-N` and serves them
/// (`--no-cache`), followed to the clones line; with how many folders.
fn own_folders(
    env: &Env,
    fraction: &Fraction,
    snippets: &[Snippet],
    counts: &Counts,
) -> Result<(Server, Startup, usize), String> {
    if snippets.is_empty() || snippets.iter().any(|s| s.folder.is_empty()) {
        return Err(
            "no snippets, or one from the top folder (its own folders would be all)".into(),
        );
    }
    let folders = own_folder_list(snippets);
    let Some(scale) = fraction.dir.parent() else {
        return Err(format!("{} has no parent folder", fraction.dir.display()));
    };
    let dir = scale.join(format!("own-{}", fraction.share));
    empty_links_folder(&dir)?;
    for folder in &folders {
        let to = dir.join(folder);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        }
        copy_links(&fraction.dir.join(folder), &to)?;
    }
    progress(&format!(
        "scale {}: the snippets' own folders (--no-cache)",
        fraction.name
    ));
    let server = start(env, &dir, &["--no-cache"])?;
    let startup = Startup::follow(&server, counts.start_limit)?;
    Ok((server, startup, folders.len()))
}

/// Adds the lines `server` still has to say (it is stopped) to `notes`.
fn drain(server: &Server, notes: &mut Vec<String>) {
    for _ in 0..10_000 {
        match server.line(Duration::from_millis(200)) {
            Some((_, line)) if noted(&line) => notes.push(line),
            Some(_) => {}
            None => break,
        }
    }
}

/// Waits, reading `server`'s lines meanwhile, until the cache file
/// `file` was written at or after `since` and has kept its size for
/// [`CACHE_SETTLED`]; its size in bytes.
fn cache_settled(
    server: &Server,
    file: &Path,
    since: SystemTime,
    limit: Duration,
    notes: &mut Vec<String>,
) -> Result<u64, String> {
    let deadline = Instant::now() + limit;
    let mut seen: Option<(u64, Instant)> = None;
    while Instant::now() < deadline {
        // The wait itself: the server says when it writes the cache.
        if let Some((_, line)) = server.line(Duration::from_millis(100)) {
            if noted(&line) {
                if line.contains("cannot write the cache") {
                    return Err(line);
                }
                notes.push(line);
            }
        }
        let written = fs::metadata(file)
            .ok()
            .filter(|m| m.modified().is_ok_and(|t| t >= since))
            .map(|m| m.len());
        match (written, seen) {
            (Some(size), Some((before, at))) if size == before => {
                if at.elapsed() >= CACHE_SETTLED {
                    return Ok(size);
                }
            }
            (Some(size), _) => seen = Some((size, Instant::now())),
            (None, _) => {}
        }
    }
    Err(format!("{} not written within {limit:?}", file.display()))
}

/// Fills the cache of `fraction` with one start (stopped with SIGTERM
/// once the cache file has settled), then times a second start on it.
fn warm(env: &Env, fraction: &Fraction, counts: &Counts) -> Result<Warm, String> {
    let name = &fraction.name;
    let cache = fraction.dir.join(".dupcheck-cache");
    let remove = || match fs::remove_dir_all(&cache) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {e}", cache.display()))
        }
        _ => Ok(()),
    };
    remove()?;
    let cache_arg = cache.to_str().ok_or("the cache's path is not UTF-8")?;
    let flags = ["--cache-dir", cache_arg];
    progress(&format!("scale {name}: warm restart: filling the cache"));
    let since = SystemTime::now();
    let mut server = start(env, &fraction.dir, &flags)?;
    let fill = Startup::follow(&server, counts.start_limit)?;
    let mut notes = fill.notes.clone();
    let waited = Instant::now();
    let file = dupcheck::project::cache::file_in(&cache);
    let bytes = cache_settled(&server, &file, since, counts.start_limit, &mut notes)?;
    let cache_s = waited.elapsed().as_secs_f64();
    server.stop();
    drain(&server, &mut notes);
    progress(&format!(
        "scale {name}: warm restart: the start that reads it"
    ));
    let mut server = start(env, &fraction.dir, &flags)?;
    let ready = wait_ready(server.port, counts.start_limit, Duration::from_millis(2))?;
    let ready_s = ready.duration_since(server.spawned).as_secs_f64();
    let restart = Startup::follow(&server, counts.start_limit)?;
    notes.extend(restart.notes.iter().cloned());
    server.stop();
    drain(&server, &mut notes);
    // The whole tree's cache is over a GB.
    remove()?;
    Ok(Warm {
        fill,
        cache_mb: bytes as f64 / 1048576.0,
        cache_s,
        ready_s,
        restart,
        notes,
    })
}

/// A cold start with `--mode mild --no-cache` on `fraction`, to its
/// clones line.
pub(crate) fn mild(env: &Env, fraction: &Fraction, counts: &Counts) -> Result<Startup, String> {
    progress(&format!("scale {}: cold start in mild mode", fraction.name));
    let mut server = start(env, &fraction.dir, &["--no-cache", "--mode", "mild"])?;
    let startup = Startup::follow(&server, counts.start_limit)?;
    server.stop();
    Ok(startup)
}

/// The reference: the same checks on libgit2, served as the kernel is,
/// its server kept running through the run for the loads beside each
/// fraction's (it idles meanwhile: a few MB, no CPU).
pub(crate) struct Reference {
    /// Its start.
    pub(crate) startup: Startup,
    /// Its checks, right after its start.
    pub(crate) checks: Checks,
    server: Server,
    requests: Vec<Vec<u8>>,
}

impl Reference {
    /// The load of its checks at [`CONNECTIONS`] for [`Counts::load`],
    /// now.
    fn load(&self, counts: &Counts) -> Throughput {
        progress(&format!(
            "scale:   libgit2's checks at {CONNECTIONS} connections for {:?}",
            counts.load
        ));
        let port = self.server.port;
        throughput(port, &self.requests, CONNECTIONS, counts.load, u64::MAX)
    }
}

/// A cold start with `--no-cache` on `.corpora/libgit2` and 40-line checks
/// cut from its own C files; the server goes on running.
pub(crate) fn reference(
    env: &Env,
    registry: &Registry,
    counts: &Counts,
) -> Result<Reference, String> {
    let dir = env.corpus("libgit2");
    progress("scale: reference: libgit2");
    let snippets = c_snippets(&scanned_sources(&dir, registry)?, registry);
    let server = start(env, &dir, &["--no-cache"])?;
    let startup = Startup::follow(&server, counts.start_limit)?;
    let checks = checks(&server, &snippets, counts, None)?;
    let requests = c_requests(server.port, &snippets);
    Ok(Reference {
        startup,
        checks,
        server,
        requests,
    })
}
