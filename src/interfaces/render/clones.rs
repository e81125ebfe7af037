//! The JSON of the clone list (`GET /api/clones`, MCP's `list_clones`)
//! and of one clone (`GET /api/clone`): the service's plain answers
//! ([`ClonesPage`], [`CloneDetail`], each clone a `Duplication` whose
//! `place` is the first place and `other` the second) as they are sent,
//! with their OpenAPI schemas.

use serde::Serialize;
use utoipa::ToSchema;

use super::answers::{rounded, SymbolJson};
use crate::engine::matching::Span;
use crate::service::answer::{Gap, Near, Place};
use crate::service::clones::{CloneDetail, ClonesPage, PagedClone, PlaceLines};

/// One page of the clone list.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ClonesPage)]
pub(crate) struct ClonesPageJson {
    /// The clones on this page, largest first.
    pub clones: Vec<ListedCloneJson>,
    /// Clones matching the filters, on every page.
    pub total: usize,
    /// The cursor of the next page; `null` on the last.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

impl From<&ClonesPage> for ClonesPageJson {
    fn from(v: &ClonesPage) -> ClonesPageJson {
        ClonesPageJson {
            clones: v.clones.iter().map(Into::into).collect(),
            total: v.total,
            next_cursor: v.next_cursor.clone(),
        }
    }
}

/// A clone of the list: two places with the same tokens.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Clone)]
pub(crate) struct ListedCloneJson {
    /// Stable while the index does not change: 16 hex digits.
    pub id: String,
    /// The format of the first place.
    pub format: String,
    /// Tokens in each place.
    pub tokens: u32,
    /// Lines of the larger place.
    pub lines: u32,
    /// The place that comes first (by path, then position).
    pub first: PlaceJson,
    /// The other place.
    pub second: PlaceJson,
    /// Near-miss clones only: matched tokens over the tokens spanned, on
    /// the place that spans more.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = f64, examples(0.93))]
    pub similarity: Option<f64>,
    /// Near-miss clones only: what is unmatched between the parts, in
    /// order (at most 3 gaps).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<CloneGapJson>)]
    pub gaps: Option<Vec<CloneGapJson>>,
    /// What the second place renamed: pairs of source texts of matched
    /// tokens that differ (the first place's, then the second's), each
    /// once, in order of first appearance, at most 20. Absent when none
    /// differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Vec<String>>)]
    pub renamed: Vec<(String, String)>,
}

impl From<&PagedClone> for ListedCloneJson {
    fn from(v: &PagedClone) -> ListedCloneJson {
        let c = &v.clone;
        ListedCloneJson {
            id: v.id.clone(),
            format: c.place.format.clone(),
            tokens: c.tokens,
            lines: c.larger_lines(),
            first: (&c.place).into(),
            second: (&c.other).into(),
            similarity: similarity(c.near.as_ref()),
            gaps: gaps(c.near.as_ref()),
            renamed: c.renamed.clone(),
        }
    }
}

/// A near-miss clone's similarity, rounded.
fn similarity(near: Option<&Near>) -> Option<f64> {
    near.map(|n| rounded(n.similarity))
}

/// A near-miss clone's gaps, by lines.
fn gaps(near: Option<&Near>) -> Option<Vec<CloneGapJson>> {
    near.map(|n| n.gaps.iter().map(Into::into).collect())
}

/// One gap of a near-miss clone: the lines left unmatched in each place,
/// `null` in a place where nothing is (a statement inserted in the other).
#[derive(Serialize, ToSchema)]
#[schema(as = CloneGap)]
pub(crate) struct CloneGapJson {
    /// In the first place.
    pub first: Option<GapLinesJson>,
    /// In the second place.
    pub second: Option<GapLinesJson>,
}

impl From<&Gap> for CloneGapJson {
    fn from(v: &Gap) -> CloneGapJson {
        CloneGapJson {
            first: v.place.as_ref().map(Into::into),
            second: v.other.as_ref().map(Into::into),
        }
    }
}

/// A range of whole lines, both ends included.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = GapLines)]
pub(crate) struct GapLinesJson {
    pub start_line: u32,
    pub end_line: u32,
}

impl From<&Span> for GapLinesJson {
    fn from(v: &Span) -> GapLinesJson {
        GapLinesJson {
            start_line: v.start.line,
            end_line: v.end.line,
        }
    }
}

/// One place of a clone: a file and a range of it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ClonePlace)]
pub(crate) struct PlaceJson {
    /// The path as reported (relative to DIR, or absolute with `--absolute`).
    pub file: String,
    /// 1-based line of the first token.
    pub start_line: u32,
    /// Line of the last token's last character.
    pub end_line: u32,
    /// 1-based column (characters) of the first token.
    pub start_column: u32,
    /// Column just after the last token's last character.
    pub end_column: u32,
    /// The text of the place, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String)]
    pub fragment: Option<String>,
    /// The definition the place lies in; absent where none holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = SymbolJson)]
    pub symbol: Option<SymbolJson>,
}

impl From<&Place> for PlaceJson {
    fn from(v: &Place) -> PlaceJson {
        let (start, end) = (v.span.start, v.span.end);
        PlaceJson {
            file: v.path.clone(),
            start_line: start.line,
            end_line: end.line,
            start_column: start.column,
            end_column: end.column,
            fragment: v.fragment.clone(),
            symbol: SymbolJson::of(v),
        }
    }
}

/// One clone with what a side-by-side view shows: both places' whole lines
/// and where each token is, to highlight what matched.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CloneDetail)]
pub(crate) struct CloneDetailJson {
    /// The clone's id, as the list gives it.
    pub id: String,
    /// The format of the first place.
    pub format: String,
    /// Tokens in each place.
    pub tokens: u32,
    /// Lines of the larger place.
    pub lines: u32,
    /// The place that comes first (by path, then position).
    pub first: PlaceTextJson,
    /// The other place.
    pub second: PlaceTextJson,
    /// Tokens listed per place: `tokens`, or [`MAX_DETAIL_TOKENS`] when
    /// the clone is larger.
    pub tokens_listed: u32,
    /// The indexes (into each place's `tokens`) of the token pairs whose
    /// source text differs: equal once normalized (a renamed identifier in
    /// `mild` or `weak` mode, a comment-free relayout never), the rest are
    /// alike letter for letter.
    pub differing: Vec<u32>,
    /// Near-miss clones only: as in the list.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = f64, examples(0.93))]
    pub similarity: Option<f64>,
    /// Near-miss clones only: as in the list. Their tokens are not among
    /// the places' `tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<CloneGapJson>)]
    pub gaps: Option<Vec<CloneGapJson>>,
    /// As in the list.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Vec<String>>)]
    pub renamed: Vec<(String, String)>,
}

impl From<&CloneDetail> for CloneDetailJson {
    fn from(v: &CloneDetail) -> CloneDetailJson {
        let c = &v.clone;
        CloneDetailJson {
            id: v.id.clone(),
            format: c.place.format.clone(),
            tokens: c.tokens,
            lines: c.larger_lines(),
            first: PlaceTextJson::of(&c.place, &v.first),
            second: PlaceTextJson::of(&c.other, &v.second),
            tokens_listed: v.tokens_listed,
            differing: v.differing.clone(),
            similarity: similarity(c.near.as_ref()),
            gaps: gaps(c.near.as_ref()),
            renamed: c.renamed.clone(),
        }
    }
}

/// One place of a clone's detail: its range, its whole lines, its tokens.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = PlaceText)]
pub(crate) struct PlaceTextJson {
    /// The path as reported (relative to DIR, or absolute with `--absolute`).
    pub file: String,
    /// 1-based line of the first token.
    pub start_line: u32,
    /// Line of the last token's last character.
    pub end_line: u32,
    /// 1-based column (characters) of the first token.
    pub start_column: u32,
    /// Column just after the last token's last character.
    pub end_column: u32,
    /// Lines `startLine` to `endLine` whole, `\n`-separated (no final
    /// newline, carriage returns removed).
    pub text: String,
    /// Each token of the place as `[startLine, startColumn, endLine,
    /// endColumn]` (1-based lines, columns in characters, the end just
    /// after the last character), in order.
    #[schema(value_type = Vec<Vec<u32>>)]
    pub tokens: Vec<[u32; 4]>,
    /// The definition the place lies in; absent where none holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = SymbolJson)]
    pub symbol: Option<SymbolJson>,
}

impl PlaceTextJson {
    /// `place` with its lines and tokens.
    fn of(place: &Place, lines: &PlaceLines) -> PlaceTextJson {
        let (start, end) = (place.span.start, place.span.end);
        PlaceTextJson {
            file: place.path.clone(),
            start_line: start.line,
            end_line: end.line,
            start_column: start.column,
            end_column: end.column,
            text: lines.text.clone(),
            tokens: lines.tokens.clone(),
            symbol: SymbolJson::of(place),
        }
    }
}
