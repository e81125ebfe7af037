//! Routing: one `match` on (method, path), plus the checks every request
//! passes first (browser `Origin` and `Host`, against DNS rebinding), the
//! panic guard around handlers, and the end of the grace period on stop.
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
use crate::interfaces::mcp;
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

async fn dispatch(
    state: Arc<State>,
    req: Request<Incoming>,
    method: Method,
    path: String,
) -> Result<Resp, ApiError> {
    // HEAD is answered like GET; hyper leaves the body out.
    let get = method == Method::GET || method == Method::HEAD;
    match (path.as_str(), &method) {
        ("/api/check", &Method::POST) => handlers::check(&state, req).await,
        ("/api/check-diff", &Method::POST) => handlers::check_diff(&state, req).await,
        ("/api/recheck", &Method::POST) => handlers::recheck(&state).await,
        ("/api/stats", _) if get => handlers::stats(&state).await,
        ("/api/clones", _) if get => handlers::clones(&state, req).await,
        ("/api/health", _) if get => Ok(handlers::health(&state)),
        ("/", _) if get => Ok(handlers::root(&state)),
        ("/mcp", &Method::POST) => mcp::serve(&state, req).await,
        // The stateless MCP transport has no stream to open (GET) and no
        // session to end (DELETE).
        ("/api/check" | "/api/check-diff" | "/api/recheck" | "/mcp", _) => {
            Err(ApiError::MethodNotAllowed {
                method,
                path,
                allow: "POST",
            })
        }
        ("/api/stats" | "/api/clones" | "/api/health" | "/", _) => {
            Err(ApiError::MethodNotAllowed {
                method,
                path,
                allow: "GET",
            })
        }
        _ => Err(ApiError::NotFound { method, path }),
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
