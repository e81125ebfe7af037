//! Inconsistent changes: a diff that changes one copy of a clone and
//! leaves another as it was: the fix that forgot a copy (issue 31, part 3).
//!
//! In: the diff's changed files, each with its indexed version before the
//! diff, its new version and which lines the diff deleted and added; the
//! index; the mode and thresholds. Out: [`InconsistentChange`]s, one per
//! changed copy, each with the copies it left behind.
//!
//! How: each changed file's old version is checked against the index as a
//! snippet is (itself included where the two places do not overlap), which
//! gives its clones as they stood before the diff. A clone whose place in
//! the changed file holds a deleted line, or whose new version holds an
//! added one, was changed; its new version (the same text found again
//! through the diff's line map) is compared, token by token in the mode,
//! with the new version of the other copy (itself, when the diff leaves
//! that file alone). Equal: the copies were changed alike (the same fix in
//! both, a rename in mild mode) and nothing is said. Otherwise the other
//! copy was left behind.
//!
//! Invariants: a copy the diff deletes (its file, or all of its lines) is
//! never reported, neither as changed nor as left behind; runs on the
//! index as the diff's old side (files whose diff applies to their indexed
//! text); one deadline covers every lookup.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use crate::engine::grammar::Registry;
use crate::engine::index::{Index, SourceFile, Views};
use crate::engine::matching::{content_hash, snippet_matches, Exclusions, Span, Thresholds};
use crate::engine::runs::Expired;
use crate::engine::symbols::Symbol;
use crate::engine::tokens::{Mode, Tokens};
use crate::service::answer::said;

/// A file the diff changes, whose text before the diff is known.
pub(crate) struct Changed<'a> {
    /// Its version before the diff (the indexed file, or the new text with
    /// the diff undone).
    pub old: Arc<SourceFile>,
    /// Its new version.
    pub new: &'a SourceFile,
    /// Old-side lines the diff deletes, ascending.
    pub deleted: &'a [u32],
    /// New-side lines the diff adds, ascending.
    pub added: &'a [u32],
}

/// One copy of a clone that the diff changes while another copy stays as
/// it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InconsistentChange {
    /// The changed copy's file, relative to DIR (the new path).
    pub rel: String,
    /// The changed copy in the new text.
    pub span: Span,
    /// New-side lines the diff adds inside it.
    pub added: Vec<u32>,
    /// Old-side lines the diff deletes inside it (numbers of the old text).
    pub deleted: Vec<u32>,
    /// Its tokens in the new text.
    pub tokens: u32,
    /// The hash of its new tokens in the mode (SARIF's fingerprint).
    pub content_hash: u64,
    /// The definition the changed copy lies in.
    pub symbol: Option<Symbol>,
    /// The copies left behind: file (relative to DIR), place in the new
    /// text of their file, and the definition each lies in, by file and
    /// line.
    pub copies: Vec<(String, Span, Option<Symbol>)>,
}

impl InconsistentChange {
    /// It in one line: `` `retry()` in src/a.js:40-58 changed here; its
    /// copy in src/b.js:12-30 was not changed the same way ``.
    pub(crate) fn message(&self) -> String {
        let at = |rel: &str, span: &Span| format!("{rel}:{}-{}", span.start.line, span.end.line);
        let copies: Vec<String> = self
            .copies
            .iter()
            .map(|(rel, span, _)| at(rel, span))
            .collect();
        let (noun, verb) = if copies.len() == 1 {
            ("copy", "was")
        } else {
            ("copies", "were")
        };
        let listed = match copies.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => copies.join(""),
        };
        let within = (self.symbol.as_ref()).map_or(String::new(), |s| format!("{} in ", said(s)));
        format!(
            "{within}{} changed here; its {noun} in {listed} {verb} not changed the same way",
            at(&self.rel, &self.span)
        )
    }
}

/// Old-side lines mapped to new-side lines: every line the diff neither
/// deletes nor adds, paired in order.
struct LineMap {
    /// Per old line (index 0 for line 1), its new line, or 0 if deleted.
    new_of: Vec<u32>,
}

impl LineMap {
    /// The map of a diff that turns a text of `old_lines` lines into one
    /// of `new_lines`, deleting `deleted` and adding `added`.
    fn new(old_lines: u32, new_lines: u32, deleted: &[u32], added: &[u32]) -> LineMap {
        let mut kept_new = (1..=new_lines).filter(|l| added.binary_search(l).is_err());
        let new_of = (1..=old_lines)
            .map(|l| {
                if deleted.binary_search(&l).is_ok() {
                    0
                } else {
                    kept_new.next().unwrap_or(0)
                }
            })
            .collect();
        LineMap { new_of }
    }

    /// The map of a file the diff leaves alone.
    fn identity(lines: u32) -> LineMap {
        LineMap {
            new_of: (1..=lines).collect(),
        }
    }

    /// The new line of old `line`, if the diff keeps it.
    fn get(&self, line: u32) -> Option<u32> {
        match self.new_of.get((line as usize).checked_sub(1)?) {
            Some(&0) | None => None,
            Some(&new) => Some(new),
        }
    }

    /// The new line of the last kept old line before `line` (0 if none).
    fn kept_before(&self, line: u32) -> u32 {
        (1..line).rev().find_map(|l| self.get(l)).unwrap_or(0)
    }

    /// The new line of the first kept old line after `line`, if any.
    fn kept_after(&self, line: u32) -> Option<u32> {
        (line + 1..=self.new_of.len() as u32).find_map(|l| self.get(l))
    }
}

/// One side of a clone before and after the diff.
struct Side<'a> {
    old: &'a SourceFile,
    new: &'a SourceFile,
    map: LineMap,
}

impl<'a> Side<'a> {
    /// The side of `old`: a file the diff leaves alone, or `changed`.
    fn of(old: &'a SourceFile, changed: Option<&Changed<'a>>) -> Side<'a> {
        match changed {
            Some(c) => Side {
                old,
                new: c.new,
                map: LineMap::new(old.lines.count(), c.new.lines.count(), c.deleted, c.added),
            },
            None => Side {
                old,
                new: old,
                map: LineMap::identity(old.lines.count()),
            },
        }
    }

    /// The tokens of the new text that stand where old tokens `range`
    /// stood: from the first token's place (the start of the line after
    /// the last kept one, if its line was deleted) to the last's; empty
    /// when the diff deleted all of it.
    fn region(&self, range: Range<u32>) -> Range<u32> {
        let (old, new) = (self.old, self.new);
        let first = old.tokens.at(range.start as usize);
        let last = old.tokens.at(range.end as usize - 1);
        let (la, lb) = (
            old.lines.line_of(first.start),
            old.lines.line_of(last.end() - 1),
        );
        let line_start = |file: &SourceFile, line: u32| {
            file.lines
                .line_start(line)
                .unwrap_or(file.text.len() as u32)
        };
        let from = match self.map.get(la) {
            Some(nl) => line_start(new, nl) + (first.start - line_start(old, la)),
            None => line_start(new, self.map.kept_before(la) + 1),
        };
        let to = match self.map.get(lb) {
            Some(nl) => line_start(new, nl) + (last.end() - line_start(old, lb)),
            None => self
                .map
                .kept_after(lb)
                .map_or(new.text.len() as u32, |nl| line_start(new, nl)),
        };
        let start = new.tokens.partition_point(|t| t.start < from) as u32;
        let end = new.tokens.partition_point(|t| t.end() <= to) as u32;
        start..end.max(start)
    }
}

/// The inconsistent changes of `changed` against `index`, without its
/// files `replaced` (sorted ids: those the diff replaces or deletes, whose
/// old versions, for the changed files, are in `changed`); in `mode`, with
/// `thresholds`; by `deadline`.
pub(crate) fn inconsistent_changes(
    changed: &[Changed<'_>],
    index: &Index,
    replaced: &[u32],
    registry: &Registry,
    mode: Mode,
    thresholds: Thresholds,
    deadline: Instant,
) -> Result<Vec<InconsistentChange>, Expired> {
    // The changed files' old versions, indexed: with `index` less
    // `replaced`, the codebase before the diff.
    let olds = Index::build(
        changed.iter().map(|c| Arc::clone(&c.old)).collect(),
        registry,
        index.winnow,
    );
    let changed_of = |old: &SourceFile| {
        changed
            .iter()
            .find(|c| std::ptr::eq(&*c.old, old))
            .expect("every old version is a changed file's")
    };
    let mut found: Vec<InconsistentChange> = Vec::new();
    // Each file's text is read back once for the answer.
    let views = Views::default();
    for c in changed {
        let here = Side::of(&c.old, Some(c));
        let old = &*c.old;
        let old_text = old.text.get();
        let new = views.of(c.new);
        let before = Exclusions {
            files: replaced,
            ..Exclusions::default()
        };
        let among_olds = Exclusions {
            itself: olds.file_by_rel(&old.rel),
            ..Exclusions::default()
        };
        let matches = |index: &Index, exclude| {
            snippet_matches(
                index,
                old.family,
                &old_text,
                &old.tokens,
                mode,
                thresholds,
                exclude,
                None,
                deadline,
            )
        };
        let clones = matches(index, before)?
            .into_iter()
            .map(|m| {
                let other = &index.files[m.file as usize];
                (m, Side::of(other, None))
            })
            .chain(matches(&olds, among_olds)?.into_iter().map(|m| {
                let other = &olds.files[m.file as usize];
                (m, Side::of(other, Some(changed_of(other))))
            }))
            .collect::<Vec<_>>();
        for (m, there) in clones {
            let run = m.run;
            let ours = run.a..run.a + run.len;
            let (la, lb) = (m.snippet.start.line, m.snippet.end.line);
            let deleted = within(c.deleted, la, lb);
            let now = here.region(ours.clone());
            if now.is_empty() {
                // The diff deleted this copy: a move, not a fix.
                continue;
            }
            let span = Span {
                start: new.token_start(now.start),
                end: new.token_end(now.end - 1),
            };
            let added = within(c.added, span.start.line, span.end.line);
            if deleted.is_empty() && added.is_empty() {
                continue;
            }
            let theirs = there.region(run.b..run.b + run.len);
            if theirs.is_empty() {
                continue;
            }
            let ids = |file: &SourceFile, r: &Range<u32>| -> Vec<u64> {
                file.tokens
                    .within(r.start as usize..r.end as usize)
                    .map(|t| t.id_in(mode))
                    .collect()
            };
            if ids(c.new, &now) == ids(there.new, &theirs) {
                continue;
            }
            let there_new = views.of(there.new);
            let copy_span = Span {
                start: there_new.token_start(theirs.start),
                end: there_new.token_end(theirs.end - 1),
            };
            let copy = (
                there.new.rel.clone(),
                copy_span,
                there_new.symbol_at(copy_span.start, copy_span.end),
            );
            match found
                .iter_mut()
                .find(|f| f.rel == c.new.rel && f.span == span)
            {
                Some(f) => {
                    if !f.copies.contains(&copy) {
                        f.copies.push(copy);
                    }
                }
                None => found.push(InconsistentChange {
                    rel: c.new.rel.clone(),
                    span,
                    added,
                    deleted,
                    tokens: now.len() as u32,
                    content_hash: content_hash(
                        c.new.tokens.within(now.start as usize..now.end as usize),
                        mode,
                    ),
                    symbol: new.symbol_at(span.start, span.end),
                    copies: vec![copy],
                }),
            }
        }
    }
    for f in &mut found {
        f.copies
            .sort_by(|x, y| (&x.0, x.1.start.line).cmp(&(&y.0, y.1.start.line)));
    }
    found.sort_by(|x, y| (&x.rel, x.span.start.line).cmp(&(&y.rel, y.span.start.line)));
    Ok(found)
}

/// The lines of `lines` (ascending) within `first..=last`.
fn within(lines: &[u32], first: u32, last: u32) -> Vec<u32> {
    let from = lines.partition_point(|&l| l < first);
    let to = lines.partition_point(|&l| l <= last);
    lines[from..to].to_vec()
}
