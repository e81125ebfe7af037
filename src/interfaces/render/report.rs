//! The reports of `dupcheck report`: a table for the console, Markdown for
//! a pull-request comment, and the JSON report (which a later run reads
//! back as its baseline); SARIF and rdjsonl through [`super::sarif`],
//! GitLab's Code Quality through [`super::codequality`].
//!
//! In: [`Found`], what one run found (the project's clones or a diff's
//! duplications, which of them are new against the baseline, the
//! statistics, notices). Out: the text of each report. Deterministic: the
//! same findings give the same bytes.

use serde_json::{json, Value};

use super::answers::{rounded, SymbolJson};
use super::stats::{DiffStatsJson, ProjectStatsJson};

use crate::engine::stats::{Percent, ProjectStats};
use crate::interfaces::render::codequality::code_quality;
use crate::interfaces::render::sarif::{rdjsonl, sarif_with, Extras};
use crate::project::config::Config;
use crate::service::answer::{renaming, Duplication, Place};
use crate::service::diff_check::DiffStats;
use crate::service::findings::{findings, merge_by_location, Finding, Notice};
use crate::service::inconsistent::InconsistentChange;

/// What was found, before any reporter formats it.
pub(crate) struct Found {
    /// The project's clones (each its first place and its second, the
    /// second quoted) or a diff's duplications (the added code first),
    /// largest first.
    pub(crate) clones: Vec<Duplication>,
    /// Per clone, whether the baseline lacks it (`None` without one).
    pub(crate) new: Option<Vec<bool>>,
    pub(crate) statistics: Statistics,
    pub(crate) notices: Vec<Notice>,
    /// With `--store`: how the comparison with other repositories went.
    pub(crate) store: Option<StoreOutcome>,
    /// With `--diff`: the clones it changes in one copy and not alike in
    /// another.
    pub(crate) inconsistent: Vec<InconsistentChange>,
}

/// How `report --store` compared the project with other repositories.
pub(crate) enum StoreOutcome {
    /// Compared: `clones` of the report's clones are with other
    /// repositories; `skipped` of their files sharing code were not
    /// compared, nor the project's files `unchecked` (out of time).
    Compared {
        clones: usize,
        skipped: usize,
        unchecked: Vec<String>,
    },
    /// The store did not answer (the error's kind): only the project's
    /// own clones are reported.
    Unavailable { kind: &'static str },
}

impl StoreOutcome {
    /// Its line among the totals.
    fn line(&self) -> String {
        match self {
            StoreOutcome::Compared {
                clones,
                skipped,
                unchecked,
            } => {
                let mut line = format!(
                    "store: {} with other repositories",
                    plural(*clones as u64, "clone", "clones")
                );
                if *skipped > 0 {
                    line.push_str(&format!(
                        "; {} sharing code not compared",
                        plural(*skipped as u64, "file", "files")
                    ));
                }
                if !unchecked.is_empty() {
                    line.push_str(&format!(
                        "; {} out of time: {}",
                        plural(unchecked.len() as u64, "file", "files"),
                        unchecked.join(", ")
                    ));
                }
                line
            }
            StoreOutcome::Unavailable { kind } => {
                format!("store: unavailable ({kind}): other repositories were not compared")
            }
        }
    }

    fn json(&self) -> Value {
        match self {
            StoreOutcome::Compared {
                clones,
                skipped,
                unchecked,
            } => {
                json!({"status": "ok", "clones": clones, "skippedFiles": skipped, "unchecked": unchecked})
            }
            StoreOutcome::Unavailable { kind } => json!({"status": "unavailable", "error": kind}),
        }
    }
}

/// The statistics of the whole project, or of a diff's added lines.
pub(crate) enum Statistics {
    Project(ProjectStats),
    Diff(DiffStats),
}

impl Statistics {
    /// The duplicated-lines percentage `--threshold` compares.
    pub(crate) fn percentage(&self) -> Percent {
        match self {
            Statistics::Project(s) => s.total.percentage,
            Statistics::Diff(s) => s.percentage_duplicated,
        }
    }

    fn json(&self) -> Value {
        match self {
            Statistics::Project(s) => serde_json::to_value(ProjectStatsJson::from(s)),
            Statistics::Diff(s) => serde_json::to_value(DiffStatsJson::from(s)),
        }
        .unwrap_or(Value::Null)
    }
}

/// A percentage as `/api/stats` writes it (`80`, `79.22`).
pub(crate) fn percent(p: Percent) -> String {
    p.to_string()
}

/// `path:first-last`; in another repository, `repository/path:first-last`.
fn lines_of(place: &Place) -> String {
    format!(
        "{}:{}-{}",
        place.named(),
        place.span.start.line,
        place.span.end.line
    )
}

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The lines after the clones: totals, baseline, threshold.
pub(crate) fn totals(found: &Found, threshold: Option<(f64, bool)>) -> Vec<String> {
    let mut lines = Vec::new();
    match &found.statistics {
        Statistics::Project(s) => {
            let t = &s.total;
            lines.push(format!(
                "{}, {} lines, {} tokens: {}, {} duplicated lines ({}%), {} duplicated tokens ({}%)",
                plural(t.sources, "file", "files"),
                t.lines,
                t.tokens,
                plural(t.clones, "clone", "clones"),
                t.duplicated_lines,
                percent(t.percentage),
                t.duplicated_tokens,
                percent(t.percentage_tokens),
            ));
        }
        Statistics::Diff(s) => lines.push(format!(
            "the diff adds {} lines: {}, {} duplicated added lines ({}%)",
            s.added_lines,
            plural(s.total_duplications, "duplication", "duplications"),
            s.duplicated_added_lines,
            percent(s.percentage_duplicated),
        )),
    }
    if let Some(new) = &found.new {
        let fresh = new.iter().filter(|&&n| n).count() as u64;
        lines.push(format!(
            "baseline: {fresh} new {}, {} known",
            if fresh == 1 { "clone" } else { "clones" },
            new.len() as u64 - fresh
        ));
    }
    if let Some(store) = &found.store {
        lines.push(store.line());
    }
    for change in &found.inconsistent {
        lines.push(format!("inconsistent change: {}", change.message()));
    }
    if let Some((limit, above)) = threshold {
        let pct = percent(found.statistics.percentage());
        let limit = percent(Percent(limit));
        lines.push(if above {
            format!("threshold: {pct}% duplicated lines is above {limit}%")
        } else {
            format!("threshold: {pct}% duplicated lines is within {limit}%")
        });
    }
    lines
}

/// The console report: a table of clones, largest first, then the totals.
pub(crate) fn console(found: &Found, threshold: Option<(f64, bool)>) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec!["lines", "tokens", "format", "first", "second"];
    let near = found.clones.iter().any(|c| c.near.is_some());
    if near {
        head.push("similarity");
    }
    if found.new.is_some() {
        head.push("baseline");
    }
    rows.push(head.into_iter().map(String::from).collect());
    // The definitions its places lie in and what a clone renamed, said on
    // lines below its row.
    let mut renamed: Vec<Option<String>> = vec![None];
    let mut symbols: Vec<Option<String>> = vec![None];
    for (i, c) in found.clones.iter().enumerate() {
        let mut row = vec![
            c.larger_lines().to_string(),
            c.tokens.to_string(),
            c.place.format.clone(),
            lines_of(&c.place),
            lines_of(&c.other),
        ];
        renamed.push(renaming(&c.renamed));
        symbols.push(match (c.place.symbol_said(), c.other.symbol_said()) {
            (Some(first), Some(second)) => Some(format!("in {first} and {second}")),
            (Some(first), None) => Some(format!("first in {first}")),
            (None, Some(second)) => Some(format!("second in {second}")),
            (None, None) => None,
        });
        if near {
            row.push(similar(c));
        }
        if let Some(new) = &found.new {
            row.push(if new[i] { "new" } else { "known" }.to_owned());
        }
        rows.push(row);
    }
    let mut out = String::new();
    if found.clones.is_empty() {
        out.push_str("no clones\n");
    } else {
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|col| {
                rows.iter()
                    .map(|r| r[col].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for ((row, renamed), symbols) in rows.iter().zip(&renamed).zip(&symbols) {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(col, cell)| {
                    if col < 2 {
                        format!("{cell:>w$}", w = widths[col])
                    } else {
                        format!("{cell:<w$}", w = widths[col])
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
            let indent = widths[0] + widths[1] + widths[2] + 6;
            if let Some(symbols) = symbols {
                out.push_str(&format!("{:indent$}{symbols}\n", ""));
            }
            if let Some(renamed) = renamed {
                out.push_str(&format!("{:indent$}renamed: {renamed}\n", ""));
            }
        }
    }
    out.push('\n');
    for line in totals(found, threshold) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A clone's similarity as the reports' tables show it: "97.4%" for a
/// near-miss copy, "exact" for the others.
fn similar(c: &Duplication) -> String {
    c.near.as_ref().map_or_else(
        || "exact".to_owned(),
        |near| super::sarif::percent_similar(near.similarity),
    )
}

/// The Markdown report: a heading, a table of clones, the totals.
pub(crate) fn markdown(found: &Found, threshold: Option<(f64, bool)>) -> String {
    let mut out = String::from("# Duplicate code\n\n");
    if found.clones.is_empty() {
        out.push_str("No clones.\n");
    } else {
        let baseline = found.new.is_some();
        let near = found.clones.iter().any(|c| c.near.is_some());
        out.push_str("| Lines | Tokens | Format | First | Second |");
        out.push_str(if near { " Similarity |" } else { "" });
        out.push_str(if baseline { " Baseline |\n" } else { "\n" });
        out.push_str("|---:|---:|---|---|---|");
        out.push_str(if near { "---:|" } else { "" });
        out.push_str(if baseline { "---|\n" } else { "\n" });
        for (i, c) in found.clones.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {} | {} | `{}` | `{}` |",
                c.larger_lines(),
                c.tokens,
                c.place.format,
                lines_of(&c.place).replace('|', "\\|"),
                lines_of(&c.other).replace('|', "\\|"),
            ));
            if near {
                out.push_str(&format!(" {} |", similar(c)));
            }
            match &found.new {
                Some(new) => {
                    out.push_str(if new[i] { " **new** |\n" } else { " known |\n" });
                }
                None => out.push('\n'),
            }
        }
    }
    out.push('\n');
    for line in totals(found, threshold) {
        out.push_str(&line);
        out.push_str("  \n");
    }
    out
}

/// A place as JSON.
fn place_json(place: &Place) -> Value {
    let mut v = json!({
        "path": place.path,
        "start": {"line": place.span.start.line, "column": place.span.start.column},
        "end": {"line": place.span.end.line, "column": place.span.end.column},
    });
    if let Some(repository) = &place.repository {
        v["repository"] = json!(repository);
    }
    if let Some(symbol) = SymbolJson::of(place) {
        v["symbol"] = json!(symbol);
    }
    v
}

/// The fingerprint of a clone's content, as the JSON report writes it.
pub(crate) fn fingerprint(hash: u64) -> String {
    format!("{hash:016x}")
}

/// The JSON report, which is also the baseline format.
pub(crate) fn json_report(found: &Found, config: &Config) -> String {
    let clones: Vec<Value> = found
        .clones
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut v = json!({
                "format": c.place.format,
                "lines": c.larger_lines(),
                "tokens": c.tokens,
                "fingerprint": fingerprint(c.content_hash),
                "first": place_json(&c.place),
                "second": place_json(&c.other),
                "fragment": c.other.fragment.as_deref().unwrap_or_default(),
            });
            if !c.renamed.is_empty() {
                v["renamed"] = json!(c.renamed);
            }
            if let Some(near) = &c.near {
                v["similarity"] = json!(rounded(near.similarity));
            }
            if let Some(added) = c.added_lines {
                v["addedLines"] = json!(added);
            }
            if let Some(new) = &found.new {
                v["new"] = json!(new[i]);
            }
            v
        })
        .collect();
    let mut report = json!({
        "version": crate::VERSION,
        "mode": config.mode.name(),
        "minLines": config.thresholds.min_lines,
        "minTokens": config.thresholds.min_tokens,
        "clones": clones,
        "statistics": found.statistics.json(),
    });
    if let Some(new) = &found.new {
        report["newClones"] = json!(new.iter().filter(|&&n| n).count());
    }
    if let Some(store) = &found.store {
        report["store"] = store.json();
    }
    if !found.inconsistent.is_empty() {
        let changes: Vec<Value> = found
            .inconsistent
            .iter()
            .map(|c| {
                let mut change = json!({
                    "file": c.rel,
                    "startLine": c.span.start.line,
                    "endLine": c.span.end.line,
                    "copies": c.copies.iter().map(|(file, span, symbol)| {
                        let mut copy = json!({
                            "file": file, "startLine": span.start.line, "endLine": span.end.line,
                        });
                        if let Some(symbol) = symbol {
                            copy["symbol"] = json!(SymbolJson::from(symbol));
                        }
                        copy
                    }).collect::<Vec<_>>(),
                    "message": c.message(),
                });
                if let Some(symbol) = &c.symbol {
                    change["symbol"] = json!(SymbolJson::from(symbol));
                }
                change
            })
            .collect();
        report["inconsistentChanges"] = json!(changes);
    }
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

/// The findings of the SARIF and rdjsonl reports: one per first place of
/// a clone (the added code of a diff's), the other places related; then
/// the inconsistent changes.
fn report_findings(found: &Found) -> Vec<Finding> {
    let mut all = findings(&found.clones);
    all.extend(inconsistent_findings(found));
    all
}

/// The inconsistent changes as findings.
fn inconsistent_findings(found: &Found) -> impl Iterator<Item = Finding> + '_ {
    found.inconsistent.iter().map(|change| {
        let format = found
            .clones
            .iter()
            .find(|c| c.place.rel == change.rel)
            .map_or("", |c| c.place.format.as_str());
        Finding::of_inconsistent(change, format)
    })
}

/// The SARIF report: one result per place, its clones' other places
/// related.
pub(crate) fn sarif_report(found: &Found) -> String {
    let all = report_findings(found);
    let log = sarif_with(
        &all,
        &Extras {
            snippet: None,
            notices: &found.notices,
        },
    );
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

/// The rdjsonl report, reviewdog's diagnostics: the SARIF report's
/// findings, one line each; `file_text` gives a file's text by its path
/// relative to DIR, for byte columns.
pub(crate) fn rdjsonl_report<'t>(
    found: &Found,
    file_text: impl Fn(&str) -> Option<crate::engine::text::Text<'t>>,
) -> String {
    rdjsonl(&report_findings(found), file_text)
}

/// GitLab's Code Quality report: one issue per place of duplicated code.
/// A project's clone is an issue at each of its two places (GitLab shows
/// an issue in the files a merge request changes, which may hold either);
/// a diff's duplication is one at the added code.
pub(crate) fn codequality_report(found: &Found) -> String {
    let both = matches!(found.statistics, Statistics::Project(_));
    let mut all = Vec::new();
    for d in &found.clones {
        all.push(Finding::of(d));
        if both {
            all.push(Finding {
                location: d.other.located(),
                related: vec![d.place.located()],
                lines: d.other.lines(),
                ..Finding::of(d)
            });
        }
    }
    let mut all = merge_by_location(all);
    all.extend(inconsistent_findings(found));
    code_quality(&all)
}
