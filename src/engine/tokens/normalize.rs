//! Normalization: what of a text's leaves becomes tokens. A
//! [`Normalization`] (case, ignore patterns, imports), built once from the
//! configuration, makes a [`Normalizer`] per text, which drops comments,
//! the leaves of imports, the matches of ignore patterns and the code
//! between suppression comments ([`SUPPRESSION_MARKERS`]), leaving a
//! [`WALL`] where code was dropped.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use super::leaves::Leaf;
use super::{readable, Mode, Token, TokenClass, MAX_TOKEN_LEN, WALL};
use crate::engine::grammar::{Class, Format};
use crate::engine::hash::{fnv1a, fnv1a_lowercase};
use crate::engine::patterns::{IgnorePatterns, Skipper};

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

/// Whether `comment` disables (`Some(true)`) or enables (`Some(false)`)
/// the tokens after it: its last marker decides. `None` without a marker.
pub(super) fn suppression(comment: &str) -> Option<bool> {
    // One pass over the comment for all markers (most comments hold none):
    // disabling markers are the even patterns, enabling ones the odd.
    static MARKERS: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasick::new(SUPPRESSION_MARKERS.iter().flat_map(|(d, e)| [d, e]))
            .expect("the suppression markers are plain strings")
    });
    let last = MARKERS.find_iter(comment).last()?;
    Some(last.pattern().as_usize() % 2 == 0)
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
    pub(crate) keep_imports: bool,
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
pub(crate) enum Fate {
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
    pub(crate) fn decide(&mut self, format: &Format, leaf: Leaf) -> Fate {
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
    pub(crate) fn identity_shown(&self, mode: Mode, class: TokenClass, leaf: Leaf) -> String {
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
    pub(crate) fn shown(&mut self, mode: Mode, format: &Format, leaf: Leaf) -> String {
        match self.decide(format, leaf) {
            Fate::Kept(class) => self.identity_shown(mode, class, leaf),
            Fate::Dropped => "(dropped)".to_owned(),
            Fate::Import => "(import)".to_owned(),
            Fate::Suppressed => "(suppressed)".to_owned(),
            Fate::Ignored => "(ignored)".to_owned(),
        }
    }
}
