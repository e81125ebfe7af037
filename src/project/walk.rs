//! Walking: which files of DIR are scanned, and reading them safely.
//!
//! In: the [`Config`] and the [`Registry`]. Out: [`Candidate`] files (path
//! inside DIR, format) in a stable order, then each file's text or the
//! [`SkipReason`] it was left out for.
//!
//! Invariants: `.gitignore`, `.ignore` and `.git/info/exclude` are honoured
//! with or without a git repository (`.gitignore` and `.git/info/exclude`
//! not with `--no-gitignore`); hidden entries (so `.git` and the cache)
//! are never entered; `--ignore` globs apply on top; link cycles are skipped,
//! not looped; a file reached through a link keeps the link's path. A file
//! that cannot be used is counted, never an error of the scan.

use std::fmt;
use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use crate::engine::grammar::{FormatId, Registry};
use crate::project::config::Config;

/// A file to scan.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Path to open (inside DIR, through links if any).
    pub abs: PathBuf,
    /// Path relative to DIR, `/`-separated.
    pub rel: String,
    /// Its format.
    pub format: FormatId,
    /// Its size when walked (0 if unknown): big files are parsed first, so
    /// that no core idles at the end of a scan.
    pub size: u64,
    /// Its modification time when walked, nanoseconds since the epoch (0 if
    /// unknown).
    pub mtime_ns: u64,
}

/// Why a file was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// Larger than `--max-size` (or 4 GiB).
    TooLarge,
    /// More lines than `--max-lines`.
    TooManyLines,
    /// Contains NUL bytes.
    Binary,
    /// Not valid UTF-8.
    NotUtf8,
    /// Could not be read: permissions, vanished, a link cycle.
    Unreadable,
    /// Its parse ran out of time (tree-sitter's error recovery on odd text).
    ParseTimeout,
    /// Its parse needed more memory than its budget.
    ParseMemory,
    /// Generated or minified ([`minified`], [`generated_header`]).
    Generated,
}

impl SkipReason {
    /// The camelCase name used in `/api/health` and the summary line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "tooLarge",
            SkipReason::TooManyLines => "tooManyLines",
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 => "notUtf8",
            SkipReason::Unreadable => "unreadable",
            SkipReason::ParseTimeout => "parseTimeout",
            SkipReason::ParseMemory => "parseMemory",
            SkipReason::Generated => "generated",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Counts of skipped files by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkipCounts(pub std::collections::BTreeMap<SkipReason, u64>);

impl SkipCounts {
    /// Counts one skip.
    pub(crate) fn add(&mut self, reason: SkipReason) {
        *self.0.entry(reason).or_default() += 1;
    }

    /// Total skipped files.
    pub(crate) fn total(&self) -> u64 {
        self.0.values().sum()
    }
}

/// The walk could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot walk {dir}: {reason}")]
pub struct WalkError {
    /// The working directory.
    pub dir: PathBuf,
    /// What went wrong.
    pub reason: String,
}

/// What a walk saw besides the files it handed on.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Entries that could not be visited, by reason.
    pub skipped: SkipCounts,
    /// The folders it entered (DIR first, then sorted, each as walked:
    /// through links if any): where files to scan can appear.
    pub folders: Vec<PathBuf>,
}

/// Lists the files to scan, sorted by relative path, and counts entries that
/// could not be visited.
pub fn candidates(
    config: &Config,
    registry: &Registry,
) -> Result<(Vec<Candidate>, SkipCounts), WalkError> {
    let found = std::sync::Mutex::new(Vec::new());
    let walked = walk(config, registry, |c| {
        found.lock().unwrap_or_else(|e| e.into_inner()).push(c);
        true
    })?;
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((found, walked.skipped))
}

/// Walks DIR on all cores, handing each file to scan to `found` as soon as
/// it is seen (from the walk's threads, in no particular order); returns
/// the folders entered and counts the entries that could not be visited.
/// The walk ends early once `found` returns `false`.
pub(crate) fn walk(
    config: &Config,
    registry: &Registry,
    found: impl Fn(Candidate) -> bool + Sync,
) -> Result<Walked, WalkError> {
    let dir = &config.dir;
    let fail = |reason: String| WalkError {
        dir: dir.clone(),
        reason,
    };
    std::fs::read_dir(dir).map_err(|e| fail(e.to_string()))?;
    let walker = WalkBuilder::new(dir)
        .hidden(true)
        .git_ignore(config.gitignore)
        .git_exclude(config.gitignore)
        .git_global(false)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .follow_links(!config.no_symlinks)
        .overrides(config.ignore.clone())
        .build_parallel();
    let skipped = std::sync::Mutex::new(SkipCounts::default());
    let folders = std::sync::Mutex::new(Vec::new());
    walker.run(|| {
        Box::new(|entry| {
            let go_on = match entry {
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_dir()) => {
                    let mut folders = folders.lock().unwrap_or_else(|e| e.into_inner());
                    folders.push(entry.into_path());
                    true
                }
                Ok(entry) => candidate(config, registry, &entry).is_none_or(&found),
                Err(err) => {
                    tracing::debug!("skipped: {err}");
                    let mut skipped = skipped.lock().unwrap_or_else(|e| e.into_inner());
                    skipped.add(SkipReason::Unreadable);
                    true
                }
            };
            match go_on {
                true => ignore::WalkState::Continue,
                false => ignore::WalkState::Quit,
            }
        })
    });
    let mut folders = folders.into_inner().unwrap_or_else(|e| e.into_inner());
    folders.sort_unstable();
    Ok(Walked {
        skipped: skipped.into_inner().unwrap_or_else(|e| e.into_inner()),
        folders,
    })
}

/// The candidate an entry of the walk is, if it is a file of a scanned format.
fn candidate(config: &Config, registry: &Registry, entry: &ignore::DirEntry) -> Option<Candidate> {
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let path = entry.path();
    let format = match registry.for_path(path) {
        None if path.extension().is_none() => registry.for_shebang(&head(path)?),
        format => format,
    }
    .filter(|f| config.formats.contains(&f.id))?;
    let (size, mtime_ns) = entry.metadata().map_or((0, 0), |m| size_and_mtime(&m));
    Some(Candidate {
        abs: path.to_owned(),
        rel: relative(&config.dir, path)?,
        format: format.id,
        size,
        mtime_ns,
    })
}

/// The first bytes of a file, where a shebang line would be.
fn head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut head = Vec::with_capacity(SHEBANG_BYTES);
    // Non-blocking: a file replaced by a FIFO since the walk saw it does
    // not hang the walk.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?
        .take(SHEBANG_BYTES as u64)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// Bytes read of a file without extension to find its shebang line.
const SHEBANG_BYTES: usize = 256;

/// `path` relative to `dir` with `/` separators.
pub(crate) fn relative(dir: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Size and modification time (nanoseconds since the epoch, 0 if unknown).
fn size_and_mtime(meta: &std::fs::Metadata) -> (u64, u64) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    (meta.len(), mtime)
}

/// Whether a file of `size` bytes is over the limit (or over 4 GiB, which
/// token offsets cannot address).
fn too_large(size: u64, max_size: u64) -> bool {
    size > max_size.min(u64::from(u32::MAX))
}

/// Reads a file's text, or says why it is skipped; a file known to be too
/// large from its size is not read at all.
pub fn read(path: &Path, max_size: u64, max_lines: Option<u64>) -> Result<String, SkipReason> {
    let size = std::fs::metadata(path)
        .map_err(|_| SkipReason::Unreadable)?
        .len();
    if too_large(size, max_size) {
        return Err(SkipReason::TooLarge);
    }
    read_text(path, max_size, max_lines)
}

/// Reads a walked candidate's text (its size was seen by the walk), or says
/// why it is skipped.
pub(crate) fn read_candidate(
    c: &Candidate,
    max_size: u64,
    max_lines: Option<u64>,
) -> Result<String, SkipReason> {
    if too_large(c.size, max_size) {
        return Err(SkipReason::TooLarge);
    }
    read_text(&c.abs, max_size, max_lines)
}

/// The checks made on the content itself: size (it may have grown), NUL
/// bytes, UTF-8, line count.
fn read_text(path: &Path, max_size: u64, max_lines: Option<u64>) -> Result<String, SkipReason> {
    let bytes = std::fs::read(path).map_err(|_| SkipReason::Unreadable)?;
    if too_large(bytes.len() as u64, max_size) {
        return Err(SkipReason::TooLarge);
    }
    if bytes.contains(&0) {
        return Err(SkipReason::Binary);
    }
    let text = String::from_utf8(bytes).map_err(|_| SkipReason::NotUtf8)?;
    if let Some(max) = max_lines {
        let lines = crate::engine::tokens::LineIndex::new(&text).editor_lines(&text);
        if u64::from(lines) > max {
            return Err(SkipReason::TooManyLines);
        }
    }
    Ok(text)
}

/// Whether `text` looks minified: a line of more than 1,000 characters
/// among its first 5.
pub fn minified(text: &str) -> bool {
    const LONGEST: usize = 1_000;
    text.split('\n')
        .take(5)
        .any(|line| line.len() > LONGEST && line.chars().count() > LONGEST)
}

/// Whether the comments that open a file (`head`: its text before its
/// first token) say it is generated: `@generated` (Facebook's convention),
/// a line with `Code generated` and then `DO NOT EDIT` (Go's), or
/// `<auto-generated` (.NET's).
pub fn generated_header(head: &str) -> bool {
    head.contains("@generated")
        || head.contains("<auto-generated")
        || head.lines().any(|line| {
            line.find("Code generated")
                .is_some_and(|at| line[at..].contains("DO NOT EDIT"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_and_minified_files_are_recognised() {
        for head in [
            "// Code generated by protoc-gen-go. DO NOT EDIT.\n// source: a.proto\n\n",
            "/**\n * @generated SignedSource<<abc>>\n */\n",
            "// <auto-generated>\n//     This code was generated by a tool.\n// </auto-generated>\n",
            "# @generated by gen.py\n",
        ] {
            assert!(generated_header(head), "{head}");
        }
        for head in [
            "// Copyright 2026. Do not edit without review.\n",
            "// DO NOT EDIT. Code generated elsewhere is fine\n",
            "",
        ] {
            assert!(!generated_header(head), "{head}");
        }
        let long = "x".repeat(1_001);
        assert!(minified(&format!("a\nb\nc\nd\n{long}\n")));
        assert!(!minified(&format!("a\nb\nc\nd\ne\n{long}\n")));
        // Characters, not bytes: 600 two-byte characters are 600.
        assert!(!minified(&"é".repeat(600)));
        assert!(!minified(&"x".repeat(1_000)));
    }

    #[test]
    fn read_sorts_out_unusable_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        assert_eq!(
            read(&file("ok.js", b"a\nb\n"), 100, Some(2)),
            Ok("a\nb\n".into())
        );
        assert_eq!(
            read(&file("big.js", &[b'a'; 101]), 100, None),
            Err(SkipReason::TooLarge)
        );
        assert_eq!(
            read(&file("long.js", b"a\nb\nc"), 100, Some(2)),
            Err(SkipReason::TooManyLines)
        );
        assert_eq!(
            read(&file("bin.js", b"a\0b"), 100, None),
            Err(SkipReason::Binary)
        );
        assert_eq!(
            read(&file("latin1.js", b"caf\xe9"), 100, None),
            Err(SkipReason::NotUtf8)
        );
        assert_eq!(
            read(&dir.path().join("gone.js"), 100, None),
            Err(SkipReason::Unreadable)
        );
    }

    #[test]
    fn relative_paths_use_slashes() {
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c/d.js")).as_deref(),
            Some("c/d.js")
        );
        assert_eq!(relative(Path::new("/a/b"), Path::new("/x/d.js")), None);
    }
}
