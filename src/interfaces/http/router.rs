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
use crate::interfaces::{dashboard, mcp};
use crate::project::config::{origin_host, Config};
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
    /// `GET /`: the description of the endpoints, or for a browser
    /// (`Accept: text/html`) the dashboard.
    Root,
    /// `GET /dashboard/...`: a file the dashboard loads.
    DashboardAsset,
    /// `GET /api/tree`.
    Tree,
    /// `GET /api/clone`.
    CloneDetail,
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
    /// `POST /mcp`: the MCP endpoint. The stateless transport has no
    /// stream to open (GET) and no session to end (DELETE).
    Mcp,
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
        method: Method::GET,
        path: "/api/clone",
        endpoint: Endpoint::CloneDetail,
    },
    Route {
        method: Method::GET,
        path: "/api/tree",
        endpoint: Endpoint::Tree,
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
    Route {
        method: Method::POST,
        path: "/mcp",
        endpoint: Endpoint::Mcp,
    },
    Route {
        method: Method::GET,
        path: "/dashboard/app.js",
        endpoint: Endpoint::DashboardAsset,
    },
    Route {
        method: Method::GET,
        path: "/dashboard/style.css",
        endpoint: Endpoint::DashboardAsset,
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
        Endpoint::Root if dashboard::wants_html(&req) => Ok(dashboard::serve(&dashboard::PAGE)),
        Endpoint::Root => Ok(handlers::root(&state)),
        Endpoint::DashboardAsset => dashboard::asset(route.path)
            .map(dashboard::serve)
            .ok_or(ApiError::Internal),
        Endpoint::Tree => handlers::tree(&state, req).await,
        Endpoint::CloneDetail => handlers::clone_detail(&state, req).await,
        Endpoint::Health => Ok(handlers::health(&state)),
        Endpoint::Stats => handlers::stats(&state).await,
        Endpoint::Clones => handlers::clones(&state, req).await,
        Endpoint::Check => handlers::check(&state, req).await,
        Endpoint::CheckDiff => handlers::check_diff(&state, req).await,
        Endpoint::Recheck => handlers::recheck(&state).await,
        Endpoint::OpenApi => Ok(super::openapi::response(&state)),
        Endpoint::Mcp => mcp::serve(&state, req).await,
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
/// rebinding, SPEC 8): an `Origin` whose host is not one of
/// [`origin_hosts`]; and a `Host` that is not one of [`served_hosts`], when
/// those are named. `/api/health` is never refused.
fn check_browser<B>(state: &State, req: &Request<B>, path: &str) -> Result<(), ApiError> {
    if path == "/api/health" {
        return Ok(());
    }
    let config = state.scanner.config();
    let origins = origin_hosts(config);
    // Every Origin counts: a second one must not slip past the first.
    for origin in req.headers().get_all(ORIGIN) {
        let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        if !origin_host(&text).is_some_and(|host| origins.contains(&host)) {
            return Err(ApiError::Forbidden { origin: text });
        }
    }
    if let Some(served) = served_hosts(config) {
        for value in req.headers().get_all(HOST) {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            if !origin_host(&text).is_some_and(|host| served.contains(&host)) {
                return Err(ApiError::ForbiddenHost { host: text });
            }
        }
    }
    Ok(())
}

/// The hosts a browser's `Origin` may name, whatever its scheme and port:
/// loopback, the address dupcheck is bound to (unless unspecified) and
/// every `--allowed-origin`.
pub fn origin_hosts(config: &Config) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    if !config.host.is_unspecified() {
        hosts.push(config.host.to_string());
    }
    hosts.extend(config.allowed_origins.iter().cloned());
    hosts
}

/// The hosts a request's `Host` may name, whatever the port: `None` (any)
/// when dupcheck is bound to an unspecified address and given no
/// `--allowed-host`; else the [`origin_hosts`] and every `--allowed-host`.
pub fn served_hosts(config: &Config) -> Option<Vec<String>> {
    if config.host.is_unspecified() && config.allowed_hosts.is_empty() {
        return None;
    }
    let mut hosts = origin_hosts(config);
    hosts.extend(config.allowed_hosts.iter().cloned());
    Some(hosts)
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
