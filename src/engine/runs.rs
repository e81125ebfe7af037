//! Runs: the maximal common runs of tokens between a query and indexed
//! files, found through shared fingerprints (or seeds) and verified token
//! by token, then cut into the runs equal in the mode asked for; and the
//! shapes of run that say nothing about copying (one short unit repeated,
//! a table of literals).
//!
//! In: a query's tokens and fingerprints, the [`Index`]. Out: [`Run`]s.
//! Both exact matching (`matching`) and near-miss chaining (`near_miss`)
//! are built on these; neither is needed here.
//!
//! Invariant: a run is never reported on a hash alone (identities are
//! compared), so collisions cannot make false matches; each maximal run is
//! found once however many fingerprints of it are looked up.

use std::time::Instant;

use crate::engine::fingerprint::Fingerprint;
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::index::{tag_at, Index, Posting, Postings};
use crate::engine::tokens::{Mode, Token, Tokens, ABSTRACT_LITERALS, TABLE_SEPARATORS};

pub(crate) use crate::engine::index::{POSTING_CAP, SEED_CAP};

/// Matching ran past its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expired;

/// Postings tried between two looks at the clock.
const POSTINGS_PER_CLOCK_CHECK: usize = 256;

/// A maximal common run of tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Run {
    /// First token in the query.
    pub a: u32,
    /// The indexed file.
    pub file: u32,
    /// First token in that file.
    pub b: u32,
    /// Tokens in the run.
    pub len: u32,
}

/// All maximal runs equal in weak mode between `query` and indexed files of
/// `family`, seeded by `fps` (the query's fingerprints, or its seeds, as
/// `which` says), skipping those with more than [`POSTING_CAP`] postings
/// ([`SEED_CAP`] for seeds); with the count of those ([`split`] cuts them
/// for another mode). When `first` is the indexed file the query is (each
/// pair of places sought from its first place), only postings after the
/// query's own place are tried; of those, `keep` decides. Where the
/// postings keep tags that serve `mode` (the mode the runs are wanted in),
/// a place whose k-gram's tag differs from the query's is not tried: the
/// two are not equal in `mode` there, and every run equal in `mode` of
/// min-tokens holds a fingerprint equal in it (docs/matching.md, "Tags").
/// Fails once past `deadline`, if any.
#[allow(clippy::too_many_arguments)] // Each is one part of the question.
pub(crate) fn find_runs(
    query: &(impl Tokens + ?Sized),
    fps: &[Fingerprint],
    index: &Index,
    (which, mode): (Postings, Mode),
    family: usize,
    (first, deadline): (Option<u32>, Option<Instant>),
    mut keep: impl FnMut(&Fingerprint, &Posting) -> bool,
) -> Result<(Vec<Run>, usize), Expired> {
    let cap = match which {
        Postings::Fingerprints => POSTING_CAP,
        Postings::Seeds => SEED_CAP,
    };
    let mut runs = Vec::new();
    let mut capped = 0;
    let mut tried = 0usize;
    // End of the last run found per (file, diagonal): fingerprints come in
    // increasing query position, so one inside it belongs to that run.
    let mut covered: HashMap<(u32, i64), u32> = HashMap::new();
    // Each fingerprint's postings to try (those after the query's own
    // place when it is an indexed file), with the tag of the query's
    // k-gram where the table's tags serve `mode`.
    let tags_serve = index.winnow.tags_serve(mode);
    let mut lookups = Vec::with_capacity(fps.len());
    for fp in fps {
        let postings = index.lookup_in(which, family, fp.hash);
        if postings.len() > cap {
            capped += 1;
            continue;
        }
        let postings = match first {
            Some(file) => postings.after(file, fp.pos),
            None => postings,
        };
        if postings.len() == 0 {
            continue;
        }
        let tag = (tags_serve && postings.tagged()).then(|| tag_at(query, fp.pos, index.winnow));
        lookups.push((fp, postings, tag));
    }
    // The files that share a k-gram equal in the tags' mode with the
    // query: all of their places are tried, as the parts of a near-miss
    // copy may lie on diagonals none of whose k-grams are equal; the
    // places of other files only where the tags agree.
    let mut met: HashSet<u32> = HashSet::new();
    for (fp, postings, tag) in &lookups {
        if let Some(tag) = *tag {
            for posting in *postings {
                if posting.tag == tag && !met.contains(&posting.file) && keep(fp, &posting) {
                    met.insert(posting.file);
                }
            }
        }
    }
    for (fp, postings, tag) in lookups {
        for posting in postings {
            let differs = tag.is_some_and(|tag| tag != posting.tag);
            if differs && !met.contains(&posting.file) || !keep(fp, &posting) {
                continue;
            }
            tried += 1;
            if tried.is_multiple_of(POSTINGS_PER_CLOCK_CHECK)
                && deadline.is_some_and(|d| Instant::now() >= d)
            {
                return Err(Expired);
            }
            let diagonal = (posting.file, i64::from(posting.pos) - i64::from(fp.pos));
            if covered.get(&diagonal).is_some_and(|&end| fp.pos < end) {
                continue;
            }
            let target = &index.files[posting.file as usize].tokens;
            if let Some(run) = extend(query, target, fp.pos, posting.pos) {
                covered.insert(diagonal, run.a + run.len);
                runs.push(Run {
                    file: posting.file,
                    ..run
                });
            }
        }
    }
    Ok((runs, capped))
}

/// The maximal run of equal weak identities through `query[a]` and
/// `target[b]`, or `None` if those tokens differ (a hash collision). A
/// [`WALL`](crate::engine::tokens::WALL) equals nothing: no run crosses
/// suppressed code.
fn extend<Q, T>(query: &Q, target: &T, a: u32, b: u32) -> Option<Run>
where
    Q: Tokens + ?Sized,
    T: Tokens + ?Sized,
{
    let (a, b) = (a as usize, b as usize);
    let equal = |(x, y): &(Token, Token)| x.weak_id() == y.weak_id() && !x.is_wall();
    if a >= query.len() || b >= target.len() || !equal(&(query.at(a), target.at(b))) {
        return None;
    }
    let back = query
        .kinds_within(0..a)
        .rev()
        .zip(target.kinds_within(0..b).rev())
        .take_while(equal)
        .count();
    let forward = query
        .kinds_within(a..query.len())
        .zip(target.kinds_within(b..target.len()))
        .take_while(equal)
        .count();
    Some(Run {
        a: (a - back) as u32,
        file: 0,
        b: (b - back) as u32,
        len: (back + forward) as u32,
    })
}

/// Appends to `out` the maximal runs equal in `mode` inside `run` (a run
/// equal in weak mode between `query` and `target`) that have `min_len`
/// tokens at least: the stretches where the two sides' ids in `mode` agree.
/// A run equal in weak mode is itself the one run of weak mode.
pub(crate) fn split<Q, T>(
    run: Run,
    query: &Q,
    target: &T,
    mode: Mode,
    min_len: u32,
    out: &mut Vec<Run>,
) where
    Q: Tokens + ?Sized,
    T: Tokens + ?Sized,
{
    if mode == Mode::Weak {
        if run.len >= min_len {
            out.push(run);
        }
        return;
    }
    let (a, b) = (run.a as usize, run.b as usize);
    let equal = |i: usize| query.at(a + i).id_in(mode) == target.at(b + i).id_in(mode);
    let (n, m) = (run.len as usize, min_len.max(1) as usize);
    // No stretch before `from` is left to find, and `from` follows a
    // difference (or is 0). A stretch of `m` tokens or more that starts in
    // `from..from + m` holds its last token `from + m - 1`: where that one
    // differs, none starts there, and the next `m` tokens are skipped
    // having compared one.
    let mut from = 0;
    while from + m <= n {
        let probe = from + m - 1;
        if !equal(probe) {
            from = probe + 1;
            continue;
        }
        let start = (from..probe)
            .rev()
            .find(|&i| !equal(i))
            .map_or(from, |i| i + 1);
        let end = (probe + 1..n).find(|&i| !equal(i)).unwrap_or(n);
        if end - start >= m {
            out.push(Run {
                a: run.a + start as u32,
                b: run.b + start as u32,
                len: (end - start) as u32,
                ..run
            });
        }
        from = end + 1;
    }
}

/// The runs equal in `mode` of `min_len` tokens at least inside
/// `weak_runs` (runs equal in weak mode between `query` and indexed files),
/// in the order of `weak_runs`. Cut once at the shortest length asked
/// ([`near_miss::MIN_PART`](crate::engine::near_miss::MIN_PART) when
/// near-miss copies are), the pieces serve both the exact runs (those of
/// min-tokens, [`long_enough`]) and the parts of near-miss copies.
pub(crate) fn pieces(
    weak_runs: &[Run],
    query: &(impl Tokens + ?Sized),
    index: &Index,
    mode: Mode,
    min_len: u32,
) -> Vec<Run> {
    let mut out = Vec::with_capacity(weak_runs.len());
    for run in weak_runs {
        let target = &index.files[run.file as usize].tokens;
        split(*run, query, target, mode, min_len, &mut out);
    }
    out
}

/// Those of `pieces` with `min_len` tokens at least, in order.
pub(crate) fn long_enough(pieces: &[Run], min_len: u32) -> Vec<Run> {
    pieces
        .iter()
        .filter(|p| p.len >= min_len)
        .copied()
        .collect()
}

/// Longest unit whose repetition makes a run [repetitive](is_repetitive).
pub(crate) const MAX_PERIOD: usize = 16;

/// Whether a run (its ids in its mode) is one short unit of at most
/// [`MAX_PERIOD`] tokens repeated (`self.a = a` eleven times, in mild mode
/// `self . $id = $id` × 11). Such runs are not reported: any two lists of
/// trivial statements share them, at every shift of the unit, so they say
/// nothing about copying.
pub(crate) fn is_repetitive(run: &[u64]) -> bool {
    (1..=MAX_PERIOD.min(run.len() / 3)).any(|p| (p..run.len()).all(|i| run[i] == run[i - p]))
}

/// Entries from which a list of literals is a table: fewer (the four
/// numbers of a colour) are part of ordinary code.
pub(crate) const TABLE_ENTRIES: usize = 8;

/// The longest stretch of `run` (its ids in its mode) that repeats a unit
/// of abstract literals and separators before it (a unit of at most
/// [`MAX_PERIOD`] tokens, such as `$num ,` or `{ $str , $num } ,` in weak
/// mode), [`TABLE_ENTRIES`] entries in all at least, as a range of `run`:
/// what a table of literals adds beyond its first entry. Empty when there
/// is none (always, in the modes that keep literals).
pub(crate) fn table_stretch(run: &[u64]) -> std::ops::Range<usize> {
    let mut longest = 0..0;
    for period in 1..=MAX_PERIOD.min(run.len() / 3) {
        let mut stretch = 0;
        for i in period..run.len() {
            if run[i] != run[i - period] {
                stretch = 0;
                continue;
            }
            stretch += 1;
            if stretch >= (TABLE_ENTRIES - 1) * period && stretch > longest.len() {
                let start = i + 1 - stretch;
                if table_entry(&run[start - period..start]) {
                    longest = start..i + 1;
                }
            }
        }
    }
    longest
}

/// Whether `unit` (ids) is one entry of a table: abstract literals and
/// separators only, one literal at least.
fn table_entry(unit: &[u64]) -> bool {
    unit.iter().any(is_abstract_literal) && unit.iter().all(is_table_token)
}

/// Whether `id` is a literal as weak mode abstracts it (`$str`, `$num`,
/// `$lit`).
pub(crate) fn is_abstract_literal(id: &u64) -> bool {
    ABSTRACT_LITERALS.contains(id)
}

/// Whether `id` may stand in a table's entries: an abstract literal or a
/// separator.
pub(crate) fn is_table_token(id: &u64) -> bool {
    is_abstract_literal(id) || TABLE_SEPARATORS.contains(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tokens::TokenClass;

    /// `split` as a plain walk over every token: the stretches of equal
    /// ids in `mode`, `min_len` long at least.
    fn split_by_walking(q: &[Token], t: &[Token], mode: Mode, min_len: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut start = 0;
        for i in 0..=q.len() {
            if i < q.len() && q[i].id_in(mode) == t[i].id_in(mode) {
                continue;
            }
            let len = (i - start) as u32;
            if len > 0 && len >= min_len {
                out.push((start as u32, len));
            }
            start = i + 1;
        }
        out
    }

    #[test]
    fn split_skips_ahead_and_finds_what_a_walk_over_every_token_finds() {
        // Two sides equal in weak mode (identifiers on both), whose texts
        // differ where a pseudo-random draw says, at several densities.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut draw = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..400 {
            let len = draw(120) as usize;
            let differ_one_in = 1 + round % 12;
            let token = |text: u64, i: usize| {
                Token::new(text, TokenClass::Identifier, i as u32 * 4, i as u32 * 4 + 3)
            };
            let (mut q, mut t) = (Vec::new(), Vec::new());
            for i in 0..len {
                let text = draw(1000);
                q.push(token(text, i));
                let other = if draw(differ_one_in) == 0 {
                    text + 1
                } else {
                    text
                };
                t.push(token(other, i));
            }
            let run = Run {
                a: 0,
                file: 3,
                b: 0,
                len: len as u32,
            };
            for mode in [Mode::Strict, Mode::Mild] {
                for min_len in [0, 1, 2, 5, 10, 50] {
                    let mut out = Vec::new();
                    split(run, &q, &t, mode, min_len, &mut out);
                    let got: Vec<(u32, u32)> = out.iter().map(|r| (r.a, r.len)).collect();
                    assert_eq!(
                        got,
                        split_by_walking(&q, &t, mode, min_len),
                        "{round} {min_len}"
                    );
                    assert!(out.iter().all(|r| r.file == 3 && r.a == r.b));
                }
            }
        }
    }

    #[test]
    fn repetition_needs_three_units_of_at_most_max_period() {
        assert!(is_repetitive(&[1, 2, 1, 2, 1, 2]));
        assert!(!is_repetitive(&[1, 2, 1, 2, 1]));
        assert!(!is_repetitive(&[1, 2, 3, 1, 2, 3, 1, 2, 4]));
        let long_unit: Vec<u64> = (0..17).chain(0..17).chain(0..17).collect();
        assert!(!is_repetitive(&long_unit));

        let lit = ABSTRACT_LITERALS[1];
        let comma = TABLE_SEPARATORS[0];
        // A head, then `$num ,` repeated: the entries after the first.
        let table: Vec<u64> = [1, 2, 3]
            .into_iter()
            .chain([lit, comma].repeat(10))
            .collect();
        assert_eq!(table_stretch(&table), 5..23);
        // Statements repeated are not a table.
        let statements: Vec<u64> = [1, 2, 3].into_iter().chain([7, 8].repeat(10)).collect();
        assert!(table_stretch(&statements).is_empty());
        // Seven entries are not a table yet; eight are.
        assert!(table_stretch(&[lit, comma].repeat(7)).is_empty());
        assert_eq!(table_stretch(&[lit, comma].repeat(8)), 2..16);
    }
}
