//! Diff checks: the duplications a diff adds to the codebase, the engine
//! call behind `POST /api/check-diff` (and every other interface that
//! checks a diff).
//!
//! In: the text of a diff as `git diff` prints it, made against DIR; the
//! [`Config`], the [`Registry`] and a [`Snapshot`]; and the admission of
//! the check once its size is known. Out: a [`DiffAnswer`] (per changed
//! file, the duplications of its new text that hold at least one added
//! line; the files skipped and why; warnings; statistics), or the
//! [`DiffRefusal`] that says why the diff was not checked.
//!
//! The codebase is taken as the diff leaves it: the snapshot's files that
//! the diff does not touch, as they are, and the changed files' new texts,
//! each rebuilt from its indexed version with the hunks applied (a new or
//! copied file is wholly added). The touched files' indexed versions are
//! excluded, so code the diff moves from one file to another, or copies
//! out of a file it deletes, is not reported; the new texts form a small
//! index of their own, so code the diff adds twice (two files, or twice
//! in one) is reported between the two places. Each changed file is parsed
//! whole in its format, so an edited function parses as it will be.
//!
//! Bases come from the index, never from the disk: a diff can only reach
//! the text of files the server indexes (not ignored or hidden ones), and
//! it is checked against the same version of them as the rest of the
//! codebase. The server may be at the diff's old commit (a review bot on
//! the target branch) or at its new one (a developer's working tree): an
//! indexed text the hunks do not apply to, but undo, is the new text. A
//! file whose indexed version matches neither side (the server is at
//! another commit), or that is not indexed, is checked from its hunks
//! alone, each parsed as a snippet at its lines, with a warning.
//!
//! Invariants: a diff never makes an error of one file (every file of the
//! diff is in `files` or `skipped`); the check takes its memory from the
//! [`Admission`](crate::service::check::Admission) pool by the size of the new texts
//! before building them, and all its parses and its matching end by one
//! deadline ([`budget_for_files`]); an answer lists at most
//! [`MAX_DUPLICATIONS`](crate::service::check::MAX_DUPLICATIONS) duplications and
//! [`MAX_FRAGMENT_BYTES`](crate::service::check::MAX_FRAGMENT_BYTES) of fragments,
//! while its statistics count them all.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::path::Path;
use std::sync::Arc;

use crate::engine::definitions::Definitions;
use crate::engine::diff::{self, ChangeKind, DiffError, FileChange, FileMode, Line};
use crate::engine::grammar::{Format, Registry};
use crate::engine::hash::{fnv1a, HashSet};
use crate::engine::index::{folder_of, FileMeta, FileView, Index, SourceFile, Views};
use crate::engine::matching::{snippet_matches, Exclusions, SnippetMatch};
use crate::engine::parse::{Budget, ParseError};
use crate::engine::snippet::tokenize_snippet_defined;
use crate::engine::stats::Percent;
use crate::engine::text::Text;
use crate::engine::tokens::{tokenize_defined, LineIndex, Mode, Normalization, Token, TokenClass};
use crate::project::config::Config;
use crate::project::generated::generated_head;
use crate::project::snapshot::Snapshot;
use crate::project::walk;
use crate::service::across::{store_indexes, Store, StoreIndex};
use crate::service::answer::{Duplication, Place};
use crate::service::check::{budget_for_files, listed, max_snippet_len, Refusal, StoreStatus};
use crate::service::findings::{findings, Finding, Notice};
use crate::service::inconsistent::{inconsistent_changes, Changed, InconsistentChange};
use crate::store::lookup::{self, Query};
use crate::store::StoreError;

/// Why a diff was not checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffRefusal {
    /// The text is not a diff, or a broken one.
    #[error("The diff cannot be read: {0}; send what `git diff` prints")]
    Diff(DiffError),
    /// The changed files' new texts would need more memory than one check
    /// may hold.
    #[error(
        "The diff is too large to check: the new texts of its files hold {len} bytes, more than the {} one check may parse; send a diff of fewer or smaller files",
        max_snippet_len()
    )]
    TooLarge {
        /// Bytes of the new texts (an upper bound).
        len: usize,
    },
    /// Parsing or matching ran out of the check's time.
    #[error("The diff is too complex to check: {0}; send a smaller diff")]
    TooComplex(String),
    /// Too many checks are running or waiting.
    #[error("Too many checks are running; retry shortly")]
    Busy,
    /// The server is stopping.
    #[error("The server is stopping")]
    Stopped,
}

impl From<Refusal> for DiffRefusal {
    fn from(refusal: Refusal) -> DiffRefusal {
        match refusal {
            Refusal::Busy => DiffRefusal::Busy,
            Refusal::TooLarge { len } => DiffRefusal::TooLarge { len },
            Refusal::Parse(ParseError::Stopped) => DiffRefusal::Stopped,
            Refusal::Parse(e) => DiffRefusal::TooComplex(e.to_string()),
            Refusal::MatchTimeout => DiffRefusal::TooComplex(MATCH_TIMEOUT.to_owned()),
        }
    }
}

const MATCH_TIMEOUT: &str = "its files match too many places to compare in time";

/// Why a file of the diff was not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Skip {
    /// The diff deletes it (its indexed version is gone from the codebase).
    Deleted,
    /// A binary file: no lines.
    Binary,
    /// Only its mode changes: its text stays as indexed.
    ModeOnly,
    /// A symbolic link: its text is its target.
    Symlink,
    /// A submodule: its text is a commit id.
    Submodule,
    /// A path that leaves DIR (`..`, absolute).
    OutsideDirectory,
    /// No known format by its name or shebang line.
    UnknownFormat,
    /// A known format that the server does not scan (`--format`).
    FormatNotScanned,
    /// Matched by `--ignore`.
    Ignored,
    /// Not indexed and not in the diff: a renamed or mode-changed file the
    /// server has no text of.
    NotIndexed,
    /// The diff names it more than once; its first change was checked.
    Repeated,
    /// Its new text is larger than `--max-size`.
    TooLarge,
    /// Its new text has more lines than `--max-lines`.
    TooManyLines,
    /// Its lines in the diff are not UTF-8.
    NotUtf8,
    /// Its parse needed more memory than the check's budget.
    ParseMemory,
    /// Its new text is generated or minified, as the scan skips it.
    Generated,
}

impl Skip {
    /// The camelCase name answers use (those the scan also has are
    /// spelled as in `/api/health`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Skip::Deleted => "deleted",
            Skip::Binary => "binary",
            Skip::ModeOnly => "modeOnly",
            Skip::Symlink => "symlink",
            Skip::Submodule => "submodule",
            Skip::OutsideDirectory => "outsideDirectory",
            Skip::UnknownFormat => "unknownFormat",
            Skip::FormatNotScanned => "formatNotScanned",
            Skip::Ignored => "ignored",
            Skip::NotIndexed => "notIndexed",
            Skip::Repeated => "repeated",
            Skip::TooLarge => "tooLarge",
            Skip::TooManyLines => "tooManyLines",
            Skip::NotUtf8 => "notUtf8",
            Skip::ParseMemory => "parseMemory",
            Skip::Generated => "generated",
        }
    }
}

/// A file of the diff that was not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// Its path as the diff names it (the new one, or the old one of a
    /// deleted file).
    pub path: String,
    /// Why.
    pub reason: Skip,
}

/// A file checked less well than the others: from its hunks alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Warning {
    /// Its path as the diff names it.
    pub path: String,
    /// What happened, as a sentence.
    pub message: String,
}

/// A changed file, checked.
#[derive(Debug)]
pub(crate) struct CheckedFile {
    /// Its path after the diff, relative to DIR.
    pub path: String,
    /// Its format's name.
    pub format: String,
    /// The listed duplications of its added code, in the answer's order
    /// (docs/api.md): each a place of the new text (at `path`), the
    /// codebase place it duplicates, and its `added_lines`.
    pub duplications: Vec<Duplication>,
    /// Its new text, tokens and all.
    file: Arc<SourceFile>,
}

impl CheckedFile {
    /// The new text (the hunks alone, at their lines, for a file checked
    /// from them).
    pub(crate) fn text(&self) -> Text<'_> {
        self.file.text.get()
    }
}

/// The `statistics` of a diff check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DiffStats {
    /// Duplications in all (listed or not).
    pub total_duplications: u64,
    /// Lines the diff adds to the checked files.
    pub added_lines: u64,
    /// Added lines inside at least one duplication.
    pub duplicated_added_lines: u64,
    /// `100 × duplicatedAddedLines / addedLines`, 2 decimals.
    pub percentage_duplicated: Percent,
}

/// What a diff adds that duplicates code.
#[derive(Debug)]
pub(crate) struct DiffAnswer {
    /// The changed files checked, by path.
    pub files: Vec<CheckedFile>,
    /// The files not checked, by path.
    pub skipped: Vec<Skipped>,
    /// The files checked from their hunks alone, by path.
    pub warnings: Vec<Warning>,
    /// Statistics of all the duplications.
    pub statistics: DiffStats,
    /// Whether some duplications were left out of `files` (the caps).
    pub truncated: bool,
    /// How the store answered, when there is one.
    pub store: Option<StoreStatus>,
    /// The clones the diff changes in one copy and not alike in another.
    pub inconsistent: Vec<InconsistentChange>,
}

impl DiffAnswer {
    /// The listed duplications as findings (SARIF, rdjsonl): one per place
    /// of added code, whose related locations are the codebase places it
    /// duplicates.
    pub(crate) fn findings(&self) -> Vec<Finding> {
        let mut all = findings(self.files.iter().flat_map(|f| &f.duplications));
        all.extend(self.inconsistent.iter().map(|change| {
            let format = self
                .files
                .iter()
                .find(|f| f.path == change.rel)
                .map_or("", |f| f.format.as_str());
            Finding::of_inconsistent(change, format)
        }));
        all
    }

    /// The skipped files and the warnings, as notices of a SARIF log.
    pub(crate) fn notices(&self) -> Vec<Notice> {
        let skipped = self.skipped.iter().map(|s| Notice {
            path: Some(s.path.clone()),
            text: format!("{} was not checked: {}.", s.path, s.reason.name()),
            warning: false,
        });
        let warnings = self.warnings.iter().map(|w| Notice {
            path: Some(w.path.clone()),
            text: w.message.clone(),
            warning: true,
        });
        skipped.chain(warnings).collect()
    }

    /// The new text of the checked file at `path`.
    pub(crate) fn text_of(&self, path: &str) -> Option<Text<'_>> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(CheckedFile::text)
    }
}

/// What a diff check looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    /// Duplications equal in this mode.
    pub mode: Mode,
    /// Near-miss copies too (the server's `--similarity`).
    pub near_miss: bool,
}

impl DiffOptions {
    /// The server's defaults: `--mode`, and near-miss copies unless
    /// `--no-near-miss`.
    pub(crate) fn of(config: &Config) -> DiffOptions {
        DiffOptions {
            mode: config.mode,
            near_miss: config.near_miss,
        }
    }
}

/// Checks the diff `diff` (UTF-8 expected; files whose lines are not are
/// skipped) against `snapshot`, for the duplications `options` asks for.
/// `admit` is called once, with the size the check will hold, before the
/// new texts are built; what it returns is held until the check ends.
/// Blocking: run it off the reactor.
/// With `elsewhere` (a store, and how to reach it), the added code's
/// duplications in other repositories are found too.
pub(crate) fn check_diff<G>(
    config: &Config,
    registry: &Registry,
    snapshot: &Snapshot,
    diff: &[u8],
    options: DiffOptions,
    admit: impl FnOnce(usize) -> Result<G, Refusal>,
    elsewhere: Option<Elsewhere<'_>>,
) -> Result<DiffAnswer, DiffRefusal> {
    let mode = options.mode;
    let text = String::from_utf8_lossy(diff);
    let lossy = matches!(text, Cow::Owned(_));
    let changes = diff::parse(&text).map_err(DiffRefusal::Diff)?;
    drop(text);
    let index = &snapshot.index;
    let plan = plan(&changes, config, registry, index, lossy);
    let len = plan.len(index);
    if len > max_snippet_len() {
        return Err(DiffRefusal::TooLarge { len });
    }
    let _admitted = admit(len)?;
    let budget = budget_for_files(len);
    let Plan {
        entries,
        mut skipped,
        excluded,
    } = plan;
    let mut warnings = Vec::new();
    let mut built: Vec<Built> = Vec::with_capacity(entries.len());
    for entry in entries {
        match build(entry, config, registry, index, &budget, &mut warnings)? {
            Ok(file) => built.push(file),
            Err(skip) => skipped.push(skip),
        }
    }
    let changed = Index::build(
        built.iter().map(|b| Arc::clone(&b.file)).collect(),
        registry,
        index.winnow,
    );
    // Other repositories' files, looked up for the files that add code.
    let (others, store) = match elsewhere {
        None => (Vec::new(), None),
        Some((store, look_up)) => {
            let adding: Vec<&SourceFile> = built
                .iter()
                .filter(|b| !b.added.is_empty())
                .map(|b| &*b.file)
                .collect();
            let near_miss = options.near_miss;
            match store_indexes(&adding, store, near_miss, registry, index.winnow, look_up) {
                Ok((others, skipped)) => (others, Some(StoreStatus::Ok { skipped })),
                Err(e) => (
                    Vec::new(),
                    Some(StoreStatus::Unavailable { kind: e.kind() }),
                ),
            }
        }
    };
    let inconsistent =
        changes_left_behind(&built, index, &excluded, config, registry, options, &budget)?;
    let mut files = Vec::with_capacity(built.len());
    let (mut total, mut added, mut duplicated) = (0, 0, 0);
    for b in built {
        let other = others
            .iter()
            .find(|(family, _)| *family == b.file.family)
            .map(|(_, index)| index);
        let found = duplications(
            &b, config, options, index, &changed, &excluded, other, &budget,
        )?;
        total += found.len() as u64;
        added += b.added.len() as u64;
        duplicated += covered_added(&b.added, &found);
        files.push((b, found));
    }
    let statistics = DiffStats {
        total_duplications: total,
        added_lines: added,
        duplicated_added_lines: duplicated,
        percentage_duplicated: Percent::of(duplicated, added),
    };
    let (files, truncated) = list(files, mode, registry);
    skipped.sort_by(|x, y| (&x.path, x.reason).cmp(&(&y.path, y.reason)));
    warnings.sort_by(|x: &Warning, y: &Warning| x.path.cmp(&y.path));
    Ok(DiffAnswer {
        files,
        skipped,
        warnings,
        statistics,
        truncated,
        store,
        inconsistent,
    })
}

/// The clones whose copies the diff changed in one place and not alike in
/// another ([`inconsistent_changes`]), for the files whose text before the
/// diff is known; `excluded` are the indexed files the diff replaces or
/// deletes.
fn changes_left_behind(
    built: &[Built],
    index: &Index,
    excluded: &[u32],
    config: &Config,
    registry: &Registry,
    options: DiffOptions,
    budget: &Budget,
) -> Result<Vec<InconsistentChange>, DiffRefusal> {
    let changed: Vec<Changed<'_>> = built
        .iter()
        .filter_map(|b| {
            let (old, deleted) = b.old.as_ref()?;
            Some(Changed {
                old: Arc::clone(old),
                new: &b.file,
                deleted,
                added: &b.added,
            })
        })
        .collect();
    // The codebase before the diff: the index without what the diff
    // replaces or deletes, nor the new texts of a server already at the
    // diff's new commit; the changed files' old texts stand for them.
    let mut before: Vec<u32> = excluded.to_vec();
    before.extend(built.iter().filter_map(|b| index.file_by_rel(&b.rel)));
    before.sort_unstable();
    before.dedup();
    inconsistent_changes(
        &changed,
        index,
        &before,
        registry,
        options.mode,
        config.thresholds,
        budget.deadline,
    )
    .map_err(|_| DiffRefusal::TooComplex(MATCH_TIMEOUT.to_owned()))
}

/// The store a diff check reads, and how it reaches it (blocking).
pub(crate) type Elsewhere<'a> = (
    &'a Store,
    &'a dyn Fn(Query) -> Result<lookup::Found, StoreError>,
);

/// The checked files by path, each with the first of its duplications
/// that the answer's caps leave room for; and whether some were left out.
fn list(
    mut files: Vec<(Built, Vec<Found>)>,
    mode: Mode,
    registry: &Registry,
) -> (Vec<CheckedFile>, bool) {
    files.sort_by(|x, y| x.0.rel.cmp(&y.0.rel));
    let lens = files
        .iter()
        .flat_map(|(_, found)| found.iter().map(Found::fragment_len));
    let mut room = listed(lens);
    let total: usize = files.iter().map(|(_, found)| found.len()).sum();
    let truncated = room < total;
    // Each file's text is read back once for the answer.
    let views = Views::default();
    let files = files
        .iter()
        .map(|(b, found)| {
            let keep = room.min(found.len());
            room -= keep;
            let format = &registry.get(b.file.format).name;
            let new = b.file.view();
            CheckedFile {
                duplications: found
                    .iter()
                    .take(keep)
                    .map(|f| f.listed(&new, &views, &b.rel, format, mode, registry))
                    .collect(),
                format: format.clone(),
                path: b.rel.clone(),
                file: Arc::clone(&b.file),
            }
        })
        .collect();
    (files, truncated)
}

/// A changed file to check.
struct Entry<'c> {
    change: &'c FileChange,
    /// Its path after the diff, relative to DIR, normalized.
    rel: String,
    /// Its format by name, when its name tells.
    format: Option<&'c Format>,
    /// Its indexed version before the diff (the old path's), if any.
    base: Option<u32>,
    /// Its indexed version at the new path, if any: the new text itself
    /// when the server is at the diff's new commit.
    head: Option<u32>,
}

/// What the diff's files come to before any text is built.
struct Plan<'c> {
    entries: Vec<Entry<'c>>,
    skipped: Vec<Skipped>,
    /// Indexed files the diff replaces or deletes, sorted.
    excluded: Vec<u32>,
}

impl Plan<'_> {
    /// The most bytes the new texts can hold: each base and every line of
    /// its hunks.
    fn len(&self, index: &Index) -> usize {
        self.entries
            .iter()
            .map(|e| {
                let len = |id: Option<u32>| id.map_or(0, |id| index.files[id as usize].text.len());
                let base = len(e.base).max(len(e.head));
                let lines: usize = e
                    .change
                    .hunks
                    .iter()
                    .flat_map(|h| &h.lines)
                    .map(|l| match l {
                        Line::Context(t) | Line::Added(t) | Line::Removed(t) => t.len(),
                    })
                    .sum();
                base.saturating_add(lines)
            })
            .fold(0, usize::saturating_add)
    }
}

/// Sorts the diff's files into those to check and those skipped, and
/// finds the indexed files the diff replaces.
fn plan<'c>(
    changes: &'c [FileChange],
    config: &Config,
    registry: &'c Registry,
    index: &Index,
    lossy: bool,
) -> Plan<'c> {
    let mut plan = Plan {
        entries: Vec::new(),
        skipped: Vec::new(),
        excluded: Vec::new(),
    };
    let mut seen = HashSet::new();
    for change in changes {
        let mut skip = |reason| {
            plan.skipped.push(Skipped {
                path: change.path().to_owned(),
                reason,
            })
        };
        let old = change.old_path.as_deref().map(inside_dir);
        let new = change.new_path.as_deref().map(inside_dir);
        if matches!(old, Some(None)) || matches!(new, Some(None)) {
            skip(Skip::OutsideDirectory);
            continue;
        }
        let (old, new) = (old.flatten(), new.flatten());
        let indexed = |rel: &Option<String>| rel.as_deref().and_then(|r| index.file_by_rel(r));
        // The indexed versions this change replaces: a copy leaves its
        // source, a binary change's text is unknown, a mode change keeps it.
        let replaced = match change.kind {
            ChangeKind::ModeOnly => vec![],
            ChangeKind::Binary if new.is_some() => vec![],
            ChangeKind::Copied => vec![indexed(&new)],
            _ => vec![indexed(&old), indexed(&new)],
        };
        plan.excluded.extend(replaced.into_iter().flatten());
        let reason = match (change.kind, change.mode) {
            (ChangeKind::Deleted, _) => Some(Skip::Deleted),
            (ChangeKind::Binary, _) => Some(Skip::Binary),
            (ChangeKind::ModeOnly, _) => Some(Skip::ModeOnly),
            (_, Some(FileMode::Symlink)) => Some(Skip::Symlink),
            (_, Some(FileMode::Submodule)) => Some(Skip::Submodule),
            _ => None,
        };
        if let Some(reason) = reason {
            skip(reason);
            continue;
        }
        let Some(rel) = new else {
            skip(Skip::Deleted);
            continue;
        };
        let format = registry.for_path(Path::new(&rel));
        let reason = match format {
            None if Path::new(&rel).extension().is_some() => Some(Skip::UnknownFormat),
            Some(f) if !config.formats.contains(&f.id) => Some(Skip::FormatNotScanned),
            _ if config
                .ignore
                .matched(config.dir.join(&rel), false)
                .is_ignore() =>
            {
                Some(Skip::Ignored)
            }
            _ if lossy && has_replacement(change) => Some(Skip::NotUtf8),
            _ if !seen.insert(rel.clone()) => Some(Skip::Repeated),
            _ => None,
        };
        if let Some(reason) = reason {
            skip(reason);
            continue;
        }
        let base = match change.kind {
            ChangeKind::Added => None,
            _ => indexed(&old),
        };
        let head = index.file_by_rel(&rel);
        plan.entries.push(Entry {
            change,
            rel,
            format,
            base,
            head,
        });
    }
    plan.excluded.sort_unstable();
    plan.excluded.dedup();
    plan
}

/// `path` relative to DIR, `/`-separated, without `.` and empty parts;
/// `None` when it is absolute or leaves DIR (`..`).
fn inside_dir(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return None;
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            _ => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Whether a hunk line holds U+FFFD, what bytes that are not UTF-8 became.
fn has_replacement(change: &FileChange) -> bool {
    change.hunks.iter().flat_map(|h| &h.lines).any(|l| match l {
        Line::Context(t) | Line::Added(t) | Line::Removed(t) => t.contains('\u{FFFD}'),
    })
}

/// A changed file's new text, tokenized.
struct Built {
    rel: String,
    added: Vec<u32>,
    file: Arc<SourceFile>,
    /// Its text before the diff (the indexed file, or the new text with
    /// the diff undone), and the old-side lines the diff deletes; `None`
    /// for a new file and one checked from its hunks alone.
    old: Option<(Arc<SourceFile>, Vec<u32>)>,
}

/// The new text of `entry`: its indexed base with the hunks applied, or
/// its hunks alone (with a warning) when the base does not match or is not
/// indexed; tokenized within `budget`. `Ok(Err(_))` when it is skipped.
fn build(
    entry: Entry<'_>,
    config: &Config,
    registry: &Registry,
    index: &Index,
    budget: &Budget,
    warnings: &mut Vec<Warning>,
) -> Result<Result<Built, Skipped>, DiffRefusal> {
    let Entry {
        change,
        rel,
        format,
        base,
        head,
    } = entry;
    let skipped = |reason| {
        Ok(Err(Skipped {
            path: change.path().to_owned(),
            reason,
        }))
    };
    let text_of = |id: Option<u32>| id.map(|id| index.files[id as usize].text.get());
    let applied = match (change.kind, text_of(base)) {
        (ChangeKind::Added, _) => change.apply(None).map_err(|e| e.to_string()),
        (_, Some(text)) => change.apply(Some(&text)).map_err(|e| e.to_string()),
        (_, None) => Err(format!(
            "{} is not indexed (not in the working directory, or not scanned)",
            change.old_path.as_deref().unwrap_or(&rel)
        )),
    };
    // The server may be at the diff's new commit (a developer's working
    // tree): the indexed text at the new path is then the new text.
    // Either way, the text before the diff is known: the base's, or the
    // new text with the diff undone.
    let mut before: Option<Before> = None;
    let applied = match applied {
        Ok(applied) => {
            before = base.map(|id| Before::Indexed(id, applied.deleted.clone()));
            Ok(applied)
        }
        Err(why) => (|| -> Result<diff::Applied, String> {
            let head = text_of(head).ok_or_else(|| why.clone())?;
            let undone = change.reversed().apply(Some(&head)).map_err(|_| why)?;
            before = Some(Before::Undone(undone.text, undone.added.clone()));
            Ok(diff::Applied {
                text: head.into_owned(),
                added: undone.deleted,
                deleted: undone.added,
            })
        })(),
    };
    if matches!(change.kind, ChangeKind::Added | ChangeKind::Copied) {
        before = None;
    }
    let (text, mut added, pieces) = match applied {
        Ok(applied) => (applied.text, applied.added, None),
        Err(why) => {
            let hunks = change.new_side();
            if hunks.is_empty() {
                return skipped(Skip::NotIndexed);
            }
            warnings.push(Warning {
                path: change.path().to_owned(),
                message: format!("{why}; its hunks were checked alone"),
            });
            let (text, added, pieces) = hunks_at_their_lines(&hunks);
            (text, added, Some(pieces))
        }
    };
    if text.len() as u64 > config.max_size.min(u64::from(u32::MAX)) {
        return skipped(Skip::TooLarge);
    }
    let lines = LineIndex::new(&text);
    if config
        .max_lines
        .is_some_and(|max| u64::from(lines.editor_lines(&text)) > max)
    {
        return skipped(Skip::TooManyLines);
    }
    if text.contains('\0') {
        return skipped(Skip::Binary);
    }
    let format = match format {
        Some(f) => f,
        None => match registry.for_shebang(text.as_bytes()) {
            Some(f) if config.formats.contains(&f.id) => f,
            Some(_) => return skipped(Skip::FormatNotScanned),
            None => return skipped(Skip::UnknownFormat),
        },
    };
    let generated = !config.include_generated;
    if generated && walk::minified(&text) {
        return skipped(Skip::Generated);
    }
    if change.kind == ChangeKind::Copied && pieces.is_none() {
        // A copy is new code, all of it.
        added = (1..=lines.editor_lines(&text)).collect();
    }
    let parsed = match &pieces {
        None => tokenize_defined(format, &text, &config.normalization, budget),
        Some(pieces) => tokenize_pieces(format, &text, pieces, &config.normalization, &rel, budget),
    };
    let (tokens, definitions) = match parsed {
        Ok(parsed) => parsed,
        Err(ParseError::Memory) => return skipped(Skip::ParseMemory),
        Err(ParseError::Stopped) => return Err(DiffRefusal::Stopped),
        Err(ParseError::Timeout) => {
            return Err(DiffRefusal::TooComplex(format!(
                "parsing its files took longer than its time budget ({rel} was not done)"
            )))
        }
    };
    if generated && generated_head(format, config, &text, &tokens) {
        return skipped(Skip::Generated);
    }
    let path = if config.absolute {
        config.dir.join(&rel).to_string_lossy().into_owned()
    } else {
        rel.clone()
    };
    let meta = FileMeta::of(&text, text.len() as u64, 0);
    let file = SourceFile::with_tokens(path, rel.clone(), format, text, tokens, meta)
        .with_definitions(definitions);
    // The text before the diff, for inconsistent changes: the indexed one,
    // or the undone one tokenized here (within the same budget).
    let old = match before.filter(|_| pieces.is_none()) {
        Some(Before::Indexed(id, deleted)) => {
            Some((Arc::clone(&index.files[id as usize]), deleted))
        }
        Some(Before::Undone(text, deleted)) => {
            let old_rel = change.old_path.as_deref().map_or(rel.clone(), |p| {
                inside_dir(p).unwrap_or_else(|| rel.clone())
            });
            match tokenize_defined(format, &text, &config.normalization, budget) {
                Ok((tokens, definitions)) => {
                    let meta = FileMeta::of(&text, text.len() as u64, 0);
                    let old = SourceFile::with_tokens(
                        old_rel.clone(),
                        old_rel,
                        format,
                        text,
                        tokens,
                        meta,
                    )
                    .with_definitions(definitions);
                    Some((Arc::new(old), deleted))
                }
                Err(ParseError::Stopped) => return Err(DiffRefusal::Stopped),
                Err(_) => None,
            }
        }
        None => None,
    };
    Ok(Ok(Built {
        rel,
        added,
        file: Arc::new(file),
        old,
    }))
}

/// A changed file's text before the diff.
enum Before {
    /// The indexed file (the diff applied to it), and the lines the diff
    /// deletes.
    Indexed(u32, Vec<u32>),
    /// The indexed text was the new one: the old text, the diff undone,
    /// and the lines the diff deletes.
    Undone(String, Vec<u32>),
}

/// The new sides of hunks placed at their lines (empty lines between
/// them), the added lines, and each hunk's byte range in that text.
fn hunks_at_their_lines(
    hunks: &[diff::NewSideHunk],
) -> (String, Vec<u32>, Vec<std::ops::Range<usize>>) {
    let mut text = String::new();
    let mut line = 1u32;
    let mut added = Vec::new();
    let mut pieces = Vec::with_capacity(hunks.len());
    for hunk in hunks {
        if !text.is_empty() && !text.ends_with('\n') {
            // After a last line without `\n`: nothing can follow it.
            break;
        }
        while line < hunk.start_line {
            text.push('\n');
            line += 1;
        }
        let start = text.len();
        text.push_str(&hunk.text);
        pieces.push(start..text.len());
        line = line.saturating_add(hunk.text.matches('\n').count() as u32);
        added.extend(&hunk.added);
    }
    (text, added, pieces)
}

/// The tokens of each piece of `text` (hunks cut out of their file),
/// parsed as snippets, with a token between two pieces that equals no
/// other: no run joins two hunks over the lines between them.
fn tokenize_pieces(
    format: &Format,
    text: &str,
    pieces: &[std::ops::Range<usize>],
    normalization: &Normalization,
    rel: &str,
    budget: &Budget,
) -> Result<(Vec<Token>, Definitions), ParseError> {
    let mut tokens = Vec::new();
    let mut definitions = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            let gap = format!("\0$gap {rel} {i}");
            let at = piece.start as u32;
            // Of class Other: its text is its identity in every mode.
            tokens.push(Token::new(fnv1a(gap.as_bytes()), TokenClass::Other, at, at));
        }
        let shift = piece.start as u32;
        let (cut, defined) =
            tokenize_snippet_defined(format, &text[piece.clone()], normalization, budget)?;
        tokens.extend(cut.into_iter().map(|t| t.shifted(shift)));
        definitions.extend(defined.as_slice().iter().map(|d| d.shifted(shift)));
    }
    Ok((tokens, Definitions::sorted(definitions)))
}

/// A duplication found, before it is listed.
struct Found {
    m: SnippetMatch,
    /// The file the codebase location is in.
    file: Arc<SourceFile>,
    /// Its repository, when it is another repository's (in the store).
    repository: Option<Arc<str>>,
    added_lines: u32,
}

impl Found {
    /// The answer's order (docs/api.md): snippet line, longer first, file, codebase line.
    #[allow(clippy::type_complexity)] // One key, part by part.
    fn order(&self) -> (u32, Reverse<u32>, Option<&str>, &str, u32, u32, u32) {
        (
            self.m.snippet.start.line,
            Reverse(self.m.run.len),
            self.repository.as_deref(),
            self.file.path.as_str(),
            self.m.codebase.start.line,
            self.m.run.a,
            self.m.run.b,
        )
    }

    fn fragment_len(&self) -> usize {
        let run = self.m.run;
        self.file.fragment_len(run.b, run.b + run.len - 1)
    }

    /// The duplication as listed: in the changed file at `rel` (which
    /// answers report relative to DIR, as they report the file), of format
    /// `format`.
    /// `new` is the changed file's new text, which the match's snippet
    /// side indexes.
    fn listed<'a>(
        &'a self,
        new: &FileView<'_>,
        views: &Views<'a>,
        rel: &str,
        format: &str,
        mode: Mode,
        registry: &Registry,
    ) -> Duplication {
        let place = Place {
            path: rel.to_owned(),
            rel: rel.to_owned(),
            repository: None,
            format: format.to_owned(),
            span: self.m.snippet,
            fragment: None,
            symbol: new.symbol_at(self.m.snippet.start, self.m.snippet.end),
        };
        let mut d = Duplication {
            added_lines: Some(self.added_lines),
            ..Duplication::of_match(
                place,
                self.m.clone(),
                (&new.file.tokens, new),
                &views.of(&self.file),
                registry,
                mode,
            )
        };
        d.other.repository = self.repository.as_ref().map(|r| r.to_string());
        d
    }
}

/// The duplications of `b`'s added code: against the snapshot without the
/// files the diff replaces, against the diff's own new texts (itself
/// included, where the two places do not overlap), and against `other`
/// repositories' files (in the store) when given; in the answer's order
/// (docs/api.md).
#[allow(clippy::too_many_arguments)] // Each is one part of the question.
fn duplications(
    b: &Built,
    config: &Config,
    options: DiffOptions,
    index: &Index,
    changed: &Index,
    excluded: &[u32],
    other: Option<&StoreIndex>,
    budget: &Budget,
) -> Result<Vec<Found>, DiffRefusal> {
    if b.added.is_empty() {
        return Ok(Vec::new());
    }
    let file = &b.file;
    let text = file.text.get();
    let local_folder = config.skip_local.then(|| folder_of(&b.rel));
    let check = |index: &Index, exclude: Exclusions<'_>| {
        snippet_matches(
            index,
            file.family,
            &text,
            &file.tokens,
            options.mode,
            config.thresholds,
            exclude,
            options.near_miss.then_some(config.similarity),
            budget.deadline,
        )
        .map_err(|_| DiffRefusal::TooComplex(MATCH_TIMEOUT.to_owned()))
    };
    let before = check(
        index,
        Exclusions {
            local_folder,
            files: excluded,
            ..Exclusions::default()
        },
    )?;
    let within = check(
        changed,
        Exclusions {
            local_folder,
            itself: changed.file_by_rel(&b.rel),
            ..Exclusions::default()
        },
    )?;
    let elsewhere = match other {
        Some(other) => check(&other.index, other.exclusions())?,
        None => Vec::new(),
    };
    let sources = [
        (index, before, None),
        (changed, within, None),
        (other.map_or(index, |o| &o.index), elsewhere, other),
    ];
    let mut found: Vec<Found> = sources
        .into_iter()
        .flat_map(|(index, matches, other)| {
            matches.into_iter().filter_map(move |m| {
                let added_lines = added_within(&b.added, m.snippet.start.line, m.snippet.end.line);
                let file = Arc::clone(&index.files[m.file as usize]);
                (added_lines > 0).then(|| Found {
                    repository: other.and_then(|o| o.repository_of(&file)),
                    file,
                    m,
                    added_lines,
                })
            })
        })
        .collect();
    found.sort_by(|x, y| x.order().cmp(&y.order()));
    Ok(found)
}

/// How many of `added` (ascending) are within `first..=last`.
fn added_within(added: &[u32], first: u32, last: u32) -> u32 {
    let from = added.partition_point(|&l| l < first);
    let to = added.partition_point(|&l| l <= last);
    (to - from) as u32
}

/// How many of `added` lie inside at least one duplication of `found`.
fn covered_added(added: &[u32], found: &[Found]) -> u64 {
    let mut ranges: Vec<(u32, u32)> = found
        .iter()
        .map(|f| (f.m.snippet.start.line, f.m.snippet.end.line))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let inside = |line: u32| {
        let i = merged.partition_point(|&(start, _)| start <= line);
        i > 0 && merged[i - 1].1 >= line
    };
    added.iter().filter(|&&line| inside(line)).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_dir() {
        assert_eq!(inside_dir("src/a.js").as_deref(), Some("src/a.js"));
        assert_eq!(inside_dir("./src//a.js").as_deref(), Some("src/a.js"));
        assert_eq!(inside_dir("../a.js"), None);
        assert_eq!(inside_dir("src/../../a.js"), None);
        assert_eq!(inside_dir("src/../a.js"), None);
        assert_eq!(inside_dir("/etc/passwd"), None);
        assert_eq!(inside_dir("."), None);
        assert_eq!(inside_dir("a\\..\\b.js"), None);
    }

    #[test]
    fn hunks_alone_keep_their_lines() {
        let hunk = |start_line, text: &str, added: &[u32]| diff::NewSideHunk {
            start_line,
            text: text.to_owned(),
            added: added.to_vec(),
        };
        let (text, added, pieces) =
            hunks_at_their_lines(&[hunk(2, "a\nb\n", &[3]), hunk(6, "c\nd", &[6, 7])]);
        assert_eq!(text, "\na\nb\n\n\nc\nd");
        assert_eq!(added, [3, 6, 7]);
        assert_eq!(pieces, [1..5, 7..10]);
        let lines = LineIndex::new(&text);
        assert_eq!(lines.line_of(pieces[1].start as u32), 6);
    }

    #[test]
    fn hunks_alone_are_tokenized_apart_with_a_token_between_that_matches_nothing() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").expect("js");
        let hunk = |start_line, text: &str| diff::NewSideHunk {
            start_line,
            text: text.to_owned(),
            added: vec![],
        };
        let (text, _, pieces) = hunks_at_their_lines(&[hunk(1, "f(a);\n"), hunk(4, "g(b);\n")]);
        let budget = Budget::for_file(text.len());
        let (tokens, _) = tokenize_pieces(
            js,
            &text,
            &pieces,
            &Normalization::default(),
            "x.js",
            &budget,
        )
        .unwrap();
        let texts: Vec<&str> = tokens
            .iter()
            .map(|t| &text[t.start as usize..t.end() as usize])
            .collect();
        assert_eq!(
            texts,
            ["f", "(", "a", ")", ";", "", "g", "(", "b", ")", ";"]
        );
        let (other, _) = tokenize_pieces(
            js,
            &text,
            &pieces,
            &Normalization::default(),
            "y.js",
            &budget,
        )
        .unwrap();
        for mode in [Mode::Strict, Mode::Mild, Mode::Weak] {
            assert_ne!(tokens[5].id_in(mode), other[5].id_in(mode));
            assert_eq!(tokens[4].id_in(mode), other[4].id_in(mode));
        }
    }

    #[test]
    fn added_lines_are_counted_within_ranges() {
        assert_eq!(added_within(&[2, 3, 7, 9], 3, 7), 2);
        assert_eq!(added_within(&[2, 3, 7, 9], 4, 6), 0);
        assert_eq!(added_within(&[], 1, 100), 0);
    }
}
