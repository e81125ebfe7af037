//! The clone list: the service call behind `GET /api/clones` and MCP's
//! `list_clones`.
//!
//! In: a snapshot, its config and a [`ClonesQuery`] (filters, page size,
//! cursor). Out: one [`ClonesPage`] of the project's clones (docs/matching.md, "Clones in the project"; the
//! ones `/api/stats` counts), largest first.
//!
//! Invariants: the order is total and deterministic (tokens, then lines,
//! descending; then the two places by path and position), so a page never
//! repeats or skips a clone while the index does not change. A cursor is
//! the sort key of the last clone listed (keyset pagination): it stays
//! meaningful across rescans, where an offset would shift. A clone's `id`
//! is a hash of its two places and size: the same clone keeps its id while
//! those do not change. The order, the ids and which clones have a place
//! in each file, folder and format are the snapshot's
//! [`Listing`], made once per snapshot and settings: a page is a binary
//! search and the page, a clone's detail a look-up by its id.

use std::borrow::Cow;
use std::rc::Rc;

use crate::engine::clones::ClonePair;
use crate::engine::grammar::{FormatId, Registry};
use crate::engine::index::{FileView, SourceFile, Views};
use crate::engine::matching::{content_hash, renamed, Span};
use crate::engine::text::Slices;
use crate::engine::tokens::{Mode, Token, Tokens};
use crate::project::config::Config;
use crate::project::listing::{self, span, Listing};
use crate::project::snapshot::Snapshot;
use crate::service::answer::{sort_largest_first, Duplication, Gap, Near, Place};

/// Clones per page when the query does not say.
pub(crate) const DEFAULT_LIMIT: usize = 100;
/// The most clones one page lists.
pub(crate) const MAX_LIMIT: usize = 1_000;

/// Which clones to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClonesQuery {
    /// A file or folder relative to DIR, `/`-separated: clones with a place
    /// in it. Empty lists every clone.
    pub path: String,
    /// Clones with a place in this format.
    pub format: Option<FormatId>,
    /// Clones of at least this many tokens.
    pub min_tokens: u32,
    /// Clones on the page, 1 to [`MAX_LIMIT`].
    pub limit: usize,
    /// List the clones after this one (from [`ClonesPage::next_cursor`]).
    pub after: Option<Cursor>,
    /// Include each place's text.
    pub fragments: bool,
}

impl Default for ClonesQuery {
    fn default() -> Self {
        ClonesQuery {
            path: String::new(),
            format: None,
            min_tokens: 0,
            limit: DEFAULT_LIMIT,
            after: None,
            fragments: false,
        }
    }
}

/// Where a page ends: the sort key of its last clone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Cursor {
    // Field order is sort order: larger first (hence the complements),
    // then the places.
    smaller: u32,
    shorter: u32,
    first: (String, u32),
    second: (String, u32),
}

/// What [`Cursor::encode`] writes and [`Cursor::decode`] reads (the
/// request target's limit bounds its length): tokens, lines, the first place's path
/// (its UTF-8 bytes in hex) and token, the second's; or nothing (the
/// query's empty parameter, as if absent).
pub(crate) const CURSOR_PATTERN: &str = r"^(?:[0-9]{1,10}\.[0-9]{1,10}\.(?:[0-9a-f]{2})*\.[0-9]{1,10}\.(?:[0-9a-f]{2})*\.[0-9]{1,10})?$";

impl Cursor {
    /// The text clients send back: the key, as [`CURSOR_PATTERN`] says.
    pub(crate) fn encode(&self) -> String {
        let hex = |path: &str| -> String { path.bytes().map(|b| format!("{b:02x}")).collect() };
        format!(
            "{}.{}.{}.{}.{}.{}",
            u32::MAX - self.smaller,
            u32::MAX - self.shorter,
            hex(&self.first.0),
            self.first.1,
            hex(&self.second.0),
            self.second.1
        )
    }

    /// Reads any text [`CURSOR_PATTERN`] matches (a number above
    /// `u32::MAX` is `u32::MAX`, a path that is not UTF-8 is read
    /// lossily: a made-up cursor names a place in the order all the same);
    /// `None` for anything else.
    pub(crate) fn decode(text: &str) -> Option<Cursor> {
        let parts: Vec<&str> = text.split('.').collect();
        let [tokens, lines, first, first_at, second, second_at] = parts[..] else {
            return None;
        };
        let number = |digits: &str| -> Option<u32> {
            let ok = (1..=10).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
            ok.then(|| {
                digits
                    .parse::<u64>()
                    .map_or(u32::MAX, |n| n.min(u64::from(u32::MAX)) as u32)
            })
        };
        let path = |hex: &str| -> Option<String> {
            let lower = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
            if !hex.len().is_multiple_of(2) || !hex.bytes().all(lower) {
                return None;
            }
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        };
        Some(Cursor {
            smaller: u32::MAX - number(tokens)?,
            shorter: u32::MAX - number(lines)?,
            first: (path(first)?, number(first_at)?),
            second: (path(second)?, number(second_at)?),
        })
    }
}

/// One page of the clone list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClonesPage {
    /// The clones on this page, largest first.
    pub clones: Vec<PagedClone>,
    /// Clones matching the filters, on every page.
    pub total: usize,
    /// The cursor of the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// A clone of the list: its id, and its two places as a duplication.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PagedClone {
    /// Stable while the index does not change: 16 hex digits.
    pub id: String,
    /// The place that comes first (by path, then position) and the other,
    /// each quoted when the query asks for fragments.
    pub clone: Duplication,
}

/// The page of the project's clones that `query` asks for: read off the
/// snapshot's [`Listing`], so a page costs a binary search and the page
/// itself (a walk over what one filter keeps when `path` and `format` are
/// both given).
pub(crate) fn list(
    snapshot: &Snapshot,
    config: &Config,
    registry: &Registry,
    query: &ClonesQuery,
) -> ClonesPage {
    let files = &snapshot.index.files;
    let found = snapshot.clones(config);
    let clones = &found.0[..];
    let listing = snapshot.listing(config);
    let in_path = |file: &SourceFile| {
        let prefix = query.path.as_str();
        prefix.is_empty()
            || file.rel.strip_prefix(prefix).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('/') || prefix.ends_with('/')
            })
    };
    let wanted = |c: &ClonePair| {
        let (a, b) = (&files[c.first.0 as usize], &files[c.second.0 as usize]);
        c.len >= query.min_tokens
            && (in_path(a) || in_path(b))
            && query.format.is_none_or(|f| a.format == f || b.format == f)
    };
    let by_path =
        (!query.path.is_empty()).then(|| in_path_positions(snapshot, &listing, &query.path));
    let by_format = query.format.map(|f| Cow::Borrowed(listing.in_format(f)));
    // Walk the shorter list; only with both filters may it hold clones
    // the other leaves out.
    let both = by_path.is_some() && by_format.is_some();
    let walk = match (by_path, by_format) {
        (Some(p), Some(f)) => Positions::Some(if p.len() <= f.len() { p } else { f }),
        (Some(one), None) | (None, Some(one)) => Positions::Some(one),
        (None, None) => Positions::Every(listing.len()),
    };
    let clone_at = |position: u32| &clones[listing.at(position) as usize];
    // The order is largest first: the clones of `min_tokens` or more lead.
    let end = walk.leading(|p| clone_at(p).len >= query.min_tokens);
    let total = match both {
        true => (0..end).filter(|&i| wanted(clone_at(walk.get(i)))).count(),
        false => end,
    };
    let start = query.after.as_ref().map_or(0, |after| {
        walk.leading(|p| key_of(snapshot, clone_at(p)) <= after.as_ref())
    });
    let limit = query.limit.clamp(1, MAX_LIMIT);
    // One clone past the page says whether another page follows.
    let mut page: Vec<(Cursor, &ClonePair)> = Vec::with_capacity(limit + 1);
    for i in start..end {
        let c = clone_at(walk.get(i));
        if both && !wanted(c) {
            continue;
        }
        if page.len() == limit {
            return ClonesPage {
                next_cursor: page.last().map(|(k, _)| k.encode()),
                clones: paged(snapshot, config, registry, &page, query.fragments),
                total,
            };
        }
        page.push((key(snapshot, c), c));
    }
    ClonesPage {
        clones: paged(snapshot, config, registry, &page, query.fragments),
        total,
        next_cursor: None,
    }
}

/// Positions in a [`Listing`], ascending: every one, or some.
enum Positions<'l> {
    Every(usize),
    Some(Cow<'l, [u32]>),
}

impl Positions<'_> {
    fn get(&self, i: usize) -> u32 {
        match self {
            Positions::Every(_) => i as u32,
            Positions::Some(list) => list[i],
        }
    }

    /// How many positions lead for which `holds` is true (it must be true
    /// of a prefix of them and false after).
    fn leading(&self, holds: impl Fn(u32) -> bool) -> usize {
        match self {
            Positions::Every(n) => {
                // A binary search over the positions `0..n` themselves.
                let (mut low, mut high) = (0, *n);
                while low < high {
                    let mid = low + (high - low) / 2;
                    if holds(mid as u32) {
                        low = mid + 1;
                    } else {
                        high = mid;
                    }
                }
                low
            }
            Positions::Some(list) => list.partition_point(|&p| holds(p)),
        }
    }
}

/// The positions of the clones with a place that `path` names, as the
/// list's filter reads it: with a final `/`, a file under that folder;
/// without, that file or a file under the folder of that name.
fn in_path_positions<'l>(snapshot: &Snapshot, listing: &'l Listing, path: &str) -> Cow<'l, [u32]> {
    if let Some(folder) = path.strip_suffix('/') {
        return Cow::Borrowed(listing.in_folder(folder));
    }
    let under = listing.in_folder(path);
    match snapshot.index.file_by_rel(path).map(|f| listing.in_file(f)) {
        None => Cow::Borrowed(under),
        Some(file) if under.is_empty() => Cow::Borrowed(file),
        Some(file) => {
            let mut both: Vec<u32> = file.iter().chain(under).copied().collect();
            both.sort_unstable();
            both.dedup();
            Cow::Owned(both)
        }
    }
}

/// The sort key of a clone: size, then its places by path and byte offset.
fn key(snapshot: &Snapshot, c: &ClonePair) -> Cursor {
    let (smaller, shorter, first, second) = key_of(snapshot, c);
    Cursor {
        smaller,
        shorter,
        first: (first.0.to_owned(), first.1),
        second: (second.0.to_owned(), second.1),
    }
}

/// A [`Cursor`]'s fields, borrowed: what a cursor is compared with.
type KeyRef<'s> = (u32, u32, (&'s str, u32), (&'s str, u32));

impl Cursor {
    fn as_ref(&self) -> KeyRef<'_> {
        fn place((rel, at): &(String, u32)) -> (&str, u32) {
            (rel.as_str(), *at)
        }
        (
            self.smaller,
            self.shorter,
            place(&self.first),
            place(&self.second),
        )
    }
}

/// The sort key of a clone, borrowed from the snapshot.
fn key_of<'s>(snapshot: &'s Snapshot, c: &ClonePair) -> KeyRef<'s> {
    let files = &snapshot.index.files;
    let place = |(f, start): (u32, u32)| {
        let file = &files[f as usize];
        (file.rel.as_str(), file.tokens.at(start as usize).start)
    };
    (
        u32::MAX - c.len,
        u32::MAX - listing::lines(&snapshot.index, c),
        place(c.first),
        place(c.second),
    )
}

/// One place of a clone: its file, its tokens and their span.
struct At<'s> {
    file: Rc<FileView<'s>>,
    tokens: std::ops::Range<u32>,
    span: Span,
}

/// The two places of `c`, their files viewed through `views` (each file's
/// text read back once for the answer).
fn places<'s>(views: &Views<'s>, snapshot: &'s Snapshot, c: &ClonePair) -> [At<'s>; 2] {
    let files = &snapshot.index.files;
    let (first_len, second_len) = c.extent();
    [(c.first, first_len), (c.second, second_len)].map(|((f, start), len)| {
        let file = views.of(&files[f as usize]);
        let span = span(&file, start, len);
        At {
            file,
            tokens: start..start + len,
            span,
        }
    })
}

/// The tokens `range` of `file` as a span; `None` when it is empty.
fn span_of(file: &FileView<'_>, range: std::ops::Range<u32>) -> Option<Span> {
    (!range.is_empty()).then(|| span(file, range.start, range.len() as u32))
}

/// `c` (found in `mode`) as a duplication: its first place and its
/// second, each quoted when `quote` says so; the files read through
/// `views`.
fn duplication<'s>(
    views: &Views<'s>,
    snapshot: &'s Snapshot,
    registry: &Registry,
    c: &ClonePair,
    mode: Mode,
    quote: [bool; 2],
) -> Duplication {
    let [first, second] = places(views, snapshot, c);
    let near = c.similarity().map(|similarity| Near {
        similarity,
        gaps: (c.near.iter())
            .flat_map(|chain| chain.gaps())
            .map(|gap| Gap {
                place: span_of(&first.file, gap.a),
                other: span_of(&second.file, gap.b),
            })
            .collect(),
    });
    // What is the same on both sides: the matched tokens.
    let matched: Vec<Token> = c
        .parts()
        .into_iter()
        .flat_map(|(a, _, len)| {
            first
                .file
                .file
                .tokens
                .within(a as usize..(a + len) as usize)
        })
        .collect();
    let renamed = renamed(
        (c.parts().into_iter()).flat_map(|(a, b, len)| (0..len).map(move |i| (a + i, b + i))),
        (&first.file.file.tokens, &*first.file),
        (&second.file.file.tokens, &*second.file),
        mode,
    );
    let place = |at: At<'_>, quoted: bool| Place {
        fragment: quoted.then(|| {
            at.file
                .fragment(at.tokens.start, at.tokens.end - 1)
                .to_owned()
        }),
        ..Place::unquoted(&at.file, registry, at.span)
    };
    Duplication {
        place: place(first, quote[0]),
        other: place(second, quote[1]),
        tokens: c.len,
        content_hash: content_hash(matched, mode),
        renamed,
        near,
        added_lines: None,
    }
}

/// The clones of a page, with their ids.
fn paged(
    snapshot: &Snapshot,
    config: &Config,
    registry: &Registry,
    page: &[(Cursor, &ClonePair)],
    fragments: bool,
) -> Vec<PagedClone> {
    let views = Views::default();
    page.iter()
        .map(|(key, c)| PagedClone {
            id: id(key, c.len),
            clone: duplication(&views, snapshot, registry, c, config.mode, [fragments; 2]),
        })
        .collect()
}

/// Every clone of the project, largest first ([`sort_largest_first`]),
/// the second place of each quoted: what `dupcheck report` lists, from the
/// detection `/api/stats` counts.
pub(crate) fn all(snapshot: &Snapshot, config: &Config, registry: &Registry) -> Vec<Duplication> {
    let found = snapshot.clones(config);
    let views = Views::default();
    let mut all: Vec<Duplication> = found
        .0
        .iter()
        .map(|c| duplication(&views, snapshot, registry, c, config.mode, [false, true]))
        .collect();
    sort_largest_first(&mut all);
    all
}

/// The most tokens of each place a [`CloneDetail`] lists.
pub(crate) const MAX_DETAIL_TOKENS: usize = 10_000;

/// One clone with what a side-by-side view shows: both places' whole lines
/// and where each token is, to highlight what matched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CloneDetail {
    /// The clone's id, as the list gives it.
    pub id: String,
    /// Its two places, as in the list (unquoted: their lines are below).
    pub clone: Duplication,
    /// The first place's lines and tokens.
    pub first: PlaceLines,
    /// The second place's lines and tokens.
    pub second: PlaceLines,
    /// Tokens listed per place: `tokens`, or [`MAX_DETAIL_TOKENS`] when
    /// the clone is larger.
    pub tokens_listed: u32,
    /// The indexes (into each place's `tokens`) of the token pairs whose
    /// source text differs: equal once normalized (a renamed identifier in
    /// `mild` or `weak` mode, a comment-free relayout never), the rest are
    /// alike letter for letter. A near-miss clone's gaps are not among the
    /// tokens.
    pub differing: Vec<u32>,
}

/// What a side-by-side view shows of one place of a [`CloneDetail`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlaceLines {
    /// The place's lines whole, `\n`-separated (no final newline, carriage
    /// returns removed).
    pub text: String,
    /// Each matched token of the place as `[startLine, startColumn,
    /// endLine, endColumn]` (1-based lines, columns in characters, the end
    /// just after the last character), in order.
    pub tokens: Vec<[u32; 4]>,
}

/// The clone whose id is `id`, with both places' text and tokens; `None`
/// when the current index has no such clone (it changed since the list was
/// read).
pub(crate) fn detail(
    snapshot: &Snapshot,
    config: &Config,
    registry: &Registry,
    id_wanted: &str,
) -> Option<CloneDetail> {
    let found = snapshot.clones(config);
    // Ids are 16 lower-case hex digits, as `id` writes them.
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if id_wanted.len() != 16 || !id_wanted.bytes().all(hex) {
        return None;
    }
    let wanted = u64::from_str_radix(id_wanted, 16).ok()?;
    let c = &found.0[snapshot.listing(config).by_id(wanted)? as usize];
    // The matched tokens of each place, pair by pair: a near-miss clone's
    // gaps are in the places' text but not among their tokens.
    let matched = |second: bool| -> Vec<u32> {
        c.parts()
            .into_iter()
            .flat_map(|(a, b, len)| {
                let start = if second { b } else { a };
                start..start + len
            })
            .take(MAX_DETAIL_TOKENS)
            .collect()
    };
    let (first_tokens, second_tokens) = (matched(false), matched(true));
    let place = |at: &At<'_>, tokens: &[u32]| {
        let (file, span) = (&at.file, at.span);
        let text: Vec<&str> = file
            .lines(span.start.line, span.lines())
            .split('\n')
            .take(span.lines() as usize)
            .map(|line| line.strip_suffix('\r').unwrap_or(line))
            .collect();
        let tokens = tokens
            .iter()
            .map(|&i| {
                let (s, e) = (file.token_start(i), file.token_end(i));
                [s.line, s.column, e.line, e.column]
            })
            .collect();
        PlaceLines {
            text: text.join("\n"),
            tokens,
        }
    };
    let views = Views::default();
    let [first, second] = places(&views, snapshot, c);
    let differing = first_tokens
        .iter()
        .zip(&second_tokens)
        .enumerate()
        .filter(|(_, (&a, &b))| text_of(&first.file, a) != text_of(&second.file, b))
        .map(|(i, _)| i as u32)
        .collect();
    Some(CloneDetail {
        id: id_wanted.to_owned(),
        clone: duplication(&views, snapshot, registry, c, config.mode, [false; 2]),
        first: place(&first, &first_tokens),
        second: place(&second, &second_tokens),
        tokens_listed: first_tokens.len() as u32,
        differing,
    })
}

/// The source text of token `i` of `file`.
fn text_of<'v>(file: &'v FileView<'_>, i: u32) -> &'v str {
    let token = file.file.tokens.at(i as usize);
    file.slice(token.start as usize..token.end() as usize)
        .expect("a token lies in its file's text, on character boundaries")
}

/// A clone's id: a hash of its places and size ([`listing::id`]).
fn id(key: &Cursor, tokens: u32) -> String {
    let id = listing::id(
        (&key.first.0, key.first.1),
        (&key.second.0, key.second.1),
        tokens,
    );
    format!("{id:016x}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::project::progress::Progress;
    use crate::project::scan::{scan, Reuse};

    /// A scanned project of JavaScript, TypeScript and Python files in
    /// nested folders, sharing functions in varied runs: clones of many
    /// sizes, across folders and formats. Keep the directory while the
    /// snapshot is read.
    pub(crate) fn generated(
        mode: &str,
    ) -> (
        tempfile::TempDir,
        Snapshot,
        Config,
        std::sync::Arc<Registry>,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let js = |k: usize| {
            let extra = "    total{k} -= item.discount{k};\n".repeat(k % 4);
            format!(
                "export function f{k}(items, limit) {{\n  let total{k} = 0;\n  for (const item of items) {{\n    if (item.price{k} > limit + {k}) {{\n      total{k} += item.price * item.count{k};\n{extra}    }}\n  }}\n  return total{k};\n}}\n"
            )
            .replace("{k}", &k.to_string())
        };
        let py = |k: usize| {
            let extra = "            total{k} -= item.discount{k}\n".repeat(k % 3);
            format!(
                "def f{k}(items, limit):\n    total{k} = 0\n    for item in items:\n        if item.price{k} > limit + {k}:\n            total{k} += item.price * item.count{k}\n{extra}    return total{k}\n"
            )
            .replace("{k}", &k.to_string())
        };
        let names = [
            "a/x.js",
            "a/b/y.ts",
            "a/b/z.js",
            "a/b/c/deep.js",
            "ab/w.js",
            "ab.js",
            "c.js",
            "d/e.ts",
            "d/f.js",
            "a/p.py",
            "a/b/q.py",
            "r.py",
            "d/s.py",
        ];
        // A fixed generator: each file takes its own run of functions.
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for (i, name) in names.iter().enumerate() {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let mut text = String::new();
            for j in 0..4 + next(5) {
                let k = next(8) as usize;
                if name.ends_with(".py") {
                    text.push_str(&py(k));
                    text.push_str(&format!("def own{i}_{j}():\n    return {i}\n\n"));
                } else {
                    text.push_str(&js(k));
                    if next(2) == 0 {
                        text.push_str(&format!("const own{i}_{j} = {i};\n"));
                    }
                }
            }
            std::fs::write(path, text).unwrap();
        }
        let flags = [
            "--no-cache",
            "--min-tokens",
            "20",
            "--min-lines",
            "3",
            "--mode",
            mode,
        ];
        let config = Config::of_args(dir.path(), &flags);
        let registry = Registry::builtin();
        let snapshot = scan(&config, &registry, &Reuse::default(), &Progress::quiet()).unwrap();
        (dir, snapshot, config, registry)
    }

    /// The list as it was made before the listing: every clone filtered,
    /// keyed and sorted on each call.
    fn reference(
        snapshot: &Snapshot,
        config: &Config,
        query: &ClonesQuery,
    ) -> (Vec<Cursor>, usize) {
        let files = &snapshot.index.files;
        let found = snapshot.clones(config);
        let in_path = |file: &SourceFile| {
            let prefix = query.path.as_str();
            prefix.is_empty()
                || file.rel.strip_prefix(prefix).is_some_and(|rest| {
                    rest.is_empty() || rest.starts_with('/') || prefix.ends_with('/')
                })
        };
        let wanted = |c: &ClonePair| {
            let (a, b) = (&files[c.first.0 as usize], &files[c.second.0 as usize]);
            c.len >= query.min_tokens
                && (in_path(a) || in_path(b))
                && query.format.is_none_or(|f| a.format == f || b.format == f)
        };
        let views = Views::default();
        let key = |c: &ClonePair| {
            let [first, second] = places(&views, snapshot, c);
            let place = |(f, start): (u32, u32)| {
                let file = &files[f as usize];
                (file.rel.clone(), file.tokens.at(start as usize).start)
            };
            Cursor {
                smaller: u32::MAX - c.len,
                shorter: u32::MAX - first.span.lines().max(second.span.lines()),
                first: place(c.first),
                second: place(c.second),
            }
        };
        let mut keys: Vec<Cursor> = found.0.iter().filter(|c| wanted(c)).map(key).collect();
        let total = keys.len();
        if let Some(after) = &query.after {
            keys.retain(|k| k > after);
        }
        keys.sort();
        (keys, total)
    }

    #[test]
    fn every_filter_pages_through_the_listing_as_through_a_sort_of_every_clone() {
        let (_dir, snapshot, config, registry) = generated("strict");
        let clones = snapshot.clones(&config).0.len();
        assert!(clones > 40, "{clones} clones");
        let format = |name: &str| registry.lookup(name).map(|f| f.id);
        let mut paths: Vec<String> = ["", "a", "a/", "a/b", "a/b/", "a/b/z.js", "ab", "ab.js"]
            .into_iter()
            .chain(["d", "nope", "a//", "/", "a/b/c/deep.js/", "r.py", "a/b/c"])
            .map(str::to_owned)
            .collect();
        paths.extend(snapshot.index.files.iter().map(|f| f.rel.clone()));
        let mut checked = 0;
        for path in &paths {
            for format in [
                None,
                format("javascript"),
                format("typescript"),
                format("python"),
            ] {
                for min_tokens in [0, 30, 45, 1_000] {
                    let wanted = ClonesQuery {
                        path: path.clone(),
                        format,
                        min_tokens,
                        ..ClonesQuery::default()
                    };
                    let (keys, total) = reference(&snapshot, &config, &wanted);
                    for limit in [1, 3, 1_000] {
                        // Page through, each page from the cursor of the last.
                        let mut query = ClonesQuery {
                            limit,
                            ..wanted.clone()
                        };
                        let mut listed = Vec::new();
                        loop {
                            let page = list(&snapshot, &config, &registry, &query);
                            assert_eq!(page.total, total, "{query:?}");
                            assert!(page.clones.len() <= limit);
                            listed.extend(page.clones.into_iter().map(|c| c.id));
                            match page.next_cursor {
                                Some(next) => query.after = Cursor::decode(&next),
                                None => break,
                            }
                        }
                        let expected: Vec<String> =
                            keys.iter().map(|k| id(k, u32::MAX - k.smaller)).collect();
                        assert_eq!(listed, expected, "{wanted:?}, limit {limit}");
                        checked += listed.len();
                    }
                    // A cursor no clone has lists what sorts after it.
                    for (tokens, lines, rel) in [(30, 9, "a/b"), (44, 0, "b"), (25, 99, "")] {
                        let after = Cursor {
                            smaller: u32::MAX - tokens,
                            shorter: u32::MAX - lines,
                            first: (rel.to_owned(), 10),
                            second: (rel.to_owned(), 10),
                        };
                        let query = ClonesQuery {
                            after: Some(after),
                            limit: MAX_LIMIT,
                            ..wanted.clone()
                        };
                        let (keys, total) = reference(&snapshot, &config, &query);
                        let page = list(&snapshot, &config, &registry, &query);
                        let ids: Vec<String> = page.clones.into_iter().map(|c| c.id).collect();
                        let expected: Vec<String> =
                            keys.iter().map(|k| id(k, u32::MAX - k.smaller)).collect();
                        assert_eq!((ids, page.total), (expected, total), "{query:?}");
                    }
                }
            }
        }
        assert!(checked > 1_000, "{checked} clones listed");
    }

    #[test]
    fn each_listed_id_finds_its_clone_and_no_other_text_does() {
        let (_dir, snapshot, config, registry) = generated("mild");
        let mut query = ClonesQuery {
            limit: MAX_LIMIT,
            ..ClonesQuery::default()
        };
        let mut listed = Vec::new();
        loop {
            let page = list(&snapshot, &config, &registry, &query);
            listed.extend(page.clones);
            match page.next_cursor {
                Some(next) => query.after = Cursor::decode(&next),
                None => break,
            }
        }
        assert_eq!(listed.len(), snapshot.clones(&config).0.len());
        for listed in &listed {
            let detail = detail(&snapshot, &config, &registry, &listed.id).unwrap();
            assert_eq!((&detail.id, &detail.clone), (&listed.id, &listed.clone));
        }
        let id = &listed[0].id;
        let upper = id.to_uppercase();
        let plus = format!("+{}", &id[1..]);
        for bad in [
            &upper,
            &plus,
            &id[1..],
            "",
            "0000000000000000",
            "zzzzzzzzzzzzzzzz",
        ] {
            if bad != id.as_str() {
                assert_eq!(detail(&snapshot, &config, &registry, bad), None, "{bad}");
            }
        }
    }

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        let cursor = Cursor {
            smaller: u32::MAX - 80,
            shorter: u32::MAX - 12,
            first: ("src/a b.js".into(), 40),
            second: ("src/\"c\".js".into(), 7),
        };
        assert_eq!(
            cursor.encode(),
            "80.12.7372632f6120622e6a73.40.7372632f2263222e6a73.7"
        );
        let pattern = regex::Regex::new(CURSOR_PATTERN).unwrap();
        assert!(pattern.is_match(&cursor.encode()));
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
        for bad in [
            "zz",
            "5b5d",
            "1.2.3.4.5.6",
            "1.2.61.3.6F.4",
            "1.2.61.3.62.4.",
            "+1.2..3..4",
            "12345678901.2..3..4",
            "é1",
        ] {
            assert_eq!(Cursor::decode(bad), None, "{bad}");
            assert!(!pattern.is_match(bad), "{bad}");
        }
        // Made up but well formed: a place in the order all the same.
        let made_up = Cursor::decode("9999999999.0.ff.1..2").unwrap();
        assert_eq!((made_up.smaller, made_up.shorter), (0, u32::MAX));
        assert_eq!(made_up.first, ("\u{fffd}".to_owned(), 1));
    }

    #[test]
    fn larger_clones_sort_first() {
        let key = |tokens: u32, lines: u32, first: &str| Cursor {
            smaller: u32::MAX - tokens,
            shorter: u32::MAX - lines,
            first: (first.into(), 0),
            second: ("z".into(), 0),
        };
        let mut keys = [
            key(50, 9, "a"),
            key(90, 3, "b"),
            key(90, 3, "a"),
            key(90, 7, "c"),
        ];
        keys.sort();
        let order: Vec<(u32, &str)> = keys
            .iter()
            .map(|k| (u32::MAX - k.smaller, k.first.0.as_str()))
            .collect();
        assert_eq!(order, [(90, "c"), (90, "a"), (90, "b"), (50, "a")]);
    }
}
