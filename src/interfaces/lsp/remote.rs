//! Remote: the checks of `dupcheck lsp --server URL`, asked of a running
//! dupcheck server instead of the engine in process.
//!
//! In: the server's URL (`http://HOST:PORT`), the workspace's root, and a
//! buffer with its path and format. Out: the duplications of the server's
//! answer to `POST /api/check` (`code`, `format`, `path`: the buffer's path
//! relative to the server's working directory, learnt once from
//! `GET /api/health`), or a [`Failure`] saying why there is none.
//!
//! The server sees its files on disk, not the editor's other unsaved
//! buffers: in this mode a buffer is checked alone, as `/api/check` checks
//! it (its own file excluded). [`watch`] asks the server every
//! [`INDEX_POLL`] whether its index changed, so that open documents are
//! checked again when a file is saved, as in process.
//!
//! Invariants: every exchange ends within [`ANSWER_TIME`] (connecting
//! within [`CONNECT_TIME`]); an answer is read through
//! [`MAX_ANSWER`] bytes at most; nothing the server sends (a status, a
//! body that is not JSON) is more than a [`Failure`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::engine::grammar::DefKind;
use crate::engine::grammar::{FormatId, Registry};
use crate::engine::matching::Span;
use crate::engine::symbols::Symbol;
use crate::engine::tokens::Position;

/// How long connecting to the server may take.
pub(crate) const CONNECT_TIME: Duration = Duration::from_secs(5);
/// How long one exchange with the server may take, answer read.
pub(crate) const ANSWER_TIME: Duration = Duration::from_secs(60);
/// The largest answer read (a check's fragments are capped at 16 MB).
pub(crate) const MAX_ANSWER: usize = 64 << 20;
/// The longest wait before retrying a server that asked for one.
const MAX_RETRY: Duration = Duration::from_secs(10);
/// How often the server is asked whether its index changed.
pub(crate) const INDEX_POLL: Duration = Duration::from_secs(2);

/// A running dupcheck server and the way to it.
pub(crate) struct Remote {
    /// `http://HOST:PORT`, as given, without a trailing slash.
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
    /// The workspace root: documents' paths are relative to it.
    root: PathBuf,
    /// The formats (their names are sent).
    registry: Arc<Registry>,
    /// The server's working directory, once it answered.
    server_dir: Mutex<Option<PathBuf>>,
}

/// Why a check has no answer from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The server refused the buffer itself (too large or too complex):
    /// no duplications to show, nothing to retry.
    Refused(String),
    /// The server could not be asked or did not answer: a message for the
    /// user, and when to try again, if the server said.
    Unanswered {
        /// What happened, for the user.
        message: String,
        /// When to try again (the server's `Retry-After`).
        retry: Option<Duration>,
    },
}

/// One duplication of the server's answer (docs/api.md, "The check's answer"), with the codebase
/// file's absolute path.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Where in the buffer.
    pub snippet: Span,
    /// The other place's file as the server names it.
    pub file: String,
    /// Its repository, when the server found it in another repository of
    /// its store.
    pub repository: Option<String>,
    /// That file on disk.
    pub absolute: PathBuf,
    /// Where in it.
    pub codebase: Span,
    /// Its text.
    pub fragment: String,
    /// Tokens duplicated.
    pub tokens: u32,
    /// Its format's name.
    pub format: String,
    /// What the buffer renamed against it (the buffer's text first).
    pub renamed: Vec<(String, String)>,
    /// The definition it lies in, as people read it.
    pub symbol: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    duplications: Vec<Duplication>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Duplication {
    snippet_location: Location,
    codebase_location: Location,
    tokens: u32,
    format: String,
    #[serde(default)]
    renamed: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    repository: Option<String>,
    start_line: u32,
    end_line: u32,
    start_column: u32,
    end_column: u32,
    #[serde(default)]
    fragment: Option<String>,
    #[serde(default)]
    symbol: Option<SymbolWire>,
}

/// A location's `symbol` as the server sends it.
#[derive(Deserialize)]
struct SymbolWire {
    kind: String,
    name: String,
    #[serde(default)]
    container: Option<String>,
    whole: bool,
}

impl SymbolWire {
    /// It as people read it; `None` for a kind this version does not know.
    fn said(self) -> Option<String> {
        Some(crate::service::answer::said(&Symbol {
            kind: DefKind::from_name(&self.kind)?,
            name: self.name,
            container: self.container,
            whole: self.whole,
        }))
    }
}

impl Location {
    fn span(&self) -> Span {
        Span {
            start: Position {
                line: self.start_line,
                column: self.start_column,
            },
            end: Position {
                line: self.end_line,
                column: self.end_column,
            },
        }
    }
}

impl Remote {
    /// The server at `url` (`http://HOST:PORT`) for the workspace `root`;
    /// an error naming the option when `url` is not such a URL.
    pub(crate) fn new(url: &str, root: PathBuf, registry: Arc<Registry>) -> Result<Remote, String> {
        Ok(Remote {
            base: server_base(url)?,
            client: client(),
            root,
            registry,
            server_dir: Mutex::new(None),
        })
    }

    /// The workspace root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The server's URL.
    pub(crate) fn url(&self) -> &str {
        &self.base
    }

    /// Sends `body` (JSON) to `path` with `method`; the status, the
    /// `Retry-After` and the body of the answer.
    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(StatusCode, Option<Duration>, Bytes), Failure> {
        let unanswered = |why: String| Failure::Unanswered {
            message: format!("cannot reach the dupcheck server at {}: {why}", self.base),
            retry: None,
        };
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        let body = match body {
            Some(body) => {
                request = request.header(CONTENT_TYPE, "application/json");
                Full::new(Bytes::from(body.to_string()))
            }
            None => Full::new(Bytes::new()),
        };
        let request = request.body(body).map_err(|e| unanswered(e.to_string()))?;
        let (status, headers, body) = send(&self.client, request).await.map_err(unanswered)?;
        let retry = headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|s| Duration::from_secs(s).min(MAX_RETRY));
        Ok((status, retry, body))
    }

    /// The server's working directory (asked once).
    async fn server_dir(&self) -> Result<PathBuf, Failure> {
        if let Some(dir) = self.lock_dir().clone() {
            return Ok(dir);
        }
        let (status, _, body) = self.exchange(Method::GET, "/api/health", None).await?;
        let dir = serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(|_| status == StatusCode::OK)
            .and_then(|v| v.get("workingDirectory")?.as_str().map(PathBuf::from))
            .ok_or_else(|| Failure::Unanswered {
                message: format!(
                    "{} is not a dupcheck server: GET /api/health answered {status} without a workingDirectory",
                    self.base
                ),
                retry: None,
            })?;
        // Paths are compared as the file system resolves them.
        let dir = dir.canonicalize().unwrap_or(dir);
        *self.lock_dir() = Some(dir.clone());
        Ok(dir)
    }

    fn lock_dir(&self) -> std::sync::MutexGuard<'_, Option<PathBuf>> {
        self.server_dir
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// When the server's index last changed, as `GET /api/health` says
    /// (`lastScanTime`, `lastUpdateTime`); `None` when it does not answer.
    async fn index_stamp(&self) -> Option<String> {
        let (status, _, body) = self.exchange(Method::GET, "/api/health", None).await.ok()?;
        let health: Value = serde_json::from_slice(&body).ok()?;
        (status == StatusCode::OK)
            .then(|| format!("{} {}", health["lastScanTime"], health["lastUpdateTime"]))
    }

    /// The duplications of `code` (of format `format`), the document at
    /// `rel` in the workspace (if inside it), as the server's
    /// `POST /api/check` answers them.
    pub(crate) async fn check(
        &self,
        rel: Option<&str>,
        format: FormatId,
        code: &str,
    ) -> Result<Vec<Found>, Failure> {
        let dir = self.server_dir().await?;
        let path = rel.and_then(|rel| relative(&dir, &self.root.join(rel)));
        let format = &self.registry.get(format).name;
        let mut body = json!({"code": code, "format": format});
        if let Some(path) = path {
            body["path"] = Value::String(path);
        }
        let (status, retry, bytes) = self
            .exchange(Method::POST, "/api/check", Some(body))
            .await?;
        if status != StatusCode::OK {
            let error: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let name = error["error"].as_str().unwrap_or("");
            let message = error["message"].as_str().unwrap_or("");
            let said = format!("{} {name}: {message}", status.as_u16());
            return Err(match status {
                StatusCode::PAYLOAD_TOO_LARGE | StatusCode::UNPROCESSABLE_ENTITY => {
                    Failure::Refused(format!("the server refused the buffer: {said}"))
                }
                _ => Failure::Unanswered {
                    message: format!("the dupcheck server at {} answered {said}", self.base),
                    retry: retry.filter(|_| status == StatusCode::SERVICE_UNAVAILABLE),
                },
            });
        }
        let answer: Answer = serde_json::from_slice(&bytes).map_err(|e| Failure::Unanswered {
            message: format!(
                "the dupcheck server at {} sent an answer that is not a check's: {e}",
                self.base
            ),
            retry: None,
        })?;
        Ok(answer
            .duplications
            .into_iter()
            .map(|d| {
                let file = d.codebase_location.file.clone().unwrap_or_default();
                Found {
                    snippet: d.snippet_location.span(),
                    absolute: dir.join(&file),
                    codebase: d.codebase_location.span(),
                    fragment: d.codebase_location.fragment.unwrap_or_default(),
                    symbol: d.codebase_location.symbol.and_then(SymbolWire::said),
                    repository: d.codebase_location.repository,
                    file,
                    tokens: d.tokens,
                    format: d.format,
                    renamed: d.renamed,
                }
            })
            .collect())
    }
}

/// Asks `remote` every [`INDEX_POLL`] whether its index changed (a rescan,
/// or the watcher's update of a saved file), and sends `engine` on
/// `changed` when it did; ends when `changed` is closed.
pub(crate) async fn watch(
    remote: Arc<Remote>,
    engine: u64,
    changed: crossbeam_channel::Sender<u64>,
) {
    let mut last: Option<String> = None;
    loop {
        if let Some(stamp) = remote.index_stamp().await {
            if last.as_ref().is_some_and(|l| *l != stamp) && changed.send(engine).is_err() {
                return;
            }
            last = Some(stamp);
        }
        tokio::time::sleep(INDEX_POLL).await;
    }
}

/// `path` relative to `dir`, with `/`, when inside it.
fn relative(dir: &Path, path: &Path) -> Option<String> {
    let path = match (path.parent().map(Path::canonicalize), path.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => path.to_owned(),
    };
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    parts.map(|p| p.join("/")).filter(|r| !r.is_empty())
}

/// `http://HOST:PORT` of the `--server` flag's `url`; an error naming the
/// flag when `url` is not such a URL.
pub(crate) fn server_base(url: &str) -> Result<String, String> {
    let bad = || {
        format!("--server {url:?}: expected the URL of a running dupcheck server, http://HOST:PORT")
    };
    let uri: Uri = url.parse().map_err(|_| bad())?;
    let path_ok = matches!(uri.path(), "" | "/") && uri.query().is_none();
    let (Some("http"), Some(authority), true) = (uri.scheme_str(), uri.authority(), path_ok) else {
        return Err(bad());
    };
    Ok(format!("http://{authority}"))
}

/// The HTTP client of `--server`: connects within [`CONNECT_TIME`].
pub(crate) fn client() -> Client<HttpConnector, Full<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(CONNECT_TIME));
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

/// Sends `request` through `client`: the answer's status, headers and
/// body (at most [`MAX_ANSWER`] bytes), all within [`ANSWER_TIME`]; or why
/// there is none.
pub(crate) async fn send(
    client: &Client<HttpConnector, Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, HeaderMap, Bytes), String> {
    let exchange = async {
        let response = client.request(request).await.map_err(|e| causes(&e))?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| format!("its answer could not be read: {e}"))?
            .to_bytes();
        Ok((parts.status, parts.headers, body))
    };
    tokio::time::timeout(ANSWER_TIME, exchange)
        .await
        .map_err(|_| format!("no answer within {} seconds", ANSWER_TIME.as_secs()))?
}

/// An error and its causes, as one line (hyper's own `Display` names only
/// the outermost, such as "client error (Connect)").
pub(crate) fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let text = e.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = e.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_http_url_of_a_host_is_a_server() {
        let root = PathBuf::from("/w");
        let registry = Registry::builtin();
        let remote = Remote::new(
            "http://127.0.0.1:8080/",
            root.clone(),
            Arc::clone(&registry),
        )
        .unwrap();
        assert_eq!(remote.url(), "http://127.0.0.1:8080");
        for bad in [
            "127.0.0.1:8080",
            "https://example.test",
            "http://h:1/api",
            "ftp://h",
            "",
        ] {
            assert_eq!(
                Remote::new(bad, root.clone(), Arc::clone(&registry))
                    .err()
                    .unwrap(),
                format!("--server {bad:?}: expected the URL of a running dupcheck server, http://HOST:PORT")
            );
        }
    }

    #[test]
    fn paths_are_sent_relative_to_the_servers_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/a")).unwrap();
        assert_eq!(
            relative(&root, &root.join("src/a/b.js")).as_deref(),
            Some("src/a/b.js")
        );
        assert_eq!(relative(&root.join("src"), &root.join("x.js")), None);
        assert_eq!(relative(&root, &root), None);
    }
}
