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
//! those do not change.

use crate::engine::grammar::{FormatId, Registry};
use crate::engine::index::SourceFile;
use crate::engine::matching::{content_hash, ClonePair, Span};
use crate::engine::tokens::{Mode, Token};
use crate::project::config::Config;
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

impl Cursor {
    /// The opaque text clients send back: the key as hex-encoded JSON.
    pub(crate) fn encode(&self) -> String {
        let json = serde_json::json!([
            u32::MAX - self.smaller,
            u32::MAX - self.shorter,
            self.first.0,
            self.first.1,
            self.second.0,
            self.second.1,
        ]);
        json.to_string()
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Reads what [`Cursor::encode`] wrote; `None` for anything else.
    pub(crate) fn decode(text: &str) -> Option<Cursor> {
        if !text.len().is_multiple_of(2) || text.len() > 16_384 {
            return None;
        }
        let bytes = (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()?;
        let (tokens, lines, first, first_at, second, second_at): (
            u32,
            u32,
            String,
            u32,
            String,
            u32,
        ) = serde_json::from_slice(&bytes).ok()?;
        Some(Cursor {
            smaller: u32::MAX - tokens,
            shorter: u32::MAX - lines,
            first: (first, first_at),
            second: (second, second_at),
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

/// The page of the project's clones that `query` asks for.
pub(crate) fn list(
    snapshot: &Snapshot,
    config: &Config,
    registry: &Registry,
    query: &ClonesQuery,
) -> ClonesPage {
    let files = &snapshot.index.files;
    let found = snapshot.clones(config);
    let clones = &found.0[..];
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
    let mut keyed: Vec<(Cursor, &ClonePair)> = clones
        .iter()
        .filter(|c| wanted(c))
        .map(|c| (key(snapshot, c), c))
        .collect();
    let total = keyed.len();
    if let Some(after) = &query.after {
        keyed.retain(|(k, _)| k > after);
    }
    let limit = query.limit.clamp(1, MAX_LIMIT);
    // Only the page is sorted in full: the rest need only be after it.
    if keyed.len() > limit {
        keyed.select_nth_unstable_by(limit - 1, |a, b| a.0.cmp(&b.0));
        keyed.truncate(limit);
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let last = keyed.last().map(|(k, _)| k.encode());
        return ClonesPage {
            clones: paged(snapshot, config, registry, &keyed, query.fragments),
            total,
            next_cursor: last,
        };
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    ClonesPage {
        clones: paged(snapshot, config, registry, &keyed, query.fragments),
        total,
        next_cursor: None,
    }
}

/// The sort key of a clone: size, then its places by path and byte offset.
fn key(snapshot: &Snapshot, c: &ClonePair) -> Cursor {
    let files = &snapshot.index.files;
    let place = |(f, start): (u32, u32)| {
        let file = &files[f as usize];
        (file.rel.clone(), file.tokens[start as usize].start)
    };
    Cursor {
        smaller: u32::MAX - c.len,
        shorter: u32::MAX - lines(snapshot, c),
        first: place(c.first),
        second: place(c.second),
    }
}

fn span(file: &SourceFile, start: u32, len: u32) -> Span {
    Span {
        start: file.token_start(start),
        end: file.token_end(start + len - 1),
    }
}

/// One place of a clone: its file, its tokens and their span.
struct At<'s> {
    file: &'s SourceFile,
    tokens: std::ops::Range<u32>,
    span: Span,
}

/// The two places of `c`.
fn places<'s>(snapshot: &'s Snapshot, c: &ClonePair) -> [At<'s>; 2] {
    let files = &snapshot.index.files;
    let (first_len, second_len) = c.extent();
    [(c.first, first_len), (c.second, second_len)].map(|((f, start), len)| {
        let file = &files[f as usize];
        At {
            file,
            tokens: start..start + len,
            span: span(file, start, len),
        }
    })
}

/// Lines of the larger place of `c`.
fn lines(snapshot: &Snapshot, c: &ClonePair) -> u32 {
    let [first, second] = places(snapshot, c);
    first.span.lines().max(second.span.lines())
}

/// The tokens `range` of `file` as a span; `None` when it is empty.
fn span_of(file: &SourceFile, range: std::ops::Range<u32>) -> Option<Span> {
    (!range.is_empty()).then(|| span(file, range.start, range.len() as u32))
}

/// `c` (found in `mode`) as a duplication: its first place and its
/// second, each quoted when `quote` says so.
fn duplication(
    snapshot: &Snapshot,
    registry: &Registry,
    c: &ClonePair,
    mode: Mode,
    quote: [bool; 2],
) -> Duplication {
    let [first, second] = places(snapshot, c);
    let near = c.similarity().map(|similarity| Near {
        similarity,
        gaps: (c.near.iter())
            .flat_map(|chain| chain.gaps())
            .map(|gap| Gap {
                place: span_of(first.file, gap.a),
                other: span_of(second.file, gap.b),
            })
            .collect(),
    });
    // What is the same on both sides: the matched tokens.
    let matched: Vec<Token> = c
        .parts()
        .into_iter()
        .flat_map(|(a, _, len)| &first.file.tokens[a as usize..(a + len) as usize])
        .copied()
        .collect();
    let place = |at: At<'_>, quoted: bool| Place {
        fragment: quoted.then(|| {
            at.file
                .fragment(at.tokens.start, at.tokens.end - 1)
                .to_owned()
        }),
        ..Place::unquoted(at.file, registry, at.span)
    };
    Duplication {
        place: place(first, quote[0]),
        other: place(second, quote[1]),
        tokens: c.len,
        content_hash: content_hash(&matched, mode),
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
    page.iter()
        .map(|(key, c)| PagedClone {
            id: id(key, c.len),
            clone: duplication(snapshot, registry, c, config.mode, [fragments; 2]),
        })
        .collect()
}

/// Every clone of the project, largest first ([`sort_largest_first`]),
/// the second place of each quoted: what `dupcheck report` lists, from the
/// detection `/api/stats` counts.
pub(crate) fn all(snapshot: &Snapshot, config: &Config, registry: &Registry) -> Vec<Duplication> {
    let found = snapshot.clones(config);
    let mut all: Vec<Duplication> = found
        .0
        .iter()
        .map(|c| duplication(snapshot, registry, c, config.mode, [false, true]))
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
    let clones = &found.0[..];
    let c = clones
        .iter()
        .find(|c| id(&key(snapshot, c), c.len) == id_wanted)?;
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
        let (file, span) = (at.file, at.span);
        let text: Vec<&str> = file
            .text
            .split('\n')
            .skip(span.start.line as usize - 1)
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
    let [first, second] = places(snapshot, c);
    let differing = first_tokens
        .iter()
        .zip(&second_tokens)
        .enumerate()
        .filter(|(_, (&a, &b))| text_of(first.file, a) != text_of(second.file, b))
        .map(|(i, _)| i as u32)
        .collect();
    Some(CloneDetail {
        id: id_wanted.to_owned(),
        clone: duplication(snapshot, registry, c, config.mode, [false; 2]),
        first: place(&first, &first_tokens),
        second: place(&second, &second_tokens),
        tokens_listed: first_tokens.len() as u32,
        differing,
    })
}

/// The source text of token `i` of `file`.
fn text_of(file: &SourceFile, i: u32) -> &str {
    let token = &file.tokens[i as usize];
    &file.text[token.start as usize..token.end() as usize]
}

/// A clone's id: a hash of its places and size.
fn id(key: &Cursor, tokens: u32) -> String {
    let mut bytes = Vec::with_capacity(key.first.0.len() + key.second.0.len() + 16);
    for (rel, at) in [&key.first, &key.second] {
        bytes.extend_from_slice(rel.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&at.to_le_bytes());
    }
    bytes.extend_from_slice(&tokens.to_le_bytes());
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        let cursor = Cursor {
            smaller: u32::MAX - 80,
            shorter: u32::MAX - 12,
            first: ("src/a b.js".into(), 40),
            second: ("src/\"c\".js".into(), 7),
        };
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
        for bad in ["", "zz", "5b5d", "7b7d", "5b312c325d", "abc", "é1"] {
            assert_eq!(Cursor::decode(bad), None, "{bad}");
        }
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
