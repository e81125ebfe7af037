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

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::engine::definitions::Definitions;
use crate::engine::fingerprint::{Fingerprint, Winnow};
use crate::engine::grammar::{Format, FormatId, Registry};
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::parse::{Budget, ParseError};
use crate::engine::symbols::Symbol;
use crate::engine::tokens::{tokenize_defined, LineIndex, Normalization, Position, Token};

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
    /// The text that was tokenized.
    pub text: Box<str>,
    /// Line starts of `text`.
    pub lines: LineIndex,
    /// Normalized tokens. (Their fingerprints live in the index's
    /// postings alone: a file keeps no copy.)
    pub tokens: Vec<Token>,
    /// Size, mtime and content hash of `text` on disk.
    pub meta: FileMeta,
    /// Its definitions (functions, classes...), from the walk that made its
    /// tokens; none for a file whose definitions were not kept (another
    /// repository's, from the store).
    pub definitions: Definitions,
}

impl SourceFile {
    /// Tokenizes `text` as `format`; `meta` describes it on disk. Fails
    /// when the parse runs out of its budget.
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

    /// The symbol of the place from `from` to `to` (see
    /// [`Definitions::symbol`]).
    pub(crate) fn symbol_at(&self, from: Position, to: Position) -> Option<Symbol> {
        self.definitions
            .symbol_at(&self.text, &self.lines, &self.tokens, from, to)
    }

    /// A file whose tokens are already known (from a previous scan or the
    /// cache).
    pub(crate) fn with_tokens(
        path: String,
        rel: String,
        format: &Format,
        text: String,
        tokens: Vec<Token>,
        meta: FileMeta,
    ) -> SourceFile {
        SourceFile {
            path,
            rel,
            format: format.id,
            family: format.family_id,
            lines: LineIndex::new(&text),
            text: text.into_boxed_str(),
            tokens,
            meta,
            definitions: Definitions::default(),
        }
    }

    /// Its tokens, walls (which stand for suppressed code) not counted.
    pub(crate) fn token_count(&self) -> u64 {
        self.tokens.iter().filter(|t| !t.is_wall()).count() as u64
    }

    /// Lines as an editor counts them.
    pub(crate) fn line_count(&self) -> u32 {
        self.lines.editor_lines(&self.text)
    }

    /// Start of token `i`.
    pub(crate) fn token_start(&self, i: u32) -> Position {
        self.lines
            .start_position(&self.text, self.tokens[i as usize].start)
    }

    /// End (just after the last character) of token `i`.
    pub(crate) fn token_end(&self, i: u32) -> Position {
        self.lines
            .end_position(&self.text, self.tokens[i as usize].end())
    }

    /// Source text from the first byte of token `first` to the last byte of
    /// token `last`.
    pub(crate) fn fragment(&self, first: u32, last: u32) -> &str {
        let (s, e) = (
            self.tokens[first as usize].start,
            self.tokens[last as usize].end(),
        );
        &self.text[s as usize..e as usize]
    }

    /// The folder part of `rel` (empty for files at the top).
    pub(crate) fn folder(&self) -> &str {
        folder_of(&self.rel)
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
}

impl From<&Posting> for Fingerprint {
    fn from(p: &Posting) -> Fingerprint {
        Fingerprint {
            hash: p.hash,
            pos: p.pos,
        }
    }
}

/// A file's id, fingerprints and seeds, made for an index.
type Prints = (u32, Vec<Fingerprint>, Vec<Fingerprint>);

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
    pub(crate) fn of(tokens: &[Token], winnow: Winnow) -> FilePrints {
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

/// The postings of an index as a cache keeps them: per family, the files'
/// fingerprints, then their seeds, each list sorted by hash, file and
/// position, the files numbered as the cache's entries.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct PostingLists {
    /// Per family, of the fingerprints.
    pub postings: Vec<Vec<Posting>>,
    /// Per family, of the seeds.
    pub seeds: Vec<Vec<Posting>>,
}

/// What one table of a new index takes from an older one.
enum Old<'a> {
    Table(&'a Table),
    List(Vec<Posting>),
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
/// another file, or elsewhere in it), in position order: all that a lookup
/// of the file's own can find beside itself, and so all that whole-project
/// clone detection looks up. Most of a project is unique, and its
/// fingerprints need no lookup.
#[derive(Debug, Default)]
pub(crate) struct Repeated {
    /// Of [`SourceFile::fingerprints`].
    pub fingerprints: Vec<Fingerprint>,
    /// Of its seeds ([`Postings::Seeds`]).
    pub seeds: Vec<Fingerprint>,
}

impl Index {
    /// Indexes `files` (sorted by path here): fingerprints and seeds of
    /// every file, on all cores.
    pub(crate) fn build(files: Vec<Arc<SourceFile>>, registry: &Registry, winnow: Winnow) -> Index {
        Index::build_on(None, files, registry, winnow)
    }

    /// Indexes `files` (sorted by path here) as [`Index::build`] does, but
    /// takes the postings of every file that `previous` holds too (the same
    /// `Arc`) from its tables instead of fingerprinting it again: an update
    /// that changes one file costs a pass over the postings, not the
    /// fingerprints of every file.
    pub(crate) fn build_on(
        previous: Option<&Index>,
        mut files: Vec<Arc<SourceFile>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let previous = previous.filter(|p| p.winnow == winnow);
        let moved = previous.map_or_else(Vec::new, |p| moved(p, &files));
        let olds = previous.map_or_else(Vec::new, |p| {
            p.postings.iter().chain(&p.seeds).map(Old::Table).collect()
        });
        Index::assemble(olds, moved, files, registry, winnow)
    }

    /// Indexes `files` as [`Index::build`] does, but takes the postings of
    /// the files made from a cache's entries from the lists it kept
    /// (`cached`, made with the same winnowing: the cache's key holds
    /// min-tokens): `entries` gives the entry of each such file, by
    /// relative path, of the cache's `count`. A warm start sorts no
    /// postings and fingerprints only the files that changed.
    pub(crate) fn build_on_cached(
        cached: PostingLists,
        entries: &HashMap<String, u32>,
        count: usize,
        mut files: Vec<Arc<SourceFile>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let families = registry.families().len();
        if cached.postings.len() != families || cached.seeds.len() != families {
            return Index::assemble(Vec::new(), Vec::new(), files, registry, winnow);
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
            .map(Old::List);
        Index::assemble(olds.collect(), moved, files, registry, winnow)
    }

    /// Indexes `files`, each given with its fingerprints (made with
    /// `winnow`) and its seeds: files whose prints are kept elsewhere (a
    /// store's, cached by a server) are not fingerprinted again. The prints
    /// given may be only some of a file's (those a check looks up): the
    /// index then answers lookups of those hashes alone.
    pub(crate) fn with_prints(
        mut files: Vec<(Arc<SourceFile>, FilePrints)>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        let (files, given): (Vec<Arc<SourceFile>>, Vec<Prints>) = files
            .into_iter()
            .enumerate()
            .map(|(id, (file, prints))| (file, (id as u32, prints.fingerprints, prints.seeds)))
            .unzip();
        Index::assemble_with(Vec::new(), Vec::new(), files, registry, winnow, Some(given))
    }

    /// The index of `files` (sorted by path): the postings of the files
    /// `moved` maps from an older index or cache (its id → theirs) taken
    /// from `olds`, its tables (fingerprints, then seeds, by family; none
    /// without one), the others' fingerprinted on all cores.
    fn assemble(
        olds: Vec<Old<'_>>,
        moved: Vec<u32>,
        files: Vec<Arc<SourceFile>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        Index::assemble_with(olds, moved, files, registry, winnow, None)
    }

    /// [`Index::assemble`], with the fresh files' prints `given` (every
    /// file's, in id order) instead of made here.
    fn assemble_with(
        olds: Vec<Old<'_>>,
        moved: Vec<u32>,
        files: Vec<Arc<SourceFile>>,
        registry: &Registry,
        winnow: Winnow,
        given: Option<Vec<Prints>>,
    ) -> Index {
        let mut shared = vec![false; files.len()];
        for &id in moved.iter().filter(|&&id| id != u32::MAX) {
            shared[id as usize] = true;
        }
        let fresh: Vec<u32> = (0..files.len() as u32)
            .filter(|&id| !shared[id as usize])
            .collect();
        let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
        let prints: Vec<Prints> = given.unwrap_or_else(|| {
            fresh
                .par_iter()
                .map(|&id| {
                    let tokens = &files[id as usize].tokens;
                    (
                        id,
                        fingerprints(tokens, winnow),
                        fingerprints(tokens, seed_winnow),
                    )
                })
                .collect()
        });
        let families = registry.families().len();
        // Per family, the postings of the fresh files' fingerprints (or
        // seeds), as `of` picks them.
        let by_family = |of: fn(&Prints) -> &[Fingerprint]| {
            let mut lists: Vec<Vec<Posting>> = vec![Vec::new(); families];
            for printed in &prints {
                let file = printed.0;
                lists[files[file as usize].family].extend(of(printed).iter().map(|f| Posting {
                    hash: f.hash,
                    file,
                    pos: f.pos,
                }));
            }
            lists
        };
        let fresh_postings = by_family(|p| &p.1);
        let fresh_seeds = by_family(|p| &p.2);
        drop(prints);
        let jobs: Vec<(Option<Old<'_>>, Vec<Posting>)> = olds
            .into_iter()
            .map(Some)
            .chain(std::iter::repeat_with(|| None))
            .zip(fresh_postings.into_iter().chain(fresh_seeds))
            .collect();
        let mut tables: Vec<Table> = jobs
            .into_par_iter()
            .map(|(old, list)| match old {
                Some(Old::Table(old)) => old.merged(&moved, list),
                Some(Old::List(old)) => Table::taken(old, &moved, list),
                None => Table::new(list),
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
    pub(crate) fn lookup_in(&self, which: Postings, family: usize, hash: u64) -> &[Posting] {
        let lists = match which {
            Postings::Fingerprints => &self.postings,
            Postings::Seeds => &self.seeds,
        };
        lists.get(family).map_or(&[], |table| table.lookup(hash))
    }

    /// Per file, its fingerprints and seeds that occur elsewhere too, read
    /// off the sorted postings on first use: only whole-project clone
    /// detection asks, and a scan is ready for checks before it.
    pub(crate) fn repeated(&self) -> &[Repeated] {
        self.repeated.get_or_init(|| self.find_repeated())
    }

    fn find_repeated(&self) -> Vec<Repeated> {
        let mut repeated: Vec<Repeated> = self.files.iter().map(|_| Repeated::default()).collect();
        for table in &self.postings {
            table.for_each_repeated(|p| repeated[p.file as usize].fingerprints.push(p.into()));
        }
        for table in &self.seeds {
            table.for_each_repeated(|p| repeated[p.file as usize].seeds.push(p.into()));
        }
        repeated.par_iter_mut().for_each(|r| {
            r.fingerprints.sort_unstable_by_key(|f| f.pos);
            r.seeds.sort_unstable_by_key(|f| f.pos);
        });
        repeated
    }

    /// What the index holds in memory, by structure.
    pub fn footprint(&self) -> Footprint {
        let mut f = Footprint::default();
        for file in &self.files {
            f.tokens += bytes_of(&file.tokens);
            f.texts += file.text.len() as u64;
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
            f.postings += bytes_of(&table.postings) + bytes_of(&table.starts);
        }
        if let Some(repeated) = self.repeated.get() {
            f.repeated = repeated
                .iter()
                .map(|r| bytes_of(&r.fingerprints) + bytes_of(&r.seeds))
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
    pub(crate) fn posting_lists(&self) -> impl Iterator<Item = &[Posting]> {
        self.postings
            .iter()
            .chain(&self.seeds)
            .map(|t| &t.postings[..])
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
#[derive(Debug)]
struct Table {
    postings: Vec<Posting>,
    /// `starts[b]`: the first posting whose hash's bucket is `b` or more;
    /// one more entry than there are buckets.
    starts: Vec<u32>,
    /// A hash's bucket is `hash >> shift`.
    shift: u32,
}

impl Table {
    /// Most bucket bits: 2^24 buckets, for 16 million postings or more.
    const MAX_BITS: u32 = 24;

    /// The table of `postings`, sorted by hash, file and position: placed
    /// by bucket first (a counting sort on the top bits of the hash, which
    /// are uniform), then each bucket, of about one posting, sorted alone.
    fn new(postings: Vec<Posting>) -> Table {
        let bits = Table::bits_for(postings.len());
        let shift = u64::BITS - bits;
        let bucket = |p: &Posting| (p.hash >> shift) as usize;
        // starts[b + 1] counts bucket b, then becomes where bucket b ends.
        let mut starts = vec![0u32; (1usize << bits) + 1];
        for p in &postings {
            starts[bucket(p) + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        // Every slot is written below.
        let blank = Posting {
            hash: 0,
            file: 0,
            pos: 0,
        };
        let mut sorted = vec![blank; postings.len()];
        let mut next = starts.clone();
        for p in postings {
            let at = &mut next[bucket(&p)];
            sorted[*at as usize] = p;
            *at += 1;
        }
        for b in starts.windows(2) {
            sorted[b[0] as usize..b[1] as usize].sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
        }
        Table {
            postings: sorted,
            starts,
            shift,
        }
    }

    /// This table's postings of the files that `moved` maps to a new id
    /// (`u32::MAX`: gone), under their new ids, with `fresh` added: one pass
    /// over the postings, which stay sorted, as the files keep their order.
    fn merged(&self, moved: &[u32], fresh: Vec<Posting>) -> Table {
        let kept = self.postings.iter().filter_map(|p| {
            let file = moved[p.file as usize];
            (file != u32::MAX).then_some(Posting { file, ..*p })
        });
        Table::merge(kept, self.postings.len(), fresh)
    }

    /// The table of `kept` (sorted, about `len` of them) and `fresh`.
    fn merge(kept: impl Iterator<Item = Posting>, len: usize, mut fresh: Vec<Posting>) -> Table {
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
        Table::of_sorted(postings)
    }

    /// The table of `old` (a cache's list, sorted), its postings of the
    /// files that `moved` maps to a new id kept under their new ids, with
    /// `fresh` added: in place when nothing is added (a warm start over
    /// the same files).
    fn taken(mut old: Vec<Posting>, moved: &[u32], fresh: Vec<Posting>) -> Table {
        old.retain_mut(|p| {
            let file = moved.get(p.file as usize).copied().unwrap_or(u32::MAX);
            p.file = file;
            file != u32::MAX
        });
        if fresh.is_empty() {
            return Table::of_sorted(old);
        }
        let len = old.len();
        Table::merge(old.into_iter(), len, fresh)
    }

    /// The table of `postings`, already sorted by hash, file and position.
    fn of_sorted(postings: Vec<Posting>) -> Table {
        let bits = Table::bits_for(postings.len());
        let shift = u64::BITS - bits;
        let mut starts = vec![0u32; (1usize << bits) + 1];
        for p in &postings {
            starts[(p.hash >> shift) as usize + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        Table {
            postings,
            starts,
            shift,
        }
    }

    /// Bucket bits for `n` postings: about one bucket per posting.
    fn bits_for(n: usize) -> u32 {
        n.next_power_of_two()
            .trailing_zeros()
            .clamp(1, Table::MAX_BITS)
    }

    /// Calls `f` with every posting whose hash has others.
    fn for_each_repeated(&self, mut f: impl FnMut(&Posting)) {
        for group in self.postings.chunk_by(|x, y| x.hash == y.hash) {
            if group.len() > 1 {
                group.iter().for_each(&mut f);
            }
        }
    }

    /// The postings of `hash`.
    fn lookup(&self, hash: u64) -> &[Posting] {
        let bucket = (hash >> self.shift) as usize;
        let within = &self.postings[self.starts[bucket] as usize..self.starts[bucket + 1] as usize];
        let start = within.partition_point(|p| p.hash < hash);
        let len = within[start..].partition_point(|p| p.hash == hash);
        &within[start..start + len]
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

/// The winnowed fingerprints of a token stream, made of its weak ids (the
/// most abstract): a run equal in any mode is a run equal in weak mode, so
/// it shares a fingerprint whichever mode a check asks for.
pub(crate) fn fingerprints(tokens: &[Token], winnow: Winnow) -> Vec<Fingerprint> {
    let ids: Vec<u64> = tokens.iter().map(|t| t.weak_id()).collect();
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
        let lists: Vec<Vec<Posting>> = old.posting_lists().map(|l| l.to_vec()).collect();
        let half = lists.len() / 2;
        let cached = || PostingLists {
            postings: lists[..half].to_vec(),
            seeds: lists[half..].to_vec(),
        };
        // The same files: everything from the lists.
        let entries: HashMap<String, u32> = [("a.js", 0), ("b.js", 1), ("c.js", 2)]
            .into_iter()
            .map(|(rel, entry)| (rel.to_string(), entry))
            .collect();
        let warm = Index::build_on_cached(cached(), &entries, 3, files.clone(), &registry, winnow);
        assert!(warm.posting_lists().eq(old.posting_lists()));
        // b.js changed, c.js gone, d.js new: only a.js from the lists.
        let mut now = js_files(&registry, &[("b.js", &texts[0]), ("d.js", &texts[1])]);
        now.push(Arc::clone(&files[0]));
        let only_a: HashMap<String, u32> = [("a.js".to_string(), 0)].into_iter().collect();
        let warm = Index::build_on_cached(cached(), &only_a, 3, now.clone(), &registry, winnow);
        let fresh = Index::build(now, &registry, winnow);
        assert!(warm.posting_lists().eq(fresh.posting_lists()));
        assert!(fresh.posting_lists().any(|l| l.len() > 1));
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
                }
            })
            .collect();
        postings.reverse();
        let table = Table::new(postings.clone());
        postings.sort_unstable_by_key(|p| (p.hash, p.file, p.pos));
        assert_eq!(table.postings, postings);
        for p in &postings {
            let found = table.lookup(p.hash);
            assert!(found.iter().all(|f| f.hash == p.hash) && found.contains(p));
            assert_eq!(
                found.len(),
                postings.iter().filter(|q| q.hash == p.hash).count()
            );
        }
        assert!(Table::new(Vec::new()).lookup(1).is_empty());
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
            let repeated = &index.repeated()[file_id];
            let prints = fingerprints(&file.tokens, winnow);
            let seeds = fingerprints(&file.tokens, seed_winnow);
            for (have, all, which) in [
                (&repeated.fingerprints, &prints, Postings::Fingerprints),
                (&repeated.seeds, &seeds, Postings::Seeds),
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
        // nothing of the third is.
        let [first, second, third] = [0, 1, 2].map(|f| &index.repeated()[f]);
        assert!(!first.fingerprints.is_empty() && !second.seeds.is_empty());
        assert!(third.fingerprints.is_empty() && third.seeds.is_empty());
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
        let incremental = Index::build_on(Some(&previous), after.clone(), &registry, winnow);
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
            assert_eq!(x.postings, y.postings);
            assert_eq!(x.starts, y.starts);
        }
        assert!(incremental.postings.iter().any(|t| !t.postings.is_empty()));
        // Another winnowing shares nothing: every file is fingerprinted.
        let other = Winnow::for_min_tokens(30);
        let rebuilt = Index::build_on(Some(&previous), before.clone(), &registry, other);
        let fresh = Index::build(before, &registry, other);
        for (x, y) in rebuilt.postings.iter().zip(&fresh.postings) {
            assert_eq!(x.postings, y.postings);
        }
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
                })
                .collect();
            let table = Table::new(postings.clone());
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
