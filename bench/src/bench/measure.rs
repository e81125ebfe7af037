//! How fast the checks are answered: latency percentiles of checks sent
//! one at a time over one keep-alive connection, and throughput of checks
//! sent over many connections at once (one thread each, started together).

use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::server::{contains, Conn};

/// Longest one latency measurement may take.
const LATENCY_LIMIT: Duration = Duration::from_secs(60);

/// The middle value (the upper one of an even count); sorts `values`.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The value at quantile `q` of sorted values (nearest rank).
pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Latency of a run of checks, one at a time.
pub(crate) struct Latency {
    /// Timed checks answered 200.
    pub(crate) requests: usize,
    /// Median milliseconds.
    pub(crate) p50_ms: f64,
    /// 99th percentile milliseconds.
    pub(crate) p99_ms: f64,
    mean_ms: f64,
    max_ms: f64,
    /// Timed checks not answered 200.
    errors: usize,
    /// Answers that reported at least one duplication.
    pub(crate) with_duplications: usize,
    /// Mean size of an answer's body.
    pub(crate) mean_bytes: f64,
}

impl Latency {
    /// The figures for `target/bench.json`.
    pub(crate) fn json(&self) -> Value {
        json!({
            "requests": self.requests, "p50Ms": self.p50_ms, "p99Ms": self.p99_ms,
            "meanMs": self.mean_ms, "maxMs": self.max_ms, "errors": self.errors,
            "withDuplications": self.with_duplications, "meanResponseBytes": self.mean_bytes,
        })
    }

    /// The figures for a cell of the table: `p50 / p99 ms (n N)`.
    pub(crate) fn cell(&self) -> String {
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
pub(crate) fn latency(
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

/// Checks per second over several connections at once.
pub(crate) struct Throughput {
    /// Connections at once.
    pub(crate) connections: usize,
    /// Checks answered 200.
    pub(crate) checks: u64,
    /// Checks not answered 200, and failed connections.
    errors: u64,
    /// From the start to the last connection's end.
    seconds: f64,
}

impl Throughput {
    /// Checks answered per second.
    pub(crate) fn per_second(&self) -> f64 {
        self.checks as f64 / self.seconds.max(1e-9)
    }

    /// The figures for `target/bench.json`.
    pub(crate) fn json(&self) -> Value {
        json!({
            "connections": self.connections, "checks": self.checks, "errors": self.errors,
            "seconds": self.seconds, "checksPerSecond": self.per_second(),
        })
    }

    /// The figures for a cell of the table: `N/s (checks in S s)`.
    pub(crate) fn cell(&self) -> String {
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
pub(crate) fn throughput(
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
