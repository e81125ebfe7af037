//! HTTP: the jscpd-server-compatible API over hyper 1.x.
//!
//! [`server`] binds and accepts connections, [`router`] maps (method, path)
//! to [`handlers`] through one table of routes ([`routes`]), after the
//! browser guard ([`guard`]), [`error`] turns every
//! failure into the one JSON error shape, and [`openapi`] describes it all
//! as an OpenAPI 3.1 document. Handlers read the current snapshot and run CPU work on the blocking
//! pool, never on the reactor.

pub mod body;
pub mod conn;
pub mod error;
pub mod guard;
pub mod handlers;
pub mod openapi;
pub mod output;
pub mod request;
pub mod router;
pub mod routes;
pub mod server;

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use crate::service::workspace::Workspace;
use crate::store::live::Live;

/// Every response of the server.
pub(crate) type HttpResponse = Response<Full<Bytes>>;

/// What handlers share.
pub(crate) struct State {
    /// The project served, and the calls every interface makes on it.
    pub workspace: Arc<Workspace>,
    /// Turns true when the grace period of a stop is over: requests still
    /// in flight are answered 503.
    pub grace_over: tokio::sync::watch::Receiver<bool>,
    /// The PostgreSQL store of other repositories (`--store`), if any.
    pub store: Option<Arc<Live>>,
}

/// A JSON response with `status`.
pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> HttpResponse {
    typed_response(status, "application/json; charset=utf-8", body)
}

/// A response with `status` whose body is of `content_type`.
pub(crate) fn typed_response(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
) -> HttpResponse {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    res
}

/// Serializes `value` as a JSON response with `status`.
pub(crate) fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> HttpResponse {
    match serde_json::to_vec(value) {
        Ok(body) => json_response(status, body),
        Err(err) => {
            tracing::error!("cannot serialize a response: {err}");
            error::ApiError::Internal.into_response()
        }
    }
}
