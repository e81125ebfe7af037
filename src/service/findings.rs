//! Findings: a duplication as SARIF and rdjsonl report it: where the
//! duplicated code is, the places it duplicates, its size and a hash of
//! its content. A
//! snippet's or a diff's duplications and a project's clones, all
//! [`Duplication`]s, become findings ([`findings`]); [`Notice`]s tell what
//! is no finding (a file left out).
//!
//! Plain data: no serialization here; `interfaces::render::sarif` writes them.

use crate::engine::hash::HashMap;
use crate::engine::matching::Span;
use crate::service::answer::{Duplication, Place};
use crate::service::inconsistent::InconsistentChange;

/// One duplication to report: a place of code and the places it
/// duplicates. For `/api/check` and check-diff, `location` is the snippet's
/// (or the new file's) range and `related` the codebase's; for a project's
/// clones, `location` is one side and `related` the other.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// The duplicated code being reported, named by its `rel` path (for
    /// GitHub, relative to the repository's root; empty for a snippet that
    /// has no path, which SARIF carries as the run's artifact).
    pub location: Place,
    /// The places it duplicates, in the order to list them.
    pub related: Vec<Place>,
    /// Lines of `location` (its `linesCount`).
    pub lines: u32,
    /// Tokens matched.
    pub tokens: u32,
    /// A hash of `location`'s normalized content (its token identities, say)
    /// that stays the same when the code moves or the file changes
    /// elsewhere: alerts are matched across runs by it.
    pub content_hash: u64,
    /// What it reports.
    pub rule: Rule,
    /// Of a near-miss copy: matched tokens over the tokens spanned
    /// ([`Chain::similarity`], below 1). `None` for an exact copy.
    ///
    /// [`Chain::similarity`]: crate::engine::near_miss::Chain::similarity
    pub similarity: Option<f64>,
    /// What the related places renamed (pairs of source texts, this
    /// place's first), when they all renamed the same; empty otherwise.
    pub renamed: Vec<(String, String)>,
}

/// What a finding reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Rule {
    /// Code that duplicates the related places.
    Duplicate,
    /// A change made to this copy of a clone and not alike to the related
    /// copies.
    Inconsistent,
}

impl Finding {
    /// The finding of one duplication: its place, the place it duplicates.
    pub(crate) fn of(d: &Duplication) -> Finding {
        Finding {
            location: d.place.located(),
            related: vec![d.other.located()],
            lines: d.place.lines(),
            tokens: d.tokens,
            content_hash: d.content_hash,
            rule: Rule::Duplicate,
            similarity: d.near.as_ref().map(|n| n.similarity),
            renamed: d.renamed.clone(),
        }
    }

    /// The finding of a change to one copy of a clone (in a file of
    /// format `format`) that left the others behind.
    pub(crate) fn of_inconsistent(change: &InconsistentChange, format: &str) -> Finding {
        let place = |rel: &str, span: Span| Place {
            path: rel.to_owned(),
            rel: rel.to_owned(),
            repository: None,
            format: format.to_owned(),
            span,
            fragment: None,
            symbol: None,
        };
        Finding {
            location: Place {
                symbol: change.symbol.clone(),
                ..place(&change.rel, change.span)
            },
            related: change
                .copies
                .iter()
                .map(|(rel, span, symbol)| Place {
                    symbol: symbol.clone(),
                    ..place(rel, *span)
                })
                .collect(),
            lines: change.span.lines(),
            tokens: change.tokens,
            content_hash: change.content_hash,
            rule: Rule::Inconsistent,
            similarity: None,
            renamed: Vec::new(),
        }
    }
}

/// The findings of `duplications`, those of one place merged
/// ([`merge_by_location`]).
pub(crate) fn findings<'d>(
    duplications: impl IntoIterator<Item = &'d Duplication>,
) -> Vec<Finding> {
    merge_by_location(duplications.into_iter().map(Finding::of).collect())
}

/// Something to tell about a run that is no finding: a file left out, or
/// checked less well than others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Notice {
    /// The file it is about, if one.
    pub path: Option<String>,
    /// What happened, as a sentence.
    pub text: String,
    /// Whether it lessens the results (a warning) or only informs (a note).
    pub warning: bool,
}

/// `findings` with those of one place merged: one finding per `location`
/// (and size and content), whose related places are those of all, in
/// order, and whose similarity is the highest of theirs (none, exact, if
/// one is exact). A snippet that duplicates four files is one alert with
/// four related locations.
pub(crate) fn merge_by_location(findings: Vec<Finding>) -> Vec<Finding> {
    let mut merged: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut at: HashMap<(String, Span, u32, u32, u64, Rule), usize> = HashMap::new();
    for f in findings {
        let key = (
            f.location.rel.clone(),
            f.location.span,
            f.lines,
            f.tokens,
            f.content_hash,
            f.rule,
        );
        match at.get(&key) {
            Some(&i) => {
                let kept = &mut merged[i];
                kept.related.extend(f.related);
                kept.similarity = match (kept.similarity, f.similarity) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    _ => None,
                };
                if kept.renamed != f.renamed {
                    kept.renamed.clear();
                }
            }
            None => {
                at.insert(key, merged.len());
                merged.push(f);
            }
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::{merge_by_location, Finding, Place, Span};
    use crate::engine::tokens::Position;

    fn finding(path: &str, line: u32, related: &[(&str, u32)], hash: u64) -> Finding {
        let region = |path: &str, line: u32| Place {
            path: path.to_owned(),
            rel: path.to_owned(),
            repository: None,
            format: "rust".to_owned(),
            span: Span {
                start: Position { line, column: 1 },
                end: Position {
                    line: line + 5,
                    column: 2,
                },
            },
            fragment: None,
            symbol: None,
        };
        Finding {
            location: region(path, line),
            related: related.iter().map(|&(p, l)| region(p, l)).collect(),
            lines: 6,
            tokens: 50,
            content_hash: hash,
            rule: super::Rule::Duplicate,
            similarity: None,
            renamed: Vec::new(),
        }
    }

    #[test]
    fn findings_of_one_place_merge_their_related_places_in_order() {
        let merged = merge_by_location(vec![
            finding("a.rs", 1, &[("b.rs", 10)], 1),
            finding("a.rs", 30, &[("c.rs", 5)], 2),
            finding("a.rs", 1, &[("d.rs", 7)], 1),
            // Other content at the same place stays apart.
            finding("a.rs", 1, &[("e.rs", 7)], 3),
        ]);
        let places: Vec<(u32, Vec<&str>)> = merged
            .iter()
            .map(|f| {
                let related = f.related.iter().map(|r| r.rel.as_str()).collect();
                (f.location.span.start.line, related)
            })
            .collect();
        assert_eq!(
            places,
            [
                (1, vec!["b.rs", "d.rs"]),
                (30, vec!["c.rs"]),
                (1, vec!["e.rs"])
            ]
        );
    }
}
