//! Winnowing: turns token identities into the fingerprints the index keeps.
//!
//! In: identities of one file or snippet. Out: `(hash, position)` pairs, the
//! rightmost minimum of every window of `w` consecutive k-gram hashes
//! (Schleimer, Wilkerson and Aiken, 2003), each selection recorded once.
//!
//! A k-gram hash is a polynomial over the k identities (wrapping 64-bit
//! arithmetic, base [`BASE`]), rolled in O(1) per token and then spread by
//! [`mix64`]; it is fixed, so the same tokens give the same fingerprints in
//! every run and on every machine.
//!
//! Invariant: if `w + k - 1 <= min_tokens`, any shared run of `min_tokens`
//! tokens shares a fingerprint (test: `shared_run_always_found`).

use crate::engine::hash::mix64;
use crate::engine::tokens::Mode;

/// Multiplier of the rolling polynomial: a large odd constant.
pub(crate) const BASE: u64 = 0x100_0000_01b3;

/// Longest k-gram used, whatever `min_tokens` is: longer k-grams would only
/// shrink the window, and so the density gain, while costing matches.
const MAX_K: usize = 16;

/// A fingerprint: a selected k-gram hash and the position of its first token.
/// Packed to 12 bytes (not 16 with the hash's alignment): every file keeps
/// its own, about one for every 6 tokens with the seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed(4))]
pub struct Fingerprint {
    /// Hash of the k-gram.
    pub hash: u64,
    /// Index of the k-gram's first token.
    pub pos: u32,
}

/// Winnowing parameters: k-gram length and window size, and the mode of
/// the tags an index keeps beside its fingerprints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Winnow {
    /// Tokens per k-gram.
    pub k: usize,
    /// K-grams per window.
    pub w: usize,
    /// The mode whose identities tag each fingerprint's k-gram in an
    /// index (docs/matching.md, "Tags"): a lookup in that mode, or a
    /// stricter one, tries only the places whose k-gram is equal in it.
    /// [`Mode::Weak`], where every fingerprint is its own tag: none kept.
    pub tags: Mode,
}

impl Winnow {
    /// Parameters for a detection threshold of `min_tokens` (at least 1):
    /// `k` is half of it, at most [`MAX_K`], and `w` the largest window that
    /// keeps the guarantee `w + k - 1 == min_tokens`.
    pub(crate) fn for_min_tokens(min_tokens: usize) -> Winnow {
        let min_tokens = min_tokens.max(1);
        let k = (min_tokens / 2).clamp(1, MAX_K);
        Winnow {
            k,
            w: min_tokens - k + 1,
            tags: Mode::Weak,
        }
    }

    /// These parameters, with tags of `mode`.
    pub(crate) fn tagged(self, mode: Mode) -> Winnow {
        Winnow { tags: mode, ..self }
    }

    /// Whether a lookup in `mode` may skip the places whose tag differs
    /// from its k-gram's: two k-grams equal in `mode` are equal in the
    /// tags' mode.
    pub(crate) fn tags_serve(&self, mode: Mode) -> bool {
        self.tags != Mode::Weak && mode.at_least_as_strict_as(self.tags)
    }

    /// The hash of one k-gram, `ids` (its `k` identities): what
    /// [`Winnow::kgram_hashes`] gives at its position.
    pub(crate) fn kgram_hash(&self, ids: impl Iterator<Item = u64>) -> u64 {
        mix64(ids.fold(0u64, |h, id| h.wrapping_mul(BASE).wrapping_add(id)))
    }

    /// Hashes of every k-gram of `ids`, in order.
    pub(crate) fn kgram_hashes(&self, ids: &[u64]) -> Vec<u64> {
        let k = self.k;
        if ids.len() < k {
            return Vec::new();
        }
        let top = (1..k).fold(1u64, |p, _| p.wrapping_mul(BASE));
        let mut h = ids[..k]
            .iter()
            .fold(0u64, |h, &id| h.wrapping_mul(BASE).wrapping_add(id));
        let mut out = Vec::with_capacity(ids.len() - k + 1);
        out.push(mix64(h));
        for i in k..ids.len() {
            h = h
                .wrapping_sub(ids[i - k].wrapping_mul(top))
                .wrapping_mul(BASE)
                .wrapping_add(ids[i]);
            out.push(mix64(h));
        }
        out
    }

    /// The winnowed fingerprints of `ids`, appended to `out` in position order.
    ///
    /// The window's minimum is kept as the window slides: a new k-gram at
    /// or below it becomes the minimum (the rightmost wins ties), and only
    /// when the minimum leaves the window is the window read again, about
    /// once every `w / 2` k-grams on hashes that look random, so the cost
    /// stays near one comparison per k-gram.
    pub(crate) fn fingerprints(&self, ids: &[u64], out: &mut Vec<Fingerprint>) {
        let hashes = self.kgram_hashes(ids);
        let w = self.w;
        if hashes.len() < w {
            return;
        }
        // The rightmost minimum of `hashes[from..to]` (not empty).
        let rightmost_min = |from: usize, to: usize| {
            (from + 1..to).fold(
                from,
                |min, i| if hashes[i] <= hashes[min] { i } else { min },
            )
        };
        let mut push = |pos: usize| {
            out.push(Fingerprint {
                hash: hashes[pos],
                pos: pos as u32,
            })
        };
        let mut min = rightmost_min(0, w);
        push(min);
        for end in w..hashes.len() {
            if hashes[end] <= hashes[min] {
                min = end;
                push(min);
            } else if min + w <= end {
                min = rightmost_min(end + 1 - w, end + 1);
                push(min);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random stream of `n` identities drawn from an
    /// alphabet of `alphabet` symbols (small alphabets force repeats).
    fn stream(seed: u64, n: usize, alphabet: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                mix64(x) % alphabet
            })
            .collect()
    }

    /// Brute force: rightmost minimum of every full window.
    fn naive(win: Winnow, ids: &[u64]) -> Vec<Fingerprint> {
        let hashes = win.kgram_hashes(ids);
        let mut out: Vec<Fingerprint> = Vec::new();
        for start in 0..hashes.len().saturating_sub(win.w - 1) {
            let window = &hashes[start..start + win.w];
            let min = *window.iter().min().unwrap();
            let pos = start + window.iter().rposition(|&h| h == min).unwrap();
            if out.last().map(|f| f.pos as usize) != Some(pos) {
                out.push(Fingerprint {
                    hash: min,
                    pos: pos as u32,
                });
            }
        }
        out
    }

    #[test]
    fn parameters_keep_the_guarantee() {
        for min_tokens in 1..200 {
            let win = Winnow::for_min_tokens(min_tokens);
            assert!(win.k >= 1 && win.w >= 1);
            assert_eq!(win.w + win.k - 1, min_tokens, "{min_tokens}");
        }
        assert_eq!(
            Winnow::for_min_tokens(50),
            Winnow {
                k: 16,
                w: 35,
                tags: Mode::Weak
            }
        );
    }

    #[test]
    fn rolling_hash_equals_direct_hash() {
        let win = Winnow {
            k: 5,
            w: 4,
            tags: Mode::Weak,
        };
        let ids = stream(1, 40, 1000);
        let rolled = win.kgram_hashes(&ids);
        for (i, &h) in rolled.iter().enumerate() {
            assert_eq!(win.kgram_hashes(&ids[i..i + 5]), vec![h]);
            assert_eq!(win.kgram_hash(ids[i..i + 5].iter().copied()), h);
        }
    }

    #[test]
    fn deque_winnowing_equals_brute_force() {
        for seed in 0..50 {
            let win = Winnow {
                k: 1 + (seed as usize % 4),
                w: 1 + (seed as usize % 9),
                tags: Mode::Weak,
            };
            // Alphabet 3 makes many equal hashes: ties must go right.
            let ids = stream(seed, 300, if seed % 2 == 0 { 3 } else { 1 << 20 });
            let mut got = Vec::new();
            win.fingerprints(&ids, &mut got);
            assert_eq!(got, naive(win, &ids), "seed {seed} {win:?}");
        }
    }

    #[test]
    fn shared_run_always_found() {
        // Plant a run of exactly min_tokens tokens in two unrelated streams,
        // at random places: they must share a fingerprint inside the run.
        for seed in 0..300u64 {
            let min_tokens = 1 + (seed as usize * 7) % 80;
            let win = Winnow::for_min_tokens(min_tokens);
            let run = stream(seed ^ 0xdead, min_tokens, 50);
            let a_at = (seed as usize * 13) % 97;
            let b_at = (seed as usize * 31) % 61;
            let mut a = stream(seed, a_at, 50);
            a.extend(&run);
            a.extend(stream(seed + 1, 40, 50));
            let mut b = stream(seed + 2, b_at, 50);
            b.extend(&run);
            b.extend(stream(seed + 3, 25, 50));
            let (mut fa, mut fb) = (Vec::new(), Vec::new());
            win.fingerprints(&a, &mut fa);
            win.fingerprints(&b, &mut fb);
            let inside = |f: &Fingerprint, at: usize| {
                let p = f.pos as usize;
                p >= at && p + win.k <= at + min_tokens
            };
            let shared = fa.iter().filter(|f| inside(f, a_at)).any(|f| {
                fb.iter().any(|g| {
                    inside(g, b_at)
                        && g.hash == f.hash
                        && g.pos as usize - b_at == f.pos as usize - a_at
                })
            });
            assert!(shared, "seed {seed}, min_tokens {min_tokens}");
        }
    }

    #[test]
    fn short_streams_have_no_fingerprints() {
        let win = Winnow::for_min_tokens(50);
        let mut out = Vec::new();
        win.fingerprints(&stream(3, 49, 100), &mut out);
        assert!(out.is_empty());
        win.fingerprints(&stream(3, 50, 100), &mut out);
        assert_eq!(out.len(), 1);
    }
}
