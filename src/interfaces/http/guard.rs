//! The browser guard: refuses what a page on another site could send
//! through a browser (DNS rebinding): an `Origin` or a `Host` that names
//! no host dupcheck serves. The router asks it of every request, and the
//! MCP endpoint of its own.

use hyper::header::{HOST, ORIGIN};
use hyper::Request;

use super::error::ApiError;
use super::State;
use crate::project::config::{origin_host, Config};

/// Refuses what a page on another site could send through a browser (DNS
/// rebinding; docs/api.md, "Origin and Host guard"): an `Origin` whose host is not one of
/// [`origin_hosts`]; and a `Host` that is not one of [`served_hosts`], when
/// those are named. `/api/health` is never refused.
pub(crate) fn check_browser<B>(
    state: &State,
    req: &Request<B>,
    path: &str,
) -> Result<(), ApiError> {
    if path == "/api/health" {
        return Ok(());
    }
    let config = state.workspace.scanner.config();
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
pub(crate) fn origin_hosts(config: &Config) -> Vec<String> {
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
pub(crate) fn served_hosts(config: &Config) -> Option<Vec<String>> {
    if config.host.is_unspecified() && config.allowed_hosts.is_empty() {
        return None;
    }
    let mut hosts = origin_hosts(config);
    hosts.extend(config.allowed_hosts.iter().cloned());
    Some(hosts)
}
