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

use crate::engine::fingerprint::{Fingerprint, Winnow};
use crate::engine::grammar::{Format, FormatId, Registry};
use crate::engine::hash::HashMap;
use crate::engine::parse::ParseError;
use crate::engine::tokens::{tokenize, LineIndex, Normalization, Position, Token};

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
    /// Normalized tokens.
    pub tokens: Vec<Token>,
    /// Winnowed fingerprints of `tokens`.
    pub fingerprints: Vec<Fingerprint>,
    /// The finer seeds of `tokens` ([`Postings::Seeds`]), made with the
    /// file: on the scan's workers, and once for a file that later
    /// snapshots share.
    pub seeds: Vec<Fingerprint>,
    /// Size, mtime and content hash of `text` on disk.
    pub meta: FileMeta,
}

impl SourceFile {
    /// Tokenizes and fingerprints `text` as `format`; `meta` describes it on
    /// disk. Fails when the parse runs out of its budget.
    pub(crate) fn new(
        path: String,
        rel: String,
        format: &Format,
        text: String,
        meta: FileMeta,
        normalization: &Normalization,
        winnow: Winnow,
    ) -> Result<SourceFile, ParseError> {
        let tokens = tokenize(format, &text, normalization)?;
        let fingerprints = fingerprints(&tokens, winnow);
        Ok(SourceFile::with_tokens(
            path,
            rel,
            format,
            text,
            tokens,
            fingerprints,
            meta,
        ))
    }

    /// A file whose tokens and fingerprints are already known (from a
    /// previous scan or the cache); its seeds are made here.
    pub(crate) fn with_tokens(
        path: String,
        rel: String,
        format: &Format,
        text: String,
        tokens: Vec<Token>,
        fingerprints: Vec<Fingerprint>,
        meta: FileMeta,
    ) -> SourceFile {
        SourceFile {
            path,
            rel,
            format: format.id,
            family: format.family_id,
            lines: LineIndex::new(&text),
            text: text.into_boxed_str(),
            seeds: self::fingerprints(&tokens, Winnow::for_min_tokens(SEED_TOKENS)),
            tokens,
            fingerprints,
            meta,
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
    /// Per family: the postings of the files' seeds (winnowed for
    /// [`SEED_TOKENS`]: [`SourceFile::seeds`]).
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
    /// Gathers the postings of `files` (sorted by path here).
    pub(crate) fn build(
        mut files: Vec<Arc<SourceFile>>,
        registry: &Registry,
        winnow: Winnow,
    ) -> Index {
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let families = registry.families().len();
        // Per family, the postings of what `of` gives of each file.
        let by_family = |of: fn(&SourceFile) -> &[Fingerprint]| {
            let mut lists: Vec<Vec<Posting>> = vec![Vec::new(); families];
            for (file_id, file) in files.iter().enumerate() {
                lists[file.family].extend(of(file).iter().map(|f| Posting {
                    hash: f.hash,
                    file: file_id as u32,
                    pos: f.pos,
                }));
            }
            lists
        };
        let tables: Vec<Table> = by_family(|f| &f.fingerprints)
            .into_par_iter()
            .chain(by_family(|f| &f.seeds).into_par_iter())
            .map(Table::new)
            .collect();
        let (postings, seeds) = {
            let mut tables = tables;
            let seeds = tables.split_off(families);
            (tables, seeds)
        };
        let by_rel = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.rel.clone(), i as u32))
            .collect();
        Index {
            files,
            postings,
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
        let bits = postings
            .len()
            .next_power_of_two()
            .trailing_zeros()
            .clamp(1, Table::MAX_BITS);
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

/// The winnowed fingerprints of a token stream, made of its weak ids (the
/// most abstract): a run equal in any mode is a run equal in weak mode, so
/// it shares a fingerprint whichever mode a check asks for.
pub(crate) fn fingerprints(tokens: &[Token], winnow: Winnow) -> Vec<Fingerprint> {
    let ids: Vec<u64> = tokens.iter().map(|t| t.weak_id()).collect();
    let mut out = Vec::new();
    winnow.fingerprints(&ids, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::mix64;

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
        let js = registry.lookup("js").unwrap();
        let winnow = Winnow::for_min_tokens(20);
        let shared =
            "function add(a, b) { const sum = a + b; console.log(sum); return sum * 2; }\n";
        let texts = [
            format!("let x = 1; {shared}"),
            format!("{shared}const unique = [9, 8, 7].map((n) => n * n);\n{shared}"),
            "while (true) { if (done()) { break; } tick(counter++, 'unique text'); }\n".into(),
        ];
        let files = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let path = format!("f{i}.js");
                let meta = FileMeta::of(text, text.len() as u64, 0);
                let file = SourceFile::new(
                    path.clone(),
                    path,
                    js,
                    text.clone(),
                    meta,
                    &Normalization::default(),
                    winnow,
                );
                Arc::new(file.unwrap())
            })
            .collect();
        let index = Index::build(files, &registry, winnow);
        let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
        for (file_id, file) in index.files.iter().enumerate() {
            let repeated = &index.repeated()[file_id];
            let seeds = fingerprints(&file.tokens, seed_winnow);
            for (have, all, which) in [
                (
                    &repeated.fingerprints,
                    &file.fingerprints,
                    Postings::Fingerprints,
                ),
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
