//! What a scan shows while it runs and says when done: the progress line on
//! a terminal, the `scanned` line (checks are answered from then on) and
//! the clones line once detection ends.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::stats::ProjectStats;
use crate::project::snapshot::Snapshot;

/// How a scan shows progress: on a terminal, one line through every phase
/// (walking, files, indexing, and the caller's clone detection), cleared
/// when [`Progress::finish`] says how long it all took; elsewhere nothing.
pub struct Progress {
    bar: ProgressBar,
    started: Instant,
}

impl Progress {
    /// A progress line on stderr if it is a terminal, counting time from
    /// `started` (the process's start, for the summary line's seconds).
    pub(crate) fn console(started: Instant) -> Progress {
        let bar = if std::io::stderr().is_terminal() {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::hidden()
        };
        Progress { bar, started }
    }

    /// One more file found by the walk.
    pub(crate) fn found(&self) {
        self.bar.inc_length(1);
    }

    /// One more file read and tokenized (or reused, or skipped).
    pub(crate) fn loaded(&self) {
        self.bar.inc(1);
    }

    /// No progress shown.
    pub fn quiet() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            started: Instant::now(),
        }
    }

    /// A phase without a count: a spinner and `what`.
    pub(crate) fn phase(&self, what: &'static str) {
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            self.bar.set_style(style);
        }
        self.bar.set_message(what);
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }

    /// The phase that walks, reads and tokenizes the files, counted as the
    /// walk finds them.
    pub(crate) fn files(&self) {
        self.bar.disable_steady_tick();
        if let Ok(style) =
            ProgressStyle::with_template("scanning {bar:40} {pos}/{len} files ({per_sec}, {eta})")
        {
            self.bar.set_style(style);
        }
        self.bar.set_length(0);
        self.bar.set_position(0);
    }

    /// The wall time since `started`.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Writes `line` to stderr, above the progress line if one shows.
    pub(crate) fn print(&self, line: &str) {
        self.bar.suspend(|| crate::stderr_line(line));
    }

    /// Clears the line; the wall time since `started`.
    pub(crate) fn finish(&self) -> Duration {
        self.bar.finish_and_clear();
        self.started.elapsed()
    }
}

/// The line that says a scan is done and its index answers checks: what
/// it indexed in `seconds` from the start, and what it skipped.
pub(crate) fn scanned_line(s: &Snapshot, seconds: Duration) -> String {
    let (lines, tokens) = s.size();
    let files = s.index.files.len();
    let mut line = format!(
        "dupcheck: scanned {files} files, {lines} lines, {tokens} tokens in {:.2} s ({} parsed, {} reused)",
        seconds.as_secs_f64(),
        s.parsed,
        files - s.parsed,
    );
    if s.skipped.total() > 0 {
        let parts: Vec<String> = s
            .skipped
            .0
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect();
        line.push_str(&format!("; skipped {}", parts.join(", ")));
    }
    line
}

/// What a clones line ends with when the list was the last run's, kept in
/// the cache, not detected again.
pub(crate) const KEPT: &str = " (the last run's, kept in the cache)";

/// The line of the whole project's clones, detected in `seconds` once the
/// scan was done, or `kept` from the last run.
pub(crate) fn clones_line(stats: &ProjectStats, seconds: Duration, kept: bool) -> String {
    let total = &stats.total;
    format!(
        "dupcheck: {} clone{}, {}% duplicated lines, detected in {:.2} s{}",
        total.clones,
        if total.clones == 1 { "" } else { "s" },
        total.percentage,
        seconds.as_secs_f64(),
        if kept { KEPT } else { "" },
    )
}

/// The memory breakdown of `snapshot` (for `DUPCHECK_LOG=dupcheck=debug`
/// and the scale benchmark): megabytes and bytes per line of each part.
pub(crate) fn footprint_line(snapshot: &Snapshot) -> String {
    let (lines, _) = snapshot.size();
    let per_line = |bytes: u64| bytes as f64 / lines.max(1) as f64;
    let footprint = snapshot.index.footprint();
    let clones = snapshot.clone_list_bytes();
    let parts = footprint
        .parts()
        .into_iter()
        .chain([("clone list", clones)]);
    let described: Vec<String> = parts
        .map(|(name, bytes)| format!("{name} {} MB ({:.1} B/line)", bytes >> 20, per_line(bytes)))
        .collect();
    let total = footprint.total() + clones;
    format!(
        "memory: {} MB ({:.1} B/line): {}",
        total >> 20,
        per_line(total),
        described.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_from_the_start_it_is_given() {
        let started = Instant::now() - Duration::from_secs(5);
        let progress = Progress::console(started);
        progress.files();
        progress.phase("detecting clones");
        assert!(progress.finish() >= Duration::from_secs(5));
    }
}
