//! The JSON of statistics: the rows of `/api/stats` (and of MCP's
//! `project_stats`), a snippet check's and a diff check's `statistics`,
//! and the percentages in them, with their OpenAPI schemas.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use utoipa::ToSchema;

use crate::engine::stats::{FormatRows, Percent, ProjectStats, Row, SnippetStats};
use crate::service::diff_check::DiffStats;

/// A percentage as answers write it: rounded to 2 decimals (as
/// [`Percent`] is), and as an integer when whole (`60`, not `60.0`), as
/// JavaScript prints numbers.
pub(crate) struct PercentJson(Percent);

impl From<&Percent> for PercentJson {
    fn from(p: &Percent) -> PercentJson {
        PercentJson(*p)
    }
}

/// Its schema: a number from 0 to 100.
impl utoipa::PartialSchema for PercentJson {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::Number)
            .minimum(Some(0))
            .maximum(Some(100))
            .description(Some(
                "A percentage rounded to 2 decimals, written without a fraction when whole",
            ))
            .examples([serde_json::json!(33.33)])
            .into()
    }
}

impl utoipa::ToSchema for PercentJson {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Percent")
    }
}

impl Serialize for PercentJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.whole() {
            Some(whole) => s.serialize_i64(whole),
            None => s.serialize_f64(self.0 .0),
        }
    }
}

/// One row of `/api/stats`: a file, a format, or the total.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = StatsRow)]
pub(crate) struct RowJson {
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
    pub percentage: PercentJson,
    /// `duplicatedTokens` of `tokens`, in percent.
    pub percentage_tokens: PercentJson,
    /// Always 0, kept for jscpd compatibility.
    pub new_duplicated_lines: u64,
    /// Always 0, kept for jscpd compatibility.
    pub new_clones: u64,
}

impl From<&Row> for RowJson {
    fn from(v: &Row) -> RowJson {
        RowJson {
            lines: v.lines,
            tokens: v.tokens,
            sources: v.sources,
            clones: v.clones,
            duplicated_lines: v.duplicated_lines,
            duplicated_tokens: v.duplicated_tokens,
            percentage: (&v.percentage).into(),
            percentage_tokens: (&v.percentage_tokens).into(),
            new_duplicated_lines: v.new_duplicated_lines,
            new_clones: v.new_clones,
        }
    }
}

/// The rows of one format.
#[derive(Serialize, ToSchema)]
#[schema(as = FormatRows)]
pub(crate) struct FormatRowsJson<'a> {
    /// Per file, by reported path.
    pub sources: BTreeMap<&'a str, RowJson>,
    /// Sum of the files.
    pub total: RowJson,
}

impl<'a> From<&'a FormatRows> for FormatRowsJson<'a> {
    fn from(v: &'a FormatRows) -> FormatRowsJson<'a> {
        FormatRowsJson {
            sources: v
                .sources
                .iter()
                .map(|(k, x)| (k.as_str(), x.into()))
                .collect(),
            total: (&v.total).into(),
        }
    }
}

/// Whole-project statistics of one scan.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ProjectStatistics)]
pub(crate) struct ProjectStatsJson<'a> {
    /// When the scan finished, ISO 8601.
    #[schema(examples("2026-11-22T10:30:00.000Z"))]
    pub detection_date: &'a str,
    /// Per format, by canonical name; only formats with files.
    pub formats: BTreeMap<&'a str, FormatRowsJson<'a>>,
    /// All files.
    pub total: RowJson,
    /// Fingerprint lookups skipped by the posting cap (extension).
    pub capped_fingerprints: u64,
}

impl<'a> From<&'a ProjectStats> for ProjectStatsJson<'a> {
    fn from(v: &'a ProjectStats) -> ProjectStatsJson<'a> {
        ProjectStatsJson {
            detection_date: &v.detection_date,
            formats: v
                .formats
                .iter()
                .map(|(k, x)| (k.as_str(), x.into()))
                .collect(),
            total: (&v.total).into(),
            capped_fingerprints: v.capped_fingerprints,
        }
    }
}

/// The `statistics` object of a `/api/check` answer.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = SnippetStatistics)]
pub(crate) struct SnippetStatsJson {
    /// Number of duplications.
    pub total_duplications: u64,
    /// Distinct snippet lines inside at least one duplication.
    pub duplicated_lines: u64,
    /// `\n`-separated lines of the snippet (`"a\nb\n"` has 3).
    pub total_lines: u64,
    /// `100 × duplicatedLines / totalLines`, 2 decimals.
    pub percentage_duplicated: PercentJson,
}

impl From<&SnippetStats> for SnippetStatsJson {
    fn from(v: &SnippetStats) -> SnippetStatsJson {
        SnippetStatsJson {
            total_duplications: v.total_duplications,
            duplicated_lines: v.duplicated_lines,
            total_lines: v.total_lines,
            percentage_duplicated: (&v.percentage_duplicated).into(),
        }
    }
}

/// The `statistics` of a diff check.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = DiffStatistics)]
pub(crate) struct DiffStatsJson {
    /// Duplications in all (listed or not).
    pub total_duplications: u64,
    /// Lines the diff adds to the checked files.
    pub added_lines: u64,
    /// Added lines inside at least one duplication.
    pub duplicated_added_lines: u64,
    /// `100 × duplicatedAddedLines / addedLines`, 2 decimals.
    pub percentage_duplicated: PercentJson,
}

impl From<&DiffStats> for DiffStatsJson {
    fn from(v: &DiffStats) -> DiffStatsJson {
        DiffStatsJson {
            total_duplications: v.total_duplications,
            added_lines: v.added_lines,
            duplicated_added_lines: v.duplicated_added_lines,
            percentage_duplicated: (&v.percentage_duplicated).into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_integers_when_whole() {
        let json = |p: Percent| serde_json::to_string(&PercentJson::from(&p)).unwrap();
        assert_eq!(json(Percent::of(12, 20)), "60");
        assert_eq!(json(Percent::of(1, 3)), "33.33");
        assert_eq!(json(Percent::of(2, 3)), "66.67");
        assert_eq!(json(Percent::of(0, 0)), "0");
    }
}
