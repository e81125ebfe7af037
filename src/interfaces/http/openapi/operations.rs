//! The operations, one function each for `#[utoipa::path]` to describe,
//! with the request bodies' schemas. Their bodies are empty: the router
//! calls `handlers`, not these.
#![allow(dead_code, reason = "read by utoipa's macros, never called")]

use utoipa::ToSchema;

use super::schemas::{OpenApiDocument, SarifLog};
use crate::interfaces::http::handlers::{HealthBody, RecheckBody, RepositoriesBody, RootBody};
use crate::interfaces::http::output::Output;
use crate::interfaces::render::answers::{CheckBody, DiffBody as DiffCheckBody, StatsBody};
use crate::interfaces::render::clones::{CloneDetailJson, ClonesPageJson};
use crate::interfaces::render::tree::FolderJson;

/// The body of `POST /api/check`, as JSON or as a form
/// (`application/x-www-form-urlencoded`, where `recheck` is `true` or
/// `false`). Fields are validated in this order: `code`, `format` (or
/// `path`), the others; a field that is `null` is as if absent.
#[derive(ToSchema)]
pub struct CheckRequest {
    /// The snippet; not empty or only whitespace (Unicode's).
    #[schema(
        min_length = 1,
        pattern = r"[^\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
    )]
    code: String,
    /// A format name, alias or extension (`javascript`, `js`, `ts`,
    /// `py`, …; the enum lists them, and any case works). May be left out
    /// when `path` has a known extension.
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
pub(crate) struct DiffRequest {
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
pub(crate) enum CheckMode {
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
pub(crate) fn root() {}

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
pub(crate) fn dashboard_script() {}

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
pub(crate) fn dashboard_style() {}

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
        ("offset" = Option<u64>, Query, minimum = 0, description = "Children to skip: the answer's `nextOffset`; 0 if absent"),
    ),
    responses((status = 200, description = "The folder and a page of its children", body = FolderJson, example = json!({
        "folder": {"name": "src", "path": "src", "kind": "folder", "files": 3, "lines": 120, "duplicatedLines": 30, "percentage": 25, "clones": 2, "format": null},
        "children": [
            {"name": "util", "path": "src/util", "kind": "folder", "files": 2, "lines": 80, "duplicatedLines": 30, "percentage": 37.5, "clones": 2, "format": null},
            {"name": "main.js", "path": "src/main.js", "kind": "file", "files": 1, "lines": 40, "duplicatedLines": 0, "percentage": 0, "clones": 0, "format": "javascript"}
        ],
        "totalChildren": 2,
        "nextOffset": null
    }))),
)]
pub(crate) fn tree() {}

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
    params(("id" = String, Query, pattern = "^[0-9a-fA-F]{16}$", description = "The clone's `id`, from `GET /api/clones`: 16 hex digits", example = "9f2c4e1a7b3d5086")),
    responses((status = 200, description = "The clone", body = CloneDetailJson, example = json!({
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
pub(crate) fn clone_detail() {}

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
        "lines": 96_410,
        "scanSeconds": 1.284,
        "clones": {"status": "running", "filesDone": 300, "files": 812, "seconds": 0.412},
        "mode": "mild",
        "minTokens": 50,
        "minLines": 5,
        "skipped": {"binary": 2},
        "version": "0.1.0",
        "store": {"status": "ok", "error": null, "lastAnswer": "2026-11-22T10:31:00.120Z"}
    }))),
)]
pub(crate) fn health() {}

/// The repositories of the store.
///
/// On a server started with `--store`: every repository published to
/// the PostgreSQL store with `dupcheck publish`, by name, with its
/// current copy's files and lines. 404 without `--store`; 503 when the
/// store does not answer (the error's kind, never its text).
#[utoipa::path(
    get,
    path = "/api/repositories",
    operation_id = "repositories",
    tag = "store",
    responses((status = 200, description = "The store's repositories", body = RepositoriesBody, example = json!({
        "repositories": [
            {"name": "github.com/acme/payments", "publishedAt": "2026-11-22T10:30:00.000Z", "files": 812, "lines": 96410},
            {"name": "github.com/acme/shop", "publishedAt": "2026-11-22T09:12:44.310Z", "files": 240, "lines": 21077}
        ]
    }))),
)]
pub(crate) fn repositories() {}

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
pub(crate) fn stats() {}

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
        ("cursor" = Option<String>, Query, description = "The `nextCursor` of the previous page, as it was; absent for the first page. A cursor names a place in the list's order (a made-up one gives the page after the place it names)"),
        ("path" = Option<String>, Query, description = "Only clones with a place in this file or folder (relative to the directory, or absolute inside it)", example = "src/util"),
        ("format" = Option<String>, Query, description = "Only clones with a place in this format (a name, alias or extension; the enum lists them, and any case works)", example = "js"),
        ("minTokens" = Option<u64>, Query, minimum = 0, description = "Only clones of at least this many tokens", example = 100),
        ("fragments" = Option<bool>, Query, description = "`true` (or `1`) to include each place's text as `fragment`"),
    ),
    responses((status = 200, description = "A page of clones", body = ClonesPageJson, example = json!({
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
pub(crate) fn clones() {}

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
pub(crate) fn check() {}

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
pub(crate) fn check_diff() {}

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
pub(crate) fn recheck() {}

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
pub(crate) fn openapi() {}

/// A JSON-RPC message of the Model Context Protocol.
///
/// Any JSON-RPC 2.0 request or notification of the MCP revisions
/// 2026-07-28 (stateless, `server/discover`) and 2025-11-25
/// (`initialize`, `notifications/initialized`, `ping`), as the
/// streamable HTTP transport carries it
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
#[derive(ToSchema)]
pub(crate) struct JsonRpcMessage {
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
pub(crate) fn mcp() {}
