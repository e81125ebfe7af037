//! Hashing: the one hash-map type of the crate, and the fixed hash of token text.
//!
//! Maps use `ahash` (fast, DoS-resistant); `std::collections::HashMap` is
//! banned by `clippy.toml` so that there is one choice. Token identities, by
//! contrast, need a hash that is the same in every run and on every machine,
//! so they use 64-bit FNV-1a ([`fnv1a`]), documented and never seeded.

/// The crate's hash map.
pub type HashMap<K, V> = ahash::AHashMap<K, V>;
/// The crate's hash set.
pub(crate) type HashSet<T> = ahash::AHashSet<T>;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`: stable across runs, versions and platforms.
pub(crate) const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u64).wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// 64-bit FNV-1a of the lower-case form of `text`, each character as
/// [`char::to_lowercase`] maps it (so equal to [`fnv1a`] of
/// `text.to_lowercase()`, but for a final capital sigma), without
/// allocating: the identity of a token compared without case.
pub(crate) fn fnv1a_lowercase(text: &str) -> u64 {
    let step = |h: u64, b: u8| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    if text.is_ascii() {
        return text
            .bytes()
            .fold(FNV_OFFSET, |h, b| step(h, b.to_ascii_lowercase()));
    }
    let mut buf = [0u8; 4];
    text.chars()
        .flat_map(char::to_lowercase)
        .fold(FNV_OFFSET, |h, c| {
            c.encode_utf8(&mut buf).bytes().fold(h, step)
        })
}

/// The finalizer of SplitMix64: spreads the bits of `x` so that nearby inputs
/// give unrelated outputs. A bijection, so it never adds collisions.
pub(crate) fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_published_vectors() {
        // Reference values of the FNV-1a 64-bit specification.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn fnv1a_lowercase_hashes_the_lower_case_text() {
        for text in [
            "",
            "SELECT",
            "getUser",
            "already lower",
            "ÄÖÜ straße",
            "İx",
            "ΣΑΣ a",
        ] {
            assert_eq!(
                fnv1a_lowercase(text),
                fnv1a(
                    text.chars()
                        .flat_map(char::to_lowercase)
                        .collect::<String>()
                        .as_bytes()
                ),
                "{text}"
            );
        }
        assert_eq!(fnv1a_lowercase("SELECT"), fnv1a(b"select"));
        assert_eq!(fnv1a_lowercase("Straße"), fnv1a("straße".as_bytes()));
    }
}
