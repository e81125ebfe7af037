//! Watching: applies created, changed, renamed and deleted files to the
//! index as they happen, without a full rescan.
//!
//! In: file-system events for DIR (the `notify` crate). Out: calls to
//! [`Scanner::update`], one per burst of events: events are gathered until
//! DIR has been quiet for [`QUIET`] (at most [`MAX_DELAY`]), then applied.
//!
//! Invariants: the update walks with the same filters as a scan, so ignore
//! rules and `--format` apply to new files too; events inside hidden folders
//! (`.git`, the cache) and mere reads are not worth an update, but edits of
//! `.gitignore` and `.ignore` files are. The watch starts after the first
//! scan, on the folders scans enter (where the platform watches folder by
//! folder); what changed in a folder before it was watched is caught up by
//! size and mtime.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::event::EventKindMask;
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher, WatcherKind};

use crate::engine::hash::HashSet;
use crate::project::scanner::Scanner;
use crate::project::snapshot::Snapshot;

/// How long DIR must be quiet before a burst of events is applied.
pub(crate) const QUIET: Duration = Duration::from_millis(20);
/// The longest a burst is held back while events keep coming.
pub(crate) const MAX_DELAY: Duration = Duration::from_millis(500);

/// Watching DIR; it stops when this is dropped.
pub(crate) struct Watch {
    slot: Arc<Mutex<Slot>>,
}

/// Where the watcher is kept.
enum Slot {
    /// Not made yet: the watch starts after the first scan.
    Waiting,
    Watching(RecommendedWatcher),
    /// The [`Watch`] was dropped, or watching failed: a watcher made now
    /// is dropped too.
    Stopped,
}

impl Drop for Watch {
    fn drop(&mut self) {
        stop(&self.slot);
    }
}

/// Drops the watcher, if any, which closes its channel and so ends the
/// watch's thread.
fn stop(slot: &Mutex<Slot>) {
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Slot::Stopped;
}

/// Starts watching the scanner's DIR once its first scan has ended (the
/// start is not delayed by setting up the watch, nor the scan by the
/// events of its own reads). Where the platform watches a tree folder by
/// folder (inotify, kqueue), only the folders the scan entered are watched,
/// so ignored trees (`node_modules`, `target`) cost no watches and their
/// churn no updates; the watched set follows each update's walk.
/// Elsewhere DIR is watched whole. Whenever folders start being watched
/// (the first time included), an update that names nothing then applies
/// what changed in them before (it compares every file's size and mtime
/// with the snapshot's). Failures to watch are logged: checks go on,
/// without updates.
pub(crate) fn spawn(scanner: Arc<Scanner>) -> Watch {
    let slot = Arc::new(Mutex::new(Slot::Waiting));
    let watch = Watch {
        slot: Arc::clone(&slot),
    };
    let spawned = std::thread::Builder::new()
        .name("dupcheck-watch".into())
        .spawn(move || {
            let dir = scanner.config().dir.clone();
            if let Err(err) = follow(&scanner, &slot) {
                tracing::warn!(
                    "cannot watch {}: {err}; use POST /api/recheck to refresh",
                    dir.display()
                );
                stop(&slot);
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot start the watcher thread: {err}");
    }
    watch
}

/// The watch's thread: after the first scan, applies each burst of events
/// with an update, and watches the folders each update walked, until the
/// watch is stopped.
fn follow(scanner: &Arc<Scanner>, slot: &Mutex<Slot>) -> notify::Result<()> {
    let Some(mut snapshot) = scanner.first_scanned() else {
        return Err(notify::Error::generic("the first scan failed"));
    };
    let dir = scanner.config().dir.clone();
    let (tx, rx) = mpsc::channel::<notify::Result<Event>>();
    // Files opened, read and closed change nothing: left out where the
    // system filters (inotify), so that a build or a grep reading the tree
    // does not wake the watch once per file it opens.
    let config = notify::Config::default().with_event_kinds(EventKindMask::CORE);
    let watcher = RecommendedWatcher::new(
        move |event| {
            // The receiver is gone only when the watch stops.
            let _ = tx.send(event);
        },
        config,
    )?;
    {
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(*slot, Slot::Stopped) {
            return Ok(());
        }
        *slot = Slot::Watching(watcher);
    }
    let mut folders = Folders::new(&dir);
    let mut named = HashSet::default();
    loop {
        if folders.follow(slot, &snapshot, &named)? {
            // Folders newly watched: apply what changed in them before.
            named.clear();
        } else {
            let cache = scanner.config().cache_dir.as_deref();
            match next_burst(&rx, &dir, cache) {
                Some(changed) => named = changed,
                None => return Ok(()),
            }
        }
        let started = Instant::now();
        match scanner.update(&named) {
            Ok(next) => {
                tracing::debug!(
                    "applied {} changed paths in {:?}",
                    named.len(),
                    started.elapsed()
                );
                snapshot = next;
            }
            Err(err) => tracing::debug!("update skipped: {err}"),
        }
    }
}

/// The folders watched, following the scans' walks.
struct Folders {
    dir: PathBuf,
    /// Whether the platform watches folder by folder (else DIR is watched
    /// whole, once).
    one_by_one: bool,
    watched: HashSet<PathBuf>,
}

impl Folders {
    fn new(dir: &Path) -> Folders {
        Folders {
            dir: dir.to_owned(),
            one_by_one: matches!(
                RecommendedWatcher::kind(),
                WatcherKind::Inotify | WatcherKind::Kqueue
            ),
            watched: HashSet::default(),
        }
    }

    /// Watches the folders `snapshot`'s walk entered and no longer those
    /// it did not; folders at or below a path of `named` (events there:
    /// made, moved, or deleted and made again) are watched anew. Whether
    /// any folder started being watched.
    fn follow(
        &mut self,
        slot: &Mutex<Slot>,
        snapshot: &Snapshot,
        named: &HashSet<PathBuf>,
    ) -> notify::Result<bool> {
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        let Slot::Watching(watcher) = &mut *slot else {
            return Ok(false);
        };
        if !self.one_by_one {
            if self.watched.is_empty() {
                watcher.watch(&self.dir, RecursiveMode::Recursive)?;
                self.watched.insert(self.dir.clone());
                return Ok(true);
            }
            return Ok(false);
        }
        let walked: HashSet<&Path> = snapshot.folders.iter().map(PathBuf::as_path).collect();
        self.watched.retain(|folder| {
            let kept = walked.contains(folder.as_path());
            if !kept {
                // A deleted folder is no longer watched already.
                let _ = watcher.unwatch(folder);
            }
            kept
        });
        let touched = |folder: &Path| folder.ancestors().any(|a| named.contains(a));
        let mut added = false;
        for folder in &snapshot.folders {
            if self.watched.contains(folder) && !touched(folder) {
                continue;
            }
            match watcher.watch(folder, RecursiveMode::NonRecursive) {
                Ok(()) => {}
                // Deleted since the walk: the next update forgets it.
                Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => continue,
                Err(e) => return Err(e),
            }
            self.watched.insert(folder.clone());
            added = true;
        }
        Ok(added)
    }
}

/// Waits for the next burst of relevant events and returns the paths it
/// touched; `None` when the watcher is gone.
fn next_burst(
    rx: &mpsc::Receiver<notify::Result<Event>>,
    dir: &Path,
    cache: Option<&Path>,
) -> Option<HashSet<PathBuf>> {
    loop {
        let mut changed = HashSet::new();
        collect(rx.recv().ok()?, dir, cache, &mut changed);
        let started = Instant::now();
        while started.elapsed() < MAX_DELAY {
            match rx.recv_timeout(QUIET) {
                Ok(event) => collect(event, dir, cache, &mut changed),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
        if !changed.is_empty() {
            return Some(changed);
        }
    }
}

/// Adds the relevant paths of one event to `changed`.
fn collect(
    event: notify::Result<Event>,
    dir: &Path,
    cache: Option<&Path>,
    changed: &mut HashSet<PathBuf>,
) {
    let event = match event {
        Ok(event) => event,
        Err(err) => {
            // Lost events (queue overflow) and the like: rescan everything.
            tracing::debug!("watch error: {err}");
            changed.insert(dir.to_owned());
            return;
        }
    };
    if matches!(event.kind, EventKind::Access(_)) {
        return;
    }
    changed.extend(event.paths.into_iter().filter(|p| relevant(p, dir, cache)));
}

/// Whether a change at `path` can change the index.
fn relevant(path: &Path, dir: &Path, cache: Option<&Path>) -> bool {
    if cache.is_some_and(|c| path.starts_with(c)) {
        return false;
    }
    let Ok(rel) = path.strip_prefix(dir) else {
        return false;
    };
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if matches!(name, ".gitignore" | ".ignore") {
        return true;
    }
    !rel.components()
        .any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_folders_and_the_cache_are_not_relevant() {
        let dir = Path::new("/p");
        let cache = Some(Path::new("/p/cache"));
        for (path, want) in [
            ("/p/src/a.js", true),
            ("/p/.git/index", false),
            ("/p/src/.hidden.js", false),
            ("/p/.gitignore", true),
            ("/p/src/.ignore", true),
            ("/p/cache/index-v1.bin", false),
            ("/elsewhere/a.js", false),
        ] {
            assert_eq!(relevant(Path::new(path), dir, cache), want, "{path}");
        }
    }
}
