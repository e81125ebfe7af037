//! The leaves of a syntax tree, walked in document order ([`Leaf`]: class,
//! bytes, inside an import or not): declared literals and comments as one
//! leaf each, strings cut around their interpolations, the code of
//! embedded scripts walked with its own grammar.

use tree_sitter::{Node, Tree};

use crate::engine::definitions::{Collector, Definitions};
use crate::engine::embed;
use crate::engine::grammar::{Class, Format, Kinds};
use crate::engine::parse::{parse, parse_ranges, Budget, ParseError};
use crate::engine::visible_nodes::{visible_nodes, Step};

/// One token leaf of a parse, as a walk reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    /// Its declared class, or `Other`.
    pub class: Class,
    /// Byte offset of its first byte (files are limited to 4 GiB).
    pub start: u32,
    /// Byte offset just past its last byte.
    pub end: u32,
    /// Whether it lies inside an import declaration (`import_kinds`).
    pub import: bool,
}

impl Leaf {
    /// This leaf moved by `delta` bytes.
    pub(crate) fn shifted(self, delta: i64) -> Leaf {
        Leaf {
            start: (i64::from(self.start) + delta) as u32,
            end: (i64::from(self.end) + delta) as u32,
            ..self
        }
    }
}

/// Calls `leaf` for every token leaf of `text`, a file's text, in source
/// order, comments included (their class says so); fails when the parse
/// runs out of its [`Budget::for_file`].
pub fn for_each_leaf(
    format: &Format,
    text: &str,
    leaf: impl FnMut(Leaf),
) -> Result<(), ParseError> {
    for_each_leaf_within(format, text, &Budget::for_file(text.len()), leaf)
}

/// Like [`for_each_leaf`], within `budget`.
pub(crate) fn for_each_leaf_within(
    format: &Format,
    text: &str,
    budget: &Budget,
    mut leaf: impl FnMut(Leaf),
) -> Result<(), ParseError> {
    let tree = parse(format, text, None, budget)?;
    walk_parse(format, &tree, text, budget, &mut |l| {
        leaf(l);
        true
    })?;
    Ok(())
}

/// Like [`for_each_leaf_within`], gathering the text's definitions in the
/// same walk.
pub(crate) fn for_each_leaf_defined(
    format: &Format,
    text: &str,
    budget: &Budget,
    mut leaf: impl FnMut(Leaf),
) -> Result<Definitions, ParseError> {
    let tree = parse(format, text, None, budget)?;
    let mut collector = Collector::default();
    walk_parse_collecting(
        format,
        &tree,
        text,
        budget,
        &mut |l| {
            leaf(l);
            true
        },
        Some(&mut collector),
    )?;
    Ok(collector.finish())
}

/// Visits the token leaves of `tree`, a parse of `text`: its own or, for a
/// markup format, those of the code of its script elements, each parsed
/// within `budget` with its format's grammar. Returns whether `leaf` let
/// the walk go on to the end.
pub(crate) fn walk_parse(
    format: &Format,
    tree: &Tree,
    text: &str,
    budget: &Budget,
    leaf: &mut impl FnMut(Leaf) -> bool,
) -> Result<bool, ParseError> {
    walk_parse_collecting(format, tree, text, budget, leaf, None)
}

/// Like [`walk_parse`], giving every node met to `definitions` too.
pub(crate) fn walk_parse_collecting(
    format: &Format,
    tree: &Tree,
    text: &str,
    budget: &Budget,
    leaf: &mut impl FnMut(Leaf) -> bool,
    mut definitions: Option<&mut Collector>,
) -> Result<bool, ParseError> {
    let Some(embedded) = &format.embedded else {
        return Ok(walk_within(
            format,
            tree.root_node(),
            0,
            false,
            leaf,
            definitions,
        ));
    };
    for script in embed::scripts(embedded, tree, text) {
        let code = parse_ranges(script.format, text, &[script.range], None, budget)?;
        let d = definitions.as_deref_mut();
        if !walk_within(script.format, code.root_node(), 0, false, leaf, d) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Visits the token leaves of the subtree of `root`, iteratively (trees of
/// long expressions are too deep for recursion).
pub(crate) fn walk(format: &Format, root: Node<'_>, leaf: &mut impl FnMut(Leaf) -> bool) -> bool {
    walk_from(format, root, 0, leaf)
}

/// Like [`walk`], skipping the subtrees that end at or before byte `from`.
pub(crate) fn walk_from(
    format: &Format,
    root: Node<'_>,
    from: usize,
    leaf: &mut impl FnMut(Leaf) -> bool,
) -> bool {
    walk_within(format, root, from, false, leaf, None)
}

/// Like [`walk_from`]; every leaf is an import's when `in_import` (the
/// code of an interpolation inside one), else those inside a node of the
/// format's `import_kinds`. Walked in one pass over the tree
/// ([`visible_nodes`]), with as few calls into tree-sitter per node as
/// will do: the walk was a tenth of a cold scan. Every node met goes to
/// `definitions` too, when given (strings and imports hold none).
fn walk_within(
    format: &Format,
    root: Node<'_>,
    from: usize,
    in_import: bool,
    leaf: &mut impl FnMut(Leaf) -> bool,
    mut definitions: Option<&mut Collector>,
) -> bool {
    let kinds = format.kinds();
    if !kinds.has_definitions() {
        definitions = None;
    }
    visible_nodes(root, |v| {
        if from > 0 && v.end <= from {
            return Step::Skip;
        }
        if let Some(collector) = definitions.as_deref_mut() {
            collector.visit(kinds, &v);
        }
        let (node, kind) = (v.node, v.kind);
        let go_on = match kinds.class_of(kind) {
            // Imports hold no other: the subtree is walked as an import's.
            _ if !in_import && kinds.is_import(kind) => {
                walk_within(format, node, from, true, leaf, None)
            }
            Some(Class::String) if kinds.has_interpolations() && has_interpolation(kinds, node) => {
                string_with_interpolations(format, node, in_import, leaf)
            }
            Some(class) => emit(v.start, v.end, class, in_import, leaf),
            None if v.has_children => return Step::Descend,
            None => emit(v.start, v.end, Class::Other, in_import, leaf),
        };
        if go_on {
            Step::Skip
        } else {
            Step::Stop
        }
    })
}

/// Reports one leaf; zero-width ones (tree-sitter's MISSING nodes) are not
/// tokens. Returns whether to go on.
pub(super) fn emit(
    start: usize,
    end: usize,
    class: Class,
    import: bool,
    leaf: &mut impl FnMut(Leaf) -> bool,
) -> bool {
    start >= end || leaf(piece(class, start, end, import))
}

/// The leaf of `class` at `start..end`.
pub(super) fn piece(class: Class, start: usize, end: usize, import: bool) -> Leaf {
    // Files are limited to 4 GiB by the walker, so offsets fit.
    Leaf {
        class,
        start: start as u32,
        end: end as u32,
        import,
    }
}

fn has_interpolation(kinds: &Kinds, node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let found = node
        .children(&mut cursor)
        .any(|c| kinds.is_interpolation(c.kind_id()));
    found
}

/// A template string or f-string: its text pieces are string tokens, and the
/// code of its interpolations is tokenized like any code, so a renamed
/// variable inside `${...}` or `{...}` is an identifier, not changed text.
fn string_with_interpolations(
    format: &Format,
    node: Node<'_>,
    import: bool,
    leaf: &mut impl FnMut(Leaf) -> bool,
) -> bool {
    let mut piece_start = node.start_byte();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if format.is_interpolation(child.kind_id()) {
            if piece_start < child.start_byte()
                && !leaf(piece(
                    Class::String,
                    piece_start,
                    child.start_byte(),
                    import,
                ))
            {
                return false;
            }
            if !walk_within(format, child, 0, import, leaf, None) {
                return false;
            }
            piece_start = child.end_byte();
        }
    }
    piece_start >= node.end_byte()
        || leaf(piece(Class::String, piece_start, node.end_byte(), import))
}
