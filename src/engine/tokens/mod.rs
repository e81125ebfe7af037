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
//!
//! The stages live in their own files: [`normalize`] (what is dropped),
//! [`leaves`] (the tree's leaves in order), [`tokenize`] (both, into
//! tokens), [`lines`] (lines and columns), [`packed`] (a file's tokens as
//! the index keeps them, and the [`Tokens`] every later stage reads),
//! [`dump`] (for grammar work); this file holds what they share, the token
//! and its modes.

mod dump;
mod leaves;
mod lines;
mod normalize;
mod packed;
mod tokenize;

#[cfg(test)]
pub(crate) use self::dump::normalized;
pub(crate) use self::dump::{dump, dump_tree};
pub use self::leaves::{for_each_leaf, Leaf};
pub(crate) use self::leaves::{walk, walk_from, walk_parse_collecting};
pub use self::lines::LineIndex;
pub(crate) use self::lines::Position;
pub use self::normalize::Normalization;
pub use self::packed::{PackedIter, PackedTokens, Tokens};
pub(crate) use self::packed::{
    Places as TokenPlaces, Starts as TokenStarts, START_BLOCK as TOKEN_BLOCK,
};
pub use self::tokenize::tokenize;
pub(crate) use self::tokenize::{opening_text, tokenize_defined};

use crate::engine::grammar::{Class, Format};
use crate::engine::hash::fnv1a;

/// Version of the normalization: bump it whenever the token stream of some
/// text changes, so that caches made by the older code are not reused.
pub(crate) const NORMALIZATION_VERSION: u32 = 4;

/// The id of a wall: a zero-width token put where suppressed code was,
/// between the tokens before and after it. Matching takes it for equal to
/// no token, itself included, so no run crosses suppressed code (its lines
/// are never inside a duplication). Never first or last in a stream.
pub(crate) const WALL: u64 = fnv1a(b"\0$wall");

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

    /// Whether two tokens equal in this mode are equal in `other`: strict
    /// is stricter than mild, mild than weak.
    pub(crate) fn at_least_as_strict_as(self, other: Mode) -> bool {
        let rank = |m: Mode| match m {
            Mode::Strict => 0,
            Mode::Mild => 1,
            Mode::Weak => 2,
        };
        rank(self) <= rank(other)
    }

    /// Whether identifiers of this mode are reduced to their class.
    fn abstracts_identifiers(self) -> bool {
        self != Mode::Strict
    }

    /// Whether literals of this mode are reduced to their class.
    fn abstracts_literals(self) -> bool {
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

/// The longest token kept, in bytes: its length shares 32 bits with its
/// class.
pub(crate) const MAX_TOKEN_LEN: u32 = (1 << 29) - 1;

/// One normalized token: what is compared, and where it is. 16 bytes: the
/// class is packed with the length. An indexed file keeps its tokens as
/// [`PackedTokens`], about 7 bytes each.
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
const ABSTRACT_IDENTIFIER: u64 = fnv1a(ID.as_bytes());

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

#[cfg(test)]
mod tests {
    use super::normalize::Fate;
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::engine::hash::fnv1a_lowercase;
    use crate::engine::patterns::IgnorePatterns;

    /// Normalizes `code` as format `format` in `mode`.
    fn check(format: &str, mode: Mode, code: &str, expected: &str) {
        let registry = Registry::builtin();
        let Some(format) = registry.compiled(format) else {
            return;
        };
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
        let Some(format) = registry.compiled(format) else {
            return;
        };
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
        let Some(sql) = registry.compiled("sql") else {
            return;
        };
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
        let Some(format) = registry.compiled(format) else {
            return;
        };
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
        let Some(rs) = registry.compiled("rs") else {
            return;
        };
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
            let Some(format) = registry.compiled(path.file_stem().unwrap().to_str().unwrap())
            else {
                continue;
            };
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
        // Every class, as the cache's codes name them.
        let classes: Vec<TokenClass> = (0..).map_while(TokenClass::from_code).collect();
        assert_eq!(classes.len(), 5);
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
