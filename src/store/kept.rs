//! The files of other repositories a server keeps between checks
//! ([`Kept`]): each content's file (text, tokens, fingerprints and seeds,
//! made once), the paths of a content in a copy, and each copy's
//! repository. A check then asks the store only for its postings and for
//! what it has not seen yet.
//!
//! Invariant: nothing kept is ever stale. A content's id is a hash of the
//! settings that made its tokens, its text and its format, and a copy
//! (its files, its repository) never changes once written: a publish
//! writes a new copy. What is kept is bounded by bytes; past the bound, the
//! contents least recently used are dropped (and asked for again when a
//! check needs them).

use std::sync::{Arc, Mutex};

use crate::engine::hash::HashMap;
use crate::engine::index::{FilePrints, SourceFile};

/// Bytes of contents a server keeps at most.
pub const KEPT_BYTES: usize = 128 << 20;

/// One content as kept: its file (at the first path it was seen at) and
/// its prints.
#[derive(Debug)]
pub struct Content {
    /// The file, at some path.
    pub file: Arc<SourceFile>,
    /// Its fingerprints and seeds.
    pub prints: Arc<FilePrints>,
}

impl Content {
    /// Bytes it holds.
    fn bytes(&self) -> usize {
        self.file.text.len()
            + self.file.tokens.heap_bytes()
            + self.file.lines.heap_bytes()
            + self.prints.heap_bytes()
    }
}

/// What a server keeps.
#[derive(Debug)]
pub struct Kept {
    inner: Mutex<Inner>,
    budget: usize,
}

#[derive(Debug, Default)]
struct Inner {
    /// Content id → the content and when it was last used.
    contents: HashMap<i64, (Arc<Content>, u64)>,
    /// (content, copy) → its paths in that copy.
    paths: HashMap<(i64, i64), Arc<[String]>>,
    /// Copy → its repository's name.
    repositories: HashMap<i64, Arc<str>>,
    /// Bytes of the contents kept.
    bytes: usize,
    /// Uses so far: the clock of `contents`' last uses.
    clock: u64,
}

impl Default for Kept {
    fn default() -> Kept {
        Kept::new(KEPT_BYTES)
    }
}

impl Kept {
    /// Keeping at most `budget` bytes of contents.
    pub fn new(budget: usize) -> Kept {
        Kept {
            inner: Mutex::new(Inner::default()),
            budget,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The content `id`, if kept (now counted as used).
    pub fn content(&self, id: i64) -> Option<Arc<Content>> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let (content, used) = inner.contents.get_mut(&id)?;
        *used = now;
        Some(Arc::clone(content))
    }

    /// The paths of content `id` in `copy`, and the copy's repository, if
    /// both are kept.
    pub fn places(&self, id: i64, copy: i64) -> Option<(Arc<[String]>, Arc<str>)> {
        let inner = self.lock();
        Some((
            Arc::clone(inner.paths.get(&(id, copy))?),
            Arc::clone(inner.repositories.get(&copy)?),
        ))
    }

    /// Keeps `content` as content `id`; drops the least recently used
    /// contents past the budget.
    pub fn keep_content(&self, id: i64, content: Arc<Content>) {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let bytes = content.bytes();
        if let Some((old, _)) = inner.contents.insert(id, (content, now)) {
            inner.bytes -= old.bytes();
        }
        inner.bytes += bytes;
        if inner.bytes > self.budget {
            // Down to three quarters of the budget, oldest first: one sort
            // per many insertions.
            let mut by_age: Vec<(u64, i64)> = inner
                .contents
                .iter()
                .map(|(&id, &(_, used))| (used, id))
                .collect();
            by_age.sort_unstable();
            let mut dropped = crate::engine::hash::HashSet::default();
            for (_, id) in by_age {
                if inner.bytes <= self.budget / 4 * 3 {
                    break;
                }
                if let Some((gone, _)) = inner.contents.remove(&id) {
                    inner.bytes -= gone.bytes();
                    dropped.insert(id);
                }
            }
            inner
                .paths
                .retain(|(content, _), _| !dropped.contains(content));
        }
    }

    /// Keeps the paths of content `id` in `copy`, and the copy's
    /// repository.
    pub fn keep_places(&self, id: i64, copy: i64, paths: Arc<[String]>, repository: Arc<str>) {
        let mut inner = self.lock();
        inner.paths.insert((id, copy), paths);
        inner.repositories.insert(copy, repository);
    }

    /// Contents kept, and their bytes.
    pub fn size(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.contents.len(), inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fingerprint::Winnow;
    use crate::engine::grammar::Registry;
    use crate::engine::index::FileMeta;
    use crate::engine::tokens::{tokenize, Normalization};

    fn content(text: &str) -> Arc<Content> {
        let registry = Registry::builtin();
        let js = registry.lookup("js").expect("js");
        let tokens = tokenize(js, text, &Normalization::default()).expect("tokens");
        let prints = FilePrints::of(&tokens, Winnow::for_min_tokens(10));
        let file = SourceFile::with_tokens(
            "a.js".into(),
            "a.js".into(),
            js,
            text.into(),
            tokens,
            FileMeta::default(),
        );
        Arc::new(Content {
            file: Arc::new(file),
            prints: Arc::new(prints),
        })
    }

    #[test]
    fn the_least_recently_used_contents_go_past_the_budget() {
        let one = content("const a = [1, 2, 3, 4, 5, 6, 7, 8];\n");
        let kept = Kept::new(one.bytes() * 3);
        for id in 0..3 {
            kept.keep_content(id, content("const a = [1, 2, 3, 4, 5, 6, 7, 8];\n"));
            kept.keep_places(id, 7, Arc::from(vec!["a.js".to_owned()]), Arc::from("r"));
        }
        // 0 used again: 1, then 2, are now the oldest. Past the budget,
        // contents go down to three quarters of it.
        assert!(kept.content(0).is_some());
        kept.keep_content(3, content("const a = [1, 2, 3, 4, 5, 6, 7, 8];\n"));
        for id in [1, 2] {
            assert!(kept.content(id).is_none(), "{id}");
            assert!(kept.places(id, 7).is_none(), "{id}");
        }
        for id in [0, 3] {
            assert!(kept.content(id).is_some(), "{id}");
        }
        assert_eq!(kept.size(), (2, one.bytes() * 2));
        assert_eq!(
            kept.places(0, 7).map(|(p, r)| (p.to_vec(), r.to_string())),
            Some((vec!["a.js".to_owned()], "r".to_owned()))
        );
    }
}
