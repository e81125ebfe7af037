//! Request bodies: read through a size limit and a time limit, their
//! content type told apart (JSON, a form, a diff as text), decoded into
//! fields; query strings decoded likewise. In: the request. Out: the
//! fields as a JSON object, or the raw diff, or an [`ApiError`].

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{HeaderMap, Request};
use serde_json::{Map, Value};

use super::error::ApiError;

/// How long a client may take to send its body.
const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// Reads a JSON or form body into an object, within the size and time limits.
pub(crate) async fn read_object(
    req: Request<Incoming>,
    max_body: u64,
) -> Result<Map<String, Value>, ApiError> {
    let kind = BodyKind::of(&req)?;
    let bytes = read_body(req, max_body).await?;
    decode_object(kind, &bytes)
}

/// Reads a body whole, within the size and time limits.
pub(crate) async fn read_body(req: Request<Incoming>, max_body: u64) -> Result<Bytes, ApiError> {
    let (parts, body) = req.into_parts();
    read_limited(&parts.headers, body, max_body).await
}

/// Reads `body`, sent with `headers`, whole within the size limit
/// `max_body` and the body time limit: a declared `Content-Length` over the
/// limit is refused before reading.
pub(crate) async fn read_limited(
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
pub(crate) fn content_type<B>(req: &Request<B>) -> Option<(String, String)> {
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

/// Whether a form body holds the fields of a diff check (`diff=`, maybe
/// `mode=` and `nearMiss=`, in any order) rather than a diff sent as it is.
pub(crate) fn is_diff_form(bytes: &[u8]) -> bool {
    bytes.starts_with(b"diff=")
        || (bytes.starts_with(b"mode=") || bytes.starts_with(b"nearMiss=")) && bytes.contains(&b'&')
}

pub(crate) fn parse_json_object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
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
pub(crate) fn parse_form(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
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

/// The parameters of a query string as an object of strings, refusing
/// repeated names.
pub(crate) fn query_fields(query: &str) -> Result<Map<String, Value>, ApiError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
