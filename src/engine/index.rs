//! Index: every scanned file's tokens plus the fingerprint postings.
//!
//! In: tokenized [`SourceFile`]s. Out: an immutable [`Index`] that answers
//! "where does this fingerprint occur?" per format family, and keeps each
//! file's text and token stream so that candidates can be verified token by
//! token and reported with exact lines.
//!
//! Invariants: postings of one family are one array sorted by hash, with
//! the start of each bucket of hashes sharing their top bits (a lookup is
//! one or two cache misses, no map of vectors); positions are token indices into
//! the file's stream. An `Index` never changes once built: a rescan builds a
//! new one and swaps it in whole.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::engine::definitions::Definitions;
use crate::engine::fingerprint::{Fingerprint, Winnow};
use crate::engine::grammar::{Format, FormatId, Registry};
use crate::engine::hash::{HashMap, HashSet};
#[cfg(test)]
use crate::engine::parse::{Budget, ParseError};
use crate::engine::symbols::Symbol;
use crate::engine::text::{FileText, Reader, Slices};
#[cfg(test)]
use crate::engine::tokens::{tokenize_defined, Normalization};
use crate::engine::tokens::{LineIndex, Mode, PackedTokens, Position, Tokens};

/// What identifies a file's content on disk: compared to decide whether
/// tokens from a previous scan or the cache can be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileMeta {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 if unknown).
    pub mtime_ns: u64,
    /// XXH3 of the content.
    pub content_hash: u64,
}

impl FileMeta {
    /// The metadata of `text` read from a file of this size and mtime.
    pub(crate) fn of(text: &str, size: u64, mtime_ns: u64) -> FileMeta {
        FileMeta {
            size,
            mtime_ns,
            content_hash: xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
        }
    }
}

/// One scanned source file.
#[derive(Debug)]
pub struct SourceFile {
    /// Path as reported: relative to DIR with `/`, or absolute.
    pub path: String,
    /// Path relative to DIR with `/` separators.
    pub rel: String,
    /// Its format.
    pub format: FormatId,
    /// Its family (formats of a family match each other).
    pub family: usize,
    /// The text that was tokenized, compressed: read it once per answer
    /// through [`SourceFile::view`], never in a matching loop.
    pub text: FileText,
    /// Line starts of `text`.
    pub lines: LineIndex,
    /// Normalized tokens, packed (a text's hash kept once per file).
    /// (Their fingerprints live in the index's postings alone: a file
    /// keeps no copy.)
    pub tokens: PackedTokens,
    /// Size, mtime and content hash of `text` on disk.
    pub meta: FileMeta,
    /// Its definitions (functions, classes...), from the walk that made its
    /// tokens; none for a file whose definitions were not kept (another
    /// repository's, from the store).
    pub definitions: Definitions,
}

impl SourceFile {
    /// Tokenizes `text` as `format`; `meta` describes it on disk. Fails
    /// when the parse runs out of its budget. (A scan tokenizes first, so
    /// that the generated-file rule reads the text before it is packed.)
    #[cfg(test)]
    pub(crate) fn new(
        path: String,
        rel: String,
        format: &Format,
        text: String,
        meta: FileMeta,
        normalization: &Normalization,
    ) -> Result<SourceFile, ParseError> {
        let budget = Budget::for_file(text.len());
        let (tokens, definitions) = tokenize_defined(format, &text, normalization, &budget)?;
        Ok(
            SourceFile::with_tokens(path, rel, format, text, tokens, meta)
                .with_definitions(definitions),
        )
    }

    /// The same file with its definitions.
    pub(crate) fn with_definitions(self, definitions: Definitions) -> SourceFile {
        SourceFile {
            definitions,
            ..self
        }
    }

    /// The file as an answer reads it (its text read back on first need).
    pub(crate) fn view(&self) -> FileView<'_> {
        FileView::new(self)
    }

    /// A file whose tokens are already known (from a previous scan or the
    /// cache).
    pub(crate) fn with_tokens(
        path: String,
        rel: String,
        format: &Format,
        text: String,
        tokens: impl Into<PackedTokens>,
        meta: FileMeta,
    ) -> SourceFile {
        let lines = LineIndex::new(&text);
        SourceFile::of_parts(path, rel, format, FileText::new(text), lines, tokens, meta)
    }

    /// A file of a text already kept (packed by an earlier run) and its
    /// line table, whose tokens are known.
    pub(crate) fn of_parts(
        path: String,
        rel: String,
        format: &Format,
        text: FileText,
        lines: LineIndex,
        tokens: impl Into<PackedTokens>,
        meta: FileMeta,
    ) -> SourceFile {
        SourceFile {
            path,
            rel,
            format: format.id,
            family: format.family_id,
            lines,
            text,
            tokens: tokens.into(),
            meta,
            definitions: Definitions::default(),
        }
    }

    /// Bytes from the first byte of token `first` to the last byte of
    /// token `last`: the length of [`FileView::fragment`], without the
    /// text.
    pub(crate) fn fragment_len(&self, first: u32, last: u32) -> usize {
        (self.tokens.at(last as usize).end() - self.tokens.at(first as usize).start) as usize
    }

    /// Its tokens, walls (which stand for suppressed code) not counted.
    pub(crate) fn token_count(&self) -> u64 {
        (self.tokens.len() - self.tokens.walls()) as u64
    }

    /// Lines as an editor counts them.
    pub(crate) fn line_count(&self) -> u32 {
        self.lines.editor_lines_of(self.text.len())
    }

    /// The line of the start of token `i` (what [`FileView::token_start`]
    /// says, without the text).
    pub(crate) fn token_line(&self, i: u32) -> u32 {
        self.lines.line_of(self.tokens.at(i as usize).start)
    }

    /// The line of the last character of token `i` (what
    /// [`FileView::token_end`] says, without the text).
    pub(crate) fn token_end_line(&self, i: u32) -> u32 {
        self.lines
            .line_of(self.tokens.at(i as usize).end().saturating_sub(1))
    }

    /// The folder part of `rel` (empty for files at the top).
    pub(crate) fn folder(&self) -> &str {
        folder_of(&self.rel)
    }
}

/// A [`SourceFile`] as an answer reads it: positions with columns,
/// fragments and symbols. Its text is read back (decompressed) on first
/// need, once, and only the blocks of it that the answer reads (a line's
/// columns, a fragment, a name); an ASCII file's columns need none.
pub(crate) struct FileView<'a> {
    /// The file.
    pub file: &'a SourceFile,
    text: Reader<'a>,
}

impl<'a> FileView<'a> {
    /// A view of `file`, its text not read yet.
    pub(crate) fn new(file: &'a SourceFile) -> FileView<'a> {
        FileView {
            file,
            text: Reader::new(&file.text),
        }
    }

    /// Its whole text, read back on the first call (an answer that reads
    /// a few ranges of it reads them through [`Slices`]).
    pub(crate) fn text(&self) -> &str {
        self.text.whole()
    }

    /// Start of token `i`.
    pub(crate) fn token_start(&self, i: u32) -> Position {
        let (lines, offset) = (&self.file.lines, self.file.tokens.at(i as usize).start);
        if self.file.text.is_ascii() {
            lines.ascii_start_position(offset)
        } else {
            lines.start_position(&self.text, offset)
        }
    }

    /// End (just after the last character) of token `i`.
    pub(crate) fn token_end(&self, i: u32) -> Position {
        let (lines, end) = (&self.file.lines, self.file.tokens.at(i as usize).end());
        if self.file.text.is_ascii() {
            lines.ascii_end_position(end)
        } else {
            lines.end_position(&self.text, end)
        }
    }

    /// Source text from the first byte of token `first` to the last byte of
    /// token `last`.
    pub(crate) fn fragment(&self, first: u32, last: u32) -> &str {
        let tokens = &self.file.tokens;
        let (s, e) = (
            tokens.at(first as usize).start,
            tokens.at(last as usize).end(),
        );
        self.text
            .slice(s as usize..e as usize)
            .expect("tokens lie in their file's text, on character boundaries")
    }

    /// Its text from the start of line `first` (1-based) to the end of
    /// line `first + count - 1`, that line's break included; empty past
    /// its last line.
    pub(crate) fn lines(&self, first: u32, count: u32) -> &str {
        let lines = &self.file.lines;
        let at = |line: u32| {
            lines
                .line_start(line)
                .map_or(self.text_len(), |s| s as usize)
        };
        self.text
            .slice(at(first)..at(first + count).max(at(first)))
            .expect("lines start on character boundaries")
    }

    /// The symbol of the place from `from` to `to` (see
    /// [`Definitions::symbol`]).
    pub(crate) fn symbol_at(&self, from: Position, to: Position) -> Option<Symbol> {
        let file = self.file;
        if file.definitions.as_slice().is_empty() {
            return None;
        }
        file.definitions
            .symbol_at(&self.text, &file.lines, &file.tokens, from, to)
    }
}

impl Slices for FileView<'_> {
    fn text_len(&self) -> usize {
        self.text.text_len()
    }

    fn slice(&self, range: Range<usize>) -> Option<&str> {
        self.text.slice(range)
    }
}

/// The files one answer reads: a [`FileView`] per file asked for, made on
/// first ask, so that each file's text is read back once per answer at
/// most. (Keyed by address: a file borrowed for `'a` is not freed, nor
/// its address reused, while the views live.)
#[derive(Default)]
pub(crate) struct Views<'a> {
    views: RefCell<HashMap<*const SourceFile, Rc<FileView<'a>>>>,
}

impl<'a> Views<'a> {
    /// The view of `file`.
    pub(crate) fn of(&self, file: &'a SourceFile) -> Rc<FileView<'a>> {
        let mut views = self.views.borrow_mut();
        let view = views
            .entry(file as *const SourceFile)
            .or_insert_with(|| Rc::new(FileView::new(file)));
        Rc::clone(view)
    }
}

/// What an [`Index`] holds in memory, by structure, in bytes (capacities:
/// what the allocator gave, not what is used). Files shared with another
/// snapshot are counted in each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// The files' token streams.
    pub tokens: u64,
    /// The files' texts.
    pub texts: u64,
    /// The files' line tables.
    pub line_tables: u64,
    /// The postings of the fingerprints and of the seeds.
    pub postings: u64,
    /// The fingerprints and seeds found elsewhere too
    /// ([`Index::repeated`]), once clone detection asked for them.
    pub repeated: u64,
    /// Paths, the path map and the per-file records.
    pub files: u64,
    /// The files' definitions (functions, classes...).
    pub definitions: u64,
}

impl Footprint {
    /// Every part, named, in the order of the struct.
    pub fn parts(&self) -> [(&'static str, u64); 7] {
        [
            ("tokens", self.tokens),
            ("texts", self.texts),
            ("line tables", self.line_tables),
            ("postings", self.postings),
            ("repeated", self.repeated),
            ("files", self.files),
            ("definitions", self.definitions),
        ]
    }

    /// All parts together.
    pub fn total(&self) -> u64 {
        self.parts().iter().map(|(_, bytes)| bytes).sum()
    }
}

/// Bytes of a vector's allocation.
fn bytes_of<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * std::mem::size_of::<T>()) as u64
}

/// The immediate parent folder of a `/`-separated relative path.
pub(crate) fn folder_of(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// One occurrence of a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Posting {
    /// The fingerprint's hash.
    pub hash: u64,
    /// Index of the file in [`Index::files`].
    pub file: u32,
    /// Token position of the k-gram in that file.
    pub pos: u32,
    /// The k-gram's tag ([`tag_at`]) in a table that keeps tags; 0
    /// otherwise.
    pub tag: u8,
}

impl From<&Posting> for Fingerprint {
    fn from(p: &Posting) -> Fingerprint {
        Fingerprint {
            hash: p.hash,
            pos: p.pos,
        }
    }
}

/// One file's prints as an index takes them: its fingerprints and seeds
/// in position order, and its fingerprints' tags ([`tag_at`]) in theirs
/// (none where the index keeps none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PrintsOf<'a> {
    pub fingerprints: &'a [Fingerprint],
    pub seeds: &'a [Fingerprint],
    pub tags: &'a [u8],
}

/// The prints of files, one file's after another's. A scan's worker adds
/// those of each file it tokenizes while its tokens are plain and in the
/// core's cache, into one for all its files: no allocation per file is
/// left between the files' tokens and texts once the index took them.
#[derive(Debug, Default)]
pub(crate) struct Printed {
    fingerprints: Vec<Fingerprint>,
    seeds: Vec<Fingerprint>,
    tags: Vec<u8>,
    /// The weak ids of the file at hand.
    ids: Vec<u64>,
}

/// Where one file's prints lie in a [`Printed`]: its fingerprints (and
/// their tags, if any) and its seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PrintsAt {
    fingerprints: (usize, usize),
    seeds: (usize, usize),
}

impl Printed {
    /// Adds the prints of `tokens` for an index of `winnow` (its weak ids
    /// read once for both winnowings).
    pub(crate) fn add(&mut self, tokens: &(impl Tokens + ?Sized), winnow: Winnow) -> PrintsAt {
        self.ids.clear();
        self.ids.extend(tokens.each().map(|t| t.weak_id()));
        let (fingerprints, seeds) = (self.fingerprints.len(), self.seeds.len());
        winnow.fingerprints(&self.ids, &mut self.fingerprints);
        Winnow::for_min_tokens(SEED_TOKENS).fingerprints(&self.ids, &mut self.seeds);
        if winnow.tags != Mode::Weak {
            let added = &self.fingerprints[fingerprints..];
            (self.tags).extend(added.iter().map(|f| tag_at(tokens, f.pos, winnow)));
        }
        PrintsAt {
            fingerprints: (fingerprints, self.fingerprints.len()),
            seeds: (seeds, self.seeds.len()),
        }
    }

    /// Adds `prints`, made elsewhere (a store's), with their fingerprints'
    /// tags in `tokens` for an index of `winnow`.
    fn add_given(
        &mut self,
        prints: FilePrints,
        tokens: &(impl Tokens + ?Sized),
        winnow: Winnow,
    ) -> PrintsAt {
        let (fingerprints, seeds) = (self.fingerprints.len(), self.seeds.len());
        if winnow.tags != Mode::Weak {
            (self.tags).extend(
                prints
                    .fingerprints
                    .iter()
                    .map(|f| tag_at(tokens, f.pos, winnow)),
            );
        }
        self.fingerprints.extend(prints.fingerprints);
        self.seeds.extend(prints.seeds);
        PrintsAt {
            fingerprints: (fingerprints, self.fingerprints.len()),
            seeds: (seeds, self.seeds.len()),
        }
    }

    /// The prints added `at`.
    pub(crate) fn of(&self, at: PrintsAt) -> PrintsOf<'_> {
        let (from, to) = at.fingerprints;
        PrintsOf {
            fingerprints: &self.fingerprints[from..to],
            seeds: &self.seeds[at.seeds.0..at.seeds.1],
            tags: self.tags.get(from..to).unwrap_or_default(),
        }
    }
}

/// A file's fingerprints and seeds, made once and kept beside it, each
/// list sorted by hash.
#[derive(Debug, Clone, Default)]
pub struct FilePrints {
    /// Its fingerprints, winnowed as the index's.
    pub fingerprints: Vec<Fingerprint>,
    /// Its seeds ([`Postings::Seeds`]).
    pub seeds: Vec<Fingerprint>,
}

impl FilePrints {
    /// The prints of `tokens` with `winnow` (and the seeds' winnowing),
    /// each list sorted by hash.
    pub(crate) fn of(tokens: &(impl Tokens + ?Sized), winnow: Winnow) -> FilePrints {
        let sorted = |mut prints: Vec<Fingerprint>| {
            prints.sort_unstable_by_key(|f| (f.hash, f.pos));
            prints
        };
        FilePrints {
            fingerprints: sorted(fingerprints(tokens, winnow)),
            seeds: sorted(fingerprints(tokens, Winnow::for_min_tokens(SEED_TOKENS))),
        }
    }

    /// Bytes it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.fingerprints.capacity() + self.seeds.capacity()) * std::mem::size_of::<Fingerprint>()
    }

    /// Those of its prints whose hash `wanted` holds: a binary search a
    /// hash wanted, not a pass over a whole file's prints.
    pub(crate) fn only(&self, wanted: &HashSet<u64>) -> FilePrints {
        let keep = |prints: &[Fingerprint]| -> Vec<Fingerprint> {
            let mut kept = Vec::new();
            for &hash in wanted {
                let from = prints.partition_point(|f| f.hash < hash);
                let to = from + prints[from..].partition_point(|f| f.hash == hash);
                kept.extend_from_slice(&prints[from..to]);
            }
            kept
        };
        FilePrints {
            fingerprints: keep(&self.fingerprints),
            seeds: keep(&self.seeds),
        }
    }
}

/// The posting tables of an index as a cache keeps them: per family, of
/// the files' fingerprints, then of their seeds, the files numbered as the
/// cache's entries.
#[derive(Debug, Default)]
pub(crate) struct PostingLists {
    /// Per family, of the fingerprints.
    pub postings: Vec<CachedTable>,
    /// Per family, of the seeds.
    pub seeds: Vec<CachedTable>,
    /// The mode of the fingerprints' tags ([`Winnow::tags`]).
    pub tags: Mode,
}

/// What one table of a new index takes from an older one.
enum Old<'a> {
    /// The table of a previous index.
    Table(&'a Table),
    /// A cache's table: kept as it is where every file is its own.
    Owned(Table),
}

/// Which fingerprints a lookup searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Postings {
    /// The files' fingerprints: every common run of min-tokens shares one.
    Fingerprints,
    /// The finer seeds of near-miss detection: every common run of
    /// [`SEED_TOKENS`] shares one.
    Seeds,
}

/// Common runs this long always share a seed ([`Postings::Seeds`]): the
/// parts of a near-miss copy between its edits are found down to this.
pub(crate) const SEED_TOKENS: usize = 20;

/// Fingerprints occurring in more places than this are skipped by
/// whole-project detection (docs/matching.md, "Clones in the project") and by snippet checks: such code
/// (license headers, generated tables, one statement repeated) would cost
/// quadratic time, and every run it is part of has other fingerprints.
pub(crate) const POSTING_CAP: usize = 1000;

/// Seeds occurring in more places than this are skipped by near-miss
/// detection: a seed is short, so one that common is boilerplate, and a
/// copy has other seeds.
pub(crate) const SEED_CAP: usize = 30;

/// All scanned files and their fingerprints.
#[derive(Debug)]
pub struct Index {
    /// Scanned files, sorted by path. Shared with the next snapshot when
    /// unchanged.
    pub files: Vec<Arc<SourceFile>>,
    /// Per family: the postings of the files' fingerprints.
    postings: Vec<Table>,
    /// Per family: the postings of the files' seeds (their fingerprints
    /// winnowed for [`SEED_TOKENS`]).
    seeds: Vec<Table>,
    /// Per file: its fingerprints and seeds that occur elsewhere too.
    repeated: OnceLock<Vec<Repeated>>,
    /// The winnowing parameters the fingerprints were made with.
    pub winnow: Winnow,
    /// Relative path → file.
    by_rel: HashMap<String, u32>,
}

/// A file's fingerprints and seeds whose hash has other postings (in
/// another file, or elsewhere in it): all that a lookup of the file's own
/// can find beside itself, and so all that whole-project clone detection
/// looks up. Most of a project is unique, and its fingerprints need no
/// lookup. Kept as two sets of token positions, a bit per token (a print's
/// hash follows from the tokens at its position, [`Winnow::kgram_hash`]),
/// not 12 bytes per print: [`Index::repeated_prints`] gives the prints.
#[derive(Debug, Default)]
pub(crate) struct Repeated {
    /// Of the file's fingerprints, those found elsewhere in no more than
    /// [`POSTING_CAP`] places in all.
    fingerprints: Positions,
    /// Of its seeds ([`Postings::Seeds`]), those found elsewhere in no
    /// more than [`SEED_CAP`] places in all.
    seeds: Positions,
    /// How many of its fingerprints are in more places than
    /// [`POSTING_CAP`]: the lookups detection skips.
    capped: usize,
}

/// A set of token positions of one file: a bit per token, nothing when
/// empty.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Positions(Box<[u64]>);

impl Positions {
    /// Adds `pos`, a position of a stream of `tokens` tokens.
    fn insert(&mut self, pos: u32, tokens: usize) {
        if self.0.is_empty() {
            self.0 = vec![0; tokens.div_ceil(64).max(1)].into_boxed_slice();
        }
        let (word, bit) = (pos as usize / 64, pos % 64);
        if let Some(w) = self.0.get_mut(word) {
            *w |= 1 << bit;
        }
    }

    /// The positions, in increasing order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros();
                    rest &= rest - 1;
                    i as u32 * 64 + bit
                })
            })
        })
    }

    /// Bytes it holds.
    fn heap_bytes(&self) -> u64 {
        (self.0.len() * std::mem::size_of::<u64>()) as u64
    }
}

impl Index {
    /// Indexes `files` (sorted by path here): fingerprints and seeds of
    /// every file, on all cores.
    pub(crate) fn build(files: Vec<Arc<SourceFile>>, registry: &Registry, winnow: Winnow) -> Index {
        Index::build_on(None, files, Vec::new(), registry, winnow)
    }

    /// Indexes `files` (sorted by path here) as [`Index::build`] does, but
    /// takes the postings of every file that `previous` holds too (the same
    /// `Arc`) from its tables instead of fingerprinting it again: an update
    /// that changes one file costs a pass over the postings, not the
    /// fingerprints of every file. `made` is empty, or holds each file's
    /// prints where they were made already (with `winnow`).
    pub(crate) fn build_on(
        previous: Option<&Index>,
        files: Vec<Arc<SourceFile>>,
        made: Vec<Option<PrintsOf<'_>>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        let (files, made) = by_path(files, made);
        let previous = previous.filter(|p| p.winnow == winnow);
        let moved = previous.map_or_else(Vec::new, |p| moved(p, &files));
        let olds = previous.map_or_else(Vec::new, |p| {
            p.postings.iter().chain(&p.seeds).map(Old::Table).collect()
        });
        Index::assemble(olds, moved, files, made, registry, winnow)
    }

    /// Indexes `files` as [`Index::build`] does, but takes the postings of
    /// the files made from a cache's entries from the lists it kept
    /// (`cached`, made with the same winnowing: the cache's key holds
    /// min-tokens): `entries` gives the entry of each such file, by
    /// relative path, of the cache's `count`. A warm start sorts no
    /// postings and fingerprints only the files that changed (`made` as
    /// [`Index::build_on`]'s).
    pub(crate) fn build_on_cached(
        cached: PostingLists,
        entries: &HashMap<String, u32>,
        count: usize,
        files: Vec<Arc<SourceFile>>,
        made: Vec<Option<PrintsOf<'_>>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        let (files, made) = by_path(files, made);
        let families = registry.families().len();
        if cached.postings.len() != families
            || cached.seeds.len() != families
            || cached.tags != winnow.tags
        {
            return Index::assemble(Vec::new(), Vec::new(), files, made, registry, winnow);
        }
        let mut moved = vec![u32::MAX; count];
        for (id, file) in files.iter().enumerate() {
            if let Some(&entry) = entries.get(&file.rel) {
                if let Some(slot) = moved.get_mut(entry as usize) {
                    *slot = id as u32;
                }
            }
        }
        let olds = cached
            .postings
            .into_iter()
            .chain(cached.seeds)
            .map(|t| Old::Owned(t.0));
        Index::assemble(olds.collect(), moved, files, made, registry, winnow)
    }

    /// Indexes `files`, each given with its fingerprints (made with
    /// `winnow`) and its seeds: files whose prints are kept elsewhere (a
    /// store's, cached by a server) are not fingerprinted again. The prints
    /// given may be only some of a file's (those a check looks up): the
    /// index then answers lookups of those hashes alone.
    pub(crate) fn with_prints(
        files: Vec<(Arc<SourceFile>, FilePrints)>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        let mut printed = Printed::default();
        let (files, at): (Vec<_>, Vec<_>) = files
            .into_iter()
            .map(|(file, prints)| {
                let at = printed.add_given(prints, &file.tokens, winnow);
                (file, Some(at))
            })
            .unzip();
        let made = at
            .into_iter()
            .map(|at| at.map(|at| printed.of(at)))
            .collect();
        let (files, made) = by_path(files, made);
        Index::assemble(Vec::new(), Vec::new(), files, made, registry, winnow)
    }

    /// The index of `files` (sorted by path): the postings of the files
    /// `moved` maps from an older index or cache (its id → theirs) taken
    /// from `olds`, its tables (fingerprints, then seeds, by family; none
    /// without one), the others' postings from their prints, `made` (in
    /// file order, or empty) or made here on all cores.
    fn assemble(
        olds: Vec<Old<'_>>,
        moved: Vec<u32>,
        files: Vec<Arc<SourceFile>>,
        made: Vec<Option<PrintsOf<'_>>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        let mut shared = vec![false; files.len()];
        for &id in moved.iter().filter(|&&id| id != u32::MAX) {
            shared[id as usize] = true;
        }
        let tagged = winnow.tags != Mode::Weak;
        let fresh = (0..files.len() as u32).filter(|&id| !shared[id as usize]);
        let (given, unmade): (Vec<u32>, Vec<u32>) =
            fresh.partition(|&id| made.get(id as usize).is_some_and(Option::is_some));
        // The prints of the fresh files none made yet, on all cores.
        let made_here: Vec<(u32, Printed, PrintsAt)> = unmade
            .into_par_iter()
            .map(|id| {
                let mut printed = Printed::default();
                let at = printed.add(&files[id as usize].tokens, winnow);
                (id, printed, at)
            })
            .collect();
        let prints: Vec<(u32, PrintsOf<'_>)> = (given.into_iter())
            .filter_map(|id| Some((id, made[id as usize]?)))
            .chain(
                made_here
                    .iter()
                    .map(|(id, printed, at)| (*id, printed.of(*at))),
            )
            .collect();
        let families = registry.families().len();
        // Per family, the postings of the fresh files' fingerprints (or
        // seeds, `seeds`), with their tags (0 for seeds or without).
        let by_family = |seeds: bool| {
            let mut lists: Vec<Vec<Posting>> = vec![Vec::new(); families];
            for (file, prints) in &prints {
                let (of, tags) = match seeds {
                    false => (prints.fingerprints, prints.tags),
                    true => (prints.seeds, &[][..]),
                };
                let tag = |j: usize| tags.get(j).copied().unwrap_or(0);
                lists[files[*file as usize].family].extend(of.iter().enumerate().map(|(j, f)| {
                    Posting {
                        hash: f.hash,
                        file: *file,
                        pos: f.pos,
                        tag: tag(j),
                    }
                }));
            }
            lists
        };
        let (fresh_postings, fresh_seeds) = rayon::join(|| by_family(false), || by_family(true));
        drop(prints);
        drop(made_here);
        // Every file of the old tables under its own id: nothing to
        // renumber.
        let same_files = moved.len() == files.len()
            && (moved.iter().enumerate()).all(|(id, &to)| to as usize == id);
        let jobs: Vec<(Option<Old<'_>>, Vec<Posting>)> = olds
            .into_iter()
            .map(Some)
            .chain(std::iter::repeat_with(|| None))
            .zip(fresh_postings.into_iter().chain(fresh_seeds))
            .collect();
        // The fingerprints' tables (the first `families`) keep tags.
        let mut tables: Vec<Table> = jobs
            .into_par_iter()
            .enumerate()
            .map(|(i, (old, list))| {
                let tagged = tagged && i < families;
                match old {
                    Some(Old::Table(old)) => old.merged(&moved, list, tagged),
                    // (A seeds' table keeps no tags: one that does is made
                    // again.)
                    Some(Old::Owned(old))
                        if same_files && list.is_empty() && (tagged || old.tag_bits == 0) =>
                    {
                        old
                    }
                    Some(Old::Owned(old)) => old.merged(&moved, list, tagged),
                    None => Table::new(list, tagged),
                }
            })
            .collect();
        let seeds = tables.split_off(families);
        let by_rel = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.rel.clone(), i as u32))
            .collect();
        Index {
            files,
            postings: tables,
            seeds,
            repeated: OnceLock::new(),
            winnow,
            by_rel,
        }
    }

    /// Where `hash` occurs among the `which` of files of `family`.
    pub(crate) fn lookup_in(&self, which: Postings, family: usize, hash: u64) -> Found<'_> {
        let lists = match which {
            Postings::Fingerprints => &self.postings,
            Postings::Seeds => &self.seeds,
        };
        lists
            .get(family)
            .map_or(Found::NONE, |table| table.lookup(hash))
    }

    /// Per file, its fingerprints and seeds that occur elsewhere too, read
    /// off the sorted postings on first use: only whole-project clone
    /// detection asks, and a scan is ready for checks before it.
    pub(crate) fn repeated(&self) -> &[Repeated] {
        self.repeated.get_or_init(|| self.find_repeated())
    }

    fn find_repeated(&self) -> Vec<Repeated> {
        let mut repeated: Vec<Repeated> = self.files.iter().map(|_| Repeated::default()).collect();
        let tokens = |file: u32| self.files[file as usize].tokens.len();
        // A print over its cap is never looked up: it is left out here,
        // not found too common at each of its places.
        for table in &self.postings {
            table.for_each_repeated(POSTING_CAP, |p, over| {
                let file = &mut repeated[p.file as usize];
                match over {
                    false => file.fingerprints.insert(p.pos, tokens(p.file)),
                    true => file.capped += 1,
                }
            });
        }
        for table in &self.seeds {
            table.for_each_repeated(SEED_CAP, |p, over| {
                if !over {
                    repeated[p.file as usize]
                        .seeds
                        .insert(p.pos, tokens(p.file));
                }
            });
        }
        repeated
    }

    /// File `file`'s fingerprints and seeds that occur elsewhere too, and
    /// not beyond their caps ([`Index::repeated`]), each list in position
    /// order; and how many of its fingerprints are beyond theirs.
    pub(crate) fn repeated_prints(&self, file: u32) -> (Vec<Fingerprint>, Vec<Fingerprint>, usize) {
        let tokens = &self.files[file as usize].tokens;
        let repeated = &self.repeated()[file as usize];
        let prints = |positions: &Positions, winnow: Winnow| -> Vec<Fingerprint> {
            positions
                .iter()
                .map(|pos| {
                    let end = (pos as usize + winnow.k).min(tokens.len());
                    let ids = tokens.within(pos as usize..end).map(|t| t.weak_id());
                    Fingerprint {
                        hash: winnow.kgram_hash(ids),
                        pos,
                    }
                })
                .collect()
        };
        (
            prints(&repeated.fingerprints, self.winnow),
            prints(&repeated.seeds, Winnow::for_min_tokens(SEED_TOKENS)),
            repeated.capped,
        )
    }

    /// What the index holds in memory, by structure.
    pub fn footprint(&self) -> Footprint {
        let mut f = Footprint::default();
        for file in &self.files {
            f.tokens += file.tokens.heap_bytes() as u64;
            f.texts += file.text.heap_bytes() as u64;
            f.line_tables += file.lines.heap_bytes() as u64;
            f.definitions += file.definitions.heap_bytes() as u64;
            f.files += (std::mem::size_of::<SourceFile>()
                + file.path.capacity()
                + file.rel.capacity()
                // The path map's key and entry.
                + file.rel.len()
                + std::mem::size_of::<(String, u32)>()) as u64;
        }
        for table in self.postings.iter().chain(&self.seeds) {
            f.postings += table.heap_bytes();
        }
        if let Some(repeated) = self.repeated.get() {
            f.repeated = repeated
                .iter()
                .map(|r| r.fingerprints.heap_bytes() + r.seeds.heap_bytes())
                .sum::<u64>()
                + bytes_of(repeated);
        }
        f
    }

    /// Where each file of `previous` is in this index (built on it), or
    /// `u32::MAX` where it is not: the same `Arc` at the same path.
    pub(crate) fn moved_from(&self, previous: &Index) -> Vec<u32> {
        moved(previous, &self.files)
    }

    /// The postings of every table, as a cache keeps them.
    pub(crate) fn posting_lists(&self) -> impl Iterator<Item = PostingList<'_>> {
        self.postings.iter().chain(&self.seeds).map(PostingList)
    }

    /// The file at a path relative to DIR.
    pub(crate) fn file_by_rel(&self, rel: &str) -> Option<u32> {
        self.by_rel.get(rel).copied()
    }
}

/// Postings sorted by hash, and where each bucket of hashes that share
/// their top bits starts. Fingerprint hashes are mixed, so the buckets are
/// even: with about one bucket per posting, a lookup reads two offsets and
/// a posting or two, where a binary search over all of them would miss the
/// cache a dozen times (the lookups are most of a check and of clone
/// detection).
///
/// A posting is packed into as few whole bytes as its table needs: the
/// hash's bits below the bucket's (the bucket gives the top ones), then
/// the file's and the position's, each as wide as the table's largest
/// (the Linux kernel's C: 40 + 16 + 19 bits, 10 bytes, not 16). Nothing is
/// dropped: a lookup finds exactly the postings of its whole hash.
#[derive(Debug)]
struct Table {
    /// The postings, `width` bytes each, little-endian, then
    /// [`Table::PADDING`] zero bytes (so that every posting is read as one
    /// `u128`). A posting is `rest << (file_bits + pos_bits + tag_bits) |
    /// file << (pos_bits + tag_bits) | pos << tag_bits | tag`, `rest` the
    /// hash's low `shift` bits: sorted by hash, file and position within a
    /// bucket, as the numbers are.
    records: Vec<u8>,
    /// How many postings.
    len: usize,
    /// Bytes per posting: 1 to 16.
    width: usize,
    /// Bits of a posting's file: those of the largest.
    file_bits: u32,
    /// Bits of a posting's position: those of the largest.
    pos_bits: u32,
    /// Bits of a posting's tag: 8 in a table that keeps tags, else 0.
    tag_bits: u32,
    /// `starts[b]`: the first posting whose hash's bucket is `b` or more;
    /// one more entry than there are buckets.
    starts: Vec<u32>,
    /// A hash's bucket is `hash >> shift`.
    shift: u32,
}

/// The postings of one hash in a [`Table`] ([`Index::lookup_in`]): sorted
/// by file and position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Found<'a> {
    table: Option<&'a Table>,
    hash: u64,
    from: usize,
    to: usize,
}

impl<'a> Found<'a> {
    /// None.
    const NONE: Found<'static> = Found {
        table: None,
        hash: 0,
        from: 0,
        to: 0,
    };

    /// How many.
    pub(crate) fn len(&self) -> usize {
        self.to - self.from
    }

    /// Whether the postings carry their k-grams' tags.
    pub(crate) fn tagged(&self) -> bool {
        self.table.is_some_and(|t| t.tag_bits > 0)
    }

    /// Those after `(file, pos)`, by file and position: found by bisection,
    /// where a filter would read every posting.
    pub(crate) fn after(self, file: u32, pos: u32) -> Found<'a> {
        let Some(table) = self.table else {
            return self;
        };
        let (mut lo, mut hi) = (self.from, self.to);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let p = table.posting(mid, self.hash);
            if (p.file, p.pos) > (file, pos) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Found { from: lo, ..self }
    }

    /// The postings, in order.
    pub(crate) fn iter(&self) -> FoundIter<'a> {
        FoundIter(*self)
    }
}

impl<'a> IntoIterator for Found<'a> {
    type Item = Posting;
    type IntoIter = FoundIter<'a>;

    fn into_iter(self) -> FoundIter<'a> {
        FoundIter(self)
    }
}

/// The postings of a [`Found`], in order: those from its `from` on.
#[derive(Debug, Clone)]
pub(crate) struct FoundIter<'a>(Found<'a>);

impl Iterator for FoundIter<'_> {
    type Item = Posting;

    #[inline]
    fn next(&mut self) -> Option<Posting> {
        let found = &mut self.0;
        if found.from >= found.to {
            return None;
        }
        found.from += 1;
        Some(found.table?.posting(found.from - 1, found.hash))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.len(), Some(self.0.len()))
    }
}

/// The postings of one table in order, as a cache writes them
/// ([`Index::posting_lists`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PostingList<'a>(&'a Table);

impl<'a> PostingList<'a> {
    /// How many.
    pub(crate) fn len(&self) -> usize {
        self.0.len
    }

    /// The bits of each posting's file, position and tag.
    pub(crate) fn bits(&self) -> [u32; 3] {
        [self.0.file_bits, self.0.pos_bits, self.0.tag_bits]
    }

    /// How many postings each bucket holds, bucket by bucket.
    pub(crate) fn bucket_sizes(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        self.0.starts.windows(2).map(|w| w[1] - w[0])
    }

    /// The postings' bytes, as the table packs them ([`Table::records`]).
    pub(crate) fn records(&self) -> &'a [u8] {
        &self.0.records[..self.0.len * self.0.width]
    }

    /// The postings, sorted by hash, file and position.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = Posting> + 'a {
        self.0.iter()
    }
}

/// A cache's posting table, checked ([`CachedTable::from_parts`]).
#[derive(Debug)]
pub(crate) struct CachedTable(Table);

impl CachedTable {
    /// Bytes to spare after a table's records (each is read as 16 bytes).
    pub(crate) const PADDING: usize = Table::PADDING;

    /// How many buckets a table of `len` postings has.
    pub(crate) fn buckets(len: usize) -> usize {
        1 << Table::bits_for(len)
    }

    /// Bytes per posting of a table of `len` postings with these `bits` of
    /// file, position and tag; `None` if they cannot be a table's.
    pub(crate) fn width(len: usize, [file_bits, pos_bits, tag_bits]: [u32; 3]) -> Option<usize> {
        let shift = u64::BITS - Table::bits_for(len);
        let bits = shift + file_bits + pos_bits + tag_bits;
        let fits = file_bits <= 32 && pos_bits <= 32 && matches!(tag_bits, 0 | 8) && bits <= 128;
        fits.then(|| bits.div_ceil(8).max(1) as usize)
    }

    /// The table of a cache's parts, as [`PostingList`] gives them: `len`
    /// postings of the `bits` of their file, position and tag, how many
    /// each bucket holds (`sizes`, as many as a table of `len` has
    /// buckets) and their `records` (`len` of them, each as wide as the
    /// bits make it), of files and positions that `valid` accepts. `None`
    /// when these are not the parts of a table, or a posting is refused
    /// or out of order.
    pub(crate) fn from_parts(
        len: usize,
        [file_bits, pos_bits, tag_bits]: [u32; 3],
        sizes: &[u32],
        mut records: Vec<u8>,
        valid: impl Fn(u32, u32) -> bool,
    ) -> Option<CachedTable> {
        let shift = u64::BITS - Table::bits_for(len);
        let bits = shift + file_bits + pos_bits + tag_bits;
        let width = CachedTable::width(len, [file_bits, pos_bits, tag_bits])?;
        if sizes.len() != CachedTable::buckets(len) || Some(records.len()) != len.checked_mul(width)
        {
            return None;
        }
        let mut starts = Vec::with_capacity(sizes.len() + 1);
        let mut at = 0u32;
        starts.push(0);
        for &size in sizes {
            at = at.checked_add(size)?;
            starts.push(at);
        }
        if at as usize != len {
            return None;
        }
        records.resize(records.len() + Table::PADDING, 0);
        let table = Table {
            records,
            len,
            width,
            file_bits,
            pos_bits,
            tag_bits,
            starts,
            shift,
        };
        // Every posting's bits inside its own, every file and position
        // valid, and within a bucket each after the one before.
        let above = |record: u128| bits < 128 && record >> bits != 0;
        let ordered = table.starts.windows(2).all(|w| {
            let mut previous = None;
            (w[0] as usize..w[1] as usize).all(|i| {
                let record = table.record(i);
                let p = table.posting(i, 0);
                let key = record >> tag_bits;
                let ok = !above(record) && valid(p.file, p.pos) && previous < Some(key);
                previous = Some(key);
                ok
            })
        });
        ordered.then_some(CachedTable(table))
    }

    /// Its postings, as an index's table gives them.
    #[cfg(test)]
    pub(crate) fn list(&self) -> PostingList<'_> {
        PostingList(&self.0)
    }

    /// The table of `postings`, packed in the order given (sorted or not,
    /// as a damaged cache could hold them).
    #[cfg(test)]
    pub(crate) fn packed_as_given(postings: Vec<Posting>, tagged: bool) -> CachedTable {
        CachedTable(Table::of_sorted(postings, tagged))
    }
}

impl Table {
    /// Most bucket bits: 2^24 buckets, for 16 million postings or more.
    const MAX_BITS: u32 = 24;

    /// Zero bytes after the last posting: a posting is read as 16 bytes.
    const PADDING: usize = 16;

    /// Buckets (or postings) a core sorts (or packs) at a time while a
    /// table is made.
    const PIECE: usize = 1 << 14;

    /// The table of `postings`, sorted by hash, file and position: placed
    /// by bucket first (a counting sort on the top bits of the hash, which
    /// are uniform), then each bucket, of about one posting, sorted alone.
    fn new(postings: Vec<Posting>, tagged: bool) -> Table {
        let bits = Table::bits_for(postings.len());
        let shift = u64::BITS - bits;
        let bucket = |p: &Posting| (p.hash >> shift) as usize;
        let buckets = 1usize << bits;
        // Each core counts and places the postings of a range of buckets
        // (reading them all, writing its own): the writes, to places all
        // over the table, are what costs.
        let parts = rayon::current_num_threads().clamp(1, buckets);
        let ranges: Vec<Range<usize>> = (0..parts)
            .map(|i| i * buckets / parts..(i + 1) * buckets / parts)
            .collect();
        // starts[b + 1] counts bucket b, then becomes where bucket b ends.
        let mut starts = vec![0u32; buckets + 1];
        let counts = cut(&mut starts[1..], ranges.iter().map(|r| r.len()));
        let firsts = ranges.iter().map(|r| r.start);
        (counts.into_par_iter().zip(firsts.collect::<Vec<_>>())).for_each(|(counts, first)| {
            for p in &postings {
                if let Some(count) = counts.get_mut(bucket(p).wrapping_sub(first)) {
                    *count += 1;
                }
            }
        });
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        // Every slot is written below.
        let blank = Posting {
            hash: 0,
            file: 0,
            pos: 0,
            tag: 0,
        };
        let mut sorted = vec![blank; postings.len()];
        let mut next = starts.clone();
        let placed = ranges
            .iter()
            .map(|r| (starts[r.end] - starts[r.start]) as usize);
        let slots = cut(&mut sorted, placed);
        let cursors = cut(&mut next, ranges.iter().map(|r| r.len()));
        let pieces: Vec<_> = (slots.into_iter().zip(cursors))
            .zip(ranges.iter().map(|r| r.start))
            .collect();
        pieces.into_par_iter().for_each(|((slots, at), first)| {
            let base = at.first().map_or(0, |&at| at);
            for p in &postings {
                if let Some(at) = at.get_mut(bucket(p).wrapping_sub(first)) {
                    slots[(*at - base) as usize] = *p;
                    *at += 1;
                }
            }
        });
        drop(postings);
        // Each bucket sorted alone, pieces of buckets on all cores.
        let bounds: Vec<&[u32]> = (0..buckets)
            .step_by(Table::PIECE)
            .map(|first| &starts[first..=(first + Table::PIECE).min(buckets)])
            .collect();
        let lens = bounds.iter().map(|b| (b[b.len() - 1] - b[0]) as usize);
        let pieces = cut(&mut sorted, lens);
        (pieces.into_par_iter().zip(bounds)).for_each(|(piece, bounds)| {
            for b in bounds.windows(2) {
                let bucket = (b[0] - bounds[0]) as usize..(b[1] - bounds[0]) as usize;
                piece[bucket].sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
            }
        });
        Table::packed(&sorted, starts, shift, tagged)
    }

    /// The table of `sorted` (by hash, file and position), whose buckets
    /// of `hash >> shift` start at `starts`; with the postings' tags if
    /// `tagged` and a posting has room for them (always but for file and
    /// position numbers near 2^32).
    fn packed(sorted: &[Posting], starts: Vec<u32>, shift: u32, tagged: bool) -> Table {
        let bits_of = |max: u32| u32::BITS - max.leading_zeros();
        let file_bits = bits_of(sorted.iter().map(|p| p.file).max().unwrap_or(0));
        let pos_bits = bits_of(sorted.iter().map(|p| p.pos).max().unwrap_or(0));
        let tag_bits = match tagged && shift + file_bits + pos_bits + u8::BITS <= u128::BITS {
            true => u8::BITS,
            false => 0,
        };
        let width = (shift + file_bits + pos_bits + tag_bits).div_ceil(8).max(1) as usize;
        let rest_mask = (1u64 << shift) - 1;
        let tag_mask = (1u128 << tag_bits) - 1;
        let record = |p: &Posting| {
            u128::from(p.hash & rest_mask) << (file_bits + pos_bits + tag_bits)
                | u128::from(p.file) << (pos_bits + tag_bits)
                | u128::from(p.pos) << tag_bits
                | u128::from(p.tag) & tag_mask
        };
        let mut records = vec![0u8; sorted.len() * width + Table::PADDING];
        (records.par_chunks_mut(width * Table::PIECE))
            .zip(sorted.par_chunks(Table::PIECE))
            .for_each(|(out, postings)| {
                for (out, p) in out.chunks_exact_mut(width).zip(postings) {
                    out.copy_from_slice(&record(p).to_le_bytes()[..width]);
                }
            });
        Table {
            records,
            len: sorted.len(),
            width,
            file_bits,
            pos_bits,
            tag_bits,
            starts,
            shift,
        }
    }

    /// Posting `i`, as a number (see [`Table::records`]).
    #[inline]
    fn record(&self, i: usize) -> u128 {
        let at = i * self.width;
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&self.records[at..at + 16]);
        let record = u128::from_le_bytes(bytes);
        match self.width {
            16 => record,
            width => record & ((1u128 << (8 * width)) - 1),
        }
    }

    /// The low `shift` bits of the hash of posting `i`.
    #[inline]
    fn rest(&self, i: usize) -> u64 {
        (self.record(i) >> (self.file_bits + self.pos_bits + self.tag_bits)) as u64
    }

    /// Posting `i`, whose hash is `hash`.
    #[inline]
    fn posting(&self, i: usize, hash: u64) -> Posting {
        let record = self.record(i);
        let low = |bits: u32, shift: u32| ((record >> shift) as u64 & ((1u64 << bits) - 1)) as u32;
        Posting {
            hash,
            file: low(self.file_bits, self.pos_bits + self.tag_bits),
            pos: low(self.pos_bits, self.tag_bits),
            tag: low(self.tag_bits, 0) as u8,
        }
    }

    /// Every posting, sorted by hash, file and position.
    fn iter(&self) -> impl Iterator<Item = Posting> + '_ {
        self.starts.windows(2).enumerate().flat_map(move |(b, w)| {
            // The shift is 40 to 63 (there are 1 to 24 bucket bits).
            let top = (b as u64) << self.shift;
            (w[0] as usize..w[1] as usize).map(move |i| {
                let hash = top | self.rest(i);
                self.posting(i, hash)
            })
        })
    }

    /// This table's postings of the files that `moved` maps to a new id
    /// (`u32::MAX`: gone), under their new ids, with `fresh` added: one pass
    /// over the postings, which stay sorted, as the files keep their order.
    fn merged(&self, moved: &[u32], fresh: Vec<Posting>, tagged: bool) -> Table {
        let kept = self.iter().filter_map(|p| {
            let file = moved[p.file as usize];
            (file != u32::MAX).then_some(Posting { file, ..p })
        });
        Table::merge(kept, self.len, fresh, tagged)
    }

    /// The table of `kept` (sorted, about `len` of them) and `fresh`.
    fn merge(
        kept: impl Iterator<Item = Posting>,
        len: usize,
        mut fresh: Vec<Posting>,
        tagged: bool,
    ) -> Table {
        fresh.sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
        let mut postings = Vec::with_capacity(len + fresh.len());
        let mut fresh = fresh.into_iter().peekable();
        for p in kept {
            while let Some(f) = fresh.next_if(|f| (f.hash, f.file, f.pos) < (p.hash, p.file, p.pos))
            {
                postings.push(f);
            }
            postings.push(p);
        }
        postings.extend(fresh);
        Table::of_sorted(postings, tagged)
    }

    /// The table of `postings`, already sorted by hash, file and position.
    fn of_sorted(postings: Vec<Posting>, tagged: bool) -> Table {
        let bits = Table::bits_for(postings.len());
        let shift = u64::BITS - bits;
        let mut starts = vec![0u32; (1usize << bits) + 1];
        for p in &postings {
            starts[(p.hash >> shift) as usize + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        Table::packed(&postings, starts, shift, tagged)
    }

    /// Bucket bits for `n` postings: about one bucket per posting.
    fn bits_for(n: usize) -> u32 {
        n.next_power_of_two()
            .trailing_zeros()
            .clamp(1, Table::MAX_BITS)
    }

    /// Calls `f` with every posting whose hash has others, and whether
    /// that hash has more than `most` postings.
    fn for_each_repeated(&self, most: usize, mut f: impl FnMut(&Posting, bool)) {
        // The postings of the hash at hand, until they are more than
        // `most` (then each is given as it comes).
        let mut group: Vec<Posting> = Vec::with_capacity(most + 1);
        let (mut hash, mut over) = (None, false);
        for p in self.iter() {
            if hash != Some(p.hash) {
                if group.len() > 1 {
                    group.iter().for_each(|q| f(q, false));
                }
                group.clear();
                (hash, over) = (Some(p.hash), false);
            }
            if over {
                f(&p, true);
                continue;
            }
            group.push(p);
            if group.len() > most {
                group.iter().for_each(|q| f(q, true));
                group.clear();
                over = true;
            }
        }
        if group.len() > 1 {
            group.iter().for_each(|q| f(q, false));
        }
    }

    /// The postings of `hash`.
    fn lookup(&self, hash: u64) -> Found<'_> {
        let bucket = (hash >> self.shift) as usize;
        let rest = hash & ((1u64 << self.shift) - 1);
        let (first, end) = (
            self.starts[bucket] as usize,
            self.starts[bucket + 1] as usize,
        );
        // Two binary searches, as a hash shared by thousands of places
        // (a licence header) is looked up from each of them: the first
        // posting of the bucket whose rest is not below `rest`, then the
        // first above it.
        let from = self.first_where(first, end, |r| r >= rest);
        let to = self.first_where(from, end, |r| r > rest);
        Found {
            table: Some(self),
            hash,
            from,
            to,
        }
    }

    /// The first posting in `from..to` whose rest `at_or_after` holds
    /// for (`to` if none): it holds for every one after it.
    fn first_where(
        &self,
        mut from: usize,
        mut to: usize,
        at_or_after: impl Fn(u64) -> bool,
    ) -> usize {
        while from < to {
            let mid = from + (to - from) / 2;
            if at_or_after(self.rest(mid)) {
                to = mid;
            } else {
                from = mid + 1;
            }
        }
        from
    }

    /// Bytes it holds.
    fn heap_bytes(&self) -> u64 {
        (self.records.capacity() + self.starts.capacity() * std::mem::size_of::<u32>()) as u64
    }
}

/// Where each file of `previous` is among `files` (sorted by path), or
/// `u32::MAX` where it is not: the same `Arc` at the same path.
fn moved(previous: &Index, files: &[Arc<SourceFile>]) -> Vec<u32> {
    let mut moved = vec![u32::MAX; previous.files.len()];
    for (id, file) in files.iter().enumerate() {
        if let Some(old) = previous.file_by_rel(&file.rel) {
            if Arc::ptr_eq(&previous.files[old as usize], file) {
                moved[old as usize] = id as u32;
            }
        }
    }
    moved
}

/// The tag of the k-gram of `winnow` at `pos` of `tokens`: 8 bits of a
/// hash of its identities in the mode of [`Winnow::tags`] (docs/matching.md,
/// "Tags"). Two k-grams equal in that mode have one tag; two that differ
/// have one in 256.
pub(crate) fn tag_at(tokens: &(impl Tokens + ?Sized), pos: u32, winnow: Winnow) -> u8 {
    let pos = pos as usize;
    let end = (pos + winnow.k).min(tokens.len());
    let ids = tokens
        .kinds_within(pos.min(end)..end)
        .map(|t| t.id_in(winnow.tags));
    (winnow.kgram_hash(ids) >> 56) as u8
}

/// `slice` cut into pieces of `lens` one after another (a piece per
/// core to write), and what is left after them.
fn cut<T>(mut slice: &mut [T], lens: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut pieces: Vec<&mut [T]> = lens
        .map(|len| {
            let (piece, rest) = std::mem::take(&mut slice).split_at_mut(len);
            slice = rest;
            piece
        })
        .collect();
    pieces.push(slice);
    pieces
}

/// `files` sorted by path, with their prints made (`made`, in their order,
/// or empty).
fn by_path<'a>(
    mut files: Vec<Arc<SourceFile>>,
    made: Vec<Option<PrintsOf<'a>>>,
) -> (Vec<Arc<SourceFile>>, Vec<Option<PrintsOf<'a>>>) {
    if made.is_empty() {
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        return (files, made);
    }
    let mut pairs: Vec<_> = files.into_iter().zip(made).collect();
    pairs.sort_unstable_by(|a, b| a.0.path.cmp(&b.0.path));
    pairs.into_iter().unzip()
}

/// The winnowed fingerprints of a token stream, made of its weak ids (the
/// most abstract): a run equal in any mode is a run equal in weak mode, so
/// it shares a fingerprint whichever mode a check asks for.
pub(crate) fn fingerprints(tokens: &(impl Tokens + ?Sized), winnow: Winnow) -> Vec<Fingerprint> {
    let ids: Vec<u64> = tokens.each().map(|t| t.weak_id()).collect();
    let mut out = Vec::new();
    winnow.fingerprints(&ids, &mut out);
    out
}

/// JavaScript files of `(path, text)`, for tests.
#[cfg(test)]
pub(crate) fn js_files(registry: &Registry, files: &[(&str, &str)]) -> Vec<Arc<SourceFile>> {
    let js = registry.lookup("js").unwrap();
    let file = |(path, text): &(&str, &str)| {
        let meta = FileMeta::of(text, text.len() as u64, 0);
        let (path, text) = (path.to_string(), text.to_string());
        let file = SourceFile::new(
            path.clone(),
            path,
            js,
            text,
            meta,
            &Normalization::default(),
        );
        Arc::new(file.unwrap())
    };
    files.iter().map(file).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::mix64;

    #[test]
    fn views_give_the_positions_of_ascii_and_other_texts_alike() {
        let registry = Registry::builtin();
        let texts = [
            ("a.js", "let a = 1;\nlet b = 'x';\n"),
            ("b.js", "let é = 'ü';\n  let b = '𐐀' + 2;\n"),
            ("c.js", "let c = 3;"),
            ("d.js", ""),
        ];
        let files = js_files(&registry, &texts);
        let ascii: Vec<bool> = files.iter().map(|f| f.text.is_ascii()).collect();
        assert_eq!(ascii, [true, false, true, true]);
        for file in &files {
            let text = file.text.get();
            let view = file.view();
            for i in 0..file.tokens.len() as u32 {
                let token = file.tokens.at(i as usize);
                let (start, end) = (view.token_start(i), view.token_end(i));
                assert_eq!(start, file.lines.start_position(&*text, token.start));
                assert_eq!(end, file.lines.end_position(&*text, token.end()));
                assert_eq!(
                    (file.token_line(i), file.token_end_line(i)),
                    (start.line, end.line)
                );
            }
            assert_eq!(file.line_count(), file.lines.editor_lines(&text));
        }
        let lines: Vec<u32> = files.iter().map(|f| f.line_count()).collect();
        assert_eq!(lines, [2, 2, 1, 0]);
    }

    /// The postings of every table of `index`.
    fn all_postings(index: &Index) -> Vec<Vec<Posting>> {
        index.posting_lists().map(|l| l.iter().collect()).collect()
    }

    #[test]
    fn an_index_built_on_a_caches_lists_is_the_index_built_afresh() {
        let registry = Registry::builtin();
        let unit = "function f(a, b) { const c = a * b + 1; return c * c - a; }\n";
        let texts = [
            unit.repeat(3),
            format!("{unit}let x = 1;\n{unit}"),
            unit.repeat(2),
        ];
        let files = js_files(
            &registry,
            &[
                ("a.js", &texts[0]),
                ("b.js", &texts[1]),
                ("c.js", &texts[2]),
            ],
        );
        let winnow = Winnow::for_min_tokens(10);
        let old = Index::build(files.clone(), &registry, winnow);
        let lists: Vec<Vec<Posting>> = all_postings(&old);
        let half = lists.len() / 2;
        let tables = |lists: &[Vec<Posting>]| {
            (lists.iter())
                .map(|l| CachedTable::packed_as_given(l.clone(), false))
                .collect()
        };
        let cached = || PostingLists {
            postings: tables(&lists[..half]),
            seeds: tables(&lists[half..]),
            tags: Mode::Weak,
        };
        // The same files: everything from the lists.
        let entries: HashMap<String, u32> = [("a.js", 0), ("b.js", 1), ("c.js", 2)]
            .into_iter()
            .map(|(rel, entry)| (rel.to_string(), entry))
            .collect();
        let warm = Index::build_on_cached(
            cached(),
            &entries,
            3,
            files.clone(),
            Vec::new(),
            &registry,
            winnow,
        );
        assert_eq!(all_postings(&warm), lists);
        // b.js changed, c.js gone, d.js new: only a.js from the lists.
        let mut now = js_files(&registry, &[("b.js", &texts[0]), ("d.js", &texts[1])]);
        now.push(Arc::clone(&files[0]));
        let only_a: HashMap<String, u32> = [("a.js".to_string(), 0)].into_iter().collect();
        let warm = Index::build_on_cached(
            cached(),
            &only_a,
            3,
            now.clone(),
            Vec::new(),
            &registry,
            winnow,
        );
        let fresh = Index::build(now, &registry, winnow);
        assert_eq!(all_postings(&warm), all_postings(&fresh));
        assert!(fresh.posting_lists().any(|l| l.len() > 1));
        // Lists tagged in another mode than the index's are not taken.
        let strict = winnow.tagged(Mode::Strict);
        let tagged = Index::build_on_cached(
            cached(),
            &entries,
            3,
            files.clone(),
            Vec::new(),
            &registry,
            strict,
        );
        assert_eq!(
            all_postings(&tagged),
            all_postings(&Index::build(files, &registry, strict))
        );
        assert_ne!(all_postings(&tagged), lists);
    }

    #[test]
    fn a_table_sorts_its_postings_by_hash_file_and_position() {
        let mut x = 7u64;
        let mut postings: Vec<Posting> = (0..5_000u32)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                // A few hashes repeated many times, as boilerplate gives.
                let hash = if i % 3 == 0 {
                    mix64(u64::from(i % 7))
                } else {
                    mix64(x)
                };
                Posting {
                    hash,
                    file: (x >> 40) as u32 % 50,
                    pos: i,
                    tag: x as u8,
                }
            })
            .collect();
        postings.reverse();
        let table = Table::new(postings.clone(), true);
        postings.sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
        assert_eq!(table.iter().collect::<Vec<_>>(), postings);
        for p in &postings {
            let found = table.lookup(p.hash);
            assert!(found.iter().all(|f| f.hash == p.hash) && found.iter().any(|f| f == *p));
            assert_eq!(
                found.len(),
                postings.iter().filter(|q| q.hash == p.hash).count()
            );
            // Those after a place, by bisection, are those a filter keeps.
            for (file, pos) in [
                (p.file, p.pos),
                (p.file, p.pos.saturating_sub(1)),
                (0, 0),
                (49, u32::MAX),
            ] {
                let after: Vec<Posting> = found.after(file, pos).iter().collect();
                let kept: Vec<Posting> = found
                    .iter()
                    .filter(|q| (q.file, q.pos) > (file, pos))
                    .collect();
                assert_eq!(after, kept);
            }
        }
        assert_eq!(Table::new(Vec::new(), false).lookup(1).len(), 0);
    }

    #[test]
    fn repeated_lists_what_a_lookup_finds_beside_itself_in_position_order() {
        let registry = Registry::builtin();
        let winnow = Winnow::for_min_tokens(20);
        let shared =
            "function add(a, b) { const sum = a + b; console.log(sum); return sum * 2; }\n";
        let texts = [
            format!("let x = 1; {shared}"),
            format!("{shared}const unique = [9, 8, 7].map((n) => n * n);\n{shared}"),
            "while (true) { if (done()) { break; } tick(counter++, 'unique text'); }\n".into(),
        ];
        let [a, b, c] = texts.each_ref().map(String::as_str);
        let files = js_files(&registry, &[("f0.js", a), ("f1.js", b), ("f2.js", c)]);
        let index = Index::build(files, &registry, winnow);
        let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
        for (file_id, file) in index.files.iter().enumerate() {
            let (fingerprints, seeds, capped) = index.repeated_prints(file_id as u32);
            assert_eq!(capped, 0);
            let prints = super::fingerprints(&file.tokens, winnow);
            let all_seeds = super::fingerprints(&file.tokens, seed_winnow);
            for (have, all, which) in [
                (&fingerprints, &prints, Postings::Fingerprints),
                (&seeds, &all_seeds, Postings::Seeds),
            ] {
                let elsewhere: Vec<Fingerprint> = all
                    .iter()
                    .filter(|f| index.lookup_in(which, file.family, f.hash).len() > 1)
                    .copied()
                    .collect();
                assert_eq!(have, &elsewhere, "{} {which:?}", file.rel);
            }
        }
        // The shared function is repeated in the first two files, and
        // nothing of the third is, which holds no bits.
        let [first, second, third] = [0, 1, 2].map(|f| index.repeated_prints(f));
        assert!(!first.0.is_empty() && !second.1.is_empty());
        assert!(third.0.is_empty() && third.1.is_empty());
        assert_eq!(index.repeated()[2].fingerprints.heap_bytes(), 0);
    }

    #[test]
    fn repeated_postings_are_told_apart_from_those_over_a_cap() {
        // Hashes of 1, 2, 3, 4, 1, 5 and 6 postings, two files.
        let sizes = [1, 2, 3, 4, 1, 5, 6];
        let postings: Vec<Posting> = (sizes.iter().enumerate())
            .flat_map(|(hash, &n)| {
                (0..n).map(move |i| Posting {
                    hash: mix64(hash as u64),
                    file: i % 2,
                    pos: 10 * hash as u32 + i,
                    tag: 0,
                })
            })
            .collect();
        let table = Table::new(postings.clone(), false);
        let mut seen: Vec<(Posting, bool)> = Vec::new();
        table.for_each_repeated(3, |p, over| seen.push((*p, over)));
        seen.sort_unstable_by_key(|(p, _)| p.pos);
        let expected: Vec<(Posting, bool)> = (postings.iter())
            .filter_map(|p| {
                let n = sizes[(p.pos / 10) as usize];
                (n > 1).then_some((*p, n > 3))
            })
            .collect();
        assert_eq!(seen, expected);
        assert_eq!(seen.iter().filter(|(_, over)| *over).count(), 4 + 5 + 6);
    }

    #[test]
    fn positions_hold_every_position_of_a_stream_in_order() {
        for tokens in [1usize, 63, 64, 65, 200] {
            let mut set = Positions::default();
            assert_eq!(set.iter().count(), 0);
            let wanted: Vec<u32> = [0, 1, 62, 63, 64, 127, 128, 199]
                .into_iter()
                .filter(|&p| (p as usize) < tokens)
                .collect();
            for &p in wanted.iter().rev().chain(&wanted) {
                set.insert(p, tokens);
            }
            assert_eq!(set.iter().collect::<Vec<_>>(), wanted, "{tokens} tokens");
            assert_eq!(set.heap_bytes(), tokens.div_ceil(64) as u64 * 8);
        }
    }

    #[test]
    fn an_index_built_on_another_has_the_postings_of_one_built_anew() {
        let registry = Registry::builtin();
        let winnow = Winnow::for_min_tokens(20);
        let code = |n: usize| {
            format!("function f{n}(a, b) {{ const s = a + b * {n}; console.log(s, 'x'); return s - 1; }}\n")
        };
        let (a, b, c, d) = (code(1), code(2), code(3).repeat(2), code(4) + &code(1));
        let before = js_files(&registry, &[("a.js", &a), ("b.js", &b), ("c.js", &c)]);
        let previous = Index::build(before.clone(), &registry, winnow);
        // b.js removed, c.js changed, d.js added before it, a.js kept.
        let [changed, added] =
            <[_; 2]>::try_from(js_files(&registry, &[("c.js", &d), ("b0.js", &c)])).unwrap();
        let after = vec![Arc::clone(&before[0]), changed, added];
        let incremental = Index::build_on(
            Some(&previous),
            after.clone(),
            Vec::new(),
            &registry,
            winnow,
        );
        let anew = Index::build(after, &registry, winnow);
        let paths = |i: &Index| i.files.iter().map(|f| f.rel.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&incremental), ["a.js", "b0.js", "c.js"]);
        assert_eq!(paths(&incremental), paths(&anew));
        for (x, y) in incremental
            .postings
            .iter()
            .chain(&incremental.seeds)
            .zip(anew.postings.iter().chain(&anew.seeds))
        {
            assert_eq!(x.records, y.records);
            assert_eq!(x.starts, y.starts);
        }
        assert!(incremental.postings.iter().any(|t| t.len > 0));
        // Another winnowing shares nothing: every file is fingerprinted.
        let other = Winnow::for_min_tokens(30);
        let rebuilt = Index::build_on(
            Some(&previous),
            before.clone(),
            Vec::new(),
            &registry,
            other,
        );
        let fresh = Index::build(before, &registry, other);
        for (x, y) in rebuilt.postings.iter().zip(&fresh.postings) {
            assert_eq!(x.records, y.records);
        }
    }

    #[test]
    fn prints_made_beside_the_tokens_give_the_index_made_from_the_tokens() {
        let registry = Registry::builtin();
        let winnow = Winnow::for_min_tokens(20).tagged(Mode::Strict);
        let code = |n: usize| {
            format!("function f{n}(a, b) {{ const s = a + b * {n}; console.log(s, 'x'); return s - 1; }}\n")
        };
        let (a, b, c) = (code(1), code(2) + &code(1), code(3).repeat(3));
        let files = js_files(&registry, &[("a.js", &a), ("b.js", &b), ("c.js", &c)]);
        let anew = Index::build(files.clone(), &registry, winnow);
        // Out of path order, one buffer for all, the first file's prints
        // left to the index.
        let order = [2, 0, 1];
        let mut printed = Printed::default();
        let at: Vec<PrintsAt> = order
            .iter()
            .map(|&i| printed.add(&files[i].tokens, winnow))
            .collect();
        let shuffled = order.iter().map(|&i| Arc::clone(&files[i])).collect();
        let made = (order.iter().zip(&at))
            .map(|(&i, &at)| (i != 0).then(|| printed.of(at)))
            .collect();
        let made = Index::build_on(None, shuffled, made, &registry, winnow);
        let paths = |i: &Index| i.files.iter().map(|f| f.rel.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&made), ["a.js", "b.js", "c.js"]);
        let tables = |i: &Index| {
            (i.postings.iter().chain(&i.seeds))
                .map(|t| (t.records.clone(), t.starts.clone(), t.tag_bits))
                .collect::<Vec<_>>()
        };
        assert_eq!(tables(&made), tables(&anew));
        assert!(anew.postings.iter().any(|t| t.len > 0 && t.tag_bits > 0));
    }

    #[test]
    fn a_table_of_many_pieces_is_sorted_and_packed_whole() {
        // More buckets and postings than a core sorts or packs at a time,
        // many of them in equal hashes.
        let postings: Vec<Posting> = (0..200_000u32)
            .map(|i| Posting {
                hash: mix64(u64::from(i % 50_000)),
                file: i % 7,
                pos: i,
                tag: i as u8,
            })
            .collect();
        let table = Table::new(postings.clone(), true);
        assert!(table.starts.len() > 4 * Table::PIECE);
        let mut sorted = postings;
        sorted.sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
        assert_eq!(table.iter().collect::<Vec<_>>(), sorted);
    }

    #[test]
    fn a_packed_table_keeps_every_bit_at_the_limits() {
        let posting = |hash, file, pos| Posting {
            hash,
            file,
            pos,
            tag: (hash ^ u64::from(pos)) as u8,
        };
        let untagged = |p: &Posting| Posting { tag: 0, ..*p };
        // Hashes that differ in their lowest bit only, or in the bits just
        // below the bucket's, and the widest files and positions.
        let limits = vec![
            posting(0, 0, 0),
            posting(1, 0, 0),
            posting(u64::MAX, u32::MAX, u32::MAX),
            posting(u64::MAX - 1, u32::MAX, u32::MAX),
            posting(u64::MAX, u32::MAX, u32::MAX - 1),
            posting(u64::MAX, 0, u32::MAX),
            posting(1 << 39, 7, 1),
            posting(1 << 40, 7, 1),
            posting((1 << 40) | 1, 7, 1),
            posting(u64::MAX >> 1, 1, 0),
            posting(1 << 63, 1, 0),
        ];
        let small = vec![posting(5, 0, 0), posting(5, 0, 1), posting(6, 1, 0)];
        let many: Vec<Posting> = (0..3000u32)
            .map(|i| posting(mix64(u64::from(i % 1000)), i % 3, i))
            .collect();
        let mut all = limits.clone();
        all.extend_from_slice(&many);
        for (postings, tagged) in [(limits, false), (small, true), (many, true), (all, false)] {
            let table = Table::new(postings.clone(), tagged);
            let mut sorted = postings.clone();
            sorted.sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
            if !tagged {
                sorted.iter_mut().for_each(|p| *p = untagged(p));
            }
            assert_eq!(table.iter().collect::<Vec<_>>(), sorted);
            let of_sorted = Table::of_sorted(sorted.clone(), tagged);
            assert_eq!(
                (&of_sorted.records, of_sorted.width),
                (&table.records, table.width)
            );
            assert_eq!(table.lookup(sorted[0].hash).tagged(), tagged);
            for p in &sorted {
                let found: Vec<Posting> = table.lookup(p.hash).iter().collect();
                let expected: Vec<Posting> = sorted
                    .iter()
                    .filter(|q| q.hash == p.hash)
                    .copied()
                    .collect();
                assert_eq!(found, expected);
                // A hash one off finds only its own.
                for near in [p.hash ^ 1, p.hash ^ (1 << 39), p.hash.wrapping_add(1 << 40)] {
                    let found = table.lookup(near);
                    assert!(found.iter().all(|q| q.hash == near));
                    assert_eq!(
                        found.len(),
                        sorted.iter().filter(|q| q.hash == near).count()
                    );
                }
            }
        }
        // Widths: all of a hash below one bucket bit, and the widest file
        // and position, need 16 bytes; one file and position 0 none.
        let widest = Table::new(vec![posting(u64::MAX, u32::MAX, u32::MAX)], false);
        assert_eq!((widest.shift, widest.width), (63, 16));
        let narrow = Table::new(vec![posting(7, 0, 0)], false);
        assert_eq!(narrow.width, 8);
        // A tag takes a byte more, where a posting has room for it.
        assert_eq!(Table::new(vec![posting(7, 0, 0)], true).width, 9);
        let no_room = Table::new(vec![posting(u64::MAX, u32::MAX, u32::MAX)], true);
        assert_eq!((no_room.width, no_room.tag_bits), (16, 0));
        assert!(!no_room.lookup(u64::MAX).tagged());
        // The kernel's C: 2^24 buckets, 16 bits of files, 19 of positions,
        // and a tag.
        assert_eq!((64 - Table::MAX_BITS + 16 + 19 + 8).div_ceil(8), 11);
    }

    #[test]
    fn a_table_finds_exactly_the_postings_of_a_hash() {
        for n in [0usize, 1, 2, 3, 17, 1000, 5000] {
            // Few distinct hashes (repeats) and the extremes of the range.
            let mut hashes: Vec<u64> = (0..n as u64).map(|i| mix64(i % 700)).collect();
            if n > 2 {
                hashes[0] = 0;
                hashes[1] = u64::MAX;
                hashes[2] = u64::MAX;
            }
            let postings: Vec<Posting> = hashes
                .iter()
                .enumerate()
                .map(|(i, &hash)| Posting {
                    hash,
                    file: (i % 7) as u32,
                    pos: i as u32,
                    tag: 0,
                })
                .collect();
            let table = Table::new(postings.clone(), false);
            let probes = hashes
                .iter()
                .copied()
                .chain([1, 42, u64::MAX - 1, mix64(9999)]);
            for hash in probes {
                let mut expected: Vec<(u32, u32)> = postings
                    .iter()
                    .filter(|p| p.hash == hash)
                    .map(|p| (p.file, p.pos))
                    .collect();
                expected.sort_unstable();
                let found: Vec<(u32, u32)> =
                    table.lookup(hash).iter().map(|p| (p.file, p.pos)).collect();
                assert_eq!(found, expected, "{n} postings, hash {hash:#x}");
            }
        }
    }
}
