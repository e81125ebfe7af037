//! `dupcheck report [DIR]`: one scan, the project's clones reported, an exit
//! status for CI.
//!
//! In: [`ReportArgs`] (the server's scan flags and `.dupcheck.json`, plus
//! reporters, `--threshold`, `--baseline`, `--diff`). Out: the reports
//! (console on stdout; json, sarif, markdown, codequality and rdjsonl on
//! stdout or as files in `--output`) and an [`Outcome`], whose [`code`](Outcome::code) is the
//! exit status. Errors (usage, I/O) are returned as one line for `main`,
//! which exits 2.
//!
//! A thin adapter: the scan is [`scan::scan`], the clones are those
//! `/api/stats` counts ([`Snapshot::clones`], listed by
//! [`clones::all`]), a diff is checked by [`check_diff`], SARIF is
//! [`crate::interfaces::render::sarif`]. Only the baseline comparison lives here.
//!
//! Invariants: nothing is written but the reports, and the cache only with
//! `--write-cache`; a clone is matched with the baseline by its content
//! hash and the paths of its two places, never by line numbers, as a
//! multiset (a further copy of a known clone is new).

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::interfaces::render::report::{
    codequality_report, console, json_report, markdown, percent, rdjsonl_report, sarif_report,
    Found, Statistics, StoreOutcome,
};
use crate::interfaces::run_error::RunError;
use crate::project::config::{Config, ReportArgs, Reporter, ServeArgs};
use crate::project::progress::{clones_line, scanned_line, Progress};
use crate::project::snapshot::Snapshot;
use crate::service::across;
use crate::service::answer::{sort_largest_first, Duplication};
use crate::service::check::StoreStatus;
use crate::service::clones;
use crate::service::diff_check::{check_diff, DiffAnswer, DiffOptions};
use crate::service::workspace::Workspace;
use crate::store::connect::Target;
use crate::store::live::Live;
use crate::store::lookup::{self, Query};
use crate::store::StoreError;

/// How a report ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Within the threshold, and no new clone failed the run.
    Fine,
    /// Above the threshold, or new clones with `--fail-on-new`.
    Failed,
}

impl Outcome {
    /// The exit status: 0 or 1 (errors are 2, in `main`).
    pub(crate) fn code(self) -> u8 {
        match self {
            Outcome::Fine => 0,
            Outcome::Failed => 1,
        }
    }
}

/// Runs `dupcheck report`.
pub(crate) fn run(
    args: &ReportArgs,
    cwd: &Path,
    registry: Arc<Registry>,
) -> Result<Outcome, RunError> {
    let started = Instant::now();
    let config = Config::resolve_parts(&args.scan, &ServeArgs::default(), cwd, &registry, |w| {
        crate::stderr_line(&format!("dupcheck: {w}"))
    })?;
    let store = config
        .store
        .as_ref()
        .map(|store| Target::parse(&store.0))
        .transpose()?
        .map(|target| across::Store::of(Arc::new(Live::new(target)), &config));
    // The store is reached from this thread, on a runtime of its own.
    let runtime = store
        .as_ref()
        .map(|_| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        })
        .transpose()
        .map_err(RunError::io("start the runtime"))?;
    // Read what was named before the scan: a wrong path fails at once.
    let baseline = args
        .baseline
        .as_deref()
        .map(|path| read_baseline(&cwd.join(path)))
        .transpose()?;
    let diff = args
        .diff
        .as_deref()
        .map(|path| read_diff(cwd, path))
        .transpose()?;
    let dir = config.dir.clone();
    let progress = Progress::console(started);
    let scanned = Workspace::scanned_once(config, Arc::clone(&registry), &progress);
    let (workspace, snapshot) = scanned.map_err(|source| {
        progress.finish();
        RunError::Scan { dir, source }
    })?;
    let config = workspace.config();
    if args.write_cache {
        if let Some(dir) = &config.cache_dir {
            let key = crate::project::cache::key_of(config);
            crate::project::journal::save(dir, key, &snapshot.index).map_err(RunError::io(
                format!("write the cache in {}", dir.display()),
            ))?;
        }
    }
    let summary = !std::io::stderr().is_terminal();
    let mut found = match diff {
        None => {
            let scanned = scanned_line(&snapshot, progress.elapsed());
            progress.phase("detecting clones");
            let detecting = Instant::now();
            let clones = clones::all(&snapshot, config, &registry);
            let stats = snapshot.stats(config, &registry).clone();
            let detected = detecting.elapsed();
            progress.finish();
            if summary {
                crate::stderr_line(&scanned);
                crate::stderr_line(&clones_line(&stats, detected, false));
            }
            Found {
                clones,
                new: None,
                statistics: Statistics::Project(stats),
                notices: Vec::new(),
                store: None,
                inconsistent: Vec::new(),
            }
        }
        Some(bytes) => {
            progress.phase("checking the diff");
            let options = DiffOptions::of(config);
            let look_up = |query: Query| match &runtime {
                Some(runtime) => runtime.block_on(store_lookup(store.as_ref(), &query, &registry)),
                None => Ok(Default::default()),
            };
            let elsewhere = store
                .as_ref()
                .map(|store| (store, &look_up as &dyn Fn(Query) -> _));
            let answer = check_diff(
                config,
                &registry,
                &snapshot,
                &bytes,
                options,
                |_| Ok(()),
                elsewhere,
            );
            progress.finish();
            let answer = answer.map_err(RunError::Diff)?;
            if summary {
                crate::stderr_line(&diff_summary(&snapshot, &answer));
            }
            if answer.truncated {
                crate::stderr_line(&format!(
                    "dupcheck: warning: only the first duplications are listed (at most {}); the statistics count all {}",
                    crate::service::check::MAX_DUPLICATIONS,
                    answer.statistics.total_duplications
                ));
            }
            diff_found(answer)
        }
    };
    if let (Some(store), Some(runtime), Statistics::Project(_)) =
        (&store, &runtime, &found.statistics)
    {
        let (clones, outcome) = compare_with_store(store, runtime, &snapshot, config, &registry);
        found.clones.extend(clones);
        sort_largest_first(&mut found.clones);
        found.store = Some(outcome);
    }
    // (A project's comparison said why already.)
    if let (Some(StoreOutcome::Unavailable { kind }), Statistics::Diff(_)) =
        (&found.store, &found.statistics)
    {
        crate::stderr_line(&format!(
            "dupcheck: warning: other repositories were not compared: the store is unavailable ({kind})"
        ));
    }
    for notice in found.notices.iter().filter(|n| n.warning) {
        crate::stderr_line(&format!("dupcheck: warning: {}", notice.text));
    }
    let mut failed = false;
    if let Some(baseline) = &baseline {
        let new = baseline.new_clones(&found.clones);
        failed |= args.fail_on_new && new.iter().any(|&n| n);
        found.new = Some(new);
    }
    let threshold = args.threshold.map(|limit| {
        let above = found.statistics.percentage().0 > limit;
        failed |= above;
        (limit, above)
    });
    for reporter in unique(&args.reporter) {
        let text = match reporter {
            Reporter::Console => console(&found, threshold),
            Reporter::Json => json_report(&found, config),
            Reporter::Sarif => sarif_report(&found),
            Reporter::Markdown => markdown(&found, threshold),
            Reporter::Codequality => codequality_report(&found),
            Reporter::Rdjsonl => rdjsonl_report(&found, |rel| {
                let index = &snapshot.index;
                let i = index.file_by_rel(rel)?;
                // An ASCII file's columns are its byte columns already.
                let file = index.files.get(i as usize)?;
                (!file.text.is_ascii()).then(|| file.text.get())
            }),
        };
        emit(reporter, &text, args.output.as_deref(), cwd)?;
    }
    Ok(if failed {
        Outcome::Failed
    } else {
        Outcome::Fine
    })
}

/// The clones between the project and the other repositories of `store`,
/// and how the comparison went. A store that does not answer is a warning
/// on stderr and a line of the report, never an empty comparison.
fn compare_with_store(
    store: &across::Store,
    runtime: &tokio::runtime::Runtime,
    snapshot: &Snapshot,
    config: &Config,
    registry: &Registry,
) -> (Vec<Duplication>, StoreOutcome) {
    let compared = runtime.block_on(across::clones_elsewhere(
        store,
        &snapshot.index,
        config,
        registry,
    ));
    match compared {
        Ok(elsewhere) => {
            let outcome = StoreOutcome::Compared {
                clones: elsewhere.clones.len(),
                skipped: elsewhere.skipped_files,
                unchecked: elsewhere.unchecked,
            };
            (elsewhere.clones, outcome)
        }
        Err(e) => {
            crate::stderr_line(&format!(
                "dupcheck: warning: other repositories were not compared: {e}"
            ));
            (Vec::new(), StoreOutcome::Unavailable { kind: e.kind() })
        }
    }
}

/// `store`'s answer to `query`.
async fn store_lookup(
    store: Option<&across::Store>,
    query: &Query,
    registry: &Registry,
) -> Result<lookup::Found, StoreError> {
    match store {
        Some(store) => store.live.lookup(query, registry).await,
        None => Ok(lookup::Found::default()),
    }
}

/// The reporters in the order given, each once.
fn unique(reporters: &[Reporter]) -> Vec<Reporter> {
    let mut seen = Vec::new();
    for &r in reporters {
        if !seen.contains(&r) {
            seen.push(r);
        }
    }
    seen
}

/// Writes one report: console to stdout, the others to their file in
/// `output`, or to stdout without it.
fn emit(reporter: Reporter, text: &str, output: Option<&Path>, cwd: &Path) -> Result<(), RunError> {
    let file = match reporter {
        Reporter::Console => None,
        Reporter::Json => Some("dupcheck-report.json"),
        Reporter::Sarif => Some("dupcheck-report.sarif"),
        Reporter::Markdown => Some("dupcheck-report.md"),
        Reporter::Codequality => Some("gl-code-quality-report.json"),
        Reporter::Rdjsonl => Some("dupcheck-report.rdjsonl"),
    };
    match (file, output) {
        (Some(name), Some(dir)) => {
            let dir = cwd.join(dir);
            let path = dir.join(name);
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&path, text))
                .map_err(RunError::io(format!("write {}", path.display())))
        }
        _ => {
            let mut out = std::io::stdout().lock();
            // A closed stdout (`| head`) is not the report's failure.
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            Ok(())
        }
    }
}

/// The bytes of the diff at `path`, or of stdin for `-`.
fn read_diff(cwd: &Path, path: &Path) -> Result<Vec<u8>, RunError> {
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(RunError::io("read the diff from stdin"))?;
    } else {
        bytes = std::fs::read(cwd.join(path))
            .map_err(RunError::io(format!("read the diff {}", path.display())))?;
    }
    Ok(bytes)
}

/// The one-line summary of a diff report, for stderr off a terminal.
fn diff_summary(snapshot: &Snapshot, answer: &DiffAnswer) -> String {
    let s = &answer.statistics;
    format!(
        "dupcheck: scanned {} files in {:.2} s; the diff adds {} lines, {} duplicated ({}%): {} duplications",
        snapshot.index.files.len(),
        snapshot.duration.as_secs_f64(),
        s.added_lines,
        s.duplicated_added_lines,
        percent(s.percentage_duplicated),
        s.total_duplications,
    )
}

/// A diff's duplications as clones: the added place first.
fn diff_found(mut answer: DiffAnswer) -> Found {
    let notices = answer.notices();
    let inconsistent = std::mem::take(&mut answer.inconsistent);
    let store = answer.store.map(|status| match status {
        StoreStatus::Ok { skipped } => StoreOutcome::Compared {
            clones: answer
                .files
                .iter()
                .flat_map(|f| &f.duplications)
                .filter(|d| d.other.repository.is_some())
                .count(),
            skipped,
            unchecked: Vec::new(),
        },
        StoreStatus::Unavailable { kind } => StoreOutcome::Unavailable { kind },
    });
    let mut clones: Vec<Duplication> = answer
        .files
        .into_iter()
        .flat_map(|f| f.duplications)
        // The report has never given a diff's near-miss copies their
        // similarity (its JSON stays as it was): only the project's clones
        // carry one.
        .map(|d| Duplication { near: None, ..d })
        .collect();
    sort_largest_first(&mut clones);
    Found {
        clones,
        new: None,
        statistics: Statistics::Diff(answer.statistics),
        notices,
        store,
        inconsistent,
    }
}

/// What identifies a clone across runs: its content and the paths of its
/// two places, in order.
type CloneKey = (u64, String, String);

fn clone_key(hash: u64, a: &str, b: &str) -> CloneKey {
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    (hash, a.to_owned(), b.to_owned())
}

/// The clones of an earlier JSON report, counted by [`CloneKey`].
struct Baseline(HashMap<CloneKey, usize>);

impl Baseline {
    /// Per clone, whether it is new: not in the baseline, or more copies
    /// of it than the baseline had.
    fn new_clones(&self, clones: &[Duplication]) -> Vec<bool> {
        let mut left = self.0.clone();
        clones
            .iter()
            .map(|c| {
                let key = clone_key(c.content_hash, &c.place.named(), &c.other.named());
                match left.get_mut(&key) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                }
            })
            .collect()
    }
}

/// Reads a baseline: a JSON report of an earlier run.
fn read_baseline(path: &PathBuf) -> Result<Baseline, RunError> {
    let bad = |why: &str| {
        RunError::Input(format!(
            "baseline {} is not a dupcheck JSON report: {why}",
            path.display()
        ))
    };
    let text = std::fs::read_to_string(path).map_err(RunError::io(format!(
        "read the baseline {}",
        path.display()
    )))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    let clones = json["clones"]
        .as_array()
        .ok_or_else(|| bad("it has no \"clones\" array"))?;
    let mut counts = HashMap::default();
    for clone in clones {
        let hash = clone["fingerprint"]
            .as_str()
            .and_then(|h| u64::from_str_radix(h, 16).ok());
        // A place in another repository (`report --store`) is named with it.
        let named = |place: &Value| {
            let path = place["path"].as_str()?;
            Some(match place["repository"].as_str() {
                Some(repository) => format!("{repository}/{path}"),
                None => path.to_owned(),
            })
        };
        let (Some(hash), Some(a), Some(b)) =
            (hash, named(&clone["first"]), named(&clone["second"]))
        else {
            return Err(bad(
                "a clone lacks its \"fingerprint\" or the \"path\" of a place",
            ));
        };
        *counts.entry(clone_key(hash, &a, &b)).or_insert(0) += 1;
    }
    Ok(Baseline(counts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::matching::Span;
    use crate::engine::tokens::Position;
    use crate::service::answer::Place;

    fn clone(hash: u64, a: &str, b: &str) -> Duplication {
        let place = |path: &str| Place {
            path: path.into(),
            rel: path.into(),
            repository: None,
            format: "javascript".into(),
            span: Span {
                start: Position { line: 1, column: 1 },
                end: Position { line: 5, column: 2 },
            },
            fragment: None,
            symbol: None,
        };
        Duplication {
            place: place(a),
            other: place(b),
            tokens: 50,
            content_hash: hash,
            near: None,
            added_lines: None,
            renamed: Vec::new(),
        }
    }

    fn check(baseline: &[(u64, &str, &str)], now: &[(u64, &str, &str)], new: &[bool]) {
        let mut counts = HashMap::default();
        for &(h, a, b) in baseline {
            *counts.entry(clone_key(h, a, b)).or_insert(0) += 1;
        }
        let clones: Vec<Duplication> = now.iter().map(|&(h, a, b)| clone(h, a, b)).collect();
        assert_eq!(Baseline(counts).new_clones(&clones), new);
    }

    #[test]
    fn clones_match_the_baseline_by_content_and_paths_as_a_multiset() {
        check(&[(1, "a", "b")], &[(1, "b", "a")], &[false]);
        check(&[(1, "a", "b")], &[(2, "a", "b")], &[true]);
        check(
            &[(1, "a", "b")],
            &[(1, "a", "b"), (1, "a", "c")],
            &[false, true],
        );
        check(
            &[(1, "a", "b")],
            &[(1, "a", "b"), (1, "a", "b")],
            &[false, true],
        );
    }
}
