//! Near-miss copies (type 3): a copy edited after it was made, found whole.
//!
//! In: a query's tokens, the [`Index`] and the mode asked for. Out:
//! [`Chain`]s, each the parts of one copy in one indexed file between its
//! edits (an inserted, deleted or changed statement), in the same order on
//! both sides.
//!
//! The parts are seeded finer than exact duplications: every common run of
//! [`SEED_TOKENS`] shares a seed ([`Postings::Seeds`]), so the halves of a
//! short function with a statement inserted in its middle are both found.
//! Each seed is verified and extended as exact runs are ([`find_runs`]),
//! then cut into the runs equal in the mode ([`split`]). Parts keep their
//! order in both streams and stay close: at most [`MAX_GAPS`] gaps, each at
//! most [`MAX_GAP_TOKENS`] tokens on either side. So a mode never finds
//! what it excludes: a copy renamed throughout has a gap at every
//! identifier in strict mode, too many to chain.
//!
//! Invariants: parts are equal in the mode, token by token (never a hash
//! alone); the parts of a chain overlap on neither side, and no part is in
//! two chains.

use std::ops::Range;
use std::time::Instant;

use crate::engine::fingerprint::Fingerprint;
use crate::engine::hash::{fnv1a, HashMap, HashSet};
use crate::engine::index::{Index, Posting, Postings, SEED_TOKENS};
use crate::engine::runs::{
    find_runs, is_repetitive, long_enough, split, table_stretch, Expired, Run,
};
use crate::engine::tokens::{Mode, PackedTokens, Token, Tokens};

/// Gaps a near-miss duplication has at most.
pub(crate) const MAX_GAPS: usize = 3;
/// Tokens a gap spans at most on either side: a few statements.
pub(crate) const MAX_GAP_TOKENS: u32 = 40;
/// The shortest part chained: shorter common runs are part of a gap.
pub(crate) const MIN_PART: u32 = 10;
/// The shortest part that starts or ends a chain at the query's first or
/// last token ([`reach_ends`]): a closing `return x; }`, not a lone `}` or
/// name that could align anywhere nearby.
const MIN_END_PART: usize = 4;
/// Shorter end parts, down to the closing `}` of a function whose last
/// statement was deleted (or that had one added), end a chain only right
/// after it on one side: across an inserted or deleted statement.
const MIN_CLOSING_PART: usize = 1;
/// Tokens of an inserted or deleted statement that cost no evidence in
/// strict and mild mode ([`trimmed`]): a log line, a short assignment.
const FREE_INSERTION: u32 = 10;
/// The least similarity ([`Chain::similarity`]) of a near-miss
/// duplication, unless `--similarity` says otherwise.
pub(crate) const DEFAULT_SIMILARITY: f64 = 0.8;
/// Parts of one indexed file chained at most (the longest are kept): a
/// query that shares that much with one file is a copy of its pieces.
const MAX_PARTS_PER_FILE: usize = 1024;

/// The parts of one near-miss copy in one indexed file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Chain {
    /// The indexed file.
    pub file: u32,
    /// Its parts, in order on both sides (`file` is this chain's).
    pub parts: Vec<Run>,
    /// Tokens its gaps still share, equal in the mode, counted as matched
    /// when it copies one unit whole in strict or mild mode ([`shared`]);
    /// 0 otherwise.
    pub shared: u32,
    /// Whether it copies one unit whole in strict or mild mode
    /// ([`copies_whole`]): its similarity is then taken over the mean of
    /// the two sides' spans ([`Chain::similarity`]).
    pub whole: bool,
}

/// What a chain leaves unmatched between two parts: token ranges of the
/// query (`a`) and of the indexed file (`b`), one of them possibly empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gap {
    /// Query tokens.
    pub a: Range<u32>,
    /// Indexed file tokens.
    pub b: Range<u32>,
}

impl Chain {
    /// Query tokens spanned, first to last part.
    pub(crate) fn a(&self) -> Range<u32> {
        self.parts[0].a..self.last().a + self.last().len
    }

    /// Indexed file tokens spanned.
    pub(crate) fn b(&self) -> Range<u32> {
        self.parts[0].b..self.last().b + self.last().len
    }

    /// Tokens matched: the parts' lengths, and what the gaps share.
    pub(crate) fn matched(&self) -> u32 {
        self.parts.iter().map(|p| p.len).sum::<u32>() + self.shared
    }

    /// Matched tokens over the tokens spanned ([`Chain::spanned_twice`]).
    pub(crate) fn similarity(&self) -> f64 {
        2.0 * f64::from(self.matched()) / f64::from(self.spanned_twice().max(1))
    }

    /// Twice the tokens the similarity divides by: those spanned on the
    /// longer side; or, when the chain copies one unit whole (`whole`) and
    /// it is less, the mean of both sides' spans, a changed statement (a
    /// gap on both sides) counted at its longer side on both. So a
    /// statement inserted or deleted in a unit copied whole costs its
    /// tokens on its own side alone, half of them in the mean (Baxter et
    /// al.'s similarity, `2S / (2S + L + R)`, ICSM 1998), and a changed one
    /// all of its longer side, as over the longer side.
    pub(crate) fn spanned_twice(&self) -> u32 {
        let (a, b) = (self.a().len() as u32, self.b().len() as u32);
        let longer = 2 * a.max(b);
        if !self.whole {
            return longer;
        }
        let padding: u32 = (self.parts.windows(2))
            .map(|w| (w[1].a - (w[0].a + w[0].len), w[1].b - (w[0].b + w[0].len)))
            .filter(|&(a, b)| a > 0 && b > 0)
            .map(|(a, b)| a.abs_diff(b))
            .sum();
        longer.min(a + b + padding)
    }

    /// The unmatched ranges between consecutive parts.
    pub(crate) fn gaps(&self) -> Vec<Gap> {
        self.parts
            .windows(2)
            .map(|w| Gap {
                a: w[0].a + w[0].len..w[1].a,
                b: w[0].b + w[0].len..w[1].b,
            })
            .collect()
    }

    fn last(&self) -> &Run {
        &self.parts[self.parts.len() - 1]
    }
}

/// Brackets, by the hash of their text: what opens a unit (a block, a
/// call, a list) and what closes it.
const OPENING: [u64; 3] = [fnv1a(b"{"), fnv1a(b"("), fnv1a(b"[")];
const CLOSING: [u64; 3] = [fnv1a(b"}"), fnv1a(b")"), fnv1a(b"]")];

/// How a token moves bracket depth: +1, -1 or 0.
fn bracket(token: Token) -> i32 {
    bracket_of(token.id_in(Mode::Strict))
}

/// How a token of identity `id` (in any mode: a bracket's is its text)
/// moves bracket depth.
fn bracket_of(id: u64) -> i32 {
    if OPENING.contains(&id) {
        1
    } else if CLOSING.contains(&id) {
        -1
    } else {
        0
    }
}

/// Brackets that `tokens` open and leave open.
fn left_open(tokens: impl Iterator<Item = Token>) -> usize {
    tokens.fold(0usize, |depth, t| match bracket(t) {
        1 => depth + 1,
        -1 => depth.saturating_sub(1),
        _ => depth,
    })
}

/// Ends a copy of a unit (a function, a block) whose last statement was
/// deleted, changed, or that had one added, at the unit's end, as a check
/// of the unit finds it ([`reach_ends`]): when right after `chain` (parts
/// of `a` and `b`, the two files' tokens) one side or both go on with at
/// most [`MAX_GAP_TOKENS`] tokens of whole statements and then both close,
/// bracket for bracket, what the chain left open on both, those closing
/// brackets become its last part, while the chain keeps [`MAX_GAPS`] and
/// `similarity`; `limit` bounds the end on the `a` side (the second place,
/// when both lie in one file).
pub(crate) fn close_end<A, B>(
    chain: &mut Chain,
    (a, b): (&A, &B),
    mode: Mode,
    similarity: f64,
    limit: usize,
) where
    A: Tokens + ?Sized,
    B: Tokens + ?Sized,
{
    if chain.parts.len() > MAX_GAPS {
        return;
    }
    let (span_a, span_b) = (chain.a(), chain.b());
    let (a_end, b_end) = (span_a.end as usize, span_b.end as usize);
    let open = left_open(a.within(span_a.start as usize..a_end))
        .min(left_open(b.within(span_b.start as usize..b_end)));
    if open == 0 {
        return;
    }
    // Closing brackets equal on both sides from `a[i]` and `b[j]` on.
    let closing = |i: usize, j: usize| {
        a.within(i.min(a.len())..a.len())
            .zip(b.within(j.min(b.len())..b.len()))
            .take(open)
            .take_while(|(x, y)| bracket(*x) == -1 && x.id_in(mode) == y.id_in(mode))
            .count()
    };
    // Where each side first closes what the chain left open: the first
    // bracket past its end that closes one it did not open, at most
    // MAX_GAP_TOKENS on; what lies before it is whole statements.
    fn first_close(tokens: &(impl Tokens + ?Sized), from: usize) -> Option<usize> {
        let mut depth = 0;
        let ahead = (from..).zip(tokens.within(from.min(tokens.len())..tokens.len()));
        for (k, t) in ahead.take(MAX_GAP_TOKENS as usize + 1) {
            depth += bracket(t);
            if depth < 0 {
                return Some(k);
            }
        }
        None
    }
    let (Some(i), Some(j)) = (first_close(a, a_end), first_close(b, b_end)) else {
        return;
    };
    let len = closing(i, j);
    if (i, j) == (a_end, b_end) || len == 0 || i + len > limit {
        return;
    }
    let mut closed = chain.clone();
    closed.parts.push(Run {
        a: i as u32,
        file: chain.file,
        b: j as u32,
        len: len as u32,
    });
    if closed.similarity() >= similarity {
        *chain = closed;
    }
}

/// The parts `query` shares with indexed files of `family`, equal in
/// `mode`, [`MIN_PART`] tokens at least: the runs of its `seeds` (the
/// query's, [`Postings::Seeds`]) and of the weak runs its fingerprints
/// found, cut for `mode`, given as `found`: those weak runs and their
/// [`pieces`](crate::engine::runs::pieces). `seeking` is the indexed file
/// the query is, if the pairs are sought from their first place, and the
/// deadline ([`find_runs`]); `keep` decides which postings to try.
#[allow(clippy::too_many_arguments)] // Each is one part of the question.
pub(crate) fn parts(
    query: &(impl Tokens + ?Sized),
    seeds: &[Fingerprint],
    index: &Index,
    family: usize,
    mode: Mode,
    (runs, pieces): (&[Run], &[Run]),
    seeking: (Option<u32>, Option<Instant>),
    keep: impl FnMut(&Fingerprint, &Posting) -> bool,
) -> Result<Vec<Run>, Expired> {
    let which = (Postings::Seeds, mode);
    let (mut weak, _) = find_runs(query, seeds, index, which, family, seeking, keep)?;
    // A maximal weak run is the same whichever print found it: those the
    // fingerprints found are cut already.
    let mut cut = runs.to_vec();
    cut.sort_unstable();
    weak.sort_unstable();
    weak.dedup();
    weak.retain(|run| cut.binary_search(run).is_err());
    let mut parts = long_enough(pieces, MIN_PART);
    for run in weak {
        let target = &index.files[run.file as usize].tokens;
        split(run, query, target, mode, MIN_PART, &mut parts);
    }
    parts.sort_unstable_by_key(|p| (p.file, p.a, p.b));
    parts.dedup();
    Ok(parts)
}

/// The chains of two parts or more among `parts` (sorted by file, then
/// query position) whose matched tokens reach `min_tokens` and whose
/// similarity reaches `similarity`, at most one chain per part. In each
/// file, the chains matching most tokens are taken first. `ids` are the
/// query's ids in the mode; `renamed(file, gap)` says whether a gap is
/// only what the mode tells apart (identifiers renamed in strict mode,
/// literals changed in mild mode): no chain crosses such a gap.
pub(crate) fn chains<'t>(
    parts: &[Run],
    ids: &[u64],
    files: Files<'_, 't>,
    min_tokens: u32,
    similarity: f64,
    renamed: impl Fn(u32, &Gap) -> bool,
) -> Vec<Chain> {
    let mut by_file: HashMap<u32, Vec<Run>> = HashMap::new();
    for part in parts {
        by_file.entry(part.file).or_default().push(*part);
    }
    let mut by_file: Vec<(u32, Vec<Run>)> = by_file.into_iter().collect();
    by_file.sort_unstable_by_key(|(file, _)| *file);
    let mut chains = Vec::new();
    for (file, mut parts) in by_file {
        if parts.len() > MAX_PARTS_PER_FILE {
            parts.sort_unstable_by_key(|p| std::cmp::Reverse(p.len));
            parts.truncate(MAX_PARTS_PER_FILE);
            parts.sort_unstable_by_key(|p| (p.a, p.b));
        }
        let renamed = |gap: &Gap| renamed(file, gap);
        let side = Side {
            ids,
            target: (files.tokens)(file),
            mode: files.mode,
            renamed: &renamed,
        };
        chains_in_file(file, &parts, &side, min_tokens, similarity, &mut chains);
    }
    chains
}

/// `chain` extended to the query's first and last tokens where a gap of at
/// most [`MAX_GAP_TOKENS`] on either side leads to a run, equal in `mode`,
/// that reaches them: a copy's short first or last statements (a closing
/// `return x; }`) are under [`MIN_PART`], but when the query ends there
/// they are the copy's ends (from [`MIN_END_PART`] tokens, from
/// [`MIN_CLOSING_PART`] at the end across a one-sided gap, or across
/// whole statements on both sides when the part is closing brackets: a
/// changed last statement). The chain keeps its [`MAX_GAPS`] and its
/// `similarity`, and crosses no gap that the side's `renamed` refuses;
/// `None` when no end is reached.
fn reach_ends(chain: &Chain, side: &Side<'_>, similarity: f64) -> Option<Chain> {
    let (ids, renamed) = (side.ids, side.renamed);
    let (n, gap) = (ids.len(), MAX_GAP_TOKENS as isize);
    // An end part lies on a diagonal `k = db - da` of the chain's end: the
    // common run along it that reaches the query's end (or start) must
    // reach back to the part's first (or last) token.
    let diagonals = || -gap..=gap;
    const DIAGONALS: usize = 2 * MAX_GAP_TOKENS as usize + 1;
    let mut candidate = chain.clone();
    // The end: a run from query[a_end + da..] to its last token.
    let (a_end, b_end) = (chain.a().end as usize, chain.b().end as usize);
    let tail = n - a_end;
    let mut to_end = [0; DIAGONALS];
    for (run, k) in to_end.iter_mut().zip(diagonals()) {
        // Just after the run's last token in the file.
        let b_last = (b_end + tail) as isize + k;
        if b_last >= 0 && b_last as usize <= side.target.len() {
            *run = side.backward(n, b_last as usize, tail);
        }
    }
    // Closing brackets alone end a copy whose last statement was changed:
    // whole statements on both sides of the gap before them. Whether the
    // first `d` tokens after the chain's end are whole statements, for
    // every `d` a gap can have, on each side.
    let whole = |moves: &mut dyn Iterator<Item = i32>| {
        let (mut depth, mut broken) = (0, false);
        let mut whole = vec![true];
        for by in moves.take(MAX_GAP_TOKENS as usize) {
            depth += by;
            broken |= depth < 0;
            whole.push(!broken && depth == 0);
        }
        whole
    };
    let target = side.target;
    // Made when an end part is too short without them, as most are not.
    let wholes = std::cell::OnceCell::new();
    let wholes = || {
        wholes.get_or_init(|| {
            let a = whole(&mut ids[a_end..].iter().map(|&id| bracket_of(id)));
            let b = whole(
                &mut target
                    .kinds_within(b_end.min(target.len())..target.len())
                    .map(bracket),
            );
            (a, b)
        })
    };
    'end: for (da, db) in end_pairs(&to_end, tail) {
        let len = tail - da;
        let (a, b) = (a_end + da, b_end + db);
        let gap = Gap {
            a: a_end as u32..a as u32,
            b: b_end as u32..b as u32,
        };
        let closes_it = || {
            let (whole_a, whole_b) = wholes();
            whole_a.get(da) == Some(&true)
                && whole_b.get(db) == Some(&true)
                && (a..a + len).all(|k| bracket_of(ids[k]) == -1)
        };
        let long_enough = len >= MIN_END_PART
            || (len >= MIN_CLOSING_PART && (da == 0 || db == 0))
            || (len >= MIN_CLOSING_PART && closes_it());
        if (da, db) != (0, 0) && long_enough && !renamed(&gap) {
            candidate.parts.push(Run {
                a: a as u32,
                file: chain.file,
                b: b as u32,
                len: len as u32,
            });
            break 'end;
        }
    }
    // The start: a run from query[0] to a_start - da.
    let (a_start, b_start) = (chain.a().start as usize, chain.b().start as usize);
    let mut from_start = [0; DIAGONALS];
    for (run, k) in from_start.iter_mut().zip(diagonals()) {
        // The run's first token in the file.
        let b_first = b_start as isize - a_start as isize - k;
        if b_first >= 0 {
            *run = side.forward(0, b_first as usize, a_start);
        }
    }
    'start: for (da, db) in end_pairs(&from_start, a_start) {
        let len = a_start - da;
        let b = b_start - db - len;
        let gap = Gap {
            a: len as u32..a_start as u32,
            b: (b + len) as u32..b_start as u32,
        };
        if (da, db) != (0, 0) && len >= MIN_END_PART && !renamed(&gap) {
            candidate.parts.insert(
                0,
                Run {
                    a: 0,
                    file: chain.file,
                    b: b as u32,
                    len: len as u32,
                },
            );
            break 'start;
        }
    }
    let reached = candidate.parts.len() != chain.parts.len();
    if !reached || candidate.parts.len() > MAX_GAPS + 1 {
        return None;
    }
    // Whether it copies a unit whole, and what the gaps share, only when
    // the parts alone fall short: `trimmed` sets both anyway.
    if candidate.similarity() < similarity {
        candidate.whole = copies_whole(&candidate, side);
        if candidate.similarity() < similarity {
            candidate.shared = shared(&candidate, side);
        }
    }
    (candidate.similarity() >= similarity).then_some(candidate)
}

/// The gaps `(da, db)`, each at most [`MAX_GAP_TOKENS`], in order, across
/// which an end part of `tokens - da` tokens lies on a common run: the
/// run along diagonal `db - da` (`runs[db - da + MAX_GAP_TOKENS]` tokens
/// long, from the query's end or start) covers it.
fn end_pairs(runs: &[usize], tokens: usize) -> Vec<(usize, usize)> {
    if tokens == 0 {
        return Vec::new();
    }
    let gap = MAX_GAP_TOKENS as isize;
    let mut pairs: Vec<(usize, usize)> = (-gap..=gap)
        .zip(runs)
        .filter(|&(_, &run)| run > 0)
        .flat_map(|(k, &run)| {
            let first = tokens.saturating_sub(run).max((-k).max(0) as usize);
            let last = (gap.min(gap - k) as usize).min(tokens - 1);
            (first..=last).map(move |da| (da, (da as isize + k) as usize))
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

/// The indexed files' tokens, and the mode their ids are taken in.
#[derive(Clone, Copy)]
pub(crate) struct Files<'f, 't> {
    /// The tokens of a file.
    pub tokens: &'f dyn Fn(u32) -> &'t PackedTokens,
    /// The mode of the check.
    pub mode: Mode,
}

/// What growing a chain in one file compares: the query's ids in the mode,
/// the file's tokens, and which gaps are only what the mode tells apart.
struct Side<'s> {
    ids: &'s [u64],
    target: &'s PackedTokens,
    mode: Mode,
    renamed: &'s dyn Fn(&Gap) -> bool,
}

/// Which way from a chain's end a search looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Direction {
    /// After its last tokens.
    Forward,
    /// Before its first tokens, nearest first.
    Backward,
}

impl Side<'_> {
    /// Tokens equal from `query[a]` and `target[b]` on, forward, at most
    /// `limit`.
    fn forward(&self, a: usize, b: usize, limit: usize) -> usize {
        let target = self.target;
        self.ids[a..]
            .iter()
            .zip(target.kinds_within(b.min(target.len())..target.len()))
            .take(limit)
            .take_while(|(id, t)| self.same(**id, *t))
            .count()
    }

    /// Tokens equal up to `query[a - 1]` and `target[b - 1]`, backward, at
    /// most `limit`.
    fn backward(&self, a: usize, b: usize, limit: usize) -> usize {
        let target = self.target;
        self.ids[..a]
            .iter()
            .rev()
            .zip(target.kinds_within(0..b.min(target.len())).rev())
            .take(limit)
            .take_while(|(id, t)| self.same(**id, *t))
            .count()
    }

    fn same(&self, id: u64, t: Token) -> bool {
        id == t.id_in(self.mode) && !t.is_wall()
    }

    /// Whether `query[a]` and `target[b]` are equal (false past either end).
    fn same_at(&self, a: usize, b: usize) -> bool {
        match self.ids.get(a) {
            Some(&id) if b < self.target.len() => self.same(id, self.target.kind_at(b)),
            _ => false,
        }
    }

    /// The equal pairs of two windows of at most `len` (≤ 64) tokens, the
    /// query's from `a` and the target's from `b` (before them, nearest
    /// first, `Backward`): bit `j` of the `i`th mask is set when the `i`th
    /// query token equals the `j`th target token.
    fn equal_pairs(&self, a: usize, b: usize, len: usize, direction: Direction) -> Pairs {
        debug_assert!(len <= 64);
        // Where the `j`th item of a window from `at` is among `n`: forward,
        // or before it, nearest first.
        fn nth(n: usize, at: usize, j: usize, direction: Direction) -> Option<usize> {
            match direction {
                Direction::Forward => Some(at + j).filter(|&i| i < n),
                Direction::Backward => at.min(n).checked_sub(j + 1),
            }
        }
        // The target window's ids with the positions each is at, in a
        // small open-addressed table; a wall equals nothing.
        let mut table = [(0u64, 0u64); 128];
        let slot = |id: u64| (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize;
        for j in 0..len {
            let Some(t) = nth(self.target.len(), b, j, direction).map(|i| self.target.kind_at(i))
            else {
                break;
            };
            if t.is_wall() {
                continue;
            }
            let id = t.id_in(self.mode);
            let mut i = slot(id);
            while table[i].1 != 0 && table[i].0 != id {
                i = (i + 1) % table.len();
            }
            table[i] = (id, table[i].1 | 1 << j);
        }
        let positions = |id: u64| {
            let mut i = slot(id);
            loop {
                match table[i] {
                    (_, 0) => return 0,
                    (at, mask) if at == id => return mask,
                    _ => i = (i + 1) % table.len(),
                }
            }
        };
        let mut pairs = Pairs {
            masks: [0; 64],
            len: 0,
        };
        while pairs.len < len {
            let Some(id) = nth(self.ids.len(), a, pairs.len, direction).map(|i| self.ids[i]) else {
                break;
            };
            pairs.masks[pairs.len] = positions(id);
            pairs.len += 1;
        }
        pairs
    }
}

/// The equal pairs of two windows ([`Side::equal_pairs`]).
struct Pairs {
    masks: [u64; 64],
    len: usize,
}

impl std::ops::Deref for Pairs {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        &self.masks[..self.len]
    }
}

/// For each query token `i` of `pairs`, the target tokens `j` from which
/// `len` pairs or more are equal along the diagonal (`pairs[i + d]` has
/// bit `j + d` for every `d < len`), by doubling: runs of 2 pairs from
/// pairs, of 4 from runs of 2, and so on, joined as `len`'s bits say.
fn runs_from(pairs: &[u64], len: usize) -> [u64; 64] {
    let n = pairs.len();
    // Bit `j` of `level[i + shift]`, moved to bit `j - shift`.
    let shifted = |level: &[u64; 64], i: usize, shift: usize| {
        if i + shift < n {
            level[i + shift] >> shift
        } else {
            0
        }
    };
    // Starts of runs of `width` pairs, and of the first `covered` of `len`.
    let (mut level, mut width) = ([0u64; 64], 1);
    level[..n].copy_from_slice(pairs);
    let (mut runs, mut covered) = ([0u64; 64], 0);
    runs[..n].fill(u64::MAX);
    let mut rest = len;
    while rest > 0 {
        if rest & 1 == 1 {
            for (i, run) in runs.iter_mut().enumerate().take(n) {
                *run &= shifted(&level, i, covered);
            }
            covered += width;
        }
        rest >>= 1;
        if rest > 0 {
            let mut doubled = [0u64; 64];
            for (i, d) in doubled.iter_mut().enumerate().take(n) {
                *d = level[i] & shifted(&level, i, width);
            }
            (level, width) = (doubled, width * 2);
        }
    }
    runs
}

/// The positions of the set bits of `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let bit = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            bit
        })
    })
}

/// Grows `chain` at both ends with the longest common runs of
/// [`MIN_PART`] tokens or more that start within [`MAX_GAP_TOKENS`] of it
/// on both sides, while it has fewer than [`MAX_GAPS`] gaps: the parts of a
/// copy whose seeds are too common to look up ([`SEED_CAP`]) are found
/// from their neighbour.
///
/// [`SEED_CAP`]: crate::engine::runs::SEED_CAP
/// `next` remembers the part found next to each end (by the chain's
/// first or last token on both sides, and the direction): chains that end
/// at one part grow alike.
fn grow(chain: &mut Chain, side: &Side<'_>, next: &mut HashMap<End, Option<Run>>) {
    for direction in [Direction::Forward, Direction::Backward] {
        while chain.parts.len() <= MAX_GAPS {
            let (a, b) = (chain.a(), chain.b());
            let end = match direction {
                Direction::Forward => (a.end, b.end, direction),
                Direction::Backward => (a.start, b.start, direction),
            };
            let found = *next
                .entry(end)
                .or_insert_with(|| next_part(chain.file, side, end));
            let Some(part) = found else {
                break;
            };
            let gap = match direction {
                Direction::Forward => Gap {
                    a: a.end..part.a,
                    b: b.end..part.b,
                },
                Direction::Backward => Gap {
                    a: part.a + part.len..a.start,
                    b: part.b + part.len..b.start,
                },
            };
            if (side.renamed)(&gap) {
                break;
            }
            match direction {
                Direction::Forward => chain.parts.push(part),
                Direction::Backward => chain.parts.insert(0, part),
            }
        }
    }
}

/// The longest common run of [`MIN_PART`] tokens or more next to `chain`
/// in `direction`: one that starts after its end (or ends before its
/// start) by at most [`MAX_GAP_TOKENS`] on both sides, but not on neither.
/// Of runs as long, the nearest in the query, then in the file.
fn next_part(file: u32, side: &Side<'_>, (a0, b0, direction): End) -> Option<Run> {
    let reach = MAX_GAP_TOKENS as usize;
    let last = MIN_PART as usize - 1;
    let (a0, b0) = (a0 as usize, b0 as usize);
    // Windows as long as the farthest run start and its MIN_PART tokens.
    let pairs = side.equal_pairs(a0, b0, reach + 1 + last, direction);
    let in_reach = (1u64 << (reach + 1)) - 1;
    let long = runs_from(&pairs, MIN_PART as usize);
    let mut best: Option<(usize, usize, usize)> = None;
    for da in 0..pairs.len().min(reach + 1) {
        // Only runs that start at the pair: one that starts a pair before
        // is longer, and a candidate too, unless that pair is the one
        // right at the chain (which no run may touch).
        let mut continued = if da > 0 { pairs[da - 1] << 1 } else { 0 };
        if da == 1 {
            continued &= !0b10;
        }
        let mut starts = long[da] & !continued & in_reach;
        if da == 0 {
            starts &= !1;
        }
        for db in bits(starts) {
            // Longer than the best so far only if equal that far.
            let longer = best.is_none_or(|(_, _, l)| match direction {
                Direction::Forward => side.same_at(a0 + da + l, b0 + db + l),
                Direction::Backward => {
                    a0 - da > l && b0 - db > l && side.same_at(a0 - da - l - 1, b0 - db - l - 1)
                }
            });
            if !longer {
                continue;
            }
            let len = match direction {
                Direction::Forward => side.forward(a0 + da, b0 + db, usize::MAX),
                Direction::Backward => side.backward(a0 - da, b0 - db, usize::MAX),
            };
            if best.is_none_or(|(_, _, l)| len > l) {
                best = Some((da, db, len));
            }
        }
    }
    let (da, db, len) = best?;
    let (a, b) = match direction {
        Direction::Forward => (a0 + da, b0 + db),
        Direction::Backward => (a0 - da - len, b0 - db - len),
    };
    Some(Run {
        a: a as u32,
        file,
        b: b as u32,
        len: len as u32,
    })
}

/// One end of a chain: the query token and the file token just after it
/// (`Forward`) or its first ones (`Backward`), and which way it grows.
type End = (u32, u32, Direction);

/// The best chain ending at a part with a given number of gaps.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Best {
    /// Matched tokens.
    matched: u32,
    /// Fewer unmatched tokens rank higher.
    closeness: std::cmp::Reverse<u32>,
    /// The part before, with its gaps.
    previous: Option<(usize, usize)>,
}

/// Appends the chains of one file's `parts` (sorted by query position).
fn chains_in_file(
    file: u32,
    parts: &[Run],
    side: &Side<'_>,
    min_tokens: u32,
    similarity: f64,
    out: &mut Vec<Chain>,
) {
    let renamed = side.renamed;
    let n = parts.len();
    // best[i][g]: the chain ending at part i with g gaps.
    let mut best: Vec<[Option<Best>; MAX_GAPS + 1]> = vec![[None; MAX_GAPS + 1]; n];
    // Parts by where they end in the query: a part's predecessors end at
    // most MAX_GAP_TOKENS before it starts (and start before it, so their
    // chains are known when it comes).
    let mut by_end: Vec<(u32, usize)> = parts.iter().map(|p| p.a + p.len).zip(0..).collect();
    by_end.sort_unstable();
    for i in 0..n {
        let p = parts[i];
        best[i][0] = Some(Best {
            matched: p.len,
            closeness: std::cmp::Reverse(0),
            previous: None,
        });
        let from = by_end.partition_point(|&(end, _)| end < p.a.saturating_sub(MAX_GAP_TOKENS));
        let to = by_end.partition_point(|&(end, _)| end <= p.a);
        for &(_, j) in &by_end[from..to] {
            let q = parts[j];
            let (a_end, b_end) = (q.a + q.len, q.b + q.len);
            if a_end > p.a || b_end > p.b {
                continue;
            }
            let (gap_a, gap_b) = (p.a - a_end, p.b - b_end);
            if gap_a > MAX_GAP_TOKENS || gap_b > MAX_GAP_TOKENS {
                continue;
            }
            if renamed(&Gap {
                a: a_end..p.a,
                b: b_end..p.b,
            }) {
                continue;
            }
            for g in 0..MAX_GAPS {
                let Some(before) = best[j][g] else { continue };
                let candidate = Best {
                    matched: before.matched + p.len,
                    closeness: std::cmp::Reverse(before.closeness.0 + gap_a.max(gap_b)),
                    previous: Some((j, g)),
                };
                if best[i][g + 1].is_none_or(|b| candidate > b) {
                    best[i][g + 1] = Some(candidate);
                }
            }
        }
    }
    // Chains of two parts or more, and single parts long enough to grow
    // from; the most matched tokens first.
    let mut ends: Vec<(Best, usize, usize)> = (0..n)
        .flat_map(|i| (0..=MAX_GAPS).map(move |g| (i, g)))
        .filter_map(|(i, g)| best[i][g].map(|b| (b, i, g)))
        .filter(|(b, _, g)| *g > 0 || b.matched >= SEED_TOKENS as u32)
        .collect();
    ends.sort_unstable_by_key(|end| std::cmp::Reverse(end.0));
    let mut used = vec![false; n];
    let mut next = HashMap::new();
    // The parts of the grown chains that came to nothing: chains that grow
    // alike (as those ending at one part do) fare alike.
    let mut failed: HashSet<Vec<Run>> = HashSet::default();
    for (_, i, g) in ends {
        let mut indices = vec![i];
        let mut at = (i, g);
        while let Some(previous) = best[at.0][at.1].and_then(|b| b.previous) {
            indices.push(previous.0);
            at = previous;
        }
        if indices.iter().any(|&k| used[k]) {
            continue;
        }
        indices.reverse();
        let mut chain = Chain {
            file,
            parts: indices.iter().map(|&k| parts[k]).collect(),
            shared: 0,
            whole: false,
        };
        grow(&mut chain, side, &mut next);
        if failed.contains(&chain.parts) {
            continue;
        }
        let grown = chain.parts.clone();
        // An end reached across a changed statement costs that statement's
        // tokens: a copy left under min-tokens by it is found without it.
        let reached = reach_ends(&chain, side, similarity)
            .and_then(|reached| trimmed(reached, side, min_tokens, similarity));
        let Some(chain) = reached.or_else(|| trimmed(chain, side, min_tokens, similarity)) else {
            failed.insert(grown);
            continue;
        };
        // Parts inside the chain are its own, found again.
        let (a, b) = (chain.a(), chain.b());
        let first = parts.partition_point(|p| p.a < a.start);
        for (k, part) in parts.iter().enumerate().skip(first) {
            if part.a >= a.end {
                break;
            }
            if b.contains(&part.b) {
                used[k] = true;
            }
        }
        out.push(chain);
    }
}

/// `chain`, its end parts dropped while its similarity is under
/// `similarity` (the one whose loss raises it most first), if two parts or
/// more are left that meet `min_tokens` (without their tables of literals
/// beyond the first entry, and less the tokens of changed statements but
/// in a unit copied whole in strict and mild mode, whose gaps' shared
/// tokens count as matched) and `similarity` and are not one short unit
/// repeated.
fn trimmed(mut chain: Chain, side: &Side<'_>, min_tokens: u32, similarity: f64) -> Option<Chain> {
    let (ids, mode) = (side.ids, side.mode);
    let file = chain.file;
    let similarity_of = |parts: &[Run]| {
        Chain {
            file,
            parts: parts.to_vec(),
            shared: 0,
            whole: false,
        }
        .similarity()
    };
    assess(&mut chain, side);
    while chain.parts.len() >= 2 && chain.similarity() < similarity {
        let n = chain.parts.len();
        if similarity_of(&chain.parts[1..]) > similarity_of(&chain.parts[..n - 1]) {
            chain.parts.remove(0);
        } else {
            chain.parts.pop();
        }
        assess(&mut chain, side);
    }
    if chain.parts.len() < 2 || chain.similarity() < similarity {
        return None;
    }
    // An edit costs evidence: the tokens a gap leaves unmatched (the
    // longer side's) are taken off the tokens matched. A short statement
    // inserted or deleted (a gap on one side only, the other side's parts
    // adjacent) is free but in weak mode, whose tokens say less: there,
    // lists of `Assert.AreEqual($lit, $id.$id)` with a line between are
    // alike in any two test suites.
    let free = if mode == Mode::Weak {
        0
    } else {
        FREE_INSERTION
    };
    // A chain that copies one unit whole ([`copies_whole`]) has its edits
    // inside what it copies: its matched tokens, what its gaps still share
    // included ([`shared`]), are the evidence, and `similarity` alone
    // bounds what the edits take; but in weak mode, for the same reason as
    // above.
    let whole = chain.whole;
    let changed: u32 = chain
        .gaps()
        .iter()
        .map(|g| {
            let longer = g.a.len().max(g.b.len()) as u32;
            if whole {
                0
            } else if !g.a.is_empty() && !g.b.is_empty() {
                longer
            } else {
                longer.saturating_sub(free)
            }
        })
        .sum();
    let evidence = chain.matched().saturating_sub(changed);
    if evidence < min_tokens {
        return None;
    }
    let ids_of = |p: &Run| &ids[p.a as usize..(p.a + p.len) as usize];
    // As for exact runs, a table of literals counts its first entry only
    // (in weak mode every number table is like every other).
    let tables: u32 = chain
        .parts
        .iter()
        .map(|p| table_stretch(ids_of(p)).len() as u32)
        .sum();
    let matched_ids: Vec<u64> = chain.parts.iter().flat_map(ids_of).copied().collect();
    (evidence.saturating_sub(tables) >= min_tokens && !is_repetitive(&matched_ids)).then_some(chain)
}

/// Gap tokens compared at most on either side by [`gap_shared`]: a gap
/// longer (none of a chain's is, [`MAX_GAP_TOKENS`]) has its first this
/// many compared, so that a gap costs at most this squared.
const MAX_SHARED_SPAN: usize = 64;
/// The shortest common run of a gap that [`gap_shared`] counts: a token
/// alike alone (a `(`, a `return`) is what any two statements share.
const MIN_SHARED_RUN: usize = 4;

/// Whether `chain` copies one unit whole in strict or mild mode: it
/// [`encloses`] one on both sides, or it spans the whole query. Then its
/// edits are inside what it copies.
fn copies_whole(chain: &Chain, side: &Side<'_>) -> bool {
    side.mode != Mode::Weak && (chain.a() == (0..side.ids.len() as u32) || encloses(chain, side))
}

/// Sets whether `chain` copies one unit whole ([`copies_whole`]) and what
/// its gaps still share ([`shared`]).
fn assess(chain: &mut Chain, side: &Side<'_>) {
    chain.whole = copies_whole(chain, side);
    chain.shared = shared(chain, side);
}

/// What `chain`'s gaps still share ([`gap_shared`]) when it copies one
/// unit whole ([`copies_whole`]); 0 otherwise. The short pieces between
/// adjacent edits (under [`MIN_PART`], no part of their own) and what a
/// changed statement kept are then its evidence too; but not in weak mode,
/// where any two statements share most of their tokens.
fn shared(chain: &Chain, side: &Side<'_>) -> u32 {
    if chain.parts.len() < 2 || !copies_whole(chain, side) {
        return 0;
    }
    chain.gaps().iter().map(|gap| gap_shared(gap, side)).sum()
}

/// The tokens the two sides of `gap` share, equal in the mode, in order,
/// in common runs of [`MIN_SHARED_RUN`] tokens or more: the most an
/// alignment of such runs covers, over at most the first
/// [`MAX_SHARED_SPAN`] tokens of each side.
fn gap_shared(gap: &Gap, side: &Side<'_>) -> u32 {
    const N: usize = MAX_SHARED_SPAN + 1;
    let bounded = |range: &Range<u32>, len: usize| {
        let start = (range.start as usize).min(len);
        start
            ..(range.end as usize)
                .clamp(start, len)
                .min(start + MAX_SHARED_SPAN)
    };
    let a = &side.ids[bounded(&gap.a, side.ids.len())];
    let b: Vec<Token> = side
        .target
        .kinds_within(bounded(&gap.b, side.target.len()))
        .collect();
    let k = MIN_SHARED_RUN;
    // A statement inserted or deleted: nothing on one side.
    if a.len() < k || b.len() < k {
        return 0;
    }
    // For the first `i` tokens of `a` and `j` of `b`: `run`, the common
    // run ending at both; `best`, the most tokens covered; `ending`, the
    // most covered by an alignment whose last run ends there (0: none).
    let mut run = [[0u8; N]; N];
    let mut best = [[0u8; N]; N];
    let mut ending = [[0u8; N]; N];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            if side.same(a[i - 1], b[j - 1]) {
                run[i][j] = run[i - 1][j - 1] + 1;
            }
            if usize::from(run[i][j]) >= k {
                // The run from `k` back, or one ending a token before.
                let fresh = best[i - k][j - k] + k as u8;
                let longer = match ending[i - 1][j - 1] {
                    0 => 0,
                    e => e + 1,
                };
                ending[i][j] = fresh.max(longer);
            }
            best[i][j] = best[i - 1][j].max(best[i][j - 1]).max(ending[i][j]);
        }
    }
    u32::from(best[a.len()][b.len()])
}

/// Whether `chain` spans one unit whole on both sides: a function or a
/// block from its header to its closing bracket, every gap inside it. Its
/// tokens are balanced, and the bracket its last token closes opens in its
/// first part and stays open to the end.
fn encloses(chain: &Chain, side: &Side<'_>) -> bool {
    // Bracket moves of one side's span, whose first part is `first` long.
    fn one(moves: impl ExactSizeIterator<Item = i32>, first: usize) -> bool {
        let n = moves.len();
        let mut depth = 0;
        for (k, by) in moves.enumerate() {
            depth += by;
            let ok = if k + 1 == n {
                by == -1 && depth == 0
            } else {
                depth >= i32::from(k + 1 >= first)
            };
            if !ok {
                return false;
            }
        }
        n > 0
    }
    let (a, b) = (chain.a(), chain.b());
    let first = chain.parts[0].len as usize;
    let (a, b) = (
        a.start as usize..a.end as usize,
        b.start as usize..b.end as usize,
    );
    if b.end > side.target.len() {
        return false;
    }
    let Some(a) = side.ids.get(a) else {
        return false;
    };
    one(a.iter().map(|&id| bracket_of(id)), first)
        && one(side.target.kinds_within(b).map(bracket), first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(a: u32, b: u32, len: u32) -> Run {
        Run { a, file: 0, b, len }
    }

    /// Files without tokens: nothing to grow into.
    const NO_FILES: Files<'static, 'static> = Files {
        tokens: &|_| {
            static NONE: std::sync::OnceLock<PackedTokens> = std::sync::OnceLock::new();
            NONE.get_or_init(PackedTokens::default)
        },
        mode: Mode::Mild,
    };

    fn none(_: u32, _: &Gap) -> bool {
        false
    }

    /// The chains of `parts` in mild mode, min-tokens 50, similarity 0.8.
    fn chains_of(parts: &[Run], ids: &[u64]) -> Vec<Chain> {
        chains(parts, ids, NO_FILES, 50, 0.8, none)
    }

    fn distinct(n: u64) -> Vec<u64> {
        (0..n).map(|i| i * 7919 + 13).collect()
    }

    #[test]
    fn runs_from_finds_the_starts_of_every_run_that_long() {
        // Masks of a few pseudo-random densities, checked against the
        // definition: bit j of pairs[i + d] for every d < len.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0, 1, 9, 10, 33, 50, 64] {
            let pairs: Vec<u64> = (0..n).map(|_| next() | next() | next()).collect();
            for len in [1, 2, 3, 7, 10, 16] {
                let runs = runs_from(&pairs, len);
                for (i, &got) in runs.iter().enumerate() {
                    let want = (0..64)
                        .filter(|&j| {
                            (0..len).all(|d| {
                                i + d < n && j + d < 64 && pairs[i + d] >> (j + d) & 1 == 1
                            })
                        })
                        .fold(0u64, |m, j| m | 1 << j);
                    assert_eq!(got, want, "n {n}, len {len}, i {i}");
                }
            }
        }
    }

    #[test]
    fn parts_around_an_inserted_and_a_deleted_statement_make_one_chain() {
        // Query 0..30 = file 0..30; a statement of 8 tokens inserted in the
        // query; 30..60 = file 30..60; 6 tokens of the file deleted.
        let parts = [run(0, 0, 30), run(38, 30, 30), run(68, 66, 25)];
        let chains = chains_of(&parts, &distinct(100));
        assert_eq!(chains.len(), 1);
        let chain = &chains[0];
        assert_eq!(chain.parts, parts);
        assert_eq!(chain.a(), 0..93);
        assert_eq!(chain.b(), 0..91);
        assert_eq!(chain.matched(), 85);
        assert!((chain.similarity() - 85.0 / 93.0).abs() < 1e-9);
        assert_eq!(
            chain.gaps(),
            [
                Gap {
                    a: 30..38,
                    b: 30..30
                },
                Gap {
                    a: 68..68,
                    b: 60..66
                }
            ]
        );
    }

    #[test]
    fn too_few_matched_tokens_too_far_apart_or_out_of_order_make_no_chain() {
        let ids = distinct(400);
        // Matched tokens under min-tokens.
        assert!(chains_of(&[run(0, 0, 20), run(25, 20, 20)], &ids).is_empty());
        // A gap longer than MAX_GAP_TOKENS.
        let far = MAX_GAP_TOKENS + 1;
        assert!(chains_of(&[run(0, 0, 40), run(40 + far, 40, 40)], &ids).is_empty());
        // Out of order in the file.
        assert!(chains_of(&[run(0, 100, 40), run(45, 0, 40)], &ids).is_empty());
        // Overlapping in the file.
        assert!(chains_of(&[run(0, 0, 40), run(45, 30, 40)], &ids).is_empty());
    }

    #[test]
    fn a_changed_statement_costs_its_tokens_a_short_inserted_one_nothing_but_in_weak_mode() {
        let ids = distinct(200);
        // 54 tokens matched around 8 inserted in the query: a duplication,
        // but in weak mode, where the 8 are taken off.
        let inserted = [run(0, 0, 27), run(35, 27, 27)];
        assert_eq!(chains_of(&inserted, &ids).len(), 1);
        let weak = Files {
            mode: Mode::Weak,
            ..NO_FILES
        };
        assert!(chains(&inserted, &ids, weak, 50, 0.8, none).is_empty());
        // Beyond FREE_INSERTION tokens, an insertion costs the rest: 54
        // matched around 16 inserted leave 48.
        let long_insertion = [run(0, 0, 27), run(43, 27, 27)];
        assert!(chains(&long_insertion, &ids, NO_FILES, 50, 0.75, none).is_empty());
        // The same parts around 8 tokens changed on both sides: 54 - 8 is
        // under min-tokens.
        let changed = [run(0, 0, 27), run(35, 35, 27)];
        assert!(chains_of(&changed, &ids).is_empty());
        // With 8 more tokens matched, the change is paid for.
        let longer = [run(0, 0, 31), run(39, 39, 31)];
        assert_eq!(chains_of(&longer, &ids).len(), 1);
    }

    #[test]
    fn scattered_one_token_gaps_beyond_max_gaps_are_no_chain_but_a_part_of_one() {
        // Identifiers renamed throughout (strict mode): a part of 12 between
        // each, eight parts; only MAX_GAPS + 1 parts can chain.
        let parts: Vec<Run> = (0..8).map(|i| run(i * 13, i * 13, 12)).collect();
        let chains = chains_of(&parts, &distinct(200));
        assert!(chains.iter().all(|c| c.parts.len() <= MAX_GAPS + 1));
        // 4 × 12 = 48 matched tokens: under min-tokens.
        assert!(chains.is_empty());
    }

    #[test]
    fn low_similarity_ends_are_dropped_and_repetition_is_no_chain() {
        let ids = distinct(200);
        // A far small part at the end would bring similarity under 0.8.
        let parts = [run(0, 0, 40), run(42, 42, 40), run(120, 120, 10)];
        let chains = chains_of(&parts, &ids);
        assert_eq!(chains.len(), 1);
        assert_eq!(chains[0].parts, parts[..2]);
        // One unit of 2 tokens repeated is no duplication.
        let repeated: Vec<u64> = (0..200).map(|i| i % 2).collect();
        assert!(chains_of(&parts[..2], &repeated).is_empty());
    }

    #[test]
    fn no_chain_crosses_a_gap_the_mode_tells_apart() {
        // Two parts either side of one renamed identifier: in strict mode
        // the gap is a rename, which the mode excludes.
        let parts = [run(0, 0, 30), run(31, 31, 30)];
        let renamed = |_: u32, gap: &Gap| gap.a.len() == 1 && gap.b.len() == 1;
        assert!(chains(&parts, &distinct(100), NO_FILES, 50, 0.8, renamed).is_empty());
        assert_eq!(chains_of(&parts, &distinct(100)).len(), 1);
    }

    #[test]
    fn a_part_is_in_one_chain_at_most() {
        // The same query part matches two places of one file.
        let parts = [
            run(0, 0, 30),
            run(0, 100, 30),
            run(35, 35, 30),
            run(35, 135, 30),
        ];
        let mut chains = chains_of(&parts, &distinct(100));
        chains.sort_unstable_by_key(|c| c.parts[0].b);
        assert_eq!(chains.len(), 2);
        assert_eq!(chains[0].parts, [parts[0], parts[2]]);
        assert_eq!(chains[1].parts, [parts[1], parts[3]]);
    }

    #[test]
    fn a_chain_encloses_a_unit_when_it_spans_it_from_its_header_to_its_closing_bracket() {
        let registry = crate::engine::grammar::Registry::builtin();
        let code = "function f(a) {\n  first(a);\n  second(a);\n}\nlater(a);\n";
        let files = crate::engine::index::js_files(&registry, &[("a.js", code)]);
        let tokens = &files[0].tokens;
        let ids: Vec<u64> = tokens.each().map(|t| t.id_in(Mode::Mild)).collect();
        let side = Side {
            ids: &ids,
            target: tokens,
            mode: Mode::Mild,
            renamed: &|_| false,
        };
        // `function f ( a ) {` 6, two calls of 5, `}` 1, `later ( a ) ;` 5.
        let encloses = |parts: &[Run]| {
            let chain = Chain {
                file: 0,
                parts: parts.to_vec(),
                shared: 0,
                whole: false,
            };
            super::encloses(&chain, &side)
        };
        // The function whole, a gap at each call.
        assert!(encloses(&[run(0, 0, 7), run(9, 9, 3), run(14, 14, 3)]));
        // Not to its closing bracket, or past it.
        assert!(!encloses(&[run(0, 0, 7), run(9, 9, 3), run(14, 14, 2)]));
        assert!(!encloses(&[run(0, 0, 7), run(14, 14, 8)]));
        // From inside the function: its first part opens nothing.
        assert!(!encloses(&[run(6, 6, 3), run(11, 11, 6)]));
    }

    /// The common runs of [`MIN_PART`] tokens or more of `query` and
    /// `target`, equal in `mode`, each as long as it goes (what `parts`
    /// finds through the index).
    fn common_parts(query: &[Token], target: &[Token], mode: Mode) -> Vec<Run> {
        let same = |i: usize, j: usize| {
            query[i].id_in(mode) == target[j].id_in(mode) && !target[j].is_wall()
        };
        let mut parts = Vec::new();
        for i in 0..query.len() {
            for j in 0..target.len() {
                if !same(i, j) || (i > 0 && j > 0 && same(i - 1, j - 1)) {
                    continue;
                }
                let len = (0..)
                    .take_while(|&d| {
                        i + d < query.len() && j + d < target.len() && same(i + d, j + d)
                    })
                    .count();
                if len >= MIN_PART as usize {
                    parts.push(run(i as u32, j as u32, len as u32));
                }
            }
        }
        parts
    }

    /// A function and its copy with two statements changed around a
    /// statement of 5 tokens, `log(sum);`: 81 tokens, and 84.
    const ADJACENT_ORIGINAL: &str = "function total(items, start) {
  let sum = start;
  let count = 0;
  for (const item of items) {
    sum = sum + item.price * item.count;
    count = count + item.count;
  }
  const mean = sum / count;
  audit.push(mean);
  log(sum);
  audit.push(count);
  return [sum, mean];
}
";
    const ADJACENT_COPY: &str = "function total(items, start) {
  let sum = start;
  let count = 0;
  for (const item of items) {
    sum = sum + item.price * item.count;
    count = count + item.count;
  }
  const mean = sum / count;
  if (mean > 9) return;
  log(sum);
  while (count < 0) count++;
  return [sum, mean];
}
";

    /// The chains of the copy in the original, in `mode`.
    fn adjacent_chains(mode: Mode) -> Vec<Chain> {
        chains_of_copy(ADJACENT_COPY, ADJACENT_ORIGINAL, mode)
    }

    /// The chains of `copy` in `original` (JavaScript), in `mode`.
    fn chains_of_copy(copy: &str, original: &str, mode: Mode) -> Vec<Chain> {
        let registry = crate::engine::grammar::Registry::builtin();
        let files = crate::engine::index::js_files(
            &registry,
            &[("copy.js", copy), ("original.js", original)],
        );
        let (query, target) = (&files[0].tokens, &files[1].tokens);
        let ids: Vec<u64> = query.each().map(|t| t.id_in(mode)).collect();
        let (q, t): (Vec<Token>, Vec<Token>) = (query.each().collect(), target.each().collect());
        let parts = common_parts(&q, &t, mode);
        let files = Files {
            tokens: &|_| target,
            mode,
        };
        chains(&parts, &ids, files, 50, 0.8, none)
    }

    /// `ADJACENT_ORIGINAL` with its three lines after `const mean` (19
    /// tokens) deleted, or changed into `with`.
    fn edited_after_mean(with: &str) -> String {
        let lines: Vec<&str> = ADJACENT_ORIGINAL.lines().collect();
        let mut copy: Vec<&str> = lines[..8].to_vec();
        copy.extend(with.lines());
        copy.extend(&lines[11..]);
        copy.join("\n") + "\n"
    }

    #[test]
    fn a_unit_copied_whole_with_statements_deleted_costs_them_on_its_own_side_alone() {
        // 62 matched over 81 and 62 spanned: 0.77 of the longer side, 0.87
        // of the mean, the chain from `function` to the closing `}`.
        let copy = edited_after_mean("");
        let chains = chains_of_copy(&copy, ADJACENT_ORIGINAL, Mode::Mild);
        assert_eq!(chains.len(), 1);
        let chain = &chains[0];
        assert_eq!((chain.a(), chain.b()), (0..62, 0..81));
        assert_eq!(
            chain.gaps(),
            [Gap {
                a: 54..54,
                b: 54..73
            }]
        );
        assert!(chain.whole);
        assert_eq!((chain.matched(), chain.spanned_twice()), (62, 143));
        // The same parts not known to copy a unit whole: over the longer
        // side.
        let part = Chain {
            whole: false,
            ..chain.clone()
        };
        assert_eq!(part.spanned_twice(), 162);
        assert!(part.similarity() < 0.8);
        // In weak mode no chain copies a unit whole.
        assert_eq!(chains_of_copy(&copy, ADJACENT_ORIGINAL, Mode::Weak), []);
    }

    #[test]
    fn a_changed_statement_costs_its_longer_side_on_both_in_a_unit_copied_whole() {
        // The 19 tokens changed into `while ( x ) { }`, 6: the mean of 81
        // and 68 would give 0.83, but the change counts 19 on both sides:
        // 62 matched over 81, 0.77.
        let copy = edited_after_mean("  while (x) {}");
        assert_eq!(chains_of_copy(&copy, ADJACENT_ORIGINAL, Mode::Mild), []);
        // Spanned twice: both sides' spans, each changed statement's
        // shorter side padded to its longer one; never more than twice the
        // longer side.
        let chain = |parts: Vec<Run>| Chain {
            file: 0,
            parts,
            shared: 0,
            whole: true,
        };
        let changed = chain(vec![run(0, 0, 54), run(60, 73, 8)]);
        assert_eq!(changed.spanned_twice(), 68 + 81 + 13);
        let both_ways = chain(vec![run(0, 0, 30), run(40, 35, 30), run(75, 75, 30)]);
        assert_eq!((both_ways.a(), both_ways.b()), (0..105, 0..105));
        assert_eq!(both_ways.spanned_twice(), 2 * 105);
    }

    #[test]
    fn a_copy_with_two_adjacent_edits_is_found_whole_with_what_lies_between_them() {
        // The parts: up to the first change (54 tokens) and from the `;`
        // before `return` to the end (9, reached as the query's end). The
        // 6 tokens `; log ( sum ) ;` between the changes are under
        // MIN_PART: without them, 63 of 84 tokens match (0.75); with them,
        // 69 (0.82), and the copy spans the query.
        let chains = adjacent_chains(Mode::Mild);
        assert_eq!(chains.len(), 1);
        let chain = &chains[0];
        assert_eq!(chain.parts, [run(0, 0, 54), run(75, 72, 9)]);
        assert_eq!((chain.a(), chain.b()), (0..84, 0..81));
        assert_eq!(chain.shared, 6);
        assert_eq!(chain.matched(), 69);
        assert!((chain.similarity() - 69.0 / 84.0).abs() < 1e-9);
    }

    #[test]
    fn in_weak_mode_what_the_gaps_share_is_not_counted() {
        // Any two statements are much alike in weak mode: the same copy's
        // parts alone are under the similarity.
        assert_eq!(adjacent_chains(Mode::Weak), []);
    }

    #[test]
    fn what_a_gap_shares_is_its_common_runs_of_four_tokens_or_more_and_bounded() {
        let registry = crate::engine::grammar::Registry::builtin();
        let long = "a(1);\n".repeat(2000);
        let files = crate::engine::index::js_files(
            &registry,
            &[
                ("long.js", &long),
                ("call.js", "f(a);\nlog(x, y);\n"),
                ("other.js", "g(b, c, d);\nlog(x, y);\n"),
            ],
        );
        let shared = |query: &PackedTokens, target: &PackedTokens, gap: Gap| {
            let ids: Vec<u64> = query.each().map(|t| t.id_in(Mode::Mild)).collect();
            let side = Side {
                ids: &ids,
                target,
                mode: Mode::Mild,
                renamed: &|_| false,
            };
            gap_shared(&gap, &side)
        };
        // 10 000 tokens alike on both sides: the first MAX_SHARED_SPAN
        // of each are compared; a range past the end is cut at it.
        let long = &files[0].tokens;
        assert_eq!(long.len(), 10_000);
        let whole = Gap {
            a: 0..10_000,
            b: 0..20_000,
        };
        assert_eq!(shared(long, long, whole), MAX_SHARED_SPAN as u32);
        // `f ( a ) ;` and `g ( b , c , d ) ;` share `$id ( $id` and
        // `$id ) ;` in mild mode, runs under MIN_SHARED_RUN; with the
        // next line, `a ) ; log ( x , y ) ;` and `d ) ; ...` are one run.
        let (call, other) = (&files[1].tokens, &files[2].tokens);
        let first = Gap { a: 0..5, b: 0..9 };
        assert_eq!(shared(call, other, first), 0);
        let both = Gap { a: 0..12, b: 0..16 };
        assert_eq!(shared(call, other, both), 10);
    }

    #[test]
    fn a_copy_ends_at_the_bracket_that_closes_it_across_a_deleted_or_changed_last_statement() {
        let registry = crate::engine::grammar::Registry::builtin();
        let body = "function f(a) {\n  first(a, 1);\n  second(a, 2);\n  third(a, 3);\n";
        let files = crate::engine::index::js_files(
            &registry,
            &[
                ("a.js", &format!("{body}  return a;\n}}\nnext();\n")),
                ("deleted.js", &format!("{body}}}\nnext();\n")),
                (
                    "changed.js",
                    &format!("{body}  return [a, a];\n}}\nnext();\n"),
                ),
                ("unclosed.js", &format!("{body}  return a;\nlater(a);\n")),
            ],
        );
        let a = &files[0].tokens;
        // The common part: up to the last statement, `function f ( a ) {`
        // and three calls of 7 tokens.
        let common = 6 + 3 * 7;
        let closed = |b: &PackedTokens| {
            let mut chain = Chain {
                file: 0,
                parts: vec![run(0, 0, common)],
                shared: 0,
                whole: false,
            };
            close_end(&mut chain, (a, b), Mode::Strict, 0.8, a.len());
            chain.parts
        };
        // `return a ;` is 3 tokens: the closing `}` follows it in a.js.
        let brace = common + 3;
        assert_eq!(
            closed(&files[1].tokens),
            [run(0, 0, common), run(brace, common, 1)]
        );
        // `return [ a , a ] ;` is 7 tokens: gaps on both sides.
        assert_eq!(
            closed(&files[2].tokens),
            [run(0, 0, common), run(brace, common + 7, 1)]
        );
        // No bracket closes the function in the other file: nothing added.
        assert_eq!(closed(&files[3].tokens), [run(0, 0, common)]);
    }
}
