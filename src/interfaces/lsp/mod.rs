//! `dupcheck lsp`: a language server on stdin and stdout, a thin adapter
//! over the service for every editor.
//!
//! In: LSP messages (`lsp-server` frames them, `lsp-types` types them).
//! Out: `textDocument/publishDiagnostics` for each open document (one
//! diagnostic per duplicated range, its other places as related
//! information), hovers showing the other fragment, a code action showing
//! the duplicates (the command `dupcheck.showDuplicates`, which opens the
//! first with `window/showDocument` and answers all of them).
//!
//! The workspace is the first folder of `initialize` (else its `rootUri`,
//! else DIR); the engine runs in process on it, configured as the server
//! is (`Config::resolve_parts`: flags, `.dupcheck.json`, the cache, the
//! watcher), with `initializationOptions` over the flags. An edit is
//! checked [`QUIET`] after the last one: the edited document first, then
//! the other open ones, whose duplications with it may have changed; every
//! check is one [`check_buffer`](crate::service::open_check::check_buffer)
//! call on the worker thread. With `--server URL` a running server checks
//! instead (`remote`: `POST /api/check` with the buffer's path), the
//! buffer alone against its files on disk, so an edit rechecks the edited
//! document only; its failures are shown once (`window/showMessage`) and
//! the next edit tries again.
//!
//! A hover or code action on a document whose check of its current
//! version has not ended waits for it (at most [`MAX_PENDING`] wait), and
//! `$/cancelRequest` answers a waiting one `RequestCanceled`.
//!
//! Invariants: stdout carries only protocol messages; a message that is not
//! one gets an error answer when it has an id (logged otherwise) and the
//! server reads on; a panic while handling a message is that request's
//! error; results of a superseded version are dropped, never published (a
//! batch stops when the editor edits, a server's check is abandoned when
//! its document changes); every waiting request is answered (when its
//! document's check ends, it closes, or at `shutdown`); `exit` ends the
//! process with 0 after `shutdown`, 1 otherwise, as the protocol says.

mod answers;
mod documents;
pub(crate) mod remote;
mod session;
mod settings;
mod text;
mod transport;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    Cancel, DidChangeConfiguration, DidChangeTextDocument, DidCloseTextDocument,
    DidOpenTextDocument, Notification as _, ShowMessage,
};
use lsp_types::request::{
    CodeActionRequest, ExecuteCommand, HoverRequest, Initialize, Request as _, Shutdown,
};
use lsp_types::{
    CancelParams, CodeActionParams, DidChangeConfigurationParams, ExecuteCommandParams,
    HoverParams, InitializeParams, MessageType, ShowMessageParams, Url,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::remote::Remote;
use self::settings::Settings;
use self::text::Encoding;
use self::transport::{Incoming, Transport};
use self::worker::{Batch, Engine, FromWorker, Group};
use crate::engine::grammar::{FormatId, Registry};
use crate::engine::hash::HashMap;
use crate::interfaces::run_error::RunError;
use crate::panic_message;
use crate::project::config::LspArgs;

/// How long after the last edit a document is checked.
pub(crate) const QUIET: Duration = Duration::from_millis(150);
/// How often the server looks for a new snapshot (the watcher's updates).
const POLL: Duration = Duration::from_millis(250);
/// The command of the code action: shows a duplicated range's places.
pub(crate) const SHOW_DUPLICATES: &str = "dupcheck.showDuplicates";
/// Exit status after `exit` without `shutdown`, or at the end of input.
const EXIT_UNCLEAN: u8 = 1;
/// Requests waiting for checks at most; more are answered at once.
const MAX_PENDING: usize = 64;
/// Why index settings do not apply with `--server`.
const SERVER_SETTINGS: &str = "mode, minTokens and minLines are the server's with --server (set them where it runs); only severity applies";

/// Serves one editor on stdin and stdout until `exit` or the end of
/// input; returns the exit status. Fails only when it cannot start.
pub(crate) fn run(args: &LspArgs, cwd: &Path, registry: Arc<Registry>) -> Result<u8, RunError> {
    if let Some(url) = &args.server {
        // A bad URL is a usage error, before any editor talks to us.
        Remote::new(url, cwd.to_owned(), Arc::clone(&registry)).map_err(RunError::Usage)?;
    }
    let cores = crate::interfaces::http::server::cores();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(2 * cores)
        .enable_all()
        .build()
        .map_err(RunError::io("start the runtime"))?;
    let transport = Transport::stdio().map_err(RunError::io("start"))?;
    let edits = Arc::new(AtomicU64::new(0));
    let (batches, results) = worker::spawn(runtime.handle().clone(), Arc::clone(&edits))
        .map_err(RunError::io("start"))?;
    let mut server = Server {
        args,
        cwd,
        registry,
        runtime: runtime.handle().clone(),
        out: transport.outgoing.clone(),
        phase: Phase::Uninitialized,
        encoding: Encoding::Utf16,
        show_document: false,
        settings: Settings::default(),
        root: None,
        engine: None,
        engines: 0,
        docs: HashMap::default(),
        edits,
        batches,
        busy: false,
        requests: 0,
        snapshot: None,
        pending: Vec::new(),
        unanswered: None,
        index_changed: crossbeam_channel::unbounded(),
    };
    let status = server.serve(&transport.incoming, &results);
    if let Some(engine) = server.engine.take() {
        if engine.scanner().is_some() {
            flush(engine);
        }
    }
    drop(server);
    transport.finish();
    runtime.shutdown_timeout(Duration::from_millis(100));
    Ok(status)
}

/// Writes the cache, waiting at most half a second.
fn flush(engine: Arc<Engine>) {
    let (done, wait) = crossbeam_channel::bounded(1);
    let _ = std::thread::Builder::new().spawn(move || {
        if let Some(scanner) = engine.scanner() {
            scanner.flush_cache();
        }
        let _ = done.send(());
    });
    let _ = wait.recv_timeout(crate::project::scanner::LAST_CACHE_WRITE);
}

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShutDown,
}

/// An open document.
struct Doc {
    version: i32,
    text: String,
    /// Its path relative to the workspace, when inside it.
    rel: Option<String>,
    format: Option<FormatId>,
    /// When it is due for a check, if it needs one.
    due: Option<Instant>,
    /// Its duplicated ranges as last published, and their version.
    published: Option<(i32, Vec<Group>)>,
    /// The last version whose check ended (published or not): hovers and
    /// code actions of a later version wait for its check.
    settled: Option<i32>,
    /// Its changes so far (and its closing): a check of an older count is
    /// superseded.
    changes: Arc<AtomicU64>,
}

/// A hover or code action waiting for the check of its document's
/// version.
struct Pending {
    id: RequestId,
    uri: Url,
    asked: Asked,
}

/// What a pending request asks.
enum Asked {
    Hover(HoverParams),
    CodeAction(CodeActionParams),
}

struct Server<'a> {
    args: &'a LspArgs,
    cwd: &'a Path,
    registry: Arc<Registry>,
    runtime: tokio::runtime::Handle,
    out: Sender<Message>,
    phase: Phase,
    encoding: Encoding,
    /// Whether the client supports `window/showDocument`.
    show_document: bool,
    settings: Settings,
    root: Option<PathBuf>,
    engine: Option<Arc<Engine>>,
    /// Engines made so far (the id of the next).
    engines: u64,
    docs: HashMap<Url, Doc>,
    /// Counts edits, so that the worker can stop a superseded batch.
    edits: Arc<AtomicU64>,
    batches: Sender<Batch>,
    /// Whether a batch is running.
    busy: bool,
    /// Requests sent to the editor so far (the id of the next).
    requests: u32,
    /// The snapshot last checked against (its address), to recheck the
    /// open documents when the watcher applies a change.
    snapshot: Option<usize>,
    /// Hovers and code actions waiting for their documents' checks, at
    /// most [`MAX_PENDING`].
    pending: Vec<Pending>,
    /// The server's failure last shown to the user (`--server`), until a
    /// check succeeds: shown once, not at every edit.
    unanswered: Option<String>,
    /// The engines (`--server`) whose index changed, to recheck the open
    /// documents.
    index_changed: (Sender<u64>, Receiver<u64>),
}

/// What handling a message asks of the loop.
enum Flow {
    Continue,
    Exit(u8),
}

impl Server<'_> {
    fn serve(&mut self, incoming: &Receiver<Incoming>, results: &Receiver<FromWorker>) -> u8 {
        let index_changed = self.index_changed.1.clone();
        loop {
            let wait = self.next_due().map_or(POLL, |due| {
                due.saturating_duration_since(Instant::now()).min(POLL)
            });
            select! {
                recv(incoming) -> got => match got {
                    Ok(incoming) => {
                        if let Flow::Exit(status) = self.handle(incoming) {
                            return status;
                        }
                    }
                    Err(_) => {
                        tracing::info!("the editor closed the connection without exit");
                        return EXIT_UNCLEAN;
                    }
                },
                recv(results) -> got => match got {
                    Ok(result) => self.take_result(result),
                    Err(_) => {
                        tracing::error!("the checking thread ended");
                        return EXIT_UNCLEAN;
                    }
                },
                recv(index_changed) -> got => {
                    if got.ok() == self.engine.as_ref().map(|e| e.id) {
                        self.recheck_all(Instant::now());
                    }
                }
                default(wait) => {}
            }
            self.watch_snapshot();
            self.start_batch();
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // The writer ends only when stdout is closed; then nothing matters.
        let _ = self.out.send(message.into());
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_owned(), params));
    }

    fn show_message(&self, typ: MessageType, message: String) {
        self.notify::<ShowMessage>(ShowMessageParams { typ, message });
    }

    fn handle(&mut self, incoming: Incoming) -> Flow {
        let message = match incoming {
            Incoming::Message(message) => message,
            Incoming::Malformed { error, body } => {
                self.answer_malformed(&error, &body);
                return Flow::Continue;
            }
        };
        match message {
            Message::Request(request) => {
                let id = request.id.clone();
                let method = request.method.clone();
                let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.request(request)
                }));
                match handled {
                    Ok(response) => {
                        if let Some(response) = response {
                            self.send(response);
                        }
                    }
                    Err(panic) => {
                        tracing::error!("{method} failed: {}", panic_message(&*panic));
                        self.send(Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            format!("{method} failed (a bug: see the server's log)"),
                        ));
                    }
                }
                Flow::Continue
            }
            Message::Notification(notification) => {
                if notification.method == "exit" {
                    return Flow::Exit(if self.phase == Phase::ShutDown {
                        0
                    } else {
                        EXIT_UNCLEAN
                    });
                }
                let method = notification.method.clone();
                let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.notification(notification)
                }));
                if let Err(panic) = handled {
                    tracing::error!("{method} failed: {}", panic_message(&*panic));
                }
                Flow::Continue
            }
            Message::Response(response) => {
                if let Some(error) = response.response_result.err() {
                    tracing::debug!(
                        "the editor answered {} with an error: {}",
                        response.id,
                        error.message
                    );
                }
                Flow::Continue
            }
        }
    }

    /// Answers a message that is not one: with its id when it has one.
    fn answer_malformed(&self, error: &str, body: &[u8]) {
        let id = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| match v.get("id") {
                Some(Value::Number(n)) => n
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .map(RequestId::from),
                Some(Value::String(s)) => Some(RequestId::from(s.clone())),
                _ => None,
            });
        match id {
            Some(id) => self.send(Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "The message is not a JSON-RPC request: it needs \"jsonrpc\": \"2.0\", a string \"method\" and an object or array \"params\"".into(),
            )),
            None => tracing::warn!("a message that is not JSON-RPC was skipped: {error}"),
        }
    }

    /// The response to `request`, if any is due now.
    fn request(&mut self, request: Request) -> Option<Response> {
        let id = request.id.clone();
        let error = |code: ErrorCode, message: String| {
            Some(Response::new_err(id.clone(), code as i32, message))
        };
        match (self.phase, request.method.as_str()) {
            (Phase::Uninitialized, Initialize::METHOD) => {
                let params: InitializeParams = match params(&request) {
                    Ok(p) => p,
                    Err(e) => return error(ErrorCode::InvalidParams, e),
                };
                Some(match self.initialize(params) {
                    Ok(result) => Response::new_ok(id, result),
                    Err(message) => Response::new_err(id, ErrorCode::InvalidParams as i32, message),
                })
            }
            (Phase::Uninitialized, _) => error(
                ErrorCode::ServerNotInitialized,
                "The server is not initialized: send initialize first".into(),
            ),
            (_, Initialize::METHOD) => error(
                ErrorCode::InvalidRequest,
                "The server is initialized already".into(),
            ),
            (Phase::ShutDown, _) => error(
                ErrorCode::InvalidRequest,
                "The server is shut down: only exit is expected".into(),
            ),
            (Phase::Running, Shutdown::METHOD) => {
                // Waiting requests are answered with what there is.
                for pending in std::mem::take(&mut self.pending) {
                    let response = self.answer(pending);
                    self.send(response);
                }
                self.phase = Phase::ShutDown;
                Some(Response::new_ok(id, ()))
            }
            (Phase::Running, HoverRequest::METHOD) => match params::<HoverParams>(&request) {
                Ok(p) => {
                    let uri = p.text_document_position_params.text_document.uri.clone();
                    self.answer_when_checked(id, uri, Asked::Hover(p))
                }
                Err(e) => error(ErrorCode::InvalidParams, e),
            },
            (Phase::Running, CodeActionRequest::METHOD) => {
                match params::<CodeActionParams>(&request) {
                    Ok(p) => {
                        let uri = p.text_document.uri.clone();
                        self.answer_when_checked(id, uri, Asked::CodeAction(p))
                    }
                    Err(e) => error(ErrorCode::InvalidParams, e),
                }
            }
            (Phase::Running, ExecuteCommand::METHOD) => {
                match params::<ExecuteCommandParams>(&request) {
                    Ok(p) => match self.execute(p) {
                        Ok(places) => Some(Response::new_ok(id, places)),
                        Err(e) => error(ErrorCode::InvalidParams, e),
                    },
                    Err(e) => error(ErrorCode::InvalidParams, e),
                }
            }
            (Phase::Running, method) => error(
                ErrorCode::MethodNotFound,
                format!("Unknown method {method:?}"),
            ),
        }
    }

    fn notification(&mut self, notification: Notification) {
        if self.phase == Phase::Uninitialized {
            // Notifications before initialize are dropped (the protocol).
            return;
        }
        let method = notification.method.as_str();
        let bad = |e: String| tracing::warn!("{method} ignored: {e}");
        match method {
            DidOpenTextDocument::METHOD => match notification_params(&notification) {
                Ok(p) => self.did_open(p),
                Err(e) => bad(e),
            },
            DidChangeTextDocument::METHOD => match notification_params(&notification) {
                Ok(p) => self.did_change(p),
                Err(e) => bad(e),
            },
            DidCloseTextDocument::METHOD => match notification_params(&notification) {
                Ok(p) => self.did_close(p),
                Err(e) => bad(e),
            },
            DidChangeConfiguration::METHOD => {
                match notification_params::<DidChangeConfigurationParams>(&notification) {
                    Ok(p) => self.did_change_configuration(&p.settings),
                    Err(e) => bad(e),
                }
            }
            Cancel::METHOD => match notification_params::<CancelParams>(&notification) {
                Ok(p) => self.cancel(p.id),
                Err(e) => bad(e),
            },
            // Saved files reach the index through the watcher.
            _ => tracing::debug!("{method} ignored"),
        }
    }
}

/// The params of `request`, or why they do not fit.
fn params<P: DeserializeOwned>(request: &Request) -> Result<P, String> {
    serde_json::from_value(request.params.clone())
        .map_err(|e| format!("Invalid params of {}: {e}", request.method))
}

/// The params of `notification`, or why they do not fit.
fn notification_params<P: DeserializeOwned>(notification: &Notification) -> Result<P, String> {
    serde_json::from_value(notification.params.clone()).map_err(|e| format!("invalid params: {e}"))
}
