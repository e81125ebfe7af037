//! Handlers: one function per endpoint of SPEC section 6, and
//! `POST /api/check-diff` (issue 10).
//!
//! In: the shared [`State`] and the request. Out: a JSON response (or, for
//! the checks, SARIF or rdjsonl as the request asks: [`Output`]), or an
//! [`ApiError`]. Bodies are read through a size limit and a time limit;
//! fields are validated in the documented order (code, format or path, then
//! the optional fields); each check is one engine call
//! ([`crate::service::check::check`], [`crate::service::diff_check::check_diff`])
//! on the blocking pool, and the handler only decodes, validates and renders.
//! [`run_check`], [`run_diff_check`], [`run_stats`] and [`run_clones`] make
//! those calls for every adapter (the MCP tools too), admitted as the API
//! admits them.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{HeaderMap, Request, StatusCode};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::error::ApiError;
pub use super::error::{no_such_clone, no_such_folder};
use super::{json, typed_response, Resp, State};
use crate::engine::grammar::{Format, Registry};
use crate::engine::tokens::Mode;
use crate::interfaces::answers;
use crate::interfaces::sarif::{self, Extras, Finding, Notice, Snippet};
use crate::project::time::iso8601;
use crate::service::check::CheckRequest;
use crate::service::clones::{ClonesQuery, Cursor, DEFAULT_LIMIT, MAX_LIMIT};
use crate::service::diff_check::DiffOptions;
use crate::service::tree::{self, TreeQuery};
use crate::VERSION;

/// How long a client may take to send its body.
const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// POST /api/check.
pub async fn check(state: &Arc<State>, req: Request<Incoming>) -> Result<Resp, ApiError> {
    let scanner = &state.workspace.scanner;
    let output = Output::of(&req)?;
    let fields = read_object(req, scanner.config().max_body).await?;
    let config = scanner.config();
    let (request, recheck) = validate(
        fields,
        scanner.registry(),
        &config.dir,
        config.mode,
        config.near_miss,
    )?;
    state
        .workspace
        .check(
            request,
            recheck,
            move |workspace, snapshot, request, answer| {
                let registry = workspace.registry();
                match output {
                    Output::Json => Ok(json(
                        StatusCode::OK,
                        &answers::check(snapshot, registry, answer),
                    )),
                    Output::Sarif | Output::Rdjsonl => {
                        let path = request.path.as_deref();
                        let findings = answer.findings(snapshot, path);
                        let notices: Vec<Notice> = truncation(answer.matches.len(), answer.total)
                            .into_iter()
                            .collect();
                        let snippet = Snippet {
                            text: &request.code,
                            language: &registry.get(request.format).name,
                        };
                        let extras = Extras {
                            snippet: path.is_none().then_some(snippet),
                            notices: &notices,
                        };
                        let code = request.code.as_str();
                        findings_response(output, &findings, &extras, |p| {
                            (Some(p) == path).then_some(code)
                        })
                    }
                }
            },
        )
        .await
}

/// POST /api/check-diff: the duplications a diff adds.
pub async fn check_diff(state: &Arc<State>, req: Request<Incoming>) -> Result<Resp, ApiError> {
    let output = Output::of(&req)?;
    let kind = DiffBodyKind::of(&req)?;
    let bytes = read_body(req, state.workspace.scanner.config().max_body).await?;
    let defaults = DiffOptions::of(state.workspace.scanner.config());
    let (diff, options) = decode_diff(kind, &bytes, defaults)?;
    let diff = match diff {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(field) => Bytes::from(field),
    };
    state
        .workspace
        .check_diff(diff, options, move |answer| match output {
            Output::Json => Ok(json(StatusCode::OK, &answers::diff(answer))),
            Output::Sarif | Output::Rdjsonl => {
                let findings = answer.findings();
                let mut notices = answer.notices();
                let listed = answer.files.iter().map(|f| f.duplications.len()).sum();
                let total = answer.statistics.total_duplications as usize;
                notices.extend(truncation(listed, total));
                let extras = Extras {
                    snippet: None,
                    notices: &notices,
                };
                findings_response(output, &findings, &extras, |p| answer.text_of(p))
            }
        })
        .await
}

/// What an answer is written as: `?output=` or, without it, `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Output {
    /// The JSON of SPEC 6.1 (and of check-diff).
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
    pub fn of<B>(req: &Request<B>) -> Result<Output, ApiError> {
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
fn truncation(listed: usize, total: usize) -> Option<Notice> {
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
fn findings_response<'t>(
    output: Output,
    findings: &[Finding],
    extras: &Extras<'_>,
    file_text: impl Fn(&str) -> Option<&'t str>,
) -> Result<Resp, ApiError> {
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

/// Checks the fields of a check request, in the documented order; with
/// whether it asks for a rescan first. `path` is made relative to `dir`; a
/// request without `mode` is checked in `default_mode` (`--mode`), one
/// without `nearMiss` finds near-miss copies if `default_near_miss`
/// (not `--no-near-miss`).
pub fn validate(
    mut fields: Map<String, Value>,
    registry: &Registry,
    dir: &Path,
    default_mode: Mode,
    default_near_miss: bool,
) -> Result<(CheckRequest, bool), ApiError> {
    required_str(&fields, "code")?;
    let Some(Value::String(code)) = fields.remove("code") else {
        unreachable!("required_str found a string")
    };
    let fields = &fields;
    let path = || match fields.get("path") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(p)) => Ok(Some(p.as_str())),
        Some(_) => Err(must_be("path", "a string")),
    };
    let format = if fields.get("format").is_some_and(|v| !v.is_null()) {
        format_named(registry, required_str(fields, "format")?)?
    } else if let Some(path) = path()? {
        registry.for_path(Path::new(path)).ok_or_else(|| {
            let what = Path::new(path)
                .extension()
                .map_or("it has no extension".to_owned(), |e| {
                    format!("unknown extension \".{}\"", e.to_string_lossy())
                });
            ApiError::UnsupportedFormat(format!(
                "Cannot tell the format of path {path:?}: {what}; send \"format\" with one of: {}",
                registry.names().join(", ")
            ))
        })?
    } else {
        return Err(ApiError::Validation(
            "Missing required field: format".into(),
        ));
    };
    let recheck = match fields.get("recheck") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(must_be("recheck", "a boolean")),
    };
    let near_miss = near_miss_field(fields, default_near_miss)?;
    let mode = mode_field(fields, default_mode)?;
    let path = path()?;
    let request = CheckRequest {
        code,
        format: format.id,
        path: path.map(|p| relative_to_dir(p, dir)),
        mode,
        near_miss,
    };
    Ok((request, recheck))
}

/// The `nearMiss` field of a check's fields, or `default` (not the
/// server's `--no-near-miss`) when it is missing or null.
pub fn near_miss_field(fields: &Map<String, Value>, default: bool) -> Result<bool, ApiError> {
    match fields.get("nearMiss") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(must_be("nearMiss", "a boolean")),
    }
}

/// The `mode` field of a check's fields (`strict`, `mild` or `weak`, in
/// any case), or `default` (the server's `--mode`) when it is missing or
/// null.
pub fn mode_field(fields: &Map<String, Value>, default: Mode) -> Result<Mode, ApiError> {
    match fields.get("mode") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(name)) => Mode::parse(name).ok_or_else(|| {
            ApiError::Validation(format!(
                "Unknown mode {name:?}; use \"strict\", \"mild\" or \"weak\""
            ))
        }),
        Some(_) => Err(must_be("mode", "a string")),
    }
}

/// The format `name` names (a name, alias or extension).
fn format_named<'r>(registry: &'r Registry, name: &str) -> Result<&'r Format, ApiError> {
    registry.lookup(name).ok_or_else(|| {
        ApiError::UnsupportedFormat(format!(
            "Unsupported format {name:?}; supported formats: {} (aliases and extensions such as js, ts, py and rs work too)",
            registry.names().join(", ")
        ))
    })
}

/// The value of a required, non-blank string field (`null` is missing, as
/// in jscpd-server).
fn required_str<'a>(fields: &'a Map<String, Value>, name: &str) -> Result<&'a str, ApiError> {
    match fields.get(name) {
        None | Some(Value::Null) => Err(ApiError::Validation(format!(
            "Missing required field: {name}"
        ))),
        Some(Value::String(s)) if s.trim().is_empty() => Err(ApiError::Validation(format!(
            "Field \"{name}\" cannot be empty"
        ))),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(must_be(name, "a string")),
    }
}

fn must_be(name: &str, what: &str) -> ApiError {
    ApiError::Validation(format!("Field \"{name}\" must be {what}"))
}

/// A request's `path` as the index keys files: relative to DIR, with `/`.
/// Absolute paths inside DIR (what editors send) are made relative.
fn relative_to_dir(path: &str, dir: &Path) -> String {
    let slashed = path.replace('\\', "/");
    let rel = Path::new(&slashed)
        .strip_prefix(dir)
        .ok()
        .and_then(|p| p.to_str())
        .map_or(slashed.as_str(), |p| p)
        .to_owned();
    let mut parts: Vec<&str> = Vec::new();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// Reads a JSON or form body into an object, within the size and time limits.
async fn read_object(
    req: Request<Incoming>,
    max_body: u64,
) -> Result<Map<String, Value>, ApiError> {
    let kind = BodyKind::of(&req)?;
    let bytes = read_body(req, max_body).await?;
    decode_object(kind, &bytes)
}

/// Reads a body whole, within the size and time limits.
async fn read_body(req: Request<Incoming>, max_body: u64) -> Result<Bytes, ApiError> {
    let (parts, body) = req.into_parts();
    read_limited(&parts.headers, body, max_body).await
}

/// Reads `body`, sent with `headers`, whole within the size limit
/// `max_body` and the body time limit: a declared `Content-Length` over the
/// limit is refused before reading.
pub async fn read_limited(
    headers: &HeaderMap,
    body: Incoming,
    max_body: u64,
) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body) {
        return Err(ApiError::PayloadTooLarge { limit: max_body });
    }
    let limit = usize::try_from(max_body).unwrap_or(usize::MAX);
    let collected = tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, limit).collect())
        .await
        .map_err(|_| ApiError::Timeout)?;
    let bytes: Bytes = match collected {
        Ok(body) => body.to_bytes(),
        Err(err)
            if err
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return Err(ApiError::PayloadTooLarge { limit: max_body });
        }
        Err(err) => {
            tracing::debug!("reading a body failed: {err}");
            return Err(ApiError::Validation(
                "The request body could not be read completely".into(),
            ));
        }
    };
    Ok(bytes)
}

/// The fields of a body of `kind`.
pub fn decode_object(kind: BodyKind, bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match kind {
        BodyKind::Json => parse_json_object(bytes),
        // `curl -d '{...}'` labels JSON as a form; a body that starts like a
        // JSON object is taken as what it is.
        BodyKind::Form if bytes.trim_ascii_start().starts_with(b"{") => parse_json_object(bytes),
        BodyKind::Form => parse_form(bytes),
    }
}

/// A request's Content-Type as sent, and its essence (the media type
/// without parameters, lower case); `None` without the header.
fn content_type<B>(req: &Request<B>) -> Option<(String, String)> {
    let text = String::from_utf8_lossy(req.headers().get(CONTENT_TYPE)?.as_bytes()).into_owned();
    let essence = text
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    Some((text, essence))
}

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// JSON.
    Json,
    /// `application/x-www-form-urlencoded`.
    Form,
}

impl BodyKind {
    /// JSON (`application/json`, `+json`, or no Content-Type) or a form.
    pub fn of<B>(req: &Request<B>) -> Result<BodyKind, ApiError> {
        let Some((text, essence)) = content_type(req) else {
            return Ok(BodyKind::Json);
        };
        match essence.as_str() {
            "application/json" => Ok(BodyKind::Json),
            "application/x-www-form-urlencoded" => Ok(BodyKind::Form),
            e if e.starts_with("application/") && e.ends_with("+json") => Ok(BodyKind::Json),
            _ => Err(ApiError::UnsupportedMediaType {
                got: text,
                accepted: "application/json or application/x-www-form-urlencoded",
            }),
        }
    }
}

/// How the body of a diff check is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffBodyKind {
    /// `{"diff": "..."}`.
    Json,
    /// A form: `diff=...`; or, not starting so, the diff itself (what
    /// `curl --data-binary @-` labels a form).
    Form,
    /// The diff itself (`text/x-diff`, `text/x-patch`, `text/plain`).
    Raw,
    /// No Content-Type: JSON if it starts like an object, else the diff.
    Unlabelled,
}

impl DiffBodyKind {
    /// The kind `req`'s Content-Type says.
    pub fn of<B>(req: &Request<B>) -> Result<DiffBodyKind, ApiError> {
        let Some((text, essence)) = content_type(req) else {
            return Ok(DiffBodyKind::Unlabelled);
        };
        match essence.as_str() {
            "application/json" => Ok(DiffBodyKind::Json),
            e if e.starts_with("application/") && e.ends_with("+json") => Ok(DiffBodyKind::Json),
            "application/x-www-form-urlencoded" => Ok(DiffBodyKind::Form),
            "text/x-diff" | "text/x-patch" | "text/plain" => Ok(DiffBodyKind::Raw),
            _ => Err(ApiError::UnsupportedMediaType {
                got: text,
                accepted: "the diff as text/x-diff or text/x-patch, or application/json ({\"diff\": \"...\"})",
            }),
        }
    }
}

/// The diff a body of `kind` holds (its bytes; the check reads them as
/// UTF-8), and the mode its `mode` field asks for (`default_mode` without
/// one, and for a diff sent as it is).
pub fn decode_diff(
    kind: DiffBodyKind,
    bytes: &[u8],
    defaults: DiffOptions,
) -> Result<(std::borrow::Cow<'_, [u8]>, DiffOptions), ApiError> {
    let object = bytes.trim_ascii_start().starts_with(b"{");
    let fields = match kind {
        DiffBodyKind::Raw => return Ok((bytes.into(), defaults)),
        DiffBodyKind::Json => parse_json_object(bytes)?,
        DiffBodyKind::Form | DiffBodyKind::Unlabelled if object => parse_json_object(bytes)?,
        DiffBodyKind::Form if is_diff_form(bytes) => parse_form(bytes)?,
        DiffBodyKind::Form | DiffBodyKind::Unlabelled => return Ok((bytes.into(), defaults)),
    };
    let diff = diff_field(&fields)?.as_bytes().to_vec();
    Ok((diff.into(), diff_options(&fields, defaults)?))
}

/// The `mode` and `nearMiss` fields of a diff check, over `defaults`.
pub fn diff_options(
    fields: &Map<String, Value>,
    defaults: DiffOptions,
) -> Result<DiffOptions, ApiError> {
    Ok(DiffOptions {
        mode: mode_field(fields, defaults.mode)?,
        near_miss: near_miss_field(fields, defaults.near_miss)?,
    })
}

/// Whether a form body holds the fields of a diff check (`diff=`, maybe
/// `mode=` and `nearMiss=`, in any order) rather than a diff sent as it is.
fn is_diff_form(bytes: &[u8]) -> bool {
    bytes.starts_with(b"diff=")
        || (bytes.starts_with(b"mode=") || bytes.starts_with(b"nearMiss=")) && bytes.contains(&b'&')
}

/// The `diff` field of a diff check's fields: a string, which may be empty.
pub fn diff_field(fields: &Map<String, Value>) -> Result<&str, ApiError> {
    match fields.get("diff") {
        None => Err(ApiError::Validation("Missing required field: diff".into())),
        Some(Value::String(diff)) => Ok(diff),
        Some(_) => Err(must_be("diff", "a string")),
    }
}

fn parse_json_object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::Validation(
            "Request body must be a JSON object".into(),
        )),
        Err(err) => Err(ApiError::Validation(format!(
            "Request body is not valid JSON: {err}"
        ))),
    }
}

/// Form fields are strings; `recheck=true` / `false` become booleans, as
/// jscpd-server's clients send them. A field that is not UTF-8 once
/// decoded (`%FF`) is refused, never replaced.
fn parse_form(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let decode = |raw: &[u8]| {
        let plus_as_space: Vec<u8> = raw
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        percent_encoding::percent_decode(&plus_as_space)
            .decode_utf8()
            .map(std::borrow::Cow::into_owned)
            .map_err(|_| {
                ApiError::Validation(
                    "Form body is not valid UTF-8 once decoded; percent-encode UTF-8 text".into(),
                )
            })
    };
    let mut map = Map::new();
    for pair in bytes.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
        let (key, value) = match pair.iter().position(|&b| b == b'=') {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, &b""[..]),
        };
        let (key, value) = (decode(key)?, decode(value)?);
        let value = match (key.as_str(), value.as_str()) {
            ("recheck", "true") => Value::Bool(true),
            ("recheck", "false") => Value::Bool(false),
            ("nearMiss", "true") => Value::Bool(true),
            ("nearMiss", "false") => Value::Bool(false),
            _ => Value::String(value),
        };
        map.insert(key, value);
    }
    Ok(map)
}

/// GET /api/stats.
pub async fn stats(state: &Arc<State>) -> Result<Resp, ApiError> {
    state
        .workspace
        .stats(|statistics| {
            Ok(json(
                StatusCode::OK,
                &answers::stats(statistics, std::time::SystemTime::now()),
            ))
        })
        .await
}

/// GET /api/clones: the project's clones, largest first, a page at a time.
pub async fn clones(state: &Arc<State>, req: Request<Incoming>) -> Result<Resp, ApiError> {
    let fields = query_fields(req.uri().query().unwrap_or(""))?;
    let scanner = &state.workspace.scanner;
    let query = clones_query(&fields, scanner.registry(), &scanner.config().dir)?;
    state
        .workspace
        .clones(query, |page| Ok(json(StatusCode::OK, page)))
        .await
}

/// GET /api/tree: one folder's children, with their lines and duplication.
pub async fn tree(state: &Arc<State>, req: Request<Incoming>) -> Result<Resp, ApiError> {
    let fields = query_fields(req.uri().query().unwrap_or(""))?;
    let query = tree_query(&fields, &state.workspace.scanner.config().dir)?;
    state
        .workspace
        .tree(query, |folder| Ok(json(StatusCode::OK, folder)))
        .await
}

/// The parameters of a tree query: `path`, `limit` and `offset`; anything
/// else is refused.
pub fn tree_query(fields: &Map<String, Value>, dir: &Path) -> Result<TreeQuery, ApiError> {
    const KNOWN: [&str; 3] = ["path", "limit", "offset"];
    if let Some(name) = fields.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(ApiError::Validation(format!(
            "Unknown parameter \"{name}\"; the tree takes {}",
            KNOWN.join(", ")
        )));
    }
    let path = match fields.get("path") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(p)) => relative_to_dir(p, dir),
        Some(_) => return Err(must_be("path", "a string")),
    };
    let limit = whole_field(fields, "limit", 1..=tree::MAX_LIMIT as u64)?;
    let offset = whole_field(fields, "offset", 0..=u64::from(u32::MAX))?;
    Ok(TreeQuery {
        path,
        limit: limit.map_or(tree::DEFAULT_LIMIT, |n| n as usize),
        offset: offset.map_or(0, |n| n as usize),
    })
}

/// A whole-number field within `range`, as a number or a string; `None`
/// when absent or empty.
fn whole_field(
    fields: &Map<String, Value>,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ApiError> {
    let number = match fields.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.is_empty() => return Ok(None),
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        Some(_) => None,
    };
    match number {
        Some(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(must_be(
            name,
            &format!("a whole number from {} to {}", range.start(), range.end()),
        )),
    }
}

/// GET /api/clone: one clone of the list with both places' lines and
/// tokens, for a side-by-side view.
pub async fn clone_detail(state: &Arc<State>, req: Request<Incoming>) -> Result<Resp, ApiError> {
    let fields = query_fields(req.uri().query().unwrap_or(""))?;
    let id = clone_id(&fields)?;
    state
        .workspace
        .clone_detail(id, |detail| Ok(json(StatusCode::OK, detail)))
        .await
}

/// The `id` of a clone query: 16 hex digits, the only parameter.
pub fn clone_id(fields: &Map<String, Value>) -> Result<String, ApiError> {
    if let Some(name) = fields.keys().find(|k| k.as_str() != "id") {
        return Err(ApiError::Validation(format!(
            "Unknown parameter \"{name}\"; a clone is asked for by id"
        )));
    }
    match fields.get("id") {
        Some(Value::String(id)) if id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(id.to_ascii_lowercase())
        }
        None | Some(Value::Null) => Err(ApiError::Validation(
            "Missing required parameter: id (a clone's id from /api/clones)".into(),
        )),
        Some(_) => Err(must_be("id", "a clone's id: 16 hex digits")),
    }
}

/// The parameters of a query string as an object of strings, refusing
/// repeated names.
fn query_fields(query: &str) -> Result<Map<String, Value>, ApiError> {
    let decode = |raw: &str| {
        let spaced = raw.replace('+', " ");
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned()
    };
    let mut fields = Map::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key);
        if fields.contains_key(&key) {
            return Err(ApiError::Validation(format!(
                "Parameter \"{key}\" is given twice"
            )));
        }
        fields.insert(key, Value::String(decode(value)));
    }
    Ok(fields)
}

/// The parameters of a clone list: `path`, `format`, `minTokens`, `limit`,
/// `cursor` and `fragments`, as query strings (`GET /api/clones`) or as
/// JSON values (MCP's `list_clones`); anything else is refused.
pub fn clones_query(
    fields: &Map<String, Value>,
    registry: &Registry,
    dir: &Path,
) -> Result<ClonesQuery, ApiError> {
    const KNOWN: [&str; 6] = [
        "path",
        "format",
        "minTokens",
        "limit",
        "cursor",
        "fragments",
    ];
    if let Some(name) = fields.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(ApiError::Validation(format!(
            "Unknown parameter \"{name}\"; the clone list takes {}",
            KNOWN.join(", ")
        )));
    }
    let text = |name: &str| match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(must_be(name, "a string")),
    };
    let format = text("format")?
        .map(|name| format_named(registry, name).map(|f| f.id))
        .transpose()?;
    let after = text("cursor")?
        .map(|c| {
            Cursor::decode(c).ok_or_else(|| {
                ApiError::Validation(
                    "Field \"cursor\" is not a cursor of this server: send back the nextCursor of the previous page".into(),
                )
            })
        })
        .transpose()?;
    let fragments = match fields.get("fragments") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) if s == "true" || s == "1" => true,
        Some(Value::String(s)) if s == "false" || s == "0" || s.is_empty() => false,
        Some(_) => return Err(must_be("fragments", "true or false")),
    };
    Ok(ClonesQuery {
        path: text("path")?.map_or_else(String::new, |p| relative_to_dir(p, dir)),
        format,
        min_tokens: whole_field(fields, "minTokens", 0..=u64::from(u32::MAX))?
            .map_or(0, |n| n as u32),
        limit: whole_field(fields, "limit", 1..=MAX_LIMIT as u64)?
            .map_or(DEFAULT_LIMIT, |n| n as usize),
        after,
        fragments,
    })
}

/// The JSON answer of `GET /api/health`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Health)]
pub struct HealthBody<'a> {
    /// `initializing` until the first scan completes, then `ready` (also
    /// while a rescan runs: checks use the previous index).
    status: Readiness,
    /// The scanned directory, absolute.
    working_directory: String,
    /// When the last scan finished, ISO 8601 UTC with milliseconds; null
    /// before the first.
    #[schema(required = true, examples("2026-11-22T10:30:00.000Z"))]
    last_scan_time: Option<String>,
    /// When the watcher last applied a change, ISO 8601 UTC with
    /// milliseconds; null if it has not.
    #[schema(required = true, examples("2026-11-22T10:31:12.345Z"))]
    last_update_time: Option<String>,
    /// Whether a scan is running.
    scanning: bool,
    /// Files in the index.
    files: usize,
    /// How tokens are compared (`--mode`): `strict`, `mild` or `weak`.
    mode: &'static str,
    /// The smallest clone, in tokens (`--min-tokens`).
    min_tokens: u32,
    /// The smallest clone, in lines (`--min-lines`).
    min_lines: u32,
    /// Files the last scan skipped, by reason (`tooLarge`,
    /// `tooManyLines`, `binary`, `notUtf8`, `unreadable`, `parseTimeout`,
    /// `parseMemory`); reasons with none are left out.
    skipped: std::collections::BTreeMap<&'a str, u64>,
    /// dupcheck's version.
    version: &'a str,
}

/// Whether the first scan has completed.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Readiness {
    /// The first scan is running: checks and statistics answer 503.
    Initializing,
    /// The index is ready.
    Ready,
}

/// GET /api/health.
pub fn health(state: &State) -> Resp {
    let scanner = &state.workspace.scanner;
    let snapshot = scanner.snapshot();
    let body = HealthBody {
        status: if snapshot.is_some() {
            Readiness::Ready
        } else {
            Readiness::Initializing
        },
        working_directory: scanner.config().dir.to_string_lossy().into_owned(),
        last_scan_time: snapshot.as_ref().map(|s| iso8601(s.finished)),
        last_update_time: scanner.last_update().map(iso8601),
        scanning: scanner.is_scanning(),
        files: snapshot.as_ref().map_or(0, |s| s.index.files.len()),
        mode: scanner.config().mode.name(),
        min_tokens: scanner.config().thresholds.min_tokens,
        min_lines: scanner.config().thresholds.min_lines,
        skipped: snapshot
            .as_ref()
            .map(|s| s.skipped.0.iter().map(|(r, n)| (r.name(), *n)).collect())
            .unwrap_or_default(),
        version: VERSION,
    };
    json(StatusCode::OK, &body)
}

/// The JSON answer of `GET /`.
#[derive(Serialize, ToSchema)]
#[schema(as = Description)]
pub struct RootBody<'a> {
    /// `dupcheck`.
    name: &'a str,
    /// dupcheck's version.
    version: &'a str,
    /// What each endpoint does, by `METHOD /path`.
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    endpoints: serde_json::Value,
    /// The canonical names of the formats dupcheck reads.
    formats: Vec<&'a str>,
    /// How to start.
    documentation: &'a str,
}

/// GET /.
pub fn root(state: &State) -> Resp {
    json(
        StatusCode::OK,
        &root_body(state.workspace.scanner.registry()),
    )
}

/// The answer of `GET /` of a server reading the formats of `registry`.
pub fn root_body(registry: &Registry) -> RootBody<'_> {
    RootBody {
        name: "dupcheck",
        version: VERSION,
        endpoints: serde_json::json!({
            "POST /api/check": "Check a code snippet for duplications: {\"code\": \"...\", \"format\": \"javascript\"}, optional \"recheck\" and \"path\"; ?output=sarif or rdjsonl for SARIF 2.1.0 or reviewdog",
            "POST /api/check-diff": "Check what a diff adds for duplications: the output of git diff as text/x-diff, or {\"diff\": \"...\"}; ?output=sarif or rdjsonl for SARIF 2.1.0 or reviewdog",
            "GET /api/stats": "Duplication statistics of the whole project, per file and per format",
            "GET /api/tree": "One folder of the project: its children (folders and files) with lines, duplicated lines, files and clones, most lines first: ?path=src, limit (at most 2000), offset",
            "GET /api/clone": "One clone of /api/clones with both places' whole lines and each token's position, for a side-by-side view: ?id=",
            "GET /api/clones": "The project's clones, largest first: ?limit=100 (at most 1000), cursor (the answer's nextCursor), path (a file or folder), format, minTokens, fragments=true",
            "GET /api/health": "Server state: initializing or ready, last scan time, files indexed",
            "POST /api/recheck": "Rescan the working directory now and answer when done",
            "GET /api/openapi.json": "This API as an OpenAPI 3.1 document: every endpoint, parameter, answer and error, with examples",
            "POST /mcp": "The MCP endpoint for AI coding assistants (streamable HTTP, stateless): tools check_code, check_diff, list_clones and project_stats answer as /api/check, /api/check-diff, /api/clones and /api/stats do",
            "GET /": "This description; a browser (Accept: text/html) gets the dashboard",
        }),
        formats: registry.names(),
        documentation: "POST a snippet and its format to /api/check; the answer lists every place in the scanned code that it duplicates, with exact lines. See README.md.",
    }
}

/// The JSON answer of `POST /api/recheck`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = RecheckAnswer)]
pub struct RecheckBody {
    /// `Rescan complete`.
    message: &'static str,
    /// When the scan finished, ISO 8601 UTC with milliseconds.
    #[schema(examples("2026-11-22T10:30:00.000Z"))]
    last_scan_time: String,
    /// Files in the index.
    files: usize,
    /// How long the scan took, in milliseconds.
    #[schema(value_type = u64)]
    duration_ms: u128,
}

/// POST /api/recheck.
pub async fn recheck(state: &State) -> Result<Resp, ApiError> {
    let snapshot = state.workspace.recheck().await?;
    Ok(json(
        StatusCode::OK,
        &RecheckBody {
            message: "Rescan complete",
            last_scan_time: iso8601(snapshot.finished),
            files: snapshot.index.files.len(),
            duration_ms: snapshot.duration.as_millis(),
        },
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::project::config::{Cli, Config};
    use crate::project::scanner::Scanner;
    use crate::service::workspace::Workspace;
    use clap::Parser;

    /// State whose first scan has not finished (it was never started).
    pub(crate) fn initializing() -> (tempfile::TempDir, Arc<State>) {
        let dir = tempfile::tempdir().unwrap();
        let cli = Cli::try_parse_from(["dupcheck", dir.path().to_str().unwrap()]).unwrap();
        let registry = Registry::builtin();
        let config = Config::resolve(&cli, dir.path(), &registry, |_| {}).unwrap();
        let scanner = Scanner::new(Arc::new(config), registry);
        (
            dir,
            Arc::new(State {
                workspace: Workspace::unstarted(scanner),
                grace_over: tokio::sync::watch::channel(false).1,
            }),
        )
    }

    async fn body(res: Resp) -> Value {
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn before_the_first_scan_stats_are_not_ready_and_health_says_initializing() {
        let (_dir, state) = initializing();
        let res = stats(&state).await.unwrap_err().into_response();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers().get(hyper::header::RETRY_AFTER).unwrap(), "1");
        assert_eq!(
            body(res).await,
            serde_json::json!({"error": "NotReady", "message": "The initial scan is still running; retry shortly", "statusCode": 503})
        );
        let health = body(health(&state)).await;
        assert_eq!(
            (&health["status"], &health["lastScanTime"], &health["files"]),
            (
                &serde_json::json!("initializing"),
                &Value::Null,
                &serde_json::json!(0)
            )
        );
    }

    #[test]
    fn request_paths_become_relative_to_dir() {
        let dir = Path::new("/work/proj");
        assert_eq!(relative_to_dir("src/a.js", dir), "src/a.js");
        assert_eq!(relative_to_dir("./src//a.js", dir), "src/a.js");
        assert_eq!(relative_to_dir("src\\a.js", dir), "src/a.js");
        assert_eq!(relative_to_dir("/work/proj/src/a.js", dir), "src/a.js");
        assert_eq!(relative_to_dir("src/../lib/a.js", dir), "lib/a.js");
    }

    #[test]
    fn form_bodies_give_strings_and_boolean_recheck() {
        let map = parse_form(b"code=a%20%2B+b&format=js&recheck=true").unwrap();
        assert_eq!(
            Value::Object(map),
            serde_json::json!({"code": "a + b", "format": "js", "recheck": true})
        );
        assert_eq!(
            parse_form(b"code=%FF&format=js"),
            Err(ApiError::Validation(
                "Form body is not valid UTF-8 once decoded; percent-encode UTF-8 text".into()
            ))
        );
    }

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

    #[test]
    fn diff_bodies_of_every_kind() {
        let defaults = DiffOptions {
            mode: Mode::Mild,
            near_miss: true,
        };
        let diff = |kind, body: &[u8]| {
            decode_diff(kind, body, defaults).map(|(d, options)| {
                assert_eq!(options, defaults, "no mode or nearMiss field: the defaults");
                d.into_owned()
            })
        };
        let raw = b"diff --git a/x b/x\n".to_vec();
        assert_eq!(diff(DiffBodyKind::Raw, &raw), Ok(raw.clone()));
        assert_eq!(diff(DiffBodyKind::Unlabelled, &raw), Ok(raw.clone()));
        assert_eq!(diff(DiffBodyKind::Form, &raw), Ok(raw.clone()));
        assert_eq!(diff(DiffBodyKind::Form, b"diff=a%2Bb"), Ok(b"a+b".to_vec()));
        assert_eq!(
            diff(DiffBodyKind::Unlabelled, br#" {"diff": "d"}"#),
            Ok(b"d".to_vec())
        );
        assert_eq!(diff(DiffBodyKind::Json, br#"{"diff": ""}"#), Ok(vec![]));
        // A mode field, in JSON or in a form (either order).
        let with_mode = |kind, body: &[u8]| {
            decode_diff(kind, body, defaults).map(|(d, options)| (d.into_owned(), options.mode))
        };
        assert_eq!(
            with_mode(DiffBodyKind::Json, br#"{"diff": "d", "mode": "weak"}"#),
            Ok((b"d".to_vec(), Mode::Weak))
        );
        assert_eq!(
            with_mode(DiffBodyKind::Form, b"mode=strict&diff=a%2Bb"),
            Ok((b"a+b".to_vec(), Mode::Strict))
        );
        assert_eq!(
            with_mode(DiffBodyKind::Form, b"diff=d&mode=Weak"),
            Ok((b"d".to_vec(), Mode::Weak))
        );
        assert_eq!(
            with_mode(DiffBodyKind::Json, br#"{"diff": "d", "mode": "loose"}"#),
            Err(ApiError::Validation(
                "Unknown mode \"loose\"; use \"strict\", \"mild\" or \"weak\"".into()
            ))
        );
        // A nearMiss field, in JSON or in a form.
        let near_miss = |kind, body: &[u8]| {
            decode_diff(kind, body, defaults).map(|(_, options)| options.near_miss)
        };
        assert_eq!(
            near_miss(DiffBodyKind::Json, br#"{"diff": "d", "nearMiss": false}"#),
            Ok(false)
        );
        assert_eq!(
            near_miss(DiffBodyKind::Form, b"nearMiss=false&diff=d"),
            Ok(false)
        );
        assert_eq!(
            near_miss(DiffBodyKind::Json, br#"{"diff": "d", "nearMiss": "no"}"#),
            Err(ApiError::Validation(
                "Field \"nearMiss\" must be a boolean".into()
            ))
        );
        assert_eq!(
            diff(DiffBodyKind::Json, br#"{"code": "d"}"#),
            Err(ApiError::Validation("Missing required field: diff".into()))
        );
        assert_eq!(
            diff(DiffBodyKind::Json, b"diff --git"),
            Err(ApiError::Validation(
                "Request body is not valid JSON: expected value at line 1 column 1".into()
            ))
        );
        let kind = |ct: &str| {
            DiffBodyKind::of(
                &Request::builder()
                    .header(CONTENT_TYPE, ct)
                    .body(())
                    .unwrap(),
            )
        };
        assert_eq!(kind("text/x-diff; charset=utf-8"), Ok(DiffBodyKind::Raw));
        assert_eq!(kind("TEXT/X-PATCH"), Ok(DiffBodyKind::Raw));
        assert_eq!(kind("application/json"), Ok(DiffBodyKind::Json));
        assert!(matches!(
            kind("image/png"),
            Err(ApiError::UnsupportedMediaType { .. })
        ));
    }

    #[test]
    fn content_types() {
        let kind = |ct: Option<&str>| {
            let mut req = Request::builder();
            if let Some(ct) = ct {
                req = req.header(CONTENT_TYPE, ct);
            }
            BodyKind::of(&req.body(()).unwrap())
        };
        assert_eq!(kind(None), Ok(BodyKind::Json));
        assert_eq!(
            kind(Some("application/json; charset=utf-8")),
            Ok(BodyKind::Json)
        );
        assert_eq!(kind(Some("Application/JSON")), Ok(BodyKind::Json));
        assert_eq!(
            kind(Some("application/x-www-form-urlencoded")),
            Ok(BodyKind::Form)
        );
        assert_eq!(
            kind(Some("text/plain")),
            Err(ApiError::UnsupportedMediaType {
                got: "text/plain".into(),
                accepted: "application/json or application/x-www-form-urlencoded"
            })
        );
    }
}
