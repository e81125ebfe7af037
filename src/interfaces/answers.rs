//! The JSON answers of the engine calls, shared by every adapter that
//! answers in JSON: the REST handlers write them as response bodies, the
//! MCP tools return them as structured content, so both give the same
//! object for the same input.
//!
//! In: an engine call's answer (and the snapshot it was made on). Out: a
//! [`Serialize`] value: [`check`] (SPEC 6.1), [`diff`] (`/api/check-diff`),
//! [`stats`] (SPEC 6.2).

use std::time::SystemTime;

use serde::Serialize;

use crate::engine::check::CheckAnswer;
use crate::engine::diff_check::{DiffAnswer, DiffDuplication, DiffStats};
use crate::engine::grammar::{Format, Registry};
use crate::engine::matching::{SnippetMatch, Span};
use crate::engine::stats::{ProjectStats, SnippetStats};
use crate::interfaces::time::iso8601;
use crate::project::scan::Snapshot;

/// The answer of a snippet check: its duplications, statistics, and
/// `truncated` when the caps left some out.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckBody<'a> {
    duplications: Vec<Duplication<'a>>,
    statistics: &'a SnippetStats,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
}

/// The answer of a snippet check made on `snapshot`.
pub fn check<'a>(
    snapshot: &'a Snapshot,
    registry: &'a Registry,
    answer: &'a CheckAnswer,
) -> CheckBody<'a> {
    let duplications = answer
        .matches
        .iter()
        .map(|m| {
            let file = &snapshot.index.files[m.file as usize];
            Duplication::new(snapshot, registry.get(file.format), m)
        })
        .collect();
    CheckBody {
        duplications,
        statistics: &answer.statistics,
        truncated: answer.truncated(),
    }
}

/// The answer of a diff check: per changed file its duplications, the
/// files skipped or checked from their hunks alone, statistics.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffBody<'a> {
    files: Vec<DiffFile<'a>>,
    skipped: Vec<DiffSkipped<'a>>,
    warnings: Vec<DiffWarning<'a>>,
    statistics: &'a DiffStats,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
}

#[derive(Serialize)]
struct DiffFile<'a> {
    path: &'a str,
    format: &'a str,
    duplications: Vec<Duplication<'a>>,
}

#[derive(Serialize)]
struct DiffSkipped<'a> {
    path: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct DiffWarning<'a> {
    path: &'a str,
    message: &'a str,
}

/// The answer of a diff check.
pub fn diff(answer: &DiffAnswer) -> DiffBody<'_> {
    DiffBody {
        files: answer
            .files
            .iter()
            .map(|f| DiffFile {
                path: &f.path,
                format: &f.format,
                duplications: f.duplications.iter().map(Duplication::of_diff).collect(),
            })
            .collect(),
        skipped: answer
            .skipped
            .iter()
            .map(|s| DiffSkipped {
                path: &s.path,
                reason: s.reason.name(),
            })
            .collect(),
        warnings: answer
            .warnings
            .iter()
            .map(|w| DiffWarning {
                path: &w.path,
                message: &w.message,
            })
            .collect(),
        statistics: &answer.statistics,
        truncated: answer.truncated,
    }
}

/// The project's statistics and when they were answered.
#[derive(Serialize)]
pub struct StatsBody<'a> {
    statistics: &'a ProjectStats,
    timestamp: String,
}

/// The answer of the statistics, stamped `now`.
pub fn stats(statistics: &ProjectStats, now: SystemTime) -> StatsBody<'_> {
    StatsBody {
        statistics,
        timestamp: iso8601(now),
    }
}

/// One entry of `duplications` (of a check, or of a file of a diff
/// check, with `addedLines`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Duplication<'a> {
    snippet_location: Location<'a>,
    codebase_location: Location<'a>,
    lines_count: u32,
    tokens: u32,
    format: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    added_lines: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    start_line: u32,
    end_line: u32,
    start_column: u32,
    end_column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    fragment: Option<&'a str>,
}

impl<'a> Location<'a> {
    fn new(span: Span, file: Option<&'a str>, fragment: Option<&'a str>) -> Location<'a> {
        Location {
            file,
            start_line: span.start.line,
            end_line: span.end.line,
            start_column: span.start.column,
            end_column: span.end.column,
            fragment,
        }
    }
}

impl<'a> Duplication<'a> {
    fn new(snapshot: &'a Snapshot, format: &'a Format, m: &SnippetMatch) -> Duplication<'a> {
        let file = &snapshot.index.files[m.file as usize];
        let run = m.run;
        let fragment = file.fragment(run.b, run.b + run.len - 1);
        Duplication {
            snippet_location: Location::new(m.snippet, None, None),
            codebase_location: Location::new(m.codebase, Some(&file.path), Some(fragment)),
            lines_count: m.snippet.lines(),
            tokens: run.len,
            format: &format.name,
            added_lines: None,
        }
    }

    fn of_diff(d: &'a DiffDuplication) -> Duplication<'a> {
        let place = &d.codebase;
        Duplication {
            snippet_location: Location::new(d.snippet, None, None),
            codebase_location: Location::new(place.span, Some(&place.path), Some(&place.fragment)),
            lines_count: d.snippet.lines(),
            tokens: d.tokens,
            format: &place.format,
            added_lines: Some(d.added_lines),
        }
    }
}
