//! Scanning: builds snapshots of DIR and swaps them in whole.
//!
//! In: the [`Config`], the previous snapshot and, on start, the cache. Out: a
//! [`Snapshot`] (index, skip counts, statistics on demand) published through
//! the [`Scanner`], which checks read without waiting.
//!
//! A full scan (start, `recheck`) reads every file and reuses the tokens of
//! any whose content hash is unchanged (from the previous snapshot or the
//! cache); an update (the watcher saw changes) also trusts size and mtime for
//! files no event named. Both walk with the same filters, so statistics after
//! updates equal those of a fresh scan.
//!
//! Invariants: files are read and tokenized in parallel on all cores; one
//! snapshot is built at a time; a scan that fails or panics leaves the
//! previous snapshot serving; rescans asked for while one runs join it;
//! readers only ever see a complete snapshot.

use std::collections::BinaryHeap;
use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use tokio::sync::watch;

use crate::engine::fingerprint::Winnow;
use crate::engine::grammar::{Format, Registry};
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::index::{FileMeta, Index, SourceFile};
use crate::engine::matching::{project_clones, Clone, Thresholds};
use crate::engine::parse::ParseError;
use crate::engine::stats::ProjectStats;
use crate::engine::tokens::{opening_text, Mode, Token};
use crate::project::cache::{self, CachedFile};
use crate::project::config::Config;
use crate::project::walk::{self, Candidate, SkipCounts, SkipReason};

/// Everything one scan produced; immutable once published.
#[derive(Debug)]
pub struct Snapshot {
    /// Files and fingerprints.
    pub index: Index,
    /// Files left out, by reason.
    pub skipped: SkipCounts,
    /// When the scan finished.
    pub finished: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// Files parsed (not reused) by this scan.
    pub parsed: usize,
    /// The folders the scan's walk entered, DIR first, then sorted.
    pub folders: Vec<PathBuf>,
    /// Whole-project clones and capped lookups, detected on first use,
    /// per set of settings asking.
    clones: PerSettings<(Vec<Clone>, usize)>,
    /// Whole-project statistics, computed on first use, likewise.
    stats: PerSettings<ProjectStats>,
}

/// What a snapshot's clones (and so its statistics) depend on besides its
/// files: the settings of the configuration that asks.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CloneSettings {
    mode: Mode,
    thresholds: Thresholds,
    skip_local: bool,
    similarity: Option<f64>,
}

impl CloneSettings {
    fn of(config: &Config) -> CloneSettings {
        CloneSettings {
            mode: config.mode,
            thresholds: config.thresholds,
            skip_local: config.skip_local,
            similarity: config.near_miss.then_some(config.similarity),
        }
    }
}

/// Values computed once per [`CloneSettings`], on first use: a server asks
/// with one configuration, but nothing keeps another (a test, a later
/// command) from reading a snapshot with its own.
#[derive(Debug)]
struct PerSettings<T>(Mutex<Vec<(CloneSettings, Arc<OnceLock<T>>)>>);

impl<T> Default for PerSettings<T> {
    fn default() -> Self {
        PerSettings(Mutex::new(Vec::new()))
    }
}

impl<T> PerSettings<T> {
    /// The value for `settings`, computed by `init` if no one did yet
    /// (callers with the same settings wait for the one computing it).
    fn get_or_init(&self, settings: CloneSettings, init: impl FnOnce() -> T) -> Memo<T> {
        let cell = {
            let mut cells = self.0.lock().unwrap_or_else(|e| e.into_inner());
            match cells.iter().find(|(s, _)| *s == settings) {
                Some((_, cell)) => Arc::clone(cell),
                None => {
                    let cell = Arc::new(OnceLock::new());
                    cells.push((settings, Arc::clone(&cell)));
                    cell
                }
            }
        };
        cell.get_or_init(init);
        Memo { cell }
    }
}

/// A value a snapshot computed once (its clones, its statistics), shared.
#[derive(Debug)]
pub struct Memo<T> {
    cell: Arc<OnceLock<T>>,
}

impl<T> std::ops::Deref for Memo<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.cell
            .get()
            .expect("a memo is handed out only once its value is set")
    }
}

impl Snapshot {
    /// The whole project's clones, sorted, and how many fingerprint lookups
    /// the posting cap skipped (clone detection runs on first call). What
    /// `/api/stats` counts and `dupcheck report` lists (see
    /// [`crate::engine::stats::clone_list`]).
    pub fn clones(&self, config: &Config) -> Memo<(Vec<Clone>, usize)> {
        self.clones.get_or_init(CloneSettings::of(config), || {
            let started = Instant::now();
            let found = project_clones(
                &self.index,
                config.mode,
                config.thresholds,
                config.skip_local,
                config.near_miss.then_some(config.similarity),
            );
            tracing::debug!(
                "clone detection: {} clones in {:?}",
                found.0.len(),
                started.elapsed()
            );
            found
        })
    }

    /// Lines and tokens of the files scanned, as the statistics count them.
    pub fn size(&self) -> (u64, u64) {
        let files = self.index.files.iter();
        files.fold((0, 0), |(lines, tokens), file| {
            (
                lines + u64::from(file.line_count()),
                tokens + file.token_count(),
            )
        })
    }

    /// Whole-project statistics (clone detection runs on first call).
    pub fn stats(&self, config: &Config, registry: &Registry) -> Memo<ProjectStats> {
        self.stats.get_or_init(CloneSettings::of(config), || {
            let clones = self.clones(config);
            let (clones, capped) = &*clones;
            ProjectStats::compute(
                &self.index,
                clones,
                registry,
                *capped,
                crate::project::time::iso8601(self.finished),
            )
        })
    }
}

/// Why a scan failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ScanError {
    /// The working directory could not be walked.
    #[error("{0}")]
    Walk(String),
    /// An update arrived before the first scan finished; the first scan
    /// sees the change itself.
    #[error("no index to update yet")]
    NoIndex,
    /// The server is stopping.
    #[error("the server is stopping")]
    Stopped,
    /// A bug: the scan panicked (details are in the log).
    #[error("the scan failed unexpectedly; see the server log")]
    Panicked,
}

/// What a scan may reuse instead of parsing again.
#[derive(Default)]
pub struct Reuse<'a> {
    /// Files of the previous snapshot, by relative path.
    pub previous: HashMap<&'a str, &'a Arc<SourceFile>>,
    /// Files of the cache, by relative path.
    pub cached: HashMap<String, CachedFile>,
    /// For updates: files whose size and mtime are unchanged and that no
    /// event named are reused without reading. `None` for full scans.
    pub changed: Option<&'a HashSet<PathBuf>>,
}

impl<'a> Reuse<'a> {
    /// Reuse the files of `snapshot`.
    pub fn previous(snapshot: Option<&'a Snapshot>) -> Reuse<'a> {
        let previous = snapshot
            .map(|s| s.index.files.iter().map(|f| (f.rel.as_str(), f)).collect())
            .unwrap_or_default();
        Reuse {
            previous,
            ..Reuse::default()
        }
    }
}

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
    pub fn console(started: Instant) -> Progress {
        let bar = if std::io::stderr().is_terminal() {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::hidden()
        };
        Progress { bar, started }
    }

    /// No progress shown.
    pub fn quiet() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            started: Instant::now(),
        }
    }

    /// A phase without a count: a spinner and `what`.
    pub fn phase(&self, what: &'static str) {
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            self.bar.set_style(style);
        }
        self.bar.set_message(what);
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }

    /// The phase that walks, reads and tokenizes the files, counted as the
    /// walk finds them.
    fn files(&self) {
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
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Writes `line` to stderr, above the progress line if one shows.
    pub fn print(&self, line: &str) {
        self.bar.suspend(|| crate::stderr_line(line));
    }

    /// Clears the line; the wall time since `started`.
    pub fn finish(&self) -> Duration {
        self.bar.finish_and_clear();
        self.started.elapsed()
    }
}

/// What became of one candidate.
enum Outcome {
    Indexed {
        file: Arc<SourceFile>,
        parsed: bool,
    },
    Skipped(SkipReason),
    /// The server is stopping: the scan is abandoned.
    Stopped,
}

/// Scans DIR once: walk, and meanwhile read and tokenize (or reuse) on all
/// cores what it found, biggest first; then index.
pub fn scan(
    config: &Config,
    registry: &Registry,
    reuse: &Reuse<'_>,
    progress: &Progress,
) -> Result<Snapshot, ScanError> {
    Ok(gather(config, registry, reuse, progress)?.index(registry))
}

/// What a scan's walk and workers gathered, to index.
struct Gathered {
    files: Vec<Arc<SourceFile>>,
    skipped: SkipCounts,
    folders: Vec<PathBuf>,
    parsed: usize,
    winnow: Winnow,
    started: Instant,
    walk_time: Duration,
}

impl Gathered {
    /// Whether these are the very files of `snapshot` (shared, none read
    /// again), skipped the same, and the same folders were walked: its
    /// index would answer as `snapshot`'s does.
    fn same_as(&self, snapshot: &Snapshot) -> bool {
        let index = &snapshot.index;
        let shared = |file: &Arc<SourceFile>| {
            let known = index.file_by_rel(&file.rel);
            known.is_some_and(|id| Arc::ptr_eq(file, &index.files[id as usize]))
        };
        self.skipped == snapshot.skipped
            && self.folders == snapshot.folders
            && self.files.len() == index.files.len()
            && self.files.iter().all(shared)
    }

    /// Indexes the files into a snapshot.
    fn index(self, registry: &Registry) -> Snapshot {
        let loaded = self.started.elapsed();
        let index = Index::build(self.files, registry, self.winnow);
        tracing::debug!(
            "scan: walk {:?}, read and tokenize (with the walk) {loaded:?}, index {:?}",
            self.walk_time,
            self.started.elapsed() - loaded
        );
        Snapshot {
            index,
            skipped: self.skipped,
            finished: SystemTime::now(),
            duration: self.started.elapsed(),
            parsed: self.parsed,
            folders: self.folders,
            clones: PerSettings::default(),
            stats: PerSettings::default(),
        }
    }
}

/// The walk, and meanwhile reading and tokenizing (or reusing) on all
/// cores what it found, biggest first.
fn gather(
    config: &Config,
    registry: &Registry,
    reuse: &Reuse<'_>,
    progress: &Progress,
) -> Result<Gathered, ScanError> {
    let started = Instant::now();
    progress.files();
    let winnow = Winnow::for_min_tokens(config.thresholds.min_tokens as usize);
    let pending = Pending::default();
    let (walked, outcomes) = std::thread::scope(|s| {
        let walk = s.spawn(|| {
            let _closed = pending.close_on_drop();
            let walked = walk::walk(config, registry, |c| {
                progress.bar.inc_length(1);
                pending.push(c);
                !crate::engine::parse::stopping()
            });
            (walked, started.elapsed())
        });
        // One worker per core, each taking the biggest file waiting.
        let outcomes: Vec<Outcome> = (0..rayon::current_num_threads())
            .into_par_iter()
            .flat_map_iter(|_| {
                std::iter::from_fn(|| {
                    let c = pending.next()?;
                    if crate::engine::parse::stopping() {
                        return Some(Outcome::Stopped);
                    }
                    let outcome = load(config, registry, reuse, winnow, &c);
                    if let Outcome::Skipped(reason) = &outcome {
                        tracing::debug!("skipped {}: {reason}", c.rel);
                    }
                    progress.bar.inc(1);
                    Some(outcome)
                })
            })
            .collect();
        let walked = walk
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (walked, outcomes)
    });
    let (walked, walk_time) = walked;
    let walk::Walked {
        mut skipped,
        folders,
    } = walked.map_err(|e| ScanError::Walk(e.to_string()))?;
    progress.phase("indexing");
    let mut files = Vec::with_capacity(outcomes.len());
    let mut parsed = 0;
    for outcome in outcomes {
        match outcome {
            Outcome::Indexed { file, parsed: p } => {
                parsed += usize::from(p);
                files.push(file);
            }
            Outcome::Skipped(reason) => skipped.add(reason),
            Outcome::Stopped => return Err(ScanError::Stopped),
        }
    }
    Ok(Gathered {
        files,
        skipped,
        folders,
        parsed,
        winnow,
        started,
        walk_time,
    })
}

/// The files the walk found that no worker took yet, biggest first: the
/// workers start on the first files while the walk goes on, and the
/// biggest still start early, so that the cores finish close together.
#[derive(Default)]
struct Pending {
    state: Mutex<PendingState>,
    changed: Condvar,
}

#[derive(Default)]
struct PendingState {
    waiting: BinaryHeap<BySize>,
    walked: bool,
}

/// A candidate ordered by its size.
struct BySize(Candidate);

impl Ord for BySize {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0.size, &self.0.rel).cmp(&(other.0.size, &other.0.rel))
    }
}

impl PartialOrd for BySize {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for BySize {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for BySize {}

impl Pending {
    fn state(&self) -> std::sync::MutexGuard<'_, PendingState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A file the walk found.
    fn push(&self, c: Candidate) {
        self.state().waiting.push(BySize(c));
        self.changed.notify_one();
    }

    /// The biggest file waiting, once there is one; `None` once the walk
    /// is over and every file was taken.
    fn next(&self) -> Option<Candidate> {
        let mut state = self.state();
        loop {
            if let Some(BySize(c)) = state.waiting.pop() {
                return Some(c);
            }
            if state.walked {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Marks the walk over when dropped, however it ended (a panic too),
    /// so that no worker waits for more.
    fn close_on_drop(&self) -> impl Drop + '_ {
        struct Closed<'a>(&'a Pending);
        impl Drop for Closed<'_> {
            fn drop(&mut self) {
                self.0.state().walked = true;
                self.0.changed.notify_all();
            }
        }
        Closed(self)
    }
}

/// Reads, reuses or tokenizes one candidate.
fn load(
    config: &Config,
    registry: &Registry,
    reuse: &Reuse<'_>,
    winnow: Winnow,
    c: &Candidate,
) -> Outcome {
    let format = registry.get(c.format);
    let path = if config.absolute {
        config.dir.join(&c.rel).to_string_lossy().into_owned()
    } else {
        c.rel.clone()
    };
    let previous = reuse
        .previous
        .get(c.rel.as_str())
        .filter(|f| f.format == c.format && f.path == path);
    if let (Some(prev), Some(changed)) = (previous, reuse.changed) {
        let unchanged = prev.meta.size == c.size && prev.meta.mtime_ns == c.mtime_ns;
        if unchanged && !changed.contains(&c.abs) {
            return Outcome::Indexed {
                file: Arc::clone(prev),
                parsed: false,
            };
        }
    }
    let text = match walk::read_candidate(c, config.max_size, config.max_lines) {
        Ok(text) => text,
        Err(reason) => return Outcome::Skipped(reason),
    };
    if !config.include_generated && walk::minified(&text) {
        return Outcome::Skipped(SkipReason::Generated);
    }
    // The size read may differ from the one the walk saw; the text decides.
    let meta = FileMeta::of(&text, text.len() as u64, c.mtime_ns);
    let same = |m: &FileMeta| m.content_hash == meta.content_hash && m.size == meta.size;
    let known = previous
        .filter(|p| same(&p.meta))
        .map(|p| (&p.tokens, &p.fingerprints))
        .or_else(|| {
            let cached = reuse.cached.get(&c.rel)?;
            (same(&cached.meta) && cached.fits(&text))
                .then_some((&cached.tokens, &cached.fingerprints))
        });
    let file = match known {
        Some((tokens, fingerprints)) => SourceFile::with_tokens(
            path,
            c.rel.clone(),
            format,
            text,
            tokens.clone(),
            fingerprints.clone(),
            meta,
        ),
        None => {
            let file = SourceFile::new(
                path,
                c.rel.clone(),
                format,
                text,
                meta,
                &config.normalization,
                winnow,
            );
            return match file {
                Ok(file) if generated(config, format, &file) => {
                    Outcome::Skipped(SkipReason::Generated)
                }
                Ok(file) => Outcome::Indexed {
                    file: Arc::new(file),
                    parsed: true,
                },
                Err(ParseError::Timeout) => Outcome::Skipped(SkipReason::ParseTimeout),
                Err(ParseError::Memory) => Outcome::Skipped(SkipReason::ParseMemory),
                Err(ParseError::Stopped) => Outcome::Stopped,
            };
        }
    };
    if generated(config, format, &file) {
        return Outcome::Skipped(SkipReason::Generated);
    }
    Outcome::Indexed {
        file: Arc::new(file),
        parsed: false,
    }
}

/// Whether `file` is generated by the comments before its code (never
/// with `--include-generated`).
fn generated(config: &Config, format: &Format, file: &SourceFile) -> bool {
    !config.include_generated && generated_head(format, config, &file.text, &file.tokens)
}

/// Whether a scan would skip `text`, of `format` and tokenized as
/// `tokens`, as generated: minified, or marked so by the comments before
/// its code (never with `--include-generated`). For texts that are not
/// files on disk, such as an editor's open buffers.
pub fn generated_text(config: &Config, format: &Format, text: &str, tokens: &[Token]) -> bool {
    !config.include_generated
        && (walk::minified(text) || generated_head(format, config, text, tokens))
}

/// Whether the comments that open `text` (of `format`, tokenized as
/// `tokens` with the configuration's normalization) mark it generated
/// ([`walk::generated_header`]). The text before the first token holds
/// them, and also the imports before it, whose leaves are no tokens: when
/// it holds a mark, the mark must also lie before the imports (one parse
/// of that text, [`opening_text`]), so that an import of `@generated/api`
/// marks nothing.
pub fn generated_head(format: &Format, config: &Config, text: &str, tokens: &[Token]) -> bool {
    let code = tokens.first().map_or(text.len(), |t| t.start as usize);
    let head = &text[..code];
    walk::generated_header(head)
        && walk::generated_header(opening_text(format, head, &config.normalization))
}

/// The line that says a scan is done and its index answers checks: what
/// it indexed in `seconds` from the start, and what it skipped.
pub fn scanned_line(s: &Snapshot, seconds: Duration) -> String {
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

/// The line of the whole project's clones, detected in `seconds` once the
/// scan was done.
pub fn clones_line(stats: &ProjectStats, seconds: Duration) -> String {
    let total = &stats.total;
    format!(
        "dupcheck: {} clone{}, {}% duplicated lines, detected in {:.2} s",
        total.clones,
        if total.clones == 1 { "" } else { "s" },
        serde_json::to_string(&total.percentage).unwrap_or_default(),
        seconds.as_secs_f64(),
    )
}

type ScanResult = Result<Arc<Snapshot>, ScanError>;

/// Owns the current snapshot, runs rescans one at a time, applies updates.
pub struct Scanner {
    config: Arc<Config>,
    registry: Arc<Registry>,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// The running full scan, if any: waiters subscribe to its outcome.
    running: Mutex<Option<watch::Receiver<Option<ScanResult>>>>,
    /// Held while a snapshot is built, so that builds never interleave.
    building: Mutex<()>,
    /// When the watcher last changed the index.
    last_update: Mutex<Option<SystemTime>>,
    /// Whether the next full scan is the first (it reads the cache and
    /// prints the summary line).
    first: AtomicBool,
    /// Whether the first full scan has ended (published or failed), and
    /// its signal.
    first_ended: Mutex<bool>,
    first_ended_signal: Condvar,
    /// Whether updates happened since the cache was last written.
    cache_dirty: AtomicBool,
    /// Threads of full scans not yet ended (their clone detection and
    /// cache write included), and their signal.
    scan_threads: Mutex<usize>,
    scan_threads_ended: Condvar,
    /// When the scanner was made (at the server's start): the first
    /// summary line counts from here.
    created: Instant,
}

impl Scanner {
    /// A scanner with no snapshot yet.
    pub fn new(config: Arc<Config>, registry: Arc<Registry>) -> Arc<Scanner> {
        Arc::new(Scanner {
            config,
            registry,
            current: RwLock::new(None),
            running: Mutex::new(None),
            building: Mutex::new(()),
            last_update: Mutex::new(None),
            first: AtomicBool::new(true),
            first_ended: Mutex::new(false),
            first_ended_signal: Condvar::new(),
            cache_dirty: AtomicBool::new(false),
            scan_threads: Mutex::new(0),
            scan_threads_ended: Condvar::new(),
            created: Instant::now(),
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

    /// Whether a full scan is running now.
    pub fn is_scanning(&self) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Blocks until the first full scan has ended, published or failed;
    /// then the current snapshot (`None` if it failed).
    pub fn first_scanned(&self) -> Option<Arc<Snapshot>> {
        let ended = self.first_ended.lock().unwrap_or_else(|e| e.into_inner());
        let _ended = self
            .first_ended_signal
            .wait_while(ended, |ended| !*ended)
            .unwrap_or_else(|e| e.into_inner());
        self.snapshot()
    }

    /// When the watcher last applied a change, if ever.
    pub fn last_update(&self) -> Option<SystemTime> {
        *self.last_update.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a full scan, or joins the one running, and waits for its outcome.
    pub async fn rescan(self: &Arc<Self>) -> ScanResult {
        let mut outcome = self.start();
        let result = match outcome.wait_for(Option::is_some).await {
            Ok(value) => value.clone().unwrap_or(Err(ScanError::Panicked)),
            Err(_) => Err(ScanError::Panicked),
        };
        result
    }

    /// Starts a full scan unless one runs, and does not wait for it: its
    /// snapshot is published when it is done (the first scan's lines go to
    /// stderr, the others' to the log). Needs no async runtime, so that
    /// the first scan can start before the server's.
    pub fn start_scan(self: &Arc<Self>) {
        self.start();
    }

    /// Starts a full scan unless one runs, on a thread of its own; returns
    /// the receiver of its outcome (closed without one if no thread could
    /// start).
    fn start(self: &Arc<Self>) -> watch::Receiver<Option<ScanResult>> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rx) = running.as_ref() {
            return rx.clone();
        }
        let (tx, rx) = watch::channel(None);
        let this = Arc::clone(self);
        *self.scan_threads() += 1;
        let spawned = std::thread::Builder::new()
            .name("dupcheck-scan".into())
            .spawn(move || {
                let _ended = this.scan_thread_ends();
                this.run_scan(&tx);
            });
        match spawned {
            Ok(_) => *running = Some(rx.clone()),
            Err(err) => {
                tracing::error!("cannot start a scan: {err}");
                // The thread never ran.
                *self.scan_threads() -= 1;
                if self.first.swap(false, Ordering::SeqCst) {
                    self.end_first();
                }
            }
        }
        rx
    }

    /// A full scan, its lines, and its outcome sent on `tx`.
    fn run_scan(&self, tx: &watch::Sender<Option<ScanResult>>) {
        let first = self.first.swap(false, Ordering::SeqCst);
        let progress = if first {
            Progress::console(self.created)
        } else {
            Progress::quiet()
        };
        let outcome = self.build(|previous| {
            let mut reuse = Reuse::previous(previous.map(|p| &**p));
            if first {
                if let Some(dir) = &self.config.cache_dir {
                    progress.phase("reading the cache");
                    reuse.cached = cache::load(dir, cache::key_of(&self.config));
                }
            }
            scan(&self.config, &self.registry, &reuse, &progress).map(Arc::new)
        });
        if first {
            self.end_first();
        }
        // The first scan's lines go to stderr, the others' to the log.
        let say = |line: String| match first {
            true => progress.print(&line),
            false => tracing::info!("{line}"),
        };
        if let Ok(snapshot) = &outcome {
            // Checks are answered from here on; the statistics wait
            // for whole-project clone detection.
            say(scanned_line(snapshot, progress.elapsed()));
            progress.phase("detecting clones");
            let detecting = Instant::now();
            let stats = snapshot.stats(&self.config, &self.registry);
            say(clones_line(&stats, detecting.elapsed()));
        }
        progress.finish();
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = None;
        // Nobody waiting is fine: the snapshot is published already.
        let _ = tx.send(Some(outcome.clone()));
        if let Ok(snapshot) = outcome {
            if first || snapshot.parsed > 0 {
                self.save_cache(&snapshot);
            }
        }
    }

    fn scan_threads(&self) -> std::sync::MutexGuard<'_, usize> {
        self.scan_threads.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a scan thread ended when dropped, however it ends.
    fn scan_thread_ends(&self) -> impl Drop + '_ {
        struct Ends<'a>(&'a Scanner);
        impl Drop for Ends<'_> {
            fn drop(&mut self) {
                *self.0.scan_threads() -= 1;
                self.0.scan_threads_ended.notify_all();
            }
        }
        Ends(self)
    }

    /// Marks the first scan ended, for those waiting in [`Scanner::first_scanned`].
    fn end_first(&self) {
        *self.first_ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.first_ended_signal.notify_all();
    }

    /// Applies changes seen by the watcher (blocking): a scan that reuses
    /// every file whose size and mtime are unchanged and that `changed`
    /// does not name (with nothing named, it finds what changed on disk
    /// since the current snapshot by size and mtime alone). When that
    /// reuses every file and skips the same, the current snapshot stays,
    /// with its statistics, and is returned. Waits for a running scan;
    /// fails before the first.
    pub fn update(&self, changed: &HashSet<PathBuf>) -> ScanResult {
        let mut updated = false;
        let outcome = self.build(|previous| {
            let previous = previous.ok_or(ScanError::NoIndex)?;
            let mut reuse = Reuse::previous(Some(previous));
            reuse.changed = Some(changed);
            let gathered = gather(&self.config, &self.registry, &reuse, &Progress::quiet())?;
            if gathered.same_as(previous) {
                return Ok(Arc::clone(previous));
            }
            updated = true;
            Ok(Arc::new(gathered.index(&self.registry)))
        });
        if updated {
            *self.last_update.lock().unwrap_or_else(|e| e.into_inner()) = Some(SystemTime::now());
            self.cache_dirty.store(true, Ordering::SeqCst);
        }
        outcome
    }

    /// Builds a snapshot from the current one with `make` (one build at a
    /// time), catching panics, and publishes it on success.
    fn build(&self, make: impl FnOnce(Option<&Arc<Snapshot>>) -> ScanResult) -> ScanResult {
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let previous = self.snapshot();
        let outcome =
            catch_unwind(AssertUnwindSafe(|| make(previous.as_ref()))).unwrap_or_else(|panic| {
                tracing::error!("scan panicked: {}", panic_message(&*panic));
                Err(ScanError::Panicked)
            });
        match &outcome {
            Ok(snapshot) => {
                *self.current.write().unwrap_or_else(|e| e.into_inner()) =
                    Some(Arc::clone(snapshot));
            }
            Err(ScanError::NoIndex | ScanError::Stopped) => {}
            Err(err) => tracing::error!("scan failed, the previous index keeps serving: {err}"),
        }
        outcome
    }

    /// Writes the cache of `snapshot`, if caching is on; failures are logged.
    fn save_cache(&self, snapshot: &Snapshot) {
        let Some(dir) = &self.config.cache_dir else {
            return;
        };
        let started = Instant::now();
        self.cache_dirty.store(false, Ordering::SeqCst);
        match cache::save(dir, cache::key_of(&self.config), &snapshot.index.files) {
            Ok(()) => tracing::debug!(
                "cache written to {} in {:?}",
                dir.display(),
                started.elapsed()
            ),
            Err(err) => tracing::warn!("cannot write the cache in {}: {err}", dir.display()),
        }
    }

    /// On shutdown: lets full scans still running end, for at most
    /// [`LAST_CACHE_WRITE`] (a first scan writes the cache after its clone
    /// detection), then writes the cache if the watcher changed the index
    /// since the last write.
    pub fn flush_cache(&self) {
        drop(
            self.scan_threads_ended
                .wait_timeout_while(self.scan_threads(), LAST_CACHE_WRITE, |running| {
                    *running > 0
                })
                .unwrap_or_else(|e| e.into_inner()),
        );
        if self.cache_dirty.load(Ordering::SeqCst) {
            if let Some(snapshot) = self.snapshot() {
                self.save_cache(&snapshot);
            }
        }
    }
}

/// How long writing the cache may delay an exit: a scan still running,
/// then the write ([`Scanner::flush_cache`]).
pub const LAST_CACHE_WRITE: Duration = Duration::from_millis(500);

/// The text of a panic payload, for the log.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
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

    fn candidate(rel: &str, size: u64) -> Candidate {
        Candidate {
            abs: PathBuf::from(rel),
            rel: rel.to_owned(),
            format: 0,
            size,
            mtime_ns: 0,
        }
    }

    #[test]
    fn workers_take_the_biggest_file_waiting_until_the_walk_is_over() {
        let pending = Pending::default();
        let taken = std::thread::scope(|s| {
            let worker = s.spawn(|| {
                let mut taken = Vec::new();
                while let Some(c) = pending.next() {
                    taken.push(c.rel);
                }
                taken
            });
            {
                let _closed = pending.close_on_drop();
                let mut state = pending.state();
                // Found while the worker waits: it takes the biggest first.
                for (rel, size) in [("small", 1), ("big", 300), ("medium", 20)] {
                    state.waiting.push(BySize(candidate(rel, size)));
                }
                drop(state);
                pending.changed.notify_all();
            }
            worker.join().unwrap()
        });
        assert_eq!(taken, ["big", "medium", "small"]);
        assert!(pending.next().is_none(), "the walk is over");
    }

    #[test]
    fn a_walk_that_panics_still_lets_the_workers_finish() {
        let pending = Pending::default();
        let walk = std::thread::scope(|s| {
            s.spawn(|| {
                let _closed = pending.close_on_drop();
                pending.push(candidate("a", 1));
                panic!("the walk failed");
            })
            .join()
        });
        assert!(walk.is_err());
        assert_eq!(pending.next().map(|c| c.rel), Some("a".to_owned()));
        assert!(pending.next().is_none());
    }

    /// A scanner of `dir` (no cache) whose first scan is done.
    fn scanned(dir: &std::path::Path) -> Arc<Scanner> {
        use clap::Parser as _;
        let cli = crate::project::config::Cli::try_parse_from([
            "dupcheck",
            dir.to_str().unwrap(),
            "--no-cache",
        ])
        .unwrap();
        let registry = Registry::builtin();
        let config = Config::resolve(&cli, dir, &registry, |_| {}).unwrap();
        let scanner = Scanner::new(Arc::new(config), registry);
        let first = scanner.build(|_| {
            scan(
                &scanner.config,
                &scanner.registry,
                &Reuse::default(),
                &Progress::quiet(),
            )
            .map(Arc::new)
        });
        assert!(first.is_ok());
        scanner
    }

    #[test]
    fn an_update_naming_nothing_finds_what_changed_on_disk_and_else_keeps_the_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let code = "export function add(a, b) {\n  return a + b;\n}\n";
        std::fs::write(dir.path().join("a.js"), code).unwrap();
        std::fs::write(dir.path().join("b.js"), code).unwrap();
        let scanner = scanned(dir.path());
        let first = scanner.snapshot().unwrap();
        assert_eq!(first.folders, [dir.path()]);
        let nothing = HashSet::default();

        // Nothing changed: the same snapshot, with its statistics.
        let same = scanner.update(&nothing).unwrap();
        assert!(Arc::ptr_eq(&first, &same));
        assert_eq!(scanner.last_update(), None);

        // An edit no event named, found by its size: only it is read.
        std::fs::write(dir.path().join("b.js"), format!("{code}// more\n")).unwrap();
        let edited = scanner.update(&nothing).unwrap();
        assert!(!Arc::ptr_eq(&first, &edited));
        assert!(scanner.last_update().is_some());
        let texts: Vec<&str> = edited.index.files.iter().map(|f| &*f.text).collect();
        assert_eq!(texts, [code, &format!("{code}// more\n")]);
        assert!(Arc::ptr_eq(&first.index.files[0], &edited.index.files[0]));

        // A new folder, empty: a new snapshot that walked it, files shared.
        std::fs::create_dir(dir.path().join("new")).unwrap();
        let walked = scanner.update(&nothing).unwrap();
        assert_eq!(
            walked.folders,
            [dir.path().to_owned(), dir.path().join("new")]
        );
        assert!(walked
            .index
            .files
            .iter()
            .zip(&edited.index.files)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        assert!(Arc::ptr_eq(&walked, &scanner.update(&nothing).unwrap()));
    }

    #[test]
    fn each_configuration_reading_a_snapshot_gets_its_own_clones_and_statistics() {
        let dir = tempfile::tempdir().unwrap();
        let code = |name: &str| {
            format!(
                "export function {name}(items, limit) {{\n  let total = 0;\n  for (const item of items) {{\n    if (item.price > limit) {{\n      total += item.price * item.count;\n    }}\n  }}\n  return total;\n}}\n"
            )
        };
        std::fs::write(dir.path().join("a.js"), code("sumOver")).unwrap();
        std::fs::write(dir.path().join("b.js"), code("totalAbove")).unwrap();
        let config = |mode: &str| {
            use clap::Parser as _;
            let cli = crate::project::config::Cli::try_parse_from([
                "dupcheck",
                dir.path().to_str().unwrap(),
                "--no-cache",
                "--min-tokens",
                "20",
                "--min-lines",
                "3",
                "--mode",
                mode,
            ])
            .unwrap();
            Config::resolve(&cli, dir.path(), &Registry::builtin(), |_| {}).unwrap()
        };
        let (strict, mild) = (config("strict"), config("mild"));
        let registry = Registry::builtin();
        let snapshot = scan(&strict, &registry, &Reuse::default(), &Progress::quiet()).unwrap();
        // The copy renamed its function: one clone in mild mode; in strict
        // mode only what follows the name, a shorter one.
        let strict_clones = snapshot.clones(&strict);
        let mild_clones = snapshot.clones(&mild);
        assert_eq!(mild_clones.0.len(), 1);
        assert_ne!(
            strict_clones.0.iter().map(|c| c.len).collect::<Vec<_>>(),
            mild_clones.0.iter().map(|c| c.len).collect::<Vec<_>>()
        );
        // Each configuration reads its own, every time, statistics too.
        assert_eq!(snapshot.clones(&strict).0.len(), strict_clones.0.len());
        assert_eq!(snapshot.clones(&mild).0.len(), 1);
        let mild_stats = snapshot.stats(&mild, &registry);
        let strict_stats = snapshot.stats(&strict, &registry);
        assert_eq!(mild_stats.total.clones, 1);
        assert_eq!(strict_stats.total.clones, strict_clones.0.len() as u64);
        assert_ne!(
            mild_stats.total.duplicated_tokens,
            strict_stats.total.duplicated_tokens
        );
    }
}
