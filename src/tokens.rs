//! Tokens: parses source text and normalizes the tree's leaves.
//!
//! In: a [`Format`], source text and a [`Mode`]. Out: the token stream, each
//! [`Token`] an identity hash plus its byte range. Line and column are
//! recovered from byte offsets by a [`LineIndex`].
//!
//! Invariants: parsing never fails. Leaves inside ERROR nodes are tokens like
//! any other, zero-width (MISSING) nodes are not, declared literals and
//! comments are one leaf each, comments are dropped. The identity never
//! includes the node kind, only the class and (per mode) the text, so a
//! snippet parsed out of context still matches the code it came from. The
//! token stream is the sole contract between parsing and later stages.

use std::cell::RefCell;

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use crate::grammar::{Class, Format, FormatId};
use crate::hash::{fnv1a, HashMap};

/// Version of the normalization: bump it whenever the token stream of some
/// text changes, so that caches made by the older code are not reused.
pub const NORMALIZATION_VERSION: u32 = 2;

/// How much of a token's text its identity keeps (SPEC section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Keeps identifiers and literals: finds copies that differ only in
    /// layout and comments.
    #[default]
    Strict,
    /// Abstracts identifiers: also finds renamed copies.
    Mild,
    /// Abstracts identifiers and literals: also tolerates changed values.
    Weak,
}

impl Mode {
    /// All modes, as the command line spells them.
    pub const NAMES: &'static str = "strict, mild, weak";

    /// Parses a mode name (case-insensitive).
    pub fn parse(s: &str) -> Option<Mode> {
        match s.to_ascii_lowercase().as_str() {
            "strict" => Some(Mode::Strict),
            "mild" => Some(Mode::Mild),
            "weak" => Some(Mode::Weak),
            _ => None,
        }
    }

    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Mild => "mild",
            Mode::Weak => "weak",
        }
    }

    /// Whether identifiers of this mode are reduced to their class.
    pub fn abstracts_identifiers(self) -> bool {
        self != Mode::Strict
    }

    /// Whether literals of this mode are reduced to their class.
    pub fn abstracts_literals(self) -> bool {
        self == Mode::Weak
    }

    /// The text a token of `class` with source `text` is identified by, or
    /// `None` when the token is dropped.
    pub fn identity_text<'a>(
        self,
        format: &Format,
        class: Class,
        text: &'a str,
    ) -> Option<&'a str> {
        Some(match class {
            Class::Comment => return None,
            Class::Other => text,
            Class::Identifier
                if self.abstracts_identifiers()
                    && !format.keep_identifiers.iter().any(|k| k == text) =>
            {
                ID
            }
            Class::Identifier => text,
            Class::String if self.abstracts_literals() => STR,
            Class::Number if self.abstracts_literals() => NUM,
            Class::Literal if self.abstracts_literals() => LIT,
            Class::String | Class::Number | Class::Literal => text,
        })
    }
}

/// One normalized token: what is compared, and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Hash of the identity text ([`fnv1a`]); equal identities, equal ids.
    pub id: u64,
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset just past the last byte.
    pub end: u32,
}

/// Abstracted identities are placeholders that start with a NUL byte, which
/// no token of valid source text contains, so they never equal real text.
const ID: &str = "\0$id";
const STR: &str = "\0$str";
const NUM: &str = "\0$num";
const LIT: &str = "\0$lit";

/// The identity as a person reads it: placeholders without their NUL.
fn readable(identity: &str) -> &str {
    identity.strip_prefix('\0').unwrap_or(identity)
}

thread_local! {
    /// One parser per format per thread, reused across files.
    static PARSERS: RefCell<HashMap<FormatId, Parser>> = RefCell::new(HashMap::new());
}

/// Parses `text` with the format's grammar on this thread's parser.
pub fn parse(format: &Format, text: &str) -> Option<Tree> {
    parse_with(format, text, None)
}

/// Makes tree-sitter allocate with mimalloc, once, before its first
/// allocation (its parsers are only made in [`parse_with`]). A parse makes
/// and frees many small nodes, which mimalloc's thread-local free lists
/// serve faster than the system allocator.
fn allocate_trees_with_mimalloc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use libmimalloc_sys::{mi_calloc, mi_free, mi_malloc, mi_realloc};
        // SAFETY: no tree-sitter object exists yet (parsers are made after
        // this, and everything else tree-sitter allocates comes from them),
        // so nothing allocated by one allocator is freed by the other.
        unsafe {
            tree_sitter::set_allocator(
                Some(mi_malloc),
                Some(mi_calloc),
                Some(mi_realloc),
                Some(mi_free),
            );
        }
    });
}

/// Parses `text`, reusing the unchanged parts of `old`, a parse of an
/// earlier version already edited to match it ([`Tree::edit`]).
fn parse_with(format: &Format, text: &str, old: Option<&Tree>) -> Option<Tree> {
    allocate_trees_with_mimalloc();
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = match parsers.entry(format.id) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = Parser::new();
                parser.set_language(&format.language).ok()?;
                e.insert(parser)
            }
        };
        let tree = parser.parse(text, old);
        if tree.is_none() {
            // A parse that gave up leaves the parser mid-way; start afresh.
            parser.reset();
        }
        tree
    })
}

/// Calls `leaf(class, start, end)` for every token leaf of `text`, in source
/// order, comments included (their class says so).
pub fn for_each_leaf(format: &Format, text: &str, mut leaf: impl FnMut(Class, usize, usize)) {
    if let Some(tree) = parse(format, text) {
        walk(format, tree.root_node(), &mut |class, start, end| {
            leaf(class, start, end);
            true
        });
    }
}

/// Like [`for_each_leaf`], for a snippet cut out of its context: when its
/// first lines parse with errors, they are also parsed inside each of the
/// format's `snippet_wrappers` (a TypeScript method inside `class _ { ... }`),
/// and when a wrapper mends them, the whole snippet is parsed inside it and
/// gives the leaves, the wrapper's own leaves left out. So a method pasted
/// without its class tokenizes as it does in its file.
///
/// `previous`, the parse of an earlier version of the snippet (an editor's
/// buffer, checked on every edit), is reused: only what changed is parsed
/// again. Returns the parse, for the next version.
pub fn for_each_snippet_leaf(
    format: &Format,
    text: &str,
    previous: Option<SnippetParse>,
    mut leaf: impl FnMut(Class, usize, usize),
) -> Option<SnippetParse> {
    let text = blank_cut_comments(format, text);
    let parse = snippet_parse(format, &text, previous)?;
    let offset = parse.offset(format);
    for &Leaf { class, start, end } in &parse.leaves {
        let (start, end) = (start as usize, end as usize);
        if start >= offset && end <= offset + text.len() {
            leaf(class, start - offset, end - offset);
        }
    }
    Some(parse)
}

/// The parse of one version of a snippet, kept to reparse the next one
/// incrementally (see [`for_each_snippet_leaf`]).
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
}

/// One token leaf of a parse (see [`walk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Leaf {
    class: Class,
    start: u32,
    end: u32,
}

/// Every leaf of `tree`, in order.
fn leaves_of(format: &Format, tree: &Tree) -> Vec<Leaf> {
    let mut leaves = Vec::new();
    walk(format, tree.root_node(), &mut |class, start, end| {
        leaves.push(Leaf {
            class,
            start: start as u32,
            end: end as u32,
        });
        true
    });
    leaves
}

impl SnippetParse {
    /// Bytes of the text parsed (a measure of what keeping it costs).
    pub fn len(&self) -> usize {
        self.parsed.len()
    }

    /// Whether nothing was parsed.
    pub fn is_empty(&self) -> bool {
        self.parsed.is_empty()
    }

    /// Where the snippet starts in the text parsed.
    fn offset(&self, format: &Format) -> usize {
        self.wrapper
            .and_then(|i| format.snippet_wrappers.get(i))
            .map_or(0, |(prefix, _)| prefix.len())
    }
}

/// A parse of `new`, reusing `tree`, the parse of `old`, for all that did
/// not change between the two texts.
fn reparse(format: &Format, tree: Tree, old: &str, new: &str) -> Option<Tree> {
    reparse_edited(format, tree, old, new).map(|(tree, _, _)| tree)
}

/// [`reparse`], also giving the old tree as edited and the edit.
fn reparse_edited(
    format: &Format,
    mut tree: Tree,
    old: &str,
    new: &str,
) -> Option<(Tree, Tree, InputEdit)> {
    let edit = edit_between(old, new);
    tree.edit(&edit);
    let reparsed = parse_with(format, new, Some(&tree))?;
    Some((reparsed, tree, edit))
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
    let first_kept_after =
        |old_end: usize| old_leaves.partition_point(|l| (l.start as usize) <= old_end);
    let kept_before = old_leaves.partition_point(|l| (l.end as usize) < start);
    if let Some(touching) = old_leaves.get(kept_before) {
        start = start.min(touching.start as usize);
    }
    let old_end = (end as i64 - delta).max(start as i64) as usize;
    let after = first_kept_after(old_end);
    if let Some(touching) = after.checked_sub(1).and_then(|i| old_leaves.get(i)) {
        let touching_end = (touching.end as i64 + delta) as usize;
        if touching.end as usize >= old_end && touching_end > end {
            end = touching_end;
        }
    }
    let mut leaves: Vec<Leaf> = old_leaves[..kept_before].to_vec();
    let mut straddles = false;
    walk_from(format, tree.root_node(), start, &mut |class, s, e| {
        if s >= end {
            return false;
        }
        straddles |= s < start || e > end;
        leaves.push(Leaf {
            class,
            start: s as u32,
            end: e as u32,
        });
        true
    });
    let shifted = old_leaves[after..].iter().map(|l| Leaf {
        class: l.class,
        start: (l.start as i64 + delta) as u32,
        end: (l.end as i64 + delta) as u32,
    });
    if straddles
        || old_leaves[after..]
            .first()
            .is_some_and(|l| ((l.start as i64 + delta) as usize) < end)
    {
        return leaves_of(format, tree);
    }
    leaves.extend(shifted);
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
) -> Option<SnippetParse> {
    let previous = previous.filter(|p| p.format == format.id);
    let head_end = head_end(text);
    // A head that ends inside a block comment would misparse there.
    let head = blank_cut_comments(format, &text[..head_end]).into_owned();
    let (wrapper, probed) = match &previous {
        Some(p) if p.head == head => (p.wrapper, None),
        _ if format.snippet_wrappers.is_empty() => (None, None),
        _ => {
            let bare = parse(format, &head)?;
            match mending_wrapper(format, &head, &bare) {
                Some((probe, i)) => (Some(i), Some(probe)),
                None => (None, Some(bare)),
            }
        }
    };
    let parsed = match wrapper.and_then(|i| format.snippet_wrappers.get(i)) {
        Some((prefix, suffix)) => format!("{prefix}{text}{suffix}"),
        None => text.to_owned(),
    };
    let mut leaves = None;
    let tree = match (probed, previous) {
        (Some(tree), _) if head_end == text.len() => tree,
        (_, Some(p)) if p.wrapper == wrapper => {
            let (tree, old_tree, edit) = reparse_edited(format, p.tree, &p.parsed, &parsed)?;
            leaves = Some(respliced_leaves(format, &tree, &old_tree, &edit, &p.leaves));
            tree
        }
        // The probe parsed the snippet's start: extend it to the whole.
        (Some(tree), _) => {
            let probed = match wrapper.and_then(|i| format.snippet_wrappers.get(i)) {
                Some((prefix, suffix)) => format!("{prefix}{head}{suffix}"),
                None => head.clone(),
            };
            reparse(format, tree, &probed, &parsed)?
        }
        _ => parse(format, &parsed)?,
    };
    let leaves = leaves.unwrap_or_else(|| leaves_of(format, &tree));
    Some(SnippetParse {
        format: format.id,
        head,
        wrapper,
        parsed,
        tree,
        leaves,
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
fn mending_wrapper(format: &Format, head: &str, tree: &Tree) -> Option<(Tree, usize)> {
    let mut fewest = count_errors(tree, false);
    if fewest == 0 {
        return None;
    }
    let first_error = first_error(tree).start;
    let mut first_code = head.len();
    walk(format, tree.root_node(), &mut |class, start, _| {
        first_code = start;
        class == Class::Comment
    });
    let before_error = &head[first_code.min(first_error)..first_error];
    if before_error.bytes().filter(|&b| b == b'\n').count() >= WRAPPER_HEAD_LINES {
        return None;
    }
    let mut best = None;
    for (i, (prefix, suffix)) in format.snippet_wrappers.iter().enumerate() {
        let Some(probe) = parse(format, &format!("{prefix}{head}{suffix}")) else {
            continue;
        };
        let errors = count_errors(&probe, false);
        if errors < fewest {
            fewest = errors;
            best = Some((probe, i));
        }
        if fewest == 0 {
            break;
        }
    }
    best
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

/// Visits the token leaves of the subtree of `root`, iteratively (trees of
/// long expressions are too deep for recursion).
fn walk(
    format: &Format,
    root: Node<'_>,
    leaf: &mut impl FnMut(Class, usize, usize) -> bool,
) -> bool {
    walk_from(format, root, 0, leaf)
}

/// Like [`walk`], skipping the subtrees that end at or before byte `from`.
fn walk_from(
    format: &Format,
    root: Node<'_>,
    from: usize,
    leaf: &mut impl FnMut(Class, usize, usize) -> bool,
) -> bool {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let before = from > 0 && node.end_byte() <= from;
        let go_on = match format.class_of(node.kind_id()) {
            _ if before => true,
            Some(Class::String)
                if format.has_interpolations() && has_interpolation(format, node) =>
            {
                string_with_interpolations(format, node, leaf)
            }
            Some(class) => emit(node, class, leaf),
            None if cursor.goto_first_child() => continue,
            None => emit(node, Class::Other, leaf),
        };
        if !go_on {
            return false;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return true;
            }
        }
    }
}

/// Reports one leaf; zero-width ones (tree-sitter's MISSING nodes) are not
/// tokens. Returns whether to go on.
fn emit(node: Node<'_>, class: Class, leaf: &mut impl FnMut(Class, usize, usize) -> bool) -> bool {
    let (start, end) = (node.start_byte(), node.end_byte());
    start >= end || leaf(class, start, end)
}

fn has_interpolation(format: &Format, node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let found = node
        .children(&mut cursor)
        .any(|c| format.is_interpolation(c.kind_id()));
    found
}

/// A template string or f-string: its text pieces are string tokens, and the
/// code of its interpolations is tokenized like any code, so a renamed
/// variable inside `${...}` or `{...}` is an identifier, not changed text.
fn string_with_interpolations(
    format: &Format,
    node: Node<'_>,
    leaf: &mut impl FnMut(Class, usize, usize) -> bool,
) -> bool {
    let mut piece_start = node.start_byte();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if format.is_interpolation(child.kind_id()) {
            if piece_start < child.start_byte()
                && !leaf(Class::String, piece_start, child.start_byte())
            {
                return false;
            }
            if !walk(format, child, leaf) {
                return false;
            }
            piece_start = child.end_byte();
        }
    }
    piece_start >= node.end_byte() || leaf(Class::String, piece_start, node.end_byte())
}

/// The normalized token stream of a file's `text`.
pub fn tokenize(format: &Format, text: &str, mode: Mode) -> Vec<Token> {
    let mut tokens = Vec::with_capacity(text.len() / 4);
    for_each_leaf(format, text, |class, start, end| {
        push(&mut tokens, format, text, mode, class, start, end)
    });
    tokens
}

/// The normalized token stream of a snippet (see [`for_each_snippet_leaf`]).
pub fn tokenize_snippet(format: &Format, text: &str, mode: Mode) -> Vec<Token> {
    tokenize_snippet_after(format, text, mode, None).0
}

/// The normalized token stream of a snippet whose earlier version was
/// parsed as `previous`, and its parse, for the next version.
pub fn tokenize_snippet_after(
    format: &Format,
    text: &str,
    mode: Mode,
    previous: Option<SnippetParse>,
) -> (Vec<Token>, Option<SnippetParse>) {
    let mut tokens = Vec::with_capacity(text.len() / 4);
    let parse = for_each_snippet_leaf(format, text, previous, |class, start, end| {
        push(&mut tokens, format, text, mode, class, start, end)
    });
    (tokens, parse)
}

/// Appends the token of one leaf, unless its class is dropped.
fn push(
    tokens: &mut Vec<Token>,
    format: &Format,
    text: &str,
    mode: Mode,
    class: Class,
    start: usize,
    end: usize,
) {
    if let Some(identity) = mode.identity_text(format, class, &text[start..end]) {
        // Files are limited to 4 GiB by the walker, so offsets fit.
        tokens.push(Token {
            id: fnv1a(identity.as_bytes()),
            start: start as u32,
            end: end as u32,
        });
    }
}

/// Lines and columns of byte offsets in one text.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    /// Byte offset where each line starts; the first is 0.
    starts: Vec<u32>,
}

/// A 1-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters (Unicode scalar values).
    pub column: u32,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex { starts }
    }

    /// 1-based line of the byte at `offset`.
    pub fn line_of(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }

    /// Position of the character starting at byte `offset`.
    pub fn start_position(&self, text: &str, offset: u32) -> Position {
        let line = self.line_of(offset);
        let line_start = self.starts[line as usize - 1] as usize;
        let column = text[line_start..offset as usize].chars().count() as u32 + 1;
        Position { line, column }
    }

    /// Position just after a range ending (exclusive) at byte `end`: the line
    /// of its last character, and the column after that character.
    pub fn end_position(&self, text: &str, end: u32) -> Position {
        let line = self.line_of(end.saturating_sub(1));
        let line_start = self.starts[line as usize - 1] as usize;
        let column = text[line_start..end as usize].chars().count() as u32 + 1;
        Position { line, column }
    }

    /// Lines as an editor shows them: `\n`-separated, not counting the empty
    /// line after a final `\n`; 0 for an empty text.
    pub fn editor_lines(&self, text: &str) -> u32 {
        let n = self.starts.len() as u32;
        if text.is_empty() {
            0
        } else if text.ends_with('\n') {
            n - 1
        } else {
            n
        }
    }
}

/// Renders the normalized tokens of `text` one per line, as
/// `line:column class identity`, for `--dump-tokens` and golden tests.
pub fn dump(format: &Format, text: &str, mode: Mode) -> String {
    let lines = LineIndex::new(text);
    let mut out = String::new();
    for_each_leaf(format, text, |class, start, end| {
        let source = &text[start..end];
        let shown = mode
            .identity_text(format, class, source)
            .map_or("(dropped)", readable);
        let at = lines.start_position(text, start as u32);
        out.push_str(&format!(
            "{}:{} {} {}\n",
            at.line,
            at.column,
            class.name(),
            shown.escape_debug()
        ));
    });
    out
}

/// The identity texts of `text` joined by spaces: the normalized form a
/// person reads, used by golden tests.
pub fn normalized(format: &Format, text: &str, mode: Mode) -> String {
    let mut parts = Vec::new();
    for_each_leaf(format, text, |class, start, end| {
        if let Some(identity) = mode.identity_text(format, class, &text[start..end]) {
            parts.push(readable(identity).replace('\n', "\\n"));
        }
    });
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::Registry;

    /// Normalizes `code` as format `format` in `mode`.
    fn check(format: &str, mode: Mode, code: &str, expected: &str) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).unwrap();
        let got = normalized(format, code, mode);
        assert_eq!(got, expected, "\n{}", dump(format, code, mode));
    }

    #[test]
    fn strict_keeps_text_and_drops_comments() {
        check(
            "js",
            Mode::Strict,
            "let total = price * 2; // tax",
            "let total = price * 2 ;",
        );
    }

    #[test]
    fn mild_abstracts_identifiers_only() {
        check(
            "js",
            Mode::Mild,
            "let total = price * 2; // tax",
            "let $id = $id * 2 ;",
        );
        check("js", Mode::Mild, "obj.method('x')", "$id . $id ( 'x' )");
    }

    #[test]
    fn weak_abstracts_literals_too() {
        check(
            "js",
            Mode::Weak,
            "f(`a ${b}`, /re/g, 3.5, true, null)",
            "$id ( $str ${ $id } $str , $str , $num , $lit , $lit )",
        );
    }

    #[test]
    fn this_and_super_stay_text() {
        check(
            "js",
            Mode::Mild,
            "this.x = super.y",
            "this . $id = super . $id",
        );
        check("py", Mode::Mild, "self.x = cls.y", "self . $id = cls . $id");
        check("rs", Mode::Mild, "self.x", "self . $id");
    }

    #[test]
    fn python_strings_are_one_token_fstrings_split_around_code() {
        check(
            "py",
            Mode::Weak,
            "x = f\"a {b} c\" + 'd' # note",
            "$id = $str { $id } $str + $str",
        );
        check("py", Mode::Strict, "x = None", "x = None");
        check(
            "py",
            Mode::Weak,
            "x = None or True or 1.5",
            "$id = $lit or $lit or $num",
        );
    }

    #[test]
    fn rust_literals_lifetimes_and_macros() {
        check(
            "rs",
            Mode::Weak,
            "fn f<'a>(x: &'a str) -> bool { println!(\"{}\", x); 'c' == 'd' } // end",
            "fn $id < ' $id > ( $id : & ' $id str ) -> bool { $id ! ( $str , $id ) ; $str == $str }",
        );
    }

    #[test]
    fn typescript_types_are_identifiers_but_predefined_types_stay() {
        check(
            "ts",
            Mode::Mild,
            "let a: Foo<string> = b;",
            "let $id : $id < string > = $id ;",
        );
    }

    #[test]
    fn jsx_text_is_a_string() {
        check(
            "jsx",
            Mode::Weak,
            "<a href=\"x\">Hello there</a>",
            "< $id $id = $str > $str </ $id >",
        );
    }

    #[test]
    fn incomplete_code_still_yields_its_tokens() {
        // A diff hunk: the function's closing brace and head are missing.
        check(
            "js",
            Mode::Strict,
            "  return a + b;\n}\nfunction g(",
            "return a + b ; } function g (",
        );
        check(
            "py",
            Mode::Strict,
            "    return x\n  else:",
            "return x else :",
        );
    }

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
            let in_file = tokenize(ts, &file, Mode::Mild);
            let at = file.find("public").unwrap() as u32;
            let expected: Vec<u64> = in_file
                .iter()
                .filter(|t| t.start >= at && (t.end as usize) <= at as usize + method.len())
                .map(|t| t.id)
                .collect();
            let snippet: Vec<u64> = tokenize_snippet(ts, &method, Mode::Mild)
                .iter()
                .map(|t| t.id)
                .collect();
            assert_eq!(snippet, expected, "{body_lines} body lines");
            // Out of context, `number` would be taken for an identifier.
            assert_ne!(
                tokenize(ts, &method, Mode::Mild)
                    .iter()
                    .map(|t| t.id)
                    .collect::<Vec<_>>(),
                expected
            );
        }
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
            let format = registry.lookup(format).unwrap();
            let mut previous = None;
            let mut reused = 0;
            for (step, version) in typing(&text, 60).iter().enumerate() {
                reused += usize::from(previous.is_some());
                let (tokens, parse) = tokenize_snippet_after(format, version, Mode::Mild, previous);
                assert_eq!(
                    tokens,
                    tokenize_snippet(format, version, Mode::Mild),
                    "{file}, step {step}:\n{version}"
                );
                previous = parse;
            }
            assert_eq!(reused, 60, "{file}");
        }
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

    #[test]
    fn missing_nodes_are_not_tokens() {
        // tree-sitter inserts a zero-width `;` or `)`; it must not appear.
        check("js", Mode::Strict, "f(a", "f ( a");
    }

    /// Golden cases in `testdata/tokens/<format>.txt`: `=== MODE: title`,
    /// the code, `---`, the normalized tokens. `DUPCHECK_BLESS=1` rewrites
    /// the expectations from what the code produces now.
    #[test]
    fn golden_token_streams() {
        let registry = Registry::builtin();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tokens");
        let bless = std::env::var_os("DUPCHECK_BLESS").is_some();
        let mut failures = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let format = registry
                .lookup(path.file_stem().unwrap().to_str().unwrap())
                .unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let mut blessed = String::new();
            for case in text.split("=== ").filter(|c| !c.trim().is_empty()) {
                let (title, rest) = case.split_once('\n').unwrap();
                let (code, expected) = rest.split_once("\n---\n").unwrap();
                let mode = Mode::parse(title.split(':').next().unwrap()).unwrap();
                let got = normalized(format, code, mode);
                if got != expected.trim() {
                    failures.push(format!(
                        "{}: {title}\n  expected: {}\n  got:      {got}",
                        path.display(),
                        expected.trim()
                    ));
                }
                blessed.push_str(&format!("=== {title}\n{code}\n---\n{got}\n\n"));
            }
            if bless {
                std::fs::write(&path, blessed.trim_end().to_owned() + "\n").unwrap();
            }
        }
        assert!(bless || failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn identity_ignores_node_kind() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let method = tokenize(js, "a.push", Mode::Strict);
        let plain = tokenize(js, "push", Mode::Strict);
        assert_eq!(method[2].id, plain[0].id);
    }

    #[test]
    fn placeholders_never_collide_with_source_text() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let abstracted = tokenize(js, "a", Mode::Mild)[0].id;
        let literal = tokenize(js, "$id", Mode::Strict)[0].id;
        assert_ne!(abstracted, literal);
    }

    #[test]
    fn positions_count_characters_and_end_after_the_last_one() {
        let text = "é = 1;\n  xy\n";
        let lines = LineIndex::new(text);
        let x = text.find("xy").unwrap() as u32;
        assert_eq!(
            lines.start_position(text, 3),
            Position { line: 1, column: 3 }
        );
        assert_eq!(
            lines.start_position(text, x),
            Position { line: 2, column: 3 }
        );
        assert_eq!(
            lines.end_position(text, x + 2),
            Position { line: 2, column: 5 }
        );
        // A range ending with its line's newline ends on that line.
        assert_eq!(
            lines.end_position(text, x + 3),
            Position { line: 2, column: 6 }
        );
    }

    #[test]
    fn editor_lines_ignore_the_empty_line_after_a_final_newline() {
        for (text, n) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("a\n\n", 2)] {
            assert_eq!(LineIndex::new(text).editor_lines(text), n, "{text:?}");
        }
    }
}
