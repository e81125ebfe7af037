//! Checks through the store beside a local server over the same files:
//! the sampled snippets, both servers' answers compared, latency at one
//! connection, checks per second at 16, and the statements a check costs.
//!
//! The snippets: `samples` windows of 10 to 60 lines, cut from the files
//! dupcheck scans in the repositories (taken in turn, a file and a window
//! drawn from a fixed seed), each checked in one mode, strict, mild and
//! weak in turn. The servers: (a) `dupcheck TREE` over the tree of links
//! (every repository a folder named as it), and (b) `dupcheck EMPTY
//! --store URL --repository NAME` over an empty folder, NAME in no
//! repository of the store; both `--no-cache --no-watch`.
//!
//! A check's answers agree when their duplications are the same set of
//! `(file, startLine, endLine, startColumn, endColumn, fragment, tokens,
//! similarity)` with the snippet's lines and columns, (a)'s `file` read as
//! (b)'s `repository + "/" + file`, and (b) says `"store": {"status":
//! "ok"}`. The statements of a check are the store database's committed
//! transactions (`pg_stat_database.xact_commit`, read from another
//! database) over the run at one connection, divided by the checks sent:
//! each statement outside a transaction commits once. The counter is
//! flushed by the server's session when idle, within `PGSTAT_IDLE_INTERVAL`
//! (10 s): it is read again until it no longer moves. `pg_stat_statements`,
//! reset before the same run, gives each statement's calls and time in
//! the server.

use std::collections::BTreeMap;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use dupcheck::engine::grammar::Registry;
use serde_json::{json, Value};

use crate::env::{proc_cpu_seconds, scanned_sources};
use crate::measure::{latency, throughput, Latency, Throughput};
use crate::output::progress;
use crate::postgres::Postgres;
use crate::publish::Repository;
use crate::server::{parse_summary, request, Conn, Server};

/// The modes the samples are checked in, in turn.
const MODES: [&str; 3] = ["strict", "mild", "weak"];

/// Shortest and longest window, in lines.
const WINDOW: (usize, usize) = (10, 60);

/// Differences listed in the report at most.
const LISTED: usize = 5;

/// How much of everything to do.
pub(crate) struct Counts {
    /// Snippets sampled.
    pub(crate) samples: usize,
    /// The seed of the samples.
    pub(crate) seed: u64,
    /// Timed checks at one connection.
    pub(crate) latency: usize,
    /// Untimed checks before them.
    pub(crate) warmup: usize,
    /// The run at 16 connections.
    pub(crate) load: Duration,
}

/// One snippet cut from a repository's file.
pub(crate) struct Sample {
    pub(crate) repository: String,
    pub(crate) rel: String,
    /// Its first line in the file, 1-based.
    pub(crate) line: usize,
    pub(crate) lines: usize,
    pub(crate) format: String,
    pub(crate) mode: &'static str,
    pub(crate) code: String,
}

impl Sample {
    /// The body of its `POST /api/check`.
    pub(crate) fn body(&self) -> String {
        json!({"code": self.code, "format": self.format, "mode": self.mode}).to_string()
    }

    /// `repository/rel:line+lines (format, mode)`.
    fn describe(&self) -> String {
        format!(
            "{}/{}:{}+{} ({}, {})",
            self.repository, self.rel, self.line, self.lines, self.format, self.mode
        )
    }
}

/// splitmix64: a small generator, the same sequence for the same seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The snippets: the repositories in turn, in each a file of at least
/// [`WINDOW`]`.0` lines and a window of it.
pub(crate) fn sample(
    repositories: &[Repository],
    registry: &Registry,
    counts: &Counts,
) -> Result<Vec<Sample>, String> {
    let mut files = Vec::new();
    for repository in repositories {
        let mut sources = scanned_sources(&repository.dir, registry)?;
        sources.retain(|s| s.text.lines().count() >= WINDOW.0);
        sources.sort_by(|a, b| a.rel.cmp(&b.rel));
        files.push((repository, sources));
    }
    let mut rng = Rng(counts.seed);
    let mut samples = Vec::new();
    for i in 0..counts.samples {
        let (repository, sources) = &files[i % files.len()];
        if sources.is_empty() {
            continue;
        }
        let source = &sources[rng.below(sources.len())];
        let lines: Vec<&str> = source.text.split_inclusive('\n').collect();
        let longest = WINDOW.1.min(lines.len());
        let length = WINDOW.0 + rng.below(longest - WINDOW.0 + 1);
        let start = rng.below(lines.len() - length + 1);
        samples.push(Sample {
            repository: repository.name.clone(),
            rel: source.rel.clone(),
            line: start + 1,
            lines: length,
            format: registry.get(source.format).name.clone(),
            mode: MODES[i % MODES.len()],
            code: lines[start..start + length].concat(),
        });
    }
    Ok(samples)
}

/// A server and what its scan said.
pub(crate) struct Started {
    pub(crate) server: Server,
    /// Files its scan indexed.
    pub(crate) files: u64,
    /// Seconds from spawn to its `scanned` line.
    pub(crate) seconds: f64,
}

/// Starts `dupcheck DIR FLAGS --no-cache --no-watch` and waits for its
/// scan (and the clone detection after it, so that it no longer shares
/// the cores).
pub(crate) fn start(env: &crate::env::Env, dir: &Path, flags: &[&str]) -> Result<Started, String> {
    let mut all = vec!["--no-cache", "--no-watch"];
    all.extend_from_slice(flags);
    let server = Server::dupcheck(env, dir, &all)?;
    let (at, line) = server.summary(Duration::from_secs(1800))?;
    let files = parse_summary(&line)
        .ok_or_else(|| format!("cannot read {line:?}"))?
        .files;
    Ok(Started {
        seconds: at.duration_since(server.spawned).as_secs_f64(),
        server,
        files,
    })
}

/// What one check's duplications must agree on, one string each, sorted.
fn comparable(answer: &Value) -> Result<Vec<String>, String> {
    let list = answer["duplications"]
        .as_array()
        .ok_or_else(|| format!("no duplications in {}", clip(&answer.to_string())))?;
    let mut out: Vec<String> = list
        .iter()
        .map(|d| {
            let at = &d["codebaseLocation"];
            let file = match at["repository"].as_str() {
                Some(repository) => format!("{repository}/{}", at["file"].as_str().unwrap_or("")),
                None => at["file"].as_str().unwrap_or("").to_owned(),
            };
            let snippet = &d["snippetLocation"];
            json!({
                "file": file,
                "lines": [at["startLine"], at["endLine"]],
                "columns": [at["startColumn"], at["endColumn"]],
                "snippet": [snippet["startLine"], snippet["startColumn"],
                            snippet["endLine"], snippet["endColumn"]],
                "tokens": d["tokens"],
                "similarity": d["similarity"],
                "fragment": at["fragment"],
            })
            .to_string()
        })
        .collect();
    out.sort();
    Ok(out)
}

/// At most 300 characters of `text`.
fn clip(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// How the two servers' answers compared.
#[derive(Default)]
pub(crate) struct Comparison {
    /// Checks compared.
    pub(crate) total: usize,
    /// Checks whose duplications agree.
    pub(crate) identical: usize,
    /// Of them, checks with at least one duplication.
    pub(crate) identical_found: usize,
    /// Duplications over every check, local and through the store.
    pub(crate) local_duplications: usize,
    pub(crate) store_duplications: usize,
    /// Of (b)'s duplications, those in a repository other than the
    /// snippet's own.
    pub(crate) elsewhere: usize,
    /// Checks whose `statistics` differ.
    pub(crate) statistics_differ: usize,
    /// The first differences.
    pub(crate) differences: Vec<Value>,
    /// The samples (indexes) that found a duplication through the store.
    pub(crate) found: Vec<usize>,
    /// The slowest checks through the store in this pass (one each, on
    /// the first use of the candidates' pages): milliseconds, the sample
    /// (its index and itself), and the local server's milliseconds for it.
    pub(crate) slowest: Vec<(f64, usize, String, f64)>,
}

impl Comparison {
    /// The figures for the JSON report.
    pub(crate) fn json(&self) -> Value {
        json!({
            "checks": self.total, "identical": self.identical,
            "identicalWithDuplications": self.identical_found,
            "localDuplications": self.local_duplications,
            "storeDuplications": self.store_duplications,
            "storeDuplicationsInOtherRepositories": self.elsewhere,
            "statisticsDiffer": self.statistics_differ,
            "firstDifferences": self.differences,
            "slowestThroughTheStore": self.slowest.iter().map(|(ms, _, sample, local)| {
                json!({"ms": ms, "sample": sample, "localMs": local})
            }).collect::<Vec<_>>(),
        })
    }
}

/// One check of `body` on `conn`: its JSON answer.
fn check(conn: &mut Conn, port: u16, body: &str) -> Result<Value, String> {
    let response = conn
        .exchange(&request("POST", "/api/check", port, body))
        .map_err(|e| format!("check failed: {e}"))?;
    let value: Value = serde_json::from_slice(&response.body)
        .map_err(|e| format!("check answered {} with no JSON: {e}", response.status))?;
    match response.status {
        200 => Ok(value),
        status => Err(format!(
            "check answered {status}: {}",
            clip(&value.to_string())
        )),
    }
}

/// Sends every sample to both servers and compares their answers.
pub(crate) fn compare(local: u16, store: u16, samples: &[Sample]) -> Result<Comparison, String> {
    let mut a = Conn::open(local).map_err(|e| e.to_string())?;
    let mut b = Conn::open(store).map_err(|e| e.to_string())?;
    let mut out = Comparison::default();
    for (i, sample) in samples.iter().enumerate() {
        let body = sample.body();
        let started = Instant::now();
        let want = check(&mut a, local, &body)?;
        let local_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let got = check(&mut b, store, &body)?;
        let store_ms = started.elapsed().as_secs_f64() * 1e3;
        out.slowest.push((store_ms, i, sample.describe(), local_ms));
        out.slowest.sort_by(|x, y| y.0.total_cmp(&x.0));
        out.slowest.truncate(LISTED);
        let (want_list, got_list) = (comparable(&want)?, comparable(&got)?);
        out.total += 1;
        out.local_duplications += want_list.len();
        out.store_duplications += got_list.len();
        if !got_list.is_empty() {
            out.found.push(i);
        }
        let own = format!("\"file\":\"{}/", sample.repository);
        out.elsewhere += got_list.iter().filter(|d| !d.contains(&own)).count();
        out.statistics_differ += usize::from(want["statistics"] != got["statistics"]);
        let store_ok = got["store"] == json!({"status": "ok"});
        if want_list == got_list && store_ok {
            out.identical += 1;
            out.identical_found += usize::from(!want_list.is_empty());
            continue;
        }
        if out.differences.len() < LISTED {
            let only = |x: &[String], y: &[String]| -> Vec<Value> {
                x.iter()
                    .filter(|d| !y.contains(d))
                    .take(3)
                    .map(|d| serde_json::from_str(d).unwrap_or(Value::Null))
                    .collect()
            };
            out.differences.push(json!({
                "sample": sample.describe(),
                "store": got["store"],
                "localCount": want_list.len(), "storeCount": got_list.len(),
                "onlyLocal": only(&want_list, &got_list),
                "onlyStore": only(&got_list, &want_list),
                "localStatistics": want["statistics"], "storeStatistics": got["statistics"],
            }));
        }
    }
    Ok(out)
}

/// The check requests of every sample, for `port`.
pub(crate) fn requests(port: u16, samples: &[Sample]) -> Vec<Vec<u8>> {
    samples
        .iter()
        .map(|s| request("POST", "/api/check", port, &s.body()))
        .collect()
}

/// One statement's figures in `pg_stat_statements`.
pub(crate) struct Statement {
    pub(crate) calls: u64,
    pub(crate) total_ms: f64,
    pub(crate) mean_ms: f64,
    pub(crate) rows: u64,
    pub(crate) blocks_hit: u64,
    pub(crate) blocks_read: u64,
    pub(crate) query: String,
}

impl Statement {
    fn json(&self) -> Value {
        json!({
            "calls": self.calls, "totalMs": self.total_ms, "meanMs": self.mean_ms,
            "rows": self.rows, "sharedBlocksHit": self.blocks_hit,
            "sharedBlocksRead": self.blocks_read, "query": self.query,
        })
    }
}

/// The store's statements since the last reset, most time first (the
/// readings of this benchmark left out).
fn statements(pg: &Postgres) -> Result<Vec<Statement>, String> {
    let text = pg.psql(
        "SELECT calls, total_exec_time, mean_exec_time, rows, shared_blks_hit, \
         shared_blks_read, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 10",
    )?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.splitn(7, '|').collect();
            let bad = || format!("pg_stat_statements row {line:?}");
            let int = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).ok_or_else(bad);
            let real = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).ok_or_else(bad);
            Ok(Statement {
                calls: int(0)?,
                total_ms: real(1)?,
                mean_ms: real(2)?,
                rows: int(3)?,
                blocks_hit: int(4)?,
                blocks_read: int(5)?,
                query: f.get(6).ok_or_else(bad)?.to_string(),
            })
        })
        .collect()
}

/// The run at one connection through the store, with what it cost the
/// database.
pub(crate) struct Counted {
    pub(crate) latency: Latency,
    /// Checks sent (the untimed ones too).
    pub(crate) sent: usize,
    /// Committed transactions of the store's database meanwhile.
    pub(crate) commits: u64,
    /// Seconds waited for the counter to settle after the run.
    pub(crate) settle_seconds: f64,
    /// The statements the server ran meanwhile.
    pub(crate) statements: Vec<Statement>,
    /// The CPU the checks cost.
    pub(crate) cpu: Cpu,
}

impl Counted {
    /// Statements per check, from the committed transactions.
    pub(crate) fn per_check(&self) -> f64 {
        self.commits as f64 / self.sent.max(1) as f64
    }

    /// Statements per check, from `pg_stat_statements`' calls.
    pub(crate) fn calls_per_check(&self) -> f64 {
        let calls: u64 = self.statements.iter().map(|s| s.calls).sum();
        calls as f64 / self.sent.max(1) as f64
    }

    pub(crate) fn json(&self) -> Value {
        json!({
            "latency": self.latency.json(), "checksSent": self.sent,
            "xactCommitDelta": self.commits, "statementsPerCheck": self.per_check(),
            "pgStatStatementsCallsPerCheck": self.calls_per_check(),
            "settleSeconds": self.settle_seconds, "cpu": self.cpu.json(),
            "statements": self.statements.iter().map(Statement::json).collect::<Vec<_>>(),
        })
    }
}

/// Latency at one connection of the server through the store, counting
/// the database's commits and statements meanwhile.
pub(crate) fn counted_latency(
    pg: &Postgres,
    port: u16,
    pid: u32,
    samples: &[Sample],
    counts: &Counts,
) -> Result<Counted, String> {
    let requests = requests(port, samples);
    // The reset is a transaction of the store's database: it and earlier
    // work reach the counter before the first reading, and the listing of
    // the statements is read after the last.
    pg.psql("SELECT pg_stat_statements_reset()")?;
    let before = settled(pg, Duration::from_secs(30))?.0;
    let sent = counts.warmup + counts.latency;
    let (latency, cpu) = cpu_during(
        pid,
        pg,
        || latency(port, &requests, counts.warmup, counts.latency),
        |_| sent,
    );
    let latency = latency?;
    let (after, settle_seconds) = settled(pg, Duration::from_secs(30))?;
    let statements = statements(pg)?;
    Ok(Counted {
        latency,
        sent,
        commits: after.saturating_sub(before),
        settle_seconds,
        statements,
        cpu,
    })
}

/// The store database's commit counter once it has not moved for 11 s
/// (longer than a session waits to flush its counts), or after `limit`;
/// with the seconds waited.
fn settled(pg: &Postgres, limit: Duration) -> Result<(u64, f64), String> {
    let started = Instant::now();
    let mut last = pg.commits()?;
    let mut since = Instant::now();
    while started.elapsed() < limit {
        thread::sleep(Duration::from_millis(500));
        let now = pg.commits()?;
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= Duration::from_secs(11) {
            break;
        }
    }
    Ok((last, started.elapsed().as_secs_f64()))
}

/// Checks per second at 16 connections on `port`.
pub(crate) fn load(port: u16, samples: &[Sample], counts: &Counts) -> Throughput {
    throughput(port, &requests(port, samples), 16, counts.load, u64::MAX)
}

/// CPU seconds a run cost the server under test and PostgreSQL, per
/// check answered.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cpu {
    /// The dupcheck server's milliseconds of CPU per check.
    pub(crate) server_ms: f64,
    /// PostgreSQL's (every process of the cluster).
    pub(crate) postgres_ms: f64,
}

impl Cpu {
    pub(crate) fn json(&self) -> Value {
        json!({"serverCpuMsPerCheck": self.server_ms, "postgresCpuMsPerCheck": self.postgres_ms})
    }
}

/// Runs `f`, which answers `checks` checks, and what the CPU they cost.
pub(crate) fn cpu_during<T>(
    server: u32,
    pg: &Postgres,
    f: impl FnOnce() -> T,
    checks: impl FnOnce(&T) -> usize,
) -> (T, Cpu) {
    let cpu = || (proc_cpu_seconds(server).unwrap_or(0.0), pg.cpu_seconds());
    let before = cpu();
    let value = f();
    let after = cpu();
    let n = checks(&value).max(1) as f64;
    let cost = Cpu {
        server_ms: (after.0 - before.0) * 1e3 / n,
        postgres_ms: (after.1 - before.1) * 1e3 / n,
    };
    (value, cost)
}

/// Samples per repository, for the report.
pub(crate) fn per_repository(samples: &[Sample]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for s in samples {
        *counts.entry(s.repository.clone()).or_default() += 1;
    }
    counts
}

/// Progress: a line on stderr.
pub(crate) fn say(message: &str) {
    progress(&format!("store: {message}"));
}
