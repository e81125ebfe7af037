//! Parsing under a budget: every tree-sitter parse of dupcheck goes through
//! [`parse`].
//!
//! In: a [`Format`], text, optionally the edited tree of an earlier version,
//! and a [`Budget`]. Out: the tree, or the [`ParseError`] that stopped it.
//!
//! tree-sitter's error recovery can take a very long time, and a lot of
//! memory, on a few bytes of odd input. So each parse has a deadline and a
//! ceiling on the memory tree-sitter holds for it, both checked by the
//! parse's progress callback (every 100 parser operations): tree-sitter
//! allocates through mimalloc here, and every allocation is counted on the
//! thread that makes it. A stop of the server ([`stop`]) cancels every parse
//! in flight the same way.
//!
//! Invariants: a parse never runs past its budget by more than one progress
//! interval; a parser that was cancelled is reset before its next use; the
//! allocator is installed before tree-sitter allocates anything.

use std::cell::{Cell, RefCell};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, ParseState, Parser, Range, Tree};

use crate::engine::grammar::{Format, FormatId};
use crate::engine::hash::HashMap;

/// What one parse may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// When the parse is stopped.
    pub deadline: Instant,
    /// Bytes tree-sitter may hold for the parse (its growth on the thread).
    pub memory: usize,
}

/// Time every file's parse may take, whatever its size.
const FILE_TIME: Duration = Duration::from_secs(1);
/// Time every snippet's parses may take together, whatever its size: a
/// pathological snippet is refused well within a second.
const SNIPPET_TIME: Duration = Duration::from_millis(250);
/// Slowest parse speed allowed on top of the base time: 1 µs per byte
/// (1 MB/s), some 20 times slower than tree-sitter parses real code here.
const TIME_PER_BYTE: Duration = Duration::from_micros(1);
/// Memory every parse may hold, whatever its size.
pub(crate) const BASE_MEMORY: usize = 16 << 20;
/// Memory a parse may hold per byte of text on top of the base. tree-sitter
/// holds 12 to 28 bytes per byte of the benchmark corpora's files, 95 on a
/// table of small numbers, 164 on a file of `A = 'x'` lines; error recovery
/// on odd text can grow without end.
pub(crate) const MEMORY_PER_BYTE: usize = 384;

impl Budget {
    /// A budget of `time` from now and `memory` bytes.
    pub(crate) fn new(time: Duration, memory: usize) -> Budget {
        Budget {
            deadline: Instant::now() + time,
            memory,
        }
    }

    /// The budget of parsing a file of `len` bytes.
    pub fn for_file(len: usize) -> Budget {
        Budget::new(FILE_TIME + time_for(len), memory_for(len))
    }

    /// The budget of all the parses of one snippet of `len` bytes.
    pub fn for_snippet(len: usize) -> Budget {
        Budget::new(SNIPPET_TIME + time_for(len), memory_for(len))
    }

    /// Whether the deadline has passed.
    pub(crate) fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

fn time_for(len: usize) -> Duration {
    TIME_PER_BYTE.saturating_mul(u32::try_from(len).unwrap_or(u32::MAX))
}

/// The memory a parse of `len` bytes may hold.
pub(crate) fn memory_for(len: usize) -> usize {
    BASE_MEMORY.saturating_add(len.saturating_mul(MEMORY_PER_BYTE))
}

/// Why a parse gave no tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The parse ran out of time.
    #[error("parsing it took longer than its time budget")]
    Timeout,
    /// The parse held more memory than its budget.
    #[error("parsing it needed more memory than its budget")]
    Memory,
    /// The server is stopping.
    #[error("the server is stopping")]
    Stopped,
}

/// Set when the server stops: every parse in flight is cancelled.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Cancels every parse in flight and every later one (the server stops).
pub(crate) fn stop() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// Whether [`stop`] was called: long work checks it to end early.
pub(crate) fn stopping() -> bool {
    STOPPING.load(Ordering::Relaxed)
}

thread_local! {
    /// One parser per format per thread, reused across files.
    static PARSERS: RefCell<HashMap<FormatId, Parser>> = RefCell::new(HashMap::new());
    /// Bytes tree-sitter allocated on this thread minus those it freed here.
    /// Trees freed on another thread make it drift, which is harmless: a
    /// parse only compares it with its value when the parse started.
    static HELD: Cell<isize> = const { Cell::new(0) };
}

/// Parses `text` with the format's grammar on this thread's parser within
/// `budget`, reusing the unchanged parts of `old`, a parse of an earlier
/// version already edited to match it ([`Tree::edit`]).
pub fn parse(
    format: &Format,
    text: &str,
    old: Option<&Tree>,
    budget: &Budget,
) -> Result<Tree, ParseError> {
    parse_ranges(format, text, &[], old, budget)
}

/// Like [`parse`], of only the `ranges` of `text` (all of it when empty):
/// the code of a `<script>` element, at its place in its file.
pub(crate) fn parse_ranges(
    format: &Format,
    text: &str,
    ranges: &[Range],
    old: Option<&Tree>,
    budget: &Budget,
) -> Result<Tree, ParseError> {
    install_counting_allocator();
    PARSERS.with(|cell| -> Result<Tree, ParseError> {
        let mut parsers = cell.borrow_mut();
        let parser = match parsers.entry(format.id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = Parser::new();
                parser
                    .set_language(&format.language)
                    .expect("Registry::load admits only grammars of a loadable ABI");
                e.insert(parser)
            }
        };
        // Ranges in order and apart cannot be refused; `ranges` are.
        parser
            .set_included_ranges(ranges)
            .expect("included ranges are sorted and disjoint");
        let held_at_start = HELD.get();
        let mut stopped_by = None;
        let mut progress = |_: &ParseState| {
            stopped_by = if stopping() {
                Some(ParseError::Stopped)
            } else if budget.expired() {
                Some(ParseError::Timeout)
            } else if usize::try_from(HELD.get().saturating_sub(held_at_start))
                .is_ok_and(|held| held > budget.memory)
            {
                Some(ParseError::Memory)
            } else {
                None
            };
            if stopped_by.is_some() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let bytes = text.as_bytes();
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            old,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        match tree {
            Some(tree) => Ok(tree),
            None => {
                // A cancelled parse leaves the parser mid-way; start afresh.
                parser.reset();
                Err(stopped_by.unwrap_or(ParseError::Timeout))
            }
        }
    })
}

/// Makes tree-sitter allocate with mimalloc, counted per thread, once,
/// before its first allocation (its parsers are only made in [`parse`]). A
/// parse makes and frees many small nodes, which mimalloc's thread-local
/// free lists serve faster than the system allocator.
fn install_counting_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: no tree-sitter object exists yet (parsers are made after
        // this, and everything else tree-sitter allocates comes from them),
        // so nothing allocated by one allocator is freed by the other. The
        // four functions are mimalloc's, which aligns like malloc.
        unsafe {
            tree_sitter::set_allocator(Some(tree_sitter::Allocator {
                malloc: counted::malloc,
                calloc: counted::calloc,
                realloc: counted::realloc,
                free: counted::free,
            }));
        }
    });
}

/// mimalloc's functions, adding what they hand out to [`HELD`] and taking
/// back what they free.
mod counted {
    use std::ffi::c_void;

    use libmimalloc_sys::{mi_calloc, mi_free, mi_malloc, mi_realloc, mi_usable_size};

    use super::HELD;

    fn add(bytes: usize) {
        // `try_with`: a thread being torn down frees without counting.
        let _ = HELD.try_with(|held| held.set(held.get().wrapping_add(bytes as isize)));
    }

    fn sub(bytes: usize) {
        let _ = HELD.try_with(|held| held.set(held.get().wrapping_sub(bytes as isize)));
    }

    /// # Safety
    /// As `malloc`.
    pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        // SAFETY: mimalloc's malloc; the pointer it gives is its own.
        unsafe {
            let p = mi_malloc(size);
            add(mi_usable_size(p));
            p
        }
    }

    /// # Safety
    /// As `calloc`.
    pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        // SAFETY: as `malloc`.
        unsafe {
            let p = mi_calloc(count, size);
            add(mi_usable_size(p));
            p
        }
    }

    /// # Safety
    /// As `realloc`, with a pointer from these functions.
    pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: `ptr` came from mimalloc (or is null, size 0).
        unsafe {
            let before = mi_usable_size(ptr);
            let p = mi_realloc(ptr, size);
            if !p.is_null() || size == 0 {
                sub(before);
                add(mi_usable_size(p));
            }
            p
        }
    }

    /// # Safety
    /// As `free`, with a pointer from these functions.
    pub unsafe extern "C" fn free(ptr: *mut c_void) {
        // SAFETY: `ptr` came from mimalloc (or is null, size 0).
        unsafe {
            sub(mi_usable_size(ptr));
            mi_free(ptr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;

    /// Inputs that made tree-sitter 0.25's error recovery run without end
    /// (issue 8): with 0.27 they parse, and budgets bound them anyway.
    const PATHOLOGICAL: [(&str, &str); 2] = [
        ("typescript", "\"\n'</*'[[``}s>]@*/"),
        (
            "javascript",
            "\"\"``[``-}!#[\"\"[\"\"]-{[\"\"'$/*\\x]<;;>-[}\\[`[+.x:*/",
        ),
    ];

    #[test]
    fn the_inputs_that_hung_tree_sitter_parse_within_a_snippet_budget() {
        let registry = Registry::builtin();
        for (format, text) in PATHOLOGICAL {
            let Some(format) = registry.compiled(format) else {
                continue;
            };
            let budget = Budget::for_snippet(text.len());
            assert!(parse(format, text, None, &budget).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn a_parse_past_its_deadline_is_cancelled_and_the_parser_serves_again() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let text = "let a = [1, 2, 3];\n".repeat(20_000);
        let spent = Budget::new(Duration::ZERO, usize::MAX);
        assert_eq!(
            parse(js, &text, None, &spent).unwrap_err(),
            ParseError::Timeout
        );
        let tree = parse(js, "let a = 1;", None, &Budget::for_file(10)).unwrap();
        assert!(!tree.root_node().has_error());
    }

    #[test]
    fn a_parse_over_its_memory_budget_is_cancelled() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let text = "let a = [1, 2, 3];\n".repeat(20_000);
        let small = Budget::new(Duration::from_secs(60), 1 << 20);
        assert_eq!(
            parse(js, &text, None, &small).unwrap_err(),
            ParseError::Memory
        );
        let enough = Budget::new(Duration::from_secs(60), memory_for(text.len()));
        assert!(parse(js, &text, None, &enough).is_ok());
        let unbounded = Budget::new(Duration::from_secs(60), usize::MAX);
        assert!(parse(js, &text, None, &unbounded).is_ok());
    }
}
