//! Routing: one table of routes ([`ROUTES`]: method, path, endpoint) that
//! the dispatcher, the OpenAPI document and the tests read, plus the checks
//! every request passes first (browser `Origin` and `Host`, against DNS
//! rebinding), the panic guard around handlers, and the end of the grace
//! period on stop.
//!
//! Invariants: a panic inside a handler becomes a logged 500 for that request
//! only, and the server keeps serving; once the grace period of a stop is
//! over, every request still in flight is answered 503 at once.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{HOST, ORIGIN};
use hyper::{Method, Request};

use super::error::ApiError;
use super::{handlers, Resp, State};
use crate::project::config::origin_host;
use crate::project::scan::panic_message;

/// Answers one request.
pub async fn route(state: Arc<State>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let method = req.method().clone();
    let path = route_of(req.uri().path()).to_owned();
    let started = std::time::Instant::now();
    let answer = match check_browser(&state, &req, &path) {
        Err(err) => Err(err),
        Ok(()) => {
            let mut grace_over = state.grace_over.clone();
            tokio::select! {
                answer = guarded(dispatch(Arc::clone(&state), req, method.clone(), path.clone())) => answer,
                Ok(_) = grace_over.wait_for(|over| *over) => Err(ApiError::ShuttingDown),
            }
        }
    };
    let res = answer.unwrap_or_else(ApiError::into_response);
    tracing::debug!(
        "{method} {path} -> {} in {:?}",
        res.status().as_u16(),
        started.elapsed()
    );
    Ok(res)
}

/// What a route calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET /`: the description of the endpoints.
    Root,
    /// `GET /api/health`.
    Health,
    /// `GET /api/stats`.
    Stats,
    /// `GET /api/clones`.
    Clones,
    /// `POST /api/check`.
    Check,
    /// `POST /api/check-diff`.
    CheckDiff,
    /// `POST /api/recheck`.
    Recheck,
    /// `GET /api/openapi.json`: the OpenAPI document of these routes.
    OpenApi,
}

/// One route: the method and path of an endpoint. A GET route answers
/// HEAD too.
#[derive(Debug)]
pub struct Route {
    /// The method it serves.
    pub method: Method,
    /// The path, exactly.
    pub path: &'static str,
    /// What it calls.
    pub endpoint: Endpoint,
}

/// Every route of the server, one per path: the dispatcher serves these
/// and only these, and the OpenAPI document describes each (a test holds
/// both to this table).
pub const ROUTES: &[Route] = &[
    Route {
        method: Method::GET,
        path: "/",
        endpoint: Endpoint::Root,
    },
    Route {
        method: Method::GET,
        path: "/api/health",
        endpoint: Endpoint::Health,
    },
    Route {
        method: Method::GET,
        path: "/api/stats",
        endpoint: Endpoint::Stats,
    },
    Route {
        method: Method::GET,
        path: "/api/clones",
        endpoint: Endpoint::Clones,
    },
    Route {
        method: Method::POST,
        path: "/api/check",
        endpoint: Endpoint::Check,
    },
    Route {
        method: Method::POST,
        path: "/api/check-diff",
        endpoint: Endpoint::CheckDiff,
    },
    Route {
        method: Method::POST,
        path: "/api/recheck",
        endpoint: Endpoint::Recheck,
    },
    Route {
        method: Method::GET,
        path: "/api/openapi.json",
        endpoint: Endpoint::OpenApi,
    },
];

async fn dispatch(
    state: Arc<State>,
    req: Request<Incoming>,
    method: Method,
    path: String,
) -> Result<Resp, ApiError> {
    let Some(route) = ROUTES.iter().find(|r| r.path == path) else {
        return Err(ApiError::NotFound { method, path });
    };
    // HEAD is answered like GET; hyper leaves the body out.
    let head_of_get = method == Method::HEAD && route.method == Method::GET;
    if method != route.method && !head_of_get {
        return Err(ApiError::MethodNotAllowed {
            method,
            path,
            allow: route.method.as_str(),
        });
    }
    match route.endpoint {
        Endpoint::Root => Ok(handlers::root(&state)),
        Endpoint::Health => Ok(handlers::health(&state)),
        Endpoint::Stats => handlers::stats(&state).await,
        Endpoint::Clones => handlers::clones(&state, req).await,
        Endpoint::Check => handlers::check(&state, req).await,
        Endpoint::CheckDiff => handlers::check_diff(&state, req).await,
        Endpoint::Recheck => handlers::recheck(&state).await,
        Endpoint::OpenApi => Ok(super::openapi::response(&state)),
    }
}

/// The route a request path names: trailing slashes do not count
/// (`/api/health/` is `/api/health`), as in jscpd-server.
fn route_of(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" => "/",
        route => route,
    }
}

/// Runs a handler in its own task, so that a panic in it is caught and
/// answered as a 500 instead of closing the connection.
pub async fn guarded<F>(handler: F) -> Result<Resp, ApiError>
where
    F: Future<Output = Result<Resp, ApiError>> + Send + 'static,
{
    match tokio::spawn(handler).await {
        Ok(answer) => answer,
        Err(err) => {
            let why = if err.is_panic() {
                panic_message(&*err.into_panic()).to_owned()
            } else {
                err.to_string()
            };
            tracing::error!("request handler failed: {why}");
            Err(ApiError::Internal)
        }
    }
}

/// Refuses what a page on another site could send through a browser (DNS
/// rebinding, SPEC 8): an `Origin` whose host is not loopback, the bound
/// host or an `--allowed-origin`; and, when bound to a specific address or
/// given allowed hosts, a `Host` that is none of those nor an
/// `--allowed-host`. `/api/health` is never refused.
fn check_browser<B>(state: &State, req: &Request<B>, path: &str) -> Result<(), ApiError> {
    if path == "/api/health" {
        return Ok(());
    }
    let config = state.scanner.config();
    let bound = (!config.host.is_unspecified()).then(|| config.host.to_string());
    let known = |host: &str| {
        matches!(host, "localhost" | "127.0.0.1" | "::1")
            || bound.as_deref() == Some(host)
            || config.allowed_origins.iter().any(|h| h == host)
    };
    // Every Origin counts: a second one must not slip past the first.
    for origin in req.headers().get_all(ORIGIN) {
        let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        if !origin_host(&text).is_some_and(|host| known(&host)) {
            return Err(ApiError::Forbidden { origin: text });
        }
    }
    let guards_host = bound.is_some() || !config.allowed_hosts.is_empty();
    if guards_host {
        for value in req.headers().get_all(HOST) {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            let served = origin_host(&text)
                .is_some_and(|host| known(&host) || config.allowed_hosts.contains(&host));
            if !served {
                return Err(ApiError::ForbiddenHost { host: text });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_slashes_name_the_same_route() {
        for (path, route) in [
            ("/", "/"),
            ("//", "/"),
            ("/api/health/", "/api/health"),
            ("/api/clones//", "/api/clones"),
            ("/api/check", "/api/check"),
        ] {
            assert_eq!(route_of(path), route, "{path}");
        }
    }

    #[test]
    fn every_path_has_one_route() {
        for (i, route) in ROUTES.iter().enumerate() {
            assert!(
                ROUTES[..i].iter().all(|r| r.path != route.path),
                "{} is routed twice",
                route.path
            );
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_is_a_500_and_the_runtime_survives() {
        let answer = guarded(async { panic!("boom") }).await;
        assert_eq!(answer.unwrap_err(), ApiError::Internal);
        let res = guarded(async { Ok(super::super::json(hyper::StatusCode::OK, &1)) })
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }
}
