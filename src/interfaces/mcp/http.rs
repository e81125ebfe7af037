//! `POST /mcp`: the tools of [`super::Tools`] served through rmcp's
//! streamable HTTP transport, inside the router.
//!
//! In: a request the router has passed (Origin and Host guard, panic guard,
//! grace period). Its body is read through `--max-body` and the body time
//! limit, then handed to rmcp's `StreamableHttpService`, stateless and with
//! JSON responses: revision 2026-07-28 (`server/discover`, per-request
//! metadata) and the earlier ones (`initialize`,
//! `notifications/initialized`, `ping`). Out: rmcp's answer collected
//! within a size and time bound; the transport's own refusals (406, 415, a
//! bad protocol version) as dupcheck's JSON error body.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE;
use hyper::{Request, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::Tools;
use crate::interfaces::http::error::ApiError;
use crate::interfaces::http::guard::{origin_hosts, served_hosts};
use crate::interfaces::http::{body, HttpResponse, State};
use crate::project::config::Config;
use crate::service::check::MAX_FRAGMENT_BYTES;

/// The most bytes of an answer rmcp may give: its JSON holds the REST
/// answer (whose fragments the checks cap at [`MAX_FRAGMENT_BYTES`]),
/// escaped, and the summary.
const ANSWER_LIMIT: usize = 4 * MAX_FRAGMENT_BYTES;
/// How long rmcp may take to give its answer's body once it has answered:
/// a JSON answer is whole at once.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// POST /mcp: one JSON-RPC message through rmcp's stateless transport.
pub(crate) async fn serve(
    state: &Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let config = state.workspace.scanner.config();
    let (parts, body) = req.into_parts();
    let body = body::read_limited(&parts.headers, body, config.max_body).await?;
    let tools = Tools::local(Arc::clone(&state.workspace));
    let service = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        transport_config(config),
    );
    let answer = service
        .handle(Request::from_parts(parts, Full::new(body)))
        .await;
    collect(answer).await
}

/// rmcp's settings: stateless (no sessions, so no GET stream and no
/// DELETE), JSON answers, no SSE keep-alive; the body limit, and the
/// Origin and Host checks of the router (rmcp's own default leaves Origin
/// unchecked), as origins `http` and `https` on any port.
fn transport_config(config: &Config) -> StreamableHttpServerConfig {
    let bracketed = |host: &String| {
        if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        }
    };
    let origins: Vec<String> = origin_hosts(config)
        .iter()
        .flat_map(|host| {
            let host = bracketed(host);
            [format!("http://{host}:*"), format!("https://{host}:*")]
        })
        .collect();
    let settings = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .with_max_request_body_bytes(usize::try_from(config.max_body).unwrap_or(usize::MAX))
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    match served_hosts(config) {
        Some(hosts) => settings.with_allowed_hosts(hosts.iter().map(bracketed)),
        None => settings.disable_allowed_hosts(),
    }
}

/// rmcp's answer as the router's response, its body read within
/// [`ANSWER_LIMIT`] and [`ANSWER_TIMEOUT`]. JSON (JSON-RPC results and
/// errors) and empty answers pass as they are; a refusal in plain text
/// becomes an [`ApiError::Mcp`] (a 4xx) or, logged, [`ApiError::Internal`].
async fn collect(answer: Response<BoxBody<Bytes, Infallible>>) -> Result<HttpResponse, ApiError> {
    let (parts, body) = answer.into_parts();
    let read = tokio::time::timeout(ANSWER_TIMEOUT, Limited::new(body, ANSWER_LIMIT).collect())
        .await
        .map_err(|_| {
            tracing::error!("MCP answer not complete within {ANSWER_TIMEOUT:?}");
            ApiError::Internal
        })?;
    let bytes = read
        .map_err(|err| {
            tracing::error!("MCP answer not read: {err}");
            ApiError::Internal
        })?
        .to_bytes();
    let json = parts
        .headers
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let status = parts.status;
    if json || bytes.is_empty() || !(status.is_client_error() || status.is_server_error()) {
        return Ok(Response::from_parts(parts, Full::new(bytes)));
    }
    let message = String::from_utf8_lossy(&bytes).trim().to_owned();
    if status.is_server_error() {
        tracing::error!("MCP transport: {status} {message}");
        return Err(ApiError::Internal);
    }
    Err(ApiError::Mcp { status, message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interfaces::http::handlers::tests::initializing;

    #[tokio::test]
    async fn rmcp_checks_the_origins_and_hosts_of_the_router() {
        let (_dir, state) = initializing();
        let config = state.workspace.scanner.config();
        // The default: bound to 0.0.0.0, so any Host, and loopback origins.
        let settings = transport_config(config);
        assert_eq!(
            settings.allowed_origins,
            [
                "http://localhost:*",
                "https://localhost:*",
                "http://127.0.0.1:*",
                "https://127.0.0.1:*",
                "http://[::1]:*",
                "https://[::1]:*"
            ]
        );
        assert!(settings.allowed_hosts.is_empty());
        let mut named = config.clone();
        named.allowed_hosts = vec!["tools.internal".into()];
        let settings = transport_config(&named);
        assert_eq!(
            settings.allowed_hosts,
            ["localhost", "127.0.0.1", "[::1]", "tools.internal"]
        );
    }
}
