//! A scanned file's text, kept compressed once its tokens are made.
//!
//! In: the text a file was tokenized from. Out: a [`FileText`] that holds
//! it as zstd at level 1 (about a third of its size on source code), or
//! plain where compression does not make it smaller, and gives it back
//! whole ([`FileText::get`]) when an answer quotes it, counts its columns
//! or compares it.
//!
//! Invariants: [`FileText::get`] returns exactly the text given to
//! [`FileText::new`] (test: `round_trips`); the matching loops never ask
//! for it, and an answer asks once per file it reads (each decompression
//! is a whole file); a text is packed iff its bytes are fewer than its
//! length.

use std::borrow::Cow;
use std::cell::RefCell;

/// zstd's level: 1 is its fastest regular level. On the bench corpora and
/// the kernel's `fs/` it keeps 3.3 to 3.8 times less than the text, at
/// 110 to 170 MB/s per core; lz4_flex kept 2.0 to 2.6 times less
/// (docs/benchmarks.md, "Texts kept compressed").
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
            len,
            ascii: text.is_ascii(),
            bytes: packed.unwrap_or_else(|| text.into_bytes().into_boxed_slice()),
        }
    }

    /// The text, decompressed if it is packed.
    pub fn get(&self) -> Cow<'_, str> {
        if !self.is_packed() {
            return Cow::Borrowed(
                std::str::from_utf8(&self.bytes)
                    .expect("a plain FileText holds the str it was given"),
            );
        }
        let bytes = Contexts::with(|c| {
            let mut out = Vec::with_capacity(self.len as usize);
            c.decompressor
                .decompress_to_buffer(&self.bytes, &mut out)
                .expect("a packed FileText holds the zstd frame it made");
            out
        });
        Cow::Owned(
            String::from_utf8(bytes).expect("a packed FileText unpacks to the str it was given"),
        )
    }

    /// Whether the text is `text` (read back only when the lengths agree).
    pub fn is(&self, text: &str) -> bool {
        self.len() == text.len() && self.get() == text
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
        assert_eq!(check(&text).0, true);
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
}
