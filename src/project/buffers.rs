//! Buffers: the last parse of each snippet that named its file.
//!
//! An editor checks its buffer on every edit, with the buffer's `path`, so
//! consecutive checks of one path differ by a keystroke. Keeping the last
//! parse of each such snippet lets the next check reparse only what changed
//! (tree-sitter's incremental parsing; see [`snippet::tokenize_snippet_after`]).
//!
//! In: a path and the parse of its snippet. Out: that parse, taken back for
//! the next check of the path. Invariants: at most [`KEPT`] parses of at most
//! [`KEPT_BYTES`] bytes of text in all are kept, the least recently used
//! going first; a parse is taken out while it is used, so two checks of one
//! path at once never share it (the second parses afresh). What is kept only
//! saves work: answers are the same with or without it.
//!
//! [`snippet::tokenize_snippet_after`]: crate::engine::snippet::tokenize_snippet_after

use std::sync::{Mutex, PoisonError};

use crate::engine::snippet::SnippetParse;

/// Parses kept at most: an editor has a few buffers in use at a time.
pub const KEPT: usize = 8;

/// Bytes of snippet text kept at most, in all. Trees cost more than their
/// text: 2 MB of JavaScript kept this way raised the server's RSS by 36 MB.
pub(crate) const KEPT_BYTES: usize = 2 << 20;

/// The kept parses, least recently used first.
#[derive(Default)]
pub(crate) struct Buffers {
    recent: Mutex<Vec<(String, SnippetParse)>>,
}

impl Buffers {
    /// Takes out the parse kept for `path`, if any.
    pub(crate) fn take(&self, path: &str) -> Option<SnippetParse> {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let at = recent.iter().position(|(p, _)| p == path)?;
        Some(recent.remove(at).1)
    }

    /// Keeps `parse` as the latest of `path`, dropping the least recently
    /// used parses beyond the limits (freed after the lock is released: a
    /// big tree takes a while to free).
    pub(crate) fn keep(&self, path: &str, parse: SnippetParse) {
        if parse.len() > KEPT_BYTES {
            return;
        }
        let mut dropped = Vec::new();
        {
            let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = recent.iter().position(|(p, _)| p == path) {
                dropped.push(recent.remove(at));
            }
            recent.push((path.to_owned(), parse));
            let mut bytes: usize = recent.iter().map(|(_, p)| p.len()).sum();
            while recent.len() > KEPT || bytes > KEPT_BYTES {
                let (path, parse) = recent.remove(0);
                bytes -= parse.len();
                dropped.push((path, parse));
            }
        }
        drop(dropped);
    }

    /// Paths with a kept parse, least recently used first.
    #[cfg(test)]
    fn paths(&self) -> Vec<String> {
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent.iter().map(|(p, _)| p.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::snippet::tokenize_snippet_after;
    use crate::engine::tokens::Normalization;

    fn parse_of(text: &str) -> SnippetParse {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        // Budgets are not under test here: a loaded machine may take long.
        let budget =
            crate::engine::parse::Budget::new(std::time::Duration::from_secs(600), usize::MAX);
        tokenize_snippet_after(js, text, &Normalization::default(), None, &budget)
            .unwrap()
            .1
    }

    #[test]
    fn a_parse_is_taken_once_and_the_least_recently_used_go_first() {
        let buffers = Buffers::default();
        for i in 0..KEPT + 2 {
            buffers.keep(&format!("f{i}.js"), parse_of("let a = 1;"));
        }
        buffers.keep("f3.js", parse_of("let b = 2;"));
        let expected: Vec<String> = [4, 5, 6, 7, 8, 9, 3]
            .iter()
            .map(|i| format!("f{i}.js"))
            .collect();
        assert_eq!(buffers.paths()[1..], expected[..]);
        assert_eq!(buffers.paths()[0], "f2.js");
        assert!(buffers.take("f3.js").is_some());
        assert!(buffers.take("f3.js").is_none());
        assert!(buffers.take("f0.js").is_none());
    }

    #[test]
    fn kept_text_is_bounded_in_bytes() {
        let buffers = Buffers::default();
        let big = "let a = 1;\n".repeat(KEPT_BYTES / 11 / 2 + 1);
        buffers.keep("a.js", parse_of(&big));
        buffers.keep("b.js", parse_of(&big));
        assert_eq!(buffers.paths(), ["b.js"]);
        buffers.keep("c.js", parse_of(&format!("{big}{big}")));
        assert_eq!(buffers.paths(), ["b.js"]);
    }
}
