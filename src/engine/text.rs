//! A scanned file's text, kept compressed once its tokens are made.
//!
//! In: the text a file was tokenized from. Out: a [`FileText`] that holds
//! it as zstd at level 1 (about a third of its size on source code), or
//! plain where compression does not make it smaller, cut into blocks of
//! about [`BLOCK_BYTES`] each compressed alone. It gives the text back
//! whole ([`FileText::get`]), or through a [`Reader`] the ranges an answer
//! quotes, counts columns in or compares ([`Slices`]), reading back only
//! the blocks they lie in. The texts and blocks read back last are kept,
//! up to [`RECENT_BYTES`], for the next answers (checks of one editor's
//! file quote the same few files again and again).
//!
//! Invariants: [`FileText::get`] returns exactly the text given to
//! [`FileText::new`], and a [`Reader`]'s slice of it exactly what
//! `str::get` gives (tests: `round_trips`, `a_large_text_is_read_back_a_block_at_a_time`);
//! the matching loops never ask for it, and an answer reads each block
//! once at most; a text is packed iff its bytes are fewer than its
//! length; a block ends at a line break where its second half has one,
//! so a line's columns are counted in one block; a packed text's ids are
//! its own, never reused, so the recent texts cannot answer for another
//! file.

use std::cell::RefCell;
use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::engine::hash::HashMap;

/// The most bytes of texts read back that are kept for the next answers.
pub const RECENT_BYTES: usize = 16 << 20;

/// The next packed text's id.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The texts read back last, by id, each with the tick of its last use.
static RECENT: Mutex<Option<Recent>> = Mutex::new(None);

#[derive(Default)]
struct Recent {
    texts: HashMap<u64, (Arc<str>, u64)>,
    bytes: usize,
    tick: u64,
}

impl Recent {
    fn with<R>(f: impl FnOnce(&mut Recent) -> R) -> R {
        let mut slot = RECENT.lock().unwrap_or_else(|e| e.into_inner());
        f(slot.get_or_insert_with(Recent::default))
    }

    fn get(&mut self, id: u64) -> Option<Arc<str>> {
        self.tick += 1;
        let tick = self.tick;
        self.texts.get_mut(&id).map(|(text, used)| {
            *used = tick;
            Arc::clone(text)
        })
    }

    /// Keeps `text`, dropping the least recently used beyond the budget.
    fn keep(&mut self, id: u64, text: &Arc<str>) {
        if text.len() > RECENT_BYTES / 4 || self.texts.contains_key(&id) {
            return;
        }
        self.tick += 1;
        self.bytes += text.len();
        self.texts.insert(id, (Arc::clone(text), self.tick));
        while self.bytes > RECENT_BYTES {
            let Some((&oldest, _)) = self.texts.iter().min_by_key(|(_, (_, used))| *used) else {
                break;
            };
            if let Some((gone, _)) = self.texts.remove(&oldest) {
                self.bytes -= gone.len();
            }
        }
    }
}

/// A text read back: borrowed from a plain [`FileText`], or shared with
/// the recent texts.
#[derive(Debug, Clone)]
pub enum Text<'a> {
    /// A plain text's own bytes.
    Borrowed(&'a str),
    /// A packed text, decompressed.
    Shared(Arc<str>),
}

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(text) => text,
            Text::Shared(text) => text,
        }
    }
}

impl Text<'_> {
    /// The text as a `String` of its own.
    pub fn into_owned(self) -> String {
        self.to_string()
    }
}

impl PartialEq<&str> for Text<'_> {
    fn eq(&self, other: &&str) -> bool {
        **self == **other
    }
}

/// zstd's level: 1 is its fastest regular level. On the bench corpora and
/// the kernel's `fs/` it keeps 2.7 to 3.8 times less than the text (3.3
/// and 3.4 on C), at 110 to 240 MB/s per core; lz4_flex kept 2.0 to 2.6
/// times less (docs/benchmarks.md, "Texts kept compressed").
const LEVEL: i32 = 1;

thread_local! {
    /// Each thread's compression and decompression contexts, made once
    /// (a context costs more to make than a small file does to pack).
    static CONTEXTS: RefCell<Option<Contexts>> = const { RefCell::new(None) };
}

struct Contexts {
    compressor: zstd::bulk::Compressor<'static>,
    decompressor: zstd::bulk::Decompressor<'static>,
    /// Where a text is packed before it is copied to its exact size.
    scratch: Vec<u8>,
}

impl Contexts {
    fn with<R>(f: impl FnOnce(&mut Contexts) -> R) -> R {
        CONTEXTS.with(|cell| {
            let mut slot = cell.borrow_mut();
            let contexts = slot.get_or_insert_with(|| Contexts {
                compressor: zstd::bulk::Compressor::new(LEVEL)
                    .expect("zstd accepts level 1 and allocates its context"),
                decompressor: zstd::bulk::Decompressor::new()
                    .expect("zstd allocates a decompression context"),
                scratch: Vec::new(),
            });
            f(contexts)
        })
    }
}

/// A packed text longer than this is cut into blocks of about this many
/// bytes, each its own zstd frame, so that an answer quoting a few lines
/// of a large file decompresses the blocks that hold them, not the file
/// (a kernel register header is 5 to 30 MB of text).
pub const BLOCK_BYTES: usize = 64 << 10;

/// A file's text: zstd-compressed, or plain where that is not smaller.
#[derive(Debug, Clone, Default)]
pub struct FileText {
    /// A packed text's id among the recent texts (0 for a plain one); its
    /// block `b` is `id + 1 + b` there.
    id: u64,
    /// The text's length in bytes.
    len: u32,
    /// Whether the text is ASCII: a column is then a byte offset, known
    /// without the text.
    ascii: bool,
    /// The text itself when `bytes.len() == len`, else its zstd frames,
    /// one per block.
    bytes: Box<[u8]>,
    /// Where each block after the first starts, in the text and in
    /// `bytes` (empty for a plain text or a packed one of one block).
    cuts: Box<[Cut]>,
}

/// A packed text's zstd frames, as [`FileText::frames`] gives them and
/// [`FileText::from_frames`] takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frames {
    /// The frames, one per block, end to end.
    pub bytes: Vec<u8>,
    /// Where each block after the first starts: in the text, and its frame
    /// in `bytes`.
    pub cuts: Vec<(u32, u32)>,
}

impl Frames {
    /// Whether they are laid out as the frames of a packed text of `len`
    /// bytes are: fewer bytes than the text, and each cut inside both and
    /// after the one before. (What they unpack to is not checked: a cache
    /// is checksummed, and the text it was made of has the file's hash.)
    pub fn fit(&self, len: usize) -> bool {
        let mut before = (0, 0);
        let in_order = self.cuts.iter().all(|&(text, frame)| {
            let ok = text > before.0
                && frame > before.1
                && (text as usize) < len
                && (frame as usize) < self.bytes.len();
            before = (text, frame);
            ok
        });
        in_order && self.bytes.len() < len && u32::try_from(len).is_ok()
    }
}

/// The start of a block: in the text, and of its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cut {
    text: u32,
    frame: u32,
}

/// Where `text` is cut into blocks: the start of each block after the
/// first. A block ends after the last line break in its second half, or
/// at a character boundary if it has none, so that a line (what a column
/// is counted in) lies in one block.
fn block_starts(text: &str) -> Vec<u32> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    let mut at = 0;
    while bytes.len() - at > BLOCK_BYTES {
        let limit = at + BLOCK_BYTES;
        let cut = match bytes[at + BLOCK_BYTES / 2..limit]
            .iter()
            .rposition(|&b| b == b'\n')
        {
            Some(i) => at + BLOCK_BYTES / 2 + i + 1,
            None => (at + 1..=limit)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .expect("a character is at most 4 bytes"),
        };
        starts.push(cut as u32);
        at = cut;
    }
    starts
}

impl FileText {
    /// Keeps `text`, compressed where that makes it smaller.
    pub fn new(text: String) -> FileText {
        let len = u32::try_from(text.len()).expect("a scanned file's text is under 4 GiB");
        let starts = block_starts(&text);
        let packed = Contexts::with(|c| {
            let mut frames = Vec::new();
            let mut cuts = Vec::with_capacity(starts.len());
            let ends = starts.iter().map(|&s| s as usize).chain([text.len()]);
            let mut from = 0;
            for (b, end) in ends.enumerate() {
                if b > 0 {
                    let frame = u32::try_from(frames.len()).ok()?;
                    cuts.push(Cut {
                        text: from as u32,
                        frame,
                    });
                }
                let block = &text.as_bytes()[from..end];
                c.scratch.clear();
                c.scratch
                    .reserve(zstd::zstd_safe::compress_bound(block.len()));
                let n = c
                    .compressor
                    .compress_to_buffer(block, &mut c.scratch)
                    .ok()?;
                frames.extend_from_slice(&c.scratch[..n]);
                if frames.len() >= text.len() {
                    return None;
                }
                from = end;
            }
            Some((frames.into_boxed_slice(), cuts.into_boxed_slice()))
        });
        let ascii = text.is_ascii();
        match packed {
            Some((bytes, cuts)) => FileText {
                id: NEXT_ID.fetch_add(2 + cuts.len() as u64, Ordering::Relaxed),
                len,
                ascii,
                bytes,
                cuts,
            },
            None => FileText {
                id: 0,
                len,
                ascii,
                bytes: text.into_bytes().into_boxed_slice(),
                cuts: Box::default(),
            },
        }
    }

    /// The text, decompressed if it is packed (or taken from the recent
    /// texts).
    pub fn get(&self) -> Text<'_> {
        if !self.is_packed() {
            return Text::Borrowed(
                std::str::from_utf8(&self.bytes)
                    .expect("a plain FileText holds the str it was given"),
            );
        }
        self.recent_or_unpack(self.id, 0..self.blocks())
    }

    /// A packed text's zstd frames, one per block, and where each block
    /// after the first starts; `None` for a plain text. (What a cache
    /// keeps, so that a warm start need not compress again.)
    pub fn frames(&self) -> Option<(&[u8], impl ExactSizeIterator<Item = (u32, u32)> + '_)> {
        let cuts = self.cuts.iter().map(|c| (c.text, c.frame));
        self.is_packed().then_some((&*self.bytes, cuts))
    }

    /// The packed text of `len` bytes (ASCII or not) that `frames` holds,
    /// or `None` if they are not laid out as a packed text's are
    /// ([`Frames::fit`]).
    pub fn from_frames(len: usize, ascii: bool, frames: Frames) -> Option<FileText> {
        if !frames.fit(len) {
            return None;
        }
        Some(FileText {
            id: NEXT_ID.fetch_add(2 + frames.cuts.len() as u64, Ordering::Relaxed),
            len: len as u32,
            ascii,
            bytes: frames.bytes.into_boxed_slice(),
            cuts: (frames.cuts.into_iter())
                .map(|(text, frame)| Cut { text, frame })
                .collect(),
        })
    }

    /// How many blocks it is read back in (1 for a plain text).
    fn blocks(&self) -> usize {
        self.cuts.len() + 1
    }

    /// Where block `b` starts in the text and its frame starts in `bytes`.
    fn block_start(&self, b: usize) -> Cut {
        match b {
            0 => Cut { text: 0, frame: 0 },
            _ if b == self.blocks() => Cut {
                text: self.len,
                frame: self.bytes.len() as u32,
            },
            _ => self.cuts[b - 1],
        }
    }

    /// The block that holds bytes `range` of the text whole, if one does.
    fn block_of(&self, range: &Range<usize>) -> Option<usize> {
        let b = self
            .cuts
            .partition_point(|c| c.text as usize <= range.start);
        (range.end <= self.block_start(b + 1).text as usize).then_some(b)
    }

    /// Block `b` of a packed text of more than one block, decompressed
    /// (or taken from the recent texts).
    fn block(&self, b: usize) -> Text<'_> {
        self.recent_or_unpack(self.id + 1 + b as u64, b..b + 1)
    }

    /// Blocks `blocks` of the packed text, kept among the recent texts as
    /// `id`: taken from there, or decompressed and kept.
    fn recent_or_unpack(&self, id: u64, blocks: Range<usize>) -> Text<'_> {
        if let Some(text) = Recent::with(|r| r.get(id)) {
            return Text::Shared(text);
        }
        let text: Arc<str> = Arc::from(self.unpack(blocks));
        Recent::with(|r| r.keep(id, &text));
        Text::Shared(text)
    }

    /// Blocks `blocks` of the packed text, decompressed.
    fn unpack(&self, blocks: Range<usize>) -> String {
        let (first, past) = (self.block_start(blocks.start), self.block_start(blocks.end));
        let mut out = vec![0; (past.text - first.text) as usize];
        Contexts::with(|c| {
            for b in blocks {
                let (from, to) = (self.block_start(b), self.block_start(b + 1));
                let into = (from.text - first.text) as usize..(to.text - first.text) as usize;
                let n = c
                    .decompressor
                    .decompress_to_buffer(
                        &self.bytes[from.frame as usize..to.frame as usize],
                        &mut out[into.clone()],
                    )
                    .expect("a packed FileText holds the zstd frames it made");
                assert_eq!(n, into.len(), "a block unpacks to its own length");
            }
        });
        String::from_utf8(out).expect("a packed FileText's blocks unpack to whole characters")
    }

    /// Whether the text is `text` (read back only when the lengths agree).
    pub fn is(&self, text: &str) -> bool {
        self.len() == text.len() && *self.get() == *text
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the text is ASCII (every character one byte).
    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// Whether it is kept compressed.
    pub fn is_packed(&self) -> bool {
        self.bytes.len() != self.len as usize
    }

    /// Bytes it holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len() + std::mem::size_of_val(&*self.cuts)
    }
}

/// A text read by byte ranges: a `str`, or a [`FileText`] through a
/// [`Reader`], which reads back only the blocks the ranges lie in.
pub trait Slices {
    /// The text's length in bytes.
    fn text_len(&self) -> usize;

    /// Bytes `range` of the text, if they lie in it on character
    /// boundaries (as [`str::get`]).
    fn slice(&self, range: Range<usize>) -> Option<&str>;
}

impl Slices for str {
    fn text_len(&self) -> usize {
        self.len()
    }

    fn slice(&self, range: Range<usize>) -> Option<&str> {
        self.get(range)
    }
}

/// A [`FileText`] as one answer reads it: each block read back on its
/// first need, once, and the whole text only when it is asked for or a
/// range spans blocks.
#[derive(Debug)]
pub struct Reader<'a> {
    text: &'a FileText,
    whole: OnceLock<Text<'a>>,
    /// Its blocks, when it has more than one.
    blocks: Box<[OnceLock<Text<'a>>]>,
}

impl<'a> Reader<'a> {
    /// A reader of `text`, nothing read back yet.
    pub fn new(text: &'a FileText) -> Reader<'a> {
        let blocks = match text.blocks() {
            1 => Box::default(),
            n => (0..n).map(|_| OnceLock::new()).collect(),
        };
        Reader {
            text,
            whole: OnceLock::new(),
            blocks,
        }
    }

    /// The whole text, read back on the first call.
    pub fn whole(&self) -> &str {
        self.whole.get_or_init(|| self.text.get())
    }
}

impl Slices for Reader<'_> {
    fn text_len(&self) -> usize {
        self.text.len()
    }

    fn slice(&self, range: Range<usize>) -> Option<&str> {
        if let Some(whole) = self.whole.get() {
            return whole.get(range);
        }
        if range.start > range.end || range.end > self.text.len() {
            return None;
        }
        match self.text.block_of(&range) {
            Some(b) if !self.blocks.is_empty() => {
                let block = self.blocks[b].get_or_init(|| self.text.block(b));
                let base = self.text.block_start(b).text as usize;
                block.get(range.start - base..range.end - base)
            }
            _ => self.whole().get(range),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps `text` and reads it back: `(packed, heap bytes)`.
    fn check(text: &str) -> (bool, usize) {
        let kept = FileText::new(text.to_owned());
        assert_eq!(kept.get(), text);
        assert_eq!(kept.len(), text.len());
        assert_eq!(kept.is_empty(), text.is_empty());
        assert_eq!(kept.is_ascii(), text.is_ascii());
        assert!(kept.is(text));
        assert!(!kept.is(&format!("{text} ")));
        (kept.is_packed(), kept.heap_bytes())
    }

    #[test]
    fn round_trips() {
        let code: String = (0..200)
            .map(|i| format!("static int f{i}(int x) {{\n    return x + {i};\n}}\n"))
            .collect();
        let (packed, bytes) = check(&code);
        assert!(packed);
        assert!(bytes * 4 < code.len(), "{bytes} of {}", code.len());
    }

    #[test]
    fn non_ascii_text_round_trips() {
        let text = "// café, naïve, 日本語, emoji 🦀\nlet s = \"ü\";\n".repeat(40);
        assert!(check(&text).0, "packed");
    }

    #[test]
    fn empty_file_stays_plain() {
        assert_eq!(check(""), (false, 0));
    }

    #[test]
    fn text_that_does_not_compress_stays_plain() {
        // 300 ASCII characters of a xorshift generator: nothing repeats,
        // and what entropy coding saves is less than its tables.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let text: String = (0..300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from((x % 128) as u8)
            })
            .collect();
        assert_eq!(check(&text), (false, text.len()));
        assert_eq!(check("x"), (false, 1));
    }

    #[test]
    fn threads_pack_and_unpack_each_with_their_own_contexts() {
        let texts: Vec<String> = (0..8).map(|i| format!("line {i}\n").repeat(100)).collect();
        let kept: Vec<FileText> = std::thread::scope(|s| {
            let handles: Vec<_> = texts
                .iter()
                .map(|t| s.spawn(|| FileText::new(t.clone())))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (k, t) in kept.iter().zip(&texts) {
            assert_eq!(k.get(), t.as_str());
        }
    }

    /// A text of `lines` lines of C, each naming `word`.
    fn long_code(lines: usize, word: &str) -> String {
        (0..lines)
            .map(|i| format!("    reg_{word}_{i} = read(base + 0x{i:x}); /* {word} */\n"))
            .collect()
    }

    #[test]
    fn a_large_text_is_read_back_a_block_at_a_time() {
        let text = long_code(20_000, "café");
        let kept = FileText::new(text.clone());
        assert!(kept.blocks() > 10, "{} blocks", kept.blocks());
        for b in 1..kept.blocks() {
            let start = kept.block_start(b).text as usize;
            assert_eq!(&text[start - 1..start], "\n", "block {b} starts a line");
            let length = start - kept.block_start(b - 1).text as usize;
            assert!(
                (BLOCK_BYTES / 2..=BLOCK_BYTES).contains(&length),
                "{length}"
            );
        }
        assert_eq!(kept.get(), text.as_str());
        // Ranges within a block, across blocks, at the ends, and refused.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let reader = Reader::new(&kept);
        for _ in 0..2_000 {
            let start = next(text.len() + 2);
            let end = start + next(300);
            assert_eq!(
                reader.slice(start..end),
                text.get(start..end),
                "{start}..{end}"
            );
        }
        assert_eq!(reader.slice(text.len()..text.len()), Some(""));
        assert_eq!(reader.text_len(), text.len());
        // Within one block, only that block is read back.
        let fresh = Reader::new(&kept);
        let line = fresh.slice(BLOCK_BYTES * 3..BLOCK_BYTES * 3 + 20);
        assert_eq!(line, text.get(BLOCK_BYTES * 3..BLOCK_BYTES * 3 + 20));
        assert!(
            fresh.whole.get().is_none(),
            "the whole text was not read back"
        );
        assert_eq!(fresh.blocks.iter().filter(|b| b.get().is_some()).count(), 1);
    }

    #[test]
    fn a_packed_text_is_made_again_from_its_frames_and_cuts_only_if_they_are_in_order() {
        let text = long_code(5_000, "frame");
        let kept = FileText::new(text.clone());
        let (bytes, cuts) = kept.frames().expect("packed");
        let frames = Frames {
            bytes: bytes.to_vec(),
            cuts: cuts.collect(),
        };
        let cuts = frames.cuts.clone();
        assert!(cuts.len() > 2);
        let again =
            FileText::from_frames(text.len(), true, frames.clone()).expect("laid out as made");
        assert_eq!(again.get(), text.as_str());
        assert_ne!(again.id, kept.id, "its own place among the recent texts");
        let reader = Reader::new(&again);
        assert_eq!(reader.slice(100_000..100_050), text.get(100_000..100_050));
        let from = |len: usize, frames: &Frames, cuts: Vec<(u32, u32)>| {
            let frames = Frames {
                bytes: frames.bytes.clone(),
                cuts,
            };
            FileText::from_frames(len, true, frames).is_some()
        };
        let mut swapped = cuts.clone();
        swapped.swap(0, 1);
        assert!(!from(text.len(), &frames, swapped), "cuts out of order");
        let (len, packed) = (text.len() as u32, frames.bytes.len() as u32);
        let mut past = cuts.clone();
        past.push((len, packed - 1));
        assert!(!from(text.len(), &frames, past), "a cut at the text's end");
        let mut beyond = cuts.clone();
        beyond.push((len - 1, packed));
        assert!(!from(text.len(), &frames, beyond), "a cut past the frames");
        assert!(
            !from(packed as usize, &frames, cuts.clone()),
            "not smaller than the text"
        );
        assert!(from(text.len(), &frames, cuts));
        assert!(FileText::new("plain".to_owned()).frames().is_none());
    }

    #[test]
    fn a_text_without_line_breaks_is_cut_between_characters() {
        let text = "日本語🦀é".repeat(BLOCK_BYTES / 4);
        let starts = block_starts(&text);
        assert!(!starts.is_empty());
        assert!(starts.iter().all(|&s| text.is_char_boundary(s as usize)));
        let kept = FileText::new(text.clone());
        assert!(kept.is_packed());
        assert_eq!(kept.get(), text.as_str());
        assert_eq!(
            kept.heap_bytes(),
            kept.bytes.len() + 8 * starts.len(),
            "its cuts are counted"
        );
        let reader = Reader::new(&kept);
        let at = starts[0] as usize;
        assert_eq!(reader.slice(at - 3..at + 4), text.get(at - 3..at + 4));
        assert_eq!(
            reader.slice(at - 1..at),
            None,
            "not on a character boundary"
        );
    }

    #[test]
    fn a_text_of_one_block_is_not_cut() {
        assert!(block_starts(&"x".repeat(BLOCK_BYTES)).is_empty());
        assert_eq!(block_starts(&"x\n".repeat(BLOCK_BYTES / 2 + 1)).len(), 1);
    }

    #[test]
    fn recent_texts_are_shared_and_bounded_in_bytes() {
        let text = "int x = 1;\n".repeat(1000);
        let kept = FileText::new(text.clone());
        let (Text::Shared(a), Text::Shared(b)) = (kept.get(), kept.get()) else {
            panic!("a packed text is shared");
        };
        assert!(Arc::ptr_eq(&a, &b), "the second read is the first's text");
        // Another file of the same text has its own id: its own read.
        let twin = FileText::new(text);
        let Text::Shared(c) = twin.get() else {
            panic!("a packed text is shared");
        };
        assert!(!Arc::ptr_eq(&a, &c));
        let mut recent = Recent::default();
        let big: Arc<str> = Arc::from("y".repeat(RECENT_BYTES / 4));
        for id in 1..=5 {
            recent.keep(id, &big);
        }
        assert_eq!(recent.bytes, RECENT_BYTES);
        assert!(recent.get(1).is_none(), "the least recently used went");
        assert!(recent.get(5).is_some());
        let huge: Arc<str> = Arc::from("z".repeat(RECENT_BYTES / 4 + 1));
        recent.keep(9, &huge);
        assert!(recent.get(9).is_none(), "too large a text is not kept");
    }
}
