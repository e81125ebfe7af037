//! Cache: the index persisted between runs, for warm restarts.
//!
//! In: the files of a snapshot. Out: `index-v1.bin` in the cache folder
//! (default `.dupcheck-cache/` inside DIR, which holds a `.gitignore` of `*`),
//! and, on start, the [`CachedFile`]s a scan may reuse instead of parsing.
//!
//! Layout (little-endian): a header (magic, format version, key, entry
//! count, and the entry sections: how many, then each one's length and
//! entries), the entry sections, the tables' section, then an XXH3
//! checksum of each section and one of the header and those checksums
//! (the cache's own, which its journal names). The entries are in path
//! order (path, size, mtime, content hash, tokens as the index
//! packs them: the file's distinct kinds, a byte for the layout, then the
//! starts, per block of 64 tokens a base and per token 2 bytes from it
//! (or each whole), and per token its kind's place, 2 bytes (or 4);
//! definitions; the text's zstd frames when the index
//! keeps it packed, so that a warm start does not compress it again: their
//! length, 0 for a text kept plain and so not stored, then where each
//! block after the first starts and the frames), cut into sections of
//! 32 MB or so. The tables' section holds the tags' mode, each entry's
//! token count, and the index's posting
//! tables (per family, the fingerprints' then the seeds': each its count,
//! the bits of its postings' file, position and tag, a byte per bucket of
//! how many it holds, and its postings packed as the index holds them).
//! Sections are decoded at once, one per core. Tokens and tables are
//! read into the index's own layout, not built again: a warm start that
//! reuses every file keeps each table as read; one that does not keeps
//! the postings of the files it reuses, instead of fingerprinting them and
//! sorting their postings again. The key hashes everything that changes
//! tokens: dupcheck's version, the normalization version, the
//! [`Normalization`] (`--ignoreCase`, `--ignore-pattern`s,
//! `--keep-imports`), `grammars.toml` (and the markup formats whose script
//! formats a slim build lacks), min-tokens. Not the mode: tokens
//! keep their text hash and class, from which every mode's ids are
//! derived, so one cache serves every `--mode`.
//!
//! Invariants: a cache is never trusted. A wrong magic, version, key or
//! checksum, a truncated file, or entries that do not fit their file's text
//! (or a kind's place outside its file's table, or frames not laid out as
//! a packed text's, or a table whose buckets do not hold its postings, or
//! a posting out of order or of no token) make it ignored (and rebuilt);
//! a file is only reused when its size and content hash match. Writes go
//! to a temporary file renamed into place, so a crash never leaves half a
//! cache.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

use crate::engine::definitions::{Definition, Definitions};
use crate::engine::hash::HashMap;
use crate::engine::index::{CachedTable, FileMeta, Index, PostingList, PostingLists, SourceFile};
use crate::engine::text::Frames;
use crate::engine::tokens::{
    Mode, Normalization, PackedTokens, TokenPlaces, TokenStarts, Tokens, TOKEN_BLOCK,
};
use crate::project::config::Config;

/// The first bytes of an index cache file.
pub const MAGIC: &[u8; 16] = b"DUPCHECK-INDEX\n\0";
/// The version of the layout, after the magic.
/// (2: a token's third number packs its length and class; 3: fingerprints
/// are not kept; 4: the index's posting lists are; 5: each entry's
/// definitions follow its tokens; 6: tokens packed, a table of each file's
/// kinds, then per token its start and its kind's place; 7: each entry's
/// packed text follows its definitions; 8: the posting lists' tag mode
/// precedes them, and each posting ends with its tag; 9: tokens and
/// tables as the index holds them; 10: in sections, each with its
/// checksum, read at once.)
pub const FORMAT_VERSION: u32 = 10;
const FILE_NAME: &str = "index-v1.bin";
/// Why a cache made with another key is not used.
const OTHER_KEY: &str =
    "made for another version, case or ignore patterns, grammar set or min-tokens";

/// The tokens of one file, as the cache stored them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedFile {
    /// Its place among the cache's entries: the file its postings name.
    pub entry: u32,
    /// Size, mtime and content hash of the text they were made from.
    pub meta: FileMeta,
    /// Normalized tokens, packed as the index keeps them.
    pub tokens: PackedTokens,
    /// Its definitions.
    pub definitions: Definitions,
    /// Its text's zstd frames, if the index kept it packed.
    pub frames: Option<Frames>,
    /// Whether a scan took the tokens (and so may take the postings).
    pub taken: bool,
}

/// What a cache holds: its files by relative path, and the index's posting
/// lists, whose files are numbered as the entries.
#[derive(Debug, Default)]
pub struct Cached {
    /// The files, by relative path.
    pub files: HashMap<String, CachedFile>,
    /// How many entries there are.
    pub entries: usize,
    /// The posting lists.
    pub(crate) lists: PostingLists,
    /// The cache file these came from, and how much of its journal was
    /// applied (`None` for no cache).
    pub(crate) base: Option<Base>,
}

/// A cache file as written: what its journal names it by, its size, and
/// the length of its journal's valid part (0 for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Base {
    /// The cache's checksum: its journal belongs to it alone.
    pub checksum: u64,
    /// The cache file's size in bytes.
    pub len: u64,
    /// The bytes of its journal that were read whole (appends go after).
    pub journal: u64,
}

impl CachedFile {
    /// Whether these tokens can belong to `text`: every range inside it, on
    /// character boundaries and in order.
    pub fn fits(&self, text: &str) -> bool {
        let mut previous_end = 0;
        // In ASCII every byte starts a character.
        let ascii = text.is_ascii();
        self.tokens.each().all(|t| {
            let ok = previous_end <= t.start
                && (t.start < t.end() || t.is_wall())
                && (t.end() as usize) <= text.len()
                && (ascii
                    || text.is_char_boundary(t.start as usize)
                        && text.is_char_boundary(t.end() as usize));
            previous_end = t.end();
            ok
        })
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
    // A build lacking some formats of a markup format's scripts tokenizes
    // that format otherwise (empty in a full build: its keys are unchanged).
    let partial = crate::engine::grammar::Registry::builtin().tokens_key();
    if !partial.is_empty() {
        material.push_str(&format!("\0partial:{partial}"));
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

/// Loads the cache of the cache folder `dir` if it is intact and made with
/// `key`; an empty map otherwise (the reason is logged). Temporary files
/// left by runs that were killed while writing are removed first.
///
/// The file is read once, its sections at once, each in pieces, never
/// whole, and its checksums made as they are decoded (what was decoded is
/// dropped if one does not match). So a warm start needs no buffer the
/// size of the cache (1.3 GB for the Linux kernel) beside what it
/// decodes, and there is no limit on its size but what its entries
/// describe: each entry's tokens must be few enough for its file's size
/// (see [`Reader::entry`]), so what is decoded is in proportion to the
/// files it stands for.
pub(crate) fn load(dir: &Path, key: u64) -> Cached {
    remove_stale_temp_files(dir);
    let path = file_in(dir);
    let decoded = open_regular_file(&path, MAGIC).map(|(file, len)| decode_source(&file, len, key));
    match decoded {
        Ok(Ok(cached)) => cached,
        Ok(Err(OTHER_KEY)) => {
            // Another mode or version is routine; damage is worth a warning.
            tracing::info!("cache {} not used: {OTHER_KEY}", path.display());
            Cached::default()
        }
        Ok(Err(why)) => {
            tracing::warn!("cache {} ignored and rebuilt: {why}", path.display());
            Cached::default()
        }
        Err(err) => {
            if err.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("cache {} not read, rebuilding: {err}", path.display());
            }
            Cached::default()
        }
    }
}

/// Opens `path` only if it is a regular file that starts with `magic`: not
/// through a link, never a device or a FIFO (opened without blocking); a
/// file of another kind (a sparse file of zeros) is refused after its
/// first bytes. Returns it, rewound, with its length.
pub(crate) fn open_regular_file(
    path: &Path,
    magic: &[u8],
) -> std::io::Result<(std::fs::File, u64)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut file = options.open(path)?;
    let meta = file.metadata()?;
    let refuse = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    if !meta.is_file() {
        return Err(refuse("not a regular file"));
    }
    let mut start = vec![0; magic.len()];
    if file.read_exact(&mut start).is_err() || start != magic {
        return Err(refuse("not a dupcheck cache"));
    }
    file.seek(std::io::SeekFrom::Start(0))?;
    Ok((file, meta.len()))
}

/// The prefix of the temporary files of the cache file `name`; the
/// writer's process id follows.
fn temp_prefix_of(name: &str) -> String {
    format!("{name}.tmp.")
}

/// Removes the temporary files (of any cache file) of writers that are no
/// longer running.
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((_, pid)) = name.to_str().and_then(|n| n.split_once(".tmp.")) else {
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
/// file behind. The cache is written as it is encoded, never held whole in
/// memory.
///
/// Returns the written cache as a [`Base`] for a journal.
pub(crate) fn save(dir: &Path, key: u64, index: &Index) -> std::io::Result<Base> {
    let mut checksum = 0;
    write_atomically(dir, FILE_NAME, |out| {
        checksum = encode_to(out, key, index)?.1;
        Ok(())
    })?;
    Ok(Base {
        checksum,
        len: std::fs::metadata(file_in(dir))?.len(),
        journal: 0,
    })
}

/// Writes the file `name` of the cache folder `dir` with `write`, to a
/// temporary file renamed into place once synced, so that a crash or a
/// stop during the write leaves the previous file whole; and the folder's
/// `.gitignore` if missing. A failed write leaves no temporary file.
pub(crate) fn write_atomically(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(
            &ignore,
            "# Created by dupcheck: its cache never belongs in git.\n*\n",
        )?;
    }
    let tmp = dir.join(format!("{}{}", temp_prefix_of(name), std::process::id()));
    let written = (|| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, dir.join(name))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A writer that hashes what passes through it, section by section.
struct Hashing<W> {
    out: W,
    hasher: xxhash_rust::xxh3::Xxh3Default,
    /// Bytes of this section so far.
    written: u64,
}

impl<W: Write> Hashing<W> {
    fn new(out: W) -> Hashing<W> {
        Hashing {
            out,
            hasher: xxhash_rust::xxh3::Xxh3Default::new(),
            written: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    /// Ends a section: its checksum and length; the next starts.
    fn end_section(&mut self) -> (u64, u64) {
        let sum = (self.hasher.digest(), self.written);
        self.hasher.reset();
        self.written = 0;
        sum
    }
}

/// Writes the cache of `index` made with `key` to `out`; returns `out`
/// and the cache's checksum.
fn encode_to<W: Write>(out: W, key: u64, index: &Index) -> std::io::Result<(W, u64)> {
    let lists = index.posting_lists().collect();
    encode_parts(out, key, &index.files, (index.winnow.tags, lists))
}

/// Writes a cache of `files` and posting `lists` (tagged in `tags`' mode)
/// made with `key` to `out`; returns `out` and the cache's checksum.
fn encode_parts<W: Write>(
    out: W,
    key: u64,
    files: &[Arc<SourceFile>],
    lists: (Mode, Vec<PostingList<'_>>),
) -> std::io::Result<(W, u64)> {
    encode_in_sections(out, key, files, lists, SECTION_ENTRY_BYTES)
}

/// [`encode_parts`], with entry sections of at least `per_section` bytes
/// (the last holds what is left).
fn encode_in_sections<W: Write>(
    mut out: W,
    key: u64,
    files: &[Arc<SourceFile>],
    (tags, lists): (Mode, Vec<PostingList<'_>>),
    per_section: u64,
) -> std::io::Result<(W, u64)> {
    let mut sections: Vec<(u64, u32)> = Vec::new();
    let mut open = None;
    for file in files {
        let (bytes, entries) = open.get_or_insert((0, 0));
        *bytes += entry_len(file) as u64;
        *entries += 1;
        if *bytes >= per_section {
            sections.extend(open.take());
        }
    }
    sections.extend(open);
    let mut header = Vec::with_capacity(HEADER_BYTES + sections.len() * SECTION_BYTES);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&key.to_le_bytes());
    header.extend_from_slice(&(files.len() as u64).to_le_bytes());
    header.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for (bytes, entries) in &sections {
        header.extend_from_slice(&bytes.to_le_bytes());
        header.extend_from_slice(&entries.to_le_bytes());
    }
    out.write_all(&header)?;
    let mut out = Hashing::new(out);
    let mut sums = Vec::with_capacity(sections.len() + 1);
    let mut piece = Vec::with_capacity(1 << 16);
    let mut entries = files.iter();
    for &(bytes, count) in &sections {
        for file in entries.by_ref().take(count as usize) {
            piece.clear();
            put_entry(&mut piece, file);
            out.put(&piece)?;
        }
        let (sum, written) = out.end_section();
        if written != bytes {
            return Err(std::io::Error::other("an entry's length was miscounted"));
        }
        sums.push(sum);
    }
    out.put(&[tag_code(tags)])?;
    out.put(&(lists.len() as u32).to_le_bytes())?;
    piece.clear();
    put_all(
        &mut piece,
        files.iter().map(|f| (f.tokens.len() as u32).to_le_bytes()),
    );
    out.put(&piece)?;
    for list in lists {
        piece.clear();
        put_table_head(&mut piece, &list);
        out.put(&piece)?;
        out.put(list.records())?;
    }
    sums.push(out.end_section().0);
    let mut out = out.out;
    let sums: Vec<u8> = sums.iter().flat_map(|s| s.to_le_bytes()).collect();
    let checksum = own_checksum(&header, &sums);
    out.write_all(&sums)?;
    out.write_all(&checksum.to_le_bytes())?;
    Ok((out, checksum))
}

/// A cache's own checksum, what its journal names it by: of its header
/// and its sections' checksums (`sums`), and so of all of it.
fn own_checksum(header: &[u8], sums: &[u8]) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3Default::new();
    hasher.update(header);
    hasher.update(sums);
    hasher.digest()
}

/// `bytes`, a cache's header and sections, with the checksums its header
/// calls for appended, as [`encode_parts`] ends a cache. Sections the
/// bytes do not hold are checksummed as what is left of them: a damaged
/// header is sealed too (to try the decoder on it).
#[doc(hidden)]
pub fn seal(mut bytes: Vec<u8>) -> Vec<u8> {
    let at = |i: usize, n: usize| {
        let mut number = [0; 8];
        if let Some(b) = bytes.get(i..i + n) {
            number[..n].copy_from_slice(b);
        }
        u64::from_le_bytes(number)
    };
    let count = (at(HEADER_BYTES - 4, 4) as usize).min(MOST_SECTIONS as usize);
    let header = (HEADER_BYTES + count * SECTION_BYTES).min(bytes.len());
    let mut start = header;
    let mut sums = Vec::with_capacity(8 * (count + 1));
    for i in 0..count {
        let len = at(HEADER_BYTES + i * SECTION_BYTES, 8);
        let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
        let end = end.min(bytes.len());
        sums.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&bytes[start..end]).to_le_bytes());
        start = end;
    }
    sums.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&bytes[start..]).to_le_bytes());
    let checksum = own_checksum(&bytes[..header], &sums);
    bytes.extend_from_slice(&sums);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    bytes
}

/// Appends what comes before a posting table's records to `piece`: how
/// many postings, the bits of their file, position and tag, a byte per
/// bucket of how many it holds ([`BIG_BUCKET`]: that many or more), and
/// how many those buckets hold each.
fn put_table_head(piece: &mut Vec<u8>, list: &PostingList<'_>) {
    piece.extend_from_slice(&(list.len() as u64).to_le_bytes());
    piece.extend(list.bits().map(|b| b as u8));
    let mut big = Vec::new();
    for size in list.bucket_sizes() {
        piece.push(size.min(u32::from(BIG_BUCKET)) as u8);
        if size >= u32::from(BIG_BUCKET) {
            big.push(size);
        }
    }
    piece.extend_from_slice(&(big.len() as u32).to_le_bytes());
    put_all(piece, big.iter().map(|b| b.to_le_bytes()));
}

/// Appends the entry of `file` (path, size, mtime, content hash, tokens,
/// definitions) to `piece`: as the cache lays out its entries, and its
/// journal too.
pub(super) fn put_entry(piece: &mut Vec<u8>, file: &SourceFile) {
    piece.extend_from_slice(&(file.rel.len() as u32).to_le_bytes());
    piece.extend_from_slice(file.rel.as_bytes());
    for v in [file.meta.size, file.meta.mtime_ns, file.meta.content_hash] {
        piece.extend_from_slice(&v.to_le_bytes());
    }
    let kinds = file.tokens.kinds();
    piece.extend_from_slice(&(kinds.len() as u32).to_le_bytes());
    for (text, len_class) in kinds {
        piece.extend_from_slice(&text.to_le_bytes());
        piece.extend_from_slice(&len_class.to_le_bytes());
    }
    piece.extend_from_slice(&(file.tokens.len() as u32).to_le_bytes());
    let (starts, places) = file.tokens.parts();
    let wide_starts = matches!(starts, TokenStarts::Wide(_));
    let wide_places = matches!(places, TokenPlaces::Wide(_));
    piece.push(
        if wide_starts { WIDE_STARTS } else { 0 } | if wide_places { WIDE_PLACES } else { 0 },
    );
    match starts {
        TokenStarts::Narrow { bases, offsets } => {
            put_all(piece, bases.iter().map(|b| b.to_le_bytes()));
            put_all(piece, offsets.iter().map(|o| o.to_le_bytes()));
        }
        TokenStarts::Wide(starts) => put_all(piece, starts.iter().map(|s| s.to_le_bytes())),
    }
    match places {
        TokenPlaces::Narrow(places) => put_all(piece, places.iter().map(|p| p.to_le_bytes())),
        TokenPlaces::Wide(places) => put_all(piece, places.iter().map(|p| p.to_le_bytes())),
    }
    let definitions = file.definitions.as_slice();
    piece.extend_from_slice(&(definitions.len() as u32).to_le_bytes());
    for d in definitions {
        piece.extend_from_slice(&d.start.to_le_bytes());
        piece.extend_from_slice(&d.end.to_le_bytes());
        piece.extend_from_slice(&d.name_start.to_le_bytes());
        piece.extend_from_slice(&d.name_len.to_le_bytes());
        piece.extend_from_slice(&d.packed.to_le_bytes());
    }
    match file.text.frames() {
        None => piece.extend_from_slice(&0u32.to_le_bytes()),
        Some((bytes, cuts)) => {
            piece.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            piece.extend_from_slice(&(cuts.len() as u32).to_le_bytes());
            for (text, frame) in cuts {
                piece.extend_from_slice(&text.to_le_bytes());
                piece.extend_from_slice(&frame.to_le_bytes());
            }
            piece.extend_from_slice(bytes);
        }
    }
}

/// Appends each of `items` (numbers' little-endian bytes) to `piece`.
fn put_all<const N: usize>(piece: &mut Vec<u8>, items: impl ExactSizeIterator<Item = [u8; N]>) {
    piece.reserve(items.len() * N);
    for item in items {
        piece.extend_from_slice(&item);
    }
}

/// The bytes [`put_entry`] writes for the tokens' starts and places.
fn packed_len(tokens: &PackedTokens) -> usize {
    let (starts, places) = tokens.parts();
    let starts = match starts {
        TokenStarts::Narrow { bases, offsets } => bases.len() * 4 + offsets.len() * 2,
        TokenStarts::Wide(starts) => starts.len() * 4,
    };
    let places = match places {
        TokenPlaces::Narrow(places) => places.len() * 2,
        TokenPlaces::Wide(places) => places.len() * 4,
    };
    1 + starts + places
}

/// The bytes [`put_entry`] writes for `file`.
pub(super) fn entry_len(file: &SourceFile) -> usize {
    4 + file.rel.len()
        + 24
        + 4
        + file.tokens.kinds().len() * KIND_BYTES
        + 4
        + packed_len(&file.tokens)
        + 4
        + file.definitions.as_slice().len() * DEFINITION_BYTES
        + 4
        + file
            .text
            .frames()
            .map_or(0, |(bytes, cuts)| 4 + cuts.len() * CUT_BYTES + bytes.len())
}

/// The bytes of the cache of `index` made with `key`.
#[cfg(test)]
fn encode(key: u64, index: &Index) -> Vec<u8> {
    encode_to(Vec::new(), key, index)
        .expect("writing to memory does not fail")
        .0
}

/// The files of a cache file's `bytes` made with `key`, or why they cannot
/// be used.
pub fn decode(bytes: &[u8], key: u64) -> Result<Cached, &'static str> {
    decode_source(bytes, bytes.len() as u64, key)
}

/// Bytes per kind (text hash, length and class) in a cache entry.
const KIND_BYTES: usize = 12;

/// In the byte before an entry's starts and places: its starts are whole
/// (not a base per block and 2 bytes a token).
const WIDE_STARTS: u8 = 1;

/// In the byte before an entry's starts and places: its places take 4
/// bytes (not 2).
const WIDE_PLACES: u8 = 2;

/// Bytes per definition in a cache entry.
const DEFINITION_BYTES: usize = 16;

/// Bytes per block start of a packed text in a cache entry.
const CUT_BYTES: usize = 8;

/// A bucket's byte in a posting table that holds this many postings or
/// more: its size follows the bytes, among the big ones'.
const BIG_BUCKET: u8 = u8::MAX;

/// The byte that stands for the mode of the posting lists' tags.
fn tag_code(mode: Mode) -> u8 {
    match mode {
        Mode::Weak => 0,
        Mode::Strict => 1,
        Mode::Mild => 2,
    }
}

/// The most posting lists a cache holds: two per family, and no grammar
/// set has this many families.
const MOST_LISTS: u32 = 256;

/// The most tokens a file of `size` bytes can have: one per byte, and a
/// wall between any two.
fn most_tokens(size: u64) -> u64 {
    size.saturating_mul(2).saturating_add(1)
}

/// Bytes of a cache's header before its sections' table: magic, format
/// version, key, entry count, count of entry sections.
const HEADER_BYTES: usize = MAGIC.len() + 4 + 8 + 8 + 4;

/// Bytes per entry section in the header: its length and its entries.
const SECTION_BYTES: usize = 12;

/// Bytes of entries an entry section holds at least (the last holds what
/// is left): sections enough for every core to decode some, each worth a
/// thread's turn.
const SECTION_ENTRY_BYTES: u64 = 32 << 20;

/// The most entry sections a cache may have.
const MOST_SECTIONS: u32 = 1 << 16;

/// Why a cache whose bytes do not hash to its checksums is refused.
const CORRUPT: &str = "checksum mismatch (corrupt or truncated)";

/// Where a cache's sections lie, as its header tells.
struct Layout {
    /// How many entries there are.
    entries: u32,
    /// The entry sections, in order.
    sections: Vec<Span>,
    /// The tables' section.
    tables: Span,
    /// The checksum of each section, the tables' last.
    sums: Vec<u64>,
    /// The cache's own checksum.
    checksum: u64,
}

/// A section of a cache: its first byte, its length and the entries it
/// holds, numbered from `first`.
#[derive(Clone, Copy)]
struct Span {
    at: u64,
    len: u64,
    first: u32,
    entries: u32,
}

/// The layout of the cache of `len` bytes in `source` made with `key`,
/// from its header and trailer, which its own checksum covers.
fn layout<S: Source + ?Sized>(source: &S, len: u64, key: u64) -> Result<Layout, &'static str> {
    let mut header = vec![0; (HEADER_BYTES as u64).min(len) as usize];
    source.read_exact_at(&mut header, 0)?;
    let mut r = Reader::new(&header[..]);
    let mut magic = [0; MAGIC.len()];
    r.fill(&mut magic)?;
    if &magic != MAGIC {
        return Err("not a dupcheck cache");
    }
    // The frame first: a cache of another key is told apart from damage.
    r.frame(key)?;
    let entries = u32::try_from(r.u64()?).map_err(|_| "bad sections")?;
    let count = r.u32()?;
    if count > MOST_SECTIONS {
        return Err("bad sections");
    }
    let trailer = 8 * (u64::from(count) + 2);
    let header_len = HEADER_BYTES + count as usize * SECTION_BYTES;
    let body_end = len
        .checked_sub(trailer)
        .filter(|&end| end >= header_len as u64)
        .ok_or("truncated")?;
    header.resize(header_len, 0);
    source.read_exact_at(&mut header[HEADER_BYTES..], HEADER_BYTES as u64)?;
    let mut sums = vec![0; trailer as usize];
    source.read_exact_at(&mut sums, body_end)?;
    let (sums, checksum) = sums.split_at(sums.len() - 8);
    let checksum = le64(checksum);
    if own_checksum(&header, sums) != checksum {
        return Err(CORRUPT);
    }
    let mut r = Reader::new(&header[HEADER_BYTES..]);
    let (mut at, mut first) = (header_len as u64, 0u32);
    let mut sections = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let (len, entries) = (r.u64()?, r.u32()?);
        let end = at.checked_add(len).filter(|&end| end <= body_end);
        sections.push(Span {
            at,
            len: end.ok_or("bad sections")? - at,
            first,
            entries,
        });
        at += len;
        first = first.checked_add(entries).ok_or("bad sections")?;
    }
    if first != entries {
        return Err("bad sections");
    }
    Ok(Layout {
        entries,
        sections,
        tables: Span {
            at,
            len: body_end - at,
            first: 0,
            entries: 0,
        },
        sums: sums.chunks_exact(8).map(le64).collect(),
        checksum,
    })
}

/// The files of the cache of `len` bytes in `source` made with `key`, or
/// why they cannot be used.
///
/// Its sections are decoded at once, one per core at a time (the tables
/// first: they are the biggest), each read in pieces and hashed as it is
/// decoded; what was decoded is dropped if a checksum does not match. A
/// section found damaged is said to be so (its checksum) before what its
/// decoding stumbled on.
fn decode_source<S: Source + ?Sized>(
    source: &S,
    len: u64,
    key: u64,
) -> Result<Cached, &'static str> {
    let layout = layout(source, len, key)?;
    let sections: Vec<_> = layout.sections.iter().map(|_| Mutex::default()).collect();
    let tables = Mutex::default();
    let next = AtomicUsize::new(0);
    // Work item 0 is the tables' section, item s + 1 entry section s.
    let work = || loop {
        let item = next.fetch_add(1, Ordering::Relaxed);
        if item == 0 {
            let sum = layout.sums[layout.sections.len()];
            let mut r = Reader::new(Section::new(source, layout.tables));
            *lock(&tables) = Some(r.checked(sum, |r| r.tables(layout.entries)));
        } else if let Some(&span) = layout.sections.get(item - 1) {
            let mut r = Reader::new(Section::new(source, span));
            let decoded = r.checked(layout.sums[item - 1], |r| r.entries(span));
            *lock(&sections[item - 1]) = Some(decoded);
        } else {
            break;
        }
    };
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for n in 1..workers.min(sections.len() + 1) {
            let helper = std::thread::Builder::new().name(format!("cache read {n}"));
            // Without a helper, this thread does its share.
            let _ = helper.spawn_scoped(scope, work);
        }
        work();
    });
    let mut files = HashMap::default();
    files.reserve(layout.entries as usize);
    let mut last: Option<String> = None;
    for section in sections {
        let section = lock(&section).take().ok_or("a section was not read")??;
        if let (Some(last), Some((first, _))) = (&last, section.first()) {
            if first <= last {
                return Err("entries out of order");
            }
        }
        last = section.last().map(|(rel, _)| rel.clone()).or(last);
        files.extend(section);
    }
    let (tags, tokens, mut postings) = lock(&tables).take().ok_or("the tables were not read")??;
    if (files.values()).any(|f| tokens.get(f.entry as usize) != Some(&(f.tokens.len() as u32))) {
        return Err("bad posting lists");
    }
    let seeds = postings.split_off(postings.len() / 2);
    Ok(Cached {
        files,
        entries: layout.entries as usize,
        lists: PostingLists {
            postings,
            seeds,
            tags,
        },
        base: Some(Base {
            checksum: layout.checksum,
            len,
            journal: 0,
        }),
    })
}

/// The value a mutex guards, even if a thread panicked holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The posting tables' section: the tags' mode, each entry's token count,
/// the tables.
type Tables = (Mode, Box<[u32]>, Vec<CachedTable>);

impl<S: Source + ?Sized> Reader<Section<'_, S>> {
    /// The next `n` bytes, in a vector with `room` bytes more to spare;
    /// `n` is refused beyond the bytes left, before anything is allocated.
    fn bytes_with_room(&mut self, n: usize, room: usize) -> Result<Vec<u8>, &'static str> {
        if n as u64 > self.input.left() {
            return Err("truncated");
        }
        self.read_into(Vec::with_capacity(n + room), n)
    }

    /// The next posting table, as [`put_table_head`] and the records lay
    /// it out, whose postings' files and positions `valid` accepts.
    fn table(&mut self, valid: impl Fn(u32, u32) -> bool) -> Result<CachedTable, &'static str> {
        let bad = "bad posting list";
        let len = usize::try_from(self.u64()?).map_err(|_| bad)?;
        let mut bits = [0; 3];
        self.fill(&mut bits)?;
        let bits = bits.map(u32::from);
        let small = self.bytes_with_room(CachedTable::buckets(len), 0)?;
        let big = self.u32()? as usize;
        if big > small.len() {
            return Err(bad);
        }
        let big = self.u32s(big)?;
        let mut bigs = big.iter().copied();
        let sizes: Vec<u32> = (small.iter())
            .map(|&b| match b {
                BIG_BUCKET => bigs.next(),
                b => Some(u32::from(b)),
            })
            .collect::<Option<_>>()
            .ok_or(bad)?;
        if bigs.next().is_some() {
            return Err(bad);
        }
        let width = CachedTable::width(len, bits).ok_or(bad)?;
        let records =
            self.bytes_with_room(len.checked_mul(width).ok_or(bad)?, CachedTable::PADDING)?;
        CachedTable::from_parts(len, bits, &sizes, records, valid).ok_or(bad)
    }

    /// What `decode` makes of the section, if every byte of it is used
    /// and its checksum is `sum`.
    fn checked<T>(
        &mut self,
        sum: u64,
        decode: impl FnOnce(&mut Self) -> Result<T, &'static str>,
    ) -> Result<T, &'static str> {
        let decoded = decode(self).and_then(|t| match self.input.left() {
            0 => Ok(t),
            _ => Err("trailing bytes"),
        });
        match self.input.finish() {
            Ok(made) if made == sum => decoded,
            _ => Err(CORRUPT),
        }
    }

    /// The entries of the section `span`, in path order.
    fn entries(&mut self, span: Span) -> Result<Vec<(String, CachedFile)>, &'static str> {
        let mut entries: Vec<(String, CachedFile)> = Vec::new();
        for entry in span.first..span.first + span.entries {
            let (rel, file) = self.entry(entry)?;
            // In path order, as the index numbers its files (a posting
            // list stays sorted as the entries become a scan's files).
            if entries.last().is_some_and(|(last, _)| rel <= *last) {
                return Err("entries out of order");
            }
            entries.push((rel, file));
        }
        Ok(entries)
    }

    /// The tables' section of a cache of `entries` entries, whose postings
    /// each name an entry and one of its tokens (as its count says).
    fn tables(&mut self, entries: u32) -> Result<Tables, &'static str> {
        let code = self.u8()?;
        let tags = [Mode::Weak, Mode::Strict, Mode::Mild]
            .into_iter()
            .find(|&m| tag_code(m) == code)
            .ok_or("bad tag mode")?;
        let lists = self.u32()?;
        if lists % 2 != 0 || lists > MOST_LISTS {
            return Err("bad posting lists");
        }
        let tokens = self.u32s(entries as usize)?;
        let valid = |file: u32, pos: u32| tokens.get(file as usize).is_some_and(|&n| pos < n);
        let tables = (0..lists)
            .map(|_| self.table(valid))
            .collect::<Result<_, _>>()?;
        Ok((tags, tokens, tables))
    }
}

/// Bytes a cache is read from, at any offset, by several threads at once.
pub(super) trait Source: Sync {
    /// Reads bytes from `at` on into `into`: how many (0 past the end).
    fn read_at(&self, into: &mut [u8], at: u64) -> std::io::Result<usize>;

    /// Fills `into` with the bytes from `at` on.
    fn read_exact_at(&self, mut into: &mut [u8], mut at: u64) -> Result<(), &'static str> {
        while !into.is_empty() {
            match self.read_some_at(into, at) {
                Ok(0) | Err(_) => return Err("truncated"),
                Ok(n) => {
                    into = &mut into[n..];
                    at += n as u64;
                }
            }
        }
        Ok(())
    }

    /// [`Source::read_at`], again when a signal interrupts it.
    fn read_some_at(&self, into: &mut [u8], at: u64) -> std::io::Result<usize> {
        loop {
            match self.read_at(into, at) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                read => return read,
            }
        }
    }
}

impl Source for [u8] {
    fn read_at(&self, into: &mut [u8], at: u64) -> std::io::Result<usize> {
        let rest = usize::try_from(at).ok().and_then(|at| self.get(at..));
        let rest = rest.unwrap_or_default();
        let n = into.len().min(rest.len());
        into[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

impl Source for std::fs::File {
    #[cfg(unix)]
    fn read_at(&self, into: &mut [u8], at: u64) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, into, at)
    }

    #[cfg(windows)]
    fn read_at(&self, into: &mut [u8], at: u64) -> std::io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, into, at)
    }
}

/// A section of a cache, read in order through a buffer of its own and
/// hashed as it is read.
pub(super) struct Section<'a, S: ?Sized> {
    source: &'a S,
    /// The next byte not read into the buffer, and the section's end.
    next: u64,
    end: u64,
    buffer: Box<[u8]>,
    /// The buffer's bytes not read yet.
    at: usize,
    filled: usize,
    hasher: xxhash_rust::xxh3::Xxh3Default,
}

impl<'a, S: Source + ?Sized> Section<'a, S> {
    /// Bytes read at a time (reads as long go straight to the reader).
    const BUFFER: usize = 256 << 10;

    fn new(source: &'a S, span: Span) -> Section<'a, S> {
        Section {
            source,
            next: span.at,
            end: span.at + span.len,
            buffer: vec![0; Section::<S>::BUFFER].into_boxed_slice(),
            at: 0,
            filled: 0,
            hasher: xxhash_rust::xxh3::Xxh3Default::new(),
        }
    }

    /// Reads the next bytes of the section into `into`, hashed.
    fn read_source(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end - self.next).unwrap_or(usize::MAX);
        let want = left.min(into.len());
        let into = &mut into[..want];
        if into.is_empty() {
            return Ok(0);
        }
        let n = self.source.read_some_at(into, self.next)?;
        self.hasher.update(&into[..n]);
        self.next += n as u64;
        Ok(n)
    }

    /// Bytes of the section not read yet.
    fn left(&self) -> u64 {
        (self.end - self.next) + (self.filled - self.at) as u64
    }

    /// The section's checksum, once the rest of it is read.
    fn finish(&mut self) -> Result<u64, &'static str> {
        let mut buffer = std::mem::take(&mut self.buffer);
        while self.next < self.end {
            match self.read_source(&mut buffer) {
                Ok(0) | Err(_) => return Err("truncated"),
                Ok(_) => {}
            }
        }
        Ok(self.hasher.digest())
    }
}

impl<S: Source + ?Sized> std::io::Read for Section<'_, S> {
    fn read(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.filled {
            if into.len() >= self.buffer.len() {
                return self.read_source(into);
            }
            let mut buffer = std::mem::take(&mut self.buffer);
            let read = self.read_source(&mut buffer);
            self.buffer = buffer;
            (self.at, self.filled) = (0, read?);
        }
        let n = into.len().min(self.filled - self.at);
        into[..n].copy_from_slice(&self.buffer[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
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
pub(super) struct Reader<R> {
    input: R,
}

impl<R: std::io::Read> Reader<R> {
    pub(super) fn new(input: R) -> Reader<R> {
        Reader { input }
    }

    pub(super) fn fill(&mut self, into: &mut [u8]) -> Result<(), &'static str> {
        self.input.read_exact(into).map_err(|_| "truncated")
    }

    /// The next `n` bytes, read in pieces (a damaged length allocates no
    /// more than the input holds).
    pub(super) fn bytes(&mut self, n: usize) -> Result<Vec<u8>, &'static str> {
        self.read_into(Vec::with_capacity(n.min(1 << 24)), n)
    }

    /// `out` with the next `n` bytes appended (its capacity is what is
    /// allocated before they are read).
    fn read_into(&mut self, mut out: Vec<u8>, n: usize) -> Result<Vec<u8>, &'static str> {
        (&mut self.input)
            .take(n as u64)
            .read_to_end(&mut out)
            .map_err(|_| "truncated")?;
        if out.len() < n {
            return Err("truncated");
        }
        Ok(out)
    }

    /// `n` records of `N` bytes each, each made by `make` (`None`: the
    /// record is refused, for `bad`), read in pieces (a damaged count
    /// allocates no more than the input holds). The vector is exactly as
    /// long as its records: a scan keeps it as the index's own.
    fn records<const N: usize, T>(
        &mut self,
        n: usize,
        bad: &'static str,
        make: impl Fn(&[u8]) -> Option<T>,
    ) -> Result<Vec<T>, &'static str> {
        let mut out = Vec::with_capacity(n.min(Self::per_piece(N)));
        self.pieces::<N>(n, |records| {
            for record in records {
                out.push(make(record).ok_or(bad)?);
            }
            Ok(())
        })?;
        out.shrink_to_fit();
        Ok(out)
    }

    /// Records of `N` bytes per piece read.
    const fn per_piece(n: usize) -> usize {
        (1 << 16) / n
    }

    /// The next `n` records of `N` bytes each, given to `each` a piece at
    /// a time (a damaged count allocates no more than the input holds;
    /// the piece no more than the records).
    fn pieces<const N: usize>(
        &mut self,
        n: usize,
        mut each: impl FnMut(&[[u8; N]]) -> Result<(), &'static str>,
    ) -> Result<(), &'static str> {
        let per_piece = Self::per_piece(N);
        let mut piece = vec![0u8; n.min(per_piece) * N];
        let mut left = n;
        while left > 0 {
            let count = left.min(per_piece);
            let bytes = &mut piece[..count * N];
            self.fill(bytes)?;
            each(bytes.as_chunks::<N>().0)?;
            left -= count;
        }
        Ok(())
    }

    pub(super) fn u8(&mut self) -> Result<u8, &'static str> {
        let mut b = [0; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    /// The next `n` numbers of `N` bytes each, as `from` reads them (in
    /// one pass a compiler can vectorize: there is no record to refuse).
    fn numbers<const N: usize, T>(
        &mut self,
        n: usize,
        from: fn([u8; N]) -> T,
    ) -> Result<Box<[T]>, &'static str> {
        let mut out = Vec::with_capacity(n.min(Self::per_piece(N)));
        self.pieces::<N>(n, |numbers| {
            out.extend(numbers.iter().map(|&b| from(b)));
            Ok(())
        })?;
        Ok(out.into_boxed_slice())
    }

    /// The next `n` numbers of 2 bytes.
    fn u16s(&mut self, n: usize) -> Result<Box<[u16]>, &'static str> {
        self.numbers(n, u16::from_le_bytes)
    }

    /// The next `n` numbers of 4 bytes.
    fn u32s(&mut self, n: usize) -> Result<Box<[u32]>, &'static str> {
        self.numbers(n, u32::from_le_bytes)
    }

    pub(super) fn u32(&mut self) -> Result<u32, &'static str> {
        let mut b = [0; 4];
        self.fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(super) fn u64(&mut self) -> Result<u64, &'static str> {
        let mut b = [0; 8];
        self.fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Entry number `entry`, as [`put_entry`] lays it out: its path,
    /// metadata, tokens, which must be few enough for its file's size,
    /// definitions, each inside the file, sorted, of a known kind, and its
    /// text's frames, laid out as a packed text's.
    pub(super) fn entry(&mut self, entry: u32) -> Result<(String, CachedFile), &'static str> {
        let rel_len = self.u32()? as usize;
        let rel = String::from_utf8(self.bytes(rel_len)?).map_err(|_| "bad path")?;
        let meta = FileMeta {
            size: self.u64()?,
            mtime_ns: self.u64()?,
            content_hash: self.u64()?,
        };
        let n = self.u32()?;
        if u64::from(n) > most_tokens(meta.size) {
            return Err("more kinds of token than the file can have");
        }
        let kinds = self.records::<KIND_BYTES, _>(n as usize, "bad token", |c| {
            Some((le64(&c[..8]), le32(&c[8..])))
        })?;
        let n = self.u32()?;
        if u64::from(n) > most_tokens(meta.size) {
            return Err("more tokens than the file can have");
        }
        let n = n as usize;
        let layout = self.u8()?;
        if layout & !(WIDE_STARTS | WIDE_PLACES) != 0 {
            return Err("bad token");
        }
        let starts = match layout & WIDE_STARTS {
            0 => TokenStarts::Narrow {
                bases: self.u32s(n.div_ceil(TOKEN_BLOCK))?,
                offsets: self.u16s(n)?,
            },
            _ => TokenStarts::Wide(self.u32s(n)?),
        };
        let places = match layout & WIDE_PLACES {
            0 => TokenPlaces::Narrow(self.u16s(n)?),
            _ => TokenPlaces::Wide(self.u32s(n)?),
        };
        let tokens = PackedTokens::from_parts(kinds, starts, places).ok_or("bad token")?;
        let n = self.u32()?;
        if u64::from(n) > meta.size {
            return Err("more definitions than the file can have");
        }
        let definitions =
            self.records::<DEFINITION_BYTES, _>(n as usize, "bad definition", |c| {
                let d = Definition {
                    start: le32(&c[..4]),
                    end: le32(&c[4..8]),
                    name_start: le32(&c[8..12]),
                    name_len: u16::from_le_bytes([c[12], c[13]]),
                    packed: u16::from_le_bytes([c[14], c[15]]),
                };
                d.fits(meta.size).then_some(d)
            })?;
        let definitions = Definitions::checked(definitions).ok_or("definitions out of order")?;
        let packed = self.u32()? as usize;
        let frames = match packed {
            0 => None,
            _ if packed as u64 >= meta.size => return Err("a packed text larger than its file"),
            _ => {
                let n = self.u32()? as usize;
                if n > packed {
                    return Err("more blocks than the packed text can have");
                }
                let cuts = self.records::<CUT_BYTES, _>(n, "bad block", |c| {
                    Some((le32(&c[..4]), le32(&c[4..])))
                })?;
                let frames = Frames {
                    bytes: self.bytes(packed)?,
                    cuts,
                };
                let size = usize::try_from(meta.size).map_err(|_| "bad size")?;
                if !frames.fit(size) {
                    return Err("bad blocks");
                }
                Some(frames)
            }
        };
        let file = CachedFile {
            entry,
            meta,
            tokens,
            definitions,
            frames,
            taken: false,
        };
        Ok((rel, file))
    }

    /// The version and key after the magic: the layout must be this one and
    /// the key `key`.
    fn frame(&mut self, key: u64) -> Result<(), &'static str> {
        if self.u32()? != FORMAT_VERSION {
            return Err("written by another cache format");
        }
        if self.u64()? != key {
            return Err(OTHER_KEY);
        }
        Ok(())
    }

    /// Whether nothing is left to read.
    pub(super) fn at_end(&mut self) -> bool {
        let mut one = [0; 1];
        matches!(self.input.read(&mut one), Ok(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::index::{Posting, SourceFile};
    use crate::engine::patterns::IgnorePatterns;
    use crate::engine::tokens::Normalization;
    use std::sync::Arc;

    /// An index of two JavaScript files sharing a function, and of one
    /// Python file.
    fn index() -> Index {
        let registry = Registry::builtin();
        let text = "function f(a) { return a + 1; }\n".repeat(5);
        let mut files =
            crate::engine::index::js_files(&registry, &[("a.js", &text), ("b.js", &text)]);
        let py = registry.lookup("py").unwrap();
        let code = "def g(x):\n    return x * 2\n".repeat(4);
        let meta = FileMeta::of(&code, code.len() as u64, 0);
        let file = SourceFile::new(
            "c.py".into(),
            "c.py".into(),
            py,
            code,
            meta,
            &Normalization::default(),
        );
        files.push(Arc::new(file.unwrap()));
        Index::build(
            files,
            &registry,
            crate::engine::fingerprint::Winnow::for_min_tokens(10),
        )
    }

    /// A cache of key 7 whose entry sections are `sections` (of one entry
    /// each) and whose tables' section is `tables`, sealed.
    fn built(sections: &[&[u8]], tables: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&7u64.to_le_bytes());
        bytes.extend_from_slice(&(sections.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&(sections.len() as u32).to_le_bytes());
        for section in sections {
            bytes.extend_from_slice(&(section.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&1u32.to_le_bytes());
        }
        for section in sections {
            bytes.extend_from_slice(section);
        }
        bytes.extend_from_slice(tables);
        seal(bytes)
    }

    /// The cache `bytes` edited by `edit` (before its checksums) and
    /// sealed again.
    fn resealed(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let sections = le32(&bytes[HEADER_BYTES - 4..HEADER_BYTES]) as usize;
        let mut bytes = bytes[..bytes.len() - 8 * (sections + 2)].to_vec();
        edit(&mut bytes);
        seal(bytes)
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
            decode(&encode(keys[2], &index()), keys[0]).unwrap_err(),
            OTHER_KEY
        );
    }

    #[test]
    fn round_trips() {
        let index = index();
        let loaded = decode(&encode(7, &index), 7).unwrap();
        assert_eq!(loaded.entries, 3);
        let entry = &loaded.files["b.js"];
        assert_eq!(entry.entry, 1);
        assert_eq!(entry.tokens, index.files[1].tokens);
        assert_eq!(entry.meta, index.files[1].meta);
        // Definitions too: five functions `f`, four `g`.
        assert_eq!(entry.definitions.as_slice().len(), 5);
        assert_eq!(entry.definitions, index.files[1].definitions);
        let py = &loaded.files["c.py"];
        assert_eq!(py.definitions.as_slice().len(), 4);
        assert_eq!(py.definitions, index.files[2].definitions);
        assert!(entry.fits(&index.files[1].text.get()));
        // The packed text's frames, so that a warm start does not compress
        // it again.
        let (bytes, cuts) = index.files[1].text.frames().expect("packed");
        let frames = entry.frames.as_ref().expect("kept");
        assert_eq!((&frames.bytes[..], frames.cuts.len()), (bytes, cuts.len()));
        let lists: Vec<Vec<Posting>> = index.posting_lists().map(|l| l.iter().collect()).collect();
        let read: Vec<Vec<Posting>> = postings_of(&loaded.lists.postings)
            .into_iter()
            .chain(postings_of(&loaded.lists.seeds))
            .collect();
        assert_eq!(read, lists);
        assert!(read.iter().any(|l| l.len() > 1), "{read:?}");
    }

    #[test]
    fn foreign_corrupt_and_truncated_caches_are_refused() {
        let bytes = encode(7, &index());
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
    fn an_entry_holds_no_more_than_its_file_can_make() {
        // One file of 10 bytes with `kinds` kinds of token (text hash i,
        // length 1, class other) and tokens of these places in the table,
        // then `packed` (its text's frames), in an otherwise valid cache.
        let with_text = |kinds: u32, places: &[u32], packed: &[u8]| {
            let mut entry = 1u32.to_le_bytes().to_vec();
            entry.extend_from_slice(b"a");
            for v in [10u64, 0, 0] {
                entry.extend_from_slice(&v.to_le_bytes());
            }
            entry.extend_from_slice(&kinds.to_le_bytes());
            for i in 0..kinds {
                entry.extend_from_slice(&u64::from(i).to_le_bytes());
                entry.extend_from_slice(&1u32.to_le_bytes());
            }
            // Whole starts and places, each of 4 bytes.
            entry.extend_from_slice(&(places.len() as u32).to_le_bytes());
            entry.push(WIDE_STARTS | WIDE_PLACES);
            for i in 0..places.len() {
                entry.extend_from_slice(&(i as u32 / 2).to_le_bytes());
            }
            for &place in places {
                entry.extend_from_slice(&place.to_le_bytes());
            }
            // No definitions, the text; tags, no posting lists, and the
            // entry's token count.
            entry.extend_from_slice(&0u32.to_le_bytes());
            entry.extend_from_slice(packed);
            let mut tables = vec![0];
            tables.extend_from_slice(&0u32.to_le_bytes());
            tables.extend_from_slice(&(places.len() as u32).to_le_bytes());
            built(&[&entry], &tables)
        };
        let cache = |kinds: u32, places: &[u32]| with_text(kinds, places, &0u32.to_le_bytes());
        // 21 tokens are the most 10 bytes can have (one per byte, and a
        // wall between any two), and so are 21 kinds.
        let framed = |tokens: u32| cache(1, &vec![0; tokens as usize]);
        assert_eq!(decode(&framed(21), 7).unwrap().files["a"].tokens.len(), 21);
        assert_eq!(
            decode(&framed(22), 7).unwrap_err(),
            "more tokens than the file can have"
        );
        let all_kinds: Vec<u32> = (0..21).collect();
        let read = decode(&cache(21, &all_kinds), 7).unwrap();
        let tokens = read.files["a"].tokens.to_vec();
        assert_eq!(tokens[20].raw(), (20, 10, 1));
        assert_eq!(
            decode(&cache(22, &[0]), 7).unwrap_err(),
            "more kinds of token than the file can have"
        );
        // A token whose kind's place is outside the table is refused, as a
        // token that does not fit its text is.
        assert!(decode(&cache(2, &[0, 1, 0]), 7).is_ok());
        assert_eq!(decode(&cache(2, &[0, 2, 0]), 7).unwrap_err(), "bad token");
        assert_eq!(decode(&cache(0, &[0]), 7).unwrap_err(), "bad token");
        // A layout of starts and places of no known kind.
        let entry = HEADER_BYTES + SECTION_BYTES;
        let layout = entry + 4 + 1 + 24 + 4 + 2 * 12 + 4;
        let unknown = resealed(&cache(2, &[0, 1, 0]), |b| {
            assert_eq!(b[layout], WIDE_STARTS | WIDE_PLACES);
            b[layout] = 4;
        });
        assert_eq!(decode(&unknown, 7).unwrap_err(), "bad token");
        // A count far beyond the bytes that follow allocates nothing for
        // it: of kinds, or of tokens.
        let at = entry + 4 + 1 + 24;
        for at in [at, at + 4 + 12] {
            let huge = resealed(&cache(1, &[]), |b| {
                b[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
            });
            assert!(decode(&huge, 7).is_err());
        }
        // A packed text: its length, block starts after the first (text,
        // frame) and frames, fewer bytes than the file's 10.
        let packed = |len: u32, cuts: &[(u32, u32)], frames: usize| {
            let mut bytes = len.to_le_bytes().to_vec();
            bytes.extend_from_slice(&(cuts.len() as u32).to_le_bytes());
            for &(text, frame) in cuts {
                bytes.extend_from_slice(&text.to_le_bytes());
                bytes.extend_from_slice(&frame.to_le_bytes());
            }
            bytes.extend(std::iter::repeat_n(0x5a, frames));
            with_text(1, &[0], &bytes)
        };
        let read = decode(&packed(6, &[(5, 3)], 6), 7).unwrap();
        let frames = read.files["a"].frames.as_ref().expect("kept");
        assert_eq!((frames.bytes.len(), &frames.cuts[..]), (6, &[(5, 3)][..]));
        assert_eq!(
            decode(&packed(10, &[], 10), 7).unwrap_err(),
            "a packed text larger than its file"
        );
        for cuts in [&[(0, 3)][..], &[(10, 3)], &[(5, 6)], &[(5, 3), (4, 4)]] {
            assert_eq!(decode(&packed(6, cuts, 6), 7).unwrap_err(), "bad blocks");
        }
    }

    #[test]
    fn entries_read_alike_from_one_section_or_many() {
        let index = index();
        let in_sections = |files: &[Arc<SourceFile>], per_section: u64| {
            let lists = (index.winnow.tags, index.posting_lists().collect());
            (encode_in_sections(Vec::new(), 7, files, lists, per_section).unwrap()).0
        };
        // A section per entry: the header's table lists three.
        let apart = in_sections(&index.files, 1);
        assert_eq!(le32(&apart[HEADER_BYTES - 4..HEADER_BYTES]), 3);
        let whole = encode(7, &index);
        assert_eq!(le32(&whole[HEADER_BYTES - 4..HEADER_BYTES]), 1);
        let (whole, apart_read) = (decode(&whole, 7).unwrap(), decode(&apart, 7).unwrap());
        assert_eq!(whole.files, apart_read.files);
        assert_eq!(whole.files.len(), 3);
        for (a, b) in [
            (&whole.lists.postings, &apart_read.lists.postings),
            (&whole.lists.seeds, &apart_read.lists.seeds),
        ] {
            assert_eq!(postings_of(a), postings_of(b));
        }
        // Paths in order within each section, not from one to the next.
        let mut files = index.files.clone();
        files.swap(1, 2);
        assert_eq!(
            decode(&in_sections(&files, 1), 7).unwrap_err(),
            "entries out of order"
        );
        // The tables' count of an entry's tokens must be its own.
        let entries: usize = index.files.iter().map(|f| entry_len(f)).sum();
        let count = HEADER_BYTES + 3 * SECTION_BYTES + entries + 1 + 4;
        let more = resealed(&apart, |b| {
            let n = le32(&b[count..count + 4]);
            assert_eq!(n as usize, index.files[0].tokens.len());
            b[count..count + 4].copy_from_slice(&(n + 1).to_le_bytes());
        });
        assert_eq!(decode(&more, 7).unwrap_err(), "bad posting lists");
        // Sections that do not end where their entries do.
        let shifted = resealed(&apart, |b| {
            let first = HEADER_BYTES;
            let len = le64(&b[first..first + 8]);
            b[first..first + 8].copy_from_slice(&(len + 1).to_le_bytes());
        });
        assert!(decode(&shifted, 7).is_err());
        let longer = resealed(&apart, |b| {
            let last = HEADER_BYTES + 2 * SECTION_BYTES;
            let len = le64(&b[last..last + 8]);
            b[last..last + 8].copy_from_slice(&(len + 1).to_le_bytes());
        });
        assert!(decode(&longer, 7).is_err());
        // A header or a trailer changed, and not sealed again.
        for at in [HEADER_BYTES + 1, apart.len() - 20, apart.len() - 1] {
            let mut flipped = apart.clone();
            flipped[at] ^= 1;
            assert_eq!(decode(&flipped, 7).unwrap_err(), CORRUPT, "at {at}");
        }
        // More sections than a cache may have, or than its bytes hold.
        for sections in [MOST_SECTIONS + 1, 1000] {
            let mut many = apart.clone();
            many[HEADER_BYTES - 4..HEADER_BYTES].copy_from_slice(&sections.to_le_bytes());
            assert!(decode(&many, 7).is_err(), "{sections} sections");
        }
    }

    #[test]
    fn tokens_must_fit_their_text() {
        let entry = &decode(&encode(7, &index()), 7).unwrap().files["a.js"];
        assert!(!entry.fits("short"));
    }

    /// The postings of each of `tables`.
    fn postings_of(tables: &[CachedTable]) -> Vec<Vec<Posting>> {
        tables.iter().map(|t| t.list().iter().collect()).collect()
    }

    #[test]
    fn postings_must_name_an_entry_and_a_token_of_it_in_order() {
        let index = index();
        let lists: Vec<Vec<Posting>> = index.posting_lists().map(|l| l.iter().collect()).collect();
        let encoded = |files: &[Arc<SourceFile>], lists: &[Vec<Posting>]| {
            let tables: Vec<CachedTable> = (lists.iter())
                .map(|l| CachedTable::packed_as_given(l.clone(), false))
                .collect();
            let lists = tables.iter().map(|t| t.list()).collect();
            encode_parts(Vec::new(), 7, files, (Mode::Weak, lists))
                .unwrap()
                .0
        };
        let with = |edit: &dyn Fn(&mut Vec<Vec<Posting>>)| {
            let mut lists = lists.clone();
            edit(&mut lists);
            decode(&encoded(&index.files, &lists), 7).map(|cached| cached.entries)
        };
        assert_eq!(with(&|_| {}), Ok(3));
        let first = lists.iter().position(|l| l.len() > 1).unwrap();
        assert_eq!(with(&|l| l[first][0].file = 3), Err("bad posting list"));
        assert_eq!(
            with(&|l| l[first][0].pos = 1 << 20),
            Err("bad posting list")
        );
        // Two postings of one hash, swapped.
        let (list, at) = (lists.iter().enumerate())
            .find_map(|(i, l)| Some((i, l.windows(2).position(|w| w[0].hash == w[1].hash)?)))
            .unwrap();
        assert_eq!(with(&|l| l[list].swap(at, at + 1)), Err("bad posting list"));
        assert_eq!(
            with(&|l| {
                l.pop();
            }),
            Err("bad posting lists")
        );
        // Entries in another order than their paths'.
        let mut files = index.files.clone();
        files.swap(0, 1);
        assert_eq!(
            decode(&encoded(&files, &lists), 7).unwrap_err(),
            "entries out of order"
        );
    }

    #[test]
    fn a_posting_tables_parts_must_be_a_tables() {
        let index = index();
        let bytes = encode(7, &index);
        // The first table's head: after the entries, the tags' byte and
        // the count of lists.
        let list = index.posting_lists().next().unwrap();
        let mut head = Vec::new();
        put_table_head(&mut head, &list);
        let at = bytes.len()
            - 8 * 3
            - index
                .posting_lists()
                .map(|l| {
                    let mut h = Vec::new();
                    put_table_head(&mut h, &l);
                    h.len() + l.records().len()
                })
                .sum::<usize>();
        assert_eq!(&bytes[at..at + head.len()], &head[..]);
        let edited =
            |edit: &dyn Fn(&mut Vec<u8>)| decode(&resealed(&bytes, edit), 7).map(|c| c.entries);
        assert_eq!(edited(&|_| {}), Ok(3));
        // More postings than the buckets hold, a position's bits too many
        // for a table, and a tag of 3 bits.
        let count = list.len() as u64;
        let bad = Err("bad posting list");
        assert!(edited(&|b| b[at..at + 8].copy_from_slice(&(count + 1).to_le_bytes())).is_err());
        assert_eq!(edited(&|b| b[at + 9] = 33), bad);
        assert_eq!(edited(&|b| b[at + 10] = 3), bad);
        // A bucket's size changed: the buckets no longer hold every posting.
        let sizes = at + 11;
        let one = (sizes..).find(|&i| bytes[i] == 1).unwrap();
        assert_eq!(edited(&|b| b[one] = 2), bad);
        // Or a big bucket named where none follows.
        assert_eq!(edited(&|b| b[one] = BIG_BUCKET), bad);
        // A huge count allocates nothing for it.
        assert!(edited(&|b| b[at..at + 8].copy_from_slice(&(u64::MAX / 2).to_le_bytes())).is_err());
    }

    #[test]
    fn save_is_atomic_and_ignored_by_git() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        save(&cache, 7, &index()).unwrap();
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
        assert_eq!(load(&cache, 7).files.len(), 3);
        assert!(load(&cache, 8).files.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_that_starts_as_a_cache_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        save(&cache, 7, &index()).unwrap();
        let real = file_in(&cache);
        // Through a link, even to the real cache: not read.
        let moved = cache.join("elsewhere.bin");
        std::fs::rename(&real, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &real).unwrap();
        assert!(load(&cache, 7).files.is_empty());
        // A link to a device that never ends.
        std::fs::remove_file(&real).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &real).unwrap();
        assert!(load(&cache, 7).files.is_empty());
        // A FIFO with no writer: opening it must not block.
        std::fs::remove_file(&real).unwrap();
        let fifo = std::ffi::CString::new(real.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(load(&cache, 7).files.is_empty());
        // Not a cache: refused after its first bytes.
        std::fs::remove_file(&real).unwrap();
        let zeros = std::fs::File::create(&real).unwrap();
        zeros.set_len(1 << 20).unwrap();
        let err = open_regular_file(&real, MAGIC).unwrap_err();
        assert_eq!(err.to_string(), "not a dupcheck cache");
    }

    #[test]
    fn temporary_files_of_dead_writers_are_removed_and_a_failed_write_leaves_none() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        save(&cache, 7, &index()).unwrap();
        let ours = cache.join(format!(
            "{}{}",
            temp_prefix_of(FILE_NAME),
            std::process::id()
        ));
        let dead = cache.join(format!("{}{}", temp_prefix_of(FILE_NAME), u32::MAX));
        std::fs::write(&dead, b"half a cache").unwrap();
        std::fs::write(&ours, b"being written").unwrap();
        assert_eq!(load(&cache, 7).files.len(), 3);
        assert!(!dead.exists());
        assert!(ours.exists(), "this process's own file is left to it");
        std::fs::remove_file(&ours).unwrap();
        // The rename fails (the target is a folder): no temporary file stays.
        std::fs::remove_file(file_in(&cache)).unwrap();
        std::fs::create_dir(file_in(&cache)).unwrap();
        std::fs::write(file_in(&cache).join("x"), b"").unwrap();
        assert!(save(&cache, 7, &index()).is_err());
        assert!(!ours.exists());
    }
}
