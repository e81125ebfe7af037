//! Tokenizing: a text parsed with its format's grammar, its leaves walked
//! and normalized into [`Token`]s, whole or within byte ranges; and the
//! text that opens a file before its first token.

use super::leaves::{for_each_leaf, for_each_leaf_defined, for_each_leaf_within};
use super::normalize::{Fate, Normalization};
use super::Token;
use crate::engine::definitions::Definitions;
use crate::engine::grammar::Format;
use crate::engine::parse::{Budget, ParseError};

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

/// Like [`tokenize_within`], with the text's definitions, gathered in the
/// same walk.
pub(crate) fn tokenize_defined(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    budget: &Budget,
) -> Result<(Vec<Token>, Definitions), ParseError> {
    let mut tokens = Vec::with_capacity(text.len() / 16);
    let mut normalizer = normalization.of(text);
    let definitions = for_each_leaf_defined(format, text, budget, |leaf| {
        normalizer.push(&mut tokens, format, leaf)
    })?;
    tokens.shrink_to_fit();
    Ok((tokens, definitions))
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
