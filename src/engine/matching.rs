//! Matching: verified, maximal runs of equal tokens between a query and the
//! index.
//!
//! In: a query token stream (a snippet, or one indexed file), the [`Index`]
//! and the [`Mode`] asked for. Out: [`Run`]s, each a maximal common run
//! found through a shared fingerprint, extended backward and forward token
//! by token, and the reportable [`SnippetMatch`]es and [`ClonePair`]s built from
//! them.
//!
//! One index serves every mode: fingerprints are of weak ids (the most
//! abstract), so a shared fingerprint finds the maximal run equal in weak
//! mode, and [`split`] cuts it into the maximal runs equal in the mode asked
//! for (two tokens equal in strict or mild mode are equal in weak mode, so
//! none is missed).
//!
//! Invariants: a run is never reported on a hash alone (identities are
//! compared), so collisions cannot make false matches; each maximal run is
//! found once however many fingerprints it holds; fingerprints are only
//! compared within one format family.

use std::ops::Range;
use std::time::Instant;

use crate::engine::fingerprint::{Fingerprint, Winnow};
use crate::engine::index::{
    fingerprints, FileView, Index, Posting, Postings, SourceFile, Views, SEED_TOKENS,
};
use crate::engine::near_miss;
use crate::engine::runs::{
    find_runs, is_abstract_literal, is_repetitive, is_table_token, long_enough, pieces,
    table_stretch, Expired, Run,
};
#[cfg(doc)]
use crate::engine::runs::{POSTING_CAP, SEED_CAP};
use crate::engine::text::{FileText, Reader, Slices};
use crate::engine::tokens::{LineIndex, Mode, PackedTokens, Position, Token, TokenClass, Tokens};

/// Detection thresholds (docs/matching.md, "Duplications in a snippet").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// Minimum tokens of a duplication.
    pub min_tokens: u32,
    /// Minimum lines of a duplication.
    pub min_lines: u32,
}

/// A region of text: first character to just after the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Span {
    /// Start of the first token.
    pub start: Position,
    /// End of the last token.
    pub end: Position,
}

impl Span {
    /// Lines spanned, `end.line - start.line + 1`.
    pub(crate) fn lines(&self) -> u32 {
        self.end.line - self.start.line + 1
    }
}

/// A duplication of a snippet in the codebase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnippetMatch {
    /// Where in the snippet.
    pub snippet: Span,
    /// The codebase file.
    pub file: u32,
    /// Where in that file.
    pub codebase: Span,
    /// The run of tokens; of a near-miss copy, its first token in the
    /// snippet and the codebase tokens it spans.
    pub run: Run,
    /// A near-miss copy's parts and gaps; `None` for an exact one.
    pub near: Option<NearMiss>,
}

impl SnippetMatch {
    /// Tokens matched: the run's, or a near-miss copy's parts'.
    pub(crate) fn matched(&self) -> u32 {
        self.near.as_ref().map_or(self.run.len, |n| n.matched)
    }

    /// The matched tokens, pair by pair: each as its index in the snippet
    /// and in the codebase file, in order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let exact = (self.near.is_none()).then_some((self.run.a, self.run.b, self.run.len));
        let parts = self.near.iter().flat_map(|near| near.parts.iter().copied());
        (exact.into_iter().chain(parts))
            .flat_map(|(a, b, len)| (0..len).map(move |i| (a + i, b + i)))
    }
}

/// Renamed pairs listed at most: a weak-mode copy of a table of literals
/// differs in every entry.
pub(crate) const MAX_RENAMED: usize = 20;

/// What a copy renamed between two places matched token for token in
/// `mode` (`pairs`: each matched token's index in `a` and in `b`, the two
/// sides' tokens and text): the pairs of identifiers, and in `weak` mode of
/// literals, whose source texts are not alike letter for letter, each pair
/// once, in order of first appearance, at most [`MAX_RENAMED`]. A name
/// written in another case only (`SUM` and `sum` with `--ignoreCase`) is
/// no renaming.
pub(crate) fn renamed<A, B, SA, SB>(
    pairs: impl IntoIterator<Item = (u32, u32)>,
    a: (&A, &SA),
    b: (&B, &SB),
    mode: Mode,
) -> Vec<(String, String)>
where
    A: Tokens + ?Sized,
    B: Tokens + ?Sized,
    SA: Slices + ?Sized,
    SB: Slices + ?Sized,
{
    let named = |t: Token| match t.class() {
        TokenClass::Identifier => true,
        TokenClass::String | TokenClass::Number | TokenClass::Literal => mode == Mode::Weak,
        TokenClass::Other => false,
    };
    fn text<'t>(
        (tokens, text): (&(impl Tokens + ?Sized), &'t (impl Slices + ?Sized)),
        i: u32,
    ) -> &'t str {
        let token = tokens.at(i as usize);
        text.slice(token.start as usize..token.end() as usize)
            .unwrap_or("")
    }
    let mut out: Vec<(String, String)> = Vec::new();
    // Strict mode matches identifiers by their text (lower-cased with
    // `--ignoreCase`): nothing it matches is renamed.
    if mode == Mode::Strict {
        return out;
    }
    for (i, j) in pairs {
        let (x, y) = (a.0.at(i as usize), b.0.at(j as usize));
        // The same text hash: the same text, or the same but for case.
        if x.id_in(Mode::Strict) == y.id_in(Mode::Strict) || !named(x) {
            continue;
        }
        let (x, y) = (text(a, i), text(b, j));
        if !x.eq_ignore_ascii_case(y) && !out.iter().any(|(p, q)| p == x && q == y) {
            out.push((x.to_owned(), y.to_owned()));
            if out.len() == MAX_RENAMED {
                break;
            }
        }
    }
    out
}

/// What a near-miss duplication (type 3) adds to an exact one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NearMiss {
    /// Tokens matched, in its parts.
    pub matched: u32,
    /// Twice the tokens spanned that the similarity divides by
    /// ([`near_miss::Chain::spanned_twice`]).
    pub spanned_twice: u32,
    /// The unmatched ranges between its parts, in order.
    pub gaps: Vec<GapSpans>,
    /// Its parts: each as its first token in the snippet and in the
    /// codebase file, and its length.
    pub parts: Vec<(u32, u32, u32)>,
}

impl NearMiss {
    /// Matched tokens over spanned tokens.
    pub(crate) fn similarity(&self) -> f64 {
        2.0 * f64::from(self.matched) / f64::from(self.spanned_twice.max(1))
    }
}

/// One gap of a near-miss duplication: the unmatched text of each side,
/// `None` on a side where nothing is unmatched (code inserted on the other
/// side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GapSpans {
    /// In the snippet.
    pub snippet: Option<Span>,
    /// In the codebase file.
    pub codebase: Option<Span>,
}

/// What a snippet check excludes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Exclusions<'a> {
    /// The snippet's own file (relative path): never reported.
    pub own_file: Option<&'a str>,
    /// With skipLocal: files in this folder are not reported.
    pub local_folder: Option<&'a str>,
    /// Files never reported, by id, sorted: those a diff changes, whose
    /// indexed versions are not the codebase any more.
    pub files: &'a [u32],
    /// Fingerprint hashes not looked up, sorted: those found in more
    /// places than a lookup takes ([`POSTING_CAP`]) in a wider codebase
    /// than the index's (a store's files are indexed only where they
    /// share a hash with the snippet).
    pub capped_fingerprints: &'a [u64],
    /// Seed hashes not looked up, sorted ([`SEED_CAP`]), as
    /// `capped_fingerprints`.
    pub capped_seeds: &'a [u64],
    /// The indexed file that the snippet is (a diff's changed file, checked
    /// against the index of the diff's files): runs against it are kept
    /// only where the two places do not overlap, cut at the second place's
    /// start as whole-project clones are.
    pub itself: Option<u32>,
}

/// Every duplication of `code` (tokenized as `tokens`, of `family`) in the
/// index, equal in `mode`, in the order docs/api.md gives ("The check's answer"); fails once past
/// `deadline`.
#[allow(clippy::too_many_arguments)] // Each is one part of the question.
pub(crate) fn snippet_matches(
    index: &Index,
    family: usize,
    code: &str,
    tokens: &(impl Tokens + ?Sized),
    mode: Mode,
    thresholds: Thresholds,
    exclude: Exclusions<'_>,
    near_miss: Option<f64>,
    deadline: Instant,
) -> Result<Vec<SnippetMatch>, Expired> {
    let fps = fingerprints(tokens, index.winnow);
    let own = exclude.own_file.and_then(|rel| index.file_by_rel(rel));
    let keep = |p: &Posting| {
        Some(p.file) != own
            && exclude.files.binary_search(&p.file).is_err()
            && exclude
                .local_folder
                .is_none_or(|folder| index.files[p.file as usize].folder() != folder)
    };
    let uncapped = |capped: &[u64], f: &Fingerprint| capped.binary_search(&{ f.hash }).is_err();
    let found = find_runs(
        tokens,
        &fps,
        index,
        (Postings::Fingerprints, mode),
        family,
        (None, Some(deadline)),
        |f, p| uncapped(exclude.capped_fingerprints, f) && keep(p),
    );
    let (weak_runs, _) = found?;
    // A place of the snippet's own text is never a near-miss copy.
    let near_miss = near_miss.filter(|_| exclude.itself.is_none());
    let cut_at = near_miss.map_or(thresholds.min_tokens, |_| {
        near_miss::MIN_PART.min(thresholds.min_tokens)
    });
    let pieces = pieces(&weak_runs, tokens, index, mode, cut_at);
    let mut runs = long_enough(&pieces, thresholds.min_tokens);
    let lines = LineIndex::new(code);
    let chains = match near_miss {
        Some(similarity) => {
            let seeds = fingerprints(tokens, Winnow::for_min_tokens(SEED_TOKENS));
            let query = NearQuery {
                tokens,
                seeds: &seeds,
                family,
                mode,
                min_tokens: thresholds.min_tokens,
                similarity,
                first: None,
            };
            let keep = |f: &Fingerprint, p: &Posting| uncapped(exclude.capped_seeds, f) && keep(p);
            near_copies(
                index,
                &query,
                (&weak_runs, &pieces),
                &mut runs,
                Some(deadline),
                keep,
            )?
        }
        _ => Vec::new(),
    };
    fn span_of(
        text: &str,
        lines: &LineIndex,
        tokens: &(impl Tokens + ?Sized),
        range: Range<u32>,
    ) -> Option<Span> {
        (!range.is_empty()).then(|| Span {
            start: lines.start_position(text, tokens.at(range.start as usize).start),
            end: lines.end_position(text, tokens.at(range.end as usize - 1).end()),
        })
    }
    // Each file's text is read back once at most (an ASCII file's columns
    // need none).
    let views = Views::default();
    let view_span = |view: &FileView<'_>, range: Range<u32>| {
        (!range.is_empty()).then(|| Span {
            start: view.token_start(range.start),
            end: view.token_end(range.end - 1),
        })
    };
    let near_matches: Vec<SnippetMatch> = chains
        .iter()
        .filter_map(|chain| {
            let view = views.of(&index.files[chain.file as usize]);
            let (a, b) = (chain.a(), chain.b());
            let snippet = span_of(code, &lines, tokens, a.clone())?;
            let codebase = view_span(&view, b.clone())?;
            if snippet.lines() < thresholds.min_lines {
                return None;
            }
            let gaps = chain
                .gaps()
                .into_iter()
                .map(|gap| GapSpans {
                    snippet: span_of(code, &lines, tokens, gap.a),
                    codebase: view_span(&view, gap.b),
                })
                .collect();
            Some(SnippetMatch {
                snippet,
                file: chain.file,
                codebase,
                run: Run {
                    a: a.start,
                    file: chain.file,
                    b: b.start,
                    len: b.len() as u32,
                },
                near: Some(NearMiss {
                    matched: chain.matched(),
                    spanned_twice: chain.spanned_twice(),
                    gaps,
                    parts: chain.parts.iter().map(|p| (p.a, p.b, p.len)).collect(),
                }),
            })
        })
        .collect();
    let mut matches: Vec<SnippetMatch> = runs
        .into_iter()
        .map(|mut run| {
            if Some(run.file) == exclude.itself {
                // Two places of one text must not overlap (the place
                // itself is the run of length 0).
                run.len = run.len.min(run.a.abs_diff(run.b));
            }
            run
        })
        .filter(|run| {
            run.len >= thresholds.min_tokens
                && informative(
                    Place::new(code, tokens, run.a, run.len),
                    Place::of(&index.files[run.file as usize], run.b, run.len),
                    mode,
                    thresholds,
                )
        })
        .filter_map(|run| {
            let last = (run.a + run.len - 1) as usize;
            let snippet = Span {
                start: lines.start_position(code, tokens.at(run.a as usize).start),
                end: lines.end_position(code, tokens.at(last).end()),
            };
            if snippet.lines() < thresholds.min_lines {
                return None;
            }
            let view = views.of(&index.files[run.file as usize]);
            let codebase = Span {
                start: view.token_start(run.b),
                end: view.token_end(run.b + run.len - 1),
            };
            Some(SnippetMatch {
                snippet,
                file: run.file,
                codebase,
                run,
                near: None,
            })
        })
        .chain(near_matches)
        .collect();
    // The answer's order (docs/api.md): snippet line, longer first, file, codebase line.
    let order = |m: &SnippetMatch| {
        let path = &index.files[m.file as usize].path;
        (
            m.snippet.start.line,
            std::cmp::Reverse(m.run.len),
            path,
            m.codebase.start.line,
            m.run.a,
            m.run.b,
        )
    };
    matches.sort_by(|x, y| order(x).cmp(&order(y)));
    Ok(matches)
}

/// What near-miss detection asks of a query.
pub(crate) struct NearQuery<'q, Q: Tokens + ?Sized> {
    /// The query's tokens.
    pub tokens: &'q Q,
    /// Its seeds ([`Postings::Seeds`]): all of them, or those that occur
    /// elsewhere too.
    pub seeds: &'q [Fingerprint],
    /// Its format family.
    pub family: usize,
    /// The mode its parts are equal in.
    pub mode: Mode,
    /// Matched tokens a copy needs, less what its edits cost.
    pub min_tokens: u32,
    /// The least similarity of a copy.
    pub similarity: f64,
    /// The indexed file the query is, when each pair of places is sought
    /// from its first place (whole-project detection).
    pub first: Option<u32>,
}

/// The near-miss copies of `query` in the index, reconciled with its exact
/// runs (`runs`, equal in the mode, found through `weak_runs`): a copy
/// that an exact run matching at least as many tokens overlaps is that run,
/// and exact runs inside a copy that matches more are its parts, taken out
/// of `runs`. `keep` decides which seed postings to try.
pub(crate) fn near_copies(
    index: &Index,
    query: &NearQuery<'_, impl Tokens + ?Sized>,
    found: (&[Run], &[Run]),
    runs: &mut Vec<Run>,
    deadline: Option<Instant>,
    keep: impl FnMut(&Fingerprint, &Posting) -> bool,
) -> Result<Vec<near_miss::Chain>, Expired> {
    let (tokens, mode) = (query.tokens, query.mode);
    let parts = near_miss::parts(
        tokens,
        query.seeds,
        index,
        query.family,
        mode,
        found,
        (query.first, deadline),
        keep,
    )?;
    let ids: Vec<u64> = tokens.each().map(|t| t.id_in(mode)).collect();
    // A gap whose two sides are equal in weak mode is only what `mode`
    // tells apart: renamed identifiers, changed literals.
    let renamed = |file: u32, gap: &near_miss::Gap| {
        let target = &index.files[file as usize].tokens;
        let (a, b) = (gap.a.start as usize, gap.b.start as usize);
        gap.a.len() == gap.b.len()
            && tokens
                .within(a..a + gap.a.len())
                .zip(target.within(b..b + gap.b.len()))
                .all(|(x, y)| x.weak_id() == y.weak_id())
    };
    let files = near_miss::Files {
        tokens: &|file| &index.files[file as usize].tokens,
        mode,
    };
    let mut chains = near_miss::chains(
        &parts,
        &ids,
        files,
        query.min_tokens,
        query.similarity,
        renamed,
    );
    let overlap = |x: &Range<u32>, y: &Range<u32>| x.start < y.end && y.start < x.end;
    let meets = |c: &near_miss::Chain, run: &Run| {
        c.file == run.file
            && overlap(&c.a(), &(run.a..run.a + run.len))
            && overlap(&c.b(), &(run.b..run.b + run.len))
    };
    chains.retain(|c| {
        !runs
            .iter()
            .any(|run| meets(c, run) && run.len >= c.matched())
    });
    runs.retain(|run| !chains.iter().any(|c| meets(c, run)));
    Ok(chains)
}

/// A hash of the identities in `mode` of `tokens` (a run's), the same
/// wherever the run is: the content of a duplication, for matching it
/// across runs of the tool (SARIF's `primaryLocationLineHash`).
pub(crate) fn content_hash(tokens: impl IntoIterator<Item = Token>, mode: Mode) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for token in tokens {
        hasher.update(&token.id_in(mode).to_le_bytes());
    }
    hasher.digest()
}

/// The answer of matching run without a deadline, which never expires.
pub(crate) fn without_deadline<T>(found: Result<T, Expired>) -> T {
    match found {
        Ok(found) => found,
        Err(Expired) => unreachable!("matching without a deadline never expires"),
    }
}

/// One side of a run: its tokens and the text they index (an indexed
/// file's is read back only if [`informative`] needs it).
pub(crate) struct Place<'a, T: Tokens + ?Sized> {
    text: PlaceText<'a>,
    tokens: &'a T,
    start: usize,
    len: usize,
}

impl<T: Tokens + ?Sized> Clone for Place<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Tokens + ?Sized> Copy for Place<'_, T> {}

/// Where a [`Place`]'s text is.
#[derive(Clone, Copy)]
enum PlaceText<'a> {
    /// A snippet's own text.
    Plain(&'a str),
    /// An indexed file's, compressed.
    File(&'a FileText),
}

impl<'a, T: Tokens + ?Sized> Place<'a, T> {
    fn new(text: &'a str, tokens: &'a T, start: u32, len: u32) -> Place<'a, T> {
        Place::at_text(PlaceText::Plain(text), tokens, start, len)
    }

    fn at_text(text: PlaceText<'a>, tokens: &'a T, start: u32, len: u32) -> Place<'a, T> {
        assert!(
            (start + len) as usize <= tokens.len(),
            "a place past its tokens"
        );
        Place {
            text,
            tokens,
            start: start as usize,
            len: len as usize,
        }
    }

    /// Its text, a file's read back where it is read.
    fn reader(&self) -> PlaceReader<'a> {
        match self.text {
            PlaceText::Plain(text) => PlaceReader::Plain(text),
            PlaceText::File(text) => PlaceReader::File(Reader::new(text)),
        }
    }
}

/// A [`Place`]'s text as it is read.
enum PlaceReader<'a> {
    Plain(&'a str),
    File(Reader<'a>),
}

impl Slices for PlaceReader<'_> {
    fn text_len(&self) -> usize {
        match self {
            PlaceReader::Plain(text) => text.len(),
            PlaceReader::File(text) => text.text_len(),
        }
    }

    fn slice(&self, range: Range<usize>) -> Option<&str> {
        match self {
            PlaceReader::Plain(text) => text.get(range),
            PlaceReader::File(text) => text.slice(range),
        }
    }
}

/// A [`Place`] with its text at hand.
struct Read<'r, T: Tokens + ?Sized> {
    text: &'r dyn Slices,
    tokens: &'r T,
    start: usize,
}

impl<T: Tokens + ?Sized> Clone for Read<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Tokens + ?Sized> Copy for Read<'_, T> {}

impl<'r, T: Tokens + ?Sized> Read<'r, T> {
    fn of(place: Place<'r, T>, text: &'r dyn Slices) -> Read<'r, T> {
        Read {
            text,
            tokens: place.tokens,
            start: place.start,
        }
    }

    fn text_of(&self, i: usize) -> &'r str {
        let token = self.tokens.at(self.start + i);
        self.text
            .slice(token.start as usize..token.end() as usize)
            .unwrap_or("")
    }
}

impl<'a> Place<'a, PackedTokens> {
    pub(crate) fn of(file: &'a SourceFile, start: u32, len: u32) -> Self {
        Place::at_text(PlaceText::File(&file.text), &file.tokens, start, len)
    }
}

/// Whether a run (its two places `a` and `b`, equal in `mode`) says
/// something about copying: it is not one short unit repeated, and it
/// still has min-tokens tokens without the entries of its longest table of
/// literals beyond the first, unless the two tables are the same text or
/// one table [edited](edited_table) in the same code. So in weak mode,
/// where every number is `$num`, a declaration before a long table is not
/// a duplication of another table; a table copied as it is still is, as in
/// the stricter modes, and so is a copy whose data alone was changed.
pub(crate) fn informative<A, B>(a: Place<'_, A>, b: Place<'_, B>, mode: Mode, t: Thresholds) -> bool
where
    A: Tokens + ?Sized,
    B: Tokens + ?Sized,
{
    let ids: Vec<u64> = a
        .tokens
        .within(a.start..a.start + a.len)
        .map(|t| t.id_in(mode))
        .collect();
    if is_repetitive(&ids) {
        return false;
    }
    let table = table_stretch(&ids);
    if a.len - table.len() >= t.min_tokens as usize {
        return true;
    }
    // Only a run mostly made of a table reads the texts.
    let (text_a, text_b) = (a.reader(), b.reader());
    let a = Read::of(a, &text_a);
    let b = Read::of(b, &text_b);
    table.clone().all(|i| a.text_of(i) == b.text_of(i)) || edited_table(a, b, &ids, table)
}

/// Whether the table of literals `table` (a range of the run `ids`, its
/// entries beyond the first) is one table whose entries were edited: it
/// is whole on both sides (code of the run before it and after it, so it
/// has as many entries on both), and the code around it is the same text,
/// names included, one name at least: the same declaration, other data.
/// Two unrelated tables of one length have other names around them.
fn edited_table<A, B>(a: Read<'_, A>, b: Read<'_, B>, ids: &[u64], table: Range<usize>) -> bool
where
    A: Tokens + ?Sized,
    B: Tokens + ?Sized,
{
    let whole = table.end < ids.len() && !ids[..table.start].iter().all(is_table_token);
    let around = (0..table.start).chain(table.end..ids.len());
    let context = || around.clone().filter(|&i| !is_abstract_literal(&ids[i]));
    whole
        && context().any(|i| a.tokens.at(a.start + i).class() == TokenClass::Identifier)
        && context().all(|i| a.text_of(i) == b.text_of(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clones::{project_clones, CloneSettings};
    use crate::engine::fingerprint::Winnow;
    use crate::engine::grammar::Registry;
    use crate::engine::index::{FileMeta, SourceFile};
    use crate::engine::runs::POSTING_CAP;
    use crate::engine::tokens::{tokenize, Mode, Normalization};
    use std::sync::Arc;

    fn settings(
        mode: Mode,
        thresholds: Thresholds,
        skip_local: bool,
        similarity: Option<f64>,
    ) -> CloneSettings {
        CloneSettings {
            mode,
            thresholds,
            skip_local,
            similarity,
        }
    }

    fn far_future() -> Instant {
        Instant::now() + std::time::Duration::from_secs(3600)
    }

    /// Builds an index of `(path, code)` JavaScript files (one index for
    /// every mode).
    fn index(files: &[(&str, &str)], min_tokens: usize) -> Index {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let winnow = Winnow::for_min_tokens(min_tokens);
        let files = files
            .iter()
            .map(|(p, c)| {
                Arc::new(
                    SourceFile::new(
                        p.to_string(),
                        p.to_string(),
                        js,
                        c.to_string(),
                        FileMeta::of(c, c.len() as u64, 0),
                        &Normalization::default(),
                    )
                    .unwrap(),
                )
            })
            .collect();
        Index::build(files, &registry, winnow)
    }

    /// Checks `snippet` and renders each match as
    /// `snippet lines -> file:lines (tokens)`.
    fn check(
        index: &Index,
        snippet: &str,
        mode: Mode,
        min_tokens: u32,
        min_lines: u32,
    ) -> Vec<String> {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let tokens = tokenize(js, snippet, &Normalization::default()).unwrap();
        let t = Thresholds {
            min_tokens,
            min_lines,
        };
        snippet_matches(
            index,
            js.family_id,
            snippet,
            &tokens,
            mode,
            t,
            Exclusions::default(),
            None,
            far_future(),
        )
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}:{}-{}:{} -> {} {}:{}-{}:{} ({})",
                m.snippet.start.line,
                m.snippet.start.column,
                m.snippet.end.line,
                m.snippet.end.column,
                index.files[m.file as usize].path,
                m.codebase.start.line,
                m.codebase.start.column,
                m.codebase.end.line,
                m.codebase.end.column,
                m.run.len
            )
        })
        .collect()
    }

    const ADD: &str = "function add(a, b) {\n  const s = a + b;\n  return s;\n}\n";

    /// The duplications of [`ADD`] as a snippet (strict, 10 tokens, 1 line).
    fn check_add(
        idx: &Index,
        ex: Exclusions,
        deadline: Instant,
    ) -> Result<Vec<SnippetMatch>, Expired> {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let tokens = tokenize(js, ADD, &Normalization::default()).unwrap();
        let t = Thresholds {
            min_tokens: 10,
            min_lines: 1,
        };
        snippet_matches(
            idx,
            js.family_id,
            ADD,
            &tokens,
            Mode::Strict,
            t,
            ex,
            None,
            deadline,
        )
    }

    /// An index of `n` files that are all [`ADD`].
    fn copies_of_add(n: usize) -> Index {
        let names: Vec<String> = (0..n).map(|i| format!("f{i}.js")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|p| (p.as_str(), ADD)).collect();
        index(&files, 10)
    }

    #[test]
    fn a_check_past_its_deadline_stops_matching() {
        let idx = copies_of_add(300);
        let check = |deadline| check_add(&idx, Exclusions::default(), deadline);
        assert_eq!(check(far_future()).map(|m| m.len()), Ok(300));
        assert_eq!(check(Instant::now()), Err(Expired));
    }

    #[test]
    fn snippets_skip_fingerprints_found_in_more_places_than_the_cap() {
        let idx = copies_of_add(POSTING_CAP + 1);
        assert_eq!(check(&idx, ADD, Mode::Strict, 10, 1), Vec::<String>::new());
    }

    #[test]
    fn finds_every_location_with_exact_positions() {
        let idx = index(
            &[
                ("a.js", ADD),
                ("b.js", &format!("// x\n{ADD}")),
                ("c.js", "let q = 1;\n"),
            ],
            10,
        );
        assert_eq!(
            check(&idx, ADD, Mode::Strict, 10, 4),
            [
                "1:1-4:2 -> a.js 1:1-4:2 (19)",
                "1:1-4:2 -> b.js 2:1-5:2 (19)"
            ]
        );
    }

    #[test]
    fn thresholds_apply_to_tokens_and_snippet_lines() {
        let idx = index(&[("a.js", ADD)], 10);
        assert!(check(&idx, ADD, Mode::Strict, 20, 1).is_empty());
        assert!(check(&idx, ADD, Mode::Strict, 19, 5).is_empty());
        assert_eq!(check(&idx, ADD, Mode::Strict, 19, 4).len(), 1);
    }

    #[test]
    fn renamed_copy_needs_mild_mode() {
        // One index answers both modes.
        let renamed = "function sum(x, y) {\n  const t = x + y;\n  return t;\n}\n";
        let idx = index(&[("a.js", ADD)], 10);
        assert!(check(&idx, renamed, Mode::Strict, 10, 4).is_empty());
        assert_eq!(
            check(&idx, renamed, Mode::Mild, 10, 4),
            ["1:1-4:2 -> a.js 1:1-4:2 (19)"]
        );
    }

    #[test]
    fn a_weak_run_is_split_into_the_runs_equal_in_the_mode() {
        // Only `count` is renamed: strict mode finds the parts around it,
        // each a maximal run of its own; mild and weak mode the whole (8
        // tokens at least: `f(a, b` and `g(a, b` are alike in mild mode).
        let file =
            "function f(a, b) {\n  let count = a * 2 + b * 3;\n  return g(a, b, a + b, 7);\n}\n";
        let snippet =
            "function f(a, b) {\n  let total = a * 2 + b * 3;\n  return g(a, b, a + b, 7);\n}\n";
        let idx = index(&[("a.js", file)], 5);
        assert_eq!(
            check(&idx, snippet, Mode::Strict, 8, 1),
            [
                "1:1-2:6 -> a.js 1:1-2:6 (9)",
                "2:13-4:2 -> a.js 2:13-4:2 (24)"
            ]
        );
        for mode in [Mode::Mild, Mode::Weak] {
            assert_eq!(
                check(&idx, snippet, mode, 8, 1),
                ["1:1-4:2 -> a.js 1:1-4:2 (34)"],
                "{mode:?}"
            );
        }
        // A changed number splits the weak run in mild mode only.
        let changed = snippet.replace("7)", "8)");
        assert_eq!(
            check(&idx, &changed, Mode::Mild, 8, 1),
            ["1:1-3:24 -> a.js 1:1-3:24 (30)"]
        );
        assert_eq!(
            check(&idx, &changed, Mode::Weak, 8, 1),
            ["1:1-4:2 -> a.js 1:1-4:2 (34)"]
        );
    }

    #[test]
    fn runs_are_maximal_and_reported_once() {
        // The snippet holds the function plus a tail; the match stops where
        // the texts part, and many shared fingerprints give one run.
        let body: String = (0..30)
            .map(|i| format!("  x{i} = f(x{i}, {i});\n"))
            .collect();
        let file = format!("function g() {{\n{body}}}\n");
        let snippet = format!("{file}let z = 0;\n");
        let idx = index(&[("a.js", &file)], 10);
        assert_eq!(
            check(&idx, &snippet, Mode::Strict, 10, 1),
            ["1:1-32:2 -> a.js 1:1-32:2 (276)"]
        );
    }

    #[test]
    fn own_file_and_local_folder_are_excluded() {
        let idx = index(
            &[("src/a.js", ADD), ("src/b.js", ADD), ("lib/c.js", ADD)],
            10,
        );
        let files = |ex: Exclusions| {
            check_add(&idx, ex, far_future())
                .unwrap()
                .iter()
                .map(|m| idx.files[m.file as usize].path.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            files(Exclusions {
                own_file: Some("src/a.js"),
                ..Exclusions::default()
            }),
            ["lib/c.js", "src/b.js"]
        );
        assert_eq!(
            files(Exclusions {
                own_file: Some("src/a.js"),
                local_folder: Some("src"),
                ..Exclusions::default()
            }),
            ["lib/c.js"]
        );
        let mut changed = [
            idx.file_by_rel("lib/c.js").unwrap(),
            idx.file_by_rel("src/a.js").unwrap(),
        ];
        changed.sort_unstable();
        assert_eq!(
            files(Exclusions {
                files: &changed,
                ..Exclusions::default()
            }),
            ["src/b.js"]
        );
    }

    #[test]
    fn a_text_checked_against_itself_finds_its_repetitions_not_itself() {
        let twice = format!("{ADD}{ADD}");
        let idx = index(&[("a.js", &twice)], 10);
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let tokens = tokenize(js, &twice, &Normalization::default()).unwrap();
        let t = Thresholds {
            min_tokens: 10,
            min_lines: 4,
        };
        let exclude = Exclusions {
            itself: Some(0),
            ..Exclusions::default()
        };
        let found: Vec<_> = snippet_matches(
            &idx,
            js.family_id,
            &twice,
            &tokens,
            Mode::Strict,
            t,
            exclude,
            None,
            far_future(),
        )
        .unwrap()
        .iter()
        .map(|m| (m.snippet.start.line, m.codebase.start.line, m.run.len))
        .collect();
        assert_eq!(found, [(1, 5, 19), (5, 1, 19)]);
    }

    #[test]
    fn content_hashes_are_of_identities_not_places() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let here = tokenize(js, ADD, &Normalization::default()).unwrap();
        let there = tokenize(js, &format!("\n\n  {ADD}"), &Normalization::default()).unwrap();
        assert_ne!(here[0].start, there[0].start);
        let renamed = "function sum(x, y) {\n  const t = x + y;\n  return t;\n}\n";
        let renamed = tokenize(js, renamed, &Normalization::default()).unwrap();
        for mode in [Mode::Strict, Mode::Mild, Mode::Weak] {
            assert_eq!(
                content_hash(here.iter().copied(), mode),
                content_hash(there.iter().copied(), mode)
            );
            assert_ne!(
                content_hash(here.iter().copied(), mode),
                content_hash(here[1..].iter().copied(), mode)
            );
        }
        assert_ne!(
            content_hash(here.iter().copied(), Mode::Strict),
            content_hash(renamed.iter().copied(), Mode::Strict)
        );
        assert_eq!(
            content_hash(here.iter().copied(), Mode::Mild),
            content_hash(renamed.iter().copied(), Mode::Mild)
        );
    }

    #[test]
    fn runs_of_one_repeated_unit_are_not_duplications() {
        // Eleven `self.x = x`-like lines in mild mode: a unit of 6 tokens.
        let assignments = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("this.{n} = {n};\n"))
                .collect::<String>()
        };
        let a = assignments(&["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]);
        let b = assignments(&["p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z"]);
        let idx = index(&[("a.js", &a)], 20);
        assert_eq!(check(&idx, &b, Mode::Mild, 20, 1), Vec::<String>::new());
        // With real statements around them, the run is reported.
        let wrapped =
            |body: &str| format!("function init(opts) {{\n{body}  return validate(opts, 3);\n}}\n");
        let idx = index(&[("a.js", &wrapped(&a))], 20);
        assert_eq!(
            check(&idx, &wrapped(&b), Mode::Mild, 20, 1),
            ["1:1-14:2 -> a.js 1:1-14:2 (81)"]
        );
    }

    #[test]
    fn a_declaration_before_a_table_of_literals_is_not_a_duplication() {
        // Weak mode: every number is `$num`, so two different tables of
        // twenty numbers look alike but for their heads.
        let table = |name: &str, first: u32| {
            let numbers: Vec<String> = (first..first + 40).map(|n| n.to_string()).collect();
            format!("const {name} = [\n  {}\n];\n", numbers.join(",\n  "))
        };
        let idx = index(&[("a.js", &table("primes", 2))], 20);
        assert_eq!(
            check(&idx, &table("squares", 100), Mode::Weak, 20, 1),
            Vec::<String>::new()
        );
        // The same table copied is a duplication in every mode.
        let copy = table("primes", 2);
        for mode in [Mode::Strict, Mode::Mild, Mode::Weak] {
            let idx = index(&[("a.js", &copy)], 20);
            assert_eq!(
                check(&idx, &copy, mode, 20, 1),
                ["1:1-42:3 -> a.js 1:1-42:3 (85)"],
                "{mode:?}"
            );
        }
    }

    #[test]
    fn issue_9_a_table_whose_data_alone_changed_is_a_duplication_in_weak_mode() {
        // As client_golang's withAllMetrics, a list of metric names, copied
        // with every name changed: the same declaration, other data.
        let table = |name: &str, first: u32, entries: u32| {
            let numbers: Vec<String> = (first..first + entries).map(|n| n.to_string()).collect();
            format!("const {name} = [\n  {}\n];\n", numbers.join(",\n  "))
        };
        let idx = index(&[("a.js", &table("primes", 2, 40))], 20);
        assert_eq!(
            check(&idx, &table("primes", 100, 40), Mode::Weak, 20, 1),
            ["1:1-42:3 -> a.js 1:1-42:3 (85)"]
        );
        // Mild mode keeps the numbers.
        assert_eq!(
            check(&idx, &table("primes", 100, 40), Mode::Mild, 20, 1),
            Vec::<String>::new()
        );
        // One entry fewer: the table runs on past the copy on one side.
        assert_eq!(
            check(&idx, &table("primes", 100, 39), Mode::Weak, 20, 1),
            Vec::<String>::new()
        );
        // No name around the table: two lists of numbers, nothing more.
        let bare = |first: u32| {
            let numbers: Vec<String> = (first..first + 40).map(|n| n.to_string()).collect();
            format!("[\n  {}\n];\n", numbers.join(",\n  "))
        };
        let idx = index(&[("a.js", &bare(2))], 20);
        assert_eq!(
            check(&idx, &bare(100), Mode::Weak, 20, 1),
            Vec::<String>::new()
        );
    }

    #[test]
    fn project_clones_count_each_pair_once() {
        let idx = index(&[("a.js", ADD), ("b.js", ADD), ("c.js", ADD)], 10);
        let t = Thresholds {
            min_tokens: 10,
            min_lines: 4,
        };
        let (clones, capped) = project_clones(&idx, settings(Mode::Strict, t, false, None));
        let pairs: Vec<_> = clones.iter().map(|c| (c.first, c.second, c.len)).collect();
        assert_eq!(
            pairs,
            [
                ((0, 0), (1, 0), 19),
                ((0, 0), (2, 0), 19),
                ((1, 0), (2, 0), 19)
            ]
        );
        assert_eq!(capped, 0);
    }

    const RETRY: &str = "function retry(task, attempts, delay) {
  let tries = 0;
  while (tries < attempts) {
    try {
      return task(tries);
    } catch (error) {
      tries += 1;
      if (tries >= attempts) {
        throw error;
      }
      sleep(delay * tries);
    }
  }
  return null;
}
";

    #[test]
    fn a_copy_with_a_line_inserted_is_one_near_miss_clone_of_the_whole_function() {
        let edited = RETRY.replace("tries += 1;\n", "tries += 1;\n      log('retry', tries);\n");
        let idx = index(&[("a.js", RETRY), ("b.js", &edited)], 20);
        let t = Thresholds {
            min_tokens: 50,
            min_lines: 5,
        };
        // Either half is under min-tokens: no exact clone.
        assert_eq!(
            project_clones(&idx, settings(Mode::Mild, t, false, None)).0,
            []
        );
        let (clones, _) = project_clones(&idx, settings(Mode::Mild, t, false, Some(0.8)));
        assert_eq!(clones.len(), 1, "{clones:?}");
        let clone = &clones[0];
        let (a, b) = (&idx.files[0], &idx.files[1]);
        assert_eq!((clone.first, clone.second), ((0, 0), (1, 0)));
        assert_eq!(
            clone.extent(),
            (a.tokens.len() as u32, b.tokens.len() as u32)
        );
        // The inserted line's tokens are the one gap.
        let parts = clone.parts();
        assert_eq!(parts.len(), 2);
        let inserted = (b.tokens.len() - a.tokens.len()) as u32;
        assert_eq!(parts[1].0, parts[0].2);
        assert_eq!(parts[1].1, parts[0].2 + inserted);
        assert_eq!(clone.len, a.tokens.len() as u32);
        // The function is copied whole: the similarity is over the mean of
        // both sides, the inserted line costing its tokens on its side.
        let similarity = clone.similarity().unwrap();
        let mean = (a.tokens.len() + b.tokens.len()) as f64 / 2.0;
        assert!((similarity - f64::from(clone.len) / mean).abs() < 1e-9);
        // In strict mode the same, as nothing is renamed; nothing else.
        let strict = project_clones(&idx, settings(Mode::Strict, t, false, Some(0.8))).0;
        assert_eq!(strict, clones);
    }

    /// Checks `snippet` for near-miss copies in mild mode (min-tokens 50,
    /// 5 lines, similarity 0.8), each rendered as `check` renders them.
    fn check_near(index: &Index, snippet: &str) -> Vec<String> {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let tokens = tokenize(js, snippet, &Normalization::default()).unwrap();
        let t = Thresholds {
            min_tokens: 50,
            min_lines: 5,
        };
        let found = snippet_matches(
            index,
            js.family_id,
            snippet,
            &tokens,
            Mode::Mild,
            t,
            Exclusions::default(),
            Some(0.8),
            far_future(),
        );
        found
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}-{} -> {} {}-{} ({})",
                    m.snippet.start.line,
                    m.snippet.end.line,
                    index.files[m.file as usize].path,
                    m.codebase.start.line,
                    m.codebase.end.line,
                    m.run.len
                )
            })
            .collect()
    }

    /// A short function: 72 tokens.
    const CLAMP: &str = "function clamp(value, low, high) {
  if (value < low) {
    return low;
  }
  const width = high - low;
  if (value > high) {
    return high;
  }
  if (width === 0) {
    return low;
  }
  const offset = value - low;
  report(offset / width, low, high);
  return value;
}
";

    #[test]
    fn a_short_function_with_two_statements_changed_is_found_whole() {
        let idx = index(&[("a.js", CLAMP)], 20);
        // Two statements changed, renamed throughout: 61 of 70 tokens
        // matched (0.87), 52 once each changed statement's longer side is
        // taken off, which the copy, one function whole, does not pay.
        let edited = CLAMP
            .replace("const width = high - low;", "trace(high);")
            .replace("const offset = value - low;", "record(value);")
            .replace("value", "v")
            .replace("clamp", "limit");
        assert_eq!(check_near(&idx, &edited), ["1-15 -> a.js 1-15 (72)"]);
        // Not the whole snippet, but still one function whole on both sides.
        let within = format!("let started = true;\n{edited}stop(1, 2);\n");
        assert_eq!(check_near(&idx, &within), ["2-16 -> a.js 1-15 (72)"]);
    }

    #[test]
    fn short_functions_alike_in_their_guards_alone_are_no_copy() {
        // The same guards, call and return around bodies of their own: 62
        // tokens alike, one function whole, but 0.72 of the longer alike.
        let guarded = |body: &str| {
            format!(
                "function f(value, low, high) {{
  if (low > high) {{
    throw new RangeError(\"low > high\");
  }}
  if (value < low) {{
    return low;
  }}
  if (value > high) {{
    return high;
  }}
{body}
  report(value, low, high);
  return value;
}}
"
            )
        };
        let own =
            guarded("  const items = load(low).filter(Boolean);\n  cache.set(high, items.length);");
        let other = guarded("  while (queue.length > 0) {\n    handle(queue.shift(), value);\n  }");
        let idx = index(&[("a.js", &own)], 20);
        assert_eq!(check_near(&idx, &other), Vec::<String>::new());
        // The same function is found whole: the guards alone are what differs.
        assert_eq!(check_near(&idx, &own).len(), 1);
    }

    #[test]
    fn a_near_miss_clone_inside_one_file_does_not_overlap_itself() {
        let edited = RETRY.replace("tries += 1;\n", "tries += 1;\n      log('retry', tries);\n");
        let idx = index(&[("a.js", &format!("{RETRY}{edited}"))], 20);
        let t = Thresholds {
            min_tokens: 50,
            min_lines: 5,
        };
        let (clones, _) = project_clones(&idx, settings(Mode::Mild, t, false, Some(0.8)));
        assert_eq!(clones.len(), 1, "{clones:?}");
        let (first, second) = clones[0].extent();
        assert_eq!(clones[0].first, (0, 0));
        assert_eq!(clones[0].second, (0, first));
        assert_eq!(first + second, idx.files[0].tokens.len() as u32);
    }

    #[test]
    fn clones_inside_one_file_do_not_overlap() {
        let idx = index(&[("a.js", &format!("{ADD}{ADD}"))], 10);
        let t = Thresholds {
            min_tokens: 10,
            min_lines: 4,
        };
        let (clones, _) = project_clones(&idx, settings(Mode::Strict, t, false, None));
        let pairs: Vec<_> = clones.iter().map(|c| (c.first, c.second, c.len)).collect();
        assert_eq!(pairs, [((0, 0), (0, 19), 19)]);
    }

    #[test]
    fn skip_local_drops_clones_in_one_folder() {
        let idx = index(&[("s/a.js", ADD), ("s/b.js", ADD), ("t/c.js", ADD)], 10);
        let t = Thresholds {
            min_tokens: 10,
            min_lines: 4,
        };
        let (clones, _) = project_clones(&idx, settings(Mode::Strict, t, true, None));
        assert_eq!(clones.len(), 2);
    }

    #[test]
    fn no_run_crosses_suppressed_code() {
        // a.js holds two copies of ADD with suppressed code between them,
        // b.js the two copies side by side: two clones, not one of both.
        let suppressed = "// dupcheck-disable\nlet accepted = 1;\n// dupcheck-enable\n";
        let idx = index(
            &[
                ("a.js", &format!("{ADD}{suppressed}{ADD}")),
                ("b.js", &format!("{ADD}{ADD}")),
            ],
            10,
        );
        let t = Thresholds {
            min_tokens: 10,
            min_lines: 4,
        };
        let (clones, _) = project_clones(&idx, settings(Mode::Strict, t, false, None));
        let pairs: Vec<_> = clones.iter().map(|c| (c.first, c.second, c.len)).collect();
        // a.js's second copy starts after the wall (token 20), b.js's at 19;
        // without the wall a.js and b.js would be one clone of 38 tokens.
        assert_eq!(
            pairs,
            [
                ((0, 0), (0, 20), 19),
                ((0, 0), (1, 0), 19),
                ((0, 0), (1, 19), 19),
                ((0, 20), (1, 0), 19),
                ((0, 20), (1, 19), 19),
                ((1, 0), (1, 19), 19)
            ]
        );
    }

    /// A deterministic stream of pseudo-random numbers (SplitMix64).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            (crate::engine::hash::mix64(self.0) % n as u64) as usize
        }
    }

    /// Token texts by class: few of each, so that random streams share
    /// long runs in every mode.
    const ALPHABET: [(TokenClass, &[&str]); 5] = [
        (TokenClass::Other, &["(", ")", ";", "=", ","]),
        (TokenClass::Identifier, &["a", "b", "c"]),
        (TokenClass::String, &["'x'", "'y'"]),
        (TokenClass::Number, &["1", "2"]),
        (TokenClass::Literal, &["true", "null"]),
    ];

    /// A random stream of `(class, text)` token choices.
    fn random_stream(rng: &mut Rng, n: usize) -> Vec<(usize, usize)> {
        (0..n)
            .map(|_| {
                let class = rng.below(ALPHABET.len());
                (class, rng.below(ALPHABET[class].1.len()))
            })
            .collect()
    }

    /// `stream` copied with edits: a token's text changed within its class
    /// (equal in weak mode still, maybe not in strict or mild) or, rarely,
    /// replaced by one of another class.
    fn edited(rng: &mut Rng, stream: &[(usize, usize)]) -> Vec<(usize, usize)> {
        stream
            .iter()
            .map(|&(class, text)| match rng.below(40) {
                0..=3 => (class, rng.below(ALPHABET[class].1.len())),
                4 => random_stream(rng, 1)[0],
                _ => (class, text),
            })
            .collect()
    }

    /// The text of a stream (four tokens a line) and its tokens.
    fn text_and_tokens(stream: &[(usize, usize)]) -> (String, Vec<Token>) {
        let mut text = String::new();
        let mut tokens = Vec::new();
        for (i, &(class, choice)) in stream.iter().enumerate() {
            text.push(if i % 4 == 0 { '\n' } else { ' ' });
            let (class, texts) = ALPHABET[class];
            let start = text.len() as u32;
            text.push_str(texts[choice]);
            let id = crate::engine::hash::fnv1a(texts[choice].as_bytes());
            tokens.push(Token::new(id, class, start, text.len() as u32));
        }
        (text, tokens)
    }

    /// The tokens a server started in `mode` had before tokens kept their
    /// class: each identity the id in that mode, the same in every mode.
    fn tokenized_in(tokens: &[Token], mode: Mode) -> Vec<Token> {
        tokens
            .iter()
            .map(|t| Token::new(t.id_in(mode), TokenClass::Other, t.start, t.end()))
            .collect()
    }

    /// An index of `files` (text and tokens), as JavaScript.
    fn index_of(files: &[(String, Vec<Token>)], winnow: Winnow) -> Index {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let files = files
            .iter()
            .enumerate()
            .map(|(i, (text, tokens))| {
                let name = format!("f{i}.js");
                Arc::new(SourceFile::with_tokens(
                    name.clone(),
                    name,
                    js,
                    text.clone(),
                    tokens.clone(),
                    FileMeta::of(text, text.len() as u64, 0),
                ))
            })
            .collect();
        Index::build(files, &registry, winnow)
    }

    /// Every maximal run equal in `mode` between `query` and `target` of
    /// `min_len` tokens at least, by brute force.
    fn all_maximal_runs(query: &[Token], target: &[Token], mode: Mode, min_len: u32) -> Vec<Run> {
        let eq = |i: usize, j: usize| query[i].id_in(mode) == target[j].id_in(mode);
        let mut runs = Vec::new();
        for i in 0..query.len() {
            for j in 0..target.len() {
                if !eq(i, j) || (i > 0 && j > 0 && eq(i - 1, j - 1)) {
                    continue;
                }
                let len = (0..)
                    .take_while(|&k| {
                        i + k < query.len() && j + k < target.len() && eq(i + k, j + k)
                    })
                    .count() as u32;
                if len >= min_len {
                    runs.push(Run {
                        a: i as u32,
                        file: 0,
                        b: j as u32,
                        len,
                    });
                }
            }
        }
        runs
    }

    #[test]
    fn one_index_answers_every_mode_as_an_index_made_in_that_mode() {
        let t = Thresholds {
            min_tokens: 12,
            min_lines: 1,
        };
        let winnow = Winnow::for_min_tokens(t.min_tokens as usize);
        let registry = Registry::builtin();
        let family = registry.lookup("js").unwrap().family_id;
        let mut rng = Rng(12);
        let mut found = [0usize; 3];
        for round in 0..40 {
            let base = random_stream(&mut rng, 300);
            // Files: pieces of the base, edited; the query: another piece.
            let piece = |rng: &mut Rng| {
                let start = rng.below(200);
                let len = 40 + rng.below(60);
                edited(rng, &base[start..start + len])
            };
            let files: Vec<(String, Vec<Token>)> = (0..4)
                .map(|_| {
                    let mut stream = piece(&mut rng);
                    stream.extend(piece(&mut rng));
                    text_and_tokens(&stream)
                })
                .collect();
            let (code, query) = text_and_tokens(&piece(&mut rng));
            let index = index_of(&files, winnow);
            // Indexes whose fingerprints keep tags of one mode.
            let tagged =
                [Mode::Strict, Mode::Mild].map(|tags| index_of(&files, winnow.tagged(tags)));
            for (m, mode) in [Mode::Strict, Mode::Mild, Mode::Weak]
                .into_iter()
                .enumerate()
            {
                let per_mode: Vec<_> = files
                    .iter()
                    .map(|(text, tokens)| (text.clone(), tokenized_in(tokens, mode)))
                    .collect();
                let per_mode = index_of(&per_mode, winnow);
                let check = |index: &Index, query: &[Token], mode: Mode| {
                    let ex = Exclusions::default();
                    snippet_matches(index, family, &code, query, mode, t, ex, None, far_future())
                        .unwrap()
                };
                let got = check(&index, &query, mode);
                let expected = check(&per_mode, &tokenized_in(&query, mode), Mode::Strict);
                assert_eq!(got, expected, "round {round}, {mode:?}");
                // Tags skip places, never a duplication.
                for tagged in &tagged {
                    let tags = tagged.winnow.tags;
                    assert_eq!(
                        check(tagged, &query, mode),
                        got,
                        "{round} {mode:?} {tags:?}"
                    );
                    assert_eq!(
                        project_clones(tagged, settings(mode, t, false, None)),
                        project_clones(&index, settings(mode, t, false, None)),
                        "round {round}, {mode:?}, tags {tags:?}"
                    );
                }
                // Nothing is missed: every maximal run that qualifies.
                let mut brute: Vec<(u32, u32, u32, u32)> = Vec::new();
                for (f, file) in index.files.iter().enumerate() {
                    let target = file.tokens.to_vec();
                    for run in all_maximal_runs(&query, &target, mode, t.min_tokens) {
                        let a = Place::new(&code, &query, run.a, run.len);
                        if informative(a, Place::of(file, run.b, run.len), mode, t) {
                            brute.push((run.a, f as u32, run.b, run.len));
                        }
                    }
                }
                let mut runs: Vec<_> = got
                    .iter()
                    .map(|m| (m.run.a, m.run.file, m.run.b, m.run.len))
                    .collect();
                runs.sort_unstable();
                brute.sort_unstable();
                assert_eq!(runs, brute, "round {round}, {mode:?}");
                found[m] += got.iter().map(|m| m.run.len as usize).sum::<usize>();
                assert_eq!(
                    project_clones(&index, settings(mode, t, false, None)),
                    project_clones(&per_mode, settings(Mode::Strict, t, false, None)),
                    "round {round}, {mode:?}"
                );
            }
        }
        // The streams exercise each mode, and the modes differ (tokens
        // matched in all).
        assert!(
            found[0] > 0 && found[0] < found[1] && found[1] < found[2],
            "{found:?}"
        );
    }

    #[test]
    fn tags_skip_the_files_with_no_equal_kgram_and_keep_every_place_of_the_others() {
        let registry = Registry::builtin();
        let original = "function f(alpha, beta) { let gamma = alpha * beta + 1; \
                        gamma = gamma * alpha - beta; return gamma + alpha * beta; }\n";
        let renamed = original
            .replace("alpha", "one")
            .replace("beta", "two")
            .replace("gamma", "three");
        let both = format!("{original}{renamed}");
        let texts = [("b.js", renamed.as_str()), ("c.js", both.as_str())];
        let query = crate::engine::index::js_files(&registry, &[("q.js", original)]);
        let query = &query[0].tokens;
        let family = registry.lookup("js").unwrap().family_id;
        let winnow = Winnow::for_min_tokens(10);
        // The files (by name) and query positions of the weak runs found.
        let runs = |winnow: Winnow, mode: Mode| {
            let index = Index::build(
                crate::engine::index::js_files(&registry, &texts),
                &registry,
                winnow,
            );
            let fps = fingerprints(query, winnow);
            let which = (Postings::Fingerprints, mode);
            let (runs, _) = find_runs(query, &fps, &index, which, family, (None, None), |_, _| {
                true
            })
            .unwrap();
            let mut found: Vec<(String, u32, u32)> = runs
                .iter()
                .map(|r| (index.files[r.file as usize].rel.clone(), r.b, r.len))
                .collect();
            found.sort();
            found
        };
        let all = runs(winnow, Mode::Strict);
        let n = query.len() as u32;
        assert_eq!(
            all,
            [
                ("b.js".into(), 0, n),
                ("c.js".into(), 0, n),
                ("c.js".into(), n, n)
            ]
        );
        // Tagged in strict mode: b.js shares no k-gram equal in it; c.js
        // does, and its renamed copy is tried too.
        let strict = winnow.tagged(Mode::Strict);
        assert_eq!(runs(strict, Mode::Strict), all[1..]);
        // Tags in mild mode keep all in strict and mild mode; weak-mode
        // lookups ignore tags of any mode.
        assert_eq!(runs(winnow.tagged(Mode::Mild), Mode::Strict), all);
        assert_eq!(runs(winnow.tagged(Mode::Mild), Mode::Mild), all);
        assert_eq!(runs(strict, Mode::Mild), all);
        assert_eq!(runs(strict, Mode::Weak), all);
    }

    #[test]
    fn renamed_lists_identifiers_and_in_weak_mode_literals_once_in_order() {
        let registry = Registry::builtin();
        let files = crate::engine::index::js_files(
            &registry,
            &[
                ("a.js", "let total = count + 1; total = count * 2;"),
                ("b.js", "let sum = n + 1; sum = n * 3;"),
            ],
        );
        let (a, b) = (&files[0], &files[1]);
        assert_eq!(a.tokens.len(), b.tokens.len());
        let pairs = (0..a.tokens.len() as u32).map(|i| (i, i));
        let (text_a, text_b) = (a.text.get(), b.text.get());
        let said = |mode| {
            renamed(
                pairs.clone(),
                (&a.tokens, &*text_a),
                (&b.tokens, &*text_b),
                mode,
            )
        };
        let pair = |x: &str, y: &str| (x.to_owned(), y.to_owned());
        assert_eq!(said(Mode::Mild), [pair("total", "sum"), pair("count", "n")]);
        assert_eq!(
            said(Mode::Weak),
            [pair("total", "sum"), pair("count", "n"), pair("2", "3")]
        );
        // Case alone is no renaming; at most MAX_RENAMED pairs.
        let many: String = (0..30).map(|i| format!("v{i} = x{i};")).collect();
        let other: String = (0..30).map(|i| format!("w{i} = X{i};")).collect();
        let files = crate::engine::index::js_files(&registry, &[("c.js", &many), ("d.js", &other)]);
        let pairs = (0..files[0].tokens.len() as u32).map(|i| (i, i));
        let (text_c, text_d) = (files[0].text.get(), files[1].text.get());
        let (c, d) = ((&files[0].tokens, &*text_c), (&files[1].tokens, &*text_d));
        let listed = renamed(pairs, c, d, Mode::Mild);
        assert_eq!(listed.len(), MAX_RENAMED);
        assert!(listed.iter().all(|(x, _)| x.starts_with('v')), "{listed:?}");
    }
}
