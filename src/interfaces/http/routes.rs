//! The routes: one table ([`ROUTES`]: method, path, endpoint) that the
//! dispatcher (`router`), the OpenAPI document and the tests read. Plain
//! data; nothing here serves.

use hyper::Method;

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
    /// `GET /api/repositories`: the store's repositories.
    Repositories,
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
        path: "/api/repositories",
        endpoint: Endpoint::Repositories,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
