//! API errors: the one place where error responses are built.
//!
//! Every failure of a request is an [`ApiError`]; [`ApiError::into_response`]
//! writes `{"error": NAME, "message": TEXT, "statusCode": N}` with the same
//! status. Messages say what was wrong and how to fix it, never a panic
//! message or file content.

use std::fmt;

use hyper::header::{HeaderValue, ALLOW, RETRY_AFTER};
use hyper::{Method, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::{json_response, HttpResponse};
use crate::service::check::Refusal;
use crate::service::diff_check::DiffRefusal;
use crate::service::workspace::ServiceError;

/// The JSON body of every error response.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Error)]
pub(crate) struct ErrorBody<'a> {
    /// The error's name: `ValidationError`, `NotFound`, ….
    #[schema(examples("ValidationError"))]
    error: &'a str,
    /// What was wrong and how to fix it.
    #[schema(examples("Missing required field: code"))]
    message: String,
    /// The response's status code.
    #[schema(examples(400))]
    status_code: u16,
}

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// A bad body or field; the text says which.
    Validation(String),
    /// An unknown format; the text lists the known ones.
    UnsupportedFormat(String),
    /// A browser `Origin` that is not allowed.
    Forbidden { origin: String },
    /// A `Host` that is not allowed (DNS rebinding).
    ForbiddenHost { host: String },
    /// A request hyper could not parse: request line, header bytes, framing.
    BadRequest,
    /// A request target longer than hyper reads.
    UriTooLong,
    /// Request headers too large or too many.
    HeadersTooLarge,
    /// An HTTP/2 connection preface: only HTTP/1.1 is served.
    Http2,
    /// The request headers did not arrive in time.
    HeaderTimeout { timeout: std::time::Duration },
    /// No such route.
    NotFound { method: Method, path: String },
    /// A route's object (a folder, a clone) is not in the current index;
    /// the text says which and what to do.
    Missing(String),
    /// Known path, wrong method.
    MethodNotAllowed {
        method: Method,
        path: String,
        allow: &'static str,
    },
    /// The body is over `--max-body`.
    PayloadTooLarge { limit: u64 },
    /// A Content-Type the endpoint does not read.
    UnsupportedMediaType {
        /// The Content-Type sent.
        got: String,
        /// What the endpoint reads, as words.
        accepted: &'static str,
    },
    /// The client took too long to send its body.
    Timeout,
    /// The snippet or diff exceeds a parse or check budget; the text says
    /// which.
    TooComplex(String),
    /// The first scan has not finished.
    NotReady,
    /// Whole-project clone detection is running: files looked up so far,
    /// of how many.
    Detecting { done: usize, files: usize },
    /// Too many checks are running or waiting.
    Busy,
    /// The server is stopping and its grace period for requests is over.
    ShuttingDown,
    /// A rescan failed; the previous index keeps serving.
    Scan(String),
    /// A request the MCP transport refused (not JSON-RPC, not acceptable,
    /// an unsupported protocol version): its status and its reason.
    Mcp {
        /// The transport's status: a 4xx.
        status: StatusCode,
        /// The transport's reason, as it gave it.
        message: String,
    },
    /// `/api/repositories` on a server started without `--store`.
    NoStore,
    /// The store did not answer; the kind of its error (never its text,
    /// which could name what should stay private).
    StoreUnavailable { kind: &'static str },
    /// A bug; details go to the log, never to the client.
    Internal,
}

impl ApiError {
    /// The status code of the response.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Validation(_) | Self::UnsupportedFormat(_) | Self::BadRequest => {
                StatusCode::BAD_REQUEST
            }
            Self::Forbidden { .. } | Self::ForbiddenHost { .. } => StatusCode::FORBIDDEN,
            Self::UriTooLong => StatusCode::URI_TOO_LONG,
            Self::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::HeaderTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            Self::Http2 => StatusCode::HTTP_VERSION_NOT_SUPPORTED,
            Self::NotFound { .. } | Self::Missing(_) | Self::NoStore => StatusCode::NOT_FOUND,
            Self::StoreUnavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooComplex(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::NotReady | Self::Detecting { .. } | Self::Busy | Self::ShuttingDown => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::Scan(_) | Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Mcp { status, .. } => *status,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Validation(_) => "ValidationError",
            Self::UnsupportedFormat(_) => "UnsupportedFormat",
            Self::Forbidden { .. } | Self::ForbiddenHost { .. } => "Forbidden",
            Self::BadRequest => "BadRequest",
            Self::UriTooLong => "URITooLong",
            Self::HeadersTooLarge => "RequestHeaderFieldsTooLarge",
            Self::HeaderTimeout { .. } => "RequestTimeout",
            Self::Http2 => "HTTPVersionNotSupported",
            Self::NotFound { .. } | Self::Missing(_) | Self::NoStore => "NotFound",
            Self::StoreUnavailable { .. } => "StoreUnavailable",
            Self::MethodNotAllowed { .. } => "MethodNotAllowed",
            Self::Timeout => "RequestTimeout",
            Self::PayloadTooLarge { .. } => "PayloadTooLarge",
            Self::UnsupportedMediaType { .. } => "UnsupportedMediaType",
            Self::TooComplex(_) => "SnippetTooComplex",
            Self::NotReady | Self::Detecting { .. } => "NotReady",
            Self::Busy => "Busy",
            Self::ShuttingDown => "ShuttingDown",
            Self::Scan(_) => "ScanError",
            Self::Internal => "InternalError",
            Self::Mcp { status, .. } => match *status {
                StatusCode::BAD_REQUEST => "BadRequest",
                StatusCode::FORBIDDEN => "Forbidden",
                StatusCode::NOT_FOUND => "NotFound",
                StatusCode::NOT_ACCEPTABLE => "NotAcceptable",
                StatusCode::PAYLOAD_TOO_LARGE => "PayloadTooLarge",
                StatusCode::UNSUPPORTED_MEDIA_TYPE => "UnsupportedMediaType",
                _ => "McpError",
            },
        }
    }

    /// The JSON body: `{"error", "message", "statusCode"}`.
    pub fn body(&self) -> Vec<u8> {
        let body = ErrorBody {
            error: self.name(),
            message: self.to_string(),
            status_code: self.status().as_u16(),
        };
        // Strings and a number always serialize.
        serde_json::to_vec(&body).unwrap_or_default()
    }

    /// The JSON error response.
    pub(crate) fn into_response(self) -> HttpResponse {
        let mut res = json_response(self.status(), self.body());
        match self {
            Self::MethodNotAllowed { allow, .. } => {
                res.headers_mut()
                    .insert(ALLOW, HeaderValue::from_static(allow));
            }
            Self::NotReady | Self::Busy => {
                res.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            }
            Self::Detecting { .. } => {
                res.headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("5"));
            }
            _ => {}
        }
        res
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Validation(text)
            | Self::UnsupportedFormat(text)
            | Self::TooComplex(text)
            | Self::Missing(text) => {
                f.write_str(text)
            }
            Self::Mcp { message, .. } => f.write_str(message),
            Self::Forbidden { origin } => write!(
                f,
                "Origin {origin:?} is not allowed; requests from browsers must come from localhost, or start dupcheck with --allowed-origin for that host"
            ),
            Self::ForbiddenHost { host } => write!(
                f,
                "Host {host:?} is not served; use localhost or the address dupcheck is bound to, or start it with --allowed-host for that name"
            ),
            Self::BadRequest => f.write_str(
                "Malformed HTTP request: the request line, a header or the Content-Length could not be read",
            ),
            Self::UriTooLong => f.write_str("The request target is too long; send at most 65,534 bytes"),
            Self::HeadersTooLarge => f.write_str(
                "The request headers are too large or too many; send at most 100 headers and 400 KB",
            ),
            Self::Http2 => f.write_str("HTTP/2 is not served; send HTTP/1.1 requests"),
            Self::HeaderTimeout { timeout } => write!(
                f,
                "The request headers were not received in time; send them within {} seconds",
                timeout.as_secs()
            ),
            Self::NotFound { method, path } => write!(f, "Route {method} {path} not found"),
            Self::MethodNotAllowed { method, path, allow } => {
                write!(f, "Method {method} is not allowed on {path}; use {allow}")
            }
            Self::Timeout => f.write_str("The request body was not received in time; send it within 60 seconds"),
            Self::PayloadTooLarge { limit } => write!(
                f,
                "Request body is larger than the {} limit; send a smaller snippet or raise --max-body",
                human_size(*limit)
            ),
            Self::UnsupportedMediaType { got, accepted } => {
                write!(f, "Content-Type {got:?} is not supported; send {accepted}")
            }
            Self::NotReady => f.write_str("The initial scan is still running; retry shortly"),
            Self::Detecting { done, files } => write!(
                f,
                "Clone detection is still running ({done} of {files} files looked up); retry shortly, /api/health tells how far it has come"
            ),
            Self::Busy => f.write_str("Too many checks are running or waiting; retry shortly"),
            Self::ShuttingDown => f.write_str("The server is stopping; send the request to its next run"),
            Self::Scan(cause) => write!(f, "Rescan failed: {cause}; the previous index keeps serving"),
            Self::NoStore => f.write_str(
                "This server has no store; start it with --store URL (a PostgreSQL URL or connection string) to list the store's repositories",
            ),
            Self::StoreUnavailable { kind } => write!(
                f,
                "The store is unavailable ({kind}); retry shortly: the server reconnects by itself"
            ),
            Self::Internal => f.write_str("Internal server error; the server logged the details and keeps serving"),
        }
    }
}

impl From<DiffRefusal> for ApiError {
    fn from(refusal: DiffRefusal) -> ApiError {
        match refusal {
            DiffRefusal::Diff(_) => ApiError::Validation(refusal.to_string()),
            DiffRefusal::TooLarge { .. } | DiffRefusal::TooComplex(_) => {
                ApiError::TooComplex(refusal.to_string())
            }
            DiffRefusal::Busy => ApiError::Busy,
            DiffRefusal::Stopped => ApiError::ShuttingDown,
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        match refusal {
            Refusal::Busy => ApiError::Busy,
            Refusal::TooLarge { .. } | Refusal::Parse(_) | Refusal::MatchTimeout => {
                ApiError::TooComplex(refusal.to_string())
            }
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> ApiError {
        match error {
            ServiceError::NotReady => ApiError::NotReady,
            ServiceError::Detecting { done, files } => ApiError::Detecting { done, files },
            ServiceError::Refused(refusal) => refusal.into(),
            ServiceError::DiffRefused(refusal) => refusal.into(),
            ServiceError::Scan(message) => ApiError::Scan(message),
            ServiceError::NoSuchFolder(path) => no_such_folder(&path),
            ServiceError::NoSuchClone(id) => no_such_clone(&id),
            ServiceError::Internal => ApiError::Internal,
        }
    }
}

/// The answer to a tree query for a folder no indexed file is in.
pub(crate) fn no_such_folder(path: &str) -> ApiError {
    ApiError::Missing(format!(
        "No folder {path:?} holds an indexed file; send a folder of the tree (empty for the top)"
    ))
}

/// The answer to a query for a clone the current index does not have.
pub(crate) fn no_such_clone(id: &str) -> ApiError {
    ApiError::Missing(format!(
        "No clone {id} in the current index; the code changed since the list was read: list the clones again"
    ))
}

/// A byte count as `10mb`, `100kb` or `123 bytes`.
fn human_size(bytes: u64) -> String {
    if bytes > 0 && bytes.is_multiple_of(1 << 20) {
        format!("{}mb", bytes >> 20)
    } else if bytes > 0 && bytes.is_multiple_of(1 << 10) {
        format!("{}kb", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_the_option() {
        assert_eq!(human_size(10 << 20), "10mb");
        assert_eq!(human_size(100 << 10), "100kb");
        assert_eq!(human_size(1000), "1000 bytes");
    }
}
