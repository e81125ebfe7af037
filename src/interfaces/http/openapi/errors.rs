//! The error responses of the document: which errors each endpoint can
//! answer ([`errors_of`]), and an example of each, as this server answers
//! it ([`ErrorExamples`]), most made by the functions that refuse real
//! requests.

use std::collections::BTreeMap;

use hyper::Request;
use serde_json::{json, Value};
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, Ref, Response, ResponseBuilder};

use crate::engine::grammar::Registry;
use crate::interfaces::http::body::{BodyKind, DiffBodyKind};
use crate::interfaces::http::error::ApiError;
use crate::interfaces::http::error::{no_such_clone, no_such_folder};
use crate::interfaces::http::output::Output;
use crate::interfaces::http::request;
use crate::interfaces::http::routes::Endpoint;
use crate::project::config::Config;
use crate::service::check::{max_snippet_len, Refusal};
use crate::service::diff_check::{DiffOptions, DiffRefusal};

/// An error response's kind: one [`ApiError`] variant (two for the
/// names `Forbidden` and `RequestTimeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Kind {
    BadRequest,
    Validation,
    UnsupportedFormat,
    DiffValidation,
    ClonesValidation,
    TreeValidation,
    CloneValidation,
    FolderMissing,
    CloneMissing,
    NoStore,
    StoreUnavailable,
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
    Detecting,
    Busy,
    ShuttingDown,
    HttpVersionNotSupported,
    McpBadRequest,
    McpNotAcceptable,
    McpUnsupportedMediaType,
}

/// The errors `endpoint` can answer.
pub(super) fn errors_of(endpoint: Endpoint) -> Vec<Kind> {
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
        Endpoint::Tree => vec![TreeValidation, FolderMissing, NotReady, Detecting],
        Endpoint::CloneDetail => vec![CloneValidation, CloneMissing, NotReady, Detecting],
        Endpoint::Stats => vec![NotReady, Detecting],
        Endpoint::Repositories => vec![NoStore, StoreUnavailable],
        Endpoint::Clones => vec![ClonesValidation, UnsupportedFormat, NotReady, Detecting],
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
pub(super) struct ErrorExamples {
    examples: BTreeMap<Kind, Vec<(&'static str, ApiError)>>,
}

impl ErrorExamples {
    pub(super) fn new(config: &Config, registry: &Registry) -> ErrorExamples {
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
            (
                Detecting,
                vec![(
                    "detecting",
                    ApiError::Detecting {
                        done: 25_000,
                        files: 62_281,
                    },
                )],
            ),
            (NoStore, vec![("noStore", ApiError::NoStore)]),
            (
                StoreUnavailable,
                vec![(
                    "storeUnavailable",
                    ApiError::StoreUnavailable {
                        kind: "unreachable",
                    },
                )],
            ),
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
    pub(super) fn by_status(&self, kinds: &[Kind]) -> BTreeMap<u16, Vec<Kind>> {
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
    pub(super) fn response(&self, status: u16, kinds: &[Kind]) -> Response {
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
        let retry = examples.iter().any(|(_, e)| {
            matches!(
                e,
                ApiError::NotReady | ApiError::Detecting { .. } | ApiError::Busy
            )
        });
        if retry {
            response = response.header(
                "Retry-After",
                HeaderBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(Type::Integer)))
                    .description(Some(
                        "With NotReady and Busy: the seconds to wait before retrying (1; 5 while clone detection runs)",
                    ))
                    .build(),
            );
        }
        response.build()
    }
}
