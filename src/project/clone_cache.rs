//! The project's clone list kept beside the index cache, so that a warm
//! start over unchanged files answers `/api/stats` and `/api/clones` at
//! once instead of after whole-project clone detection (two minutes on the
//! Linux kernel).
//!
//! In: a snapshot's clones for one configuration. Out: `clones-v1.bin` in
//! the cache folder, and on a later start the same clones for a snapshot
//! of the same files.
//!
//! Layout (little-endian): magic, version, key, clone count, capped lookups,
//! the clones (first file and token, second file and token, tokens, then
//! the near-miss chain: its part count, `u32::MAX` for an exact clone, its
//! file, the tokens its gaps share, whether it copies one unit whole (1 or
//! 0) and its parts), then an XXH3 checksum of everything before it.
//!
//! Invariants: the key hashes the index cache's key, the settings clone
//! detection ran with, and every file of the index in order (path, size,
//! content hash), so a list is only taken for the very files and settings
//! it was found with; anything else (another key, damage, a place outside
//! its file) makes it ignored, and clone detection runs as on a cold start.
//! Written like the index cache: a temporary file renamed into place.

use std::io::{Read, Write};
use std::path::Path;

use crate::engine::clones::ClonePair;
use crate::engine::index::Index;
use crate::engine::near_miss::Chain;
use crate::engine::runs::Run;
use crate::project::cache;

/// The first bytes of a clone list file.
const MAGIC: &[u8; 16] = b"DUPCHECK-CLONES\n";
/// The layout's version, after the magic (4: lists found since detection
/// skips the places whose tags differ, docs/matching.md "Tags").
const VERSION: u32 = 4;
const FILE_NAME: &str = "clones-v1.bin";
/// The part count of an exact clone.
const EXACT: u32 = u32::MAX;

/// A project's clones and the fingerprint lookups the posting cap skipped,
/// as clone detection returns them.
pub(crate) type Clones = (Vec<ClonePair>, usize);

/// What a clone list is valid for: `cache_key` (the index cache's key:
/// version, normalization, grammars, min-tokens), `settings` (the clone
/// settings as their `Debug` form prints them: mode, thresholds, skipLocal,
/// near-miss similarity) and the files of `index`, in order.
pub(crate) fn key(cache_key: u64, settings: &str, index: &Index) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3Default::new();
    hasher.update(&cache_key.to_le_bytes());
    hasher.update(&(settings.len() as u64).to_le_bytes());
    hasher.update(settings.as_bytes());
    for file in &index.files {
        hasher.update(&(file.rel.len() as u64).to_le_bytes());
        hasher.update(file.rel.as_bytes());
        hasher.update(&file.meta.size.to_le_bytes());
        hasher.update(&file.meta.content_hash.to_le_bytes());
    }
    hasher.digest()
}

/// Writes `clones`, found with `key`, to the cache folder `dir`.
pub(crate) fn save(dir: &Path, key: u64, clones: &Clones) -> std::io::Result<()> {
    let bytes = encode(key, clones);
    cache::write_atomically(dir, FILE_NAME, |out| out.write_all(&bytes))
}

/// The clones kept in the cache folder `dir` for `key`, if any are, intact,
/// and every place lies inside the tokens of its file of `index`; the
/// reason is logged otherwise.
pub(crate) fn load(dir: &Path, key: u64, index: &Index) -> Option<Clones> {
    let path = dir.join(FILE_NAME);
    let read = cache::open_regular_file(&path, MAGIC).and_then(|(mut file, len)| {
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    });
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            tracing::warn!("clone list {} not read: {err}", path.display());
            return None;
        }
    };
    match decode(&bytes, key, index) {
        Ok(clones) => Some(clones),
        Err(OTHER_KEY) => {
            tracing::debug!("clone list {} not used: {OTHER_KEY}", path.display());
            None
        }
        Err(why) => {
            tracing::warn!("clone list {} ignored: {why}", path.display());
            None
        }
    }
}

/// Why a list made for other files or settings is not used.
const OTHER_KEY: &str = "made for other files or settings";

fn encode(key: u64, (clones, capped): &Clones) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + clones.len() * 24);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&(clones.len() as u64).to_le_bytes());
    out.extend_from_slice(&(*capped as u64).to_le_bytes());
    let mut put = |v: u32| out.extend_from_slice(&v.to_le_bytes());
    for c in clones {
        for v in [c.first.0, c.first.1, c.second.0, c.second.1, c.len] {
            put(v);
        }
        match &c.near {
            None => put(EXACT),
            Some(chain) => {
                put(chain.parts.len() as u32);
                put(chain.file);
                put(chain.shared);
                put(u32::from(chain.whole));
                for part in &chain.parts {
                    for v in [part.a, part.file, part.b, part.len] {
                        put(v);
                    }
                }
            }
        }
    }
    let checksum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

fn decode(bytes: &[u8], key: u64, index: &Index) -> Result<Clones, &'static str> {
    let body_len = bytes.len().checked_sub(8).ok_or("truncated")?;
    let (body, checksum) = bytes.split_at(body_len);
    let mut r = Words(body.strip_prefix(MAGIC).ok_or("not a clone list")?);
    if r.u32()? != VERSION {
        return Err("written by another version");
    }
    if r.u64()? != key {
        return Err(OTHER_KEY);
    }
    if checksum != xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() {
        return Err("checksum mismatch (corrupt or truncated)");
    }
    let count = r.u64()?;
    let capped = r.u64()? as usize;
    // Every place inside its file's tokens: a list that passed its checksum
    // was written by dupcheck, but it must not make an answer index out of
    // range whatever happened to it.
    let tokens = |file: u32| {
        index
            .files
            .get(file as usize)
            .map(|f| crate::engine::tokens::Tokens::len(&f.tokens) as u64)
    };
    let inside = |file: u32, at: u32, len: u32| {
        tokens(file).is_some_and(|n| u64::from(at) + u64::from(len) <= n)
    };
    let mut clones = Vec::new();
    for _ in 0..count {
        let [f1, t1, f2, t2, len] = [r.u32()?, r.u32()?, r.u32()?, r.u32()?, r.u32()?];
        let parts = r.u32()?;
        let near = if parts == EXACT {
            if !inside(f1, t1, len) || !inside(f2, t2, len) {
                return Err("a clone outside its files");
            }
            None
        } else {
            let file = r.u32()?;
            let mut chain = Chain {
                file,
                parts: Vec::new(),
                shared: r.u32()?,
                whole: r.u32()? != 0,
            };
            for _ in 0..parts {
                let [a, part_file, b, len] = [r.u32()?, r.u32()?, r.u32()?, r.u32()?];
                if !inside(f1, a, len) || !inside(file, b, len) {
                    return Err("a near-miss part outside its files");
                }
                chain.parts.push(Run {
                    a,
                    file: part_file,
                    b,
                    len,
                });
            }
            if !inside(f1, t1, 0) || !inside(f2, t2, 0) {
                return Err("a clone outside its files");
            }
            Some(Box::new(chain))
        };
        clones.push(ClonePair {
            first: (f1, t1),
            second: (f2, t2),
            len,
            near,
        });
    }
    if !r.0.is_empty() {
        return Err("trailing bytes");
    }
    Ok((clones, capped))
}

/// A cursor over a clone list's bytes; every read fails cleanly past the end.
struct Words<'a>(&'a [u8]);

impl Words<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let (head, rest) = self.0.split_first_chunk::<N>().ok_or("truncated")?;
        self.0 = rest;
        Ok(*head)
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        self.take::<4>().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, &'static str> {
        self.take::<8>().map(u64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clones::{project_clones, CloneSettings};
    use crate::engine::fingerprint::Winnow;
    use crate::engine::grammar::Registry;
    use crate::engine::index::js_files;
    use crate::engine::matching::Thresholds;
    use crate::engine::tokens::Mode;

    /// An index of three JavaScript files, two with a near-miss copy and
    /// one with an exact copy of a function.
    fn index() -> Index {
        let registry = Registry::builtin();
        let body = |extra: &str| {
            format!(
                "function total(items, rate) {{\n  let sum = 0;\n  for (const item of items) {{\n    sum += item.price * item.count;\n    {extra}\n  }}\n  const taxed = sum * (1 + rate);\n  console.log('total', taxed);\n  return Math.round(taxed * 100) / 100;\n}}\n"
            )
        };
        let (same, other) = (
            body("log(item);"),
            body("if (item.free) { continue; } audit(item.id, 'checked');"),
        );
        let files = js_files(
            &registry,
            &[("f0.js", &same), ("f1.js", &same), ("f2.js", &other)],
        );
        Index::build(files, &registry, Winnow::for_min_tokens(20))
    }

    fn clones(index: &Index) -> Clones {
        let thresholds = Thresholds {
            min_tokens: 20,
            min_lines: 3,
        };
        project_clones(
            index,
            CloneSettings {
                mode: Mode::Strict,
                thresholds,
                skip_local: false,
                similarity: Some(0.7),
            },
        )
    }

    #[test]
    fn a_list_comes_back_for_the_same_files_and_settings_only() {
        let index = index();
        let found = clones(&index);
        assert!(found.0.iter().any(|c| c.near.is_none()), "{found:?}");
        assert!(found.0.iter().any(|c| c.near.is_some()), "{found:?}");
        // A near-miss copy of the function whole: the list keeps that too.
        let whole = |c: &ClonePair| c.near.as_ref().is_some_and(|n| n.whole);
        assert!(found.0.iter().any(whole), "{found:?}");
        let dir = tempfile::tempdir().unwrap();
        let key = key(7, "strict", &index);
        save(dir.path(), key, &found).unwrap();
        assert_eq!(load(dir.path(), key, &index), Some(found.clone()));
        // Other settings, another index cache, other files: not taken.
        assert_ne!(key, super::key(7, "mild", &index));
        assert_ne!(key, super::key(8, "strict", &index));
        assert!(load(dir.path(), super::key(7, "mild", &index), &index).is_none());
        let fewer = Index::build(
            index.files[..2].to_vec(),
            &Registry::builtin(),
            index.winnow,
        );
        assert_ne!(key, super::key(7, "strict", &fewer));
    }

    #[test]
    fn damage_and_places_outside_the_files_are_refused() {
        let index = index();
        let found = clones(&index);
        let bytes = encode(3, &found);
        assert_eq!(decode(&bytes, 3, &index).unwrap(), found);
        let mut flipped = bytes.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        assert_eq!(
            decode(&flipped, 3, &index).unwrap_err(),
            "checksum mismatch (corrupt or truncated)"
        );
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], 3, &index).is_err(), "cut at {cut}");
        }
        // A well-formed list whose clone lies past the end of its file.
        let mut outside = found.clone();
        outside.0[0].first.1 = u32::MAX - 1;
        assert!(decode(&encode(3, &outside), 3, &index).is_err());
        let mut unknown = found;
        unknown.0[0].second.0 = 99;
        assert!(decode(&encode(3, &unknown), 3, &index).is_err());
    }
}
