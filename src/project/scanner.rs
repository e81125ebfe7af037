//! The scanner: owns the current snapshot, which checks read without
//! waiting; runs each full scan on a thread of its own (so the first one
//! starts before any async runtime), one at a time, with rescans asked for
//! meanwhile joining it; applies the watcher's updates; keeps the cache
//! current: written whole after a cold scan, then each update appended to
//! its journal, and the clone list kept whenever it changed.
//!
//! Invariants: one snapshot is built at a time; a scan that fails or
//! panics leaves the previous snapshot serving; readers only ever see a
//! complete snapshot.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;

use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::engine::hash::HashSet;
use crate::engine::index::Index;
use crate::panic_message;
use crate::project::cache::{self, Base, Cached};
use crate::project::clone_cache;
use crate::project::config::Config;
use crate::project::journal::{self, Record};
use crate::project::left_out::why_nothing_indexed;
use crate::project::progress::{clones_line, footprint_line, scanned_line, Progress};
use crate::project::scan::{gather, scan, Reuse, ScanError};
use crate::project::snapshot::Snapshot;

type ScanResult = Result<Arc<Snapshot>, ScanError>;

/// Owns the current snapshot, runs rescans one at a time, applies updates.
pub(crate) struct Scanner {
    config: Arc<Config>,
    registry: Arc<Registry>,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// The running full scan, if any: waiters subscribe to its outcome
    /// (sent once its clones are detected too).
    running: Mutex<Option<watch::Receiver<Option<ScanResult>>>>,
    /// Whether a full scan is reading and indexing files (not yet
    /// published): what `/api/health` calls scanning.
    indexing: AtomicBool,
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
    /// What the cache folder holds; locked while it is written.
    persisted: Mutex<Persisted>,
    /// Whether a thread keeps the cache current now, and whether it must
    /// look again once done (an update came meanwhile).
    persisting: Mutex<Persisting>,
    /// Threads of full scans and of cache writes not yet ended, and
    /// their signal.
    scan_threads: Mutex<usize>,
    scan_threads_ended: Condvar,
    /// When the scanner was made (at the server's start): the first
    /// summary line counts from here.
    created: Instant,
}

impl Scanner {
    /// A scanner with no snapshot yet.
    pub(crate) fn new(config: Arc<Config>, registry: Arc<Registry>) -> Arc<Scanner> {
        Arc::new(Scanner {
            config,
            registry,
            current: RwLock::new(None),
            running: Mutex::new(None),
            indexing: AtomicBool::new(false),
            building: Mutex::new(()),
            last_update: Mutex::new(None),
            first: AtomicBool::new(true),
            first_ended: Mutex::new(false),
            first_ended_signal: Condvar::new(),
            cache_dirty: AtomicBool::new(false),
            persisted: Mutex::new(Persisted::default()),
            persisting: Mutex::new(Persisting::default()),
            scan_threads: Mutex::new(0),
            scan_threads_ended: Condvar::new(),
            created: Instant::now(),
        })
    }

    /// The configuration scans use.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The format registry.
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The latest complete snapshot, `None` before the first scan ends.
    pub(crate) fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether a full scan is reading and indexing files now (its clone
    /// detection, after it is published, is not counted:
    /// [`Snapshot::detection`] tells that).
    pub(crate) fn is_scanning(&self) -> bool {
        self.indexing.load(Ordering::SeqCst)
    }

    /// Blocks until the first full scan has ended, published (with the
    /// clone list the cache kept for it, if any) or failed; then the
    /// current snapshot (`None` if it failed).
    pub(crate) fn first_scanned(&self) -> Option<Arc<Snapshot>> {
        let ended = self.first_ended.lock().unwrap_or_else(|e| e.into_inner());
        let _ended = self
            .first_ended_signal
            .wait_while(ended, |ended| !*ended)
            .unwrap_or_else(|e| e.into_inner());
        self.snapshot()
    }

    /// When the watcher last applied a change, if ever.
    pub(crate) fn last_update(&self) -> Option<SystemTime> {
        *self.last_update.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a full scan, or joins the one running, and waits for its outcome.
    pub(crate) async fn rescan(self: &Arc<Self>) -> ScanResult {
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
    pub(crate) fn start_scan(self: &Arc<Self>) {
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
        self.indexing.store(true, Ordering::SeqCst);
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
                self.indexing.store(false, Ordering::SeqCst);
                if self.first.swap(false, Ordering::SeqCst) {
                    self.end_first();
                }
            }
        }
        rx
    }

    /// One full scan now, on this thread, as a command that runs once
    /// (`dupcheck report`) makes it: the cache read when caching is on,
    /// `progress` shown, the snapshot published. Nothing is printed or
    /// logged (the caller says what happened), and the cache is not
    /// written.
    pub(crate) fn scan_now(&self, progress: &Progress) -> ScanResult {
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let reuse = Reuse::default().with_cache(self.cached());
        let snapshot = Arc::new(scan(&self.config, &self.registry, &reuse, progress)?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&snapshot));
        Ok(snapshot)
    }

    /// The cache that fits this configuration (empty when caching is off
    /// or no cache fits).
    fn cached(&self) -> Cached {
        match &self.config.cache_dir {
            Some(dir) => journal::load(dir, cache::key_of(&self.config)),
            None => Cached::default(),
        }
    }

    /// A full scan, its lines, and its outcome sent on `tx`.
    fn run_scan(self: &Arc<Self>, tx: &watch::Sender<Option<ScanResult>>) {
        let first = self.first.swap(false, Ordering::SeqCst);
        let progress = if first {
            Progress::console(self.created)
        } else {
            Progress::quiet()
        };
        let outcome = self.build(|previous| {
            let mut reuse = Reuse::previous(previous.map(|p| &**p));
            if first && self.config.cache_dir.is_some() {
                progress.phase("reading the cache");
                let cache = self.cached();
                self.lock_persisted().remember(&cache);
                reuse = reuse.with_cache(cache);
            }
            scan(&self.config, &self.registry, &reuse, &progress).map(Arc::new)
        });
        self.indexing.store(false, Ordering::SeqCst);
        if first && outcome.is_err() {
            self.end_first();
        }
        // The first scan's lines go to stderr, the others' to the log.
        let say = |line: String| match first {
            true => progress.print(&line),
            false => tracing::info!("{line}"),
        };
        if let Ok(snapshot) = &outcome {
            // Checks are answered from here on; the statistics wait
            // for whole-project clone detection. The cache is made
            // current beside it (what changed since it was written, in
            // its journal): a stop during the minutes clone detection
            // takes on a big tree still leaves a cache for the next start.
            say(scanned_line(snapshot, progress.elapsed()));
            if snapshot.index.files.is_empty() {
                if let Some(why) = why_nothing_indexed(&self.config, &self.registry) {
                    say(why);
                }
            }
            self.persist_in_background();
            tracing::debug!("after the scan, {}", footprint_line(snapshot));
            let kept = first && self.adopt_kept_clones(snapshot);
            if first {
                // The watcher's first look at the tree (a walk comparing
                // every file) waits for a kept clone list, a fraction of
                // a second, not for clone detection: updates go on while
                // it takes minutes.
                self.end_first();
            }
            progress.phase("detecting clones");
            let detecting = Instant::now();
            let stats = snapshot.stats(&self.config, &self.registry);
            say(clones_line(&stats, detecting.elapsed(), kept));
            release_free_memory();
            if !kept {
                self.persist_in_background();
            }
            tracing::debug!("after clone detection, {}", footprint_line(snapshot));
        }
        progress.finish();
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = None;
        // Nobody waiting is fine: the snapshot is published already.
        let _ = tx.send(Some(outcome));
    }

    /// The key of the clone list of `snapshot` with this configuration.
    fn clone_list_key(&self, snapshot: &Snapshot) -> u64 {
        clone_cache::key(
            cache::key_of(&self.config),
            &Snapshot::clone_settings(&self.config),
            &snapshot.index,
        )
    }

    /// Takes the clone list kept in the cache for `snapshot`'s very files
    /// and this configuration, if there is one; whether it did.
    fn adopt_kept_clones(&self, snapshot: &Snapshot) -> bool {
        let Some(dir) = &self.config.cache_dir else {
            return false;
        };
        let key = self.clone_list_key(snapshot);
        match clone_cache::load(dir, key, &snapshot.index) {
            Some(clones) => {
                snapshot.adopt_clones(&self.config, clones);
                self.lock_persisted().clones = Some(key);
                true
            }
            None => false,
        }
    }

    /// Detects the clones of `snapshot` with this configuration (and its
    /// statistics) on a thread of its own.
    pub(crate) fn detect_in_background(self: &Arc<Self>, snapshot: &Arc<Snapshot>) {
        let (this, snapshot) = (Arc::clone(self), Arc::clone(snapshot));
        let spawned = std::thread::Builder::new()
            .name("clone detection".into())
            .spawn(move || {
                snapshot.stats(&this.config, &this.registry);
                release_free_memory();
            });
        if let Err(err) = spawned {
            tracing::error!("cannot start clone detection: {err}");
        }
    }

    /// Makes the cache current ([`Scanner::persist`]) on a thread of its
    /// own, counted among the scan threads that a stop waits for (within
    /// [`LAST_CACHE_WRITE`]; a write cut short leaves the previous cache
    /// and journal). One such thread at a time: asked while one runs, it
    /// looks again once done, at the snapshot current then.
    fn persist_in_background(self: &Arc<Self>) {
        if self.config.cache_dir.is_none() {
            return;
        }
        {
            let mut persisting = self.lock_persisting();
            if persisting.running {
                persisting.again = true;
                return;
            }
            persisting.running = true;
        }
        let this = Arc::clone(self);
        *self.scan_threads() += 1;
        let spawned = std::thread::Builder::new()
            .name("dupcheck-cache".into())
            .spawn(move || {
                let _ended = this.scan_thread_ends();
                loop {
                    if let Some(snapshot) = this.snapshot() {
                        let persisted = catch_unwind(AssertUnwindSafe(|| this.persist(&snapshot)));
                        if let Err(panic) = persisted {
                            tracing::error!(
                                "writing the cache panicked: {}",
                                panic_message(&*panic)
                            );
                        }
                    }
                    let mut persisting = this.lock_persisting();
                    if !std::mem::take(&mut persisting.again) {
                        persisting.running = false;
                        break;
                    }
                }
            });
        if let Err(err) = spawned {
            *self.scan_threads() -= 1;
            self.lock_persisting().running = false;
            tracing::warn!("cannot start writing the cache: {err}");
        }
    }

    fn lock_persisting(&self) -> std::sync::MutexGuard<'_, Persisting> {
        self.persisting.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_persisted(&self) -> std::sync::MutexGuard<'_, Persisted> {
        self.persisted.lock().unwrap_or_else(|e| e.into_inner())
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
    pub(crate) fn update(self: &Arc<Self>, changed: &HashSet<PathBuf>) -> ScanResult {
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
            let snapshot = gathered.index(&self.registry, Some(&previous.index), None);
            // Its clones from the previous ones, before it is published:
            // the statistics never go blank for a saved file.
            snapshot.carry_clones(previous);
            Ok(Arc::new(snapshot))
        });
        if updated {
            *self.last_update.lock().unwrap_or_else(|e| e.into_inner()) = Some(SystemTime::now());
            self.cache_dirty.store(true, Ordering::SeqCst);
        }
        if let (true, Ok(snapshot)) = (updated, &outcome) {
            // With its clones carried, the statistics, the clone list's
            // index and the folder tree are made here, not by the next
            // request (on a big tree they take a second).
            if snapshot.has_clones(&self.config) {
                snapshot.folder_totals(&self.config, &self.registry);
                snapshot.listing(&self.config);
            }
            self.persist_in_background();
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
                release_free_memory();
            }
            Err(ScanError::NoIndex | ScanError::Stopped) => {}
            Err(err) => tracing::error!("scan failed, the previous index keeps serving: {err}"),
        }
        outcome
    }

    /// Makes the cache folder hold `snapshot`, if caching is on: the files
    /// that changed since the cache was written appended to its journal
    /// (the whole cache written when there is none, or when the journal
    /// would pass a quarter of it), and the clone list kept if it is known
    /// and not kept yet. Failures are logged.
    fn persist(&self, snapshot: &Snapshot) {
        let Some(dir) = &self.config.cache_dir else {
            return;
        };
        let mut persisted = self.lock_persisted();
        self.cache_dirty.store(false, Ordering::SeqCst);
        persisted.index(dir, cache::key_of(&self.config), &snapshot.index);
        if snapshot.has_clones(&self.config) {
            let key = self.clone_list_key(snapshot);
            if persisted.clones != Some(key) {
                let clones = snapshot.clones(&self.config);
                match clone_cache::save(dir, key, &clones) {
                    Ok(()) => persisted.clones = Some(key),
                    Err(err) => {
                        tracing::warn!("cannot keep the clone list in {}: {err}", dir.display())
                    }
                }
            }
        }
    }

    /// On shutdown: lets full scans and cache writes still running end, for
    /// at most [`LAST_CACHE_WRITE`], then makes the cache current if the
    /// watcher changed the index since (a journal record: milliseconds). A
    /// write still running when the process ends leaves only its
    /// temporary file, which the next start removes, or a torn journal
    /// record, which it ignores; the previous cache stays whole and is read.
    pub(crate) fn flush_cache(&self) {
        drop(
            self.scan_threads_ended
                .wait_timeout_while(self.scan_threads(), LAST_CACHE_WRITE, |running| {
                    *running > 0
                })
                .unwrap_or_else(|e| e.into_inner()),
        );
        if self.cache_dirty.load(Ordering::SeqCst) {
            if let Some(snapshot) = self.snapshot() {
                self.persist(&snapshot);
            }
        }
    }
}

/// What the cache folder holds for a scanner: the cache file and how much
/// of its journal is valid, the files they give (path → size and content
/// hash: what a scan reuses by), and the key of the clone list kept.
#[derive(Default)]
struct Persisted {
    base: Option<Base>,
    files: HashMap<String, (u64, u64)>,
    clones: Option<u64>,
}

/// Whether a thread makes the cache current, and whether it must look
/// again when done.
#[derive(Default)]
struct Persisting {
    running: bool,
    again: bool,
}

impl Persisted {
    /// Takes what `cached` (a cache just read, its journal applied) holds.
    fn remember(&mut self, cached: &Cached) {
        self.base = cached.base;
        self.files = (cached.files.iter())
            .map(|(rel, f)| (rel.clone(), (f.meta.size, f.meta.content_hash)))
            .collect();
    }

    /// Makes the cache in `dir` (made with `key`) hold the files of
    /// `index`: a journal record of what changed, or the whole cache.
    fn index(&mut self, dir: &std::path::Path, key: u64, index: &Index) {
        let started = Instant::now();
        let unchanged = |f: &&Arc<crate::engine::index::SourceFile>| {
            self.files.get(&f.rel) == Some(&(f.meta.size, f.meta.content_hash))
        };
        let changed: Vec<_> = index
            .files
            .iter()
            .filter(|f| !unchanged(f))
            .map(|f| &**f)
            .collect();
        let removed: Vec<String> = (self.files.keys())
            .filter(|rel| index.file_by_rel(rel).is_none())
            .cloned()
            .collect();
        let record = Record {
            removed: removed.iter().map(String::as_str).collect(),
            changed,
        };
        if let Some(base) = &mut self.base {
            if record.is_empty() {
                return;
            }
            if base.journal + record.len() <= journal_limit(base.len) {
                match journal::append(dir, key, base, &record) {
                    Ok(()) => {
                        for rel in &removed {
                            self.files.remove(rel);
                        }
                        for f in &record.changed {
                            let meta = (f.meta.size, f.meta.content_hash);
                            self.files.insert(f.rel.clone(), meta);
                        }
                        tracing::debug!(
                            "cache journal: {} changed, {} removed, in {:?}",
                            record.changed.len(),
                            removed.len(),
                            started.elapsed()
                        );
                        return;
                    }
                    Err(err) => tracing::warn!(
                        "cannot append to the cache's journal in {}, writing the cache anew: {err}",
                        dir.display()
                    ),
                }
            }
        }
        match journal::save(dir, key, index) {
            Ok(base) => {
                self.base = Some(base);
                self.files = (index.files.iter())
                    .map(|f| (f.rel.clone(), (f.meta.size, f.meta.content_hash)))
                    .collect();
                tracing::debug!(
                    "cache written to {} in {:?}",
                    dir.display(),
                    started.elapsed()
                );
            }
            Err(err) => tracing::warn!("cannot write the cache in {}: {err}", dir.display()),
        }
    }
}

/// The most bytes a journal may hold for a cache of `base` bytes before
/// the cache is written anew instead: a quarter of it, at least 64 MiB. A
/// start applies the journal's files without their postings, so it
/// fingerprints them.
fn journal_limit(base: u64) -> u64 {
    (base / 4).max(64 << 20)
}

/// Gives the allocator's free pages back to the system. A scan frees parse
/// trees, the decoded cache and the previous snapshot's postings, and clone
/// detection its working sets, in pieces glibc's allocator keeps for later
/// (over a gigabyte on the Linux kernel); a server that runs for days
/// should hold what its index needs, not its peak.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; nothing
    // in use is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// How long writing the cache may delay an exit: a scan still running,
/// then the write ([`Scanner::flush_cache`]).
pub(crate) const LAST_CACHE_WRITE: Duration = Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use super::*;

    /// A scanner of `dir` (no cache) whose first scan is done.
    fn scanned(dir: &std::path::Path) -> Arc<Scanner> {
        let config = Config::of_args(dir, &["--no-cache"]);
        let scanner = Scanner::new(Arc::new(config), Registry::builtin());
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
        let texts: Vec<String> = (edited.index.files.iter())
            .map(|f| f.text.get().into_owned())
            .collect();
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
}
