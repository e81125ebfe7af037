//! The visible nodes under a syntax node, in document order: the nodes a
//! `TreeCursor` visits, walked by `visible_nodes.c` in one pass over
//! tree-sitter's subtrees, where the cursor finds each next sibling again
//! from its parent (a tenth of a cold scan went to that).
//!
//! In: a node and a visitor. Out: the visitor's calls, each with a node,
//! its kind, its byte range and whether it has visible children (the walk
//! knows them, so the visitor need not ask tree-sitter again), and its
//! answer: walk them, go on after the node, or stop.
//!
//! Invariants: the nodes, their kinds and their byte ranges are the
//! cursor's (`tests` compares the two on every language's test data); the
//! walk keeps its place on the heap, so no depth of nesting overflows the
//! stack. The C side is compiled against the tree-sitter sources this
//! crate links (`build.rs`), so it reads the same subtree layout.

use std::ffi::c_void;

use tree_sitter::ffi::TSNode;
use tree_sitter::Node;

/// What to do after a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Step {
    /// Walk its visible children next.
    Descend = 0,
    /// Go on after it.
    Skip = 1,
    /// End the walk.
    Stop = 2,
}

/// A visible node as the walk meets it.
#[derive(Clone, Copy)]
pub(crate) struct Visible<'t> {
    pub node: Node<'t>,
    /// Its kind (`Node::kind_id`: its alias, if it has one).
    pub kind: u16,
    /// Its byte range.
    pub start: usize,
    pub end: usize,
    /// Whether it has visible children.
    pub has_children: bool,
}

/// `DupcheckVisible` of `visible_nodes.c`.
#[repr(C)]
struct RawVisible {
    node: TSNode,
    start: u32,
    end: u32,
    symbol: u16,
    has_children: bool,
}

type Visit = unsafe extern "C" fn(*mut c_void, *const RawVisible) -> u32;

extern "C" {
    fn dupcheck_visible_nodes(root: TSNode, visit: Visit, context: *mut c_void) -> bool;
}

/// Calls `visit` with `root` and, as its answers say, the visible nodes
/// under it, in document order. Returns false if a visit said
/// [`Step::Stop`].
pub(crate) fn visible_nodes<'t, F: FnMut(Visible<'t>) -> Step>(
    root: Node<'t>,
    mut visit: F,
) -> bool {
    unsafe extern "C" fn trampoline<'t, V: FnMut(Visible<'t>) -> Step>(
        context: *mut c_void,
        raw: *const RawVisible,
    ) -> u32 {
        // SAFETY: `context` is the `&mut F` passed below, alive for the
        // walk; `raw` points to the walk's description of a node of the
        // tree `root` borrows, valid during the call.
        let visit = unsafe { &mut *context.cast::<V>() };
        let raw = unsafe { &*raw };
        let visible = Visible {
            node: unsafe { Node::from_raw(raw.node) },
            kind: raw.symbol,
            start: raw.start as usize,
            end: raw.end as usize,
            has_children: raw.has_children,
        };
        // A panic must not unwind through C: it aborts, as it would have
        // to; the visitors here do not panic.
        visit(visible) as u32
    }
    let context: *mut c_void = (&raw mut visit).cast();
    // SAFETY: the C walk reads the subtrees of `root`'s tree, which `root`
    // keeps alive, and calls `trampoline` with `context` only during the
    // call.
    unsafe { dupcheck_visible_nodes(root.into_raw(), trampoline::<'t, F>, context) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;

    /// Every visible node (kind, range, whether it has children) as a
    /// `TreeCursor` visits them.
    fn by_cursor(root: Node<'_>) -> Vec<(u16, usize, usize, bool)> {
        let mut out = Vec::new();
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let descend = cursor.goto_first_child();
            if descend {
                cursor.goto_parent();
            }
            out.push((node.kind_id(), node.start_byte(), node.end_byte(), descend));
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return out;
                }
            }
        }
    }

    /// `text` parsed as the format named `name`.
    fn parse(name: &str, text: &str) -> tree_sitter::Tree {
        let registry = Registry::builtin();
        let format = registry.lookup(name).expect("a format's test data");
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&format.language).unwrap();
        parser.parse(text, None).unwrap()
    }

    fn by_walk(root: Node<'_>) -> Vec<(u16, usize, usize, bool)> {
        let mut out = Vec::new();
        visible_nodes(root, |v| {
            // What the walk says of a node is what tree-sitter says.
            assert_eq!(
                (v.kind, v.start, v.end),
                (v.node.kind_id(), v.node.start_byte(), v.node.end_byte())
            );
            out.push((v.kind, v.start, v.end, v.has_children));
            Step::Descend
        });
        out
    }

    #[test]
    fn the_walk_visits_what_a_cursor_visits_in_every_language() {
        let mut checked = 0;
        for entry in std::fs::read_dir("testdata/tokens").unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            // `NAME.txt` holds the input before its token list.
            let name = path.file_stem().unwrap().to_str().unwrap();
            if Registry::builtin().compiled(name).is_none() {
                continue;
            }
            let tree = parse(name, &text);
            let root = tree.root_node();
            assert_eq!(by_walk(root), by_cursor(root), "{name}");
            // And from a node inside, as the walk of an import starts.
            if let Some(child) = root.named_child(0) {
                assert_eq!(by_walk(child), by_cursor(child), "{name}, first child");
            }
            checked += 1;
        }
        assert_eq!(checked, Registry::builtin().formats().len());
    }

    #[test]
    fn skip_and_stop_end_where_the_visitor_says() {
        let text = "f(a, [b, c]); g(d);";
        let tree = parse("js", text);
        let mut kinds = Vec::new();
        let finished = visible_nodes(tree.root_node(), |v| {
            let node = v.node;
            kinds.push(node.kind());
            match node.kind() {
                "arguments" => Step::Skip,
                "identifier" if &text[node.byte_range()] == "g" => Step::Stop,
                _ => Step::Descend,
            }
        });
        assert!(!finished);
        assert_eq!(
            kinds,
            [
                "program",
                "expression_statement",
                "call_expression",
                "identifier",
                "arguments",
                ";",
                "expression_statement",
                "call_expression",
                "identifier",
            ]
        );
    }

    #[test]
    fn deep_nesting_walks_on_the_heap() {
        let text = format!("x = {}1{};", "[".repeat(20_000), "]".repeat(20_000));
        let tree = parse("js", &text);
        let mut numbers = 0;
        assert!(visible_nodes(tree.root_node(), |v| {
            numbers += usize::from(v.node.kind() == "number");
            Step::Descend
        }));
        assert_eq!(numbers, 1);
    }
}
