//! Routing: one `match` on (method, path), plus the checks every request
//! passes first (browser `Origin`), and the panic guard around handlers.
//!
//! Invariant: a panic inside a handler becomes a logged 500 for that request
//! only; the server keeps serving.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::ORIGIN;
use hyper::{Method, Request};

use super::error::ApiError;
use super::{handlers, Resp, State};
use crate::config::origin_host;
use crate::scan::panic_message;

/// Answers one request.
pub async fn route(state: Arc<State>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let started = std::time::Instant::now();
    let answer = match check_origin(&state, &req, &path) {
        Err(err) => Err(err),
        Ok(()) => guarded(dispatch(state, req, method.clone(), path.clone())).await,
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
        ("/api/recheck", &Method::POST) => handlers::recheck(&state).await,
        ("/api/stats", _) if get => handlers::stats(&state).await,
        ("/api/health", _) if get => Ok(handlers::health(&state)),
        ("/", _) if get => Ok(handlers::root(&state)),
        ("/api/check" | "/api/recheck", _) => Err(ApiError::MethodNotAllowed {
            method,
            path,
            allow: "POST",
        }),
        ("/api/stats" | "/api/health" | "/", _) => Err(ApiError::MethodNotAllowed {
            method,
            path,
            allow: "GET",
        }),
        _ => Err(ApiError::NotFound { method, path }),
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

/// Refuses browser requests from hosts other than loopback, the bound host
/// and `--allowed-origin` ones (DNS rebinding). `/api/health` is never refused.
fn check_origin(state: &State, req: &Request<Incoming>, path: &str) -> Result<(), ApiError> {
    let Some(origin) = req.headers().get(ORIGIN) else {
        return Ok(());
    };
    if path == "/api/health" {
        return Ok(());
    }
    let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
    let config = state.scanner.config();
    let allowed = origin_host(&text).is_some_and(|host| {
        matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1")
            || (!config.host.is_unspecified() && host == config.host.to_string())
            || config.allowed_origins.contains(&host)
    });
    if allowed {
        Ok(())
    } else {
        Err(ApiError::Forbidden { origin: text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
