//! Cache: the index persisted between runs, for warm restarts.
//!
//! In: the files of a snapshot. Out: `index-v1.bin` in the cache folder
//! (default `.dupcheck-cache/` inside DIR, which holds a `.gitignore` of `*`),
//! and, on start, the [`CachedFile`]s a scan may reuse instead of parsing.
//!
//! Layout (little-endian): magic, format version, key, entry count, entries
//! (path, size, mtime, content hash, tokens, fingerprints), then an XXH3
//! checksum of everything before it. The key hashes everything that changes
//! tokens: dupcheck's version, the normalization version, the
//! [`Normalization`] (`--ignoreCase`, `--ignore-pattern`s,
//! `--keep-imports`), `grammars.toml`, min-tokens. Not the mode: tokens
//! keep their text hash and class, from which every mode's ids are
//! derived, so one cache serves every `--mode`.
//!
//! Invariants: a cache is never trusted. A wrong magic, version, key or
//! checksum, a truncated file, or entries that do not fit their file's text
//! make it ignored (and rebuilt); a file is only reused when its size and
//! content hash match. Writes go to a temporary file renamed into place, so
//! a crash never leaves half a cache.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::fingerprint::Fingerprint;
use crate::engine::hash::HashMap;
use crate::engine::index::{FileMeta, SourceFile};
use crate::engine::tokens::{Normalization, Token};
use crate::project::config::Config;

/// The first bytes of a cache file.
pub const MAGIC: &[u8; 16] = b"DUPCHECK-INDEX\n\0";
/// The version of the layout, after the magic.
/// (2: a token's third number packs its length and class.)
pub const FORMAT_VERSION: u32 = 2;
const FILE_NAME: &str = "index-v1.bin";
/// Why a cache made with another key is not used.
const OTHER_KEY: &str =
    "made for another version, case or ignore patterns, grammar set or min-tokens";

/// Tokens and fingerprints of one file, as the cache stored them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedFile {
    /// Size, mtime and content hash of the text they were made from.
    pub meta: FileMeta,
    /// Normalized tokens.
    pub tokens: Vec<Token>,
    /// Winnowed fingerprints.
    pub fingerprints: Vec<Fingerprint>,
}

impl CachedFile {
    /// Whether these tokens can belong to `text`: every range inside it, on
    /// character boundaries and in order; every fingerprint on a token.
    pub fn fits(&self, text: &str) -> bool {
        let mut previous_end = 0;
        let tokens_ok = self.tokens.iter().all(|t| {
            let ok = previous_end <= t.start
                && (t.start < t.end() || t.is_wall())
                && (t.end() as usize) <= text.len()
                && text.is_char_boundary(t.start as usize)
                && text.is_char_boundary(t.end() as usize);
            previous_end = t.end();
            ok
        });
        tokens_ok
            && self
                .fingerprints
                .iter()
                .all(|f| (f.pos as usize) < self.tokens.len())
    }
}

/// What a cache is valid for: a hash of everything that changes tokens.
/// Each ignore pattern is hashed with its length, so no two lists of
/// patterns give the same material. The mode is not in it: tokens keep
/// their text and class, and every mode is derived from them.
pub(crate) fn key(normalization: &Normalization, min_tokens: u32) -> u64 {
    let mut material = format!(
        "{}\0{}\0{}\0{}\0case:{}\0imports:{}",
        crate::VERSION,
        crate::engine::tokens::NORMALIZATION_VERSION,
        min_tokens,
        crate::engine::grammar::GRAMMARS_TOML,
        if normalization.ignore_case {
            "ignored"
        } else {
            "kept"
        },
        if normalization.keep_imports {
            "kept"
        } else {
            "dropped"
        },
    );
    for pattern in normalization.ignore_patterns.sources() {
        material.push_str(&format!("\0pattern:{}:{pattern}", pattern.len()));
    }
    xxhash_rust::xxh3::xxh3_64(material.as_bytes())
}

/// The key of the cache of `config`'s scans: the one place every
/// command (the server, `lsp`, `report`) computes it.
pub(crate) fn key_of(config: &Config) -> u64 {
    key(&config.normalization, config.thresholds.min_tokens)
}

/// Where the cache of a cache folder lives.
pub fn file_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// The largest cache read: a larger file is taken for damage, not read.
/// (Some 60 million tokens: far more than a codebase served by one
/// process, whose index must fit in memory too.)
pub(crate) const MAX_CACHE_BYTES: u64 = 1 << 30;

/// Loads the cache of the cache folder `dir` if it is intact and made with
/// `key`; an empty map otherwise (the reason is logged). Temporary files
/// left by runs that were killed while writing are removed first.
pub(crate) fn load(dir: &Path, key: u64) -> HashMap<String, CachedFile> {
    remove_stale_temp_files(dir);
    let path = file_in(dir);
    let bytes = match read_regular_file(&path, MAX_CACHE_BYTES) {
        Ok(bytes) => bytes,
        Err(err) => {
            if err.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("cache {} not read, rebuilding: {err}", path.display());
            }
            return HashMap::new();
        }
    };
    match decode(&bytes, key) {
        Ok(files) => files,
        // Another mode or version is routine; damage is worth a warning.
        Err(OTHER_KEY) => {
            tracing::info!("cache {} not used: {OTHER_KEY}", path.display());
            HashMap::new()
        }
        Err(why) => {
            tracing::warn!("cache {} ignored and rebuilt: {why}", path.display());
            HashMap::new()
        }
    }
}

/// Reads `path` only if it is a regular file of at most `max` bytes: not
/// through a link, never a device or a FIFO (opened without blocking).
fn read_regular_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    if meta.len() > max {
        return Err(refuse(format!(
            "{} bytes, larger than a cache can be ({max})",
            meta.len()
        )));
    }
    // The magic first: a file of another kind (a sparse file of zeros) is
    // refused before it is read whole.
    let mut file = file.take(max + 1);
    let mut bytes = vec![0; MAGIC.len()];
    let magic = file.read_exact(&mut bytes);
    if magic.is_err() || bytes != MAGIC {
        return Err(refuse("not a dupcheck cache".into()));
    }
    bytes.reserve(meta.len() as usize);
    file.read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(refuse("grew while read".into()));
    }
    Ok(bytes)
}

/// The prefix of temporary cache files; the writer's process id follows.
fn temp_prefix() -> String {
    format!("{FILE_NAME}.tmp.")
}

/// Removes the temporary files of writers that are no longer running.
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(&temp_prefix())) else {
            continue;
        };
        if !process_runs(pid) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => tracing::info!(
                    "removed {}, left by an interrupted run",
                    entry.path().display()
                ),
                Err(err) => tracing::warn!("cannot remove {}: {err}", entry.path().display()),
            }
        }
    }
}

/// Whether process `pid` (as text) runs now; on systems without `/proc`,
/// whether it is this process.
fn process_runs(pid: &str) -> bool {
    if pid == std::process::id().to_string() {
        return true;
    }
    let proc = Path::new("/proc");
    proc.is_dir()
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && proc.join(pid).exists()
}

/// Writes the cache of `files` atomically (temporary file, then rename), and
/// the folder's `.gitignore` if missing. A failed write leaves no temporary
/// file behind.
pub(crate) fn save(dir: &Path, key: u64, files: &[Arc<SourceFile>]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(
            &ignore,
            "# Created by dupcheck: its cache never belongs in git.\n*\n",
        )?;
    }
    let bytes = encode(key, files);
    let tmp = dir.join(format!("{}{}", temp_prefix(), std::process::id()));
    let written = (|| {
        let mut out = std::fs::File::create(&tmp)?;
        out.write_all(&bytes)?;
        out.sync_all()?;
        drop(out);
        std::fs::rename(&tmp, file_in(dir))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn encode(key: u64, files: &[Arc<SourceFile>]) -> Vec<u8> {
    let tokens: usize = files
        .iter()
        .map(|f| f.tokens.len() * 16 + f.fingerprints.len() * 12 + 64)
        .sum();
    let mut out = Vec::with_capacity(tokens + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&(files.len() as u64).to_le_bytes());
    for f in files {
        out.extend_from_slice(&(f.rel.len() as u32).to_le_bytes());
        out.extend_from_slice(f.rel.as_bytes());
        for v in [f.meta.size, f.meta.mtime_ns, f.meta.content_hash] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(f.tokens.len() as u32).to_le_bytes());
        for t in &f.tokens {
            let (text, start, len_class) = t.raw();
            out.extend_from_slice(&text.to_le_bytes());
            out.extend_from_slice(&start.to_le_bytes());
            out.extend_from_slice(&len_class.to_le_bytes());
        }
        out.extend_from_slice(&(f.fingerprints.len() as u32).to_le_bytes());
        for p in &f.fingerprints {
            out.extend_from_slice(&p.hash.to_le_bytes());
            out.extend_from_slice(&p.pos.to_le_bytes());
        }
    }
    let checksum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// The files of a cache file's `bytes` made with `key`, or why they cannot
/// be used.
pub fn decode(bytes: &[u8], key: u64) -> Result<HashMap<String, CachedFile>, &'static str> {
    let body_len = bytes.len().checked_sub(8).ok_or("truncated")?;
    let (body, checksum) = bytes.split_at(body_len);
    if !body.starts_with(MAGIC) {
        return Err("not a dupcheck cache");
    }
    let mut r = Reader {
        bytes: &body[MAGIC.len()..],
    };
    if r.u32()? != FORMAT_VERSION {
        return Err("written by another cache format");
    }
    if r.u64()? != key {
        return Err(OTHER_KEY);
    }
    if checksum != xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() {
        return Err("checksum mismatch (corrupt or truncated)");
    }
    let count = r.u64()?;
    let mut files = HashMap::new();
    for _ in 0..count {
        let rel_len = r.u32()? as usize;
        let rel = std::str::from_utf8(r.take(rel_len)?)
            .map_err(|_| "bad path")?
            .to_owned();
        let meta = FileMeta {
            size: r.u64()?,
            mtime_ns: r.u64()?,
            content_hash: r.u64()?,
        };
        let n = r.u32()? as usize;
        let raw = r.take(n.checked_mul(16).ok_or("bad token count")?)?;
        let tokens = raw
            .chunks_exact(16)
            .map(|c| Token::from_raw(le64(&c[..8]), le32(&c[8..12]), le32(&c[12..])))
            .collect::<Option<Vec<Token>>>()
            .ok_or("bad token")?;
        let n = r.u32()? as usize;
        let raw = r.take(n.checked_mul(12).ok_or("bad fingerprint count")?)?;
        let fingerprints = raw
            .chunks_exact(12)
            .map(|c| Fingerprint {
                hash: le64(&c[..8]),
                pos: le32(&c[8..]),
            })
            .collect();
        files.insert(
            rel,
            CachedFile {
                meta,
                tokens,
                fingerprints,
            },
        );
    }
    if !r.bytes.is_empty() {
        return Err("trailing bytes");
    }
    Ok(files)
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(b);
    u64::from_le_bytes(a)
}

fn le32(b: &[u8]) -> u32 {
    let mut a = [0; 4];
    a.copy_from_slice(b);
    u32::from_le_bytes(a)
}

/// A cursor over the cache's bytes; every read fails cleanly past the end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if n > self.bytes.len() {
            return Err("truncated");
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        self.take(4).map(le32)
    }

    fn u64(&mut self) -> Result<u64, &'static str> {
        self.take(8).map(le64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fingerprint::Winnow;
    use crate::engine::grammar::Registry;
    use crate::engine::patterns::IgnorePatterns;
    use crate::engine::tokens::Normalization;

    fn files() -> Vec<Arc<SourceFile>> {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let text = "function f(a) { return a + 1; }\n".repeat(5);
        let meta = FileMeta::of(&text, text.len() as u64, 0);
        vec![Arc::new(
            SourceFile::new(
                "a.js".into(),
                "a.js".into(),
                js,
                text,
                meta,
                &Normalization::default(),
                Winnow::for_min_tokens(10),
            )
            .unwrap(),
        )]
    }

    #[test]
    fn the_key_changes_with_every_normalization_option() {
        let with = |ignore_case: bool, patterns: &[&str]| Normalization {
            ignore_case,
            ignore_patterns: IgnorePatterns::new(patterns).unwrap(),
            keep_imports: false,
        };
        let keeping_imports = Normalization {
            keep_imports: true,
            ..Normalization::default()
        };
        let plain = key(&with(false, &[]), 50);
        assert_eq!(plain, key(&Normalization::default(), 50));
        let keys = [
            plain,
            key(&with(false, &[]), 40),
            key(&with(true, &[]), 50),
            key(&with(false, &["a"]), 50),
            key(&with(false, &["b"]), 50),
            key(&with(false, &["a", "b"]), 50),
            key(&with(false, &["a,b"]), 50),
            key(&with(true, &["a"]), 50),
            key(&keeping_imports, 50),
        ];
        let distinct: crate::engine::hash::HashSet<u64> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), keys.len(), "{keys:x?}");
        // The same options give the same key: a restart reuses its cache.
        assert_eq!(
            key(&with(true, &["a", "b"]), 50),
            key(&with(true, &["a", "b"]), 50)
        );
        assert_eq!(
            decode(&encode(keys[2], &files()), keys[0]).unwrap_err(),
            OTHER_KEY
        );
    }

    #[test]
    fn round_trips() {
        let files = files();
        let loaded = decode(&encode(7, &files), 7).unwrap();
        let entry = &loaded["a.js"];
        assert_eq!(entry.tokens, files[0].tokens);
        assert_eq!(entry.fingerprints, files[0].fingerprints);
        assert_eq!(entry.meta, files[0].meta);
        assert!(entry.fits(&files[0].text));
    }

    #[test]
    fn foreign_corrupt_and_truncated_caches_are_refused() {
        let bytes = encode(7, &files());
        assert_eq!(decode(&bytes, 8).unwrap_err(), OTHER_KEY);
        let mut flipped = bytes.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        assert_eq!(
            decode(&flipped, 7).unwrap_err(),
            "checksum mismatch (corrupt or truncated)"
        );
        for cut in [0, 3, 20, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], 7).is_err(), "cut at {cut}");
        }
        assert_eq!(
            decode(b"{\"not\": \"ours\"}........", 7).unwrap_err(),
            "not a dupcheck cache"
        );
    }

    #[test]
    fn tokens_must_fit_their_text() {
        let files = files();
        let entry = &decode(&encode(7, &files), 7).unwrap()["a.js"];
        assert!(!entry.fits("short"));
    }

    #[test]
    fn save_is_atomic_and_ignored_by_git() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        save(&cache, 7, &files()).unwrap();
        assert_eq!(
            std::fs::read_to_string(cache.join(".gitignore"))
                .unwrap()
                .lines()
                .last(),
            Some("*")
        );
        let names: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(load(&cache, 7).len(), 1);
        assert!(load(&cache, 8).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_of_plausible_size_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        save(&cache, 7, &files()).unwrap();
        let real = file_in(&cache);
        // Through a link, even to the real cache: not read.
        let moved = cache.join("elsewhere.bin");
        std::fs::rename(&real, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &real).unwrap();
        assert!(load(&cache, 7).is_empty());
        // A link to a device that never ends.
        std::fs::remove_file(&real).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &real).unwrap();
        assert!(load(&cache, 7).is_empty());
        // A FIFO with no writer: opening it must not block.
        std::fs::remove_file(&real).unwrap();
        let fifo = std::ffi::CString::new(real.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(load(&cache, 7).is_empty());
        // Larger than a cache can be: refused from its size alone.
        std::fs::remove_file(&real).unwrap();
        std::fs::write(&real, b"x").unwrap();
        let err = read_regular_file(&real, 0).unwrap_err();
        assert_eq!(err.to_string(), "1 bytes, larger than a cache can be (0)");
        // Not a cache: refused after its first bytes.
        let zeros = std::fs::File::create(&real).unwrap();
        zeros.set_len(1 << 20).unwrap();
        let err = read_regular_file(&real, 1 << 30).unwrap_err();
        assert_eq!(err.to_string(), "not a dupcheck cache");
    }

    #[test]
    fn temporary_files_of_dead_writers_are_removed_and_a_failed_write_leaves_none() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        save(&cache, 7, &files()).unwrap();
        let ours = cache.join(format!("{}{}", temp_prefix(), std::process::id()));
        let dead = cache.join(format!("{}{}", temp_prefix(), u32::MAX));
        std::fs::write(&dead, b"half a cache").unwrap();
        std::fs::write(&ours, b"being written").unwrap();
        assert_eq!(load(&cache, 7).len(), 1);
        assert!(!dead.exists());
        assert!(ours.exists(), "this process's own file is left to it");
        std::fs::remove_file(&ours).unwrap();
        // The rename fails (the target is a folder): no temporary file stays.
        std::fs::remove_file(file_in(&cache)).unwrap();
        std::fs::create_dir(file_in(&cache)).unwrap();
        std::fs::write(file_in(&cache).join("x"), b"").unwrap();
        assert!(save(&cache, 7, &files()).is_err());
        assert!(!ours.exists());
    }
}
