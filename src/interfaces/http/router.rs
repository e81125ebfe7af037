//! Routing: each request, once the browser guard ([`super::guard`]) lets
//! it in, dispatched by the table of routes ([`super::routes::ROUTES`]) to
//! its handler, inside the panic guard, until the grace period of a stop
//! ends.
//!
//! Invariants: a panic inside a handler becomes a logged 500 for that request
//! only, and the server keeps serving; once the grace period of a stop is
//! over, every request still in flight is answered 503 at once.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Method, Request};

use super::error::ApiError;
use super::guard::check_browser;
use super::routes::{Endpoint, ROUTES};
use super::{handlers, HttpResponse, State};
use crate::interfaces::{dashboard, mcp};
use crate::panic_message;

/// Answers one request.
pub(crate) async fn route(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
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
) -> Result<HttpResponse, ApiError> {
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
        Endpoint::Health => Ok(handlers::health(&state).await),
        Endpoint::Repositories => handlers::repositories(&state).await,
        Endpoint::Stats => handlers::stats(&state).await,
        Endpoint::Clones => handlers::clones(&state, req).await,
        Endpoint::Check => handlers::check(&state, req).await,
        Endpoint::CheckDiff => handlers::check_diff(&state, req).await,
        Endpoint::Recheck => handlers::recheck(&state).await,
        Endpoint::OpenApi => Ok(super::openapi::response(&state)),
        Endpoint::Mcp => mcp::http::serve(&state, req).await,
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
pub(crate) async fn guarded<F>(handler: F) -> Result<HttpResponse, ApiError>
where
    F: Future<Output = Result<HttpResponse, ApiError>> + Send + 'static,
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
