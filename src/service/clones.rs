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
use crate::engine::matching::{ClonePair, Span};
use crate::project::config::Config;
use crate::project::snapshot::Snapshot;

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
    pub clones: Vec<ListedClone>,
    /// Clones matching the filters, on every page.
    pub total: usize,
    /// The cursor of the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// A clone of the list: two places with the same tokens.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListedClone {
    /// Stable while the index does not change: 16 hex digits.
    pub id: String,
    /// The format of the first place.
    pub format: String,
    /// Tokens in each place.
    pub tokens: u32,
    /// Lines of the larger place.
    pub lines: u32,
    /// The place that comes first (by path, then position).
    pub first: Place,
    /// The other place.
    pub second: Place,
    /// Near-miss clones only: matched tokens over the tokens spanned, on
    /// the place that spans more.
    pub similarity: Option<f64>,
    /// Near-miss clones only: what is unmatched between the parts, in
    /// order (at most 3 gaps).
    pub gaps: Option<Vec<CloneGap>>,
}

/// One gap of a near-miss clone: the lines left unmatched in each place,
/// `null` in a place where nothing is (a statement inserted in the other).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CloneGap {
    /// In the first place.
    pub first: Option<GapLines>,
    /// In the second place.
    pub second: Option<GapLines>,
}

/// A range of whole lines, both ends included.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GapLines {
    pub start_line: u32,
    pub end_line: u32,
}

/// A ratio as answers give it: rounded to 3 decimals.
fn rounded(ratio: f64) -> f64 {
    (ratio * 1000.0).round() / 1000.0
}

/// One place of a clone: a file and a range of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Place {
    /// The path as reported (relative to DIR, or absolute with `--absolute`).
    pub file: String,
    /// 1-based line of the first token.
    pub start_line: u32,
    /// Line of the last token's last character.
    pub end_line: u32,
    /// 1-based column (characters) of the first token.
    pub start_column: u32,
    /// Column just after the last token's last character.
    pub end_column: u32,
    /// The text of the place, when asked for.
    pub fragment: Option<String>,
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
            clones: render(snapshot, registry, &keyed, query.fragments),
            total,
            next_cursor: last,
        };
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    ClonesPage {
        clones: render(snapshot, registry, &keyed, query.fragments),
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

/// A near-miss clone's gaps as lines of each place.
fn gaps(snapshot: &Snapshot, c: &ClonePair) -> Option<Vec<CloneGap>> {
    let chain = c.near.as_ref()?;
    let files = &snapshot.index.files;
    let lines = |f: u32, range: std::ops::Range<u32>| {
        let file = &files[f as usize];
        (!range.is_empty()).then(|| GapLines {
            start_line: file.token_start(range.start).line,
            end_line: file.token_end(range.end - 1).line,
        })
    };
    Some(
        chain
            .gaps()
            .into_iter()
            .map(|gap| CloneGap {
                first: lines(c.first.0, gap.a),
                second: lines(c.second.0, gap.b),
            })
            .collect(),
    )
}

fn render(
    snapshot: &Snapshot,
    registry: &Registry,
    page: &[(Cursor, &ClonePair)],
    fragments: bool,
) -> Vec<ListedClone> {
    page.iter()
        .map(|(key, c)| {
            let place = |at: At<'_>| Place {
                file: at.file.path.clone(),
                start_line: at.span.start.line,
                end_line: at.span.end.line,
                start_column: at.span.start.column,
                end_column: at.span.end.column,
                fragment: fragments.then(|| {
                    at.file
                        .fragment(at.tokens.start, at.tokens.end - 1)
                        .to_owned()
                }),
            };
            let [first, second] = places(snapshot, c);
            ListedClone {
                id: id(key, c.len),
                format: registry.get(first.file.format).name.clone(),
                tokens: c.len,
                lines: u32::MAX - key.shorter,
                first: place(first),
                second: place(second),
                similarity: c.similarity().map(rounded),
                gaps: gaps(snapshot, c),
            }
        })
        .collect()
}

/// The most tokens of each place a [`CloneDetail`] lists.
pub(crate) const MAX_DETAIL_TOKENS: usize = 10_000;

/// One clone with what a side-by-side view shows: both places' whole lines
/// and where each token is, to highlight what matched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CloneDetail {
    /// The clone's id, as the list gives it.
    pub id: String,
    /// The format of the first place.
    pub format: String,
    /// Tokens in each place.
    pub tokens: u32,
    /// Lines of the larger place.
    pub lines: u32,
    /// The place that comes first (by path, then position).
    pub first: PlaceText,
    /// The other place.
    pub second: PlaceText,
    /// Tokens listed per place: `tokens`, or [`MAX_DETAIL_TOKENS`] when
    /// the clone is larger.
    pub tokens_listed: u32,
    /// The indexes (into each place's `tokens`) of the token pairs whose
    /// source text differs: equal once normalized (a renamed identifier in
    /// `mild` or `weak` mode, a comment-free relayout never), the rest are
    /// alike letter for letter.
    pub differing: Vec<u32>,
    /// Near-miss clones only: as in the list.
    pub similarity: Option<f64>,
    /// Near-miss clones only: as in the list. Their tokens are not among
    /// the places' `tokens`.
    pub gaps: Option<Vec<CloneGap>>,
}

/// One place of a [`CloneDetail`]: its range, its whole lines, its tokens.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlaceText {
    /// The path as reported (relative to DIR, or absolute with `--absolute`).
    pub file: String,
    /// 1-based line of the first token.
    pub start_line: u32,
    /// Line of the last token's last character.
    pub end_line: u32,
    /// 1-based column (characters) of the first token.
    pub start_column: u32,
    /// Column just after the last token's last character.
    pub end_column: u32,
    /// Lines `startLine` to `endLine` whole, `\n`-separated (no final
    /// newline, carriage returns removed).
    pub text: String,
    /// Each token of the place as `[startLine, startColumn, endLine,
    /// endColumn]` (1-based lines, columns in characters, the end just
    /// after the last character), in order.
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
    let (key, c) = clones.iter().find_map(|c| {
        let key = key(snapshot, c);
        (id(&key, c.len) == id_wanted).then_some((key, c))
    })?;
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
        PlaceText {
            file: file.path.clone(),
            start_line: span.start.line,
            end_line: span.end.line,
            start_column: span.start.column,
            end_column: span.end.column,
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
        format: registry.get(first.file.format).name.clone(),
        tokens: c.len,
        lines: u32::MAX - key.shorter,
        first: place(&first, &first_tokens),
        second: place(&second, &second_tokens),
        tokens_listed: first_tokens.len() as u32,
        differing,
        similarity: c.similarity().map(rounded),
        gaps: gaps(snapshot, c),
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
