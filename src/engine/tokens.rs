//! Tokens: parses source text and normalizes the tree's leaves.
//!
//! In: a [`Format`], source text and a [`Normalization`] (the [`Mode`],
//! whether case counts, the ignore patterns). Out: the token stream, each
//! [`Token`] an identity hash plus its byte range. Line and column are
//! recovered from byte offsets by a [`LineIndex`].
//!
//! Invariants: parsing never fails. Leaves inside ERROR nodes are tokens like
//! any other, zero-width (MISSING) nodes are not, declared literals and
//! comments are one leaf each, comments are dropped, and so are tokens that
//! lie inside a match of an ignore pattern against the text tokenized. The
//! identity never includes the node kind, only the class and (per mode) the
//! text, so a snippet parsed out of context still matches the code it came
//! from. The token stream is the sole contract between parsing and later
//! stages.

use tree_sitter::{Node, Tree};

use crate::engine::embed;
use crate::engine::grammar::{Class, Format};
use crate::engine::hash::{fnv1a, fnv1a_lowercase};
use crate::engine::parse::{parse, parse_ranges, Budget, ParseError};
use crate::engine::patterns::{IgnorePatterns, Skipper};

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
        let class = match class {
            Class::Identifier if format.literal_identifiers.iter().any(|l| l == text) => {
                Class::Literal
            }
            class => class,
        };
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

/// Everything besides the grammar that decides a text's tokens: the
/// [`Mode`], whether case counts, and the code blocks skipped. Built once
/// from the configuration and passed to every tokenizing call (scan,
/// checks, diffs); `Normalization::from(Mode::Strict)` (or `default()`)
/// is the common case.
///
/// With `ignore_case`, every identity kept as text is compared without
/// case, as jscpd does (it lower-cases each token before hashing): in
/// strict mode identifiers, keywords and literals; in mild mode keywords
/// and literals (identifiers are `$id` already); in weak mode keywords and
/// the like. The placeholders (`$id`, `$str`, ...) are unchanged.
#[derive(Debug, Clone, Default)]
pub struct Normalization {
    /// How much of a token's text its identity keeps.
    pub mode: Mode,
    /// Compare identities kept as text without case (`--ignoreCase`).
    pub ignore_case: bool,
    /// Tokens inside a match of one of these are dropped (`--ignore-pattern`).
    pub ignore_patterns: IgnorePatterns,
}

impl From<Mode> for Normalization {
    fn from(mode: Mode) -> Normalization {
        Normalization {
            mode,
            ..Normalization::default()
        }
    }
}

impl Normalization {
    /// This normalization applied to `text`: its leaves are then turned
    /// into tokens in source order with [`Normalizer::push`].
    pub(crate) fn of<'n, 't>(&'n self, text: &'t str) -> Normalizer<'n, 't> {
        Normalizer {
            mode: self.mode,
            ignore_case: self.ignore_case,
            text,
            skipper: self.ignore_patterns.in_text(text),
        }
    }

    /// The identity as a person reads it, or why the token is dropped: for
    /// `--dump-tokens` and golden tests.
    fn shown(&self, format: &Format, class: Class, source: &str, skipped: bool) -> String {
        match self.mode.identity_text(format, class, source) {
            None => "(dropped)".to_owned(),
            Some(_) if skipped => "(ignored)".to_owned(),
            Some(identity) if self.ignore_case => readable(identity).to_lowercase(),
            Some(identity) => readable(identity).to_owned(),
        }
    }
}

/// A [`Normalization`] applied to one text, whose leaves it turns into
/// tokens in source order (the ignore patterns' matches are walked along).
pub(crate) struct Normalizer<'n, 't> {
    mode: Mode,
    ignore_case: bool,
    text: &'t str,
    skipper: Skipper<'n, 't>,
}

impl Normalizer<'_, '_> {
    /// Appends the token of the leaf at `start..end` of the text, unless its
    /// class is dropped or it lies inside an ignore pattern's match.
    pub(crate) fn push(
        &mut self,
        tokens: &mut Vec<Token>,
        format: &Format,
        class: Class,
        start: usize,
        end: usize,
    ) {
        let Some(identity) = self
            .mode
            .identity_text(format, class, &self.text[start..end])
        else {
            return;
        };
        if self.skipper.skips(start, end) {
            return;
        }
        let id = if self.ignore_case {
            fnv1a_lowercase(identity)
        } else {
            fnv1a(identity.as_bytes())
        };
        // Files are limited to 4 GiB by the walker, so offsets fit.
        tokens.push(Token {
            id,
            start: start as u32,
            end: end as u32,
        });
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

/// Ids of the abstract literals of weak mode (`$str`, `$num`, `$lit`).
pub const ABSTRACT_LITERALS: [u64; 3] = [
    fnv1a(STR.as_bytes()),
    fnv1a(NUM.as_bytes()),
    fnv1a(LIT.as_bytes()),
];

/// Ids of the separators between the entries of a table of literals.
pub const TABLE_SEPARATORS: [u64; 9] = [
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

/// Calls `leaf(class, start, end)` for every token leaf of `text`, a file's
/// text, in source order, comments included (their class says so); fails
/// when the parse runs out of its [`Budget::for_file`].
pub fn for_each_leaf(
    format: &Format,
    text: &str,
    leaf: impl FnMut(Class, usize, usize),
) -> Result<(), ParseError> {
    for_each_leaf_within(format, text, &Budget::for_file(text.len()), leaf)
}

/// Like [`for_each_leaf`], within `budget`.
fn for_each_leaf_within(
    format: &Format,
    text: &str,
    budget: &Budget,
    mut leaf: impl FnMut(Class, usize, usize),
) -> Result<(), ParseError> {
    let tree = parse(format, text, None, budget)?;
    walk_parse(format, &tree, text, budget, &mut |class, start, end| {
        leaf(class, start, end);
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
    leaf: &mut impl FnMut(Class, usize, usize) -> bool,
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
pub(crate) fn walk(
    format: &Format,
    root: Node<'_>,
    leaf: &mut impl FnMut(Class, usize, usize) -> bool,
) -> bool {
    walk_from(format, root, 0, leaf)
}

/// Like [`walk`], skipping the subtrees that end at or before byte `from`.
pub(crate) fn walk_from(
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
pub fn tokenize_within(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    budget: &Budget,
) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::with_capacity(text.len() / 4);
    let mut normalizer = normalization.of(text);
    for_each_leaf_within(format, text, budget, |class, start, end| {
        normalizer.push(&mut tokens, format, class, start, end)
    })?;
    Ok(tokens)
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
/// `line:column class identity`, for `--dump-tokens` and golden tests:
/// comments show as `(dropped)`, tokens inside an ignore pattern's match as
/// `(ignored)`, identities compared without case in lower case.
pub fn dump(
    format: &Format,
    text: &str,
    normalization: &Normalization,
) -> Result<String, ParseError> {
    let lines = LineIndex::new(text);
    let mut out = String::new();
    let mut skipper = normalization.ignore_patterns.in_text(text);
    for_each_leaf(format, text, |class, start, end| {
        let source = &text[start..end];
        let shown = normalization.shown(format, class, source, skipper.skips(start, end));
        let at = lines.start_position(text, start as u32);
        out.push_str(&format!(
            "{}:{} {} {}\n",
            at.line,
            at.column,
            class.name(),
            shown.escape_debug()
        ));
    })?;
    Ok(out)
}

/// Renders the syntax tree of `text` one node per line, indented by depth,
/// as `field: kind` (anonymous kinds quoted) and, for leaves, their text:
/// what a `grammars.toml` table is written from (`--dump-tree`).
pub fn dump_tree(format: &Format, text: &str) -> Result<String, ParseError> {
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

/// The identity texts of `text` joined by spaces: the normalized form a
/// person reads (without case in lower case), used by golden tests.
pub fn normalized(
    format: &Format,
    text: &str,
    normalization: &Normalization,
) -> Result<String, ParseError> {
    let mut parts = Vec::new();
    let mut skipper = normalization.ignore_patterns.in_text(text);
    for_each_leaf(format, text, |class, start, end| {
        let source = &text[start..end];
        if normalization
            .mode
            .identity_text(format, class, source)
            .is_some()
            && !skipper.skips(start, end)
        {
            let shown = normalization.shown(format, class, source, false);
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
        let normalization = Normalization::from(mode);
        let got = normalized(format, code, &normalization).unwrap();
        assert_eq!(
            got,
            expected,
            "\n{}",
            dump(format, code, &normalization).unwrap()
        );
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
    /// `ignore_case`, skipping the matches of `patterns`.
    fn check_with(
        format: &str,
        (mode, ignore_case, patterns): (Mode, bool, &[&str]),
        code: &str,
        expected: &str,
    ) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).unwrap();
        let normalization = Normalization {
            mode,
            ignore_case,
            ignore_patterns: IgnorePatterns::new(patterns).unwrap(),
        };
        let got = normalized(format, code, &normalization).unwrap();
        assert_eq!(
            got,
            expected,
            "\n{}",
            dump(format, code, &normalization).unwrap()
        );
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
            tokens.iter().map(|t| t.id).collect()
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
                let got = normalized(format, code, &mode.into()).unwrap();
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
        let method = tokenize(js, "a.push", &Mode::Strict.into()).unwrap();
        let plain = tokenize(js, "push", &Mode::Strict.into()).unwrap();
        assert_eq!(method[2].id, plain[0].id);
    }

    #[test]
    fn placeholders_never_collide_with_source_text() {
        let registry = Registry::builtin();
        let js = registry.lookup("js").unwrap();
        let abstracted = tokenize(js, "a", &Mode::Mild.into()).unwrap()[0].id;
        let literal = tokenize(js, "$id", &Mode::Strict.into()).unwrap()[0].id;
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
