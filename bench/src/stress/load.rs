//! Scenario `load`: 64 client threads, each on its own keep-alive
//! connection, send a mix of `/api/check` (20 to 40 lines of JavaScript or
//! Python cut from the fixture) and `GET /api/health` for the load time.
//!
//! Every answer must be a 200 JSON of the right shape: an I/O error, any
//! other status (a 503 `Busy` included: 64 connections are far below the
//! server's queue of 256 waiting checks, so it must never refuse them) or a
//! body that is not JSON is a failure. Meanwhile a probe on its own
//! connection times `GET /api/health` every 50 ms (p99 target 20 ms; the
//! row fails only over 200 ms) and the server's RSS is sampled every second
//! (the row fails when the end is over 1.5 times the start plus 30 MB: a
//! leak).

use std::fmt::Display;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fixture::{self, Lcg};
use crate::http::{self, Conn, Response};
use crate::report::{bytes, Latencies, Row, Tally};
use crate::server::{Server, READY_LIMIT};

/// Client threads, one keep-alive connection each.
const CLIENTS: usize = 64;
/// Share of checks among the clients' requests, in percent.
const CHECK_PERCENT: usize = 75;
/// Bound on the requests of one client, whatever the time.
const MAX_REQUESTS_PER_CLIENT: usize = 2_000_000;
/// Time between two health probes.
const PROBE_EVERY: Duration = Duration::from_millis(50);
/// The health latency the server aims at (p99), reported.
const HEALTH_TARGET: Duration = Duration::from_millis(20);
/// The health latency (p99) over which the row fails.
const HEALTH_LIMIT: Duration = Duration::from_millis(200);

/// Runs the scenario for `seconds`.
pub fn run(seconds: u64) -> Row {
    let mut row = Row::new("load");
    let dir = fixture::project_copy();
    add_extra_files(dir.path());
    let Some(server) = Server::start_ready("load", dir.path(), &[], READY_LIMIT, &mut row) else {
        return row;
    };
    let bodies: Vec<String> = snippets()
        .into_iter()
        .map(|(format, code)| json!({"code": code, "format": format}).to_string())
        .collect();
    let port = server.port;
    let start_memory = server.memory();
    let mut rss_samples = Vec::new();
    let stop = AtomicBool::new(false);
    let load_time = Duration::from_secs(seconds);
    let started = Instant::now();
    let (clients, (probe, health)) = thread::scope(|scope| {
        let bodies = &bodies;
        let stop = &stop;
        let clients: Vec<_> = (0..CLIENTS)
            .map(|id| scope.spawn(move || client(port, id, bodies, stop)))
            .collect();
        let probe = scope.spawn(move || probe_health(port, stop, load_time * 2));
        // Samples memory every second until the load time is over.
        while started.elapsed() < load_time {
            thread::sleep(Duration::from_secs(1).min(load_time.saturating_sub(started.elapsed())));
            if let Some(memory) = server.memory() {
                rss_samples.push(memory.rss_kb);
            }
        }
        stop.store(true, Ordering::SeqCst);
        let clients: Vec<Tally> = clients
            .into_iter()
            .map(|c| c.join().expect("a load client panicked"))
            .collect();
        (clients, probe.join().expect("the health probe panicked"))
    });
    let elapsed = started.elapsed();
    let end_memory = server.memory();
    let mut sent = 0;
    for tally in clients {
        sent += tally.requests;
        row.absorb(tally);
    }
    row.absorb(probe);
    row.figure(format!(
        "{:.0} req/s",
        sent as f64 / elapsed.as_secs_f64().max(0.001)
    ));
    row.figure(format!(
        "health {} (target {} ms, {} probes)",
        health.summary(),
        HEALTH_TARGET.as_millis(),
        health.len()
    ));
    check_health_p99(&mut row, &health);
    match (start_memory, end_memory) {
        (Some(start), Some(end)) => {
            let max = rss_samples.iter().copied().max().unwrap_or(end.rss_kb);
            row.figure(format!(
                "RSS {} -> {} (max {}, peak {})",
                bytes(start.rss_kb << 10),
                bytes(end.rss_kb << 10),
                bytes(max.max(end.rss_kb) << 10),
                bytes(end.peak_kb << 10)
            ));
            let limit = start.rss_kb * 3 / 2 + (30 << 10);
            if end.rss_kb > limit {
                row.fail(format!(
                    "RSS grew from {} to {} (limit {}): a leak?",
                    bytes(start.rss_kb << 10),
                    bytes(end.rss_kb << 10),
                    bytes(limit << 10)
                ));
            }
        }
        _ => row.fail("cannot read the server's memory from /proc"),
    }
    server.finish(&mut row);
    row
}

/// A few more files, so that snippets match in several places.
fn add_extra_files(dir: &std::path::Path) {
    let js = fixture::source("src/util/merge.js") + &fixture::source("src/app/renamed.js");
    fixture::write(dir, "src/extra/merge-twice.js", js);
    fixture::write(
        dir,
        "src/extra/deep/merge.ts",
        fixture::source("src/types/merge.ts"),
    );
    let py = fixture::source("py/stats.py") + "\n\n" + &fixture::source("py/report.py");
    fixture::write(dir, "py/extra/summary.py", py);
}

/// Snippets of 20 to 40 lines cut from the fixture's JavaScript and Python
/// at deterministic places: (format, code).
fn snippets() -> Vec<(&'static str, String)> {
    let text = |format: &str| {
        let text: String = fixture::SOURCES
            .iter()
            .filter(|(f, _)| *f == format)
            .map(|(_, rel)| fixture::source(rel))
            .collect();
        // Twice, so that every cut has 40 lines to take from.
        text.repeat(2)
    };
    let mut rng = Lcg::new(8);
    let mut snippets = Vec::new();
    for (format, count) in [("javascript", 16), ("python", 8)] {
        let text = text(format);
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..count {
            let len = rng.between(20, 40).min(lines.len());
            let start = rng.below(lines.len() - len + 1);
            snippets.push((format, lines[start..start + len].join("\n") + "\n"));
        }
    }
    snippets
}

/// One client: requests until `stop`, reconnecting after an error.
fn client(port: u16, id: usize, bodies: &[String], stop: &AtomicBool) -> Tally {
    let mut rng = Lcg::new(id as u64);
    let mut tally = Tally::default();
    let mut conn: Option<Conn> = None;
    for _ in 0..MAX_REQUESTS_PER_CLIENT {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let open = match http::reuse(&mut conn, port, http::TIMEOUT) {
            Ok(open) => open,
            Err(err) => {
                tally.fail(format!("client {id}: cannot connect: {err}"));
                thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        let check = rng.chance(CHECK_PERCENT);
        let (what, answer) = if check {
            (
                "POST /api/check",
                open.post_json("/api/check", rng.pick(bodies).as_str()),
            )
        } else {
            ("GET /api/health", open.get("/api/health"))
        };
        record(
            &mut tally,
            &mut conn,
            answer,
            check,
            format_args!("client {id}: {what}"),
        );
    }
    tally
}

/// Counts a request and judges its answer with [`expect_ok`]; a failure is
/// described after `who`, and an I/O error drops the connection.
fn record(
    tally: &mut Tally,
    conn: &mut Option<Conn>,
    answer: io::Result<Response>,
    check: bool,
    who: impl Display,
) {
    tally.requests += 1;
    match answer {
        Ok(res) => {
            if let Err(why) = expect_ok(&res, check) {
                tally.fail(format!("{who}: {why}"));
            }
        }
        Err(err) => {
            tally.fail(format!("{who}: {err}"));
            *conn = None;
        }
    }
}

/// Checks a 200 JSON answer of a check (`duplications`, `statistics`) or
/// of health (`status` ready).
fn expect_ok(res: &Response, check: bool) -> Result<(), String> {
    if res.status != 200 {
        return Err(res.summary());
    }
    let body = res.json_object()?;
    let shaped = if check {
        body.get("duplications").is_some_and(Value::is_array)
            && body.get("statistics").is_some_and(Value::is_object)
    } else {
        body.get("status").and_then(Value::as_str) == Some("ready")
    };
    if shaped {
        Ok(())
    } else {
        Err(format!("unexpected JSON: {}", res.summary()))
    }
}

/// Times `GET /api/health` every 50 ms on its own keep-alive connection
/// until `stop` (or `limit`); every answer must be a 200 JSON.
pub fn probe_health(port: u16, stop: &AtomicBool, limit: Duration) -> (Tally, Latencies) {
    let mut tally = Tally::default();
    let mut latencies = Latencies::default();
    let mut conn: Option<Conn> = None;
    let started = Instant::now();
    while !stop.load(Ordering::Relaxed) && started.elapsed() < limit {
        let tick = Instant::now();
        match http::reuse(&mut conn, port, http::TIMEOUT) {
            Ok(open) => {
                let answer = open.get("/api/health");
                latencies.push(tick.elapsed());
                record(&mut tally, &mut conn, answer, false, "health probe");
            }
            Err(err) => tally.fail(format!("health probe: cannot connect: {err}")),
        }
        thread::sleep(PROBE_EVERY.saturating_sub(tick.elapsed()));
    }
    (tally, latencies)
}

/// Fails `row` when the p99 of the health latencies is over
/// [`HEALTH_LIMIT`].
pub fn check_health_p99(row: &mut Row, health: &Latencies) {
    let p99 = health.percentile(99.0);
    if p99 > HEALTH_LIMIT {
        row.fail(format!(
            "health p99 {} ms is over {} ms",
            p99.as_millis(),
            HEALTH_LIMIT.as_millis()
        ));
    }
}
