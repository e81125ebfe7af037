//! Snippets: parsing code cut out of its context, and editors' buffers.
//!
//! In: a [`Format`], a snippet's text and, for an editor's buffer, the
//! [`SnippetParse`] of its previous version. Out: the snippet's leaves, as
//! [`tokens`](crate::engine::tokens) turns them into tokens, and its parse, for the
//! next version.
//!
//! A snippet is what a client pastes: cut out of its file, often inside a
//! block comment or a class. So the parts cut inside a block comment are
//! blanked ([`blank_cut_comments`]); the snippet's first lines decide
//! whether it is parsed inside one of the format's `snippet_wrappers` (a
//! method inside `class _ { ... }`); and the snippet is parsed once,
//! extending the parse of those first lines. An editor's buffer, checked
//! after each keystroke, is reparsed incrementally from its previous parse,
//! and only the leaves in the range that changed are walked again.
//!
//! Invariants: the leaves are those of a parse of the (blanked) snippet,
//! the wrapper's own left out; a buffer reparsed from its previous version
//! gives the leaves a fresh parse of it gives (tested over random edits).

use std::sync::OnceLock;

use tree_sitter::{InputEdit, Point, Tree};

use crate::engine::definitions::{self, Collector, Definitions};
use crate::engine::grammar::{Class, Format, FormatId};
use crate::engine::parse::{parse, Budget, ParseError};
use crate::engine::tokens::{walk, walk_from, walk_parse_collecting, Leaf, Normalization, Token};

/// The normalized token stream of a snippet, within the
/// [`Budget::for_snippet`] of its length.
pub fn tokenize_snippet(
    format: &Format,
    text: &str,
    normalization: &Normalization,
) -> Result<Vec<Token>, ParseError> {
    tokenize_snippet_once(
        format,
        text,
        normalization,
        &Budget::for_snippet(text.len()),
    )
}

/// The normalized token stream of a snippet, all its parses within
/// `budget`; its tree is freed before the tokens are made (nothing keeps
/// it), so that a large snippet's tree and tokens never fill memory at once.
pub(crate) fn tokenize_snippet_once(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    budget: &Budget,
) -> Result<Vec<Token>, ParseError> {
    let parse = snippet_parse(format, &blank_cut_comments(format, text), None, budget)?;
    let offset = parse.offset(format);
    let SnippetParse { leaves, .. } = parse;
    Ok(tokens_of(format, text, normalization, &leaves, offset))
}

/// Like [`tokenize_snippet_once`], with the snippet's definitions (those
/// of its wrapper left out), read off the same tree before it is freed.
pub(crate) fn tokenize_snippet_defined(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    budget: &Budget,
) -> Result<(Vec<Token>, Definitions), ParseError> {
    let parse = snippet_parse(format, &blank_cut_comments(format, text), None, budget)?;
    let definitions = parse.definitions(format, text.len()).into_inner(format);
    let offset = parse.offset(format);
    let SnippetParse { leaves, .. } = parse;
    Ok((
        tokens_of(format, text, normalization, &leaves, offset),
        definitions,
    ))
}

/// The normalized token stream of a snippet whose earlier version was
/// parsed as `previous`, and its parse, for the next version; all its
/// parses together within `budget`.
///
/// When the snippet's first lines parse with errors, they are also parsed
/// inside each of the format's `snippet_wrappers` (a TypeScript method
/// inside `class _ { ... }`), and when a wrapper mends them, the whole
/// snippet is parsed inside it, the wrapper's own leaves left out. So a
/// method pasted without its class tokenizes as it does in its file.
/// `previous` (an editor's buffer, checked on every edit) is reused: only
/// what changed is parsed again.
pub fn tokenize_snippet_after(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    previous: Option<SnippetParse>,
    budget: &Budget,
) -> Result<(Vec<Token>, SnippetParse), ParseError> {
    let parse = snippet_parse(format, &blank_cut_comments(format, text), previous, budget)?;
    let tokens = tokens_of(
        format,
        text,
        normalization,
        &parse.leaves,
        parse.offset(format),
    );
    Ok((tokens, parse))
}

/// The tokens of the leaves of a snippet parsed at `offset` (after its
/// wrapper's prefix). Ignore patterns match the snippet's own text, as
/// they match a file's: the wrapper and the blanking are not seen.
fn tokens_of(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    leaves: &[Leaf],
    offset: usize,
) -> Vec<Token> {
    let mut tokens = Vec::with_capacity(leaves.len());
    let mut normalizer = normalization.of(text);
    for &leaf in leaves {
        let (start, end) = (leaf.start as usize, leaf.end as usize);
        if start >= offset && end <= offset + text.len() {
            normalizer.push(&mut tokens, format, leaf.shifted(-(offset as i64)));
        }
    }
    tokens
}

/// The parse of one version of a snippet, kept to reparse the next one
/// incrementally (see [`tokenize_snippet_after`]).
pub struct SnippetParse {
    format: FormatId,
    /// The head that chose the wrapper, as it was probed.
    head: String,
    /// The wrapper used, as an index into the format's `snippet_wrappers`.
    wrapper: Option<usize>,
    /// The text as parsed: cut comments blanked, inside its wrapper.
    parsed: String,
    tree: Tree,
    /// The leaves of `tree`, comments included, at their bytes in `parsed`.
    leaves: Vec<Leaf>,
    /// The definitions of `tree` (and of a markup format's scripts) at
    /// their bytes in `parsed`, when the walk of its leaves gathered them;
    /// `None` when a reparse walked only what changed.
    definitions: Option<Definitions>,
}

/// A snippet's definitions, at its own offsets: gathered with its leaves,
/// or read off its tree when first asked for.
#[derive(Debug, Default)]
pub(crate) struct SnippetDefinitions {
    walked: OnceLock<Definitions>,
    /// The tree still to walk, the snippet's offset in it and its length.
    tree: Option<(Tree, u32, u32)>,
}

impl SnippetDefinitions {
    /// Definitions already gathered.
    pub(crate) fn gathered(definitions: Definitions) -> SnippetDefinitions {
        SnippetDefinitions {
            walked: OnceLock::from(definitions),
            tree: None,
        }
    }

    /// The definitions (of a snippet in `format`), its tree walked for
    /// them on the first call if they were not gathered.
    pub(crate) fn get(&self, format: &Format) -> &Definitions {
        self.walked.get_or_init(|| match &self.tree {
            Some((tree, offset, len)) => definitions::of_tree(format, tree).within(*offset, *len),
            None => Definitions::default(),
        })
    }

    /// The definitions, as [`get`](Self::get) gives them.
    pub(crate) fn into_inner(self, format: &Format) -> Definitions {
        self.get(format);
        self.walked.into_inner().unwrap_or_default()
    }
}

/// Every leaf of `tree`, in order.
fn leaves_of(format: &Format, tree: &Tree) -> Vec<Leaf> {
    let mut leaves = Vec::new();
    walk(format, tree.root_node(), &mut |leaf| {
        leaves.push(leaf);
        true
    });
    leaves
}

/// Every leaf of `tree`, a parse of `text`: its own or, for a markup
/// format, those of its script elements' code (see [`walk_parse_collecting`]); and
/// the definitions, gathered in the same walk.
fn document_leaves(
    format: &Format,
    tree: &Tree,
    text: &str,
    budget: &Budget,
) -> Result<(Vec<Leaf>, Definitions), ParseError> {
    let mut leaves = Vec::new();
    let mut collector = Collector::default();
    let leaf = &mut |leaf| {
        leaves.push(leaf);
        true
    };
    walk_parse_collecting(format, tree, text, budget, leaf, Some(&mut collector))?;
    Ok((leaves, collector.finish()))
}

impl SnippetParse {
    /// Bytes of the text parsed (a measure of what keeping it costs).
    pub(crate) fn len(&self) -> usize {
        self.parsed.len()
    }

    /// The definitions of the snippet (`len` bytes) in this parse, at its
    /// own offsets: those of its wrapper left out. Those its leaves' walk
    /// gathered; after an incremental reparse, whose walk saw only what
    /// changed, its tree is walked for them when they are first asked for
    /// (a check that finds nothing never asks). A markup snippet is always
    /// parsed afresh, so its scripts' are gathered.
    pub(crate) fn definitions(&self, format: &Format, len: usize) -> SnippetDefinitions {
        let offset = self.offset(format) as u32;
        match &self.definitions {
            Some(gathered) => SnippetDefinitions::gathered(gathered.within(offset, len as u32)),
            None => SnippetDefinitions {
                walked: OnceLock::new(),
                // A copy of a tree is a reference to the same nodes.
                tree: Some((self.tree.clone(), offset, len as u32)),
            },
        }
    }

    /// Where the snippet starts in the text parsed.
    fn offset(&self, format: &Format) -> usize {
        self.wrapper
            .and_then(|i| format.snippet_wrappers.get(i))
            .map_or(0, |(prefix, _)| prefix.len())
    }
}

/// `text` inside the format's snippet wrapper number `wrapper`, or as it is.
fn wrapped(format: &Format, wrapper: Option<usize>, text: &str) -> String {
    match wrapper.and_then(|i| format.snippet_wrappers.get(i)) {
        Some((prefix, suffix)) => format!("{prefix}{text}{suffix}"),
        None => text.to_owned(),
    }
}

/// A parse of `new`, reusing `tree`, the parse of `old`, for all that did
/// not change between the two texts; with the old tree as edited to match,
/// and the edit.
fn reparse(
    format: &Format,
    mut tree: Tree,
    old: &str,
    new: &str,
    budget: &Budget,
) -> Result<(Tree, Tree, InputEdit), ParseError> {
    let edit = edit_between(old, new);
    tree.edit(&edit);
    let reparsed = parse(format, new, Some(&tree), budget)?;
    Ok((reparsed, tree, edit))
}

/// The leaves of `tree`, a reparse of an edited `old_tree` whose leaves
/// were `old_leaves`: those before and after what changed are taken over
/// (shifted by the edit), and only the changed range is walked. Falls back
/// to walking everything when a leaf straddles the range's ends.
fn respliced_leaves(
    format: &Format,
    tree: &Tree,
    old_tree: &Tree,
    edit: &InputEdit,
    old_leaves: &[Leaf],
) -> Vec<Leaf> {
    let delta = edit.new_end_byte as i64 - edit.old_end_byte as i64;
    // The changed range, in the new text, widened to the old leaves that
    // touch it (an edit next to a token changes that token).
    let (mut start, mut end) = (edit.start_byte, edit.new_end_byte);
    for range in tree.changed_ranges(old_tree) {
        start = start.min(range.start_byte);
        end = end.max(range.end_byte);
    }
    let shift = |l: &Leaf| l.shifted(delta);
    let kept_before = old_leaves.partition_point(|l| (l.end as usize) < start);
    if let Some(touching) = old_leaves.get(kept_before) {
        start = start.min(touching.start as usize);
    }
    let old_end = (end as i64 - delta).max(start as i64) as usize;
    let after = old_leaves.partition_point(|l| (l.start as usize) <= old_end);
    if let Some(touching) = after.checked_sub(1).and_then(|i| old_leaves.get(i)) {
        if touching.end as usize >= old_end {
            end = end.max(shift(touching).end as usize);
        }
    }
    let mut leaves: Vec<Leaf> = old_leaves[..kept_before].to_vec();
    let mut straddles = false;
    walk_from(format, tree.root_node(), start, &mut |leaf| {
        let (s, e) = (leaf.start as usize, leaf.end as usize);
        if s >= end {
            return false;
        }
        straddles |= s < start || e > end;
        leaves.push(leaf);
        true
    });
    let overlaps_after = old_leaves
        .get(after)
        .is_some_and(|l| (shift(l).start as usize) < end);
    if straddles || overlaps_after {
        return leaves_of(format, tree);
    }
    leaves.extend(old_leaves[after..].iter().map(shift));
    leaves
}

/// The edit that turns `old` into `new`: one replaced range between their
/// common start and their common end.
fn edit_between(old: &str, new: &str) -> InputEdit {
    let mut start = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(start) {
        start -= 1;
    }
    let longest_end = old.len().min(new.len()) - start;
    let mut end = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(longest_end)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - end) || !new.is_char_boundary(new.len() - end) {
        end -= 1;
    }
    let (old_end, new_end) = (old.len() - end, new.len() - end);
    let start_position = advance(Point::default(), &old[..start]);
    InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position,
        old_end_position: advance(start_position, &old[start..old_end]),
        new_end_position: advance(start_position, &new[start..new_end]),
    }
}

/// Tree-sitter's position (row, column in bytes) after `text`, which starts
/// at `from`.
fn advance(from: Point, text: &str) -> Point {
    match text.rfind('\n') {
        Some(last) => Point {
            row: from.row + text.bytes().filter(|&b| b == b'\n').count(),
            column: text.len() - last - 1,
        },
        None => Point {
            row: from.row,
            column: from.column + text.len(),
        },
    }
}

/// Lines of code a snippet's first error must come within for wrappers to
/// be tried (a method head spans a few lines).
const WRAPPER_HEAD_LINES: usize = 8;

/// Lines from a snippet's first non-blank one that decide on a wrapper; a
/// snippet up to twice as long is its own head (one parse beats two).
const WRAPPER_PROBE_LINES: usize = 12;

/// The parse of a snippet, reusing `previous` when it is of the same format.
///
/// Wrappers give a snippet its missing start, so its head (see
/// [`head_end`]) decides: a wrapper is used when it parses the head with
/// fewer ERROR nodes than the head alone. MISSING nodes do not count there:
/// a head cut short misses its closing brackets however it is wrapped. So
/// the whole snippet is parsed once, bare or wrapped, extending the chosen
/// probe's parse (a short snippet is its own head, and its probes serve). A
/// head unchanged since `previous` keeps its wrapper without probes.
fn snippet_parse(
    format: &Format,
    text: &str,
    previous: Option<SnippetParse>,
    budget: &Budget,
) -> Result<SnippetParse, ParseError> {
    // A markup file's code is parsed afresh: its script elements are
    // found again in each version.
    let previous = previous.filter(|p| p.format == format.id && format.embedded.is_none());
    let head_end = head_end(text);
    // A head that ends inside a block comment would misparse there. The
    // whole snippet was blanked already: blanking it again could blank
    // more (a second `*/`), and its probe is taken as its parse.
    let head = if head_end < text.len() {
        blank_cut_comments(format, &text[..head_end]).into_owned()
    } else {
        text.to_owned()
    };
    let (wrapper, probed) = match &previous {
        Some(p) if p.head == head => (p.wrapper, None),
        _ if format.snippet_wrappers.is_empty() => (None, None),
        _ => {
            let bare = parse(format, &head, None, budget)?;
            match mending_wrapper(format, &head, &bare, budget)? {
                Some((probe, i)) => (Some(i), Some(probe)),
                None => (None, Some(bare)),
            }
        }
    };
    let parsed = wrapped(format, wrapper, text);
    let mut leaves = None;
    let tree = match (probed, previous) {
        (Some(tree), _) if head_end == text.len() => tree,
        (_, Some(p)) if p.wrapper == wrapper => {
            let (tree, old_tree, edit) = reparse(format, p.tree, &p.parsed, &parsed, budget)?;
            leaves = Some(respliced_leaves(format, &tree, &old_tree, &edit, &p.leaves));
            tree
        }
        // The probe parsed the snippet's start: extend it to the whole.
        (Some(tree), _) => {
            let head = wrapped(format, wrapper, &head);
            reparse(format, tree, &head, &parsed, budget)?.0
        }
        _ => parse(format, &parsed, None, budget)?,
    };
    let (leaves, definitions) = match leaves {
        Some(leaves) => (leaves, None),
        None => {
            let (leaves, definitions) = document_leaves(format, &tree, &parsed, budget)?;
            (leaves, Some(definitions))
        }
    };
    Ok(SnippetParse {
        format: format.id,
        head,
        wrapper,
        parsed,
        tree,
        leaves,
        definitions,
    })
}

/// Where a snippet's head ends: after its first non-blank line and the
/// [`WRAPPER_PROBE_LINES`] - 1 lines that follow, or at its end when the
/// rest is shorter than that.
fn head_end(text: &str) -> usize {
    let first = text.len() - text.trim_start().len();
    let line_start = text[..first].rfind('\n').map_or(0, |i| i + 1);
    let mut line_ends = text[line_start..]
        .match_indices('\n')
        .map(|(i, _)| line_start + i);
    match (
        line_ends.nth(WRAPPER_PROBE_LINES - 1),
        line_ends.nth(WRAPPER_PROBE_LINES - 1),
    ) {
        (Some(end), Some(_)) => end,
        _ => text.len(),
    }
}

/// The wrapper that parses `head` with the fewest ERROR nodes, fewer than
/// the bare parse `tree` of it has, with its parse; none when the head's
/// first error comes after [`WRAPPER_HEAD_LINES`] lines of code.
fn mending_wrapper(
    format: &Format,
    head: &str,
    tree: &Tree,
    budget: &Budget,
) -> Result<Option<(Tree, usize)>, ParseError> {
    // A head that is all text outside the code (PHP without `<?php`) was
    // cut from after its tag: any wrapper parses it better than that.
    let root = tree.root_node();
    let mut cursor = root.walk();
    let outside = root.child_count() > 0
        && root
            .children(&mut cursor)
            .all(|c| format.is_outside_code(c.kind_id()));
    let mut fewest = if outside {
        usize::MAX
    } else {
        count_errors(tree, false)
    };
    if fewest == 0 {
        return Ok(None);
    }
    let mut first_code = head.len();
    walk(format, root, &mut |leaf| {
        first_code = leaf.start as usize;
        leaf.class == Class::Comment
    });
    let first_error = if outside {
        first_code
    } else {
        first_error(tree).start
    };
    let before_error = &head[first_code.min(first_error)..first_error];
    if before_error.bytes().filter(|&b| b == b'\n').count() >= WRAPPER_HEAD_LINES {
        return Ok(None);
    }
    let mut best = None;
    for i in 0..format.snippet_wrappers.len() {
        let probe = parse(format, &wrapped(format, Some(i), head), None, budget)?;
        let errors = count_errors(&probe, false);
        if errors < fewest {
            fewest = errors;
            best = Some((probe, i));
        }
        if fewest == 0 {
            break;
        }
    }
    Ok(best)
}

/// A snippet cut inside a block comment starts with the comment's tail (or
/// ends with its head): prose that would parse as broken code, slowly and
/// into tokens no file has. Those parts are blanked (spaces, line breaks
/// kept, so offsets stay), when they are unmistakable: a first `*/` that
/// ends its line and comes before any `/*`, or a last `/*` that starts its
/// line and is never closed.
pub fn blank_cut_comments<'a>(format: &Format, text: &'a str) -> std::borrow::Cow<'a, str> {
    let Some((open, close)) = &format.block_comment else {
        return text.into();
    };
    let mut blank = Vec::new();
    if let Some(c) = text.find(close.as_str()) {
        let after = c + close.len();
        let ends_line = text[after..]
            .split('\n')
            .next()
            .is_some_and(|rest| rest.trim().is_empty());
        if ends_line && text.find(open.as_str()).is_none_or(|o| o > c) {
            blank.push(0..after);
        }
    }
    if let Some(o) = text.rfind(open.as_str()) {
        let line_start = text[..o].rfind('\n').map_or(0, |i| i + 1);
        let starts_line = text[line_start..o].trim().is_empty();
        let unclosed = !text[o..].contains(close.as_str());
        if starts_line && unclosed && blank.first().is_none_or(|b| b.end <= o) {
            blank.push(o..text.len());
        }
    }
    if blank.is_empty() {
        return text.into();
    }
    let mut bytes = text.as_bytes().to_vec();
    for range in blank {
        for b in &mut bytes[range] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Whole characters were replaced by ASCII spaces, byte for byte.
    String::from_utf8(bytes).map_or(text.into(), Into::into)
}

/// Bytes of the first ERROR or MISSING node (empty at the end if none).
fn first_error(tree: &Tree) -> std::ops::Range<usize> {
    let mut node = tree.root_node();
    loop {
        if node.is_error() || node.is_missing() {
            return node.start_byte()..node.end_byte();
        }
        let mut cursor = node.walk();
        let next = node.children(&mut cursor).find(|c| c.has_error());
        match next {
            Some(child) => node = child,
            None => return node.end_byte()..node.end_byte(),
        }
    }
}

/// ERROR nodes, and MISSING ones too with `missing`; only subtrees with
/// errors are visited.
fn count_errors(tree: &Tree, missing: bool) -> usize {
    let mut count = 0;
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        count += usize::from(node.is_error() || (missing && node.is_missing()));
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return count;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::tokens::{tokenize, Mode, TokenClass};

    #[test]
    fn a_method_pasted_without_its_class_tokenizes_as_in_its_file() {
        let registry = Registry::builtin();
        let ts = registry.lookup("ts").unwrap();
        let head = "public schedule(state?: T, delay: number = 0): void {\n";
        // Short, the snippet is its own head; long, its head decides.
        for body_lines in [1, 40] {
            let body: String = (0..body_lines)
                .map(|i| format!("  this.delay{i} = delay;\n"))
                .collect();
            let method = format!("{head}{body}}}");
            let file = format!("class Action<T> {{\n{method}\n}}\n");
            let in_file = tokenize(ts, &file, &Normalization::default()).unwrap();
            let at = file.find("public").unwrap() as u32;
            let expected: Vec<(u64, TokenClass)> = in_file
                .iter()
                .filter(|t| t.start >= at && (t.end() as usize) <= at as usize + method.len())
                .map(|t| (t.id_in(Mode::Strict), t.class()))
                .collect();
            let snippet: Vec<(u64, TokenClass)> =
                tokenize_snippet(ts, &method, &Normalization::default())
                    .unwrap()
                    .iter()
                    .map(|t| (t.id_in(Mode::Strict), t.class()))
                    .collect();
            assert_eq!(snippet, expected, "{body_lines} body lines");
            // Out of context, `number` would be taken for an identifier.
            assert_ne!(
                tokenize(ts, &method, &Normalization::default())
                    .unwrap()
                    .iter()
                    .map(|t| (t.id_in(Mode::Strict), t.class()))
                    .collect::<Vec<_>>(),
                expected
            );
        }
    }

    #[test]
    fn ignore_patterns_match_a_snippet_as_they_match_its_file() {
        let registry = Registry::builtin();
        let ts = registry.lookup("ts").unwrap();
        let normalization = Normalization {
            ignore_patterns: crate::engine::patterns::IgnorePatterns::new(&[
                r"(?s)// generated.*?// end",
            ])
            .unwrap(),
            ..Normalization::default()
        };
        // A method: parsed inside a wrapper, the patterns still see its text.
        let method = "public area(): number {\n  // generated\n  const k = 2;\n  // end\n  return this.w * k;\n}";
        let file = format!("class Box {{\n{method}\n}}\n");
        let at = file.find(method).unwrap();
        let in_file: Vec<((u64, TokenClass), usize)> = tokenize(ts, &file, &normalization)
            .unwrap()
            .iter()
            .filter(|t| t.start as usize >= at && t.end() as usize <= at + method.len())
            .map(|t| ((t.id_in(Mode::Strict), t.class()), t.start as usize - at))
            .collect();
        let snippet: Vec<((u64, TokenClass), usize)> = tokenize_snippet(ts, method, &normalization)
            .unwrap()
            .iter()
            .map(|t| ((t.id_in(Mode::Strict), t.class()), t.start as usize))
            .collect();
        assert_eq!(snippet, in_file);
        // `const k = 2 ;` is dropped.
        let all = tokenize_snippet(ts, method, &Normalization::default()).unwrap();
        assert_eq!(all.len(), snippet.len() + 5);
        // An editor's buffer, reparsed from its previous version, too.
        let budget = Budget::for_snippet(method.len());
        let (_, previous) =
            tokenize_snippet_after(ts, &method[..40], &normalization, None, &budget).unwrap();
        let (again, _) =
            tokenize_snippet_after(ts, method, &normalization, Some(previous), &budget).unwrap();
        assert_eq!(
            again
                .iter()
                .map(|t| ((t.id_in(Mode::Strict), t.class()), t.start as usize))
                .collect::<Vec<_>>(),
            snippet
        );
    }

    /// Cases in `testdata/snippets`: each `NAME.EXT` source file has a
    /// `NAME.EXT.ranges` beside it, one `FIRST-LAST what` per line (1-based
    /// lines, inclusive). Those lines, posted alone as a snippet, must give
    /// exactly the tokens, at the same places, that they give inside the
    /// file: a method without its class, statements without their function.
    #[test]
    fn snippets_cut_from_files_tokenize_as_in_their_files() {
        let registry = Registry::builtin();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/snippets");
        let mut failures = Vec::new();
        let mut cases = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let ranges_path = entry.unwrap().path();
            if ranges_path.extension().is_none_or(|e| e != "ranges") {
                continue;
            }
            let path = ranges_path.with_extension("");
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some(format) = registry.for_path(&path) else {
                // A slim build lacks the format: skipped; a full build
                // knows every format of the test data.
                assert!(
                    registry.absent_for_path(&path).is_some(),
                    "{name}: no format"
                );
                continue;
            };
            let file = std::fs::read_to_string(&path).unwrap();
            let line_starts: Vec<usize> = std::iter::once(0)
                .chain(file.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            let in_file = tokenize(format, &file, &Normalization::default()).unwrap();
            for line in std::fs::read_to_string(&ranges_path).unwrap().lines() {
                let (lines, what) = line.split_once(' ').unwrap_or((line, ""));
                let (first, last) = lines.split_once('-').unwrap();
                let (first, last): (usize, usize) = (first.parse().unwrap(), last.parse().unwrap());
                let from = line_starts[first - 1];
                let to = line_starts.get(last).map_or(file.len(), |&e| e - 1);
                let snippet = &file[from..to];
                let expected: Vec<((u64, TokenClass), usize)> = in_file
                    .iter()
                    .filter(|t| t.start as usize >= from && t.end() as usize <= to)
                    .map(|t| ((t.id_in(Mode::Strict), t.class()), t.start as usize - from))
                    .collect();
                let got: Vec<((u64, TokenClass), usize)> =
                    tokenize_snippet(format, snippet, &Normalization::default())
                        .unwrap()
                        .iter()
                        .map(|t| ((t.id_in(Mode::Strict), t.class()), t.start as usize))
                        .collect();
                cases += 1;
                if got != expected {
                    let first_difference = got
                        .iter()
                        .zip(&expected)
                        .position(|(a, b)| a != b)
                        .unwrap_or(got.len().min(expected.len()));
                    let at = |tokens: &[((u64, TokenClass), usize)]| {
                        tokens
                            .get(first_difference)
                            .map_or("(end)".to_owned(), |&(_, s)| {
                                snippet[s..].chars().take(30).collect::<String>()
                            })
                    };
                    failures.push(format!(
                        "{name} lines {first}-{last} ({what}): {} tokens alone, {} in the file; \
                         first difference at token {first_difference}: alone {:?}, in the file {:?}",
                        got.len(),
                        expected.len(),
                        at(&got),
                        at(&expected),
                    ));
                }
            }
        }
        assert!(cases > 0, "no cases in {}", dir.display());
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    /// Deterministic edits of a text, as a person types: an insertion of a
    /// piece of code or a deletion of a few characters, at places spread
    /// over the text by a linear congruential generator.
    fn typing(text: &str, steps: usize) -> Vec<String> {
        const PIECES: [&str; 9] = ["x", " ", "\n", "(", "}", "\"", "foo(", ";", "if "];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n.max(1)
        };
        let mut versions = vec![text.to_owned()];
        let mut current = text.to_owned();
        for _ in 0..steps {
            let mut at = next(current.len() + 1);
            while !current.is_char_boundary(at) {
                at -= 1;
            }
            if next(3) == 0 && at < current.len() {
                let mut end = (at + 1 + next(5)).min(current.len());
                while !current.is_char_boundary(end) {
                    end += 1;
                }
                current.replace_range(at..end, "");
            } else {
                current.insert_str(at, PIECES[next(PIECES.len())]);
            }
            versions.push(current.clone());
        }
        versions
    }

    #[test]
    fn an_edit_spans_what_changed_with_byte_columns_and_whole_characters() {
        let point = |row, column| Point { row, column };
        let edit = edit_between("ab\ncdé\nfg", "ab\ncXYZ\nQ\nfg");
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            (4, 7, 9)
        );
        assert_eq!(edit.start_position, point(1, 1));
        assert_eq!(edit.old_end_position, point(1, 4));
        assert_eq!(edit.new_end_position, point(2, 1));
        // é and è share their first byte: the edit starts before both.
        let edit = edit_between("xé", "xè");
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            (1, 3, 3)
        );
        let edit = edit_between("same", "same");
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            (4, 4, 4)
        );
    }

    #[test]
    fn an_edited_snippet_reparsed_incrementally_tokenizes_as_parsed_afresh() {
        let registry = Registry::builtin();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let fixture = |file: &str| std::fs::read_to_string(root.join(file)).unwrap();
        // A method without its class: parsed inside a wrapper.
        let method: String = std::iter::once("public schedule(delay: number = 0): void {\n".into())
            .chain((0..40).map(|i| format!("  this.delay{i} = delay;\n")))
            .chain(std::iter::once("}\n".into()))
            .collect();
        // Four copies of each fixture: most edits then fall after the head,
        // and only what changed is reparsed and walked again.
        for (file, format, text) in [
            (
                "merge.js",
                "javascript",
                fixture("project/src/util/merge.js").repeat(4),
            ),
            (
                "scheduler.ts",
                "typescript",
                fixture("regressions/ts/scheduler.ts").repeat(4),
            ),
            (
                "report.py",
                "python",
                fixture("project/py/report.py").repeat(4),
            ),
            ("lib.rs", "rust", fixture("project/rs/lib.rs").repeat(4)),
            ("a method", "typescript", method),
        ] {
            let Some(format) = registry.compiled(format) else {
                continue;
            };
            let mut previous = None;
            let mut reused = 0;
            for (step, version) in typing(&text, 60).iter().enumerate() {
                reused += usize::from(previous.is_some());
                let budget = Budget::for_snippet(version.len());
                let (tokens, parse) = tokenize_snippet_after(
                    format,
                    version,
                    &Normalization::default(),
                    previous,
                    &budget,
                )
                .unwrap();
                assert_eq!(
                    tokens,
                    tokenize_snippet(format, version, &Normalization::default()).unwrap(),
                    "{file}, step {step}:\n{version}"
                );
                previous = Some(parse);
            }
            assert_eq!(reused, 60, "{file}");
        }
    }

    /// Found by the `snippet` fuzz target: a snippet that is its own head
    /// was blanked twice, its second `*/` taken for the end of a cut
    /// comment, so that its code gave no tokens afresh, and others when
    /// reparsed from the same text.
    #[test]
    fn a_snippet_blanked_once_keeps_the_code_after_its_cut_comment() {
        let registry = Registry::builtin();
        let ts = registry.lookup("ts").unwrap();
        let text = " \n\n&_[z  o  oo\n*/\n\n]      nnnn      */";
        let fresh = tokenize_snippet(ts, text, &Normalization::default()).unwrap();
        let texts: Vec<&str> = fresh
            .iter()
            .map(|t| &text[t.start as usize..t.end() as usize])
            .collect();
        assert_eq!(texts, ["]", "nnnn", "*", "/"]);
        let budget = Budget::for_snippet(text.len());
        let (_, previous) =
            tokenize_snippet_after(ts, text, &Normalization::default(), None, &budget).unwrap();
        let (again, _) =
            tokenize_snippet_after(ts, text, &Normalization::default(), Some(previous), &budget)
                .unwrap();
        assert_eq!(again, fresh);
    }

    #[test]
    fn snippets_cut_inside_block_comments_have_those_parts_blanked() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let blank = |text: &str| blank_cut_comments(js, text).into_owned();
        assert_eq!(
            blank("  * @param a\n  */\nf(a);"),
            "            \n    \nf(a);"
        );
        assert_eq!(blank("f(a);\n  /**\n   * Does"), "f(a);\n     \n         ");
        // Not unmistakable: left alone.
        for text in [
            "glob(\"src/**/*.js\");",
            "a /* b */ c",
            "x = 1; /* open",
            "*/ y",
        ] {
            assert_eq!(blank(text), text);
        }
        // Python has no block comments.
        let py = registry.lookup("py").unwrap();
        assert_eq!(blank_cut_comments(py, "x */\n"), "x */\n");
    }
}

#[cfg(test)]
mod definition_tests {
    use super::*;
    use crate::engine::grammar::Registry;

    #[test]
    fn a_method_pasted_alone_is_a_definition_and_its_wrapper_is_none() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        // `static` parses only in a class body: the snippet is parsed in
        // the wrapper `class _ { ... }`.
        let method = "  static mergeOptions(target, source) {\n    return target;\n  }\n";
        let budget = Budget::for_snippet(method.len());
        let (_, definitions) =
            tokenize_snippet_defined(js, method, &Normalization::default(), &budget).unwrap();
        let names: Vec<&str> = (definitions.as_slice().iter())
            .map(|d| d.name(method))
            .collect();
        assert_eq!(names, ["mergeOptions"]);
    }

    #[test]
    fn a_markup_snippet_has_the_definitions_of_its_scripts() {
        let registry = Registry::builtin();
        let vue = registry.lookup("vue").unwrap();
        let code = "<template><p/></template>\n<script>\nfunction helper(x) {\n  return x + 1;\n}\n</script>\n";
        let budget = Budget::for_snippet(code.len());
        let (_, definitions) =
            tokenize_snippet_defined(vue, code, &Normalization::default(), &budget).unwrap();
        let names: Vec<&str> = (definitions.as_slice().iter())
            .map(|d| d.name(code))
            .collect();
        assert_eq!(names, ["helper"]);
    }

    #[test]
    fn an_edited_buffer_has_the_definitions_of_a_fresh_parse_walked_only_when_asked() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let normalization = Normalization::default();
        // Longer than the head that picks a wrapper: the edit reparses.
        let body = "  x = x + 1;\n".repeat(30);
        let first = format!("function a(x) {{\n{body}  return x;\n}}\n");
        let second = format!("{first}function b(y) {{\n  return y;\n}}\n");
        let (first, second) = (first.as_str(), second.as_str());
        let budget = Budget::for_snippet(second.len());
        let names = |definitions: &Definitions, text: &str| -> Vec<String> {
            (definitions.as_slice().iter())
                .map(|d| d.name(text).to_owned())
                .collect()
        };
        let (_, parse) = tokenize_snippet_after(js, first, &normalization, None, &budget).unwrap();
        let gathered = parse.definitions(js, first.len());
        assert!(gathered.tree.is_none(), "a fresh parse's walk gathers them");
        assert_eq!(names(gathered.get(js), first), ["a"]);
        let (_, parse) =
            tokenize_snippet_after(js, second, &normalization, Some(parse), &budget).unwrap();
        let edited = parse.definitions(js, second.len());
        assert!(edited.walked.get().is_none(), "not walked before asked");
        let (_, fresh) = tokenize_snippet_defined(js, second, &normalization, &budget).unwrap();
        assert_eq!(edited.get(js), &fresh);
        assert_eq!(names(edited.get(js), second), ["a", "b"]);
    }
}
