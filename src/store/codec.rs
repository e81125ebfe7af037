//! A content's tokens as the store keeps them (`contents.tokens`), and its
//! definitions (`contents.definitions`, 16 bytes each): tokens take about
//! 5 bytes a token instead of the 16 they take in memory. The distinct
//! text hashes come first (8 bytes each); then per token its hash's place
//! in that list, its start as the difference from the previous token's
//! (zigzag), and its length and class, each a LEB128 varint.
//!
//! Invariant: [`decode`] gives back exactly the tokens [`encode`] took,
//! and refuses bytes that do not decode to tokens (a store is not trusted
//! more than the cache is).

use crate::engine::definitions::{Definition, Definitions};
use crate::engine::hash::HashMap;
use crate::engine::tokens::{Token, Tokens};

/// The bytes of `tokens`.
pub fn encode(tokens: &(impl Tokens + ?Sized)) -> Vec<u8> {
    let mut places: HashMap<u64, u32> = HashMap::default();
    let mut hashes = Vec::new();
    let mut body = Vec::with_capacity(tokens.len() * 4);
    let mut previous = 0i64;
    for token in tokens.each() {
        let (text, start, len_class) = token.raw();
        let place = *places.entry(text).or_insert_with(|| {
            hashes.push(text);
            (hashes.len() - 1) as u32
        });
        varint(&mut body, u64::from(place));
        let delta = i64::from(start) - previous;
        varint(&mut body, ((delta << 1) ^ (delta >> 63)) as u64);
        previous = i64::from(start);
        // Length in the low bits, class (the top 3 bits of len_class) below.
        let len = u64::from(len_class & ((1 << 29) - 1));
        varint(&mut body, len << 3 | u64::from(len_class >> 29));
    }
    let mut out = Vec::with_capacity(10 + hashes.len() * 8 + body.len());
    varint(&mut out, tokens.len() as u64);
    varint(&mut out, hashes.len() as u64);
    for hash in hashes {
        out.extend_from_slice(&hash.to_le_bytes());
    }
    out.extend_from_slice(&body);
    out
}

/// The tokens of `bytes`, or `None` if they are not [`encode`]'s.
pub fn decode(bytes: &[u8]) -> Option<Vec<Token>> {
    let mut at = 0;
    let count = read_varint(bytes, &mut at)?;
    let distinct = read_varint(bytes, &mut at)?;
    // Each token takes 3 bytes at least and each hash 8: a count beyond
    // that is damage, not a reason to allocate.
    if count > bytes.len() as u64 || distinct > bytes.len() as u64 / 8 {
        return None;
    }
    let mut hashes = Vec::with_capacity(distinct as usize);
    for _ in 0..distinct {
        let raw = bytes.get(at..at + 8)?;
        hashes.push(u64::from_le_bytes(raw.try_into().ok()?));
        at += 8;
    }
    let mut tokens = Vec::with_capacity(count as usize);
    let mut previous = 0i64;
    for _ in 0..count {
        let text = *hashes.get(usize::try_from(read_varint(bytes, &mut at)?).ok()?)?;
        let zigzag = read_varint(bytes, &mut at)?;
        let delta = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
        let start = u32::try_from(previous.checked_add(delta)?).ok()?;
        previous = i64::from(start);
        let len_class = read_varint(bytes, &mut at)?;
        let len = u32::try_from(len_class >> 3).ok()?;
        if len >= 1 << 29 {
            return None;
        }
        tokens.push(Token::from_raw(
            text,
            start,
            len | ((len_class & 7) as u32) << 29,
        )?);
    }
    (at == bytes.len()).then_some(tokens)
}

/// Appends `n` as a LEB128 varint.
fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The varint at `*at`, moving past it.
fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(n);
        }
    }
    None
}

/// Bytes per definition.
const DEFINITION_BYTES: usize = 16;

/// A content's definitions, 16 bytes each (start, end, name start, name
/// length, kind and wrapper), little-endian, as in memory.
pub fn encode_definitions(definitions: &Definitions) -> Vec<u8> {
    let all = definitions.as_slice();
    let mut out = Vec::with_capacity(all.len() * DEFINITION_BYTES);
    for d in all {
        for v in [d.start, d.end, d.name_start] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&d.name_len.to_le_bytes());
        out.extend_from_slice(&d.packed.to_le_bytes());
    }
    out
}

/// The definitions [`encode_definitions`] wrote for a text of `len`
/// bytes; `None` unless each fits the text and they are in order.
pub fn decode_definitions(bytes: &[u8], len: u64) -> Option<Definitions> {
    if !bytes.len().is_multiple_of(DEFINITION_BYTES) {
        return None;
    }
    let u32_at = |c: &[u8], i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
    let mut all = Vec::with_capacity(bytes.len() / DEFINITION_BYTES);
    for c in bytes.chunks_exact(DEFINITION_BYTES) {
        let d = Definition {
            start: u32_at(c, 0),
            end: u32_at(c, 4),
            name_start: u32_at(c, 8),
            name_len: u16::from_le_bytes([c[12], c[13]]),
            packed: u16::from_le_bytes([c[14], c[15]]),
        };
        if !d.fits(len) {
            return None;
        }
        all.push(d);
    }
    Definitions::checked(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::tokens::{tokenize, Normalization};

    fn check(format: &str, text: &str) {
        let registry = Registry::builtin();
        let tokens = tokenize(
            registry.lookup(format).unwrap(),
            text,
            &Normalization::default(),
        )
        .unwrap();
        let bytes = encode(&tokens);
        assert_eq!(decode(&bytes).as_deref(), Some(&tokens[..]));
        if tokens.len() > 100 {
            assert!(bytes.len() < tokens.len() * 16 / 2, "{} bytes", bytes.len());
        }
    }

    #[test]
    fn tokens_round_trip_and_a_file_takes_less_than_half_their_size() {
        // Code repeats its names: a file of functions alike.
        let js: String = (0..30)
            .map(|i| format!("function total{i}(xs) {{\n  let sum = 0;\n  for (const x of xs) {{ sum += x * {i}; }}\n  return 'done: ' + sum;\n}}\n"))
            .collect();
        check("js", &js);
        check(
            "python",
            "def f(a, b):\n    # dupcheck-ignore-start\n    x = 1\n    # dupcheck-ignore-end\n    return a + b + 1.5\n",
        );
        assert_eq!(decode(&encode(&[][..])), Some(Vec::new()));
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let registry = Registry::builtin();
        let tokens = tokenize(
            registry.lookup("js").unwrap(),
            "let a = b + 1;",
            &Normalization::default(),
        )
        .unwrap();
        let bytes = encode(&tokens);
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None);
        assert_eq!(decode(&[0xff; 12]), None);
    }

    #[test]
    fn definitions_round_trip_and_damaged_ones_are_refused() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let text = "class A {\n  m() { return 1; }\n}\nexport function f() {}\n";
        let budget = crate::engine::parse::Budget::for_file(text.len());
        let (_, definitions) =
            crate::engine::tokens::tokenize_defined(js, text, &Normalization::default(), &budget)
                .unwrap();
        assert_eq!(definitions.as_slice().len(), 3);
        let bytes = encode_definitions(&definitions);
        assert_eq!(bytes.len(), 48);
        let len = text.len() as u64;
        assert_eq!(decode_definitions(&bytes, len), Some(definitions));
        // Past the text, cut short, or out of order: refused.
        assert_eq!(decode_definitions(&bytes, 20), None);
        assert_eq!(decode_definitions(&bytes[..40], len), None);
        let swapped = [&bytes[16..32], &bytes[..16], &bytes[32..]].concat();
        assert_eq!(decode_definitions(&swapped, len), None);
    }
}
