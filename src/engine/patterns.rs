//! Ignore patterns: code blocks skipped, as jscpd's `--ignore-pattern` does.
//!
//! In: regular expressions (`--ignore-pattern`, the config key
//! `ignorePattern`) and one text being tokenized: a file, a snippet, a
//! diff's new text or one of its hunks. Out: for each token of that text,
//! asked in source order, whether it lies inside a match of a pattern; such
//! a token is dropped like a comment ([`crate::engine::tokens`]).
//!
//! Invariants: a token is dropped only when one match holds it whole (a
//! match that cuts a token in half keeps it). A pattern is compiled within
//! [`SIZE_LIMIT`], so matching is linear in the text with a bounded factor
//! and bounded memory, whatever the pattern; a text's matches are walked in
//! step with its tokens, one match per pattern held at a time, never
//! collected.

use regex::{Matches, Regex, RegexBuilder};

/// The most heap a compiled pattern may take. Matching is linear in the
/// text, its factor at worst the size of the pattern's automaton (when the
/// lazy DFA gives up and a slower engine goes on), so this bounds the
/// memory and the time per byte a pattern can cost. The patterns jscpd's
/// users write (`import.*from.*;`, `(?s)// <generated>.*?// </generated>`)
/// take 2 to 3 KB, `\w+` with its Unicode class 50 KB; `\w{10}` takes
/// 500 KB and is refused (`(?-u)\w{10}` is not).
pub(crate) const SIZE_LIMIT: usize = 256 << 10;
/// The most memory the lazy DFA of a pattern may cache per thread; past it
/// the cache is cleared and the search goes on (or falls back to a slower
/// engine), never taking more.
pub(crate) const DFA_SIZE_LIMIT: usize = 1 << 20;

/// The compiled `--ignore-pattern`s; empty by default.
#[derive(Debug, Clone, Default)]
pub struct IgnorePatterns {
    regexes: Vec<Regex>,
}

/// A pattern that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?} is not a usable regular expression: {reason}")]
pub struct PatternError {
    /// The pattern as given.
    pub pattern: String,
    /// Why, on one line.
    pub reason: String,
}

impl IgnorePatterns {
    /// Compiles `patterns` (Rust `regex` syntax, which jscpd's JavaScript
    /// patterns mostly are); fails on the first one that does not compile
    /// or is larger than [`SIZE_LIMIT`].
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<IgnorePatterns, PatternError> {
        let regexes = patterns
            .iter()
            .map(|p| compile(p.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(IgnorePatterns { regexes })
    }

    /// The patterns as given, in order.
    pub(crate) fn sources(&self) -> impl Iterator<Item = &str> {
        self.regexes.iter().map(Regex::as_str)
    }

    /// Whether there is no pattern.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.regexes.is_empty()
    }

    /// The matches of every pattern in `text`, to ask of its tokens in
    /// source order.
    pub(crate) fn in_text<'p, 't>(&'p self, text: &'t str) -> Skipper<'p, 't> {
        Skipper {
            text,
            regexes: &self.regexes,
            cursors: self.regexes.iter().map(|r| Cursor::new(r, text)).collect(),
            max_end: 0,
        }
    }
}

/// Compiles one pattern within the size limits; its error on one line.
fn compile(pattern: &str) -> Result<Regex, PatternError> {
    RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| PatternError {
            pattern: pattern.to_owned(),
            reason: one_line(&e),
        })
}

/// A `regex` error on one line: its message without the pattern and the
/// caret drawn under it.
fn one_line(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(limit) => format!(
            "it compiles to more than the {} KB a pattern may take; make it smaller \
             (bounded repetitions such as {{1000}} grow it, Unicode classes such as \\w too: (?-u) makes them ASCII)",
            limit >> 10
        ),
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("error: "))
            .map_or_else(
                || text.split_whitespace().collect::<Vec<_>>().join(" "),
                |reason| {
                    // regex-syntax shows where the error is with a caret;
                    // on one line, the character's place says it.
                    match caret_column(text) {
                        Some(at) => format!("{reason} (at character {})", at + 1),
                        None => reason.to_owned(),
                    }
                },
            ),
        other => other.to_string().split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The column of the first caret `^` that regex-syntax draws under a
/// one-line pattern (its line follows the pattern's, both indented by four
/// spaces), counted in characters from 0.
fn caret_column(text: &str) -> Option<usize> {
    let mut lines = text.lines();
    let _title = lines.next()?;
    let _pattern = lines.next()?.strip_prefix("    ")?;
    let marks = lines.next()?.strip_prefix("    ")?;
    let at = marks.find('^')?;
    marks[at..]
        .chars()
        .all(|c| c == '^' || c == ' ')
        .then_some(at)
}

/// The matches of every pattern in one text, walked in step with the text's
/// tokens (see [`Skipper::skips`]).
pub(crate) struct Skipper<'p, 't> {
    text: &'t str,
    regexes: &'p [Regex],
    cursors: Vec<Cursor<'p, 't>>,
    /// The largest token end asked so far.
    max_end: usize,
}

/// Where one pattern's search stands in a text: its matches to come and the
/// first that does not end before the last token asked.
struct Cursor<'r, 't> {
    matches: Matches<'r, 't>,
    current: Option<(usize, usize)>,
}

impl<'r, 't> Cursor<'r, 't> {
    fn new(regex: &'r Regex, text: &'t str) -> Cursor<'r, 't> {
        let mut matches = regex.find_iter(text);
        let current = matches.next().map(|m| (m.start(), m.end()));
        Cursor { matches, current }
    }

    /// Whether a match holds `start..end`. Matches that end before `end`
    /// are passed for good: no later token (they start at or after `end`
    /// in source order) can lie inside them.
    fn holds(&mut self, start: usize, end: usize) -> bool {
        loop {
            match self.current {
                Some((_, match_end)) if match_end < end => {
                    self.current = self.matches.next().map(|m| (m.start(), m.end()));
                }
                Some((match_start, _)) => return match_start <= start,
                None => return false,
            }
        }
    }
}

impl Skipper<'_, '_> {
    /// Whether the token at bytes `start..end` of the text lies inside one
    /// match of a pattern. Tokens are asked in source order; one asked out
    /// of order restarts the searches (correct, only slower).
    pub(crate) fn skips(&mut self, start: usize, end: usize) -> bool {
        if self.cursors.is_empty() {
            return false;
        }
        if end < self.max_end {
            self.cursors = self
                .regexes
                .iter()
                .map(|r| Cursor::new(r, self.text))
                .collect();
        }
        self.max_end = self.max_end.max(end);
        self.cursors.iter_mut().any(|c| c.holds(start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of `text` (runs of non-space) that `patterns` skip.
    fn check(patterns: &[&str], text: &str, expected: &[&str]) {
        let patterns = IgnorePatterns::new(patterns).unwrap();
        let mut skipper = patterns.in_text(text);
        let mut start = 0;
        let mut skipped = Vec::new();
        for word in text.split(' ') {
            let end = start + word.len();
            if !word.is_empty() && skipper.skips(start, end) {
                skipped.push(word);
            }
            start = end + 1;
        }
        assert_eq!(skipped, expected, "{text:?}");
    }

    #[test]
    fn tokens_inside_a_match_are_skipped() {
        check(&["b c"], "a b c d", &["b", "c"]);
        check(&["GEN.*END"], "x GEN y z END w", &["GEN", "y", "z", "END"]);
    }

    #[test]
    fn a_match_that_cuts_a_token_keeps_it() {
        // "bc" holds only the end of "abc" and the start of "cd".
        check(&["bc d"], "abc d e", &["d"]);
        check(&["c c"], "abc cd", &[]);
    }

    #[test]
    fn several_patterns_and_several_matches() {
        check(&["b", "d e"], "a b c d e f", &["b", "d", "e"]);
        check(&["x"], "x a x b x", &["x", "x", "x"]);
        // Overlapping matches of two patterns: a token inside either is
        // skipped.
        check(&["a bb", "b c"], "a bb c", &["a", "bb", "c"]);
        check(&["a b", "b c"], "a bbb c", &["a", "c"]);
        // Together the two matches cover "bbb", but neither holds it.
        check(&["a bb", "bb c"], "a bbb c", &["a", "c"]);
    }

    #[test]
    fn empty_and_absent_matches_skip_nothing() {
        check(&["q*"], "a b", &[]);
        check(&["zzz"], "a b", &[]);
        check(&[], "a b", &[]);
    }

    #[test]
    fn tokens_asked_out_of_order_are_still_answered() {
        let patterns = IgnorePatterns::new(&["a", "c"]).unwrap();
        let mut skipper = patterns.in_text("a b c");
        assert!(skipper.skips(4, 5));
        assert!(skipper.skips(0, 1));
        assert!(!skipper.skips(2, 3));
    }

    #[test]
    fn errors_are_one_line_naming_the_pattern() {
        let err = IgnorePatterns::new(&["ok", "a(b"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"a(b\" is not a usable regular expression: unclosed group (at character 2)"
        );
        let err = IgnorePatterns::new(&[r"\p{Nope}"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"\\\\p{Nope}\" is not a usable regular expression: Unicode property not found (at character 1)"
        );
    }

    #[test]
    fn a_pattern_too_large_is_refused_and_usual_ones_fit() {
        let err = IgnorePatterns::new(&[r"\w{1000}"]).unwrap_err();
        assert_eq!(
            err.reason,
            "it compiles to more than the 256 KB a pattern may take; make it smaller \
             (bounded repetitions such as {1000} grow it, Unicode classes such as \\w too: (?-u) makes them ASCII)"
        );
        for big in ["(a{100}){100}", r"\w{10}"] {
            let err = IgnorePatterns::new(&[big]).unwrap_err();
            assert!(err.reason.starts_with("it compiles to more than"), "{err}");
        }
        IgnorePatterns::new(&[
            r"import.*from\s*'.*'",
            r"(?s)// <generated>.*?// </generated>",
            r"\w+",
            r"(?-u)\w{10}",
            r"^\s*#include\s*<[^>]*>",
            r"a\,b",
        ])
        .unwrap();
    }
}
