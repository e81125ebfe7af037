//! The OpenAPI 3.1 document of the HTTP API, served at
//! `GET /api/openapi.json`.
//!
//! In: the routes of [`ROUTES`], the answer types of [`handlers`] and of
//! `interfaces::render` (`#[derive(ToSchema)]` next to their `Serialize`),
//! and the
//! server's [`Config`] and [`Registry`] for the examples. Out: the document,
//! built by `utoipa` on the first request and served from memory after.
//!
//! Each operation is described by a `#[utoipa::path]` on a function of
//! [`operations`] (never called: the handlers stay as they are); its error
//! responses are added from one table, [`errors::errors_of`], whose
//! examples are real [`ApiError`] bodies, most of them made by the same functions that
//! refuse real requests (`request::validate`, `request::decode_diff`,
//! `request::clones_query`, …). Each status's errors are one response of
//! `components.responses`, shared by the operations that answer them.
//!
//! Invariants (tests in `tests/it/openapi.rs`): the document validates
//! against the OpenAPI 3.1 schema; every route of [`ROUTES`] is in it with
//! its method and every operation in it is routed; the answers of a real
//! server validate against the schemas it gives for their status, and so
//! do its examples.

mod errors;
mod operations;
mod schemas;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use hyper::StatusCode;
use utoipa::openapi::{OpenApi as Document, Ref, RefOr};
use utoipa::OpenApi;

use self::errors::{errors_of, ErrorExamples, Kind};
use super::handlers;
use super::output::Output;
use super::routes::ROUTES;
use super::{json_response, HttpResponse, State};
use crate::engine::grammar::Registry;
use crate::project::config::Config;

/// `GET /api/openapi.json`: the document, built on the first request.
pub(crate) fn response(state: &State) -> HttpResponse {
    static DOCUMENT: OnceLock<Vec<u8>> = OnceLock::new();
    let scanner = &state.workspace.scanner;
    let body = DOCUMENT.get_or_init(|| {
        serde_json::to_vec(&refined(
            document(scanner.config(), scanner.registry()),
            scanner.registry(),
        ))
        .expect("an OpenAPI document is strings, maps and JSON values: it serializes")
    });
    json_response(StatusCode::OK, body.clone())
}

/// The OpenAPI document of the API of a server with `config`.
pub(crate) fn document(config: &Config, registry: &Registry) -> Document {
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

/// `doc` as JSON, with what the derive cannot say: the format names the
/// registry knows, the clone list's cursor pattern, the bounds of the
/// whole numbers the server reads as `u32`, and that `POST
/// /api/check-diff` takes an empty body (an empty diff, which adds
/// nothing).
pub(crate) fn refined(doc: Document, registry: &Registry) -> serde_json::Value {
    let mut doc = serde_json::to_value(doc)
        .expect("an OpenAPI document is strings, maps and JSON values: it converts");
    let formats: Vec<&str> = registry.spellings();
    if let Some(format) = doc.pointer_mut("/components/schemas/CheckRequest/properties/format") {
        // `null` is as if absent.
        let mut values = serde_json::json!(formats);
        if let Some(list) = values.as_array_mut() {
            list.push(serde_json::Value::Null);
        }
        format["enum"] = values;
    }
    // The format, or a path whose name gives it.
    if let Some(schema) = doc.pointer_mut("/components/schemas/CheckRequest") {
        schema["anyOf"] = serde_json::json!([
            {"required": ["format"], "properties": {"format": {"type": "string"}}},
            {"required": ["path"], "properties": {"path": {"type": "string", "pattern": path_pattern(registry)}}},
        ]);
    }
    // An empty query parameter is as if absent.
    for path in ["/api/clones", "/api/tree"] {
        let pointer = format!("/paths/{}/get/parameters", path.replace('/', "~1"));
        if let Some(parameters) = doc
            .pointer_mut(&pointer)
            .and_then(serde_json::Value::as_array_mut)
        {
            for parameter in parameters {
                parameter["allowEmptyValue"] = true.into();
            }
        }
    }
    for (path, name) in [
        ("/api/clones", "format"),
        ("/api/clones", "cursor"),
        ("/api/clones", "minTokens"),
        ("/api/tree", "offset"),
    ] {
        let Some(parameters) = doc
            .pointer_mut(&format!(
                "/paths/{}/get/parameters",
                path.replace('/', "~1")
            ))
            .and_then(serde_json::Value::as_array_mut)
        else {
            continue;
        };
        let Some(schema) = parameters
            .iter_mut()
            .find(|p| p["name"] == name)
            .and_then(|p| p.get_mut("schema"))
        else {
            continue;
        };
        match name {
            "format" => schema["enum"] = serde_json::json!(formats),
            "cursor" => {
                schema["pattern"] = crate::service::clones::CURSOR_PATTERN.into();
            }
            _ => {
                schema["maximum"] = u32::MAX.into();
            }
        }
    }
    if let Some(body) = doc.pointer_mut("/paths/~1api~1check-diff/post/requestBody") {
        body["required"] = false.into();
    }
    // A form has no `null`: its schemas are the JSON bodies' without it.
    for (path, json, form) in [
        ("/api/check", "CheckRequest", "CheckForm"),
        ("/api/check-diff", "DiffRequest", "DiffForm"),
    ] {
        let Some(schema) = doc.pointer(&format!("/components/schemas/{json}")).cloned() else {
            continue;
        };
        doc["components"]["schemas"][form] = without_null(schema);
        let content = format!(
            "/paths/{}/post/requestBody/content/application~1x-www-form-urlencoded",
            path.replace('/', "~1")
        );
        let schema = serde_json::json!({"$ref": format!("#/components/schemas/{form}")});
        let schema = match form {
            // A form-labelled body that is not a diff form is the diff
            // itself (what `curl -d @file` sends).
            "DiffForm" => {
                serde_json::json!({"anyOf": [schema, {"type": "string", "description": "The diff itself, as `curl -d @file` labels it"}]})
            }
            _ => schema,
        };
        if let Some(media) = doc.pointer_mut(&content) {
            media["schema"] = schema;
        }
    }
    doc
}

/// A path whose name gives a format (`Registry::for_path`): a known
/// extension in any case, or a known file name.
fn path_pattern(registry: &Registry) -> String {
    let any_case = |text: &str| -> String {
        text.chars()
            .map(|c| {
                let (lower, upper) = (c.to_ascii_lowercase(), c.to_ascii_uppercase());
                match (lower != upper, c) {
                    (true, _) => format!("[{lower}{upper}]"),
                    (false, '+' | '#' | '.' | '-') => format!("\\{c}"),
                    (false, _) => c.to_string(),
                }
            })
            .collect()
    };
    let (extensions, names) = registry.path_names();
    let extensions: Vec<String> = extensions.iter().map(|e| any_case(e)).collect();
    let names: Vec<String> = names
        .iter()
        .map(|n| n.replace('.', "\\.").replace('+', "\\+"))
        .collect();
    let mut pattern = format!("[^/]\\.(?:{})$", extensions.join("|"));
    if !names.is_empty() {
        pattern.push_str(&format!("|(?:^|/)(?:{})$", names.join("|")));
    }
    pattern
}

/// An object schema whose properties take no `null`.
fn without_null(mut schema: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let Some(properties) = schema["properties"].as_object_mut() else {
        return schema;
    };
    for property in properties.values_mut() {
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                property["type"] = types[0].clone();
            }
        }
        if let Some(Value::Array(values)) = property.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        let kept = property
            .get("oneOf")
            .and_then(Value::as_array)
            .and_then(|alternatives| {
                let kept: Vec<&Value> = alternatives
                    .iter()
                    .filter(|a| a["type"] != "null")
                    .collect();
                (kept.len() == 1).then(|| kept[0].clone())
            });
        if let Some(kept) = kept {
            *property = kept;
        }
    }
    schema
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
        operations::repositories,
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
        (name = "store", description = "Other repositories, published to a PostgreSQL store (`--store`)."),
        (name = "dashboard", description = "The page browsers get at `/` and the files it loads."),
    ),
)]
struct ApiDoc;
