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
//! Invariants: files are read and tokenized in parallel on all cores,
//! biggest first, while the walk goes on; statistics after updates equal
//! those of a fresh scan. The [`Scanner`](crate::project::scanner::Scanner) publishes what a scan
//! builds.

use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::engine::fingerprint::Winnow;
use crate::engine::grammar::Registry;
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::index::{FileMeta, Index, PostingLists, Printed, PrintsAt, SourceFile};
use crate::engine::parse::{Budget, ParseError};
use crate::engine::text::FileText;
use crate::engine::tokens::{tokenize_defined, LineIndex};
use crate::project::cache::{Cached, CachedFile};
use crate::project::config::Config;
use crate::project::generated::generated;
use crate::project::progress::Progress;
use crate::project::snapshot::Snapshot;
use crate::project::walk::{self, Candidate, SkipCounts, SkipReason};

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
    /// The previous snapshot's index, whose postings of the files reused
    /// are reused too.
    pub index: Option<&'a Index>,
    /// Files of the cache, by relative path; a scan takes the tokens of
    /// those it reuses.
    pub cached: HashMap<String, Mutex<CachedFile>>,
    /// The cache's posting lists and entry count: the index takes them
    /// for the files whose tokens it took.
    pub(crate) cached_lists: Mutex<Option<(PostingLists, usize)>>,
    /// For updates: files whose size and mtime are unchanged and that no
    /// event named are reused without reading. `None` for full scans.
    pub changed: Option<&'a HashSet<PathBuf>>,
}

impl<'a> Reuse<'a> {
    /// Reuse what `cached` holds too.
    pub fn with_cache(mut self, cached: Cached) -> Reuse<'a> {
        self.cached = (cached.files.into_iter())
            .map(|(rel, file)| (rel, Mutex::new(file)))
            .collect();
        self.cached_lists = Mutex::new(Some((cached.lists, cached.entries)));
        self
    }

    /// The cache's posting lists, its entry count, and the entry of each
    /// file whose tokens a scan took (taken: once).
    fn take_cached_lists(&self) -> Option<CachedLists> {
        let taken = self
            .cached_lists
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let (lists, count) = taken?;
        let entries = self.cached.iter().filter_map(|(rel, file)| {
            let file = file.lock().unwrap_or_else(|e| e.into_inner());
            file.taken.then(|| (rel.clone(), file.entry))
        });
        Some((lists, entries.collect(), count))
    }

    /// Reuse the files of `snapshot`.
    pub fn previous(snapshot: Option<&'a Snapshot>) -> Reuse<'a> {
        let previous = snapshot
            .map(|s| s.index.files.iter().map(|f| (f.rel.as_str(), f)).collect())
            .unwrap_or_default();
        Reuse {
            previous,
            index: snapshot.map(|s| &s.index),
            ..Reuse::default()
        }
    }
}

/// A cache's posting lists, the entry of each file whose tokens a scan
/// took, and the cache's entry count.
type CachedLists = (PostingLists, HashMap<String, u32>, usize);

/// What became of one candidate.
enum Outcome {
    Indexed {
        file: Arc<SourceFile>,
        /// Where the prints of a file parsed here are, in its worker's
        /// [`Printed`].
        prints: Option<PrintsAt>,
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
    let gathered = gather(config, registry, reuse, progress)?;
    let cached = match reuse.index {
        Some(_) => None,
        None => reuse.take_cached_lists(),
    };
    Ok(gathered.index(registry, reuse.index, cached))
}

/// What a scan's walk and workers gathered, to index.
pub(crate) struct Gathered {
    files: Vec<Arc<SourceFile>>,
    /// Each file's prints, where its worker made them: the worker's, and
    /// where in its [`Printed`].
    made: Vec<Option<(usize, PrintsAt)>>,
    printed: Vec<Printed>,
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
    pub(crate) fn same_as(&self, snapshot: &Snapshot) -> bool {
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

    /// Indexes the files into a snapshot, taking the postings of the files
    /// it shares with `previous` from it, or, with none, those of the
    /// files made from the cache's entries from its lists.
    pub(crate) fn index(
        self,
        registry: &Registry,
        previous: Option<&Index>,
        cached: Option<CachedLists>,
    ) -> Snapshot {
        let loaded = self.started.elapsed();
        let (files, printed, winnow) = (self.files, &self.printed, self.winnow);
        let made = (self.made.iter())
            .map(|made| made.map(|(worker, at)| printed[worker].of(at)))
            .collect();
        let index = match (previous, cached) {
            (None, Some((lists, entries, count))) => {
                Index::build_on_cached(lists, &entries, count, files, made, registry, winnow)
            }
            (previous, _) => Index::build_on(previous, files, made, registry, winnow),
        };
        tracing::debug!(
            "scan: walk {:?}, read and tokenize (with the walk) {loaded:?}, index {:?}",
            self.walk_time,
            self.started.elapsed() - loaded
        );
        Snapshot::new(
            index,
            self.skipped,
            self.started.elapsed(),
            self.parsed,
            self.folders,
        )
    }
}

/// The walk, and meanwhile reading and tokenizing (or reusing) on all
/// cores what it found, biggest first.
pub(crate) fn gather(
    config: &Config,
    registry: &Registry,
    reuse: &Reuse<'_>,
    progress: &Progress,
) -> Result<Gathered, ScanError> {
    let started = Instant::now();
    progress.files();
    let winnow = Winnow::for_min_tokens(config.thresholds.min_tokens as usize).tagged(config.mode);
    let pending = Pending::default();
    let (walked, workers) = std::thread::scope(|s| {
        let walk = s.spawn(|| {
            let _closed = pending.close_on_drop();
            let walked = walk::walk(config, registry, |c| {
                progress.found();
                pending.push(c);
                !crate::engine::parse::stopping()
            });
            (walked, started.elapsed())
        });
        // One worker per core, each taking the biggest file waiting and
        // keeping the prints of those it parses in a [`Printed`] of its own.
        let workers: Vec<(Vec<Outcome>, Printed)> = (0..rayon::current_num_threads())
            .into_par_iter()
            .map(|_| {
                let (mut outcomes, mut printed) = (Vec::new(), Printed::default());
                while let Some(c) = pending.next() {
                    if crate::engine::parse::stopping() {
                        outcomes.push(Outcome::Stopped);
                        continue;
                    }
                    let outcome = load(config, registry, reuse, winnow, &mut printed, &c);
                    if let Outcome::Skipped(reason) = &outcome {
                        tracing::debug!("skipped {}: {reason}", c.rel);
                    }
                    progress.loaded();
                    outcomes.push(outcome);
                }
                (outcomes, printed)
            })
            .collect();
        let walked = walk
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (walked, workers)
    });
    let (walked, walk_time) = walked;
    let walk::Walked {
        mut skipped,
        folders,
    } = walked.map_err(|e| ScanError::Walk(e.to_string()))?;
    progress.phase("indexing");
    let (mut files, mut made, mut printed) = (Vec::new(), Vec::new(), Vec::new());
    let mut parsed = 0;
    for (worker, (outcomes, its_prints)) in workers.into_iter().enumerate() {
        for outcome in outcomes {
            match outcome {
                Outcome::Indexed { file, prints } => {
                    parsed += usize::from(prints.is_some());
                    files.push(file);
                    made.push(prints.map(|at| (worker, at)));
                }
                Outcome::Skipped(reason) => skipped.add(reason),
                Outcome::Stopped => return Err(ScanError::Stopped),
            }
        }
        printed.push(its_prints);
    }
    Ok(Gathered {
        files,
        made,
        printed,
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

/// Reads, reuses or tokenizes one candidate; the prints of a file it
/// tokenizes are added to `printed`, for an index of `winnow`.
fn load(
    config: &Config,
    registry: &Registry,
    reuse: &Reuse<'_>,
    winnow: Winnow,
    printed: &mut Printed,
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
                prints: None,
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
        .map(|p| (p.tokens.clone(), p.definitions.clone(), None))
        .or_else(|| {
            // Taken, not copied: the cache's tokens are the index's from
            // here on, so a warm start holds them once (1.5 GB for the
            // Linux kernel).
            let mut cached = reuse
                .cached
                .get(&c.rel)?
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let fits = same(&cached.meta) && cached.fits(&text);
            cached.taken |= fits;
            fits.then(|| {
                (
                    std::mem::take(&mut cached.tokens),
                    std::mem::take(&mut cached.definitions),
                    cached.frames.take(),
                )
            })
        });
    let (tokens, definitions, frames, prints) = match known {
        Some((tokens, definitions, frames)) => (tokens, definitions, frames, None),
        // The generated-file rule reads the text before it is packed.
        None => match tokenize_defined(
            format,
            &text,
            &config.normalization,
            &Budget::for_file(text.len()),
        ) {
            // Made here, while the tokens are plain and in this core's
            // cache, not by the index once every file is read.
            Ok((tokens, definitions)) => {
                let prints = printed.add(&tokens, winnow);
                (tokens.into(), definitions, None, Some(prints))
            }
            Err(ParseError::Timeout) => return Outcome::Skipped(SkipReason::ParseTimeout),
            Err(ParseError::Memory) => return Outcome::Skipped(SkipReason::ParseMemory),
            Err(ParseError::Stopped) => return Outcome::Stopped,
        },
    };
    if generated(config, format, &text, &tokens) {
        return Outcome::Skipped(SkipReason::Generated);
    }
    // The cache's packed text is this text (the same hash), so it is not
    // compressed again.
    let lines = LineIndex::new(&text);
    let packed = frames.and_then(|f| FileText::from_frames(text.len(), text.is_ascii(), f));
    let text = packed.unwrap_or_else(|| FileText::new(text));
    let file = SourceFile::of_parts(path, c.rel.clone(), format, text, lines, tokens, meta)
        .with_definitions(definitions);
    Outcome::Indexed {
        file: Arc::new(file),
        prints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
