//! The answer types every service call shares: one [`Place`] (a file as
//! reported, and a range of it) and one [`Duplication`] (a place, the place
//! it duplicates, and what they have in common). A snippet's, a buffer's
//! and a diff's duplications, a page of the project's clones, one clone and
//! the clones of `dupcheck report` are all made of them, so every renderer
//! (JSON, SARIF, rdjsonl, console, Markdown, LSP diagnostics) reads one
//! form.
//!
//! Plain data: built once by the service from the snapshot, never read back
//! against it; no serialization here (`interfaces::render` converts).
//!
//! Invariants: lines and columns are those of the [`Span`] (1-based lines,
//! columns in characters, the end just after the last character); a
//! fragment is the place's text from its first matched token to its last,
//! present where the answer carries it and `None` elsewhere; a similarity
//! is the ratio itself, rounded only by the renderers.

use std::cmp::Reverse;

use crate::engine::definitions::Definitions;
use crate::engine::grammar::Registry;
use crate::engine::index::FileView;
use crate::engine::matching::{content_hash, renamed, NearMiss, SnippetMatch, Span};
use crate::engine::symbols::Symbol;
use crate::engine::text::Slices;
use crate::engine::tokens::{LineIndex, Mode, Token, Tokens};

/// A range of text in a file, as answers report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The file as answers report it: relative to DIR with `/` (absolute
    /// with `--absolute` for indexed files); empty for a snippet sent
    /// without a path.
    pub path: String,
    /// The file relative to DIR with `/` (what SARIF and baselines name);
    /// empty for a snippet sent without a path. Of another repository's
    /// file: its path there.
    pub rel: String,
    /// The repository of the store the file is in; `None` for this
    /// directory's files.
    pub repository: Option<String>,
    /// Its format's name.
    pub format: String,
    /// Its first character to just after its last.
    pub span: Span,
    /// Its text from the first matched token to the last, where the answer
    /// carries it (the codebase's places of checks; the clone list's when
    /// asked; the second place of a report's clone).
    pub fragment: Option<String>,
    /// The definition it lies in (the innermost function, method, class
    /// or module holding it); `None` where none does, or where its file's
    /// definitions are not known.
    pub symbol: Option<Symbol>,
}

impl Place {
    /// Lines spanned.
    pub(crate) fn lines(&self) -> u32 {
        self.span.lines()
    }

    /// Its file as answers name it in text: its path, after its
    /// repository's name when it is another repository's
    /// (`github.com/acme/shop/src/a.js`).
    pub(crate) fn named(&self) -> String {
        match &self.repository {
            Some(repository) => format!("{repository}/{}", self.path),
            None => self.path.clone(),
        }
    }

    /// The place `span` of `file`, quoting its text from token `first` to
    /// token `last`.
    pub(crate) fn quoted(
        file: &FileView<'_>,
        registry: &Registry,
        span: Span,
        first: u32,
        last: u32,
    ) -> Place {
        Place {
            fragment: Some(file.fragment(first, last).to_owned()),
            ..Place::unquoted(file, registry, span)
        }
    }

    /// The place `span` of `file`, without its text.
    pub(crate) fn unquoted(view: &FileView<'_>, registry: &Registry, span: Span) -> Place {
        let file = view.file;
        Place {
            path: file.path.clone(),
            rel: file.rel.clone(),
            repository: None,
            format: registry.get(file.format).name.clone(),
            span,
            fragment: None,
            symbol: view.symbol_at(span.start, span.end),
        }
    }

    /// Its symbol as people read it: `` `OptionsBuilder.mergeOptions()` ``
    /// for a function or method the place covers whole, `` part of
    /// `merge()` `` for one it does not, `` class `Stats` `` for another
    /// definition (`` part of class `Stats` ``); `None` without a symbol.
    pub(crate) fn symbol_said(&self) -> Option<String> {
        self.symbol.as_ref().map(said)
    }

    /// The same place without its fragment: where it is, not what it says
    /// (findings name places, they do not quote them).
    pub(crate) fn located(&self) -> Place {
        Place {
            path: self.path.clone(),
            rel: self.rel.clone(),
            repository: self.repository.clone(),
            format: self.format.clone(),
            span: self.span,
            fragment: None,
            symbol: self.symbol.clone(),
        }
    }
}

/// The checked code of an answer (a snippet, a buffer), to name the
/// symbol of its places: its text, tokens and definitions, and its line
/// table (made only when it has definitions).
pub(crate) struct Checked<'a> {
    code: &'a str,
    tokens: &'a [Token],
    definitions: &'a Definitions,
    lines: LineIndex,
}

impl<'a> Checked<'a> {
    /// The checked `code`, its `tokens` and `definitions`.
    pub(crate) fn new(code: &'a str, tokens: &'a [Token], definitions: &'a Definitions) -> Self {
        let lines = if definitions.as_slice().is_empty() {
            LineIndex::default()
        } else {
            LineIndex::new(code)
        };
        Checked {
            code,
            tokens,
            definitions,
            lines,
        }
    }

    /// The place `span` of the checked code, at `path` in `format`.
    pub(crate) fn place(&self, path: &str, format: &str, span: Span) -> Place {
        Place {
            path: path.to_owned(),
            rel: path.to_owned(),
            repository: None,
            format: format.to_owned(),
            span,
            fragment: None,
            symbol: self.definitions.symbol_at(
                self.code,
                &self.lines,
                self.tokens,
                span.start,
                span.end,
            ),
        }
    }
}

/// Two places with the same tokens: a snippet's (a buffer's, a diff's added
/// code's) place and the codebase place it duplicates, or a clone's first
/// and second place.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Duplication {
    /// The place checked (of a clone: the one that comes first).
    pub place: Place,
    /// The place it duplicates (of a clone: the other one).
    pub other: Place,
    /// Tokens matched (of a near-miss copy: in its parts).
    pub tokens: u32,
    /// A hash of the matched token identities (`content_hash`), the same
    /// wherever the code moves: what SARIF and baselines match runs by.
    pub content_hash: u64,
    /// A near-miss copy's similarity and gaps; `None` for an exact one.
    pub near: Option<Near>,
    /// Diff checks only: how many of `place`'s lines the diff adds.
    pub added_lines: Option<u32>,
    /// What differs between the two places' matched tokens: pairs of
    /// source texts (this place's, then the other's), each once, in order
    /// of first appearance ([`renamed`]): the identifiers a `mild` or
    /// `weak` copy renamed, the literals a `weak` one changed.
    pub renamed: Vec<(String, String)>,
}

impl Duplication {
    /// The duplication `m` of the code at `place` (its span `m.snippet`),
    /// found in `file` (the file `m.file` names), equal in `mode`: the
    /// codebase place quoted, the hash of its matched run.
    ///
    /// `snippet` is the checked code's tokens and text, which the match's
    /// snippet side indexes.
    pub(crate) fn of_match(
        place: Place,
        m: SnippetMatch,
        snippet: (&(impl Tokens + ?Sized), &(impl Slices + ?Sized)),
        view: &FileView<'_>,
        registry: &Registry,
        mode: Mode,
    ) -> Duplication {
        let file = view.file;
        let run = m.run;
        let last = run.b + run.len - 1;
        Duplication {
            other: Place::quoted(view, registry, m.codebase, run.b, last),
            tokens: m.matched(),
            content_hash: content_hash(file.tokens.within(run.b as usize..last as usize + 1), mode),
            renamed: renamed(m.pairs(), snippet, (&file.tokens, view), mode),
            near: m.near.map(Near::of),
            added_lines: None,
            place,
        }
    }

    /// Lines of the larger place.
    pub(crate) fn larger_lines(&self) -> u32 {
        self.place.lines().max(self.other.lines())
    }
}

/// A symbol as people read it (see [`Place::symbol_said`]).
pub(crate) fn said(s: &Symbol) -> String {
    let qualified = match &s.container {
        Some(container) => format!("{container}.{}", s.name),
        None => s.name.clone(),
    };
    let named = if s.kind.is_callable() {
        format!("`{qualified}()`")
    } else {
        format!("{} `{qualified}`", s.kind.name())
    };
    if s.whole {
        named
    } else {
        format!("part of {named}")
    }
}

/// Renamed pairs as people read them: "total → sum, xs → items"; `None`
/// for none.
pub(crate) fn renaming(pairs: &[(String, String)]) -> Option<String> {
    let said: Vec<String> = pairs.iter().map(|(a, b)| format!("{a} → {b}")).collect();
    (!said.is_empty()).then(|| said.join(", "))
}

/// What a near-miss copy (type 3) adds to an exact one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Near {
    /// Matched tokens over the tokens spanned, on the side that spans more
    /// or, for a copy of one unit whole, both sides' mean (unrounded).
    pub similarity: f64,
    /// What is unmatched between its parts, in order.
    pub gaps: Vec<Gap>,
}

impl Near {
    /// The near-miss part of a snippet's match.
    fn of(near: NearMiss) -> Near {
        Near {
            similarity: near.similarity(),
            gaps: near
                .gaps
                .into_iter()
                .map(|g| Gap {
                    place: g.snippet,
                    other: g.codebase,
                })
                .collect(),
        }
    }
}

/// One gap of a near-miss copy: the unmatched text in each place, `None`
/// in a place where nothing is (code inserted in the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gap {
    /// In the [`Duplication`]'s `place`.
    pub place: Option<Span>,
    /// In its `other` place.
    pub other: Option<Span>,
}

/// `duplications` largest first (lines of the larger place, then tokens),
/// then by their places (relative path, line, column): the order of
/// `dupcheck report`.
pub(crate) fn sort_largest_first(duplications: &mut [Duplication]) {
    let key = |d: &Duplication| {
        let at = |p: &Place| {
            (
                p.repository.clone(),
                p.rel.clone(),
                p.span.start.line,
                p.span.start.column,
            )
        };
        (
            Reverse(d.larger_lines()),
            Reverse(d.tokens),
            at(&d.place),
            at(&d.other),
        )
    };
    duplications.sort_by_cached_key(key);
}
