//! Handlers: one function per endpoint. Each decodes its request
//! ([`super::body`]), validates it ([`super::request`]), makes one call of
//! the [`Workspace`](crate::service::workspace::Workspace) and renders the
//! answer as the request asks ([`super::output`]): JSON, or for the checks
//! SARIF or rdjsonl. Errors are [`ApiError`]s.

use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::body::{query_fields, read_body, read_object, DiffBodyKind};
use super::error::ApiError;
use super::output::{findings_response, truncation, Output};
use super::request::{clone_id, clones_query, decode_diff, tree_query, validate};
use super::{json, HttpResponse, State};
use crate::engine::grammar::Registry;
use crate::engine::text::Text;
use crate::interfaces::render::answers;
use crate::interfaces::render::clones::{CloneDetailJson, ClonesPageJson};
use crate::interfaces::render::sarif::{Extras, Notice, Snippet};
use crate::interfaces::render::tree::FolderJson;
use crate::project::config::Config;
use crate::project::snapshot::{DetectionState, Snapshot};
use crate::project::time::iso8601;
use crate::service::diff_check::DiffOptions;
use crate::VERSION;

/// POST /api/check.
pub(crate) async fn check(
    state: &Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let scanner = &state.workspace.scanner;
    let output = Output::of(&req)?;
    let fields = read_object(req, scanner.config().max_body).await?;
    let config = scanner.config();
    let (request, recheck) = validate(
        fields,
        scanner.registry(),
        &config.dir,
        config.mode,
        config.near_miss,
    )?;
    state
        .workspace
        .check(request, recheck, move |workspace, request, answer| {
            let registry = workspace.registry();
            match output {
                Output::Json => Ok(json(StatusCode::OK, &answers::check(answer))),
                Output::Sarif | Output::Rdjsonl => {
                    let path = request.path.as_deref();
                    let findings = answer.findings();
                    let notices: Vec<Notice> = truncation(answer.duplications.len(), answer.total)
                        .into_iter()
                        .collect();
                    let snippet = Snippet {
                        text: &request.code,
                        language: &registry.get(request.format).name,
                    };
                    let extras = Extras {
                        snippet: path.is_none().then_some(snippet),
                        notices: &notices,
                    };
                    let code = request.code.as_str();
                    findings_response(output, &findings, &extras, |p| {
                        (Some(p) == path).then_some(Text::Borrowed(code))
                    })
                }
            }
        })
        .await
}

/// POST /api/check-diff: the duplications a diff adds.
pub(crate) async fn check_diff(
    state: &Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let output = Output::of(&req)?;
    let kind = DiffBodyKind::of(&req)?;
    let bytes = read_body(req, state.workspace.scanner.config().max_body).await?;
    let defaults = DiffOptions::of(state.workspace.scanner.config());
    let (diff, options) = decode_diff(kind, &bytes, defaults)?;
    let diff = match diff {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(field) => Bytes::from(field),
    };
    state
        .workspace
        .check_diff(diff, options, move |answer| match output {
            Output::Json => Ok(json(StatusCode::OK, &answers::diff(answer))),
            Output::Sarif | Output::Rdjsonl => {
                let findings = answer.findings();
                let mut notices = answer.notices();
                let listed = answer.files.iter().map(|f| f.duplications.len()).sum();
                let total = answer.statistics.total_duplications as usize;
                notices.extend(truncation(listed, total));
                let extras = Extras {
                    snippet: None,
                    notices: &notices,
                };
                findings_response(output, &findings, &extras, |p| answer.text_of(p))
            }
        })
        .await
}

/// GET /api/stats.
pub(crate) async fn stats(state: &Arc<State>) -> Result<HttpResponse, ApiError> {
    state
        .workspace
        .stats(|statistics| {
            Ok(json(
                StatusCode::OK,
                &answers::stats(statistics, std::time::SystemTime::now()),
            ))
        })
        .await
}

/// GET /api/clones: the project's clones, largest first, a page at a time.
pub(crate) async fn clones(
    state: &Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let fields = query_fields(req.uri().query().unwrap_or(""))?;
    let scanner = &state.workspace.scanner;
    let query = clones_query(&fields, scanner.registry(), &scanner.config().dir)?;
    state
        .workspace
        .clones(query, |page| {
            Ok(json(StatusCode::OK, &ClonesPageJson::from(page)))
        })
        .await
}

/// GET /api/tree: one folder's children, with their lines and duplication.
pub(crate) async fn tree(
    state: &Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let fields = query_fields(req.uri().query().unwrap_or(""))?;
    let query = tree_query(&fields, &state.workspace.scanner.config().dir)?;
    state
        .workspace
        .tree(query, |folder| {
            Ok(json(StatusCode::OK, &FolderJson::from(folder)))
        })
        .await
}

/// GET /api/clone: one clone of the list with both places' lines and
/// tokens, for a side-by-side view.
pub(crate) async fn clone_detail(
    state: &Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let fields = query_fields(req.uri().query().unwrap_or(""))?;
    let id = clone_id(&fields)?;
    state
        .workspace
        .clone_detail(id, |detail| {
            Ok(json(StatusCode::OK, &CloneDetailJson::from(detail)))
        })
        .await
}

/// The JSON answer of `GET /api/health`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Health)]
pub(crate) struct HealthBody<'a> {
    /// `initializing` until the first scan completes, then `ready` (also
    /// while a rescan runs: checks use the previous index).
    status: Readiness,
    /// The scanned directory, absolute.
    working_directory: String,
    /// When the last scan finished, ISO 8601 UTC with milliseconds; null
    /// before the first.
    #[schema(required = true, examples("2026-11-22T10:30:00.000Z"))]
    last_scan_time: Option<String>,
    /// When the watcher last applied a change, ISO 8601 UTC with
    /// milliseconds; null if it has not.
    #[schema(required = true, examples("2026-11-22T10:31:12.345Z"))]
    last_update_time: Option<String>,
    /// Whether a full scan is reading and indexing files (its clone
    /// detection, which follows, is in `clones`).
    scanning: bool,
    /// Files in the index.
    files: usize,
    /// Lines of the files in the index, as an editor counts them.
    lines: u64,
    /// How long the last full scan took, in seconds; null before the
    /// first.
    #[schema(required = true, examples(52.3))]
    scan_seconds: Option<f64>,
    /// Whole-project clone detection: what `/api/stats`, `/api/clones`
    /// and `/api/tree` wait for.
    clones: CloneDetection,
    /// How tokens are compared (`--mode`): `strict`, `mild` or `weak`.
    mode: &'static str,
    /// The smallest clone, in tokens (`--min-tokens`).
    min_tokens: u32,
    /// The smallest clone, in lines (`--min-lines`).
    min_lines: u32,
    /// Files the last scan skipped, by reason (`tooLarge`,
    /// `tooManyLines`, `binary`, `notUtf8`, `unreadable`, `parseTimeout`,
    /// `parseMemory`); reasons with none are left out.
    skipped: std::collections::BTreeMap<&'a str, u64>,
    /// dupcheck's version.
    version: &'a str,
    /// How the store answers; only on a server started with `--store`.
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<StoreHealth>,
}

/// How the store of other repositories answers.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoreHealth {
    /// `ok`, or `unavailable` (checks answer from this directory alone).
    status: StoreStatus,
    /// Why it is unavailable: the error's kind (`unreachable`,
    /// `authentication`, `schema`, `query`), never its text; null when ok.
    #[schema(required = true, examples("unreachable"))]
    error: Option<&'static str>,
    /// When the store last answered, ISO 8601 UTC with milliseconds; null
    /// if it never has.
    #[schema(required = true, examples("2026-11-22T10:30:00.000Z"))]
    last_answer: Option<String>,
}

/// Whether the store answers.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum StoreStatus {
    /// It answered the last call, with this dupcheck's schema.
    Ok,
    /// It did not.
    Unavailable,
}

/// Where whole-project clone detection is: `pending` before it starts,
/// `running` with the files looked up so far (`/api/stats`, `/api/clones`
/// and `/api/tree` answer 503 `NotReady` meanwhile, after a few seconds),
/// `done` with the clones found.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CloneDetection {
    /// `pending`, `running` or `done`.
    #[schema(examples("running"))]
    status: &'static str,
    /// Files looked up so far, while running.
    #[serde(skip_serializing_if = "Option::is_none")]
    files_done: Option<usize>,
    /// Files to look up, while running.
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<usize>,
    /// Seconds it has run, or took (a list carried over by an update or
    /// kept in the cache takes its own time).
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
    /// Clones found, once done.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
}

impl CloneDetection {
    fn of(snapshot: Option<&Snapshot>, config: &Config) -> CloneDetection {
        let state = snapshot.map_or(DetectionState::Pending, |s| s.detection());
        let mut body = CloneDetection {
            status: "pending",
            files_done: None,
            files: None,
            seconds: None,
            count: None,
        };
        match (state, snapshot.and_then(|s| s.known_clones(config))) {
            (_, Some(count)) => {
                body.status = "done";
                if let DetectionState::Done { seconds: took } = state {
                    body.seconds = Some(seconds(took));
                }
                body.count = Some(count);
            }
            (
                DetectionState::Running {
                    done,
                    files,
                    seconds: so_far,
                },
                None,
            ) => {
                body.status = "running";
                body.files_done = Some(done);
                body.files = Some(files);
                body.seconds = Some(seconds(so_far));
            }
            _ => {}
        }
        body
    }
}

/// Seconds rounded to milliseconds.
fn seconds(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Whether the first scan has completed.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Readiness {
    /// The first scan is running: checks and statistics answer 503.
    Initializing,
    /// The index is ready.
    Ready,
}

/// GET /api/health: the store, if any, asked within its deadline.
pub(crate) async fn health(state: &State) -> HttpResponse {
    let store = match &state.store {
        Some(live) => {
            let health = live.health().await;
            Some(StoreHealth {
                status: match health.error {
                    None => StoreStatus::Ok,
                    Some(_) => StoreStatus::Unavailable,
                },
                error: health.error,
                last_answer: health.last_answer.map(iso8601),
            })
        }
        None => None,
    };
    let scanner = &state.workspace.scanner;
    let snapshot = scanner.snapshot();
    let body = HealthBody {
        status: if snapshot.is_some() {
            Readiness::Ready
        } else {
            Readiness::Initializing
        },
        working_directory: scanner.config().dir.to_string_lossy().into_owned(),
        last_scan_time: snapshot.as_ref().map(|s| iso8601(s.finished)),
        last_update_time: scanner.last_update().map(iso8601),
        scanning: scanner.is_scanning(),
        files: snapshot.as_ref().map_or(0, |s| s.index.files.len()),
        lines: snapshot.as_ref().map_or(0, |s| s.size().0),
        scan_seconds: snapshot.as_ref().map(|s| seconds(s.duration.as_secs_f64())),
        clones: CloneDetection::of(snapshot.as_deref(), scanner.config()),
        mode: scanner.config().mode.name(),
        min_tokens: scanner.config().thresholds.min_tokens,
        min_lines: scanner.config().thresholds.min_lines,
        skipped: snapshot
            .as_ref()
            .map(|s| s.skipped.0.iter().map(|(r, n)| (r.name(), *n)).collect())
            .unwrap_or_default(),
        version: VERSION,
        store,
    };
    json(StatusCode::OK, &body)
}

/// The JSON answer of `GET /api/repositories`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Repositories)]
pub(crate) struct RepositoriesBody {
    /// Every repository of the store with a published copy, by name.
    repositories: Vec<RepositoryJson>,
}

/// One repository of the store.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Repository)]
pub(crate) struct RepositoryJson {
    /// Its name (`--repository` of its publish: by default its `origin`
    /// remote as `host/org/repo`).
    #[schema(examples("github.com/acme/payments"))]
    name: String,
    /// When its current copy was last published, ISO 8601 UTC with
    /// milliseconds.
    #[schema(examples("2026-11-22T10:30:00.000Z"))]
    published_at: String,
    /// Files in its current copy.
    files: u64,
    /// Their lines.
    lines: u64,
}

/// GET /api/repositories.
pub(crate) async fn repositories(state: &State) -> Result<HttpResponse, ApiError> {
    let live = state.store.as_ref().ok_or(ApiError::NoStore)?;
    let repositories = live.repositories().await.map_err(|e| {
        tracing::debug!("/api/repositories: {e}");
        ApiError::StoreUnavailable { kind: e.kind() }
    })?;
    let body = RepositoriesBody {
        repositories: repositories
            .into_iter()
            .map(|r| RepositoryJson {
                name: r.name,
                published_at: iso8601(r.published_at),
                files: r.files,
                lines: r.lines,
            })
            .collect(),
    };
    Ok(json(StatusCode::OK, &body))
}

/// The JSON answer of `GET /`.
#[derive(Serialize, ToSchema)]
#[schema(as = Description)]
pub(crate) struct RootBody<'a> {
    /// `dupcheck`.
    name: &'a str,
    /// dupcheck's version.
    version: &'a str,
    /// What each endpoint does, by `METHOD /path`.
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    endpoints: serde_json::Value,
    /// The canonical names of the formats dupcheck reads.
    formats: Vec<&'a str>,
    /// How to start.
    documentation: &'a str,
}

/// GET /.
pub(crate) fn root(state: &State) -> HttpResponse {
    json(
        StatusCode::OK,
        &root_body(state.workspace.scanner.registry()),
    )
}

/// The answer of `GET /` of a server reading the formats of `registry`.
pub(crate) fn root_body(registry: &Registry) -> RootBody<'_> {
    RootBody {
        name: "dupcheck",
        version: VERSION,
        endpoints: serde_json::json!({
            "POST /api/check": "Check a code snippet for duplications: {\"code\": \"...\", \"format\": \"javascript\"}, optional \"recheck\" and \"path\"; ?output=sarif or rdjsonl for SARIF 2.1.0 or reviewdog",
            "POST /api/check-diff": "Check what a diff adds for duplications: the output of git diff as text/x-diff, or {\"diff\": \"...\"}; ?output=sarif or rdjsonl for SARIF 2.1.0 or reviewdog",
            "GET /api/stats": "Duplication statistics of the whole project, per file and per format",
            "GET /api/tree": "One folder of the project: its children (folders and files) with lines, duplicated lines, files and clones, most lines first: ?path=src, limit (at most 2000), offset",
            "GET /api/clone": "One clone of /api/clones with both places' whole lines and each token's position, for a side-by-side view: ?id=",
            "GET /api/clones": "The project's clones, largest first: ?limit=100 (at most 1000), cursor (the answer's nextCursor), path (a file or folder), format, minTokens, fragments=true",
            "GET /api/health": "Server state: initializing or ready, last scan time, files indexed; with --store, how the store answers",
            "GET /api/repositories": "The repositories of the store (--store): name, when published, files and lines",
            "POST /api/recheck": "Rescan the working directory now and answer when done",
            "GET /api/openapi.json": "This API as an OpenAPI 3.1 document: every endpoint, parameter, answer and error, with examples",
            "POST /mcp": "The MCP endpoint for AI coding assistants (streamable HTTP, stateless): tools check_code, check_diff, list_clones and project_stats answer as /api/check, /api/check-diff, /api/clones and /api/stats do",
            "GET /": "This description; a browser (Accept: text/html) gets the dashboard",
        }),
        formats: registry.names(),
        documentation: "POST a snippet and its format to /api/check; the answer lists every place in the scanned code that it duplicates, with exact lines. See README.md.",
    }
}

/// The JSON answer of `POST /api/recheck`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = RecheckAnswer)]
pub(crate) struct RecheckBody {
    /// `Rescan complete`.
    message: &'static str,
    /// When the scan finished, ISO 8601 UTC with milliseconds.
    #[schema(examples("2026-11-22T10:30:00.000Z"))]
    last_scan_time: String,
    /// Files in the index.
    files: usize,
    /// How long the scan took, in milliseconds.
    #[schema(value_type = u64)]
    duration_ms: u128,
}

/// POST /api/recheck.
pub(crate) async fn recheck(state: &State) -> Result<HttpResponse, ApiError> {
    let snapshot = state.workspace.recheck().await?;
    Ok(json(
        StatusCode::OK,
        &RecheckBody {
            message: "Rescan complete",
            last_scan_time: iso8601(snapshot.finished),
            files: snapshot.index.files.len(),
            duration_ms: snapshot.duration.as_millis(),
        },
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::grammar::Registry;
    use crate::project::config::{Cli, Config};
    use crate::project::scanner::Scanner;
    use crate::service::workspace::Workspace;
    use clap::Parser;
    use http_body_util::BodyExt;
    use serde_json::Value;

    /// State whose first scan has not finished (it was never started).
    pub(crate) fn initializing() -> (tempfile::TempDir, Arc<State>) {
        let dir = tempfile::tempdir().unwrap();
        let cli = Cli::try_parse_from(["dupcheck", dir.path().to_str().unwrap()]).unwrap();
        let registry = Registry::builtin();
        let config = Config::resolve(&cli, dir.path(), &registry, |_| {}).unwrap();
        let scanner = Scanner::new(Arc::new(config), registry);
        (
            dir,
            Arc::new(State {
                workspace: Workspace::unstarted(scanner),
                grace_over: tokio::sync::watch::channel(false).1,
                store: None,
            }),
        )
    }

    async fn body(res: HttpResponse) -> Value {
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn before_the_first_scan_stats_are_not_ready_and_health_says_initializing() {
        let (_dir, state) = initializing();
        let res = stats(&state).await.unwrap_err().into_response();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers().get(hyper::header::RETRY_AFTER).unwrap(), "1");
        assert_eq!(
            body(res).await,
            serde_json::json!({"error": "NotReady", "message": "The initial scan is still running; retry shortly", "statusCode": 503})
        );
        let health = body(health(&state).await).await;
        assert_eq!(
            (&health["status"], &health["lastScanTime"], &health["files"]),
            (
                &serde_json::json!("initializing"),
                &Value::Null,
                &serde_json::json!(0)
            )
        );
    }
}
