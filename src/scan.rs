//! Scanning: builds a snapshot of DIR and swaps it in whole.
//!
//! In: the [`Config`]. Out: a [`Snapshot`] (index, statistics, skip counts)
//! published through the [`Scanner`], which checks read without waiting.
//!
//! Invariants: files are read and tokenized in parallel on all cores; a scan
//! that fails or panics leaves the previous snapshot serving; rescans asked
//! for while one runs join it instead of starting another; readers only ever
//! see a complete snapshot.

use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use tokio::sync::watch;

use crate::config::Config;
use crate::fingerprint::Winnow;
use crate::grammar::Registry;
use crate::index::{Index, SourceFile};
use crate::matching::project_clones;
use crate::stats::ProjectStats;
use crate::walk::{self, SkipCounts, SkipReason};

/// Everything one scan produced; immutable once published.
#[derive(Debug)]
pub struct Snapshot {
    /// Files and fingerprints.
    pub index: Index,
    /// Whole-project statistics.
    pub stats: ProjectStats,
    /// Files left out, by reason.
    pub skipped: SkipCounts,
    /// When the scan finished.
    pub finished: SystemTime,
    /// How long it took.
    pub duration: Duration,
}

/// Why a scan failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ScanError {
    /// The working directory could not be walked.
    #[error("{0}")]
    Walk(String),
    /// A bug: the scan panicked (details are in the log).
    #[error("the scan failed unexpectedly; see the server log")]
    Panicked,
}

/// How a scan reports progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A progress bar on a terminal, or a summary line on stderr.
    Console,
    /// Only log lines.
    Quiet,
}

/// Scans DIR once: walk, read and tokenize in parallel, index, detect.
pub fn scan(
    config: &Config,
    registry: &Registry,
    progress: Progress,
) -> Result<Snapshot, ScanError> {
    let started = Instant::now();
    let (candidates, mut skipped) =
        walk::candidates(config, registry).map_err(|e| ScanError::Walk(e.to_string()))?;
    let bar = if progress == Progress::Console && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(candidates.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("scanning {bar:40} {pos}/{len} files ({per_sec}, {eta})")
        {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let results: Vec<Result<SourceFile, SkipReason>> = candidates
        .par_iter()
        .map(|c| {
            let format = registry.get(c.format);
            let text =
                walk::read(&c.abs, config.max_size, config.max_lines).inspect_err(|reason| {
                    tracing::debug!("skipped {}: {reason}", c.rel);
                });
            bar.inc(1);
            let path = if config.absolute {
                config.dir.join(&c.rel).to_string_lossy().into_owned()
            } else {
                c.rel.clone()
            };
            Ok(SourceFile::new(
                path,
                c.rel.clone(),
                format,
                text?,
                config.mode,
            ))
        })
        .collect();
    bar.finish_and_clear();
    let mut files = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Ok(file) => files.push(file),
            Err(reason) => skipped.add(reason),
        }
    }
    let winnow = Winnow::for_min_tokens(config.thresholds.min_tokens as usize);
    let index = Index::build(files, registry, winnow);
    let (clones, capped) = project_clones(&index, config.thresholds, config.skip_local);
    let finished = SystemTime::now();
    let stats = ProjectStats::compute(
        &index,
        &clones,
        registry,
        capped,
        crate::time::iso8601(finished),
    );
    let snapshot = Snapshot {
        index,
        stats,
        skipped,
        finished,
        duration: started.elapsed(),
    };
    if progress == Progress::Console {
        eprintln!("{}", summary(&snapshot));
    } else {
        tracing::info!("{}", summary(&snapshot));
    }
    Ok(snapshot)
}

/// The one-line summary of a scan.
pub fn summary(s: &Snapshot) -> String {
    let total = &s.stats.total;
    let mut line = format!(
        "dupcheck: scanned {} files, {} lines, {} tokens in {:.2} s: {} clones, {}% duplicated lines",
        total.sources,
        total.lines,
        total.tokens,
        s.duration.as_secs_f64(),
        total.clones,
        serde_json::to_string(&total.percentage).unwrap_or_default(),
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

type Outcome = Result<Arc<Snapshot>, ScanError>;

/// Owns the current snapshot and runs rescans, one at a time.
pub struct Scanner {
    config: Arc<Config>,
    registry: Arc<Registry>,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// The running scan, if any: waiters subscribe to its outcome.
    running: Mutex<Option<watch::Receiver<Option<Outcome>>>>,
    scans: std::sync::atomic::AtomicU64,
}

impl Scanner {
    /// A scanner with no snapshot yet.
    pub fn new(config: Arc<Config>, registry: Arc<Registry>) -> Arc<Scanner> {
        Arc::new(Scanner {
            config,
            registry,
            current: RwLock::new(None),
            running: Mutex::new(None),
            scans: Default::default(),
        })
    }

    /// The configuration scans use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The format registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The latest complete snapshot, `None` before the first scan ends.
    pub fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether a scan is running now.
    pub fn is_scanning(&self) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Runs a scan, or joins the one running, and waits for its outcome.
    pub async fn rescan(self: &Arc<Self>) -> Outcome {
        let mut outcome = self.start();
        let result = match outcome.wait_for(Option::is_some).await {
            Ok(value) => value.clone().unwrap_or(Err(ScanError::Panicked)),
            Err(_) => Err(ScanError::Panicked),
        };
        result
    }

    /// Starts a scan unless one runs; returns the receiver of its outcome.
    fn start(self: &Arc<Self>) -> watch::Receiver<Option<Outcome>> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rx) = running.as_ref() {
            return rx.clone();
        }
        let (tx, rx) = watch::channel(None);
        *running = Some(rx.clone());
        let this = Arc::clone(self);
        let first = this
            .scans
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            == 0;
        tokio::task::spawn_blocking(move || {
            let progress = if first {
                Progress::Console
            } else {
                Progress::Quiet
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                scan(&this.config, &this.registry, progress)
            }))
            .unwrap_or_else(|panic| {
                tracing::error!("scan panicked: {}", panic_message(&*panic));
                Err(ScanError::Panicked)
            })
            .map(Arc::new);
            match &outcome {
                Ok(snapshot) => {
                    *this.current.write().unwrap_or_else(|e| e.into_inner()) =
                        Some(Arc::clone(snapshot))
                }
                Err(err) => tracing::error!("scan failed, the previous index keeps serving: {err}"),
            }
            *this.running.lock().unwrap_or_else(|e| e.into_inner()) = None;
            // Nobody waiting is fine: the snapshot is published already.
            let _ = tx.send(Some(outcome));
        });
        rx
    }
}

/// The text of a panic payload, for the log.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
