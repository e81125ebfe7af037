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
//! `.gitignore` and `.ignore` files are.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::{Event, EventKind, RecursiveMode, Watcher};

use crate::engine::hash::HashSet;
use crate::project::scan::Scanner;

/// How long DIR must be quiet before a burst of events is applied.
pub const QUIET: Duration = Duration::from_millis(20);
/// The longest a burst is held back while events keep coming.
pub const MAX_DELAY: Duration = Duration::from_millis(500);

/// Starts watching the scanner's DIR. The returned watcher must be kept: it
/// stops when dropped. `None` (logged) when the platform refuses.
pub fn spawn(scanner: Arc<Scanner>) -> Option<notify::RecommendedWatcher> {
    let dir = scanner.config().dir.clone();
    let (tx, rx) = mpsc::channel::<notify::Result<Event>>();
    let mut watcher = match notify::recommended_watcher(move |event| {
        // The receiver is gone only when the server stops.
        let _ = tx.send(event);
    }) {
        Ok(watcher) => watcher,
        Err(err) => {
            tracing::warn!(
                "cannot watch {}: {err}; use POST /api/recheck to refresh",
                dir.display()
            );
            return None;
        }
    };
    if let Err(err) = watcher.watch(&dir, RecursiveMode::Recursive) {
        tracing::warn!(
            "cannot watch {}: {err}; use POST /api/recheck to refresh",
            dir.display()
        );
        return None;
    }
    let spawned = std::thread::Builder::new()
        .name("dupcheck-watch".into())
        .spawn(move || {
            while let Some(changed) = next_burst(&rx, &dir, scanner.config().cache_dir.as_deref()) {
                let started = Instant::now();
                match scanner.update(&changed) {
                    Ok(snapshot) => tracing::debug!(
                        "applied {} changed paths in {:?} ({} files parsed)",
                        changed.len(),
                        started.elapsed(),
                        snapshot.parsed
                    ),
                    Err(err) => tracing::debug!("update skipped: {err}"),
                }
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot start the watcher thread: {err}");
        return None;
    }
    Some(watcher)
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
