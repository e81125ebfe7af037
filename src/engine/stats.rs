//! Statistics: how much of the project, and of a snippet, is duplicated.
//!
//! In: the [`Index`] and its whole-project [`ClonePair`]s, or a snippet's
//! [`SnippetMatch`]es. Out: the rows of `/api/stats` (per file, per format,
//! total) and the `statistics` object of `/api/check`.
//!
//! Invariants: a line or token covered by several clones counts once, so
//! percentages never exceed 100; a format's row is the sum of its files' rows
//! except `clones`, which counts each clone touching the format once.

use std::collections::BTreeMap;

use crate::engine::clones::ClonePair;
use crate::engine::grammar::Registry;
use crate::engine::index::Index;
use crate::engine::matching::SnippetMatch;

/// A percentage rounded to 2 decimals; displayed as an integer when whole
/// (`60`, not `60.0`), as JavaScript prints numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Percent(pub f64);

impl Percent {
    /// `100 × part / whole` rounded to 2 decimals; 0 when `whole` is 0.
    pub(crate) fn of(part: u64, whole: u64) -> Percent {
        if whole == 0 {
            return Percent(0.0);
        }
        Percent((part as f64 * 10_000.0 / whole as f64).round() / 100.0)
    }
}

impl Percent {
    /// The percentage as an integer when it is whole: JavaScript prints
    /// `60`, not `60.0`.
    pub(crate) fn whole(self) -> Option<i64> {
        (self.0.fract() == 0.0 && self.0.abs() < 1e15).then_some(self.0 as i64)
    }
}

/// As JavaScript prints a number: `60`, `33.33`.
impl std::fmt::Display for Percent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.whole() {
            Some(whole) => write!(f, "{whole}"),
            None => write!(f, "{}", self.0),
        }
    }
}

/// One row of `/api/stats`: a file, a format, or the total.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Row {
    /// Lines, as an editor counts them.
    pub lines: u64,
    /// Normalized tokens.
    pub tokens: u64,
    /// Files.
    pub sources: u64,
    /// Clones that involve it.
    pub clones: u64,
    /// Lines covered by at least one clone.
    pub duplicated_lines: u64,
    /// Tokens covered by at least one clone.
    pub duplicated_tokens: u64,
    /// `duplicatedLines` of `lines`, in percent.
    pub percentage: Percent,
    /// `duplicatedTokens` of `tokens`, in percent.
    pub percentage_tokens: Percent,
    /// Always 0, kept for jscpd compatibility.
    pub new_duplicated_lines: u64,
    /// Always 0, kept for jscpd compatibility.
    pub new_clones: u64,
}

impl Row {
    fn add(&mut self, other: &Row) {
        self.lines += other.lines;
        self.tokens += other.tokens;
        self.sources += other.sources;
        self.duplicated_lines += other.duplicated_lines;
        self.duplicated_tokens += other.duplicated_tokens;
    }

    fn finish(mut self, clones: u64) -> Row {
        self.clones = clones;
        self.percentage = Percent::of(self.duplicated_lines, self.lines);
        self.percentage_tokens = Percent::of(self.duplicated_tokens, self.tokens);
        self
    }
}

/// The rows of one format.
#[derive(Debug, Clone, Default)]
pub(crate) struct FormatRows {
    /// Per file, by reported path.
    pub sources: BTreeMap<String, Row>,
    /// Sum of the files.
    pub total: Row,
}

/// Whole-project statistics of one scan.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProjectStats {
    /// When the scan finished, ISO 8601.
    pub detection_date: String,
    /// Per format, by canonical name; only formats with files.
    pub formats: BTreeMap<String, FormatRows>,
    /// All files.
    pub total: Row,
    /// Fingerprint lookups skipped by the posting cap (extension).
    pub capped_fingerprints: u64,
}

/// Sum of the lengths of the union of half-open intervals.
fn covered(mut intervals: Vec<(u64, u64)>) -> u64 {
    intervals.sort_unstable();
    let mut total = 0;
    let mut reach = 0;
    for (start, end) in intervals {
        let start = start.max(reach);
        if end > start {
            total += end - start;
            reach = end;
        }
    }
    total
}

impl ProjectStats {
    /// Rows of every file, format and the total.
    pub(crate) fn compute(
        index: &Index,
        clones: &[ClonePair],
        registry: &Registry,
        capped: usize,
        detection_date: String,
    ) -> ProjectStats {
        let n = index.files.len();
        let mut line_spans: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
        let mut token_spans: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
        let mut file_clones = vec![0u64; n];
        let mut format_clones = vec![0u64; registry.formats().len()];
        for clone in clones {
            let (fa, fb) = (clone.first.0 as usize, clone.second.0 as usize);
            // A place's lines are duplicated whole, a near-miss clone's gaps
            // included; its tokens only where they are matched.
            let (first_len, second_len) = clone.extent();
            for ((f, start), len) in [(clone.first, first_len), (clone.second, second_len)] {
                let file = &index.files[f as usize];
                let first = u64::from(file.token_line(start));
                let last = u64::from(file.token_end_line(start + len - 1));
                line_spans[f as usize].push((first, last + 1));
            }
            for (a, b, len) in clone.parts() {
                for (f, start) in [(fa, a), (fb, b)] {
                    token_spans[f].push((u64::from(start), u64::from(start + len)));
                }
            }
            file_clones[fa] += 1;
            if fb != fa {
                file_clones[fb] += 1;
            }
            let (xa, xb) = (index.files[fa].format, index.files[fb].format);
            format_clones[xa] += 1;
            if xb != xa {
                format_clones[xb] += 1;
            }
        }
        let mut formats: BTreeMap<String, FormatRows> = BTreeMap::new();
        let mut total = Row::default();
        for (i, file) in index.files.iter().enumerate() {
            let row = Row {
                lines: u64::from(file.line_count()),
                tokens: file.token_count(),
                sources: 1,
                duplicated_lines: covered(std::mem::take(&mut line_spans[i])),
                duplicated_tokens: covered(std::mem::take(&mut token_spans[i])),
                ..Row::default()
            }
            .finish(file_clones[i]);
            total.add(&row);
            let rows = formats
                .entry(registry.get(file.format).name.clone())
                .or_default();
            rows.total.add(&row);
            rows.sources.insert(file.path.clone(), row);
        }
        for (name, rows) in formats.iter_mut() {
            let clones = registry.lookup(name).map_or(0, |f| format_clones[f.id]);
            rows.total = std::mem::take(&mut rows.total).finish(clones);
        }
        ProjectStats {
            detection_date,
            formats,
            total: total.finish(clones.len() as u64),
            capped_fingerprints: capped as u64,
        }
    }
}

/// The `statistics` object of a `/api/check` answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SnippetStats {
    /// Number of duplications.
    pub total_duplications: u64,
    /// Distinct snippet lines inside at least one duplication.
    pub duplicated_lines: u64,
    /// `\n`-separated lines of the snippet (`"a\nb\n"` has 3).
    pub total_lines: u64,
    /// `100 × duplicatedLines / totalLines`, 2 decimals.
    pub percentage_duplicated: Percent,
}

impl SnippetStats {
    /// Statistics of `matches` found in `code`.
    pub(crate) fn compute<'a>(
        code: &str,
        matches: impl IntoIterator<Item = &'a SnippetMatch>,
    ) -> SnippetStats {
        let total_lines = code.split('\n').count() as u64;
        let spans: Vec<(u64, u64)> = matches
            .into_iter()
            .map(|m| {
                (
                    u64::from(m.snippet.start.line),
                    u64::from(m.snippet.end.line) + 1,
                )
            })
            .collect();
        let total_duplications = spans.len() as u64;
        let duplicated_lines = covered(spans);
        SnippetStats {
            total_duplications,
            duplicated_lines,
            total_lines,
            percentage_duplicated: Percent::of(duplicated_lines, total_lines),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_to_two_decimals_and_print_like_javascript() {
        assert_eq!(Percent::of(12, 20).to_string(), "60");
        assert_eq!(Percent::of(1, 3).to_string(), "33.33");
        assert_eq!(Percent::of(2, 3).to_string(), "66.67");
        assert_eq!(Percent::of(0, 0).to_string(), "0");
    }

    #[test]
    fn overlapping_intervals_count_once() {
        assert_eq!(covered(vec![(1, 5), (3, 8), (10, 11), (10, 11)]), 8);
        assert_eq!(covered(vec![]), 0);
    }
}
