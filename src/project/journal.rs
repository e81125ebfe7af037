//! The cache's journal: what updates changed since the cache file was
//! written, appended as they happen, so that the cache stays current
//! without rewriting it (2.6 GB on the Linux kernel) for each saved file.
//!
//! In: the files an update removed and the files it changed or added.
//! Out: `index-v1.journal` beside the cache file; on a start, the cache's
//! files with the journal's records applied in order.
//!
//! Layout (little-endian): magic, the cache's format version and key, and
//! the checksum of the cache file it follows; then records, each the
//! length of its payload, the payload (the removed paths: a count, then
//! each path's length and bytes; the changed files: a count, then each an
//! entry laid out as the cache lays out its own) and the payload's XXH3.
//!
//! Invariants: a journal applies only to the cache whose checksum it names;
//! one that names another (the cache was written anew since) is removed
//! unread. Records are applied whole, in order, up to the first that is
//! torn or damaged (a stop during an append, a broken disk): nothing after
//! it is trusted, and the next append writes over it. An entry the journal
//! gives has no postings in the cache's lists (its number is past theirs):
//! a scan that reuses its tokens fingerprints them.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::engine::index::{Index, SourceFile};
use crate::project::cache::{self, Base, Cached, CachedFile, Reader};

/// The first bytes of a journal.
const MAGIC: &[u8; 16] = b"DUPCHECK-JOURNL\n";
const FILE_NAME: &str = "index-v1.journal";
/// Bytes before the first record: magic, version, key, the cache's checksum.
const HEADER_BYTES: u64 = 16 + 4 + 8 + 8;
/// Bytes a record holds besides its payload: its length and checksum.
const RECORD_FRAME_BYTES: u64 = 8 + 8;

/// Where the journal of a cache folder lives.
fn file_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// The cache of the cache folder `dir` made with `key`, its journal
/// applied ([`cache::load`], then [`apply`]).
pub(crate) fn load(dir: &Path, key: u64) -> Cached {
    let mut cached = cache::load(dir, key);
    apply(dir, key, &mut cached);
    cached
}

/// Writes the cache of `index` anew ([`cache::save`]) and removes the
/// journal of the one it replaces.
pub(crate) fn save(dir: &Path, key: u64, index: &Index) -> std::io::Result<Base> {
    let base = cache::save(dir, key, index)?;
    remove(dir);
    Ok(base)
}

/// Removes the journal of the cache folder `dir`, if there is one.
fn remove(dir: &Path) {
    match std::fs::remove_file(file_in(dir)) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => tracing::warn!("cannot remove {}: {err}", file_in(dir).display()),
    }
}

/// One record: what an update removed, and what it changed or added.
pub(crate) struct Record<'a> {
    /// Paths no longer indexed.
    pub removed: Vec<&'a str>,
    /// Files indexed anew (changed or added), with their tokens.
    pub changed: Vec<&'a SourceFile>,
}

impl Record<'_> {
    /// Whether the record says nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.changed.is_empty()
    }

    /// The record's payload.
    fn payload(&self) -> Vec<u8> {
        let entries: usize = self.changed.iter().map(|f| cache::entry_len(f)).sum();
        let mut out = Vec::with_capacity(8 + entries);
        out.extend_from_slice(&(self.removed.len() as u32).to_le_bytes());
        for rel in &self.removed {
            out.extend_from_slice(&(rel.len() as u32).to_le_bytes());
            out.extend_from_slice(rel.as_bytes());
        }
        out.extend_from_slice(&(self.changed.len() as u32).to_le_bytes());
        for file in &self.changed {
            cache::put_entry(&mut out, file);
        }
        out
    }

    /// The bytes the record takes in a journal.
    pub(crate) fn len(&self) -> u64 {
        let paths: usize = self.removed.iter().map(|r| 4 + r.len()).sum();
        let entries: usize = self.changed.iter().map(|f| cache::entry_len(f)).sum();
        RECORD_FRAME_BYTES + 8 + (paths + entries) as u64
    }
}

/// Appends `record` to the journal of the cache `base` (made with `key`)
/// in the cache folder `dir`, after the valid part `base.journal` counts
/// (a journal of none is begun with its header), and syncs it: once this
/// returns, a start of any later moment reads the record. Counts the bytes
/// written in `base.journal`. A failed append may leave a torn record,
/// which a later one writes over and a start ignores.
pub(crate) fn append(
    dir: &Path,
    key: u64,
    base: &mut Base,
    record: &Record<'_>,
) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut file = options.open(file_in(dir))?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    if base.journal == 0 {
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&cache::FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(&base.checksum.to_le_bytes());
    }
    let payload = record.payload();
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&payload).to_le_bytes());
    // Whatever lies past the valid part (a torn record) goes first.
    file.set_len(base.journal)?;
    file.seek(SeekFrom::Start(base.journal))?;
    file.write_all(&bytes)?;
    file.sync_data()?;
    base.journal += bytes.len() as u64;
    Ok(())
}

/// Applies the journal of the cache folder `dir` to `cached` (the cache
/// file made with `key` that it names, just read): its records in order,
/// up to the first torn or damaged one. Counts the bytes applied in
/// `cached.base`. A journal for another cache is removed; nothing is
/// applied without a cache.
pub(crate) fn apply(dir: &Path, key: u64, cached: &mut Cached) {
    let Some(base) = cached.base.as_mut() else {
        return;
    };
    let path = file_in(dir);
    let (file, len) = match cache::open_regular_file(&path, MAGIC) {
        Ok(opened) => opened,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
        Err(err) => {
            tracing::warn!("journal {} ignored: {err}", path.display());
            return;
        }
    };
    let mut r = Reader::new(std::io::BufReader::with_capacity(1 << 16, file));
    let mut magic = [0; MAGIC.len()];
    let header = r.fill(&mut magic).and_then(|()| {
        Ok((r.u32()?, r.u64()?, r.u64()?) == (cache::FORMAT_VERSION, key, base.checksum))
    });
    if header != Ok(true) {
        tracing::info!("journal {} removed: made for another cache", path.display());
        remove(dir);
        return;
    }
    let (mut at, mut records, mut next) = (HEADER_BYTES, 0, cached.entries);
    while at < len {
        match read_record(&mut r, len - at) {
            Ok((payload, bytes)) => {
                let applied = apply_record(&payload, &mut cached.files, &mut next);
                if let Err(why) = applied {
                    tracing::warn!("journal {}: record {records} {why}", path.display());
                    break;
                }
                at += bytes;
                records += 1;
            }
            Err(why) => {
                // A stop during an append leaves its record torn: routine.
                tracing::info!(
                    "journal {}: {records} records read, the rest ignored ({why})",
                    path.display()
                );
                break;
            }
        }
    }
    base.journal = at;
    tracing::debug!("journal {}: {records} records applied", path.display());
}

/// The next record's payload and the bytes the record takes, with at most
/// `left` bytes of the journal left: a length past them, or a checksum
/// that does not match, is a torn record.
fn read_record<R: Read>(r: &mut Reader<R>, left: u64) -> Result<(Vec<u8>, u64), &'static str> {
    let n = r.u64()?;
    if n > left.saturating_sub(RECORD_FRAME_BYTES) {
        return Err("truncated");
    }
    let payload = r.bytes(n as usize)?;
    if r.u64()? != xxhash_rust::xxh3::xxh3_64(&payload) {
        return Err("checksum mismatch");
    }
    Ok((payload, n + RECORD_FRAME_BYTES))
}

/// Applies one record's `payload` to `files`, numbering the entries it
/// gives from `next` on; nothing is applied unless all of it reads.
fn apply_record(
    payload: &[u8],
    files: &mut crate::engine::hash::HashMap<String, CachedFile>,
    next: &mut usize,
) -> Result<(), &'static str> {
    let mut r = Reader::new(payload);
    let removed = r.u32()? as usize;
    let mut gone = Vec::with_capacity(removed.min(payload.len() / 4));
    for _ in 0..removed {
        let n = r.u32()? as usize;
        gone.push(String::from_utf8(r.bytes(n)?).map_err(|_| "bad path")?);
    }
    let changed = r.u32()? as usize;
    let mut given = Vec::with_capacity(changed.min(payload.len() / 40));
    for _ in 0..changed {
        let entry = u32::try_from(*next + given.len()).map_err(|_| "too many entries")?;
        given.push(r.entry(entry)?);
    }
    if !r.at_end() {
        return Err("trailing bytes");
    }
    for rel in gone {
        files.remove(&rel);
    }
    *next += given.len();
    for (rel, file) in given {
        files.insert(rel, file);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fingerprint::Winnow;
    use crate::engine::grammar::Registry;
    use crate::engine::index::{js_files, FileMeta};
    use crate::engine::tokens::Normalization;
    use std::sync::Arc;

    const A: &str = "function f(a) { return a + 1; }\n";

    fn js(files: &[(&str, &str)]) -> Vec<Arc<SourceFile>> {
        js_files(&Registry::builtin(), files)
    }

    /// A cache folder with a cache of a.js, b.js and c.js written (key 7).
    fn folder() -> (tempfile::TempDir, Base, Index) {
        let dir = tempfile::tempdir().unwrap();
        let files = js(&[("a.js", A), ("b.js", A), ("c.js", "g();\n")]);
        let index = Index::build(files, &Registry::builtin(), Winnow::for_min_tokens(10));
        let base = save(dir.path(), 7, &index).unwrap();
        (dir, base, index)
    }

    fn paths(cached: &Cached) -> Vec<(String, u32)> {
        let mut v: Vec<_> = (cached.files.iter())
            .map(|(rel, f)| (rel.clone(), f.entry))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn records_apply_in_order_on_the_cache_they_follow() {
        let (dir, mut base, _) = folder();
        let changed = js(&[
            ("b.js", "let changed = 1;\nlet more = 2;\n"),
            ("z.js", "z();\n"),
        ]);
        let first = Record {
            removed: vec!["a.js"],
            changed: changed.iter().map(|f| &**f).collect(),
        };
        append(dir.path(), 7, &mut base, &first).unwrap();
        let second = Record {
            removed: vec!["z.js"],
            changed: Vec::new(),
        };
        append(dir.path(), 7, &mut base, &second).unwrap();
        let len = std::fs::metadata(file_in(dir.path())).unwrap().len();
        assert_eq!(base.journal, len);
        assert_eq!(len, HEADER_BYTES + first.len() + second.len());

        let cached = load(dir.path(), 7);
        assert_eq!(cached.base, Some(base));
        // a.js and z.js gone, b.js given anew past the cache's entries.
        let entries = cached.entries as u32;
        assert_eq!(
            paths(&cached),
            [("b.js".into(), entries), ("c.js".into(), 2)]
        );
        let b = &cached.files["b.js"];
        assert_eq!(b.tokens, changed[0].tokens);
        assert_eq!(b.meta, changed[0].meta);
    }

    #[test]
    fn a_torn_record_is_ignored_and_written_over() {
        let (dir, mut base, _) = folder();
        let one = Record {
            removed: vec!["a.js"],
            changed: Vec::new(),
        };
        append(dir.path(), 7, &mut base, &one).unwrap();
        let whole = base.journal;
        // A stop during the second append: half of it on disk.
        let two = Record {
            removed: vec!["b.js"],
            changed: Vec::new(),
        };
        append(dir.path(), 7, &mut base, &two).unwrap();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(file_in(dir.path()))
            .unwrap();
        file.set_len(whole + 5).unwrap();

        let cached = load(dir.path(), 7);
        assert_eq!(cached.base.unwrap().journal, whole);
        assert!(cached.files.contains_key("b.js") && !cached.files.contains_key("a.js"));

        // The next append goes where the valid part ends.
        let mut base = cached.base.unwrap();
        let three = Record {
            removed: vec!["c.js"],
            changed: Vec::new(),
        };
        append(dir.path(), 7, &mut base, &three).unwrap();
        let cached = load(dir.path(), 7);
        assert_eq!(paths(&cached), [("b.js".into(), 1)]);
    }

    #[test]
    fn a_damaged_record_stops_the_journal_there() {
        let (dir, mut base, _) = folder();
        for rel in ["a.js", "b.js"] {
            let record = Record {
                removed: vec![rel],
                changed: Vec::new(),
            };
            append(dir.path(), 7, &mut base, &record).unwrap();
        }
        let mut bytes = std::fs::read(file_in(dir.path())).unwrap();
        let last = bytes.len() - 10;
        bytes[last] ^= 1;
        std::fs::write(file_in(dir.path()), &bytes).unwrap();
        let cached = load(dir.path(), 7);
        assert_eq!(paths(&cached), [("b.js".into(), 1), ("c.js".into(), 2)]);
    }

    #[test]
    fn a_journal_of_another_cache_or_key_is_removed_unread() {
        let (dir, mut base, index) = folder();
        let record = Record {
            removed: vec!["a.js"],
            changed: Vec::new(),
        };
        append(dir.path(), 7, &mut base, &record).unwrap();
        // The cache written anew: its journal goes with the old one.
        save(dir.path(), 7, &index).unwrap();
        assert!(!file_in(dir.path()).exists());

        // A journal naming another cache (a crash between the two steps).
        let mut stale = base;
        stale.journal = 0;
        stale.checksum ^= 1;
        append(dir.path(), 7, &mut stale, &record).unwrap();
        let cached = load(dir.path(), 7);
        assert!(cached.files.contains_key("a.js"));
        assert_eq!(cached.base.unwrap().journal, 0);
        assert!(!file_in(dir.path()).exists());
    }

    #[test]
    fn an_entry_must_fit_its_file_as_in_the_cache() {
        let (dir, mut base, _) = folder();
        // Tokens of a text longer than the size the entry gives.
        let text = "let changed = 1;\n";
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let meta = FileMeta::of(text, 1, 0);
        let file = SourceFile::new(
            "b.js".into(),
            "b.js".into(),
            js,
            text.into(),
            meta,
            &Normalization::default(),
        )
        .unwrap();
        let record = Record {
            removed: Vec::new(),
            changed: vec![&file],
        };
        append(dir.path(), 7, &mut base, &record).unwrap();
        let cached = load(dir.path(), 7);
        assert_eq!(cached.base.unwrap().journal, HEADER_BYTES);
        assert_eq!(cached.files["b.js"].entry, 1);
    }
}
