//! Snapshots: everything one scan produced (the index, what was skipped,
//! when), immutable once published; and what is computed from one on first
//! use, once per configuration asking (its clones and statistics, and what
//! the clone list and the folder tree read of them).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::engine::clones::{
    project_clones, project_clones_counted, updated_clones, ClonePair, CloneSettings,
};
use crate::engine::grammar::Registry;
use crate::engine::index::Index;
use crate::engine::runs::Run;
use crate::engine::stats::ProjectStats;
use crate::project::config::Config;
use crate::project::folders::Folders;
use crate::project::listing::Listing;
use crate::project::walk::SkipCounts;

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
    clones: PerSettings<Detected>,
    /// Whole-project statistics, computed on first use, likewise.
    stats: PerSettings<ProjectStats>,
    /// The clones in page order, by id and by place, likewise.
    listing: PerSettings<Listing>,
    /// Every folder's figures and ordered children, likewise.
    folder_totals: PerSettings<Folders>,
    /// How far clone detection has come.
    detection: Detection,
}

/// How far whole-project clone detection has come on a snapshot (the last
/// detection that started, of whichever settings).
#[derive(Debug, Default)]
struct Detection {
    /// Whether a detection was asked for in the background.
    requested: AtomicBool,
    /// Files looked up so far.
    done: AtomicUsize,
    /// When it started, how long it took once ended; and the signal of its
    /// end.
    times: Mutex<(Option<Instant>, Option<Duration>)>,
    ended: Condvar,
}

/// Where clone detection is, as `/api/health` tells it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum DetectionState {
    /// Not started (it starts after the scan, or on first use).
    Pending,
    /// Running: files looked up so far, of how many, seconds so far.
    Running {
        done: usize,
        files: usize,
        seconds: f64,
    },
    /// Ended, in so many seconds (a list carried from the previous
    /// snapshot or kept in the cache takes its own time).
    Done { seconds: f64 },
}

impl Detection {
    fn start(&self) {
        self.done.store(0, Ordering::Relaxed);
        *self.times.lock().unwrap_or_else(|e| e.into_inner()) = (Some(Instant::now()), None);
    }

    fn end(&self) {
        let mut times = self.times.lock().unwrap_or_else(|e| e.into_inner());
        let started = *times.0.get_or_insert_with(Instant::now);
        times.1 = Some(started.elapsed());
        self.ended.notify_all();
    }
}

/// A clone list, sorted, and the lookups the posting cap skipped.
type Detected = (Vec<ClonePair>, usize);

/// The settings of `config` that its clones (and so its statistics)
/// depend on besides the files.
fn settings_of(config: &Config) -> CloneSettings {
    CloneSettings {
        mode: config.mode,
        thresholds: config.thresholds,
        skip_local: config.skip_local,
        similarity: config.near_miss.then_some(config.similarity),
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

    /// The value for `settings`, if it is computed.
    fn get(&self, settings: CloneSettings) -> Option<Memo<T>> {
        let cells = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (_, cell) = cells.iter().find(|(s, _)| *s == settings)?;
        cell.get().is_some().then(|| Memo {
            cell: Arc::clone(cell),
        })
    }
}

/// A value a snapshot computed once (its clones, its statistics), shared.
#[derive(Debug)]
pub(crate) struct Memo<T> {
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
    /// The snapshot of a scan that just ended: its `index`, the files it
    /// `skipped`, how long it took and how many files it `parsed` (not
    /// reused), the `folders` its walk entered.
    pub(crate) fn new(
        index: Index,
        skipped: SkipCounts,
        duration: Duration,
        parsed: usize,
        folders: Vec<PathBuf>,
    ) -> Snapshot {
        Snapshot {
            index,
            skipped,
            finished: SystemTime::now(),
            duration,
            parsed,
            folders,
            clones: PerSettings::default(),
            stats: PerSettings::default(),
            listing: PerSettings::default(),
            folder_totals: PerSettings::default(),
            detection: Detection::default(),
        }
    }

    /// The whole project's clones, sorted, and how many fingerprint lookups
    /// the posting cap skipped (clone detection runs on first call). What
    /// `/api/stats` counts and `dupcheck report` lists (see
    /// [`crate::engine::stats::clone_list`]).
    pub(crate) fn clones(&self, config: &Config) -> Memo<(Vec<ClonePair>, usize)> {
        let settings = settings_of(config);
        self.detect(settings, || {
            let found = project_clones_counted(&self.index, settings, &self.detection.done);
            tracing::debug!("clone detection: {} clones", found.0.len());
            found
        })
    }

    /// The clones for `settings`, found by `work` if no one did yet, with
    /// the detection's progress kept (its end signalled once they are
    /// known).
    fn detect(&self, settings: CloneSettings, work: impl FnOnce() -> Detected) -> Memo<Detected> {
        let mut ran = false;
        let memo = self.clones.get_or_init(settings, || {
            ran = true;
            self.detection.start();
            work()
        });
        if ran {
            self.detection.end();
        }
        memo
    }

    /// Where clone detection is.
    pub(crate) fn detection(&self) -> DetectionState {
        let times = self.detection.times.lock();
        let (started, took) = *times.unwrap_or_else(|e| e.into_inner());
        match (started, took) {
            (_, Some(took)) => DetectionState::Done {
                seconds: took.as_secs_f64(),
            },
            (Some(started), None) => DetectionState::Running {
                done: self.detection.done.load(Ordering::Relaxed),
                files: self.index.files.len(),
                seconds: started.elapsed().as_secs_f64(),
            },
            (None, None) => DetectionState::Pending,
        }
    }

    /// Whether a detection in the background should start now: true once
    /// per snapshot, and only if none started.
    pub(crate) fn claim_detection(&self) -> bool {
        let times = self.detection.times.lock();
        let started = times.unwrap_or_else(|e| e.into_inner()).0.is_some();
        !started && !self.detection.requested.swap(true, Ordering::SeqCst)
    }

    /// Waits at most `budget` for a running detection to end; whether the
    /// clones of `config` are known then.
    pub(crate) fn wait_for_clones(&self, config: &Config, budget: Duration) -> bool {
        let deadline = Instant::now() + budget;
        let mut times = self
            .detection
            .times
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        while !self.has_clones(config) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            times = match self.detection.ended.wait_timeout(times, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }

    /// Brings the clones `previous` (the snapshot this one's index was
    /// built on) detected, for each set of settings, up to date for this
    /// snapshot: the files the update changed are looked up, not every
    /// file. Settings `previous` had no clones for are left to first use.
    pub(crate) fn carry_clones(&self, previous: &Snapshot) {
        let detected: Vec<(CloneSettings, Arc<OnceLock<Detected>>)> = {
            let cells = previous.clones.0.lock().unwrap_or_else(|e| e.into_inner());
            cells.iter().map(|(s, c)| (*s, Arc::clone(c))).collect()
        };
        for (settings, cell) in detected {
            let Some(found) = cell.get() else { continue };
            self.detect(settings, || {
                let started = Instant::now();
                let updated = updated_clones(&previous.index, found, &self.index, settings);
                let clones = updated.unwrap_or_else(|| project_clones(&self.index, settings));
                tracing::debug!(
                    "clone detection after an update: {} clones in {:?}",
                    clones.0.len(),
                    started.elapsed()
                );
                clones
            });
        }
    }

    /// Whether this snapshot's clones for `config`'s settings are known
    /// (detected, carried from the snapshot before it, or adopted), without
    /// detecting them.
    pub(crate) fn has_clones(&self, config: &Config) -> bool {
        self.clones.get(settings_of(config)).is_some()
    }

    /// How many clones this snapshot has for `config`'s settings, if they
    /// are known (without detecting them).
    pub(crate) fn known_clones(&self, config: &Config) -> Option<usize> {
        self.clones
            .get(settings_of(config))
            .map(|found| found.0.len())
    }

    /// Takes `clones` (found for these very files with `config`'s settings,
    /// as [`clone_cache`](crate::project::clone_cache) keeps them) as the
    /// snapshot's clones for those settings, unless detection ran already.
    pub(crate) fn adopt_clones(&self, config: &Config, clones: (Vec<ClonePair>, usize)) {
        self.detect(settings_of(config), || clones);
    }

    /// What `config`'s clones depend on besides the files, as text: part
    /// of the key of a kept clone list.
    pub(crate) fn clone_settings(config: &Config) -> String {
        format!("{:?}", settings_of(config))
    }

    /// Bytes held by the clone lists detected so far (one per set of
    /// settings that asked), for the memory breakdown.
    pub(crate) fn clone_list_bytes(&self) -> u64 {
        let cells = self.clones.0.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = |(clones, _): &(Vec<ClonePair>, usize)| {
            let chains = clones
                .iter()
                .filter_map(|c| c.near.as_deref())
                .map(|chain| {
                    std::mem::size_of_val(chain)
                        + chain.parts.capacity() * std::mem::size_of::<Run>()
                });
            (clones.capacity() * std::mem::size_of::<ClonePair>() + chains.sum::<usize>()) as u64
        };
        cells
            .iter()
            .filter_map(|(_, cell)| cell.get())
            .map(bytes)
            .sum()
    }

    /// Lines and tokens of the files scanned, as the statistics count them.
    pub(crate) fn size(&self) -> (u64, u64) {
        let files = self.index.files.iter();
        files.fold((0, 0), |(lines, tokens), file| {
            (
                lines + u64::from(file.line_count()),
                tokens + file.token_count(),
            )
        })
    }

    /// Whole-project statistics (clone detection runs on first call).
    pub(crate) fn stats(&self, config: &Config, registry: &Registry) -> Memo<ProjectStats> {
        self.stats.get_or_init(settings_of(config), || {
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

impl Snapshot {
    /// The clone list's index of [`Snapshot::clones`] (built on first call).
    pub(crate) fn listing(&self, config: &Config) -> Memo<Listing> {
        self.listing.get_or_init(settings_of(config), || {
            Listing::new(&self.index, &self.clones(config).0)
        })
    }

    /// The folder tree's figures, from [`Snapshot::stats`] (built on first
    /// call).
    pub(crate) fn folder_totals(&self, config: &Config, registry: &Registry) -> Memo<Folders> {
        self.folder_totals.get_or_init(settings_of(config), || {
            let stats = self.stats(config, registry);
            Folders::new(&self.index, &self.clones(config).0, &stats, registry)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::progress::Progress;
    use crate::project::scan::{scan, Reuse};

    /// A configuration of `dir` in `mode`, with 20 tokens and 3 lines.
    fn config_of(dir: &std::path::Path, mode: &str) -> Config {
        let flags = ["--no-cache", "--min-tokens", "20", "--min-lines", "3"];
        Config::of_args(dir, &[&flags[..], &["--mode", mode]].concat())
    }

    #[test]
    fn detection_is_pending_until_it_runs_and_its_end_wakes_who_waits() {
        let dir = tempfile::tempdir().unwrap();
        let code = "export function total(items, limit) {\n  let sum = 0;\n  for (const item of items) {\n    if (item.price > limit) {\n      sum += item.price * item.count;\n    }\n  }\n  return sum;\n}\n";
        std::fs::write(dir.path().join("a.js"), code).unwrap();
        std::fs::write(dir.path().join("b.js"), code).unwrap();
        let config = config_of(dir.path(), "strict");
        let registry = Registry::builtin();
        let snapshot = scan(&config, &registry, &Reuse::default(), &Progress::quiet()).unwrap();
        let snapshot = Arc::new(snapshot);
        assert_eq!(snapshot.detection(), DetectionState::Pending);
        assert_eq!(snapshot.known_clones(&config), None);
        assert!(!snapshot.wait_for_clones(&config, Duration::ZERO));
        // One detection in the background per snapshot.
        assert!(snapshot.claim_detection());
        assert!(!snapshot.claim_detection());
        let detecting = {
            let (snapshot, config) = (Arc::clone(&snapshot), config.clone());
            std::thread::spawn(move || snapshot.clones(&config).0.len())
        };
        assert!(snapshot.wait_for_clones(&config, Duration::from_secs(60)));
        assert_eq!(snapshot.known_clones(&config), Some(1));
        assert!(matches!(snapshot.detection(), DetectionState::Done { .. }));
        assert_eq!(detecting.join().unwrap(), 1);
        // Other settings are detected on their own.
        assert_eq!(snapshot.known_clones(&config_of(dir.path(), "weak")), None);
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
        let config = |mode: &str| config_of(dir.path(), mode);
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
