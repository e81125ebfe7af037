//! Whole-project clones: every file looked up in the index, once per
//! snapshot ([`project_clones`]), and brought up to date after an update
//! from the clones of the index before it ([`updated_clones`]), looking up
//! only the files the update changed and the files that share code with
//! them.
//!
//! In: an [`Index`] (and, for an update, the index before it and its
//! clones) and the [`CloneSettings`] asked for. Out: [`ClonePair`]s, sorted.
//!
//! Invariant: an update's clones are exactly those [`project_clones`] finds
//! in the new index. What is found between two files depends only on their
//! tokens and on which of the hashes they share are over the posting caps;
//! so the clones between two files the update kept are kept, unless a hash
//! they share crossed a cap, and then both files are looked up again.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::engine::fingerprint::{Fingerprint, Winnow};
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::index::{fingerprints, folder_of, Index, Posting, Postings, SEED_TOKENS};
use crate::engine::matching::{
    informative, near_copies, without_deadline, NearQuery, Place, Thresholds,
};
use crate::engine::near_miss;
use crate::engine::runs::{find_runs, long_enough, pieces, Run, POSTING_CAP, SEED_CAP};
use crate::engine::tokens::{Mode, Token, Tokens};

/// What whole-project detection is asked for: the settings a clone list
/// depends on besides the files.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CloneSettings {
    /// The mode clones are equal in.
    pub mode: Mode,
    /// Tokens and lines a clone needs on both sides.
    pub thresholds: Thresholds,
    /// Whether clones within one folder are left out.
    pub skip_local: bool,
    /// With near-miss copies: their least similarity.
    pub similarity: Option<f64>,
}

/// A clone inside the project: two places with the same tokens, or, of a
/// near-miss clone, the same parts in the same order with small gaps.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ClonePair {
    /// The place that comes first (by file, then position): its file and
    /// first token.
    pub first: (u32, u32),
    /// The other place.
    pub second: (u32, u32),
    /// Tokens matched: those of each place of an exact clone.
    pub len: u32,
    /// A near-miss clone's parts (`a` in the first place's file, `b` in
    /// the second's); `None` for an exact clone.
    pub near: Option<Box<near_miss::Chain>>,
}

impl ClonePair {
    /// An exact clone: `len` tokens equal from each place on.
    pub(crate) fn exact(first: (u32, u32), second: (u32, u32), len: u32) -> ClonePair {
        ClonePair {
            first,
            second,
            len,
            near: None,
        }
    }

    /// The same clone between the same places of files now numbered
    /// `first` and `second`.
    fn renumbered(&self, first: u32, second: u32) -> ClonePair {
        let near = self.near.as_ref().map(|chain| {
            let mut chain = chain.clone();
            chain.file = second;
            for part in &mut chain.parts {
                part.file = second;
            }
            chain
        });
        ClonePair {
            first: (first, self.first.1),
            second: (second, self.second.1),
            len: self.len,
            near,
        }
    }

    /// Tokens spanned by the first and by the second place.
    pub(crate) fn extent(&self) -> (u32, u32) {
        self.near.as_ref().map_or((self.len, self.len), |chain| {
            (chain.a().len() as u32, chain.b().len() as u32)
        })
    }

    /// The matched runs, in order: each as its first token in the first
    /// place's file, in the second's, and its length.
    pub(crate) fn parts(&self) -> Vec<(u32, u32, u32)> {
        match &self.near {
            None => vec![(self.first.1, self.second.1, self.len)],
            Some(chain) => chain.parts.iter().map(|p| (p.a, p.b, p.len)).collect(),
        }
    }

    /// Matched tokens over the tokens spanned ([`near_miss::Chain::similarity`]),
    /// of a near-miss clone.
    pub(crate) fn similarity(&self) -> Option<f64> {
        self.near.as_ref().map(|chain| chain.similarity())
    }
}

/// Whole-project detection (docs/matching.md, "Clones in the project"):
/// every maximal run equal in the mode between two different locations
/// meeting both thresholds on both sides, once per unordered pair, and with
/// a similarity every near-miss copy too, as a snippet check finds them.
/// Returns the clones, sorted, and how many fingerprint lookups were
/// skipped by [`POSTING_CAP`].
pub(crate) fn project_clones(index: &Index, settings: CloneSettings) -> (Vec<ClonePair>, usize) {
    project_clones_counted(index, settings, &AtomicUsize::new(0))
}

/// [`project_clones`], counting in `done` the files looked up so far (a
/// progress to show while detection runs).
pub(crate) fn project_clones_counted(
    index: &Index,
    settings: CloneSettings,
    done: &AtomicUsize,
) -> (Vec<ClonePair>, usize) {
    // Only what occurs elsewhere can be found elsewhere (read here, once,
    // not from inside the tasks below).
    index.repeated();
    let per_file: Vec<(Vec<ClonePair>, usize)> = (0..index.files.len() as u32)
        .into_par_iter()
        .with_max_len(1)
        .map(|fa| {
            let (fingerprints, seeds, capped) = index.repeated_prints(fa);
            // Each unordered pair is found from its first location only.
            let keep = |fp: &Fingerprint, p: &Posting| (p.file, p.pos) > (fa, fp.pos);
            let (found, also_capped) =
                file_clones(index, fa, (&fingerprints, &seeds), settings, keep);
            done.fetch_add(1, Ordering::Relaxed);
            (found, capped + also_capped)
        })
        .collect();
    let capped = per_file.iter().map(|(_, c)| c).sum();
    let mut clones: Vec<ClonePair> = per_file.into_iter().flat_map(|(c, _)| c).collect();
    one_per_place(&mut clones);
    (clones, capped)
}

/// The clones that file `fa` finds through `prints` (its fingerprints and
/// seeds, in position order: all of them, or a part that holds every one
/// shared with the files `keep` lets through), as the first place of each;
/// and the lookups the posting cap skipped. `keep` decides which postings
/// to try.
fn file_clones(
    index: &Index,
    fa: u32,
    (fingerprints, seeds): (&[Fingerprint], &[Fingerprint]),
    settings: CloneSettings,
    keep: impl Fn(&Fingerprint, &Posting) -> bool + Copy,
) -> (Vec<ClonePair>, usize) {
    let CloneSettings {
        mode,
        thresholds,
        skip_local,
        similarity,
    } = settings;
    let file = &index.files[fa as usize];
    // Read once here, the file's tokens are compared with each place's
    // without a look into its table of kinds on this side.
    let tokens: Vec<Token> = file.tokens.each().collect();
    let found = find_runs(
        &tokens[..],
        fingerprints,
        index,
        (Postings::Fingerprints, mode),
        file.family,
        (Some(fa), None),
        keep,
    );
    let (weak_runs, capped) = without_deadline(found);
    let cut_at = similarity.map_or(thresholds.min_tokens, |_| {
        near_miss::MIN_PART.min(thresholds.min_tokens)
    });
    let pieces = pieces(&weak_runs, &tokens[..], index, mode, cut_at);
    let mut runs = long_enough(&pieces, thresholds.min_tokens);
    let chains = match similarity {
        Some(similarity) => {
            let query = NearQuery {
                tokens: &tokens[..],
                seeds,
                family: file.family,
                mode,
                min_tokens: thresholds.min_tokens,
                similarity,
                first: Some(fa),
            };
            without_deadline(near_copies(
                index,
                &query,
                (&weak_runs, &pieces),
                &mut runs,
                None,
                keep,
            ))
        }
        None => Vec::new(),
    };
    let exact = runs.into_iter().filter_map(|run| {
        let mut len = run.len;
        if run.file == fa {
            // Two places of one file must not overlap.
            len = len.min(run.b.saturating_sub(run.a));
        }
        let clone = ClonePair::exact((fa, run.a), (run.file, run.b), len);
        (clone.first < clone.second && qualifies(index, &clone, mode, thresholds)).then_some(clone)
    });
    let near = chains.into_iter().filter_map(|chain| {
        let (a, b) = (chain.a(), chain.b());
        let clone = ClonePair {
            first: (fa, a.start),
            second: (chain.file, b.start),
            len: chain.matched(),
            near: Some(Box::new(chain)),
        };
        let apart = clone.first.0 != clone.second.0 || a.end <= b.start;
        (apart && clone.first < clone.second && spans_min_lines(index, &clone, thresholds))
            .then_some(clone)
    });
    let clones = exact
        .chain(near)
        .filter(|c| {
            !skip_local
                || folder_of(&index.files[c.first.0 as usize].rel)
                    != folder_of(&index.files[c.second.0 as usize].rel)
        })
        .map(|c| match similarity {
            Some(similarity) => closed(index, c, mode, similarity),
            None => c,
        })
        .collect();
    (clones, capped)
}

/// `clone`, ended at the end of the unit it copies when its copy's last
/// statement was deleted or one was added ([`near_miss::close_end`]): then
/// a near-miss clone, whatever it was.
fn closed(index: &Index, clone: ClonePair, mode: Mode, similarity: f64) -> ClonePair {
    let (fa, fb) = (clone.first.0, clone.second.0);
    let mut chain = match &clone.near {
        Some(chain) => (**chain).clone(),
        None => near_miss::Chain {
            file: fb,
            parts: vec![Run {
                a: clone.first.1,
                file: fb,
                b: clone.second.1,
                len: clone.len,
            }],
            shared: 0,
            whole: false,
        },
    };
    let parts = chain.parts.len();
    let (a, b) = (
        &index.files[fa as usize].tokens,
        &index.files[fb as usize].tokens,
    );
    // Within one file, the first place must end before the second starts.
    let limit = if fa == fb {
        clone.second.1 as usize
    } else {
        a.len()
    };
    near_miss::close_end(&mut chain, (a, b), mode, similarity, limit);
    if chain.parts.len() == parts {
        return clone;
    }
    ClonePair {
        len: chain.matched(),
        near: Some(Box::new(chain)),
        ..clone
    }
}

/// The clones of `new`, an index built on `old` (its unchanged files the
/// same `Arc`s), from `found`, the clones of `old` with the same settings
/// (and the lookups its posting cap skipped): the clones between files
/// that neither changed nor share a hash that crossed a posting cap are
/// kept, renumbered; the changed files and those are looked up again, and
/// every other file only for what it shares with them. `None` when the two
/// indexes were winnowed differently: then only [`project_clones`] tells.
pub(crate) fn updated_clones(
    old: &Index,
    found: &(Vec<ClonePair>, usize),
    new: &Index,
    settings: CloneSettings,
) -> Option<(Vec<ClonePair>, usize)> {
    if old.winnow != new.winnow {
        return None;
    }
    let moved = new.moved_from(old);
    let mut shared = vec![false; new.files.len()];
    for &id in moved.iter().filter(|&&id| id != u32::MAX) {
        shared[id as usize] = true;
    }
    let gone = (0..old.files.len() as u32).filter(|&id| moved[id as usize] == u32::MAX);
    let fresh = (0..new.files.len() as u32).filter(|&id| !shared[id as usize]);
    // The hashes whose postings the update changed: those of the files it
    // took out and of the files it put in.
    let mut changed = Changed::new(new.winnow, settings.similarity.is_some());
    for id in gone {
        changed.add(old, id);
    }
    let fresh: Vec<u32> = fresh.collect();
    for &id in &fresh {
        changed.add(new, id);
    }
    let capped = changed.capped(old, new, found.1);
    // Looked up again: the files put in, and every file holding a hash
    // that crossed a cap (what two files find through it changed).
    let mut dirty = vec![false; new.files.len()];
    for &id in &fresh {
        dirty[id as usize] = true;
    }
    for (which, family, hash) in changed.crossed(old, new) {
        for posting in new.lookup_in(which, family, hash) {
            dirty[posting.file as usize] = true;
        }
    }
    let clean = |old_id: u32| {
        let id = moved[old_id as usize];
        (id != u32::MAX && !dirty[id as usize]).then_some(id)
    };
    let mut clones: Vec<ClonePair> = found
        .0
        .iter()
        .filter_map(|clone| Some(clone.renumbered(clean(clone.first.0)?, clean(clone.second.0)?)))
        .collect();
    let dirty_ids: Vec<u32> = (0..new.files.len() as u32)
        .filter(|&id| dirty[id as usize])
        .collect();
    let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
    let near = settings.similarity.is_some();
    // Each looked-up file's fingerprints and seeds (made once), and its
    // clones as their first place.
    let prints: Vec<Prints> = dirty_ids
        .par_iter()
        .map(|&id| {
            let tokens = &new.files[id as usize].tokens;
            let seeds = match near {
                true => fingerprints(tokens, seed_winnow),
                false => Vec::new(),
            };
            (fingerprints(tokens, new.winnow), seeds)
        })
        .collect();
    let firsts: Vec<Vec<ClonePair>> = dirty_ids
        .par_iter()
        .zip(&prints)
        .with_max_len(1)
        .map(|(&fa, (fingerprints, seeds))| {
            let keep = |fp: &Fingerprint, p: &Posting| (p.file, p.pos) > (fa, fp.pos);
            file_clones(new, fa, (fingerprints, seeds), settings, keep).0
        })
        .collect();
    // The clones whose second place is in a looked-up file and whose first
    // is in another: found by that other file through the hashes the two
    // share, which the looked-up file's postings tell.
    let mut others: HashMap<u32, Prints> = HashMap::new();
    for (&id, (fingerprints, seeds)) in dirty_ids.iter().zip(&prints) {
        let family = new.files[id as usize].family;
        let lists = [
            (Postings::Fingerprints, fingerprints, POSTING_CAP),
            (Postings::Seeds, seeds, SEED_CAP),
        ];
        for (which, prints, cap) in lists {
            for print in prints {
                let postings = new.lookup_in(which, family, print.hash);
                if postings.len() > cap {
                    continue;
                }
                for p in postings.iter().filter(|p| !dirty[p.file as usize]) {
                    let entry = others.entry(p.file).or_default();
                    let list = match which {
                        Postings::Fingerprints => &mut entry.0,
                        Postings::Seeds => &mut entry.1,
                    };
                    list.push(Fingerprint::from(&p));
                }
            }
        }
    }
    let others: Vec<(u32, Prints)> = others.into_iter().collect();
    let seconds: Vec<Vec<ClonePair>> = others
        .into_par_iter()
        .with_max_len(1)
        .map(|(fa, (mut fingerprints, mut seeds))| {
            for list in [&mut fingerprints, &mut seeds] {
                list.sort_unstable_by_key(|f| (f.pos, f.hash));
                list.dedup();
            }
            let keep = |fp: &Fingerprint, p: &Posting| {
                dirty[p.file as usize] && (p.file, p.pos) > (fa, fp.pos)
            };
            file_clones(new, fa, (&fingerprints, &seeds), settings, keep).0
        })
        .collect();
    clones.extend(firsts.into_iter().flatten());
    clones.extend(seconds.into_iter().flatten());
    one_per_place(&mut clones);
    Some((clones, capped))
}

/// Sorts `clones` and keeps one of each pair of places and size (what a
/// clone's id names): two near-miss chains can join the same two places
/// with the same tokens matched through other parts (a gap one line lower
/// on one side). The one kept spans the most tokens, then has the fewest
/// parts, then comes first.
fn one_per_place(clones: &mut Vec<ClonePair>) {
    clones.sort_unstable();
    let rank = |c: &ClonePair| {
        let (a, b) = c.extent();
        let parts = c.near.as_ref().map_or(1, |chain| chain.parts.len());
        (std::cmp::Reverse(a + b), parts)
    };
    clones.dedup_by(|later, kept| {
        let same = (later.first, later.second, later.len) == (kept.first, kept.second, kept.len);
        if same && rank(later) < rank(kept) {
            std::mem::swap(later, kept);
        }
        same
    });
}

/// A file's fingerprints and seeds, or the part of them a lookup needs.
type Prints = (Vec<Fingerprint>, Vec<Fingerprint>);

/// The hashes whose postings an update changed, per table and family.
struct Changed {
    winnow: Winnow,
    /// Whether seeds count (near-miss detection looks them up).
    seeds: bool,
    hashes: HashSet<(bool, usize, u64)>,
}

impl Changed {
    fn new(winnow: Winnow, seeds: bool) -> Changed {
        Changed {
            winnow,
            seeds,
            hashes: HashSet::new(),
        }
    }

    /// The hashes of file `id` of `index`.
    fn add(&mut self, index: &Index, id: u32) {
        let file = &index.files[id as usize];
        for print in fingerprints(&file.tokens, self.winnow) {
            self.hashes.insert((false, file.family, print.hash));
        }
        if self.seeds {
            for print in fingerprints(&file.tokens, Winnow::for_min_tokens(SEED_TOKENS)) {
                self.hashes.insert((true, file.family, print.hash));
            }
        }
    }

    /// The lookups `new`'s detection skips, from `old`'s count: a hash
    /// over the cap is skipped once per posting.
    fn capped(&self, old: &Index, new: &Index, old_capped: usize) -> usize {
        let over = |index: &Index, family: usize, hash: u64| {
            let n = index.lookup_in(Postings::Fingerprints, family, hash).len();
            if n > POSTING_CAP {
                n
            } else {
                0
            }
        };
        let fingerprints = self.hashes.iter().filter(|(seed, _, _)| !seed);
        fingerprints.fold(old_capped, |capped, &(_, family, hash)| {
            capped + over(new, family, hash) - over(old, family, hash)
        })
    }

    /// The hashes that crossed their cap: over it in one index, not in the
    /// other.
    fn crossed<'a>(
        &'a self,
        old: &'a Index,
        new: &'a Index,
    ) -> impl Iterator<Item = (Postings, usize, u64)> + 'a {
        self.hashes.iter().filter_map(move |&(seed, family, hash)| {
            let (which, cap) = match seed {
                false => (Postings::Fingerprints, POSTING_CAP),
                true => (Postings::Seeds, SEED_CAP),
            };
            let over = |index: &Index| index.lookup_in(which, family, hash).len() > cap;
            (over(old) != over(new)).then_some((which, family, hash))
        })
    }
}

/// Whether an exact clone meets min-tokens, says something about copying
/// ([`informative`]) and meets min-lines on both sides.
fn qualifies(index: &Index, clone: &ClonePair, mode: Mode, t: Thresholds) -> bool {
    let place = |(f, start): (u32, u32)| Place::of(&index.files[f as usize], start, clone.len);
    clone.len >= t.min_tokens
        && informative(place(clone.first), place(clone.second), mode, t)
        && spans_min_lines(index, clone, t)
}

/// Whether both places of a clone span min-lines.
fn spans_min_lines(index: &Index, clone: &ClonePair, t: Thresholds) -> bool {
    let (first, second) = clone.extent();
    [(clone.first, first), (clone.second, second)]
        .iter()
        .all(|&((f, start), len)| {
            let file = &index.files[f as usize];
            file.token_end_line(start + len - 1) - file.token_line(start) + 1 >= t.min_lines
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::index::{js_files, SourceFile};
    use std::sync::Arc;

    /// Five functions, any of which a file may hold: the first two close
    /// copies of each other (one line inserted), so near-miss detection has
    /// something to find.
    const UNITS: [&str; 5] = [
        "function total(items) {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.count;\n  }\n  return sum;\n}\n",
        "function total(items) {\n  let sum = 0;\n  for (const item of items) {\n    log(item);\n    sum += item.price * item.count;\n  }\n  return sum;\n}\n",
        "function greet(name, greeting) {\n  const text = greeting + ', ' + name + '!';\n  console.log(text);\n  return text.length;\n}\n",
        "function clamp(value, low, high) {\n  if (value < low) {\n    return low;\n  }\n  if (value > high) {\n    return high;\n  }\n  return value;\n}\n",
        "function pick(object, keys) {\n  const out = {};\n  for (const key of keys) {\n    out[key] = object[key];\n  }\n  return out;\n}\n",
    ];

    fn settings(mode: Mode, skip_local: bool, similarity: Option<f64>) -> CloneSettings {
        settings_for(20, mode, skip_local, similarity)
    }

    fn settings_for(
        min_tokens: u32,
        mode: Mode,
        skip_local: bool,
        similarity: Option<f64>,
    ) -> CloneSettings {
        CloneSettings {
            mode,
            thresholds: Thresholds {
                min_tokens,
                min_lines: 3,
            },
            skip_local,
            similarity,
        }
    }

    /// Every setting the update must agree with detection in.
    fn every_setting() -> [CloneSettings; 4] {
        [
            settings(Mode::Strict, false, None),
            settings(Mode::Mild, false, Some(0.7)),
            settings(Mode::Weak, true, None),
            settings(Mode::Strict, true, Some(0.8)),
        ]
    }

    /// The index of `files` built on `old` (its files kept where
    /// `files` holds the same `Arc`).
    fn build(old: Option<&Index>, files: Vec<Arc<SourceFile>>) -> Index {
        build_for(20, old, files)
    }

    /// The index of `files` as a strict-mode scan makes it (tags of
    /// strict mode), built on `old`.
    fn build_for(min_tokens: u32, old: Option<&Index>, files: Vec<Arc<SourceFile>>) -> Index {
        let winnow = Winnow::for_min_tokens(min_tokens as usize).tagged(Mode::Strict);
        Index::build_on(old, files, Vec::new(), &Registry::builtin(), winnow)
    }

    /// Asserts that the clones of `old` brought up to date for `new` are
    /// those detection finds in `new`, in every setting; how many clones
    /// there are in the first.
    fn assert_same_as_detection(old: &Index, new: &Index) -> usize {
        let mut first = 0;
        for (i, settings) in every_setting().into_iter().enumerate() {
            let found = project_clones(old, settings);
            let updated = updated_clones(old, &found, new, settings).unwrap();
            let detected = project_clones(new, settings);
            assert_eq!(updated, detected, "settings {settings:?}");
            if i == 0 {
                first = detected.0.len();
            }
        }
        first
    }

    /// A small random number generator (xorshift), for repeatable edits.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// A file of a few units in random order, with a line of its own
    /// between them.
    fn random_text(rng: &mut Rng, n: usize) -> String {
        let mut text = String::new();
        for i in 0..2 + rng.below(3) {
            text.push_str(UNITS[rng.below(UNITS.len())]);
            text.push_str(&format!("const marker{n}_{i} = {n};\n"));
        }
        text
    }

    #[test]
    fn an_update_finds_the_clones_detection_finds_after_random_edits() {
        let registry = Registry::builtin();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let names: Vec<String> = (0..12).map(|i| format!("d{}/f{i}.js", i % 3)).collect();
        let texts: Vec<(String, String)> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), random_text(&mut rng, i)))
            .collect();
        let owned: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (&p[..], &t[..])).collect();
        let mut index = build(None, js_files(&registry, &owned));
        let mut total = 0;
        for round in 0..16 {
            let mut files = index.files.clone();
            match round % 4 {
                // A file put in.
                0 => {
                    let text = random_text(&mut rng, 100 + round);
                    let path = format!("d{}/new{round}.js", round % 3);
                    files.extend(js_files(&registry, &[(&path, &text)]));
                }
                // A file taken out.
                1 => {
                    files.remove(rng.below(files.len()));
                }
                // Two files changed.
                _ => {
                    for _ in 0..2 {
                        let at = rng.below(files.len());
                        let text = random_text(&mut rng, 200 + round);
                        let path = files[at].rel.clone();
                        files[at] = js_files(&registry, &[(&path, &text)]).remove(0);
                    }
                }
            }
            let new = build(Some(&index), files);
            total += assert_same_as_detection(&index, &new);
            index = new;
        }
        // The edits made and lost clones: the comparisons were not empty.
        assert!(total > 100, "{total} clones in all");
    }

    #[test]
    fn files_sharing_a_seed_that_crosses_its_cap_are_looked_up_again() {
        let registry = Registry::builtin();
        // One function in one more file than the seed cap, each copy with
        // one of five calls inserted: between copies with other calls the
        // halves are shorter than min-tokens, so only seeds find them as
        // parts of a near-miss copy; over the cap, seeds are skipped.
        let copy = |i: usize| {
            let call = format!("log(record{});", ", record".repeat(i % 5));
            format!(
                "function process(records, limit) {{\n  let count = 0;\n  const seen = new Set();\n  for (const record of records) {{\n    if (seen.has(record.id)) {{\n      continue;\n    }}\n    {call}\n    seen.add(record.id);\n    if (record.value > limit) {{\n      count += record.value * 2;\n    }} else {{\n      count -= 1;\n    }}\n  }}\n  return count;\n}}\n"
            )
        };
        let texts: Vec<(String, String)> = (0..=SEED_CAP)
            .map(|i| (format!("f{i:02}.js"), copy(i)))
            .collect();
        let owned: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (&p[..], &t[..])).collect();
        let min_tokens = 60;
        let over = build_for(min_tokens, None, js_files(&registry, &owned));
        let mut files = over.files.clone();
        files.remove(0);
        let under = build_for(min_tokens, Some(&over), files);
        let near = settings_for(min_tokens, Mode::Strict, false, Some(0.7));
        let (capped, uncapped) = (project_clones(&over, near), project_clones(&under, near));
        let chains =
            |found: &(Vec<ClonePair>, usize)| found.0.iter().filter(|c| c.near.is_some()).count();
        // What the cap changes: near-miss copies found by seeds.
        assert!(
            chains(&uncapped) > chains(&capped),
            "{} / {}",
            chains(&uncapped),
            chains(&capped)
        );
        assert_eq!(
            updated_clones(&over, &capped, &under, near).unwrap(),
            uncapped
        );
        // And back: a copy put in again.
        let mut files = under.files.clone();
        files.extend(js_files(&registry, &[(&texts[0].0, &texts[0].1)]));
        let again = build_for(min_tokens, Some(&under), files);
        assert_eq!(
            updated_clones(&under, &uncapped, &again, near),
            Some(project_clones(&again, near))
        );
    }

    #[test]
    fn an_update_with_other_winnowing_is_left_to_detection() {
        let registry = Registry::builtin();
        let files = js_files(&registry, &[("a.js", UNITS[0]), ("b.js", UNITS[0])]);
        let old = build(None, files.clone());
        let new = Index::build(files, &registry, Winnow::for_min_tokens(30));
        let settings = settings(Mode::Strict, false, None);
        let found = project_clones(&old, settings);
        assert_eq!(updated_clones(&old, &found, &new, settings), None);
    }

    #[test]
    fn two_chains_between_the_same_places_are_one_clone() {
        use crate::engine::runs::Run;
        let chain = |parts: &[(u32, u32, u32)]| {
            let parts = (parts.iter())
                .map(|&(a, b, len)| Run { a, file: 1, b, len })
                .collect();
            Some(Box::new(near_miss::Chain {
                file: 1,
                parts,
                shared: 0,
                whole: false,
            }))
        };
        // The same 40 tokens matched from the same two places, the gap on
        // the second side one token apart: the first spans more.
        let wider = ClonePair {
            near: chain(&[(10, 20, 30), (40, 52, 10)]),
            ..ClonePair::exact((0, 10), (1, 20), 40)
        };
        let narrower = ClonePair {
            near: chain(&[(10, 20, 28), (38, 49, 12)]),
            ..ClonePair::exact((0, 10), (1, 20), 40)
        };
        let elsewhere = ClonePair::exact((0, 100), (2, 5), 50);
        let mut clones = vec![narrower.clone(), elsewhere.clone(), wider.clone()];
        one_per_place(&mut clones);
        assert_eq!(clones, [wider.clone(), elsewhere.clone()]);
        let mut clones = vec![wider.clone(), narrower, elsewhere.clone()];
        one_per_place(&mut clones);
        assert_eq!(clones, [wider, elsewhere]);
    }
}
