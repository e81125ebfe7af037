//! The OpenAPI 3.1 document of the HTTP API, served at
//! `GET /api/openapi.json`.
//!
//! In: the routes of [`ROUTES`], the answer types of [`handlers`] and the
//! engine (`#[derive(ToSchema)]` next to their `Serialize`), and the
//! server's [`Config`] and [`Registry`] for the examples. Out: the document,
//! built by `utoipa` on the first request and served from memory after.
//!
//! Each operation is described by a `#[utoipa::path]` on a function of
//! `operations` (never called: the handlers stay as they are); its error
//! responses are added from one table, `errors_of`, whose examples are
//! real [`ApiError`] bodies, most of them made by the same functions that
//! refuse real requests (`handlers::validate`, `handlers::decode_diff`,
//! `handlers::clones_query`, …). Each status's errors are one response of
//! `components.responses`, shared by the operations that answer them.
//!
//! Invariants (tests in `tests/it/openapi.rs`): the document validates
//! against the OpenAPI 3.1 schema; every route of [`ROUTES`] is in it with
//! its method and every operation in it is routed; the answers of a real
//! server validate against the schemas it gives for their status, and so
//! do its examples.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use hyper::{Request, StatusCode};
use serde_json::{json, Value};
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{AdditionalProperties, AllOfBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, Ref, RefOr, Response, ResponseBuilder};
use utoipa::OpenApi;

use super::body::{BodyKind, DiffBodyKind};
use super::error::ApiError;
use super::error::{no_such_clone, no_such_folder};
use super::handlers;
use super::output::Output;
use super::request;
use super::routes::{Endpoint, ROUTES};
use super::{json_response, HttpResponse, State};
use crate::engine::grammar::Registry;
use crate::project::config::Config;
use crate::service::check::{max_snippet_len, Refusal};
use crate::service::diff_check::{DiffOptions, DiffRefusal};

/// `GET /api/openapi.json`: the document, built on the first request.
pub fn response(state: &State) -> HttpResponse {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    let scanner = &state.workspace.scanner;
    let body = DOCUMENT.get_or_init(|| {
        serde_json::to_vec(&document(scanner.config(), scanner.registry()))
            .expect("an OpenAPI document is strings, maps and JSON values: it serializes")
    });
    json_response(StatusCode::OK, body.clone())
}

/// The OpenAPI document of the API of a server with `config`.
pub fn document(config: &Config, registry: &Registry) -> Document {
    let mut doc = ApiDoc::openapi();
    let errors = ErrorExamples::new(config, registry);
    // Each status's errors are one response of `components.responses`,
    // named for its kinds and shared by the operations that answer them.
    let mut shared = BTreeMap::new();
    for (path, item) in doc.paths.paths.iter_mut() {
        let Some(route) = ROUTES.iter().find(|r| r.path == path.as_str()) else {
            continue;
        };
        let operation = match route.method.as_str() {
            "GET" => item.get.as_mut(),
            "POST" => item.post.as_mut(),
            _ => None,
        };
        let Some(operation) = operation else {
            continue;
        };
        for (status, kinds) in errors.by_status(&errors_of(route.endpoint)) {
            let name = kinds
                .iter()
                .map(|kind| format!("{kind:?}"))
                .collect::<Vec<_>>()
                .join("Or");
            let reference = RefOr::Ref(Ref::from_response_name(name.as_str()));
            operation
                .responses
                .responses
                .insert(status.to_string(), reference);
            shared
                .entry(name)
                .or_insert_with(|| errors.response(status, &kinds));
        }
    }
    // The errors of no route: what any request can get.
    for kind in [
        Kind::NotFound,
        Kind::MethodNotAllowed,
        Kind::HttpVersionNotSupported,
    ] {
        for (status, kinds) in errors.by_status(&[kind]) {
            shared.insert(format!("{kind:?}"), errors.response(status, &kinds));
        }
    }
    let components = doc.components.get_or_insert_with(Default::default);
    components.responses.extend(
        shared
            .into_iter()
            .map(|(name, response)| (name, RefOr::T(response))),
    );
    // `GET /` answers the same everywhere but for the formats: its example
    // is its real answer.
    let root = doc.paths.paths.get_mut("/").and_then(|r| r.get.as_mut());
    if let Some(RefOr::T(ok)) = root.and_then(|get| get.responses.responses.get_mut("200")) {
        if let Some(RefOr::T(content)) = ok.content.get_mut("application/json") {
            content.example = serde_json::to_value(handlers::root_body(registry)).ok();
        }
    }
    doc
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "dupcheck",
        description = "dupcheck keeps a fingerprint index of one directory's source files and answers, for a snippet or a diff, every place in that code it duplicates.\n\nEvery answer and error is JSON unless the request asks for SARIF or rdjsonl (the checks). Every error body is `{\"error\", \"message\", \"statusCode\"}` with the response's status. Besides the errors each operation lists, any request can get the responses `NotFound` (404: no such route), `MethodNotAllowed` (405: a known path with another method; `Allow` names the method) and `HttpVersionNotSupported` (505: HTTP/2) of `components.responses`. A GET route answers HEAD too, and a trailing slash is ignored (`/api/health/`). Requests with an `Origin` header are served only from loopback origins, the bound host or an `--allowed-origin` (403 otherwise; `/api/health` is never refused).",
        license(name = "MIT", identifier = "MIT"),
    ),
    // The server that serves the document: clients resolve `/` against
    // the document's own address.
    servers((url = "/", description = "This dupcheck server")),
    // No authentication: the server trusts its network (bind it to
    // loopback, see --host); `{}` says so explicitly.
    security(()),
    paths(
        operations::root,
        operations::health,
        operations::stats,
        operations::clones,
        operations::clone_detail,
        operations::tree,
        operations::check,
        operations::check_diff,
        operations::recheck,
        operations::openapi,
        operations::mcp,
        operations::dashboard_script,
        operations::dashboard_style,
    ),
    components(schemas(super::error::ErrorBody, Output)),
    tags(
        (name = "checks", description = "Does this code already exist here? Snippets and diffs against the index."),
        (name = "project", description = "The indexed directory: statistics and rescans."),
        (name = "server", description = "What the server is and how it is doing."),
        (name = "dashboard", description = "The page browsers get at `/` and the files it loads."),
    ),
)]
struct ApiDoc;

/// The operations, one function each for `#[utoipa::path]` to describe.
/// Their bodies are empty: the router calls `handlers`, not these.
#[allow(dead_code, reason = "read by utoipa's macros, never called")]
mod operations {
    use utoipa::ToSchema;

    use super::{OpenApiDocument, SarifLog};
    use crate::interfaces::http::handlers::{HealthBody, RecheckBody, RootBody};
    use crate::interfaces::http::output::Output;
    use crate::interfaces::render::answers::{CheckBody, DiffBody as DiffCheckBody, StatsBody};
    use crate::service::clones::{CloneDetail, ClonesPage};
    use crate::service::tree::Folder;

    /// The body of `POST /api/check`, as JSON or as a form
    /// (`application/x-www-form-urlencoded`, where `recheck` is `true` or
    /// `false`). Fields are validated in this order: `code`, `format` (or
    /// `path`), the others; a field that is `null` is as if absent.
    #[derive(ToSchema)]
    pub struct CheckRequest {
        /// The snippet; not empty or only whitespace.
        #[schema(min_length = 1)]
        code: String,
        /// A format name, alias or extension (`javascript`, `js`, `ts`,
        /// `py`, …). May be left out when `path` has a known extension.
        format: Option<String>,
        /// Rescan the directory first, and check against the new index.
        recheck: Option<bool>,
        /// The snippet's own file, relative to the directory or absolute
        /// inside it: matches against that file are not reported, and an
        /// editor's next check of it reparses only what changed.
        path: Option<String>,
        /// How much a copy must agree with the snippet: `strict` (same
        /// identifiers and literals), `mild` (identifiers may differ) or
        /// `weak` (literals too). Defaults to the server's `--mode`.
        mode: Option<CheckMode>,
        /// Find near-miss copies (a few statements inserted, deleted or
        /// changed) as one duplication with `similarity` and `gaps`.
        /// Defaults to `true`, `false` when the server runs with
        /// `--no-near-miss`; `false` reports only their exact parts.
        #[schema(rename = "nearMiss")]
        near_miss: Option<bool>,
    }

    /// The body of `POST /api/check-diff` as JSON or as a form
    /// (`diff=...&mode=...&nearMiss=...`).
    #[derive(ToSchema)]
    pub struct DiffRequest {
        /// What `git diff` prints.
        diff: String,
        /// How much a copy must agree with the added code: `strict`,
        /// `mild` or `weak`, as in `POST /api/check`. Defaults to the
        /// server's `--mode`.
        mode: Option<CheckMode>,
        /// Find near-miss copies of the added code (a few statements
        /// inserted, deleted or changed) as one duplication with
        /// `similarity` and `gaps`, as in `POST /api/check`. Defaults to
        /// `true`, `false` when the server runs with `--no-near-miss`.
        #[schema(rename = "nearMiss")]
        near_miss: Option<bool>,
    }

    /// A detection mode (docs/matching.md, "Tokens and modes").
    #[derive(ToSchema)]
    #[schema(rename_all = "lowercase")]
    pub enum CheckMode {
        /// Copies that differ only in layout and comments.
        Strict,
        /// Also copies whose identifiers are renamed.
        Mild,
        /// Also copies whose identifiers and literals are changed.
        Weak,
    }

    const DIFF_EXAMPLE: &str = "diff --git a/src/merge.js b/src/merge.js\nnew file mode 100644\nindex 0000000..3b18e51\n--- /dev/null\n+++ b/src/merge.js\n@@ -0,0 +1,3 @@\n+function merge(a, b) {\n+  return Object.assign({}, a, b);\n+}\n";

    /// The description of the endpoints, or the dashboard.
    ///
    /// The name and version, what each endpoint does, and the formats
    /// dupcheck reads. A browser (`Accept` naming `text/html`) gets the
    /// dashboard instead: a page over this API (state, folder treemap and
    /// table, clones side by side, a snippet check), kept current while
    /// the index changes.
    #[utoipa::path(
        get,
        path = "/",
        operation_id = "describe",
        tag = "server",
        responses((status = 200, description = "The description, or for a browser the dashboard", content(
            (RootBody = "application/json"),
            (String = "text/html"),
        ))),
    )]
    pub fn root() {}

    /// The dashboard's script.
    ///
    /// A JavaScript module, embedded in the binary.
    #[utoipa::path(
        get,
        path = "/dashboard/app.js",
        operation_id = "dashboardScript",
        tag = "dashboard",
        responses((status = 200, description = "The script", content((String = "text/javascript")))),
    )]
    pub fn dashboard_script() {}

    /// The dashboard's style sheet.
    ///
    /// Embedded in the binary.
    #[utoipa::path(
        get,
        path = "/dashboard/style.css",
        operation_id = "dashboardStyle",
        tag = "dashboard",
        responses((status = 200, description = "The style sheet", content((String = "text/css")))),
    )]
    pub fn dashboard_style() {}

    /// One folder of the project and its children.
    ///
    /// The folder's files, lines, duplicated lines and clones, and a page
    /// of its children (sub-folders and files) with the same figures, most
    /// lines first: what the dashboard's treemap draws. A folder's figures
    /// sum its files' rows of `GET /api/stats`; a clone counts once in
    /// each child holding a place of it. Query parameters may appear once
    /// each; an empty one is as if absent.
    #[utoipa::path(
        get,
        path = "/api/tree",
        operation_id = "tree",
        tag = "project",
        params(
            ("path" = Option<String>, Query, description = "The folder, relative to the directory (or absolute inside it); absent or empty for the top", example = "src"),
            ("limit" = Option<u32>, Query, minimum = 1, maximum = 2000, description = "Children on the page: 1 to 2,000, 200 if absent", example = 50),
            ("offset" = Option<u32>, Query, description = "Children to skip: the answer's `nextOffset`; 0 if absent"),
        ),
        responses((status = 200, description = "The folder and a page of its children", body = Folder, example = json!({
            "folder": {"name": "src", "path": "src", "kind": "folder", "files": 3, "lines": 120, "duplicatedLines": 30, "percentage": 25, "clones": 2, "format": null},
            "children": [
                {"name": "util", "path": "src/util", "kind": "folder", "files": 2, "lines": 80, "duplicatedLines": 30, "percentage": 37.5, "clones": 2, "format": null},
                {"name": "main.js", "path": "src/main.js", "kind": "file", "files": 1, "lines": 40, "duplicatedLines": 0, "percentage": 0, "clones": 0, "format": "javascript"}
            ],
            "totalChildren": 2,
            "nextOffset": null
        }))),
    )]
    pub fn tree() {}

    /// One clone with both places' text.
    ///
    /// A clone of `GET /api/clones` by its `id`: both places' whole lines
    /// and the position of each of their tokens (the matched code, for a
    /// side-by-side view to highlight), and which token pairs differ in
    /// their text (renamed in `mild` or `weak` mode).
    #[utoipa::path(
        get,
        path = "/api/clone",
        operation_id = "clone",
        tag = "project",
        params(("id" = String, Query, description = "The clone's `id`, from `GET /api/clones`", example = "9f2c4e1a7b3d5086")),
        responses((status = 200, description = "The clone", body = CloneDetail, example = json!({
            "id": "9f2c4e1a7b3d5086",
            "format": "javascript",
            "tokens": 8,
            "lines": 1,
            "first": {"file": "src/a.js", "startLine": 3, "endLine": 3, "startColumn": 1, "endColumn": 14,
                      "text": "let x = a(b);", "tokens": [[3, 1, 3, 4], [3, 5, 3, 6], [3, 7, 3, 8], [3, 9, 3, 10], [3, 10, 3, 11], [3, 11, 3, 12], [3, 12, 3, 13], [3, 13, 3, 14]]},
            "second": {"file": "src/b.js", "startLine": 8, "endLine": 8, "startColumn": 3, "endColumn": 16,
                       "text": "  let y = a(b);", "tokens": [[8, 3, 8, 6], [8, 7, 8, 8], [8, 9, 8, 10], [8, 11, 8, 12], [8, 12, 8, 13], [8, 13, 8, 14], [8, 14, 8, 15], [8, 15, 8, 16]]},
            "tokensListed": 8,
            "differing": [1]
        }))),
    )]
    pub fn clone_detail() {}

    /// The server's state.
    ///
    /// Always 200, also during the first scan (`initializing`) and from
    /// any `Origin`.
    #[utoipa::path(
        get,
        path = "/api/health",
        operation_id = "health",
        tag = "server",
        responses((status = 200, description = "The state", body = HealthBody, example = json!({
            "status": "ready",
            "workingDirectory": "/home/me/src/project",
            "lastScanTime": "2026-11-22T10:30:00.000Z",
            "lastUpdateTime": null,
            "scanning": false,
            "files": 812,
            "mode": "mild",
            "minTokens": 50,
            "minLines": 5,
            "skipped": {"binary": 2},
            "version": "0.1.0"
        }))),
    )]
    pub fn health() {}

    /// Duplication statistics of the whole project.
    ///
    /// One row per file, per format and in total, as jscpd reports them:
    /// lines, tokens, clones, duplicated lines and tokens, percentages.
    #[utoipa::path(
        get,
        path = "/api/stats",
        operation_id = "stats",
        tag = "project",
        responses((status = 200, description = "The statistics of the last scan", body = StatsBody, example = json!({
            "statistics": {
                "detectionDate": "2026-11-22T10:30:00.000Z",
                "formats": {
                    "javascript": {
                        "sources": {
                            "src/a.js": {"lines": 40, "tokens": 310, "sources": 1, "clones": 1, "duplicatedLines": 12, "duplicatedTokens": 87, "percentage": 30, "percentageTokens": 28.06, "newDuplicatedLines": 0, "newClones": 0}
                        },
                        "total": {"lines": 40, "tokens": 310, "sources": 1, "clones": 1, "duplicatedLines": 12, "duplicatedTokens": 87, "percentage": 30, "percentageTokens": 28.06, "newDuplicatedLines": 0, "newClones": 0}
                    }
                },
                "total": {"lines": 40, "tokens": 310, "sources": 1, "clones": 1, "duplicatedLines": 12, "duplicatedTokens": 87, "percentage": 30, "percentageTokens": 28.06, "newDuplicatedLines": 0, "newClones": 0},
                "cappedFingerprints": 0
            },
            "timestamp": "2026-11-22T10:30:05.120Z"
        }))),
    )]
    pub fn stats() {}

    /// The project's clones, largest first.
    ///
    /// The clones `GET /api/stats` counts, a page at a time: each with both
    /// places (file, lines, columns), its size in tokens and lines, and its
    /// format; `total` counts the clones that pass the filters. Query
    /// parameters may appear once each; an empty one is as if absent.
    #[utoipa::path(
        get,
        path = "/api/clones",
        operation_id = "clones",
        tag = "project",
        params(
            ("limit" = Option<u32>, Query, minimum = 1, maximum = 1000, description = "Clones on the page: 1 to 1,000, 100 if absent", example = 5),
            ("cursor" = Option<String>, Query, description = "The `nextCursor` of the previous page, as it was; absent for the first page"),
            ("path" = Option<String>, Query, description = "Only clones with a place in this file or folder (relative to the directory, or absolute inside it)", example = "src/util"),
            ("format" = Option<String>, Query, description = "Only clones with a place in this format (a name, alias or extension)", example = "js"),
            ("minTokens" = Option<u32>, Query, description = "Only clones of at least this many tokens", example = 100),
            ("fragments" = Option<bool>, Query, description = "`true` (or `1`) to include each place's text as `fragment`"),
        ),
        responses((status = 200, description = "A page of clones", body = ClonesPage, example = json!({
            "clones": [{
                "id": "9f2c4e1a7b3d5086",
                "format": "javascript",
                "tokens": 105,
                "lines": 15,
                "first": {"file": "src/app/merge-copy.js", "startLine": 4, "endLine": 18, "startColumn": 1, "endColumn": 2},
                "second": {"file": "src/util/merge.js", "startLine": 2, "endLine": 15, "startColumn": 1, "endColumn": 2}
            }],
            "total": 1,
            "nextCursor": null
        }))),
    )]
    pub fn clones() {}

    /// Checks a snippet for duplications.
    ///
    /// Every place in the indexed code that the snippet duplicates (at
    /// least `--min-tokens` tokens alike in the server's `--mode`), with
    /// exact lines and columns on both sides. Answers JSON, or SARIF 2.1.0
    /// or reviewdog's rdjsonl when asked (`output`, or `Accept:
    /// application/sarif+json`).
    #[utoipa::path(
        post,
        path = "/api/check",
        operation_id = "check",
        tag = "checks",
        params(("output" = Option<Output>, Query, description = "The answer's form: `json` (the default), `sarif` (SARIF 2.1.0, as does `Accept: application/sarif+json`) or `rdjsonl` (reviewdog)")),
        request_body(
            description = "The snippet and its format",
            content(
                (CheckRequest = "application/json", example = json!({
                    "code": "function merge(a, b) {\n  return Object.assign({}, a, b);\n}",
                    "format": "javascript"
                })),
                (CheckRequest = "application/x-www-form-urlencoded"),
            ),
        ),
        responses((status = 200, description = "The duplications of the snippet", content(
            (CheckBody = "application/json", example = json!({
                "duplications": [{
                    "snippetLocation": {"startLine": 1, "endLine": 3, "startColumn": 1, "endColumn": 2},
                    "codebaseLocation": {"file": "src/util/merge.js", "startLine": 40, "endLine": 42, "startColumn": 1, "endColumn": 2,
                                         "fragment": "function merge(left, right) {\n  return Object.assign({}, left, right);\n}"},
                    "linesCount": 3,
                    "tokens": 21,
                    "format": "javascript"
                }],
                "statistics": {"totalDuplications": 1, "duplicatedLines": 3, "totalLines": 3, "percentageDuplicated": 100}
            })),
            (SarifLog = "application/sarif+json"),
            (String = "application/x-ndjson", example = json!("{\"message\":\"Duplicates src/util/merge.js:40-42 (21 tokens)\",\"location\":{\"path\":\"src/new.js\",\"range\":{\"start\":{\"line\":1,\"column\":1},\"end\":{\"line\":3,\"column\":2}}},\"severity\":\"WARNING\"}\n")),
        ))),
    )]
    pub fn check() {}

    /// Checks what a diff adds for duplications.
    ///
    /// The diff is checked whole against the codebase it leaves: the
    /// files it changes are rebuilt and matched against the rest and
    /// against each other; duplications holding an added line are
    /// reported. Moved code is not. Answers JSON, SARIF or rdjsonl as
    /// `/api/check` does.
    #[utoipa::path(
        post,
        path = "/api/check-diff",
        operation_id = "checkDiff",
        tag = "checks",
        params(("output" = Option<Output>, Query, description = "The answer's form: `json` (the default), `sarif` (SARIF 2.1.0, as does `Accept: application/sarif+json`) or `rdjsonl` (reviewdog)")),
        request_body(
            description = "The diff: as text (what `curl --data-binary @-` sends unlabelled is read as the diff too), or in a JSON object or form",
            content(
                (String = "text/x-diff", example = json!(DIFF_EXAMPLE)),
                (String = "text/x-patch"),
                (String = "text/plain"),
                (DiffRequest = "application/json", example = json!({"diff": DIFF_EXAMPLE})),
                (DiffRequest = "application/x-www-form-urlencoded"),
            ),
        ),
        responses((status = 200, description = "The duplications the diff adds", content(
            (DiffCheckBody = "application/json", example = json!({
                "files": [{
                    "path": "src/merge.js",
                    "format": "javascript",
                    "duplications": [{
                        "snippetLocation": {"startLine": 1, "endLine": 3, "startColumn": 1, "endColumn": 2},
                        "codebaseLocation": {"file": "src/util/merge.js", "startLine": 40, "endLine": 42, "startColumn": 1, "endColumn": 2,
                                             "fragment": "function merge(left, right) {\n  return Object.assign({}, left, right);\n}"},
                        "linesCount": 3,
                        "tokens": 21,
                        "format": "javascript",
                        "addedLines": 3
                    }]
                }],
                "skipped": [{"path": "logo.png", "reason": "binary"}],
                "warnings": [],
                "statistics": {"totalDuplications": 1, "addedLines": 3, "duplicatedAddedLines": 3, "percentageDuplicated": 100}
            })),
            (SarifLog = "application/sarif+json"),
            (String = "application/x-ndjson"),
        ))),
    )]
    pub fn check_diff() {}

    /// Rescans the directory now.
    ///
    /// Answers when the rescan is done (joining one that runs already);
    /// checks are served from the previous index meanwhile. The body is
    /// not read.
    #[utoipa::path(
        post,
        path = "/api/recheck",
        operation_id = "recheck",
        tag = "project",
        responses((status = 200, description = "The rescan is done", body = RecheckBody, example = json!({
            "message": "Rescan complete",
            "lastScanTime": "2026-11-22T10:30:00.000Z",
            "files": 812,
            "durationMs": 410
        }))),
    )]
    pub fn recheck() {}

    /// This document.
    #[utoipa::path(
        get,
        path = "/api/openapi.json",
        operation_id = "openapi",
        tag = "server",
        responses((status = 200, description = "The OpenAPI 3.1 document of this API", body = OpenApiDocument, example = json!({
            "openapi": "3.1.0",
            "info": {"title": "dupcheck", "version": "0.1.0"},
            "paths": {}
        }))),
    )]
    pub fn openapi() {}

    /// A JSON-RPC message of the Model Context Protocol.
    ///
    /// Any JSON-RPC 2.0 request or notification of the MCP revisions
    /// 2026-07-28 (stateless, `server/discover`) and 2025-11-25
    /// (`initialize`, `notifications/initialized`, `ping`), as the
    /// streamable HTTP transport carries it
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
    #[derive(ToSchema)]
    pub struct JsonRpcMessage {
        /// `2.0`.
        #[schema(examples("2.0"))]
        jsonrpc: String,
        /// A request's or response's id: a string or a number.
        id: Option<serde_json::Value>,
        /// A request's or notification's method: `tools/list`,
        /// `tools/call`, `ping`, …
        #[schema(examples("tools/list"))]
        method: Option<String>,
        /// A request's parameters, as MCP defines them for its method.
        params: Option<serde_json::Value>,
        /// A response's result.
        result: Option<serde_json::Value>,
        /// A response's JSON-RPC error (`code`, `message`, `data`).
        error: Option<serde_json::Value>,
    }

    /// The MCP endpoint for AI coding assistants.
    ///
    /// The streamable HTTP transport of the Model Context Protocol,
    /// stateless, answering in JSON (no event stream, no session: GET and
    /// DELETE are 405). Tools: `check_code` (as `POST /api/check`),
    /// `check_diff` (as `POST /api/check-diff`), `list_clones` (as
    /// `GET /api/clones`) and `project_stats` (as `GET /api/stats`), each
    /// answering that endpoint's JSON as structured content with a short
    /// text summary. The request must accept both `application/json` and
    /// `text/event-stream`, as the transport requires.
    #[utoipa::path(
        post,
        path = "/mcp",
        operation_id = "mcp",
        tag = "checks",
        request_body(content = JsonRpcMessage, content_type = "application/json", example = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/list"
        })),
        responses(
            (status = 200, description = "The JSON-RPC response (a result or a JSON-RPC error)", body = JsonRpcMessage, example = json!({
                "jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "check_code"}]}
            })),
            (status = 202, description = "A notification or a response was accepted; no body"),
        ),
    )]
    pub fn mcp() {}
}

/// An OpenAPI 3.1 document: the shape its schema requires
/// (<https://spec.openapis.org/oas/v3.1.0>).
pub struct OpenApiDocument;

impl utoipa::PartialSchema for OpenApiDocument {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("An OpenAPI 3.1 document"))
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .property(
                "openapi",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(r"^3\.1\.\d+$")),
            )
            .required("openapi")
            .property("info", ObjectBuilder::new().schema_type(Type::Object))
            .required("info")
            .property("paths", ObjectBuilder::new().schema_type(Type::Object))
            .into()
    }
}

impl utoipa::ToSchema for OpenApiDocument {}

/// A SARIF 2.1.0 log: the shape its schema requires, not the whole
/// schema (<https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html>).
pub struct SarifLog;

impl utoipa::PartialSchema for SarifLog {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "A SARIF 2.1.0 log (OASIS): one run of the tool `dupcheck`, one result per duplication, its codebase places as related locations",
            ))
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .property(
                "version",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["2.1.0"])),
            )
            .required("version")
            .property(
                "$schema",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(utoipa::openapi::SchemaFormat::Custom(
                        "uri".to_owned(),
                    ))),
            )
            .property(
                "runs",
                utoipa::openapi::schema::ArrayBuilder::new().items(
                    ObjectBuilder::new()
                        .schema_type(Type::Object)
                        .property("tool", ObjectBuilder::new().schema_type(Type::Object))
                        .required("tool"),
                ),
            )
            .required("runs")
            .into()
    }
}

impl utoipa::ToSchema for SarifLog {}

/// An error response's kind: one [`ApiError`] variant (two for the
/// names `Forbidden` and `RequestTimeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    BadRequest,
    Validation,
    UnsupportedFormat,
    DiffValidation,
    ClonesValidation,
    TreeValidation,
    CloneValidation,
    FolderMissing,
    CloneMissing,
    ForbiddenOrigin,
    ForbiddenHost,
    NotFound,
    MethodNotAllowed,
    HeaderTimeout,
    BodyTimeout,
    PayloadTooLarge,
    UriTooLong,
    UnsupportedMediaType,
    DiffUnsupportedMediaType,
    TooComplex,
    DiffTooComplex,
    HeadersTooLarge,
    Internal,
    Scan,
    NotReady,
    Busy,
    ShuttingDown,
    HttpVersionNotSupported,
    McpBadRequest,
    McpNotAcceptable,
    McpUnsupportedMediaType,
}

/// The errors `endpoint` can answer.
fn errors_of(endpoint: Endpoint) -> Vec<Kind> {
    use Kind::*;
    // Any request: hyper's own errors, a panic, the end of a stop's grace.
    let mut kinds = vec![
        BadRequest,
        HeaderTimeout,
        UriTooLong,
        HeadersTooLarge,
        Internal,
        ShuttingDown,
    ];
    if endpoint != Endpoint::Health {
        kinds.extend([ForbiddenOrigin, ForbiddenHost]);
    }
    kinds.extend(match endpoint {
        Endpoint::Root | Endpoint::Health | Endpoint::OpenApi | Endpoint::DashboardAsset => {
            vec![]
        }
        Endpoint::Tree => vec![TreeValidation, FolderMissing, NotReady],
        Endpoint::CloneDetail => vec![CloneValidation, CloneMissing, NotReady],
        Endpoint::Stats => vec![NotReady],
        Endpoint::Clones => vec![ClonesValidation, UnsupportedFormat, NotReady],
        Endpoint::Recheck => vec![Scan],
        Endpoint::Check => vec![
            Validation,
            UnsupportedFormat,
            UnsupportedMediaType,
            PayloadTooLarge,
            BodyTimeout,
            TooComplex,
            NotReady,
            Busy,
            Scan,
        ],
        Endpoint::Mcp => vec![
            McpBadRequest,
            McpNotAcceptable,
            McpUnsupportedMediaType,
            PayloadTooLarge,
        ],
        Endpoint::CheckDiff => vec![
            DiffValidation,
            DiffUnsupportedMediaType,
            PayloadTooLarge,
            BodyTimeout,
            DiffTooComplex,
            NotReady,
            Busy,
        ],
    });
    kinds.sort();
    kinds
}

/// Examples of every kind of error, as this server answers them. Where a
/// real function makes the error, an input it refuses does; should it stop
/// refusing, the example shows as `InternalError`, whose status is not
/// the response's, and `tests/it/openapi.rs` fails on it.
struct ErrorExamples {
    examples: BTreeMap<Kind, Vec<(&'static str, ApiError)>>,
}

impl ErrorExamples {
    fn new(config: &Config, registry: &Registry) -> ErrorExamples {
        use Kind::*;
        let check = |body: Value| {
            let fields = body.as_object().cloned().unwrap_or_default();
            request::validate(fields, registry, &config.dir, config.mode, config.near_miss)
                .err()
                .unwrap_or(ApiError::Internal)
        };
        let labelled = |content_type: &str| {
            Request::builder()
                .header(hyper::header::CONTENT_TYPE, content_type)
                .body(())
                .unwrap_or_default()
        };
        let output = Output::of(
            &Request::builder()
                .uri("/api/check?output=html")
                .body(())
                .unwrap_or_default(),
        );
        let diff = |bytes: &[u8]| {
            request::decode_diff(DiffBodyKind::Json, bytes, DiffOptions::of(config))
                .err()
                .unwrap_or(ApiError::Internal)
        };
        let clones = |query: Value| {
            let fields = query.as_object().cloned().unwrap_or_default();
            request::clones_query(&fields, registry, &config.dir)
                .err()
                .unwrap_or(ApiError::Internal)
        };
        let tree = |query: Value| {
            let fields = query.as_object().cloned().unwrap_or_default();
            request::tree_query(&fields, &config.dir)
                .err()
                .unwrap_or(ApiError::Internal)
        };
        let clone = |query: Value| {
            let fields = query.as_object().cloned().unwrap_or_default();
            request::clone_id(&fields)
                .err()
                .unwrap_or(ApiError::Internal)
        };
        let not_a_diff = crate::engine::diff::parse("fix the merge")
            .err()
            .map_or(ApiError::Internal, |e| DiffRefusal::Diff(e).into());
        let too_large = max_snippet_len() + 1;
        let examples = BTreeMap::from([
            (BadRequest, vec![("badRequest", ApiError::BadRequest)]),
            (
                Validation,
                vec![
                    ("missingCode", check(json!({"format": "js"}))),
                    ("emptyCode", check(json!({"code": " ", "format": "js"}))),
                    ("missingFormat", check(json!({"code": "let a = 1;"}))),
                    (
                        "badRecheck",
                        check(json!({"code": "let a = 1;", "format": "js", "recheck": "yes"})),
                    ),
                    (
                        "unknownMode",
                        check(json!({"code": "let a = 1;", "format": "js", "mode": "fuzzy"})),
                    ),
                    ("unknownOutput", output.err().unwrap_or(ApiError::Internal)),
                ],
            ),
            (
                UnsupportedFormat,
                vec![(
                    "unknownFormat",
                    check(json!({"code": "let a = 1;", "format": "cobol"})),
                )],
            ),
            (
                DiffValidation,
                vec![
                    ("notADiff", not_a_diff),
                    ("missingDiff", diff(br#"{"patch": "..."}"#)),
                    ("unknownDiffMode", diff(br#"{"diff": "", "mode": "loose"}"#)),
                    ("notJson", diff(b"{diff")),
                ],
            ),
            (
                ClonesValidation,
                vec![
                    ("unknownParameter", clones(json!({"colour": "red"}))),
                    ("badLimit", clones(json!({"limit": "0"}))),
                    ("badCursor", clones(json!({"cursor": "page2"}))),
                ],
            ),
            (
                TreeValidation,
                vec![
                    ("unknownParameter", tree(json!({"depth": "2"}))),
                    ("badLimit", tree(json!({"limit": "0"}))),
                ],
            ),
            (
                CloneValidation,
                vec![
                    ("missingId", clone(json!({}))),
                    ("badId", clone(json!({"id": "42"}))),
                ],
            ),
            (
                FolderMissing,
                vec![("noSuchFolder", no_such_folder("src/nope"))],
            ),
            (
                CloneMissing,
                vec![("noSuchClone", no_such_clone("9f2c4e1a7b3d5086"))],
            ),
            (
                ForbiddenOrigin,
                vec![(
                    "forbiddenOrigin",
                    ApiError::Forbidden {
                        origin: "https://attacker.example".into(),
                    },
                )],
            ),
            (
                ForbiddenHost,
                vec![(
                    "forbiddenHost",
                    ApiError::ForbiddenHost {
                        host: "attacker.example:3000".into(),
                    },
                )],
            ),
            (
                NotFound,
                vec![(
                    "notFound",
                    ApiError::NotFound {
                        method: hyper::Method::GET,
                        path: "/api/nope".into(),
                    },
                )],
            ),
            (
                MethodNotAllowed,
                vec![(
                    "methodNotAllowed",
                    ApiError::MethodNotAllowed {
                        method: hyper::Method::GET,
                        path: "/api/check".into(),
                        allow: "POST",
                    },
                )],
            ),
            (
                HeaderTimeout,
                vec![(
                    "headerTimeout",
                    ApiError::HeaderTimeout {
                        timeout: config.header_timeout,
                    },
                )],
            ),
            (BodyTimeout, vec![("bodyTimeout", ApiError::Timeout)]),
            (
                PayloadTooLarge,
                vec![(
                    "payloadTooLarge",
                    ApiError::PayloadTooLarge {
                        limit: config.max_body,
                    },
                )],
            ),
            (UriTooLong, vec![("uriTooLong", ApiError::UriTooLong)]),
            (
                UnsupportedMediaType,
                vec![(
                    "unsupportedMediaType",
                    BodyKind::of(&labelled("text/plain"))
                        .err()
                        .unwrap_or(ApiError::Internal),
                )],
            ),
            (
                DiffUnsupportedMediaType,
                vec![(
                    "unsupportedMediaType",
                    DiffBodyKind::of(&labelled("image/png"))
                        .err()
                        .unwrap_or(ApiError::Internal),
                )],
            ),
            (
                TooComplex,
                vec![("tooComplex", Refusal::TooLarge { len: too_large }.into())],
            ),
            (
                DiffTooComplex,
                vec![(
                    "tooComplex",
                    DiffRefusal::TooLarge { len: too_large }.into(),
                )],
            ),
            (
                HeadersTooLarge,
                vec![("headersTooLarge", ApiError::HeadersTooLarge)],
            ),
            (Internal, vec![("internal", ApiError::Internal)]),
            (
                Scan,
                vec![(
                    "scanFailed",
                    ApiError::Scan(format!(
                        "cannot read {}: Permission denied (os error 13)",
                        config.dir.display()
                    )),
                )],
            ),
            (NotReady, vec![("notReady", ApiError::NotReady)]),
            (Busy, vec![("busy", ApiError::Busy)]),
            (ShuttingDown, vec![("shuttingDown", ApiError::ShuttingDown)]),
            (HttpVersionNotSupported, vec![("http2", ApiError::Http2)]),
            // The MCP transport's refusals, in rmcp's words.
            (
                McpBadRequest,
                vec![(
                    "unsupportedProtocolVersion",
                    ApiError::Mcp {
                        status: hyper::StatusCode::BAD_REQUEST,
                        message: "Bad Request: Unsupported MCP-Protocol-Version: 1999-01-01".into(),
                    },
                )],
            ),
            (
                McpNotAcceptable,
                vec![(
                    "notAcceptable",
                    ApiError::Mcp {
                        status: hyper::StatusCode::NOT_ACCEPTABLE,
                        message: "Not Acceptable: Client must accept both application/json and text/event-stream".into(),
                    },
                )],
            ),
            (
                McpUnsupportedMediaType,
                vec![(
                    "unsupportedMediaType",
                    ApiError::Mcp {
                        status: hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                        message: "Unsupported Media Type: Content-Type must be application/json".into(),
                    },
                )],
            ),
        ]);
        ErrorExamples { examples }
    }

    /// `kinds` by the status they answer.
    fn by_status(&self, kinds: &[Kind]) -> BTreeMap<u16, Vec<Kind>> {
        let mut by_status: BTreeMap<u16, Vec<Kind>> = BTreeMap::new();
        for kind in kinds {
            if let Some((_, err)) = self.examples.get(kind).and_then(|e| e.first()) {
                by_status
                    .entry(err.status().as_u16())
                    .or_default()
                    .push(*kind);
            }
        }
        by_status
    }

    /// The response of errors of `kinds`, all answered with `status`: the
    /// error schema with their names, and an example of each.
    fn response(&self, status: u16, kinds: &[Kind]) -> Response {
        let examples: Vec<&(&str, ApiError)> = kinds
            .iter()
            .flat_map(|kind| self.examples.get(kind).into_iter().flatten())
            .collect();
        let bodies: Vec<(&str, Value)> = examples
            .iter()
            .map(|(name, err)| {
                let body = serde_json::from_slice(&err.body()).unwrap_or(Value::Null);
                (*name, body)
            })
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for name in bodies.iter().filter_map(|(_, body)| body["error"].as_str()) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let schema = AllOfBuilder::new()
            .item(Ref::from_schema_name("Error"))
            .item(
                ObjectBuilder::new()
                    .property(
                        "error",
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some(names.iter().copied())),
                    )
                    .property(
                        "statusCode",
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .enum_values(Some([status])),
                    ),
            );
        let description = names.join(" or ");
        let content = ContentBuilder::new()
            .schema(Some(schema))
            .examples_from_iter(bodies.iter().map(|(name, body)| {
                let message = body["message"].as_str().unwrap_or_default().to_owned();
                (
                    *name,
                    ExampleBuilder::new()
                        .summary(message)
                        .value(Some(body.clone())),
                )
            }));
        let mut response = ResponseBuilder::new()
            .description(description)
            .content("application/json", content.build());
        if status == 405 {
            response = response.header(
                "Allow",
                HeaderBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                    .description(Some("The method the path serves"))
                    .build(),
            );
        }
        let retry = examples
            .iter()
            .any(|(_, e)| matches!(e, ApiError::NotReady | ApiError::Busy));
        if retry {
            response = response.header(
                "Retry-After",
                HeaderBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(Type::Integer)))
                    .description(Some(
                        "With NotReady and Busy: the seconds to wait before retrying (1)",
                    ))
                    .build(),
            );
        }
        response.build()
    }
}
