//! The dashboard: a page for browsers over the public API, embedded in the
//! binary (`GET /` with `Accept: text/html`, its script and style sheet).
//!
//! In: a request for one of [`ASSETS`]. Out: the file as it was compiled in,
//! with its media type and headers that keep it to this origin (a
//! Content-Security-Policy allowing only this server's own script, style
//! and API). The page itself reads `/api/health`, `/api/stats`,
//! `/api/tree`, `/api/clones`, `/api/clone` and `POST /api/check`, as any
//! client does: this module computes nothing.
//!
//! Invariants: nothing is fetched from elsewhere (no CDN, no font); the
//! files are plain HTML, CSS and a JavaScript module, with no build step.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ACCEPT, CACHE_CONTROL, CONTENT_TYPE, VARY};
use hyper::{Request, Response, StatusCode};

use crate::interfaces::http::HttpResponse;

/// One embedded file.
#[derive(Debug)]
pub(crate) struct Asset {
    /// The path it is served at.
    pub path: &'static str,
    /// Its media type.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static str,
}

/// The page, served at `/` to browsers.
pub(crate) const PAGE: Asset = Asset {
    path: "/",
    content_type: "text/html; charset=utf-8",
    body: include_str!("index.html"),
};

/// The files the page loads.
pub(crate) const ASSETS: &[Asset] = &[
    Asset {
        path: "/dashboard/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("app.js"),
    },
    Asset {
        path: "/dashboard/style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("style.css"),
    },
];

/// What the page may load and where it may send requests: this server
/// only. Scripts and styles come from its files (no inline code); the
/// treemap is inline SVG, which needs no source.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/// Whether `req` is a browser asking for a page: its `Accept` names
/// `text/html`.
pub(crate) fn wants_html<B>(req: &Request<B>) -> bool {
    req.headers().get_all(ACCEPT).iter().any(|value| {
        String::from_utf8_lossy(value.as_bytes())
            .split(',')
            .filter_map(|range| range.split(';').next())
            .any(|essence| essence.trim().eq_ignore_ascii_case("text/html"))
    })
}

/// The response serving `asset`.
pub(crate) fn serve(asset: &Asset) -> HttpResponse {
    let mut res = Response::new(Full::new(Bytes::from_static(asset.body.as_bytes())));
    *res.status_mut() = StatusCode::OK;
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    // The page changes with the binary: always revalidate.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("content-security-policy", HeaderValue::from_static(POLICY));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    if asset.path == "/" {
        // `/` answers JSON or the page by `Accept`.
        headers.insert(VARY, HeaderValue::from_static("Accept"));
    }
    res
}

/// The embedded file served at `path`.
pub(crate) fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_the_page_and_api_clients_the_json() {
        let wants = |accept: Option<&str>| {
            let mut req = Request::builder().uri("/");
            if let Some(accept) = accept {
                req = req.header(ACCEPT, accept);
            }
            wants_html(&req.body(()).unwrap())
        };
        assert!(wants(Some(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        )));
        assert!(wants(Some("TEXT/HTML")));
        assert!(!wants(Some("*/*")));
        assert!(!wants(Some("application/json")));
        assert!(!wants(None));
    }

    #[test]
    fn the_page_loads_only_embedded_files() {
        for asset in ASSETS {
            assert!(
                PAGE.body.contains(asset.path),
                "{} is not loaded by the page",
                asset.path
            );
        }
        // The SVG namespace is a name, never fetched.
        for asset in std::iter::once(&PAGE).chain(ASSETS) {
            let text = asset.body.replace("http://www.w3.org/2000/svg", "");
            assert!(
                !text.contains("http://")
                    && !text.contains("https://")
                    && !text.contains("@import"),
                "{} loads something from elsewhere",
                asset.path
            );
        }
    }
}
