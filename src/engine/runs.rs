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
use crate::engine::hash::HashMap;
use crate::engine::index::{Index, Posting, Postings};
use crate::engine::tokens::{Mode, Token, Tokens, ABSTRACT_LITERALS, TABLE_SEPARATORS};

/// Fingerprints occurring in more places than this are skipped by
/// whole-project detection (docs/matching.md, "Clones in the project") and by snippet checks: such code
/// (license headers, generated tables, one statement repeated) would cost
/// quadratic time, and every run it is part of has other fingerprints.
pub(crate) const POSTING_CAP: usize = 1000;

/// Seeds occurring in more places than this are skipped by near-miss
/// detection: a seed is short, so one that common is boilerplate, and a
/// copy has other seeds.
pub(crate) const SEED_CAP: usize = 30;

/// Matching ran past its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expired;

/// Postings tried between two looks at the clock.
const POSTINGS_PER_CLOCK_CHECK: usize = 256;

/// A maximal common run of tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
/// for another mode). `keep` decides which postings to try. Fails once past
/// `deadline`, if any.
#[allow(clippy::too_many_arguments)] // Each is one part of the question.
pub(crate) fn find_runs(
    query: &(impl Tokens + ?Sized),
    fps: &[Fingerprint],
    index: &Index,
    which: Postings,
    family: usize,
    deadline: Option<Instant>,
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
    for fp in fps {
        let postings = index.lookup_in(which, family, fp.hash);
        if postings.len() > cap {
            capped += 1;
            continue;
        }
        for posting in postings {
            if !keep(fp, &posting) {
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
        .within(0..a)
        .rev()
        .zip(target.within(0..b).rev())
        .take_while(equal)
        .count();
    let forward = query
        .within(a..query.len())
        .zip(target.within(b..target.len()))
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
    let q = query.within(run.a as usize..(run.a + run.len) as usize);
    let t = target.within(run.b as usize..(run.b + run.len) as usize);
    // The stretch from `start` to `end` (a token that differs, or the end).
    let mut stretch = |start: u32, end: u32| {
        let len = end - start;
        if len > 0 && len >= min_len {
            out.push(Run {
                a: run.a + start,
                b: run.b + start,
                len,
                ..run
            });
        }
    };
    let mut start = 0;
    for (i, (x, y)) in (0..run.len).zip(q.zip(t)) {
        if x.id_in(mode) != y.id_in(mode) {
            stretch(start, i);
            start = i + 1;
        }
    }
    stretch(start, run.len);
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
