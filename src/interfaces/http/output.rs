//! What an answer is written as ([`Output`]): JSON by default, SARIF 2.1.0
//! or reviewdog's rdjsonl when the request asks (`?output=` or, without
//! it, `Accept`); and the response of findings in either.

use hyper::header::ACCEPT;
use hyper::{Request, StatusCode};
use utoipa::ToSchema;

use super::error::ApiError;
use super::{typed_response, HttpResponse};
use crate::interfaces::render::sarif::{self, Extras, Finding, Notice};

/// What an answer is written as: `?output=` or, without it, `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSchema)]
#[schema(rename_all = "lowercase")]
pub(crate) enum Output {
    /// The JSON of the checks (docs/api.md).
    Json,
    /// A SARIF 2.1.0 log (`application/sarif+json`).
    Sarif,
    /// reviewdog's diagnostics, one JSON object per line.
    Rdjsonl,
}

impl Output {
    /// The output `req` asks for: its `output` query parameter (`json`,
    /// `sarif`, `rdjsonl`), else SARIF when `Accept` names
    /// `application/sarif+json`, else JSON.
    pub(crate) fn of<B>(req: &Request<B>) -> Result<Output, ApiError> {
        let asked = req.uri().query().and_then(|q| query_value(q, "output"));
        if let Some(value) = asked {
            return match value.to_ascii_lowercase().as_str() {
                "json" => Ok(Output::Json),
                "sarif" => Ok(Output::Sarif),
                "rdjsonl" => Ok(Output::Rdjsonl),
                _ => Err(ApiError::Validation(format!(
                    "Unknown output {value:?}; use output=json, output=sarif or output=rdjsonl"
                ))),
            };
        }
        let sarif = req.headers().get_all(ACCEPT).iter().any(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .split(',')
                .filter_map(|range| range.split(';').next())
                .any(|essence| essence.trim().eq_ignore_ascii_case(SARIF_TYPE))
        });
        Ok(if sarif { Output::Sarif } else { Output::Json })
    }
}

const SARIF_TYPE: &str = "application/sarif+json";

const RDJSONL_TYPE: &str = "application/x-ndjson";

/// The first value of the query parameter `name`, percent-decoded (`+` is
/// a space).
fn query_value(query: &str, name: &str) -> Option<String> {
    let decode = |raw: &str| {
        let spaced = raw.replace('+', " ");
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key) == name).then(|| decode(value))
        })
        .next()
}

/// The notice of an answer that lists `listed` of `total` duplications.
pub(crate) fn truncation(listed: usize, total: usize) -> Option<Notice> {
    (listed < total).then(|| Notice {
        path: None,
        text: format!(
            "Only the first {listed} of {total} duplications are listed (at most {} and {} MB of fragments per answer).",
            crate::service::check::MAX_DUPLICATIONS,
            crate::service::check::MAX_FRAGMENT_BYTES >> 20
        ),
        warning: true,
    })
}

/// `findings` as a SARIF log or as rdjsonl lines; `file_text` gives the
/// text of a finding's file, for rdjsonl's byte columns.
pub(crate) fn findings_response<'t>(
    output: Output,
    findings: &[Finding],
    extras: &Extras<'_>,
    file_text: impl Fn(&str) -> Option<crate::engine::text::Text<'t>>,
) -> Result<HttpResponse, ApiError> {
    match output {
        Output::Rdjsonl => Ok(typed_response(
            StatusCode::OK,
            RDJSONL_TYPE,
            sarif::rdjsonl(findings, file_text).into_bytes(),
        )),
        _ => {
            let log = sarif::sarif_with(findings, extras);
            let body = serde_json::to_vec(&log).map_err(|err| {
                tracing::error!("cannot serialize a SARIF log: {err}");
                ApiError::Internal
            })?;
            Ok(typed_response(StatusCode::OK, SARIF_TYPE, body))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_asked_by_query_or_accept() {
        let output = |uri: &str, accept: Option<&str>| {
            let mut req = Request::builder().uri(uri);
            if let Some(accept) = accept {
                req = req.header(ACCEPT, accept);
            }
            Output::of(&req.body(()).unwrap())
        };
        assert_eq!(output("/api/check", None), Ok(Output::Json));
        assert_eq!(output("/api/check?output=sarif", None), Ok(Output::Sarif));
        assert_eq!(
            output("/api/check?x=1&output=RDJSONL", None),
            Ok(Output::Rdjsonl)
        );
        assert_eq!(output("/api/check?output=%73arif", None), Ok(Output::Sarif));
        let sarif_first = Some("text/html, application/sarif+json;q=0.9");
        assert_eq!(output("/api/check", sarif_first), Ok(Output::Sarif));
        assert_eq!(
            output("/api/check?output=json", sarif_first),
            Ok(Output::Json)
        );
        assert_eq!(
            output("/api/check", Some("application/json")),
            Ok(Output::Json)
        );
        assert_eq!(
            output("/api/check?output=html", None),
            Err(ApiError::Validation(
                "Unknown output \"html\"; use output=json, output=sarif or output=rdjsonl".into()
            ))
        );
    }
}
