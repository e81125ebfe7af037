//! Tokens: parses source text and normalizes the tree's leaves.
//!
//! In: a [`Format`], source text and a [`Normalization`] (whether case
//! counts, the ignore patterns, whether imports are kept). Out: the token stream, each [`Token`] the
//! hash of its text, its [`TokenClass`] and its byte range; its identity in
//! each [`Mode`] is derived from those ([`Token::id_in`]), so one token
//! stream serves every mode. Line and column are recovered from byte offsets
//! by a [`LineIndex`].
//!
//! Invariants: parsing never fails. Leaves inside ERROR nodes are tokens like
//! any other, zero-width (MISSING) nodes are not, declared literals and
//! comments are one leaf each, comments are dropped, and so are tokens that
//! lie inside a match of an ignore pattern against the text tokenized,
//! the leaves of import declarations (the format's `import_kinds`, unless
//! imports are kept) and those between a disabling and an enabling
//! suppression comment ([`SUPPRESSION_MARKERS`]), a zero-width [`WALL`]
//! (class other, equal to no token in any mode) in their place. The
//! identity never includes the node kind, only the class and (per mode) the
//! text, so a snippet parsed out of context still matches the code it came
//! from. The token stream is the sole contract between parsing and later
//! stages.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use tree_sitter::{Node, Tree};

use crate::engine::embed;
use crate::engine::grammar::{Class, Format, Kinds};
use crate::engine::hash::{fnv1a, fnv1a_lowercase};
use crate::engine::parse::{parse, parse_ranges, Budget, ParseError};
use crate::engine::patterns::{IgnorePatterns, Skipper};
use crate::engine::visible_nodes::{visible_nodes, Step};

/// Version of the normalization: bump it whenever the token stream of some
/// text changes, so that caches made by the older code are not reused.
pub(crate) const NORMALIZATION_VERSION: u32 = 4;

/// Suppression comments, as (disable, enable) pairs: the tokens after a
/// comment holding a disabling marker are dropped up to a comment holding
/// an enabling one (of any pair), or to the end of the text. dupcheck's
/// own, jscpd's and PMD CPD's, for people migrating. Only comments count;
/// a comment holding several markers counts as its last.
pub(crate) const SUPPRESSION_MARKERS: [(&str, &str); 3] = [
    ("dupcheck-disable", "dupcheck-enable"),
    ("jscpd:ignore-start", "jscpd:ignore-end"),
    ("CPD-OFF", "CPD-ON"),
];

/// The id of a wall: a zero-width token put where suppressed code was,
/// between the tokens before and after it. Matching takes it for equal to
/// no token, itself included, so no run crosses suppressed code (its lines
/// are never inside a duplication). Never first or last in a stream.
pub(crate) const WALL: u64 = fnv1a(b"\0$wall");

/// Whether `comment` disables (`Some(true)`) or enables (`Some(false)`)
/// the tokens after it: its last marker decides. `None` without a marker.
fn suppression(comment: &str) -> Option<bool> {
    // One pass over the comment for all markers (most comments hold none):
    // disabling markers are the even patterns, enabling ones the odd.
    static MARKERS: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasick::new(SUPPRESSION_MARKERS.iter().flat_map(|(d, e)| [d, e]))
            .expect("the suppression markers are plain strings")
    });
    let last = MARKERS.find_iter(comment).last()?;
    Some(last.pattern().as_usize() % 2 == 0)
}

/// How much of a token's text its identity keeps (docs/matching.md, "Tokens and modes").
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
    pub(crate) fn abstracts_identifiers(self) -> bool {
        self != Mode::Strict
    }

    /// Whether literals of this mode are reduced to their class.
    pub(crate) fn abstracts_literals(self) -> bool {
        self == Mode::Weak
    }

    /// The placeholder a token of `class` is identified by in this mode, or
    /// `None` when its text is.
    fn placeholder(self, class: TokenClass) -> Option<&'static str> {
        match class {
            TokenClass::Identifier if self.abstracts_identifiers() => Some(ID),
            TokenClass::String if self.abstracts_literals() => Some(STR),
            TokenClass::Number if self.abstracts_literals() => Some(NUM),
            TokenClass::Literal if self.abstracts_literals() => Some(LIT),
            _ => None,
        }
    }
}

/// What a token is, as far as the modes care: which placeholder (if any)
/// stands for it where its mode abstracts it. Derived from the grammar's
/// [`Class`] and the format's lists: a `keep_identifiers` name is
/// [`TokenClass::Other`] (its text counts in every mode), a
/// `literal_identifiers` name a [`TokenClass::Literal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum TokenClass {
    /// Keywords, operators, punctuation, kept identifiers: text in every mode.
    Other = 0,
    /// Names: `$id` in mild and weak modes.
    Identifier = 1,
    /// String literals: `$str` in weak mode.
    String = 2,
    /// Number literals: `$num` in weak mode.
    Number = 3,
    /// Other literals (booleans, null): `$lit` in weak mode.
    Literal = 4,
}

impl TokenClass {
    /// The class of a leaf of grammar class `class` and text `text` in
    /// `format`, or `None` for a comment (never a token).
    pub(crate) fn of(format: &Format, class: Class, text: &str) -> Option<TokenClass> {
        Some(match class {
            Class::Comment => return None,
            Class::Other => TokenClass::Other,
            Class::Identifier if format.literal_identifiers.contains(text) => TokenClass::Literal,
            Class::Identifier if format.keep_identifiers.contains(text) => TokenClass::Other,
            Class::Identifier => TokenClass::Identifier,
            Class::String => TokenClass::String,
            Class::Number => TokenClass::Number,
            Class::Literal => TokenClass::Literal,
        })
    }

    /// The class of code `code`, if it is one (the cache's bytes).
    fn from_code(code: u32) -> Option<TokenClass> {
        Some(match code {
            0 => TokenClass::Other,
            1 => TokenClass::Identifier,
            2 => TokenClass::String,
            3 => TokenClass::Number,
            4 => TokenClass::Literal,
            _ => return None,
        })
    }
}

/// Everything besides the grammar that decides a text's tokens: whether
/// case counts, whether imports are tokens, and the code blocks skipped
/// (the [`Mode`] does not: it is applied when tokens are compared). Built
/// once from the configuration and passed to every tokenizing call (scan,
/// checks, diffs); `Normalization::default()` is the common case.
///
/// With `ignore_case`, every identity kept as text is compared without
/// case, as jscpd does (it lower-cases each token before hashing): in
/// strict mode identifiers, keywords and literals; in mild mode keywords
/// and literals (identifiers are `$id` already); in weak mode keywords and
/// the like. The placeholders (`$id`, `$str`, ...) are unchanged.
#[derive(Debug, Clone, Default)]
pub struct Normalization {
    /// Compare identities kept as text without case (`--ignoreCase`).
    pub ignore_case: bool,
    /// Tokens inside a match of one of these are dropped (`--ignore-pattern`).
    pub ignore_patterns: IgnorePatterns,
    /// Keep the leaves of import declarations as tokens (`--keep-imports`);
    /// by default they are dropped.
    pub keep_imports: bool,
}

impl Normalization {
    /// This normalization applied to `text`: its leaves are then turned
    /// into tokens in source order with [`Normalizer::push`].
    pub(crate) fn of<'n, 't>(&'n self, text: &'t str) -> Normalizer<'n, 't> {
        Normalizer {
            ignore_case: self.ignore_case,
            keep_imports: self.keep_imports,
            text,
            skipper: self.ignore_patterns.in_text(text),
            suppressed: false,
            wall_at: None,
        }
    }
}

/// A [`Normalization`] applied to one text, whose leaves it turns into
/// tokens in source order (the ignore patterns' matches and the
/// suppression comments are walked along).
pub(crate) struct Normalizer<'n, 't> {
    ignore_case: bool,
    keep_imports: bool,
    text: &'t str,
    skipper: Skipper<'n, 't>,
    /// Whether the last suppression comment seen disables.
    suppressed: bool,
    /// Where the suppressed code since the last token starts, if any: a
    /// [`WALL`] goes there before the next token.
    wall_at: Option<u32>,
}

/// What becomes of one leaf (see [`Normalizer::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// A token of this class.
    Kept(TokenClass),
    /// Its class is dropped (a comment).
    Dropped,
    /// Inside an import declaration, imports not kept.
    Import,
    /// After a disabling suppression comment.
    Suppressed,
    /// Inside a match of an ignore pattern.
    Ignored,
}

impl Normalizer<'_, '_> {
    /// What becomes of `leaf`, the next leaf of the text in source order.
    fn decide(&mut self, format: &Format, leaf: Leaf) -> Fate {
        let (start, end) = (leaf.start as usize, leaf.end as usize);
        let source = &self.text[start..end];
        if leaf.class == Class::Comment {
            if let Some(disables) = suppression(source) {
                self.suppressed = disables;
            }
            return Fate::Dropped;
        }
        let Some(class) = TokenClass::of(format, leaf.class, source) else {
            return Fate::Dropped;
        };
        if self.suppressed {
            Fate::Suppressed
        } else if leaf.import && !self.keep_imports {
            Fate::Import
        } else if self.skipper.skips(start, end) {
            Fate::Ignored
        } else {
            Fate::Kept(class)
        }
    }

    /// Appends the token of `leaf`, unless its class is dropped, it is an
    /// import, it is suppressed, it lies inside an ignore pattern's match,
    /// or it is longer than [`MAX_TOKEN_LEN`] (no source text has such a
    /// token); with a [`WALL`] before it when code was suppressed since the
    /// last.
    pub(crate) fn push(&mut self, tokens: &mut Vec<Token>, format: &Format, leaf: Leaf) {
        let class = match self.decide(format, leaf) {
            Fate::Kept(class) => class,
            Fate::Suppressed => {
                self.wall_at.get_or_insert(leaf.start);
                return;
            }
            _ => return,
        };
        if leaf.end - leaf.start > MAX_TOKEN_LEN {
            return;
        }
        if let Some(at) = self.wall_at.take() {
            if !tokens.is_empty() {
                tokens.push(Token::new(WALL, TokenClass::Other, at, at));
            }
        }
        let text = &self.text[leaf.start as usize..leaf.end as usize];
        let id = if self.ignore_case {
            fnv1a_lowercase(text)
        } else {
            fnv1a(text.as_bytes())
        };
        tokens.push(Token::new(id, class, leaf.start, leaf.end));
    }

    /// The identity in `mode` of `leaf`, a token of class `class`, as a
    /// person reads it (without case in lower case).
    fn identity_shown(&self, mode: Mode, class: TokenClass, leaf: Leaf) -> String {
        let source = &self.text[leaf.start as usize..leaf.end as usize];
        let identity = readable(mode.placeholder(class).unwrap_or(source));
        if self.ignore_case {
            identity.to_lowercase()
        } else {
            identity.to_owned()
        }
    }

    /// The identity in `mode` of `leaf` as a person reads it, or why it is
    /// no token: for `--dump-tokens` and golden tests.
    fn shown(&mut self, mode: Mode, format: &Format, leaf: Leaf) -> String {
        match self.decide(format, leaf) {
            Fate::Kept(class) => self.identity_shown(mode, class, leaf),
            Fate::Dropped => "(dropped)".to_owned(),
            Fate::Import => "(import)".to_owned(),
            Fate::Suppressed => "(suppressed)".to_owned(),
            Fate::Ignored => "(ignored)".to_owned(),
        }
    }
}

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

/// The longest token kept, in bytes: its length shares 32 bits with its
/// class.
pub(crate) const MAX_TOKEN_LEN: u32 = (1 << 29) - 1;

/// One normalized token: what is compared, and where it is. 16 bytes (the
/// index's biggest array): the class is packed with the length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// [`fnv1a`] of the text (lower-cased with `--ignoreCase`): the
    /// identity in strict mode.
    text: u64,
    /// Byte offset of the first byte.
    pub start: u32,
    /// The length in bytes (low 29 bits) and the [`TokenClass`] (high 3).
    len_class: u32,
}

/// The id of `$id`, the identity of identifiers in mild and weak modes.
pub(crate) const ABSTRACT_IDENTIFIER: u64 = fnv1a(ID.as_bytes());

impl Token {
    /// The token of text hash `text` and class `class` at `start..end`
    /// (at most [`MAX_TOKEN_LEN`] bytes).
    pub(crate) fn new(text: u64, class: TokenClass, start: u32, end: u32) -> Token {
        let len = end - start;
        debug_assert!(len <= MAX_TOKEN_LEN, "a token of {len} bytes");
        Token {
            text,
            start,
            len_class: (len & MAX_TOKEN_LEN) | (class as u32) << 29,
        }
    }

    /// The token of the cache's three numbers (see [`Token::raw`]), unless
    /// they name no class.
    pub(crate) fn from_raw(text: u64, start: u32, len_class: u32) -> Option<Token> {
        TokenClass::from_code(len_class >> 29)?;
        start.checked_add(len_class & MAX_TOKEN_LEN)?;
        Some(Token {
            text,
            start,
            len_class,
        })
    }

    /// The three numbers a cache stores: text hash, start, length and class.
    pub(crate) fn raw(self) -> (u64, u32, u32) {
        (self.text, self.start, self.len_class)
    }

    /// Byte offset just past the last byte.
    #[inline]
    pub fn end(self) -> u32 {
        self.start + (self.len_class & MAX_TOKEN_LEN)
    }

    /// The token's class.
    #[inline]
    pub(crate) fn class(self) -> TokenClass {
        match self.len_class >> 29 {
            1 => TokenClass::Identifier,
            2 => TokenClass::String,
            3 => TokenClass::Number,
            4 => TokenClass::Literal,
            _ => TokenClass::Other,
        }
    }

    /// The same token moved `by` bytes later (a piece cut out of a text).
    pub(crate) fn shifted(self, by: u32) -> Token {
        Token {
            start: self.start + by,
            ..self
        }
    }

    /// The identity of the token in `mode`: the hash of its text, or of the
    /// placeholder its class stands for in that mode. Equal identities,
    /// equal ids; two tokens equal in strict mode are equal in mild mode,
    /// and two equal in mild mode are equal in weak mode.
    #[inline]
    pub fn id_in(self, mode: Mode) -> u64 {
        match (mode, self.len_class >> 29) {
            (Mode::Mild | Mode::Weak, 1) => ABSTRACT_IDENTIFIER,
            (Mode::Weak, 2) => ABSTRACT_LITERALS[0],
            (Mode::Weak, 3) => ABSTRACT_LITERALS[1],
            (Mode::Weak, 4) => ABSTRACT_LITERALS[2],
            _ => self.text,
        }
    }

    /// Whether this is a [`WALL`], where suppressed code was: equal to no
    /// token in any mode.
    #[inline]
    pub fn is_wall(self) -> bool {
        self.text == WALL
    }

    /// The identity in weak mode, the most abstract: what fingerprints are
    /// made of, so that the candidates of every mode are found.
    #[inline]
    pub(crate) fn weak_id(self) -> u64 {
        self.id_in(Mode::Weak)
    }
}

/// Abstracted identities are placeholders that start with a NUL byte, which
/// no token of valid source text contains, so they never equal real text.
const ID: &str = "\0$id";
const STR: &str = "\0$str";
const NUM: &str = "\0$num";
const LIT: &str = "\0$lit";

/// Ids of the abstract literals of weak mode (`$str`, `$num`, `$lit`).
pub(crate) const ABSTRACT_LITERALS: [u64; 3] = [
    fnv1a(STR.as_bytes()),
    fnv1a(NUM.as_bytes()),
    fnv1a(LIT.as_bytes()),
];

/// Ids of the separators between the entries of a table of literals.
pub(crate) const TABLE_SEPARATORS: [u64; 9] = [
    fnv1a(b","),
    fnv1a(b";"),
    fnv1a(b":"),
    fnv1a(b"("),
    fnv1a(b")"),
    fnv1a(b"["),
    fnv1a(b"]"),
    fnv1a(b"{"),
    fnv1a(b"}"),
];

/// The identity as a person reads it: placeholders without their NUL.
fn readable(identity: &str) -> &str {
    identity.strip_prefix('\0').unwrap_or(identity)
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
fn for_each_leaf_within(
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
    let Some(embedded) = &format.embedded else {
        return Ok(walk(format, tree.root_node(), leaf));
    };
    for script in embed::scripts(embedded, tree, text) {
        let code = parse_ranges(script.format, text, &[script.range], None, budget)?;
        if !walk(script.format, code.root_node(), leaf) {
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
    walk_within(format, root, from, false, leaf)
}

/// Like [`walk_from`]; every leaf is an import's when `in_import` (the
/// code of an interpolation inside one), else those inside a node of the
/// format's `import_kinds`. Walked in one pass over the tree
/// ([`visible_nodes`]), with as few calls into tree-sitter per node as
/// will do: the walk was a tenth of a cold scan.
fn walk_within(
    format: &Format,
    root: Node<'_>,
    from: usize,
    in_import: bool,
    leaf: &mut impl FnMut(Leaf) -> bool,
) -> bool {
    let kinds = format.kinds();
    visible_nodes(root, |v| {
        if from > 0 && v.end <= from {
            return Step::Skip;
        }
        let (node, kind) = (v.node, v.kind);
        let go_on = match kinds.class_of(kind) {
            // Imports hold no other: the subtree is walked as an import's.
            _ if !in_import && kinds.is_import(kind) => walk_within(format, node, from, true, leaf),
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
fn emit(
    start: usize,
    end: usize,
    class: Class,
    import: bool,
    leaf: &mut impl FnMut(Leaf) -> bool,
) -> bool {
    start >= end || leaf(piece(class, start, end, import))
}

/// The leaf of `class` at `start..end`.
fn piece(class: Class, start: usize, end: usize, import: bool) -> Leaf {
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
            if !walk_within(format, child, 0, import, leaf) {
                return false;
            }
            piece_start = child.end_byte();
        }
    }
    piece_start >= node.end_byte()
        || leaf(piece(Class::String, piece_start, node.end_byte(), import))
}

/// The normalized token stream of a file's `text`, unless its parse runs
/// out of budget.
pub fn tokenize(
    format: &Format,
    text: &str,
    normalization: &Normalization,
) -> Result<Vec<Token>, ParseError> {
    tokenize_within(format, text, normalization, &Budget::for_file(text.len()))
}

/// The normalized token stream of a file's `text`, its parses within
/// `budget` (a diff's files share one).
pub(crate) fn tokenize_within(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    budget: &Budget,
) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::with_capacity(text.len() / 16);
    let mut normalizer = normalization.of(text);
    for_each_leaf_within(format, text, budget, |leaf| {
        normalizer.push(&mut tokens, format, leaf)
    })?;
    tokens.shrink_to_fit();
    Ok(tokens)
}

/// The opening text of `text` as `--include-generated`'s header test
/// reads it: the text before its first token when imports are kept. So
/// its comments and the code the normalization skips there (ignore
/// patterns' matches, suppressed code) count, its imports do not. All of
/// it when a parse of it runs out of budget.
pub(crate) fn opening_text<'t>(
    format: &Format,
    text: &'t str,
    normalization: &Normalization,
) -> &'t str {
    let mut normalizer = normalization.of(text);
    normalizer.keep_imports = true;
    let mut code = None;
    let walked = for_each_leaf(format, text, |leaf| {
        if code.is_none() && matches!(normalizer.decide(format, leaf), Fate::Kept(_)) {
            code = Some(leaf.start as usize);
        }
    });
    match (walked, code) {
        (Ok(()), Some(code)) => &text[..code],
        _ => text,
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
pub(crate) struct Position {
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
    pub(crate) fn start_position(&self, text: &str, offset: u32) -> Position {
        let line = self.line_of(offset);
        let line_start = self.starts[line as usize - 1] as usize;
        let column = text[line_start..offset as usize].chars().count() as u32 + 1;
        Position { line, column }
    }

    /// Position just after a range ending (exclusive) at byte `end`: the line
    /// of its last character, and the column after that character.
    pub(crate) fn end_position(&self, text: &str, end: u32) -> Position {
        let line = self.line_of(end.saturating_sub(1));
        let line_start = self.starts[line as usize - 1] as usize;
        let column = text[line_start..end as usize].chars().count() as u32 + 1;
        Position { line, column }
    }

    /// Lines as an editor shows them: `\n`-separated, not counting the empty
    /// line after a final `\n`; 0 for an empty text.
    pub(crate) fn editor_lines(&self, text: &str) -> u32 {
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
/// `line:column class identity` (the identity in `mode`), for
/// `--dump-tokens` and golden tests: comments show as `(dropped)`, the
/// leaves of imports as `(import)`, those after a disabling suppression
/// comment as `(suppressed)`, tokens inside an ignore pattern's match as
/// `(ignored)`, identities compared without case in lower case.
pub(crate) fn dump(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    mode: Mode,
) -> Result<String, ParseError> {
    let lines = LineIndex::new(text);
    let mut out = String::new();
    let mut normalizer = normalization.of(text);
    for_each_leaf(format, text, |leaf| {
        let shown = normalizer.shown(mode, format, leaf);
        let at = lines.start_position(text, leaf.start);
        out.push_str(&format!(
            "{}:{} {} {}\n",
            at.line,
            at.column,
            leaf.class.name(),
            shown.escape_debug()
        ));
    })?;
    Ok(out)
}

/// Renders the syntax tree of `text` one node per line, indented by depth,
/// as `field: kind` (anonymous kinds quoted) and, for leaves, their text:
/// what a `grammars.toml` table is written from (`--dump-tree`).
pub(crate) fn dump_tree(format: &Format, text: &str) -> Result<String, ParseError> {
    let tree = parse(format, text, None, &Budget::for_file(text.len()))?;
    let mut out = String::new();
    let mut cursor = tree.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        out.push_str(&"  ".repeat(depth));
        if let Some(field) = cursor.field_name() {
            out.push_str(field);
            out.push_str(": ");
        }
        match node.kind() {
            kind if node.is_missing() => out.push_str(&format!("MISSING {kind:?}")),
            kind if node.is_named() => out.push_str(kind),
            kind => out.push_str(&format!("{kind:?}")),
        }
        if node.child_count() == 0 && node.is_named() {
            out.push_str(&format!(" {:?}", &text[node.byte_range()]));
        }
        out.push('\n');
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return Ok(out);
            }
            depth -= 1;
        }
    }
}

/// The identity texts of `text` in `mode` joined by spaces: the normalized
/// form a person reads (without case in lower case), used by golden tests.
#[cfg(test)]
pub(crate) fn normalized(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    mode: Mode,
) -> Result<String, ParseError> {
    let mut parts = Vec::new();
    let mut normalizer = normalization.of(text);
    for_each_leaf(format, text, |leaf| {
        if let Fate::Kept(class) = normalizer.decide(format, leaf) {
            let shown = normalizer.identity_shown(mode, class, leaf);
            parts.push(shown.replace('\n', "\\n"));
        }
    })?;
    Ok(parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::patterns::IgnorePatterns;

    /// Normalizes `code` as format `format` in `mode`.
    fn check(format: &str, mode: Mode, code: &str, expected: &str) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).unwrap();
        let normalization = Normalization::default();
        let got = normalized(format, code, &normalization, mode).unwrap();
        assert_eq!(
            got,
            expected,
            "\n{}",
            dump(format, code, &normalization, mode).unwrap()
        );
        ids_are_derived(format, code, &normalization);
    }

    /// Asserts that the ids of the tokens of `code` in each mode
    /// ([`Token::id_in`]) are the hashes of the identity texts that mode
    /// gives (what a token stream of one mode held before tokens kept
    /// their class).
    fn ids_are_derived(format: &Format, code: &str, normalization: &Normalization) {
        let tokens = tokenize(format, code, normalization).unwrap();
        let tokens: Vec<Token> = tokens.into_iter().filter(|t| !t.is_wall()).collect();
        for mode in [Mode::Strict, Mode::Mild, Mode::Weak] {
            let mut expected = Vec::new();
            let mut normalizer = normalization.of(code);
            for_each_leaf(format, code, |leaf| {
                if let Fate::Kept(class) = normalizer.decide(format, leaf) {
                    let source = &code[leaf.start as usize..leaf.end as usize];
                    let identity = mode.placeholder(class).unwrap_or(source);
                    expected.push(if normalization.ignore_case {
                        fnv1a_lowercase(identity)
                    } else {
                        fnv1a(identity.as_bytes())
                    });
                }
            })
            .unwrap();
            let got: Vec<u64> = tokens.iter().map(|t| t.id_in(mode)).collect();
            assert_eq!(got, expected, "{mode:?}: {code}");
        }
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
    fn missing_nodes_are_not_tokens() {
        // tree-sitter inserts a zero-width `;` or `)`; it must not appear.
        check("js", Mode::Strict, "f(a", "f ( a");
    }

    /// Normalizes `code` as format `format` in `mode`, without case when
    /// `ignore_case`, skipping the matches of `patterns`, imports kept.
    fn check_with(
        format: &str,
        (mode, ignore_case, patterns): (Mode, bool, &[&str]),
        code: &str,
        expected: &str,
    ) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).unwrap();
        let normalization = Normalization {
            ignore_case,
            ignore_patterns: IgnorePatterns::new(patterns).unwrap(),
            // The patterns are tried on imports too.
            keep_imports: true,
        };
        let got = normalized(format, code, &normalization, mode).unwrap();
        assert_eq!(
            got,
            expected,
            "\n{}",
            dump(format, code, &normalization, mode).unwrap()
        );
        ids_are_derived(format, code, &normalization);
        // The token stream agrees with what is shown: one token per part.
        let tokens = tokenize(format, code, &normalization).unwrap();
        assert_eq!(tokens.len(), got.split_whitespace().count(), "{got}");
    }

    #[test]
    fn ignore_case_folds_what_each_mode_keeps_as_text() {
        let sql = "SELECT Name FROM Users WHERE Kind = 'Admin' AND Active = TRUE;";
        check_with(
            "sql",
            (Mode::Strict, true, &[]),
            sql,
            "select name from users where kind = 'admin' and active = true ;",
        );
        check_with(
            "sql",
            (Mode::Mild, true, &[]),
            sql,
            "select $id from $id where $id = 'admin' and $id = true ;",
        );
        check_with(
            "sql",
            (Mode::Weak, true, &[]),
            sql,
            "select $id from $id where $id = $lit and $id = $lit ;",
        );
        check_with(
            "py",
            (Mode::Strict, true, &[]),
            "def GetUser(Id): return None",
            "def getuser ( id ) : return none",
        );
    }

    #[test]
    fn ignore_case_makes_equal_ids_of_text_differing_only_in_case() {
        let registry = Registry::builtin();
        let sql = registry.lookup("sql").unwrap();
        let ids = |text: &str, ignore_case: bool| -> Vec<u64> {
            let normalization = Normalization {
                ignore_case,
                ..Normalization::default()
            };
            let tokens = tokenize(sql, text, &normalization).unwrap();
            tokens.iter().map(|t| t.id_in(Mode::Strict)).collect()
        };
        let (upper, lower) = ("SELECT Id FROM T;", "select id from t;");
        assert_eq!(ids(upper, true), ids(lower, true));
        assert_ne!(ids(upper, false), ids(lower, false));
        // Folded identities are those of the lower-case text, kept as is.
        assert_eq!(ids(upper, true), ids(lower, false));
    }

    #[test]
    fn tokens_inside_an_ignore_pattern_match_are_dropped() {
        let code = "import a from 'a';\nlet x = 1; // one\nlet y = 2;\n";
        check_with(
            "js",
            (Mode::Strict, false, &[r"import.*from.*;"]),
            code,
            "let x = 1 ; let y = 2 ;",
        );
        // A match that cuts `let` in half keeps it; `x` lies inside.
        check_with(
            "js",
            (Mode::Strict, false, &["et x"]),
            code,
            "import a from 'a' ; let = 1 ; let y = 2 ;",
        );
        // Several patterns, several matches each.
        check_with(
            "js",
            (Mode::Strict, false, &["import.*;", r"= \d"]),
            code,
            "let x ; let y ;",
        );
        // The match is against the text: across lines with (?s), comments
        // included, and the tokens of other modes are dropped alike.
        check_with(
            "js",
            (Mode::Mild, true, &[r"(?s)let x.*?// one"]),
            code,
            "import $id from 'a' ; let $id = 2 ;",
        );
    }

    /// Normalizes `code` as `format` in strict mode, imports kept or not.
    fn check_imports(format: &str, keep_imports: bool, code: &str, expected: &str) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).unwrap();
        let normalization = Normalization {
            keep_imports,
            ..Normalization::default()
        };
        let got = normalized(format, code, &normalization, Mode::Strict).unwrap();
        assert_eq!(
            got,
            expected,
            "\n{}",
            dump(format, code, &normalization, Mode::Strict).unwrap()
        );
        ids_are_derived(format, code, &normalization);
        let tokens = tokenize(format, code, &normalization).unwrap();
        let real = tokens.iter().filter(|t| !t.is_wall()).count();
        assert_eq!(real, got.split_whitespace().count(), "{got}");
    }

    #[test]
    fn import_declarations_are_no_tokens_unless_kept() {
        let cases = [
            (
                "js",
                "import { a } from './a';\nimport * as b from 'b';\nlet x = a(b);",
                "let x = a ( b ) ;",
            ),
            (
                "ts",
                "import fs = require('fs');\nimport type { T } from './t';\nconst y: T = fs;",
                "const y : T = fs ;",
            ),
            (
                "py",
                "from __future__ import annotations\nimport os, sys\nfrom .x import (a, b)\ndef f():\n    import json\n    return json\n",
                "def f ( ) : return json",
            ),
            (
                "rs",
                "extern crate alloc;\nuse std::{io, fmt::Write as _};\nfn f() { use io::Read; g(); }",
                "fn f ( ) { g ( ) ; }",
            ),
            (
                "go",
                "package main\n\nimport (\n\t\"fmt\"\n\tos \"os\"\n)\n\nfunc main() { fmt.Println() }\n",
                "func main ( ) { fmt . Println ( ) }",
            ),
            (
                "java",
                "package a.b;\nimport java.util.List;\nimport static java.lang.Math.*;\nclass C {}",
                "class C { }",
            ),
            (
                "c",
                "#include <stdio.h>\n#include \"local.h\"\nint x = 1;\n",
                "int x = 1 ;",
            ),
            (
                "objc",
                "#import <Foundation/Foundation.h>\n@import UIKit;\nint x = 1;\n",
                "int x = 1 ;",
            ),
            (
                "cpp",
                "#include <vector>\nusing namespace std;\nusing std::string;\nint x = 1;\n",
                "int x = 1 ;",
            ),
            (
                "cs",
                "using System;\nusing static System.Math;\nnamespace A.B;\nclass C {}",
                "class C { }",
            ),
            (
                "kotlin",
                "package a.b\nimport c.d.E\nval x = 1\n",
                "val x = 1",
            ),
            ("swift", "import Foundation\nlet x = 1\n", "let x = 1"),
            ("scala", "import a.b._\nval x = 1\n", "val x = 1"),
            (
                "php",
                // `require_once` is an expression: its statement's `;` stays.
                "<?php\nuse A\\B;\nrequire_once 'x.php';\n$x = 1;\n",
                "<?php ; $x = 1 ;",
            ),
            (
                "haskell",
                "module Main (main) where\nimport Data.List (sort)\nmain = print 1\n",
                "main = print 1",
            ),
            (
                "dart",
                "library a;\nimport 'package:b/b.dart';\npart 'c.dart';\nvar x = 1;\n",
                "var x = 1 ;",
            ),
        ];
        for (format, code, without) in cases {
            check_imports(format, false, code, without);
        }
        // Kept, they are the tokens they always were.
        check_imports(
            "js",
            true,
            "import { a } from './a';\nlet x = a;",
            "import { a } from './a' ; let x = a ;",
        );
        check_imports(
            "go",
            true,
            "package main\nimport \"fmt\"\n",
            "package main import \"fmt\"",
        );
    }

    #[test]
    fn imports_that_are_calls_or_re_exports_stay_code() {
        // A re-export is the module's own interface; `require` is a call.
        check_imports(
            "js",
            false,
            "export { a } from './a';\nconst b = require('b');",
            "export { a } from './a' ; const b = require ( 'b' ) ;",
        );
        check_imports(
            "ruby",
            false,
            "require 'json'\nx = 1\n",
            "require 'json' x = 1",
        );
    }

    #[test]
    fn suppression_comments_drop_the_code_between_them() {
        let pairs = [
            ("dupcheck-disable", "dupcheck-enable"),
            ("jscpd:ignore-start", "jscpd:ignore-end"),
            ("CPD-OFF", "CPD-ON"),
        ];
        for (disable, enable) in pairs {
            check_imports(
                "js",
                false,
                &format!("let a = 1;\n// {disable}\nlet b = 2;\n/* {enable} */\nlet c = 3;\n"),
                "let a = 1 ; let c = 3 ;",
            );
        }
        // Markers of different pairs close each other; the last in a
        // comment decides.
        check_imports(
            "py",
            false,
            "a = 1\n# CPD-OFF\nb = 2\n# dupcheck-enable\nc = 3\n# dupcheck-enable, then dupcheck-disable\nd = 4\n",
            "a = 1 c = 3",
        );
    }

    #[test]
    fn a_wall_stands_between_the_tokens_around_suppressed_code() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let code = "// CPD-OFF\nlet a = 1;\n// CPD-ON\nlet b = 2;\n// CPD-OFF\nlet c = 3;\n/* CPD-ON */\nlet d = 4;\n// CPD-OFF\nlet e;";
        let tokens = tokenize(js, code, &Normalization::default()).unwrap();
        let walls: Vec<usize> = tokens
            .iter()
            .filter(|t| t.is_wall())
            .map(|t| {
                assert_eq!((t.start, t.class()), (t.end(), TokenClass::Other));
                t.start as usize
            })
            .collect();
        // None first or last: only the one between `b` and `d`, where `c`'s
        // code was.
        assert_eq!(walls, [code.find("let c").unwrap()]);
        assert_eq!(tokens.len(), 2 * 5 + 1);
    }

    #[test]
    fn a_marker_outside_a_comment_does_nothing() {
        check_imports(
            "js",
            false,
            "let s = '//dupcheck-disable';\nlet t = 2;\n",
            "let s = '//dupcheck-disable' ; let t = 2 ;",
        );
        check_imports(
            "py",
            false,
            "\"\"\"CPD-OFF\"\"\"\nx = 1\n",
            "\"\"\"CPD-OFF\"\"\" x = 1",
        );
    }

    #[test]
    fn a_disable_without_enable_runs_to_the_end() {
        check_imports(
            "rs",
            false,
            "fn a() {}\n// dupcheck-disable: vendored\nfn b() {}\nfn c() {}\n",
            "fn a ( ) { }",
        );
        // The dump says why each leaf is no token.
        let registry = Registry::builtin();
        let rs = registry.lookup("rs").unwrap();
        let dump = dump(
            rs,
            "use a;\n// CPD-OFF\nfn b() {}",
            &Normalization::default(),
            Mode::Strict,
        )
        .unwrap();
        assert_eq!(
            dump,
            "1:1 other (import)\n1:5 identifier (import)\n1:6 other (import)\n\
             2:1 comment (dropped)\n3:1 other (suppressed)\n3:4 identifier (suppressed)\n\
             3:5 other (suppressed)\n3:6 other (suppressed)\n3:8 other (suppressed)\n\
             3:9 other (suppressed)\n"
        );
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
                let normalization = Normalization::default();
                let got = normalized(format, code, &normalization, mode).unwrap();
                ids_are_derived(format, code, &normalization);
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
        let method = tokenize(js, "a.push", &Normalization::default()).unwrap();
        let plain = tokenize(js, "push", &Normalization::default()).unwrap();
        for mode in [Mode::Strict, Mode::Mild, Mode::Weak] {
            assert_eq!(method[2].id_in(mode), plain[0].id_in(mode));
        }
    }

    #[test]
    fn placeholders_never_collide_with_source_text() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let abstracted = tokenize(js, "a", &Normalization::default()).unwrap()[0];
        let literal = tokenize(js, "$id", &Normalization::default()).unwrap()[0];
        assert_ne!(abstracted.id_in(Mode::Mild), literal.id_in(Mode::Strict));
    }

    #[test]
    fn a_token_is_16_bytes_and_keeps_its_range_and_class() {
        assert_eq!(std::mem::size_of::<Token>(), 16);
        let classes = [
            TokenClass::Other,
            TokenClass::Identifier,
            TokenClass::String,
            TokenClass::Number,
            TokenClass::Literal,
        ];
        for class in classes {
            let t = Token::new(7, class, 5, 5 + MAX_TOKEN_LEN);
            assert_eq!((t.class(), t.start, t.end()), (class, 5, 5 + MAX_TOKEN_LEN));
            let (text, start, len_class) = t.raw();
            assert_eq!(Token::from_raw(text, start, len_class), Some(t));
        }
        // Codes 5 to 7 name no class; a range past 4 GiB is no range.
        assert_eq!(Token::from_raw(7, 0, 5 << 29), None);
        assert_eq!(Token::from_raw(7, u32::MAX, 2), None);
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
