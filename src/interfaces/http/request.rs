//! Request validation: the decoded fields of a request, checked in the
//! documented order (code, format or path, then the optional fields), into
//! the service's queries ([`CheckRequest`], [`DiffOptions`],
//! [`ClonesQuery`], [`TreeQuery`], a clone's id). Every refusal names the
//! field and what it accepts. The MCP tools validate their arguments here
//! too.

use std::path::Path;

use serde_json::{Map, Value};

use super::body::{is_diff_form, parse_form, parse_json_object, DiffBodyKind};
use super::error::ApiError;
use crate::engine::grammar::{Format, Registry};
use crate::engine::tokens::Mode;
use crate::service::check::CheckRequest;
use crate::service::clones::{ClonesQuery, Cursor, DEFAULT_LIMIT, MAX_LIMIT};
use crate::service::diff_check::DiffOptions;
use crate::service::tree::{self, TreeQuery};

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
            let what = match registry.absent_for_path(Path::new(path)) {
                Some(absent) => absent.to_string(),
                None => Path::new(path)
                    .extension()
                    .map_or("it has no extension".to_owned(), |e| {
                        format!("unknown extension \".{}\"", e.to_string_lossy())
                    }),
            };
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
pub(crate) fn near_miss_field(
    fields: &Map<String, Value>,
    default: bool,
) -> Result<bool, ApiError> {
    match fields.get("nearMiss") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(must_be("nearMiss", "a boolean")),
    }
}

/// The `mode` field of a check's fields (`strict`, `mild` or `weak`, in
/// any case), or `default` (the server's `--mode`) when it is missing or
/// null.
pub(crate) fn mode_field(fields: &Map<String, Value>, default: Mode) -> Result<Mode, ApiError> {
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
    registry.lookup(name).ok_or_else(|| match registry.absent(name) {
        Some(absent) => ApiError::UnsupportedFormat(format!(
            "Unsupported format {name:?}: {absent}; supported formats: {}",
            registry.names().join(", ")
        )),
        None => ApiError::UnsupportedFormat(format!(
            "Unsupported format {name:?}; supported formats: {} (aliases and extensions such as js, ts, py and rs work too)",
            registry.names().join(", ")
        )),
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
pub(crate) fn diff_options(
    fields: &Map<String, Value>,
    defaults: DiffOptions,
) -> Result<DiffOptions, ApiError> {
    Ok(DiffOptions {
        mode: mode_field(fields, defaults.mode)?,
        near_miss: near_miss_field(fields, defaults.near_miss)?,
    })
}

/// The `diff` field of a diff check's fields: a string, which may be empty.
pub(crate) fn diff_field(fields: &Map<String, Value>) -> Result<&str, ApiError> {
    match fields.get("diff") {
        None => Err(ApiError::Validation("Missing required field: diff".into())),
        Some(Value::String(diff)) => Ok(diff),
        Some(_) => Err(must_be("diff", "a string")),
    }
}

/// The parameters of a tree query: `path`, `limit` and `offset`; anything
/// else is refused.
pub(crate) fn tree_query(fields: &Map<String, Value>, dir: &Path) -> Result<TreeQuery, ApiError> {
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

/// The `id` of a clone query: 16 hex digits, the only parameter.
pub(crate) fn clone_id(fields: &Map<String, Value>) -> Result<String, ApiError> {
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

/// The parameters of a clone list: `path`, `format`, `minTokens`, `limit`,
/// `cursor` and `fragments`, as query strings (`GET /api/clones`) or as
/// JSON values (MCP's `list_clones`); anything else is refused.
pub(crate) fn clones_query(
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

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::CONTENT_TYPE;
    use hyper::Request;

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
}
