//! Results: the [`Row`] each scenario returns (requests, failures,
//! figures), the [`Tally`] a worker thread keeps, latency percentiles, and
//! the final table.
//!
//! Failure details go to stderr as they are found (the first
//! [`MAX_DETAILS`] of each row; the rest are only counted), so that the
//! table on stdout stays one line per scenario.

use std::fmt::Display;
use std::time::{Duration, Instant};

use crate::server::Stopped;

/// How many failures of one row are described in full.
pub const MAX_DETAILS: usize = 25;

/// Requests and failures counted by one worker, with the first details.
#[derive(Debug, Default)]
pub struct Tally {
    /// Requests sent.
    pub requests: u64,
    /// Requests or checks that failed.
    pub failures: u64,
    /// The first failures, described.
    pub details: Vec<String>,
}

impl Tally {
    /// Counts a failure.
    pub fn fail(&mut self, detail: impl Display) {
        self.failures += 1;
        if self.details.len() < MAX_DETAILS {
            self.details.push(detail.to_string());
        }
    }
}

/// One scenario's line of the table.
#[derive(Debug)]
pub struct Row {
    /// The scenario's name.
    pub scenario: &'static str,
    /// Requests sent.
    pub requests: u64,
    /// Failures found.
    pub failures: u64,
    /// What was measured, in order.
    pub figures: Vec<String>,
    /// The slowest stop of its servers.
    slowest_stop: Option<Duration>,
}

impl Row {
    /// An empty row.
    pub fn new(scenario: &'static str) -> Row {
        Row {
            scenario,
            requests: 0,
            failures: 0,
            figures: Vec::new(),
            slowest_stop: None,
        }
    }

    /// Counts a failure and describes it on stderr.
    pub fn fail(&mut self, detail: impl Display) {
        self.failures += 1;
        if self.failures <= MAX_DETAILS as u64 {
            eprintln!("stress: {}: FAIL: {detail}", self.scenario);
        } else if self.failures == MAX_DETAILS as u64 + 1 {
            eprintln!(
                "stress: {}: more failures are counted, not shown",
                self.scenario
            );
        }
    }

    /// Adds a worker's counts; its details are described.
    pub fn absorb(&mut self, tally: Tally) {
        self.requests += tally.requests;
        let undescribed = tally.failures - tally.details.len() as u64;
        for detail in tally.details {
            self.fail(detail);
        }
        self.failures += undescribed;
    }

    /// Whether `budget` has passed since `started`; if it has, fails the
    /// row, saying it gave up after `done`.
    pub fn over_budget(&mut self, started: Instant, budget: Duration, done: impl Display) -> bool {
        let over = started.elapsed() > budget;
        if over {
            self.fail(format!(
                "gave up after {done}: over the budget of {} s",
                budget.as_secs()
            ));
        }
        over
    }

    /// Adds a figure.
    pub fn figure(&mut self, text: impl Into<String>) {
        self.figures.push(text.into());
    }

    /// Records a server's stop: its time, and its problems as failures.
    pub fn stopped(&mut self, stopped: Stopped) {
        self.slowest_stop = self.slowest_stop.max(Some(stopped.took));
        for problem in stopped.problems {
            self.fail(problem);
        }
    }

    /// Whether nothing failed.
    pub fn passed(&self) -> bool {
        self.failures == 0
    }

    /// Its figures, the slowest stop last.
    fn figures_text(&self) -> String {
        let mut figures = self.figures.clone();
        if let Some(stop) = self.slowest_stop {
            figures.push(format!("stop {}", millis(stop)));
        }
        figures.join("; ")
    }
}

/// Prints the table of `rows`.
pub fn print_table(rows: &[Row]) {
    println!(
        "{:<13} {:>9} {:>9}  {:<6} figures",
        "scenario", "requests", "failures", "result"
    );
    for row in rows {
        println!(
            "{:<13} {:>9} {:>9}  {:<6} {}",
            row.scenario,
            row.requests,
            row.failures,
            if row.passed() { "ok" } else { "FAIL" },
            row.figures_text()
        );
    }
}

/// Latencies, for percentiles.
#[derive(Debug, Default)]
pub struct Latencies(Vec<Duration>);

impl Latencies {
    /// Records one.
    pub fn push(&mut self, latency: Duration) {
        self.0.push(latency);
    }

    /// How many were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The `p`th percentile (nearest rank), zero when empty.
    pub fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        if sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    /// `p50 X ms p99 Y ms`.
    pub fn summary(&self) -> String {
        format!(
            "p50 {} p99 {}",
            millis(self.percentile(50.0)),
            millis(self.percentile(99.0))
        )
    }
}

/// A duration as `0.42 ms`, `12.3 ms` or `1.25 s`.
pub fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// A byte count as `512 B`, `12.3 KB` or `4.5 MB`.
pub fn bytes(n: u64) -> String {
    match n {
        n if n < 1 << 10 => format!("{n} B"),
        n if n < 1 << 20 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1 << 20) as f64),
    }
}
