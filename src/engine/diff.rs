//! Unified diffs as `git diff` prints them: which files change, their hunks,
//! and each file's new text rebuilt from its base.
//!
//! In: the text of a diff, in git's extended format (several files, new,
//! deleted, renamed and copied files, mode changes, binary files, quoted
//! paths) or a plain unified diff (`diff -u`). Out: one [`FileChange`] per
//! file, in the diff's order; [`FileChange::apply`] rebuilds a file's new
//! text from its base text with the added lines (new-side numbers) and the
//! deleted lines (old-side numbers); [`FileChange::reversed`] undoes it (to
//! find the added lines in a text already at the new side);
//! [`FileChange::new_side`] gives the new side of the hunks alone, for when
//! neither side matches.
//!
//! The diff is cut into one section per `diff --git` line here, and each
//! section is parsed by `diffy` (hunks, paths, extended headers). Hunks are
//! applied here, strictly at the lines their headers name: `diffy::apply`
//! would look for a hunk's context anywhere in the file, and a hunk applied
//! elsewhere would make every line number after it wrong.
//!
//! Invariants: parsing and applying never panic, whatever the input (test
//! `mangled_diffs_never_panic`); lines are 1-based; line texts keep their
//! `\n`, which only a file's last line may lack (`\ No newline at end of
//! file`); paths are relative to the repository, without git's `a/` and
//! `b/` prefixes.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use diffy::patch_set::{FileOperation, FilePatch, ParseOptions, PatchKind, PatchSet};

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    /// The path before the change; `None` for an added file.
    pub old_path: Option<String>,
    /// The path after the change; `None` for a deleted file.
    pub new_path: Option<String>,
    /// What the change does.
    pub kind: ChangeKind,
    /// The file's mode after the change (before it, for a deleted file),
    /// when the headers say it. A symlink's "text" is its target and a
    /// submodule's a commit id: neither is code.
    pub mode: Option<FileMode>,
    /// The hunks, in order; empty for binary, mode-only and pure
    /// rename or copy changes, and for empty added or deleted files.
    pub hunks: Vec<Hunk>,
}

/// What a [`FileChange`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    /// A new file (`new file mode`, or `--- /dev/null`).
    Added,
    /// A deleted file (`deleted file mode`, or `+++ /dev/null`).
    Deleted,
    /// A file changed in place.
    Modified,
    /// A file moved (`rename from`/`rename to`), with or without hunks.
    Renamed,
    /// A file copied (`copy from`/`copy to`); the original stays.
    Copied,
    /// Only the mode changed (`old mode`/`new mode`, no hunks).
    ModeOnly,
    /// A binary file (`Binary files … differ`, `GIT binary patch`), added,
    /// deleted, changed or renamed: the paths say which.
    Binary,
}

/// A file mode from git's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileMode {
    /// `100644`.
    Regular,
    /// `100755`.
    Executable,
    /// `120000`: the text is the link's target.
    Symlink,
    /// `160000`: the text is `Subproject commit <id>`.
    Submodule,
}

/// One hunk: a run of lines around some changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// First old-side line (for an insertion, `old_lines == 0`, the line
    /// after which it goes; 0 at the start of the file).
    pub old_start: u32,
    /// Old-side lines: context and removed.
    pub old_lines: u32,
    /// First new-side line (for a pure deletion, the line before it).
    pub new_start: u32,
    /// New-side lines: context and added.
    pub new_lines: u32,
    /// The lines, each text with its `\n`.
    pub lines: Vec<Line>,
}

/// One line of a hunk, with its text and `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// On both sides (` `).
    Context(String),
    /// On the new side only (`+`).
    Added(String),
    /// On the old side only (`-`).
    Removed(String),
}

/// A file's new text, rebuilt by [`FileChange::apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// The whole new text ("" for a deleted file).
    pub text: String,
    /// Added lines, new-side numbers, ascending.
    pub added: Vec<u32>,
    /// Deleted lines, old-side numbers (of `old_path`), ascending.
    pub deleted: Vec<u32>,
}

/// The new side of one hunk, for when the base is not known to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NewSideHunk {
    /// The new-side number of the text's first line.
    pub start_line: u32,
    /// The hunk's context and added lines, in order.
    pub text: String,
    /// Added lines, new-side numbers, ascending.
    pub added: Vec<u32>,
}

/// Why a diff could not be read or applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// Nothing in the text looks like a diff.
    #[error("not a unified diff: {0}")]
    NotADiff(&'static str),
    /// A part of the diff is broken (truncated, edited by hand, mangled).
    #[error("malformed diff at line {line}{}: {reason}", in_file(path))]
    Malformed {
        /// The line (1-based) of the diff where the broken part starts: the
        /// file's `diff --git` line, or a hunk header out of place.
        line: usize,
        /// The paths of that `diff --git` line, naming the file.
        path: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// The base text is not the one the diff was made from.
    #[error(
        "{path} does not match the diff: hunk {hunk} expects other text at line {line} of it (is the diff against another commit?)"
    )]
    Mismatch {
        /// The file.
        path: String,
        /// The hunk (1-based) that does not apply.
        hunk: usize,
        /// The old-side line where base and hunk differ.
        line: u32,
    },
    /// A binary change has no lines to apply.
    #[error("{0} is a binary change: it has no text to apply")]
    Binary(String),
}

fn in_file(path: &Option<String>) -> String {
    path.as_ref().map(|p| format!(" ({p})")).unwrap_or_default()
}

/// Parses a diff into its files' changes.
///
/// Text before the first `diff --git` line (a commit message, `git show`'s
/// header) is skipped, and so are lines after a file's last complete hunk,
/// as `git apply` does. Without any `diff --git` line the text is read as a
/// plain unified diff, each file of which needs a hunk. An empty diff (what
/// `git diff` prints when nothing changed) has no changes. The combined
/// diffs of merges (`diff --cc`) are not read.
pub(crate) fn parse(diff: &str) -> Result<Vec<FileChange>, DiffError> {
    if diff.trim().is_empty() {
        return Ok(Vec::new());
    }
    let text = normalize(diff);
    let sections = git_sections(&text);
    if sections.is_empty() {
        return parse_plain(&text);
    }
    sections
        .into_iter()
        .map(|(line, section)| parse_git_section(line, section))
        .collect()
}

/// The diff with a final `\n`, and with `\r\n` turned into `\n` when every
/// line, git's own headers included, ends so (a diff converted in transit;
/// a CRLF file's lines in a true git diff are the only ones with `\r`).
fn normalize(diff: &str) -> Cow<'_, str> {
    let lf = diff.matches('\n').count();
    let mut text = Cow::Borrowed(diff);
    if lf > 0 && diff.matches("\r\n").count() == lf && diff.ends_with('\n') {
        text = Cow::Owned(diff.replace("\r\n", "\n"));
    }
    if !text.ends_with('\n') {
        text.to_mut().push('\n');
    }
    text
}

/// The sections of a git diff: from each `diff --git` line to the next,
/// with the 1-based line each starts at. Hunk lines never start with
/// `diff`, so a section never splits a hunk.
fn git_sections(text: &str) -> Vec<(usize, &str)> {
    let mut starts = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.starts_with("diff --git ") {
            starts.push((i + 1, offset));
        }
        offset += line.len();
    }
    let ends = starts.iter().skip(1).map(|&(_, o)| o).chain([text.len()]);
    starts
        .iter()
        .zip(ends)
        .filter_map(|(&(line, start), end)| Some((line, text.get(start..end)?)))
        .collect()
}

/// Runs one of diffy's parses, turning a panic in it into an error.
fn guarded<T>(parse: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(parse)).ok()
}

/// What the parser said for a section that failed in it.
const PARSER_FAILED: &str = "the diff parser failed on this file's part";

fn parse_git_section(line: usize, section: &str) -> Result<FileChange, DiffError> {
    let header = section.lines().next().unwrap_or_default();
    let git_line = header.strip_prefix("diff --git ").unwrap_or(header);
    let malformed = |reason: String| DiffError::Malformed {
        line,
        path: Some(git_line.to_owned()),
        reason,
    };
    let parsed = guarded(|| {
        PatchSet::parse(section, ParseOptions::gitdiff())
            .next()
            .map(|patch| patch.map(|p| convert(&p, section, git_line)))
    });
    let change = match parsed {
        None => return Err(malformed(PARSER_FAILED.to_owned())),
        Some(None) => return Err(malformed("no file change after `diff --git`".to_owned())),
        Some(Some(Err(e))) => return Err(malformed(reason(&e.to_string()))),
        Some(Some(Ok(change))) => change.map_err(malformed)?,
    };
    // A hunk header that diffy did not reach follows lines that belong to no
    // hunk: an earlier hunk has more lines than its header counts.
    let headers: Vec<usize> = section
        .split_inclusive('\n')
        .enumerate()
        .filter(|(_, l)| l.starts_with("@@ "))
        .map(|(i, _)| i)
        .collect();
    if let Some(&orphan) = headers.get(change.hunks.len()) {
        return Err(DiffError::Malformed {
            line: line + orphan,
            path: Some(git_line.to_owned()),
            reason: "this hunk header follows lines outside any hunk (the hunk before it has more lines than its header counts)".to_owned(),
        });
    }
    Ok(change)
}

/// diffy's reason, without its byte offsets (which count from places inside
/// diffy), in words a user can act on.
fn reason(diffy: &str) -> String {
    let inner = diffy.rsplit(": ").next().unwrap_or(diffy);
    let said = match inner {
        "hunk header does not match hunk" => {
            "a hunk has other line counts than its @@ header says (truncated or edited by hand?)"
        }
        "unexpected line in hunk body" => {
            "a line inside a hunk starts with none of ' ', '+', '-' and '\\'"
        }
        "unable to parse hunk header" | "hunk header unterminated" | "can't parse range" => {
            "a hunk header is not of the form @@ -start,lines +start,lines @@"
        }
        "hunks not in order or overlap" => "hunks are out of order or overlap",
        "unexpected EOF" => "the diff ends inside a hunk",
        "filename unterminated" => "a ---/+++ line has no end",
        _ => inner,
    };
    said.to_owned()
}

/// A diffy patch of one section as our owned [`FileChange`], or what is
/// wrong with it.
fn convert(
    patch: &FilePatch<'_, str>,
    section: &str,
    git_line: &str,
) -> Result<FileChange, String> {
    let at = |p: &Cow<'_, str>| strip_prefix(p, has_prefixes(git_line)).to_owned();
    let (old_path, new_path, mut kind) = match patch.operation() {
        FileOperation::Create(p) => (None, Some(at(p)), ChangeKind::Added),
        FileOperation::Delete(p) => (Some(at(p)), None, ChangeKind::Deleted),
        FileOperation::Modify { original, modified } => {
            (Some(at(original)), Some(at(modified)), ChangeKind::Modified)
        }
        // `rename`/`copy` lines carry no prefix.
        FileOperation::Rename { from, to } => (
            Some(from.to_string()),
            Some(to.to_string()),
            ChangeKind::Renamed,
        ),
        FileOperation::Copy { from, to } => (
            Some(from.to_string()),
            Some(to.to_string()),
            ChangeKind::Copied,
        ),
    };
    let hunks = match patch.patch() {
        PatchKind::Binary(_) => {
            kind = ChangeKind::Binary;
            Vec::new()
        }
        PatchKind::Text(text) => convert_hunks(text)?,
    };
    let (old_mode, new_mode) = (patch.old_mode().copied(), patch.new_mode().copied());
    if kind == ChangeKind::Modified
        && hunks.is_empty()
        && old_mode.is_some()
        && old_mode != new_mode
    {
        kind = ChangeKind::ModeOnly;
    }
    let mode = new_mode
        .map(mode_of)
        .or_else(|| index_mode(section))
        .or(old_mode.map(mode_of));
    Ok(FileChange {
        old_path,
        new_path,
        kind,
        mode,
        hunks,
    })
}

fn mode_of(mode: diffy::patch_set::FileMode) -> FileMode {
    use diffy::patch_set::FileMode as M;
    match mode {
        M::Regular => FileMode::Regular,
        M::Executable => FileMode::Executable,
        M::Symlink => FileMode::Symlink,
        M::Gitlink => FileMode::Submodule,
    }
}

/// The mode on an `index <old>..<new> <mode>` line (a change that keeps
/// its mode).
fn index_mode(section: &str) -> Option<FileMode> {
    let line = section
        .lines()
        .take_while(|l| !l.starts_with("@@ "))
        .find(|l| l.starts_with("index "))?;
    match line.split(' ').nth(2)? {
        "100644" => Some(FileMode::Regular),
        "100755" => Some(FileMode::Executable),
        "120000" => Some(FileMode::Symlink),
        "160000" => Some(FileMode::Submodule),
        _ => None,
    }
}

/// Whether a `diff --git` line's paths carry prefixes (`a/x b/x`, or
/// `i/x w/x` with `diff.mnemonicPrefix`): with `--no-prefix` (or
/// `diff.noprefix`) its two halves are the same path.
fn has_prefixes(git_line: &str) -> bool {
    let mid = git_line.len() / 2;
    let same = git_line.len() % 2 == 1
        && git_line.as_bytes().get(mid) == Some(&b' ')
        && git_line.get(..mid).is_some()
        && git_line.get(..mid) == git_line.get(mid + 1..);
    !same
}

/// `path` without its first component when the diff has prefixes.
fn strip_prefix(path: &str, prefixed: bool) -> &str {
    match path.split_once('/') {
        Some((_, rest)) if prefixed && !rest.is_empty() => rest,
        _ => path,
    }
}

fn convert_hunks(patch: &diffy::Patch<'_, str>) -> Result<Vec<Hunk>, String> {
    patch
        .hunks()
        .iter()
        .map(|h| {
            let (old, new) = (h.old_range(), h.new_range());
            let number = |n: usize| {
                u32::try_from(n)
                    .map_err(|_| format!("a hunk header's line number {n} is too large"))
            };
            let hunk = Hunk {
                old_start: number(old.start())?,
                old_lines: number(old.len())?,
                new_start: number(new.start())?,
                new_lines: number(new.len())?,
                lines: h
                    .lines()
                    .iter()
                    .map(|l| match l {
                        diffy::Line::Context(t) => Line::Context((*t).to_owned()),
                        diffy::Line::Insert(t) => Line::Added((*t).to_owned()),
                        diffy::Line::Delete(t) => Line::Removed((*t).to_owned()),
                    })
                    .collect(),
            };
            if (hunk.old_lines > 0 && hunk.old_start == 0)
                || (hunk.new_lines > 0 && hunk.new_start == 0)
            {
                return Err(format!(
                    "hunk @@ -{},{} +{},{} @@ starts at line 0",
                    hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
                ));
            }
            Ok(hunk)
        })
        .collect()
}

/// A plain unified diff (`diff -u`, `diff -ruN a b`): `---`/`+++` headers
/// and hunks, no git headers.
fn parse_plain(text: &str) -> Result<Vec<FileChange>, DiffError> {
    let parsed = guarded(|| {
        PatchSet::parse(text, ParseOptions::unidiff())
            .map(|p| p.map(|p| plain_change(&p)).map_err(|e| e.to_string()))
            .collect::<Vec<_>>()
    });
    let Some(parsed) = parsed else {
        return Err(DiffError::Malformed {
            line: 1,
            path: None,
            reason: PARSER_FAILED.to_owned(),
        });
    };
    let mut changes = Vec::new();
    for change in parsed {
        match change {
            Err(e) if e.contains("no valid patches found") => {
                return Err(DiffError::NotADiff(
                    "no file header (a `diff --git` line, or `---` and `+++` lines)",
                ))
            }
            Err(e) => {
                return Err(DiffError::Malformed {
                    line: 1,
                    path: None,
                    reason: reason(&e),
                })
            }
            Ok(Err(reason)) => {
                return Err(DiffError::Malformed {
                    line: 1,
                    path: None,
                    reason,
                })
            }
            Ok(Ok(change)) if change.hunks.is_empty() => {
                return Err(DiffError::NotADiff(
                    "a `---`/`+++` file header without hunks",
                ))
            }
            Ok(Ok(change)) => changes.push(change),
        }
    }
    Ok(changes)
}

/// One file of a plain unified diff. Only `a/` and `b/` prefixes (of `diff
/// -ruN a b`, and git's) are stripped: other first components are real.
fn plain_change(patch: &FilePatch<'_, str>) -> Result<FileChange, String> {
    let strip = |p: &str, prefix: &str| p.strip_prefix(prefix).unwrap_or(p).to_owned();
    let (old_path, new_path, kind) = match patch.operation() {
        FileOperation::Create(p) => (None, Some(strip(p, "b/")), ChangeKind::Added),
        FileOperation::Delete(p) => (Some(strip(p, "a/")), None, ChangeKind::Deleted),
        FileOperation::Modify { original, modified }
        | FileOperation::Rename {
            from: original,
            to: modified,
        }
        | FileOperation::Copy {
            from: original,
            to: modified,
        } => (
            Some(strip(original, "a/")),
            Some(strip(modified, "b/")),
            ChangeKind::Modified,
        ),
    };
    let hunks = match patch.patch() {
        PatchKind::Text(text) => convert_hunks(text)?,
        PatchKind::Binary(_) => Vec::new(),
    };
    Ok(FileChange {
        old_path,
        new_path,
        kind,
        mode: None,
        hunks,
    })
}

impl FileChange {
    /// The file's path: the new one, or the old one for a deleted file.
    pub(crate) fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }

    /// Rebuilds the new text from `base`, the text of `old_path` the diff
    /// was made from (`None` when there is no such file, as for an added
    /// one): every hunk must find its context and removed lines exactly at
    /// the old-side lines its header names, an added file needs an empty
    /// base, and a deleted file's hunk must cover all of it.
    ///
    /// For a copied file, `deleted` counts lines of the copy's source that
    /// the copy does not have; the source itself stays as it is.
    pub(crate) fn apply(&self, base: Option<&str>) -> Result<Applied, DiffError> {
        if self.kind == ChangeKind::Binary {
            return Err(DiffError::Binary(self.path().to_owned()));
        }
        let base = base.unwrap_or_default();
        let old: Vec<&str> = base.split_inclusive('\n').collect();
        let mismatch = |hunk: usize, index: usize| DiffError::Mismatch {
            path: self.path().to_owned(),
            hunk,
            line: line_number(index + 1),
        };
        if self.kind == ChangeKind::Added && !old.is_empty() {
            return Err(mismatch(1, 0));
        }
        let mut out = Applied {
            text: String::with_capacity(base.len()),
            added: Vec::new(),
            deleted: Vec::new(),
        };
        let mut new_count = 0usize;
        let mut cursor = 0usize;
        for (h, hunk) in self.hunks.iter().enumerate() {
            let number = h + 1;
            // An insertion (no old lines) goes after line `old_start`.
            let start = hunk.old_start as usize;
            let at = if hunk.old_lines == 0 {
                start
            } else {
                start.saturating_sub(1)
            };
            if at < cursor || at > old.len() {
                return Err(mismatch(number, at));
            }
            for line in &old[cursor..at] {
                push(&mut out.text, line).map_err(|()| mismatch(number, at))?;
                new_count += 1;
            }
            let mut index = at;
            for line in &hunk.lines {
                match line {
                    Line::Context(text) | Line::Removed(text) => {
                        if old.get(index) != Some(&text.as_str()) {
                            return Err(mismatch(number, index));
                        }
                        if matches!(line, Line::Context(_)) {
                            push(&mut out.text, text).map_err(|()| mismatch(number, index))?;
                            new_count += 1;
                        } else {
                            out.deleted.push(line_number(index + 1));
                        }
                        index += 1;
                    }
                    Line::Added(text) => {
                        push(&mut out.text, text).map_err(|()| mismatch(number, index))?;
                        new_count += 1;
                        out.added.push(line_number(new_count));
                    }
                }
            }
            cursor = index;
        }
        if self.kind == ChangeKind::Deleted && cursor < old.len() {
            return Err(mismatch(self.hunks.len().max(1), cursor));
        }
        for line in old.get(cursor..).unwrap_or_default() {
            push(&mut out.text, line).map_err(|()| mismatch(self.hunks.len().max(1), cursor))?;
        }
        Ok(out)
    }

    /// The change undone: paths, sides and line kinds swapped, so that
    /// applying it to the new text gives the base, and its `deleted` lines
    /// are this change's added ones. A server already at the diff's new
    /// commit finds the added lines so.
    pub(crate) fn reversed(&self) -> FileChange {
        let kind = match self.kind {
            ChangeKind::Added => ChangeKind::Deleted,
            ChangeKind::Deleted => ChangeKind::Added,
            kind => kind,
        };
        let hunks = self
            .hunks
            .iter()
            .map(|h| Hunk {
                old_start: h.new_start,
                old_lines: h.new_lines,
                new_start: h.old_start,
                new_lines: h.old_lines,
                lines: h
                    .lines
                    .iter()
                    .map(|l| match l {
                        Line::Context(t) => Line::Context(t.clone()),
                        Line::Added(t) => Line::Removed(t.clone()),
                        Line::Removed(t) => Line::Added(t.clone()),
                    })
                    .collect(),
            })
            .collect();
        FileChange {
            old_path: self.new_path.clone(),
            new_path: self.old_path.clone(),
            kind,
            mode: self.mode,
            hunks,
        }
    }

    /// The new side of each hunk alone (its context and added lines), for
    /// when the base does not match: the hunks' own new-side numbers, which
    /// are right for the diff's new file. Pure deletions give nothing.
    pub(crate) fn new_side(&self) -> Vec<NewSideHunk> {
        self.hunks
            .iter()
            .filter(|h| h.new_lines > 0)
            .map(|h| {
                let mut side = NewSideHunk {
                    start_line: h.new_start,
                    text: String::new(),
                    added: Vec::new(),
                };
                let mut number = h.new_start;
                for line in &h.lines {
                    match line {
                        Line::Context(text) => side.text.push_str(text),
                        Line::Added(text) => {
                            side.text.push_str(text);
                            side.added.push(number);
                        }
                        Line::Removed(_) => continue,
                    }
                    number = number.saturating_add(1);
                }
                side
            })
            .collect()
    }
}

/// Appends a line to a text being rebuilt; a line after one without `\n`
/// (the base's last line, or a hunk's marked `\ No newline`) means base and
/// hunks disagree.
fn push(text: &mut String, line: &str) -> Result<(), ()> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(());
    }
    text.push_str(line);
    Ok(())
}

fn line_number(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use super::{parse, ChangeKind, DiffError, FileChange, FileMode, Line, PARSER_FAILED};
    use ChangeKind::*;

    /// The changes of `diff`, which must parse.
    fn changes(diff: &str) -> Vec<FileChange> {
        parse(diff).unwrap_or_else(|e| panic!("{e}\n--- diff:\n{diff}"))
    }

    /// One line per change: kind, old path, new path, hunk count.
    fn check(diff: &str, want: &[&str]) {
        let got: Vec<String> = changes(diff)
            .iter()
            .map(|c| {
                format!(
                    "{:?} {} -> {} ({} hunks)",
                    c.kind,
                    c.old_path.as_deref().unwrap_or("-"),
                    c.new_path.as_deref().unwrap_or("-"),
                    c.hunks.len()
                )
            })
            .collect();
        assert_eq!(got, want, "\n--- diff:\n{diff}");
    }

    const TWO_FILES: &str = "\
diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,3 +1,3 @@ fn main() {
 one
-two
+TWO
 three
@@ -10,2 +10,3 @@
 ten
+ten and a half
 eleven
diff --git a/src/b.rs b/src/b.rs
index 3333333..4444444 100644
--- a/src/b.rs
+++ b/src/b.rs
@@ -1 +1,2 @@
 b
+c
";

    #[test]
    fn several_files_and_hunks() {
        check(
            TWO_FILES,
            &[
                "Modified src/a.rs -> src/a.rs (2 hunks)",
                "Modified src/b.rs -> src/b.rs (1 hunks)",
            ],
        );
        let a = &changes(TWO_FILES)[0];
        let h = &a.hunks[1];
        assert_eq!(
            (h.old_start, h.old_lines, h.new_start, h.new_lines),
            (10, 2, 10, 3)
        );
        assert_eq!(
            h.lines,
            [
                Line::Context("ten\n".into()),
                Line::Added("ten and a half\n".into()),
                Line::Context("eleven\n".into()),
            ]
        );
        assert_eq!(a.mode, Some(FileMode::Regular));
    }

    #[test]
    fn a_preamble_and_a_trailer_are_skipped() {
        let show = format!(
            "commit 0123456789abcdef\nAuthor: A <a@example.com>\n\n    Fix --- and +++ lines\n\n{TWO_FILES}-- \n2.47.3\n"
        );
        assert_eq!(changes(&show), changes(TWO_FILES));
    }

    #[test]
    fn new_deleted_renamed_copied_mode_only_and_binary_headers() {
        let diff = "\
diff --git a/new.rs b/new.rs
new file mode 100755
index 0000000..e556b83
--- /dev/null
+++ b/new.rs
@@ -0,0 +1,2 @@
+fn a() {}
+fn b() {}
diff --git a/gone.rs b/gone.rs
deleted file mode 100644
index 975fbec..0000000
--- a/gone.rs
+++ /dev/null
@@ -1 +0,0 @@
-fn gone() {}
diff --git a/empty.txt b/empty.txt
new file mode 100644
index 0000000..e69de29
diff --git a/old.rs b/new name.rs
similarity index 100%
rename from old.rs
rename to new name.rs
diff --git a/moved.rs b/dir/moved.rs
similarity index 90%
rename from moved.rs
rename to dir/moved.rs
index 1234567..89abcde 100644
--- a/moved.rs
+++ b/dir/moved.rs
@@ -1 +1 @@
-old
+new
diff --git a/src.rs b/copy.rs
similarity index 100%
copy from src.rs
copy to copy.rs
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/img.png b/img.png
index 1111111..2222222 100644
Binary files a/img.png and b/img.png differ
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..2222222
Binary files /dev/null and b/logo.png differ
diff --git a/link b/link
new file mode 120000
index 0000000..1de5659
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+target
\\ No newline at end of file
";
        check(
            diff,
            &[
                "Added - -> new.rs (1 hunks)",
                "Deleted gone.rs -> - (1 hunks)",
                "Added - -> empty.txt (0 hunks)",
                "Renamed old.rs -> new name.rs (0 hunks)",
                "Renamed moved.rs -> dir/moved.rs (1 hunks)",
                "Copied src.rs -> copy.rs (0 hunks)",
                "ModeOnly run.sh -> run.sh (0 hunks)",
                "Binary img.png -> img.png (0 hunks)",
                "Binary - -> logo.png (0 hunks)",
                "Added - -> link (1 hunks)",
            ],
        );
        let modes: Vec<_> = changes(diff).iter().map(|c| c.mode).collect();
        assert_eq!(modes[0], Some(FileMode::Executable));
        assert_eq!(modes[1], Some(FileMode::Regular));
        assert_eq!(modes[6], Some(FileMode::Executable));
        assert_eq!(modes[9], Some(FileMode::Symlink));
    }

    #[test]
    fn no_newline_at_end_of_file_on_either_side() {
        let diff = "\
diff --git a/q.sql b/q.sql
index a477a63..52027d5 100644
--- a/q.sql
+++ b/q.sql
@@ -1,3 +1,2 @@
 l1
--- c
-l3
\\ No newline at end of file
+l3
diff --git a/r.txt b/r.txt
index a477a63..52027d5 100644
--- a/r.txt
+++ b/r.txt
@@ -1,2 +1,2 @@
 x
-y
+z
\\ No newline at end of file
";
        let c = changes(diff);
        let q = c[0].apply(Some("l1\n-- c\nl3")).unwrap();
        assert_eq!(q.text, "l1\nl3\n");
        assert_eq!((q.added, q.deleted), (vec![2], vec![2, 3]));
        let r = c[1].apply(Some("x\ny\n")).unwrap();
        assert_eq!(r.text, "x\nz");
        // The newline is part of the line: a base that has one differs.
        assert!(matches!(
            c[0].apply(Some("l1\n-- c\nl3\n")),
            Err(DiffError::Mismatch {
                hunk: 1,
                line: 3,
                ..
            })
        ));
    }

    #[test]
    fn removed_lines_that_start_with_dashes_and_added_ones_with_pluses() {
        let diff = "\
diff --git a/q.sql b/q.sql
--- a/q.sql
+++ b/q.sql
@@ -1,3 +1,3 @@
--- a comment
---- a rule
++++ added
++ plus
 select 1;
";
        let c = changes(diff);
        assert_eq!(
            c[0].hunks[0].lines,
            [
                Line::Removed("-- a comment\n".into()),
                Line::Removed("--- a rule\n".into()),
                Line::Added("+++ added\n".into()),
                Line::Added("+ plus\n".into()),
                Line::Context("select 1;\n".into()),
            ]
        );
        let applied = c[0]
            .apply(Some("-- a comment\n--- a rule\nselect 1;\n"))
            .unwrap();
        assert_eq!(applied.text, "+++ added\n+ plus\nselect 1;\n");
    }

    #[test]
    fn quoted_paths_with_escapes_and_paths_with_spaces() {
        let diff = "\
diff --git \"a/caf\\303\\251.rs\" \"b/caf\\303\\251.rs\"
deleted file mode 100644
index 975fbec..0000000
--- \"a/caf\\303\\251.rs\"
+++ /dev/null
@@ -1 +0,0 @@
-y
diff --git \"a/tab\\tname.rs\" \"b/tab\\tname.rs\"
index 587be6b..b680253 100644
--- \"a/tab\\tname.rs\"
+++ \"b/tab\\tname.rs\"
@@ -1 +1 @@
-x
+z
diff --git a/with space.rs b/with space.rs
index 7898192..6178079 100644
--- a/with space.rs\t
+++ b/with space.rs\t
@@ -1 +1 @@
-a
+b
diff --git \"a/q\\\"uote.rs\" \"b/q\\\"uote.rs\"
old mode 100644
new mode 100755
diff --git a/x.rs \"b/renamed \\\\ it.rs\"
similarity index 100%
rename from x.rs
rename to \"renamed \\\\ it.rs\"
";
        check(
            diff,
            &[
                "Deleted café.rs -> - (1 hunks)",
                "Modified tab\tname.rs -> tab\tname.rs (1 hunks)",
                "Modified with space.rs -> with space.rs (1 hunks)",
                "ModeOnly q\"uote.rs -> q\"uote.rs (0 hunks)",
                "Renamed x.rs -> renamed \\ it.rs (0 hunks)",
            ],
        );
    }

    #[test]
    fn prefixes_are_stripped_only_when_there_are_some() {
        let no_prefix = TWO_FILES.replace("a/", "").replace("b/", "");
        assert_eq!(changes(&no_prefix), changes(TWO_FILES));
        let mnemonic = TWO_FILES.replace("a/", "i/").replace("b/", "w/");
        assert_eq!(changes(&mnemonic), changes(TWO_FILES));
        let new_file = "diff --git x.rs x.rs\nnew file mode 100644\nindex 0000000..e69de29\n";
        check(new_file, &["Added - -> x.rs (0 hunks)"]);
        let mode = "diff --git a/b/c.rs b/b/c.rs\nold mode 100644\nnew mode 100755\n";
        check(mode, &["ModeOnly b/c.rs -> b/c.rs (0 hunks)"]);
    }

    #[test]
    fn a_diff_converted_to_crlf_in_transit_still_parses() {
        let crlf = TWO_FILES.replace('\n', "\r\n");
        assert_eq!(changes(&crlf), changes(TWO_FILES));
        let unterminated = TWO_FILES.trim_end();
        assert_eq!(changes(unterminated), changes(TWO_FILES));
    }

    #[test]
    fn plain_unified_diffs_and_empty_ones() {
        let plain = "\
--- a/lib.c\t2024-01-01 00:00:00
+++ b/lib.c\t2024-01-02 00:00:00
@@ -1 +1 @@
-int a;
+int b;
--- /dev/null
+++ b/new.c
@@ -0,0 +1 @@
+int c;
--- src/x.c
+++ src/x.c
@@ -1 +1 @@
-1
+2
";
        check(
            plain,
            &[
                "Modified lib.c -> lib.c (1 hunks)",
                "Added - -> new.c (1 hunks)",
                "Modified src/x.c -> src/x.c (1 hunks)",
            ],
        );
        assert_eq!(changes(""), []);
        assert_eq!(changes(" \n\n"), []);
    }

    #[test]
    fn what_is_not_a_diff_says_so() {
        for text in [
            "hello world\n",
            "{\"code\": \"x\"}",
            "# Title\n\n---\n\nprose\n",
            "--- just a header\n",
        ] {
            let e = parse(text).unwrap_err();
            assert!(matches!(e, DiffError::NotADiff(_)), "{text:?}: {e:?}");
            assert!(e.to_string().starts_with("not a unified diff: "), "{e}");
        }
    }

    #[test]
    fn broken_diffs_say_where_and_what() {
        // The second hunk of src/a.rs lost its last line.
        let truncated = TWO_FILES.replace(" eleven\n", "");
        let e = parse(&truncated).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed diff at line 1 (a/src/a.rs b/src/a.rs): a hunk has other line counts than its @@ header says (truncated or edited by hand?)"
        );
        // A hunk with a line more than its header counts hides the next.
        let extra = TWO_FILES.replace(" three\n", " three\n four\n");
        let e = parse(&extra).unwrap_err();
        assert!(matches!(&e, DiffError::Malformed { line: 11, .. }), "{e:?}");
        let bad_header = TWO_FILES.replace("@@ -10,2 +10,3 @@", "@@ -10,x +10,3 @@");
        assert!(parse(&bad_header)
            .unwrap_err()
            .to_string()
            .contains("not of the form @@ -start,lines +start,lines @@"));
        let zero = TWO_FILES.replace("@@ -1 +1,2 @@", "@@ -0 +1,2 @@");
        assert!(parse(&zero)
            .unwrap_err()
            .to_string()
            .contains("starts at line 0"));
    }

    #[test]
    fn apply_gives_new_text_and_added_and_deleted_lines() {
        let base: String = (1..=12).map(|i| format!("{}\n", word(i))).collect();
        let a = &changes(TWO_FILES)[0];
        let applied = a.apply(Some(&base)).unwrap();
        let want = base
            .replace("two\n", "TWO\n")
            .replace("ten\n", "ten\nten and a half\n");
        assert_eq!(applied.text, want);
        assert_eq!(applied.added, [2, 11]);
        assert_eq!(applied.deleted, [2]);
    }

    fn word(i: usize) -> &'static str {
        [
            "", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve",
        ][i]
    }

    #[test]
    fn a_base_at_another_commit_is_a_mismatch_even_where_the_context_appears_elsewhere() {
        let base: String = (1..=12).map(|i| format!("{}\n", word(i))).collect();
        let a = &changes(TWO_FILES)[0];
        // One line more at the top: diffy's apply would find the context one
        // line lower, and every line number after it would be off by one.
        let shifted = format!("zero\n{base}");
        assert_eq!(
            a.apply(Some(&shifted)).unwrap_err(),
            DiffError::Mismatch {
                path: "src/a.rs".into(),
                hunk: 1,
                line: 1
            }
        );
        let edited = base.replace("eleven", "ELEVEN");
        let e = a.apply(Some(&edited)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "src/a.rs does not match the diff: hunk 2 expects other text at line 11 of it (is the diff against another commit?)"
        );
        // Too short a base, and none at all.
        assert!(matches!(
            a.apply(Some("one\ntwo\nthree\n")),
            Err(DiffError::Mismatch { hunk: 2, .. })
        ));
        assert!(matches!(
            a.apply(None),
            Err(DiffError::Mismatch {
                hunk: 1,
                line: 1,
                ..
            })
        ));
    }

    #[test]
    fn added_and_deleted_files_apply_only_to_nothing_and_to_all() {
        let diff = "\
diff --git a/new.rs b/new.rs
new file mode 100644
--- /dev/null
+++ b/new.rs
@@ -0,0 +1,2 @@
+a
+b
diff --git a/gone.rs b/gone.rs
deleted file mode 100644
--- a/gone.rs
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
";
        let c = changes(diff);
        let new = c[0].apply(None).unwrap();
        assert_eq!(
            (new.text.as_str(), new.added, new.deleted),
            ("a\nb\n", vec![1, 2], vec![])
        );
        assert!(c[0].apply(Some("other\n")).is_err());
        let gone = c[1].apply(Some("a\nb\n")).unwrap();
        assert_eq!(
            (gone.text.as_str(), gone.added, gone.deleted),
            ("", vec![], vec![1, 2])
        );
        assert!(matches!(
            c[1].apply(Some("a\nb\nc\n")),
            Err(DiffError::Mismatch { line: 3, .. })
        ));
    }

    #[test]
    fn binary_changes_do_not_apply_and_mode_changes_keep_the_text() {
        let diff = "\
diff --git a/img.png b/img.png
index 1111111..2222222 100644
Binary files a/img.png and b/img.png differ
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
";
        let c = changes(diff);
        assert_eq!(
            c[0].apply(Some("x")).unwrap_err().to_string(),
            "img.png is a binary change: it has no text to apply"
        );
        assert_eq!(c[1].apply(Some("echo\n")).unwrap().text, "echo\n");
    }

    #[test]
    fn the_new_side_of_the_hunks_alone() {
        let a = &changes(TWO_FILES)[0];
        let sides = a.new_side();
        assert_eq!(sides.len(), 2);
        assert_eq!(
            (sides[0].start_line, sides[0].text.as_str(), &sides[0].added),
            (1, "one\nTWO\nthree\n", &vec![2])
        );
        assert_eq!(
            (sides[1].start_line, sides[1].text.as_str(), &sides[1].added),
            (10, "ten\nten and a half\neleven\n", &vec![11])
        );
        let deletion = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +0,0 @@\n-a\n-b\n";
        assert_eq!(changes(deletion)[0].new_side(), []);
    }

    /// Runs git in `dir` without the user's or the system's configuration.
    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(["-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("git prints UTF-8 here")
    }

    /// A repository with one commit and staged changes of every kind; with
    /// the texts before and after, by path.
    struct Repo {
        dir: tempfile::TempDir,
        before: Vec<(&'static str, String)>,
        after: Vec<(&'static str, String)>,
    }

    fn lines(prefix: &str, n: usize) -> String {
        (1..=n).map(|i| format!("{prefix} line {i}\n")).collect()
    }

    fn repo() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let long = lines("keep", 40);
        let before = vec![
            ("keep.rs", long.clone()),
            ("gone.rs", lines("gone", 5)),
            ("same_old.rs", lines("same", 10)),
            ("moved_old.rs", lines("moved", 20)),
            ("copy_src.rs", lines("copied", 20)),
            ("run.sh", "echo hi\n".to_owned()),
            (
                "query.sql",
                "select 1;\n-- a comment\n--- a rule\nselect 2;".to_owned(),
            ),
            ("with space.rs", "a\n".to_owned()),
            ("café.rs", "é\n".to_owned()),
            ("tab\tname.rs", "x\n".to_owned()),
        ];
        for (path, text) in &before {
            std::fs::write(d.join(path), text).unwrap();
        }
        std::fs::write(d.join("image.bin"), b"\x00\x01\x02binary").unwrap();
        git(d, &["init", "-q"]);
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "base"]);

        let after = vec![
            (
                "keep.rs",
                long.replace("keep line 3\n", "changed 3\n")
                    .replace("keep line 30\n", "keep line 30\nadded 30b\n"),
            ),
            ("new.rs", "fn new() {}\n".to_owned()),
            ("same_new.rs", lines("same", 10)),
            (
                "dir/moved_new.rs",
                lines("moved", 20).replace("moved line 20\n", "moved line 20 changed\n"),
            ),
            ("copy_src.rs", lines("copied", 20)),
            ("copy_dst.rs", lines("copied", 20)),
            ("run.sh", "echo hi\n".to_owned()),
            ("query.sql", "select 1;\nselect 2;\n".to_owned()),
            ("with space.rs", "b\n".to_owned()),
            ("café.rs", "è\n".to_owned()),
            ("tab\tname.rs", "y".to_owned()),
            ("empty.txt", String::new()),
        ];
        std::fs::remove_file(d.join("gone.rs")).unwrap();
        std::fs::remove_file(d.join("same_old.rs")).unwrap();
        std::fs::remove_file(d.join("moved_old.rs")).unwrap();
        std::fs::create_dir(d.join("dir")).unwrap();
        for (path, text) in &after {
            std::fs::write(d.join(path), text).unwrap();
        }
        std::fs::write(d.join("image.bin"), b"\x00\x01\x02binary, changed").unwrap();
        std::fs::write(d.join("logo.bin"), b"\x00new binary").unwrap();
        std::os::unix::fs::symlink("keep.rs", d.join("link")).unwrap();
        git(d, &["update-index", "--chmod=+x", "run.sh"]);
        git(d, &["add", "-A"]);
        git(d, &["update-index", "--chmod=+x", "run.sh"]);
        Repo { dir, before, after }
    }

    fn text<'a>(texts: &'a [(&str, String)], path: &str) -> Option<&'a str> {
        texts
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, t)| t.as_str())
    }

    #[test]
    fn real_git_diffs_of_every_kind_parse_and_apply() {
        let repo = repo();
        let d = repo.dir.path();
        let diff = git(d, &["diff", "--cached", "-M", "-C", "--find-copies-harder"]);
        let mut got: Vec<String> = changes(&diff)
            .iter()
            .map(|c| {
                format!(
                    "{:?} {} -> {}",
                    c.kind,
                    c.old_path.as_deref().unwrap_or("-"),
                    c.new_path.as_deref().unwrap_or("-")
                )
            })
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "Added - -> empty.txt",
                "Added - -> link",
                "Added - -> new.rs",
                "Binary - -> logo.bin",
                "Binary image.bin -> image.bin",
                "Copied copy_src.rs -> copy_dst.rs",
                "Deleted gone.rs -> -",
                "ModeOnly run.sh -> run.sh",
                "Modified café.rs -> café.rs",
                "Modified keep.rs -> keep.rs",
                "Modified query.sql -> query.sql",
                "Modified tab\tname.rs -> tab\tname.rs",
                "Modified with space.rs -> with space.rs",
                "Renamed moved_old.rs -> dir/moved_new.rs",
                "Renamed same_old.rs -> same_new.rs",
            ],
            "\n--- diff:\n{diff}"
        );
        for variant in [
            vec![
                "diff",
                "--cached",
                "-M",
                "-C",
                "--find-copies-harder",
                "--no-prefix",
            ],
            vec![
                "-c",
                "diff.mnemonicPrefix=true",
                "diff",
                "--cached",
                "-M",
                "-C",
                "--find-copies-harder",
            ],
            vec![
                "diff",
                "--cached",
                "-M",
                "-C",
                "--find-copies-harder",
                "-U0",
            ],
            vec![
                "diff",
                "--cached",
                "-M",
                "-C",
                "--find-copies-harder",
                "-U10",
                "--binary",
            ],
        ] {
            let other = git(d, &variant);
            let paths = |cs: Vec<FileChange>| -> Vec<_> {
                cs.into_iter()
                    .map(|c| (c.kind, c.old_path, c.new_path, c.mode))
                    .collect()
            };
            assert_eq!(
                paths(changes(&other)),
                paths(changes(&diff)),
                "{variant:?}\n{other}"
            );
            check_applies(&repo, &other);
        }
        check_applies(&repo, &diff);
        let keep = changes(&diff)
            .into_iter()
            .find(|c| c.path() == "keep.rs")
            .unwrap();
        let applied = keep.apply(text(&repo.before, "keep.rs")).unwrap();
        assert_eq!((applied.added, applied.deleted), (vec![3, 31], vec![3]));
        let link = changes(&diff)
            .into_iter()
            .find(|c| c.path() == "link")
            .unwrap();
        assert_eq!(link.mode, Some(FileMode::Symlink));
    }

    /// Every text change of `diff` applies to its file's text before and
    /// gives its text after.
    fn check_applies(repo: &Repo, diff: &str) {
        for c in changes(diff) {
            if c.kind == Binary || c.path() == "link" {
                continue;
            }
            let base = c.old_path.as_deref().and_then(|p| text(&repo.before, p));
            let want = c
                .new_path
                .as_deref()
                .map_or(Some(""), |p| text(&repo.after, p));
            let got = c.apply(base).unwrap_or_else(|e| panic!("{e}\n{diff}"));
            assert_eq!(Some(got.text.as_str()), want, "{}\n{diff}", c.path());
            // Undone, it gives the base back, and says which lines it added.
            let undone = c
                .reversed()
                .apply(Some(&got.text))
                .unwrap_or_else(|e| panic!("{e}\n{diff}"));
            assert_eq!(undone.text, base.unwrap_or_default(), "{}", c.path());
            assert_eq!(undone.deleted, got.added, "{}", c.path());
            assert_eq!(undone.added, got.deleted, "{}", c.path());
        }
    }

    /// A small xorshift generator: the same mangled diffs in every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Parses `text` and, when it parses, applies its changes to a few bases:
    /// nothing may panic, and diffy must never have panicked either.
    fn survive(text: &str, bases: &[&str]) {
        match parse(text) {
            Ok(changes) => {
                for c in &changes {
                    let _ = c.apply(None);
                    for base in bases {
                        let _ = c.apply(Some(base));
                    }
                    let _ = c.new_side();
                    let _ = c.path();
                }
            }
            Err(e) => {
                assert!(!e.to_string().contains(PARSER_FAILED), "{e}: {text:?}");
            }
        }
    }

    #[test]
    fn mangled_diffs_never_panic() {
        let repo = repo();
        let real = git(
            repo.dir.path(),
            &["diff", "--cached", "-M", "-C", "--binary"],
        );
        let corpus = [TWO_FILES.to_owned(), real];
        let bases = ["", "one\ntwo\nthree\n", "l1\n-- c\nl3", "x"];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for diff in &corpus {
            let lines: Vec<&str> = diff.split_inclusive('\n').collect();
            for i in 0..=lines.len() {
                // Truncated at every line, without every line, and with
                // every line's first character changed.
                survive(&lines[..i].concat(), &bases);
                if i < lines.len() {
                    let mut without = lines.clone();
                    without.remove(i);
                    survive(&without.concat(), &bases);
                    for first in [" ", "+", "-", "@", "\\", "d", ""] {
                        let mut changed = lines.clone();
                        let line = format!("{first}{}", lines[i].get(1..).unwrap_or_default());
                        changed[i] = &line;
                        survive(&changed.concat(), &bases);
                    }
                }
            }
            // Truncated inside lines.
            for cut in (0..diff.len())
                .step_by(7)
                .filter(|&c| diff.is_char_boundary(c))
            {
                survive(&diff[..cut], &bases);
            }
        }
        // Random splices of pieces of diffs, and random bytes.
        let pieces = [
            "diff --git a/x b/x\n",
            "diff --git \"a/x\\",
            "--- a/x\n",
            "+++ b/x\n",
            "--- /dev/null\n",
            "+++ /dev/null\n",
            "@@ -1,2 +1,3 @@\n",
            "@@ -0,0 +1 @@\n",
            "@@ -1 +0,0 @@\n",
            "@@ -4294967295,1 +1 @@\n",
            " ctx\n",
            "+add\n",
            "-del\n",
            "--- x\n",
            "\\ No newline at end of file\n",
            "new file mode 100644\n",
            "deleted file mode 100644\n",
            "old mode 100644\n",
            "new mode 100755\n",
            "rename from x\n",
            "rename to \"y\\303\"\n",
            "copy from x\n",
            "copy to y\n",
            "similarity index 90%\n",
            "index 0000000..1111111 120000\n",
            "Binary files a/x and b/x differ\n",
            "GIT binary patch\n",
            "literal 5\n",
            "zcmV\n",
            "\n",
            "\r\n",
            "\"",
            "\\",
            "\t",
            "é",
            "\0",
        ];
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..rng.below(24) {
                if rng.below(8) == 0 {
                    let bytes: Vec<u8> = (0..rng.below(12)).map(|_| rng.next() as u8).collect();
                    text.push_str(&String::from_utf8_lossy(&bytes));
                } else {
                    text.push_str(pieces[rng.below(pieces.len())]);
                }
            }
            survive(&text, &bases);
        }
    }
}
