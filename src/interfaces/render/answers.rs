//! The JSON answers of the service's calls, shared by every adapter that
//! answers in JSON: the REST handlers write them as response bodies, the
//! MCP tools return them as structured content, so both give the same
//! object for the same input.
//!
//! In: a service call's answer. Out: a
//! [`Serialize`] value: [`check`] (docs/api.md, "The check's answer"), [`diff`] (`/api/check-diff`),
//! [`stats`] (docs/api.md, "Statistics").

use std::time::SystemTime;

use serde::Serialize;
use utoipa::ToSchema;

use super::stats::{DiffStatsJson, ProjectStatsJson, SnippetStatsJson};
use crate::engine::matching::Span;
use crate::engine::stats::ProjectStats;
use crate::engine::symbols::Symbol;
use crate::project::time::iso8601;
use crate::service::answer::{Duplication, Near, Place};
use crate::service::check::{CheckAnswer, StoreStatus};
use crate::service::diff_check::DiffAnswer;
use crate::service::inconsistent::InconsistentChange;

/// The answer of a snippet check: its duplications, statistics, and
/// `truncated` when the caps left some out.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CheckAnswer)]
pub(crate) struct CheckBody<'a> {
    /// Every place in the codebase the snippet duplicates, by snippet line,
    /// longer first, then by file and line.
    duplications: Vec<DuplicationJson<'a>>,
    /// Totals over the snippet.
    statistics: SnippetStatsJson,
    /// Present and true when some duplications were left out (at most
    /// 1,000 and 16 MB of fragments per answer).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    /// With a store (`--store`) only: whether other repositories were
    /// read. When it is `unavailable`, the duplications are this
    /// directory's alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<StoreJson>,
}

/// How the store answered a check.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CheckStore)]
pub(crate) struct StoreJson {
    /// `ok`: other repositories' places are among the duplications;
    /// `unavailable`: the store did not answer in time, or failed.
    #[schema(examples("ok", "unavailable"))]
    status: &'static str,
    /// `unavailable` only: the kind of failure (`unreachable`,
    /// `authentication`, `schema`, `query`), never its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String, examples("unreachable"))]
    error: Option<&'static str>,
    /// `ok` only, when not 0: files of other repositories that share code
    /// with the snippet but were not compared (a check compares at most
    /// 2,000).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = u64)]
    skipped_files: Option<usize>,
}

impl From<StoreStatus> for StoreJson {
    fn from(status: StoreStatus) -> StoreJson {
        match status {
            StoreStatus::Ok { skipped } => StoreJson {
                status: "ok",
                error: None,
                skipped_files: (skipped > 0).then_some(skipped),
            },
            StoreStatus::Unavailable { kind } => StoreJson {
                status: "unavailable",
                error: Some(kind),
                skipped_files: None,
            },
        }
    }
}

/// The answer of a snippet check.
pub(crate) fn check(answer: &CheckAnswer) -> CheckBody<'_> {
    CheckBody {
        duplications: answer
            .duplications
            .iter()
            .map(DuplicationJson::of)
            .collect(),
        statistics: (&answer.statistics).into(),
        truncated: answer.truncated(),
        store: answer.store.map(StoreJson::from),
    }
}

/// The answer of a diff check: per changed file its duplications, the
/// files skipped or checked from their hunks alone, statistics.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = DiffCheckAnswer)]
pub(crate) struct DiffBody<'a> {
    /// The changed files checked, by path, each with its duplications.
    files: Vec<DiffFile<'a>>,
    /// The changed files not checked, by path, with the reason.
    skipped: Vec<DiffSkipped<'a>>,
    /// The files checked from their hunks alone (the diff does not apply to
    /// the indexed text), by path.
    warnings: Vec<DiffWarning<'a>>,
    /// Statistics of all the duplications, listed or not.
    statistics: DiffStatsJson,
    /// Present and true when some duplications were left out (at most
    /// 1,000 and 16 MB of fragments per answer).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    /// With a store (`--store`) only: whether other repositories were
    /// read. When it is `unavailable`, the duplications are this
    /// directory's alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<StoreJson>,
    /// Present when the diff changes one copy of a clone and leaves
    /// another as it was (or changes it otherwise): the fix that may have
    /// missed a copy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    inconsistent_changes: Vec<InconsistentJson<'a>>,
}

/// A copy of a clone that a diff changes while another stays as it was.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = InconsistentChange)]
pub(crate) struct InconsistentJson<'a> {
    /// The changed copy's file (its new path), relative to DIR.
    file: &'a str,
    /// Its first line in the new text.
    start_line: u32,
    /// Its last line in the new text.
    end_line: u32,
    /// New-side lines the diff adds inside it.
    added_lines: &'a [u32],
    /// Old-side lines the diff deletes inside it.
    deleted_lines: &'a [u32],
    /// The definition the changed copy lies in; absent where none holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = SymbolJson)]
    symbol: Option<SymbolJson>,
    /// The copies left behind, by file and line (in their new text when
    /// the diff changes their file too).
    copies: Vec<CopyJson<'a>>,
    /// One line to say it.
    #[schema(examples("src/net/client.js:40-58 changed here; its copy in src/net/pool.js:12-30 was not changed the same way"))]
    message: String,
}

/// A copy left behind.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = LeftBehindCopy)]
pub(crate) struct CopyJson<'a> {
    /// Its file, relative to DIR.
    file: &'a str,
    /// Its first line.
    start_line: u32,
    /// Its last line.
    end_line: u32,
    /// The definition it lies in; absent where none holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = SymbolJson)]
    symbol: Option<SymbolJson>,
}

impl<'a> InconsistentJson<'a> {
    fn of(change: &'a InconsistentChange) -> InconsistentJson<'a> {
        InconsistentJson {
            file: &change.rel,
            start_line: change.span.start.line,
            end_line: change.span.end.line,
            added_lines: &change.added,
            deleted_lines: &change.deleted,
            symbol: change.symbol.as_ref().map(SymbolJson::from),
            copies: change
                .copies
                .iter()
                .map(|(file, span, symbol)| CopyJson {
                    file,
                    start_line: span.start.line,
                    end_line: span.end.line,
                    symbol: symbol.as_ref().map(SymbolJson::from),
                })
                .collect(),
            message: change.message(),
        }
    }
}

/// A changed file of a diff check.
#[derive(Serialize, ToSchema)]
pub(crate) struct DiffFile<'a> {
    /// Its path in the diff's new version, relative to DIR.
    path: &'a str,
    /// Its format.
    format: &'a str,
    /// The duplications that hold at least one added line.
    duplications: Vec<DuplicationJson<'a>>,
}

/// A changed file that was not checked.
#[derive(Serialize, ToSchema)]
#[schema(as = DiffSkip)]
pub(crate) struct DiffSkipped<'a> {
    /// Its path as the diff names it.
    path: &'a str,
    /// Why: `deleted`, `binary`, `modeOnly`, `symlink`, `submodule`,
    /// `outsideDirectory`, `unknownFormat`, `formatNotScanned`, `ignored`,
    /// `notIndexed`, `repeated`, `tooLarge`, `tooManyLines`, `notUtf8` or
    /// `parseMemory`.
    #[schema(examples("deleted"))]
    reason: &'a str,
}

/// A file checked from its hunks alone.
#[derive(Serialize, ToSchema)]
pub(crate) struct DiffWarning<'a> {
    /// Its path.
    path: &'a str,
    /// What happened and what it means for the answer.
    message: &'a str,
}

/// The answer of a diff check.
pub(crate) fn diff(answer: &DiffAnswer) -> DiffBody<'_> {
    DiffBody {
        files: answer
            .files
            .iter()
            .map(|f| DiffFile {
                path: &f.path,
                format: &f.format,
                duplications: f.duplications.iter().map(DuplicationJson::of).collect(),
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
        statistics: (&answer.statistics).into(),
        truncated: answer.truncated,
        store: answer.store.map(StoreJson::from),
        inconsistent_changes: answer
            .inconsistent
            .iter()
            .map(InconsistentJson::of)
            .collect(),
    }
}

/// The project's statistics and when they were answered.
#[derive(Serialize, ToSchema)]
#[schema(as = StatsAnswer)]
pub(crate) struct StatsBody<'a> {
    /// The rows of the last scan.
    statistics: ProjectStatsJson<'a>,
    /// When this answer was made, ISO 8601 UTC with milliseconds.
    #[schema(examples("2026-11-22T10:30:00.000Z"))]
    timestamp: String,
}

/// The answer of the statistics, stamped `now`.
pub(crate) fn stats(statistics: &ProjectStats, now: SystemTime) -> StatsBody<'_> {
    StatsBody {
        statistics: statistics.into(),
        timestamp: iso8601(now),
    }
}

/// One entry of `duplications` (of a check, or of a file of a diff
/// check, with `addedLines`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Duplication)]
pub(crate) struct DuplicationJson<'a> {
    /// Where in the snippet (or the changed file).
    snippet_location: Location<'a>,
    /// Where in the codebase, with the file and the duplicated text.
    codebase_location: Location<'a>,
    /// Lines of the snippet's range: `endLine - startLine + 1`.
    lines_count: u32,
    /// Matched tokens.
    tokens: u32,
    /// The codebase file's format.
    format: &'a str,
    /// Diff checks only: the added lines inside the range.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = u32)]
    added_lines: Option<u32>,
    /// Near-miss copies only: matched tokens over the tokens spanned, on
    /// the side that spans more (at least `--similarity`, below 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = f64, examples(0.93))]
    similarity: Option<f64>,
    /// Near-miss copies only: what is unmatched between the parts, in
    /// order (at most 3 gaps).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<GapJson>)]
    gaps: Option<Vec<GapJson>>,
    /// What the copy renamed: pairs of source texts of matched tokens that
    /// differ (the snippet's, then the codebase's), each once, in order of
    /// first appearance, at most 20: identifiers in `mild` and `weak`
    /// mode, literals too in `weak`. Absent when none differ.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    #[schema(value_type = Vec<Vec<String>>)]
    renamed: &'a [(String, String)],
}

/// One gap of a near-miss copy: the lines left unmatched on each side,
/// `null` on a side where nothing is (a statement inserted on the other).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Gap)]
pub(crate) struct GapJson {
    /// In the snippet.
    snippet: Option<Lines>,
    /// In the codebase file.
    codebase: Option<Lines>,
}

/// A range of whole lines, both ends included.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Lines {
    start_line: u32,
    end_line: u32,
}

impl Lines {
    fn of(span: Option<Span>) -> Option<Lines> {
        span.map(|s| Lines {
            start_line: s.start.line,
            end_line: s.end.line,
        })
    }
}

/// A range of text: lines and columns are 1-based and count characters;
/// the end is the line of the last character and the column just after it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Location<'a> {
    /// Codebase locations only: the file, relative to DIR, with `/`; in
    /// another repository of the store, its path there.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String)]
    file: Option<&'a str>,
    /// Codebase locations in another repository of the store (`--store`)
    /// only: that repository's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String, examples("github.com/acme/payments"))]
    repository: Option<&'a str>,
    /// The line of the first matched character.
    start_line: u32,
    /// The line of the last matched character.
    end_line: u32,
    /// The column of the first matched character.
    start_column: u32,
    /// The column just after the last matched character.
    end_column: u32,
    /// Codebase locations only: the file's text from the first matched
    /// token to the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String)]
    fragment: Option<&'a str>,
    /// The definition the range lies in; absent where none holds it (a
    /// top-level statement, a format that declares none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = SymbolJson)]
    symbol: Option<SymbolJson>,
}

impl<'a> Location<'a> {
    fn new(span: Span, file: Option<&'a str>, fragment: Option<&'a str>) -> Location<'a> {
        Location {
            file,
            repository: None,
            start_line: span.start.line,
            end_line: span.end.line,
            start_column: span.start.column,
            end_column: span.end.column,
            fragment,
            symbol: None,
        }
    }
}

/// The definition a place lies in: the innermost function, method,
/// class or module whose range holds the place (docs/matching.md,
/// "Symbols").
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Symbol)]
pub(crate) struct SymbolJson {
    /// What it is. A function that a class-like definition (class,
    /// struct, enum, interface, trait, impl) holds directly is a method.
    #[schema(value_type = SymbolKind)]
    kind: &'static str,
    /// Its name as written (`Foo::bar` for C++'s out-of-class methods).
    name: String,
    /// The name of the nearest class-like definition around it; absent
    /// when none is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String)]
    container: Option<String>,
    /// Whether the place covers the definition from its first token to
    /// its last.
    whole: bool,
}

/// The kinds of definitions answers name.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)] // The schema's values; answers write `DefKind::name`.
pub(crate) enum SymbolKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Interface,
    Trait,
    Impl,
    Module,
}

impl SymbolJson {
    /// The symbol of `place`, if it has one.
    pub(crate) fn of(place: &Place) -> Option<SymbolJson> {
        place.symbol.as_ref().map(SymbolJson::from)
    }
}

impl From<&Symbol> for SymbolJson {
    fn from(s: &Symbol) -> SymbolJson {
        SymbolJson {
            kind: s.kind.name(),
            name: s.name.clone(),
            container: s.container.clone(),
            whole: s.whole,
        }
    }
}

/// A ratio as answers give it, rounded to 3 decimals: a ratio, not a
/// measurement.
pub(crate) fn rounded(ratio: f64) -> f64 {
    (ratio * 1000.0).round() / 1000.0
}

impl<'a> DuplicationJson<'a> {
    /// A duplication of a check (or, with `addedLines`, of a diff check).
    fn of(d: &'a Duplication) -> DuplicationJson<'a> {
        let other = &d.other;
        DuplicationJson {
            snippet_location: Location {
                symbol: SymbolJson::of(&d.place),
                ..Location::new(d.place.span, None, None)
            },
            codebase_location: Location {
                repository: other.repository.as_deref(),
                symbol: SymbolJson::of(other),
                ..Location::new(other.span, Some(&other.path), other.fragment.as_deref())
            },
            lines_count: d.place.lines(),
            tokens: d.tokens,
            format: &other.format,
            added_lines: d.added_lines,
            similarity: d.near.as_ref().map(|n| rounded(n.similarity)),
            gaps: d.near.as_ref().map(near_gaps),
            renamed: &d.renamed,
        }
    }
}

/// A near-miss copy's gaps, by lines.
fn near_gaps(near: &Near) -> Vec<GapJson> {
    near.gaps
        .iter()
        .map(|g| GapJson {
            snippet: Lines::of(g.place),
            codebase: Lines::of(g.other),
        })
        .collect()
}
