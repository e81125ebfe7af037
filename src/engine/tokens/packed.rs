//! Packed tokens: an indexed file's token stream as the index keeps it,
//! and [`Tokens`], what every stage that reads tokens asks of a stream.
//!
//! In: a file's [`Token`]s. Out: [`PackedTokens`], the same tokens in
//! fewer bytes: a table of the file's distinct kinds (text hash, length
//! and class: 12 bytes each), and per token its start and its kind's
//! place in the table. A start takes 2 bytes, its distance from the start
//! of the first of its block of [`START_BLOCK`] tokens (whose start takes
//! 4), or 4 in a file where some block spans 64 KiB or more; a place
//! takes 2 bytes, or 4 in a file of more than 65,536 kinds. A text's hash
//! is kept once per file however often it occurs: about 5 bytes a token
//! where a [`Token`] is 16.
//!
//! Invariants: [`PackedTokens::at`] gives back exactly the token packed
//! there (test `packing_gives_back_every_token`); every kind's place is
//! inside the table, and every token's end fits in 32 bits (a cache's
//! parts are refused otherwise, [`PackedTokens::from_parts`]). Snippets
//! and editor buffers keep plain `Vec<Token>`s: both are [`Tokens`], and
//! the stages are generic over it, so a slice is read as it always was.

use std::ops::Range;

use super::{Token, TokenClass, MAX_TOKEN_LEN, WALL};
use crate::engine::hash::HashMap;

/// A token stream read token by token: a slice of [`Token`]s, or a file's
/// [`PackedTokens`].
pub trait Tokens {
    /// The tokens of a range, in order.
    type Iter<'a>: DoubleEndedIterator<Item = Token> + ExactSizeIterator + Clone
    where
        Self: 'a;

    /// How many tokens.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Token `i` (panics past the end, as a slice does).
    fn at(&self, i: usize) -> Token;

    /// Token `i` for a comparison of kinds alone (text hash, length,
    /// class): its start may read as 0.
    fn kind_at(&self, i: usize) -> Token {
        self.at(i)
    }

    /// The tokens of `range`, in order, read sequentially.
    fn within(&self, range: Range<usize>) -> Self::Iter<'_>;

    /// All tokens, in order.
    fn each(&self) -> Self::Iter<'_> {
        self.within(0..self.len())
    }

    /// The tokens of `range` for a loop that compares their kinds alone
    /// (text hash, length, class): their starts may read as 0.
    fn kinds_within(&self, range: Range<usize>) -> Self::Iter<'_> {
        self.within(range)
    }

    /// The first token for which `pred` is false, or the length: `pred`
    /// must hold for every token before some point and none after it (as
    /// [`slice::partition_point`]).
    fn partition_point(&self, pred: impl Fn(Token) -> bool) -> usize {
        let (mut from, mut to) = (0, self.len());
        while from < to {
            let mid = from + (to - from) / 2;
            if pred(self.at(mid)) {
                from = mid + 1;
            } else {
                to = mid;
            }
        }
        from
    }
}

impl Tokens for [Token] {
    type Iter<'a> = std::iter::Copied<std::slice::Iter<'a, Token>>;

    #[inline]
    fn len(&self) -> usize {
        <[Token]>::len(self)
    }

    #[inline]
    fn at(&self, i: usize) -> Token {
        self[i]
    }

    #[inline]
    fn within(&self, range: Range<usize>) -> Self::Iter<'_> {
        self[range].iter().copied()
    }
}

impl Tokens for Vec<Token> {
    type Iter<'a> = std::iter::Copied<std::slice::Iter<'a, Token>>;

    #[inline]
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    #[inline]
    fn at(&self, i: usize) -> Token {
        self[i]
    }

    #[inline]
    fn within(&self, range: Range<usize>) -> Self::Iter<'_> {
        self[range].iter().copied()
    }
}

/// A kind: the low and high halves of a text hash, then the length and
/// class (a [`Token`]'s `len_class`). 12 bytes, so a table has no padding.
type Kind = [u32; 3];

/// Most kinds a file has for its places to take 2 bytes.
const NARROW_KINDS: usize = 1 << 16;

/// Tokens per block of starts.
pub(crate) const START_BLOCK: usize = 64;

/// Per token, the byte offset of its first byte. A cache keeps it as it
/// is ([`PackedTokens::parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Starts {
    /// Per block of [`START_BLOCK`] tokens its first token's start, and per
    /// token its distance from that start: where no block spans 64 KiB.
    Narrow {
        bases: Box<[u32]>,
        offsets: Box<[u16]>,
    },
    /// Each start whole.
    Wide(Box<[u32]>),
}

impl Default for Starts {
    fn default() -> Starts {
        Starts::Narrow {
            bases: Box::default(),
            offsets: Box::default(),
        }
    }
}

impl Starts {
    /// `starts` (in order) kept narrow where every block allows.
    fn new(starts: Vec<u32>) -> Starts {
        let bases: Vec<u32> = starts.iter().step_by(START_BLOCK).copied().collect();
        let narrow = starts.iter().enumerate().all(|(i, &start)| {
            start
                .checked_sub(bases[i / START_BLOCK])
                .is_some_and(|d| d <= u32::from(u16::MAX))
        });
        if !narrow {
            return Starts::Wide(starts.into_boxed_slice());
        }
        let offsets = (starts.iter().enumerate())
            .map(|(i, &start)| (start - bases[i / START_BLOCK]) as u16)
            .collect();
        Starts::Narrow {
            bases: bases.into_boxed_slice(),
            offsets,
        }
    }

    /// How many.
    fn len(&self) -> usize {
        match self {
            Starts::Narrow { offsets, .. } => offsets.len(),
            Starts::Wide(starts) => starts.len(),
        }
    }

    /// The latest start (0 if none); `None` if a block of narrow starts
    /// has no base or a base no start.
    fn latest(&self) -> Option<u64> {
        match self {
            Starts::Narrow { bases, offsets } => {
                if bases.len() != offsets.len().div_ceil(START_BLOCK) {
                    return None;
                }
                let blocks = offsets.chunks(START_BLOCK).zip(bases.iter());
                let each = blocks.map(|(block, &base)| {
                    u64::from(base) + u64::from(block.iter().copied().max().unwrap_or(0))
                });
                Some(each.max().unwrap_or(0))
            }
            Starts::Wide(starts) => Some(starts.iter().copied().max().map_or(0, u64::from)),
        }
    }

    /// Start `i`, if there is one.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<u32> {
        match self {
            Starts::Narrow { bases, offsets } => narrow_start(bases, offsets, i),
            Starts::Wide(starts) => starts.get(i).copied(),
        }
    }

    /// Those of `range`, in order.
    #[inline]
    fn within(&self, range: Range<usize>) -> StartIter<'_> {
        match self {
            Starts::Narrow { bases, offsets } => {
                assert!(
                    range.start <= range.end && range.end <= offsets.len(),
                    "tokens {range:?} of {}",
                    offsets.len()
                );
                StartIter::Narrow {
                    bases,
                    offsets,
                    front: range.start,
                    back: range.end,
                }
            }
            Starts::Wide(starts) => StartIter::Wide(starts[range].iter()),
        }
    }

    /// Bytes it holds.
    fn heap_bytes(&self) -> usize {
        match self {
            Starts::Narrow { bases, offsets } => {
                std::mem::size_of_val::<[u32]>(bases) + std::mem::size_of_val::<[u16]>(offsets)
            }
            Starts::Wide(starts) => std::mem::size_of_val::<[u32]>(starts),
        }
    }
}

/// Start `i` of narrow starts. It cannot panic, so that a loop that reads
/// tokens for their kinds alone (extending a run) computes no start.
#[inline(always)]
fn narrow_start(bases: &[u32], offsets: &[u16], i: usize) -> Option<u32> {
    let base = bases.get(i / START_BLOCK)?;
    Some(base + u32::from(*offsets.get(i)?))
}

/// The starts of a range of tokens.
#[derive(Debug, Clone)]
enum StartIter<'a> {
    Narrow {
        bases: &'a [u32],
        offsets: &'a [u16],
        front: usize,
        back: usize,
    },
    Wide(std::slice::Iter<'a, u32>),
    /// Starts not read (each reads as 0).
    Unread,
}

impl StartIter<'_> {
    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        match self {
            StartIter::Narrow {
                bases,
                offsets,
                front,
                back,
            } => (*front < *back).then(|| {
                *front += 1;
                narrow_start(bases, offsets, *front - 1).unwrap_or(0)
            }),
            StartIter::Wide(starts) => starts.next().copied(),
            StartIter::Unread => None,
        }
    }

    #[inline(always)]
    fn next_back(&mut self) -> Option<u32> {
        match self {
            StartIter::Narrow {
                bases,
                offsets,
                front,
                back,
            } => (*front < *back).then(|| {
                *back -= 1;
                narrow_start(bases, offsets, *back).unwrap_or(0)
            }),
            StartIter::Wide(starts) => starts.next_back().copied(),
            StartIter::Unread => None,
        }
    }
}

/// Per token, its kind's place in the table. A cache keeps it as it is
/// ([`PackedTokens::parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Places {
    /// In a file of at most [`NARROW_KINDS`] kinds.
    Narrow(Box<[u16]>),
    /// In a bigger one.
    Wide(Box<[u32]>),
}

impl Default for Places {
    fn default() -> Places {
        Places::Narrow(Box::default())
    }
}

/// A file's tokens, packed: its distinct kinds once, and per token its
/// start and its kind's place. See the module's documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackedTokens {
    /// The distinct kinds, in order of first occurrence.
    kinds: Box<[Kind]>,
    /// Per token, the byte offset of its first byte.
    starts: Starts,
    /// Per token, its kind's place in `kinds`.
    places: Places,
}

impl PackedTokens {
    /// `tokens`, packed. The kinds are in order of how many tokens are of
    /// each, most first (of as many, first seen first): a run compared
    /// token by token reads the table's first lines over and over, and
    /// its punctuation and keywords share them.
    pub fn new(tokens: &[Token]) -> PackedTokens {
        let mut seen: HashMap<(u64, u32), u32> = HashMap::default();
        // Per kind: how many tokens, and the kind.
        let mut kinds: Vec<(u32, Kind)> = Vec::new();
        let places: Vec<u32> = tokens
            .iter()
            .map(|t| {
                let place = *seen.entry((t.text, t.len_class)).or_insert_with(|| {
                    kinds.push((0, [t.text as u32, (t.text >> 32) as u32, t.len_class]));
                    (kinds.len() - 1) as u32
                });
                kinds[place as usize].0 += 1;
                place
            })
            .collect();
        let mut order: Vec<u32> = (0..kinds.len() as u32).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(kinds[k as usize].0));
        let mut moved = vec![0u32; kinds.len()];
        for (to, &from) in order.iter().enumerate() {
            moved[from as usize] = to as u32;
        }
        let places = places.into_iter().map(|p| moved[p as usize]).collect();
        let kinds = order.iter().map(|&k| kinds[k as usize].1).collect();
        let starts = tokens.iter().map(|t| t.start).collect();
        PackedTokens::assemble(kinds, starts, places)
    }

    /// The tokens of a cache's parts, as [`PackedTokens::parts`] and
    /// [`PackedTokens::kinds`] give them. `None` when a kind names no
    /// class, a place is outside the table, a token may end past 4 GiB
    /// (the latest start with the longest kind), a block of narrow starts
    /// has no base (or a base no start), or there are not as many starts
    /// as places.
    pub(crate) fn from_parts(
        kinds: Vec<(u64, u32)>,
        starts: Starts,
        places: Places,
    ) -> Option<PackedTokens> {
        let kinds: Box<[Kind]> = kinds
            .into_iter()
            .map(|(text, len_class)| {
                TokenClass::from_code(len_class >> 29)?;
                Some([text as u32, (text >> 32) as u32, len_class])
            })
            .collect::<Option<_>>()?;
        let count = match &places {
            Places::Narrow(p) => p.len(),
            Places::Wide(p) => p.len(),
        };
        if count != starts.len() {
            return None;
        }
        // Every place inside the table, and no token may end past 4 GiB:
        // checked on the latest start and the longest kind (the cache's
        // files are far smaller), in passes a compiler can vectorize.
        let last_place = match &places {
            Places::Narrow(p) => p.iter().copied().max().map(usize::from),
            Places::Wide(p) => p.iter().copied().max().map(|p| p as usize),
        };
        let longest = kinds
            .iter()
            .map(|k| k[2] & MAX_TOKEN_LEN)
            .max()
            .unwrap_or(0);
        let ends_fit = last_place.is_none_or(|p| p < kinds.len())
            && starts.latest()? + u64::from(longest) <= u64::from(u32::MAX);
        ends_fit.then_some(PackedTokens {
            kinds,
            starts,
            places,
        })
    }

    /// The packed tokens of `kinds` and, per token, `starts` and `places`
    /// (each inside `kinds`).
    fn assemble(kinds: Vec<Kind>, starts: Vec<u32>, places: Vec<u32>) -> PackedTokens {
        let places = if kinds.len() <= NARROW_KINDS {
            Places::Narrow(places.into_iter().map(|p| p as u16).collect())
        } else {
            Places::Wide(places.into_boxed_slice())
        };
        PackedTokens {
            kinds: kinds.into_boxed_slice(),
            starts: Starts::new(starts),
            places,
        }
    }

    /// The distinct kinds, each its text hash and its length and class (a
    /// cache's parts, [`PackedTokens::from_parts`]).
    pub(crate) fn kinds(&self) -> impl ExactSizeIterator<Item = (u64, u32)> + '_ {
        self.kinds
            .iter()
            .map(|k| (u64::from(k[0]) | u64::from(k[1]) << 32, k[2]))
    }

    /// Per token its start, and its kind's place, as they are packed
    /// (a cache's parts, [`PackedTokens::from_parts`]).
    pub(crate) fn parts(&self) -> (&Starts, &Places) {
        (&self.starts, &self.places)
    }

    /// Bytes it holds (its parts are boxed: exactly as long as they are).
    pub fn heap_bytes(&self) -> usize {
        let places = match &self.places {
            Places::Narrow(p) => std::mem::size_of_val::<[u16]>(p),
            Places::Wide(p) => std::mem::size_of_val::<[u32]>(p),
        };
        std::mem::size_of_val::<[Kind]>(&self.kinds) + self.starts.heap_bytes() + places
    }

    /// Token `i`'s kind's place.
    #[inline(always)]
    fn place(&self, i: usize) -> usize {
        match &self.places {
            Places::Narrow(p) => usize::from(p[i]),
            Places::Wide(p) => p[i] as usize,
        }
    }

    /// How many of its tokens are walls ([`WALL`]): a count of one kind's
    /// places, with no token unpacked (0 where no kind is the wall).
    pub fn walls(&self) -> usize {
        let Some(wall) = self.kinds().position(|(text, _)| text == WALL) else {
            return 0;
        };
        match &self.places {
            Places::Narrow(p) => p.iter().filter(|&&x| usize::from(x) == wall).count(),
            Places::Wide(p) => p.iter().filter(|&&x| x as usize == wall).count(),
        }
    }

    /// The tokens, unpacked.
    pub fn to_vec(&self) -> Vec<Token> {
        self.each().collect()
    }
}

impl From<Vec<Token>> for PackedTokens {
    fn from(tokens: Vec<Token>) -> PackedTokens {
        PackedTokens::new(&tokens)
    }
}

impl From<&[Token]> for PackedTokens {
    fn from(tokens: &[Token]) -> PackedTokens {
        PackedTokens::new(tokens)
    }
}

impl Tokens for PackedTokens {
    type Iter<'a> = PackedIter<'a>;

    #[inline]
    fn len(&self) -> usize {
        self.starts.len()
    }

    #[inline(always)]
    fn at(&self, i: usize) -> Token {
        let kind = self.kinds[self.place(i)];
        Token {
            text: u64::from(kind[0]) | u64::from(kind[1]) << 32,
            // As long as the places (whose index panics past the end): a
            // loop that compares identities reads no start.
            start: self.starts.get(i).unwrap_or(0),
            len_class: kind[2],
        }
    }

    #[inline]
    fn within(&self, range: Range<usize>) -> PackedIter<'_> {
        let places = match &self.places {
            Places::Narrow(p) => PlaceIter::Narrow(p[range.clone()].iter()),
            Places::Wide(p) => PlaceIter::Wide(p[range.clone()].iter()),
        };
        PackedIter {
            kinds: &self.kinds,
            starts: self.starts.within(range),
            places,
        }
    }

    #[inline(always)]
    fn kind_at(&self, i: usize) -> Token {
        let kind = self.kinds[self.place(i)];
        Token {
            text: u64::from(kind[0]) | u64::from(kind[1]) << 32,
            start: 0,
            len_class: kind[2],
        }
    }

    #[inline]
    fn kinds_within(&self, range: Range<usize>) -> PackedIter<'_> {
        PackedIter {
            starts: StartIter::Unread,
            ..self.within(range)
        }
    }
}

/// The tokens of a range of [`PackedTokens`], in order: read along its
/// parts' slices, so that a loop over it (extending a run) checks no
/// bounds but the kind's.
#[derive(Debug, Clone)]
pub struct PackedIter<'a> {
    kinds: &'a [Kind],
    starts: StartIter<'a>,
    places: PlaceIter<'a>,
}

/// The places of a range of tokens.
#[derive(Debug, Clone)]
enum PlaceIter<'a> {
    Narrow(std::slice::Iter<'a, u16>),
    Wide(std::slice::Iter<'a, u32>),
}

impl PackedIter<'_> {
    /// The token of `start` whose kind is at `place`.
    #[inline(always)]
    fn token(&self, start: u32, place: usize) -> Token {
        let kind = self.kinds[place];
        Token {
            text: u64::from(kind[0]) | u64::from(kind[1]) << 32,
            start,
            len_class: kind[2],
        }
    }
}

impl Iterator for PackedIter<'_> {
    type Item = Token;

    #[inline(always)]
    fn next(&mut self) -> Option<Token> {
        let place = match &mut self.places {
            PlaceIter::Narrow(p) => usize::from(*p.next()?),
            PlaceIter::Wide(p) => *p.next()? as usize,
        };
        // As long as the places: a loop that compares identities reads no
        // start.
        let start = self.starts.next().unwrap_or(0);
        Some(self.token(start, place))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.places {
            PlaceIter::Narrow(p) => p.size_hint(),
            PlaceIter::Wide(p) => p.size_hint(),
        }
    }
}

impl DoubleEndedIterator for PackedIter<'_> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Token> {
        let place = match &mut self.places {
            PlaceIter::Narrow(p) => usize::from(*p.next_back()?),
            PlaceIter::Wide(p) => *p.next_back()? as usize,
        };
        let start = self.starts.next_back().unwrap_or(0);
        Some(self.token(start, place))
    }
}

impl ExactSizeIterator for PackedIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::fnv1a;

    /// Packs `tokens`, and checks that every way of reading them back
    /// gives them as they were, and the parts a cache keeps too.
    fn check(tokens: &[Token], narrow: bool) {
        let packed = PackedTokens::new(tokens);
        assert_eq!(matches!(packed.places, Places::Narrow(_)), narrow);
        assert_eq!(packed.len(), tokens.len());
        assert_eq!(packed.to_vec(), tokens);
        for (i, &t) in tokens.iter().enumerate() {
            assert_eq!(packed.at(i), t);
            assert_eq!(packed.kind_at(i), Token { start: 0, ..t });
            assert_eq!(tokens.kind_at(i), t);
        }
        let n = tokens.len();
        for range in [0..n, n / 3..n / 2, n..n] {
            let forward: Vec<Token> = packed.within(range.clone()).collect();
            assert_eq!(forward, tokens[range.clone()]);
            let backward: Vec<Token> = packed.within(range.clone()).rev().collect();
            assert!(backward.iter().eq(tokens[range].iter().rev()));
        }
        let (starts, places) = packed.parts();
        let again =
            PackedTokens::from_parts(packed.kinds().collect(), starts.clone(), places.clone());
        assert_eq!(again.as_ref(), Some(&packed));
    }

    #[test]
    fn packing_gives_back_every_token() {
        // Every class, as the cache's codes name them.
        let classes: Vec<TokenClass> = (0..).map_while(TokenClass::from_code).collect();
        // Seven texts, each of one class and length but every 50th token,
        // of another class and length: one text in two kinds.
        let mut tokens = Vec::new();
        for i in 0..200u32 {
            let k = i % 7;
            let (class, len) = match i % 50 {
                0 => (TokenClass::String, 5),
                _ => (classes[(k % 5) as usize], k % 3),
            };
            let text = fnv1a(format!("t{k}").as_bytes()) | u64::from(k % 2) << 63;
            tokens.push(Token::new(text, class, i * 10, i * 10 + len));
        }
        tokens.push(Token::new(
            u64::MAX,
            TokenClass::Literal,
            4000,
            4000 + MAX_TOKEN_LEN,
        ));
        check(&tokens, true);
        check(&[], true);
        let packed = PackedTokens::new(&tokens);
        assert_eq!(packed.kinds.len(), 7 + 4 + 1);
        // 12 bytes a kind, 4 a token, 4 a block of 64 tokens.
        assert_eq!(
            packed.heap_bytes(),
            packed.kinds.len() * 12 + tokens.len() * 4 + tokens.len().div_ceil(64) * 4
        );
    }

    #[test]
    fn a_file_of_more_kinds_than_two_bytes_number_takes_four_a_token() {
        let token = |i: u32| Token::new(fnv1a(&i.to_le_bytes()), TokenClass::Identifier, i, i + 1);
        let at_most: Vec<Token> = (0..NARROW_KINDS as u32).map(token).collect();
        check(&at_most, true);
        let more: Vec<Token> = (0..NARROW_KINDS as u32 + 1)
            .chain([0, 7])
            .map(token)
            .collect();
        check(&more, false);
        let packed = PackedTokens::new(&more);
        assert_eq!(packed.at(more.len() - 1), token(7));
        // (Its last two tokens start before the one they follow, so its
        // starts are whole too.)
        assert_eq!(
            packed.heap_bytes(),
            (NARROW_KINDS + 1) * 12 + more.len() * 8
        );
    }

    #[test]
    fn a_file_where_a_block_of_64_tokens_spans_64_kib_keeps_whole_starts() {
        let token = |start: u32| Token::new(7, TokenClass::Other, start, start + 1);
        let narrow = |tokens: &[Token]| {
            let packed = PackedTokens::new(tokens);
            check(tokens, true);
            matches!(packed.starts, Starts::Narrow { .. })
        };
        // The first block spans 65,535 bytes; the second starts 1 MiB on.
        let mut tokens: Vec<Token> = (0..63).map(token).chain([token(65_535)]).collect();
        tokens.extend((0..100).map(|i| token((1 << 20) + i * 1000)));
        assert!(narrow(&tokens));
        // One byte more in the first block: every start is whole.
        tokens[63] = token(65_536);
        assert!(!narrow(&tokens));
        assert_eq!(
            PackedTokens::new(&tokens).heap_bytes(),
            12 + tokens.len() * 6
        );
    }

    #[test]
    fn walls_are_counted_from_their_kind_alone() {
        let token = |text: u64, start: u32| Token::new(text, TokenClass::Other, start, start + 1);
        let tokens: Vec<Token> = (0..300u32)
            .map(|i| token(if i % 7 == 3 { WALL } else { u64::from(i % 5) }, i))
            .collect();
        let walls = tokens.iter().filter(|t| t.is_wall()).count();
        assert_eq!(walls, 43);
        assert_eq!(PackedTokens::new(&tokens).walls(), walls);
        assert_eq!(PackedTokens::new(&tokens[..3]).walls(), 0);
    }

    #[test]
    fn parts_that_do_not_make_tokens_are_refused() {
        let kinds = || vec![(1u64, 5u32), (2, 1 << 29 | 3)];
        let wide = |kinds, starts: &[u32], places: &[u32]| {
            let (starts, places) = (starts.to_vec(), places.to_vec());
            let places = Places::Wide(places.into_boxed_slice());
            PackedTokens::from_parts(kinds, Starts::Wide(starts.into_boxed_slice()), places)
        };
        let narrow = |bases: &[u32], offsets: &[u16], places: &[u16]| {
            let starts = Starts::Narrow {
                bases: bases.into(),
                offsets: offsets.into(),
            };
            PackedTokens::from_parts(kinds(), starts, Places::Narrow(places.into()))
        };
        assert!(wide(kinds(), &[0, 9, 20], &[1, 0, 1]).is_some());
        assert!(narrow(&[100], &[0, 9, 20], &[1, 0, 1]).is_some());
        // A place outside the table.
        assert_eq!(wide(kinds(), &[0, 9], &[1, 2]), None);
        assert_eq!(narrow(&[100], &[0, 9], &[1, 2]), None);
        // A kind of no class (codes 5 to 7).
        assert_eq!(wide(vec![(1, 5 << 29)], &[0], &[0]), None);
        // A token ending past 4 GiB, or starting there.
        assert_eq!(wide(kinds(), &[u32::MAX - 1], &[1]), None);
        assert_eq!(narrow(&[u32::MAX - 1], &[0], &[1]), None);
        assert_eq!(narrow(&[u32::MAX - 1], &[2], &[0]), None);
        // Starts and places of different lengths.
        assert_eq!(wide(kinds(), &[0, 1], &[0]), None);
        assert_eq!(narrow(&[0], &[0, 1], &[0]), None);
        // A block of narrow starts without its base, or a base too many.
        let block = vec![0u16; START_BLOCK + 1];
        assert!(narrow(&[0, 9], &block, &block).is_some());
        assert_eq!(narrow(&[0], &block, &block), None);
        assert_eq!(narrow(&[0, 1], &[0], &[0]), None);
    }
}
