//! A scanned file's text, kept compressed once its tokens are made.
//!
//! In: the text a file was tokenized from. Out: a [`FileText`] that holds
//! it as zstd at level 1 (about a third of its size on source code), or
//! plain where compression does not make it smaller, and gives it back
//! whole ([`FileText::get`]) when an answer quotes it, counts its columns
//! or compares it. The texts read back last are kept, up to
//! [`RECENT_BYTES`], for the next answers (checks of one editor's file
//! quote the same few files again and again).
//!
//! Invariants: [`FileText::get`] returns exactly the text given to
//! [`FileText::new`] (test: `round_trips`); the matching loops never ask
//! for it, and an answer asks once per file it reads (each decompression
//! is a whole file); a text is packed iff its bytes are fewer than its
//! length; a packed text's `id` is its own, never reused, so the recent
//! texts cannot answer for another file.

use std::cell::RefCell;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// A file's text: zstd-compressed, or plain where that is not smaller.
#[derive(Debug, Clone, Default)]
pub struct FileText {
    /// A packed text's id among the recent texts (0 for a plain one).
    id: u64,
    /// The text's length in bytes.
    len: u32,
    /// Whether the text is ASCII: a column is then a byte offset, known
    /// without the text.
    ascii: bool,
    /// The text itself when `bytes.len() == len`, else its zstd frame.
    bytes: Box<[u8]>,
}

impl FileText {
    /// Keeps `text`, compressed where that makes it smaller.
    pub fn new(text: String) -> FileText {
        let len = u32::try_from(text.len()).expect("a scanned file's text is under 4 GiB");
        let packed = Contexts::with(|c| {
            c.scratch.clear();
            c.scratch
                .reserve(zstd::zstd_safe::compress_bound(text.len()));
            match c
                .compressor
                .compress_to_buffer(text.as_bytes(), &mut c.scratch)
            {
                Ok(n) if n < text.len() => Some(Box::from(&c.scratch[..n])),
                _ => None,
            }
        });
        FileText {
            id: match packed {
                Some(_) => NEXT_ID.fetch_add(1, Ordering::Relaxed),
                None => 0,
            },
            len,
            ascii: text.is_ascii(),
            bytes: packed.unwrap_or_else(|| text.into_bytes().into_boxed_slice()),
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
        if let Some(text) = Recent::with(|r| r.get(self.id)) {
            return Text::Shared(text);
        }
        let text: Arc<str> = Arc::from(self.unpack());
        Recent::with(|r| r.keep(self.id, &text));
        Text::Shared(text)
    }

    /// The packed text, decompressed.
    fn unpack(&self) -> String {
        let bytes = Contexts::with(|c| {
            let mut out = Vec::with_capacity(self.len as usize);
            c.decompressor
                .decompress_to_buffer(&self.bytes, &mut out)
                .expect("a packed FileText holds the zstd frame it made");
            out
        });
        String::from_utf8(bytes).expect("a packed FileText unpacks to the str it was given")
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
        self.bytes.len()
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
