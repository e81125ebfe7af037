//! `dupcheck lsp`: a language server on stdin and stdout, a thin adapter
//! over the engine for every editor.
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

mod remote;
mod settings;
mod text;
mod transport;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    Cancel, DidChangeConfiguration, DidChangeTextDocument, DidCloseTextDocument,
    DidOpenTextDocument, Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    CodeActionRequest, ExecuteCommand, HoverRequest, Initialize, Request as _, ShowDocument,
    Shutdown,
};
use lsp_types::{
    CancelParams, CodeAction, CodeActionOrCommand, CodeActionParams, CodeActionProviderCapability,
    Command, Diagnostic, DidChangeConfigurationParams, DidChangeTextDocumentParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, ExecuteCommandOptions,
    ExecuteCommandParams, Hover, HoverContents, HoverParams, HoverProviderCapability,
    InitializeParams, InitializeResult, Location, MarkupContent, MarkupKind, MessageType,
    NumberOrString, PublishDiagnosticsParams, ServerCapabilities, ServerInfo, ShowDocumentParams,
    ShowMessageParams, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    Url,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::remote::Remote;
use self::settings::Settings;
use self::text::{apply_changes, contains, overlaps, Encoding};
use self::transport::{Incoming, Transport};
use self::worker::{Batch, Checker, Engine, FromWorker, Group, Job, Outcome, TaskGuard};
use crate::engine::grammar::{FormatId, Registry};
use crate::engine::hash::HashMap;
use crate::interfaces::run_error::RunError;
use crate::panic_message;
use crate::project::config::{Config, LspArgs, ServeArgs};
use crate::service::workspace::Workspace;

/// How long after the last edit a document is checked.
pub const QUIET: Duration = Duration::from_millis(150);
/// How often the server looks for a new snapshot (the watcher's updates).
const POLL: Duration = Duration::from_millis(250);
/// The command of the code action: shows a duplicated range's places.
pub const SHOW_DUPLICATES: &str = "dupcheck.showDuplicates";
/// Exit status after `exit` without `shutdown`, or at the end of input.
const EXIT_UNCLEAN: u8 = 1;
/// Requests waiting for checks at most; more are answered at once.
const MAX_PENDING: usize = 64;
/// Why index settings do not apply with `--server`.
const SERVER_SETTINGS: &str = "mode, minTokens and minLines are the server's with --server (set them where it runs); only severity applies";

/// Serves one editor on stdin and stdout until `exit` or the end of
/// input; returns the exit status. Fails only when it cannot start.
pub fn run(args: &LspArgs, cwd: &Path, registry: Arc<Registry>) -> Result<u8, RunError> {
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

    fn initialize(&mut self, params: InitializeParams) -> Result<InitializeResult, String> {
        let settings = Settings::default()
            .parse(params.initialization_options.as_ref())
            .map_err(|e| format!("initializationOptions: {e}"))?;
        #[allow(deprecated)] // rootUri: the fallback the protocol names
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first())
            .map(|folder| &folder.uri)
            .or(params.root_uri.as_ref())
            .map(|uri| {
                uri.to_file_path()
                    .map_err(|()| format!("the workspace {uri} is not a local folder"))
            })
            .transpose()?;
        self.encoding = Encoding::negotiate(
            params
                .capabilities
                .general
                .as_ref()
                .and_then(|g| g.position_encodings.as_deref()),
        );
        self.show_document = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|s| s.support);
        self.root = root;
        let engine = self.start_engine(&settings)?;
        self.settings = settings;
        self.engine = Some(engine);
        self.phase = Phase::Running;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(self.encoding.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        ..TextDocumentSyncOptions::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![SHOW_DUPLICATES.to_owned()],
                    ..ExecuteCommandOptions::default()
                }),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "dupcheck".into(),
                version: Some(crate::VERSION.into()),
            }),
        })
    }

    /// The engine for `settings`: in process, a scanner on the workspace
    /// with `settings` over the flags, its watcher, and its first scan
    /// started; with `--server`, the server.
    fn start_engine(&mut self, settings: &Settings) -> Result<Arc<Engine>, String> {
        if let Some(url) = &self.args.server {
            let root = match (&self.root, &self.args.scan.dir) {
                (Some(root), _) => root.clone(),
                (None, Some(dir)) => self.cwd.join(dir),
                (None, None) => self.cwd.to_owned(),
            };
            let root = root.canonicalize().unwrap_or(root);
            let remote = Arc::new(Remote::new(url, root, Arc::clone(&self.registry))?);
            if settings.changes_the_index(&Settings::default()) {
                tracing::warn!("{SERVER_SETTINGS}");
            }
            tracing::info!(
                "workspace {}, checked by the server at {}",
                remote.root().display(),
                remote.url()
            );
            self.engines += 1;
            let watch = self.runtime.spawn(self::remote::watch(
                Arc::clone(&remote),
                self.engines,
                self.index_changed.0.clone(),
            ));
            return Ok(Arc::new(Engine {
                id: self.engines,
                checker: Checker::Remote(remote),
                _watch: Some(TaskGuard(watch.abort_handle())),
            }));
        }
        let mut scan = self.args.scan.clone();
        if let Some(root) = &self.root {
            scan.dir = Some(root.clone());
        }
        if let Some(mode) = settings.mode {
            scan.mode = Some(mode.name().to_owned());
        }
        scan.min_tokens = settings.min_tokens.or(scan.min_tokens);
        scan.min_lines = settings.min_lines.or(scan.min_lines);
        let config = Config::resolve_parts(
            &scan,
            &ServeArgs::default(),
            self.cwd,
            &self.registry,
            |warning| tracing::warn!("{warning}"),
        )
        .map_err(|e| e.to_string())?;
        tracing::info!("workspace {}", config.dir.display());
        let cores = crate::interfaces::http::server::cores();
        let workspace = Workspace::start(config, Arc::clone(&self.registry), cores);
        self.engines += 1;
        self.snapshot = None;
        Ok(Arc::new(Engine {
            id: self.engines,
            checker: Checker::Local(workspace),
            _watch: None,
        }))
    }

    fn did_change_configuration(&mut self, settings: &Value) {
        let settings = match self.settings.changed_by(settings) {
            Ok(settings) => settings,
            Err(e) => {
                self.show_message(
                    MessageType::ERROR,
                    format!("dupcheck: {e}; settings unchanged"),
                );
                return;
            }
        };
        if settings.changes_the_index(&self.settings) {
            if self.args.server.is_some() {
                self.show_message(MessageType::WARNING, format!("dupcheck: {SERVER_SETTINGS}"));
            } else {
                match self.start_engine(&settings) {
                    Ok(engine) => self.engine = Some(engine),
                    Err(e) => {
                        self.show_message(
                            MessageType::ERROR,
                            format!("dupcheck: {e}; settings unchanged"),
                        );
                        return;
                    }
                }
            }
        }
        self.settings = settings;
        self.recheck_all(Instant::now());
    }

    /// The document's path relative to the workspace, and its format.
    fn locate(&self, uri: &Url, language: Option<&str>) -> (Option<String>, Option<FormatId>) {
        let dir = self.engine.as_ref().map(|e| e.dir().to_owned());
        let path = uri.to_file_path().ok();
        let rel = match (&path, &dir) {
            (Some(path), Some(dir)) => path.strip_prefix(dir).ok().and_then(|rel| {
                let parts: Option<Vec<&str>> =
                    rel.components().map(|c| c.as_os_str().to_str()).collect();
                parts.map(|p| p.join("/")).filter(|r| !r.is_empty())
            }),
            _ => None,
        };
        let format = path
            .as_deref()
            .and_then(|p| self.registry.for_path(p))
            .or_else(|| language.and_then(|l| self.registry.lookup(l)))
            .map(|f| f.id);
        (rel, format)
    }

    fn did_open(&mut self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let (rel, format) = self.locate(&document.uri, Some(&document.language_id));
        let format = format.or_else(|| {
            self.registry
                .for_shebang(document.text.as_bytes())
                .map(|f| f.id)
        });
        let uri = document.uri;
        if let Some(old) = self.docs.get(&uri) {
            // Opened again without closing: its checks are superseded.
            old.changes.fetch_add(1, Ordering::SeqCst);
        }
        self.docs.insert(
            uri.clone(),
            Doc {
                version: document.version,
                text: document.text,
                rel,
                format,
                due: None,
                published: None,
                settled: None,
                changes: Arc::default(),
            },
        );
        self.edited(&uri);
    }

    fn did_change(&mut self, params: DidChangeTextDocumentParams) {
        let encoding = self.encoding;
        let uri = params.text_document.uri;
        let Some(doc) = self.docs.get_mut(&uri) else {
            tracing::warn!("didChange of {uri} that is not open: ignored");
            return;
        };
        apply_changes(&mut doc.text, params.content_changes, encoding);
        doc.version = params.text_document.version;
        doc.changes.fetch_add(1, Ordering::SeqCst);
        self.edited(&uri);
    }

    fn did_close(&mut self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Some(doc) = self.docs.remove(&uri) {
            doc.changes.fetch_add(1, Ordering::SeqCst);
            self.answer_pending(&uri);
            self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics: Vec::new(),
                version: None,
            });
            // The others' duplications with it are gone (or on disk).
            self.edited(&uri);
        }
    }

    /// After an edit of `uri`: a superseded batch stops, and the documents
    /// whose duplications may change are due a quiet while from now: in
    /// process every open one (the edited one is checked first), with a
    /// server the edited one alone.
    fn edited(&mut self, uri: &Url) {
        self.edits.fetch_add(1, Ordering::SeqCst);
        let due = Instant::now() + QUIET;
        if self.engine.as_ref().is_some_and(|e| e.sees_open_buffers()) {
            self.recheck_all(due);
        } else if let Some(doc) = self.docs.get_mut(uri) {
            doc.due = Some(due);
        }
    }

    fn recheck_all(&mut self, due: Instant) {
        for doc in self.docs.values_mut() {
            doc.due = Some(due);
        }
    }

    fn next_due(&self) -> Option<Instant> {
        self.docs.values().filter_map(|d| d.due).min()
    }

    /// Rechecks the open documents when the index changed under them.
    fn watch_snapshot(&mut self) {
        let Some(scanner) = self.engine.as_ref().and_then(|e| e.scanner()) else {
            return;
        };
        let Some(snapshot) = scanner.snapshot() else {
            return;
        };
        let address = Arc::as_ptr(&snapshot) as usize;
        if self.snapshot.replace(address).is_some_and(|a| a != address) {
            self.recheck_all(Instant::now());
        }
    }

    /// Sends the documents that are due to the worker, unless it is busy.
    fn start_batch(&mut self) {
        let now = Instant::now();
        let Some(engine) = &self.engine else { return };
        if self.busy
            || !self
                .docs
                .values()
                .any(|d| d.due.is_some_and(|due| due <= now))
        {
            return;
        }
        let mut jobs: Vec<(i32, Job)> = Vec::new();
        let mut open = Vec::new();
        for (uri, doc) in &mut self.docs {
            let text: Arc<str> = Arc::from(doc.text.as_str());
            if let Some(rel) = &doc.rel {
                open.push((rel.clone(), Arc::clone(&text)));
            }
            if doc.due.is_some_and(|due| due <= now) {
                doc.due = None;
                // The one whose diagnostics are oldest goes first: the one
                // just edited.
                let stale = doc.published.as_ref().map_or(i32::MIN, |(v, _)| *v);
                jobs.push((
                    stale.saturating_sub(doc.version),
                    Job {
                        uri: uri.clone(),
                        version: doc.version,
                        rel: doc.rel.clone(),
                        format: doc.format,
                        text,
                        edits: (doc.changes.load(Ordering::SeqCst), Arc::clone(&doc.changes)),
                    },
                ));
            }
        }
        jobs.sort_by_key(|(staleness, job)| (*staleness, job.uri.to_string()));
        open.sort();
        let batch = Batch {
            engine: Arc::clone(engine),
            jobs: jobs.into_iter().map(|(_, job)| job).collect(),
            open,
            edits: self.edits.load(Ordering::SeqCst),
            encoding: self.encoding,
            severity: self.settings.severity,
        };
        if self.batches.send(batch).is_ok() {
            self.busy = true;
        }
    }

    fn take_result(&mut self, result: FromWorker) {
        let (uri, version, engine, outcome) = match result {
            FromWorker::Done => {
                self.busy = false;
                return;
            }
            FromWorker::Checked {
                uri,
                version,
                engine,
                outcome,
            } => (uri, version, engine, outcome),
        };
        let current = self.engine.as_ref().map(|e| e.id);
        let Some(doc) = self.docs.get_mut(&uri) else {
            return;
        };
        if doc.version != version || current != Some(engine) {
            // Superseded: a newer check is due.
            return;
        }
        let groups = match outcome {
            Outcome::Found(groups) => groups,
            Outcome::Cancelled => {
                doc.due.get_or_insert_with(Instant::now);
                return;
            }
            Outcome::Refused(why) => {
                tracing::warn!("{uri} not checked: {why}");
                Vec::new()
            }
            Outcome::Unanswered { message, retry } => {
                // The diagnostics stay as they were; the next edit (or the
                // server's Retry-After) tries again.
                doc.settled = Some(version);
                if let Some(retry) = retry {
                    doc.due.get_or_insert_with(|| Instant::now() + retry);
                }
                self.answer_pending(&uri);
                tracing::warn!("{uri} not checked: {message}");
                if self.unanswered.as_ref() != Some(&message) {
                    self.show_message(MessageType::WARNING, format!("dupcheck: {message}"));
                    self.unanswered = Some(message);
                }
                return;
            }
        };
        if self.unanswered.take().is_some() {
            tracing::info!("the dupcheck server answers again");
        }
        let diagnostics: Vec<Diagnostic> = groups.iter().map(|g| g.diagnostic.clone()).collect();
        doc.published = Some((version, groups));
        doc.settled = Some(version);
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: Some(version),
        });
        self.answer_pending(&uri);
    }

    /// The answer to a hover or code action of `uri` now, when the check
    /// of its version has ended (or it is not open); else later, when it
    /// has.
    fn answer_when_checked(&mut self, id: RequestId, uri: Url, asked: Asked) -> Option<Response> {
        let pending = Pending { id, uri, asked };
        let waits = self
            .docs
            .get(&pending.uri)
            .is_some_and(|doc| doc.settled != Some(doc.version));
        if waits && self.pending.len() < MAX_PENDING {
            self.pending.push(pending);
            return None;
        }
        Some(self.answer(pending))
    }

    /// The answer to `pending` with what has been published.
    fn answer(&self, pending: Pending) -> Response {
        match pending.asked {
            Asked::Hover(p) => Response::new_ok(pending.id, self.hover(&p)),
            Asked::CodeAction(p) => Response::new_ok(pending.id, self.code_actions(&p)),
        }
    }

    /// Answers the requests waiting for `uri` (checked, or closed).
    fn answer_pending(&mut self, uri: &Url) {
        let (due, waiting): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| &p.uri == uri);
        self.pending = waiting;
        for pending in due {
            let response = self.answer(pending);
            self.send(response);
        }
    }

    /// `$/cancelRequest`: a request still waiting is answered
    /// `RequestCanceled`; one answered already is left alone.
    fn cancel(&mut self, id: NumberOrString) {
        let id = match id {
            NumberOrString::Number(n) => RequestId::from(n),
            NumberOrString::String(s) => RequestId::from(s),
        };
        if let Some(at) = self.pending.iter().position(|p| p.id == id) {
            self.pending.remove(at);
            self.send(Response::new_err(
                id,
                ErrorCode::RequestCanceled as i32,
                "The request was cancelled".into(),
            ));
        }
    }

    /// The duplicated ranges of the document published for its current
    /// version.
    fn groups(&self, uri: &Url) -> &[Group] {
        match self.docs.get(uri) {
            Some(Doc {
                version,
                published: Some((checked, groups)),
                ..
            }) if version == checked => groups,
            _ => &[],
        }
    }

    fn hover(&self, params: &HoverParams) -> Option<Hover> {
        let at = &params.text_document_position_params;
        let group = self
            .groups(&at.text_document.uri)
            .iter()
            .find(|g| contains(g.range(), at.position))?;
        let mut value = format!(
            "**Duplicates** `{}` ({} tokens)\n\n```{}\n{}\n```",
            group.first_name, group.first_tokens, group.language, group.first_fragment
        );
        let others = group
            .diagnostic
            .related_information
            .iter()
            .flatten()
            .skip(1);
        for (i, other) in others.enumerate() {
            if i == 0 {
                value.push_str("\n\nAnd also:");
            }
            value.push_str(&format!("\n- `{}`", other.message));
        }
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            }),
            range: Some(*group.range()),
        })
    }

    fn code_actions(&self, params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = &params.text_document.uri;
        self.groups(uri)
            .iter()
            .filter(|g| overlaps(g.range(), &params.range))
            .map(|g| {
                let n = g.places.len();
                let title = if n == 1 {
                    "Show the duplicate".to_owned()
                } else {
                    format!("Show all {n} duplicates")
                };
                let here = Location::new(uri.clone(), *g.range());
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    diagnostics: Some(vec![g.diagnostic.clone()]),
                    command: Some(Command {
                        title,
                        command: SHOW_DUPLICATES.to_owned(),
                        arguments: Some(vec![
                            serde_json::to_value(here).unwrap_or_default(),
                            serde_json::to_value(&g.places).unwrap_or_default(),
                        ]),
                    }),
                    ..CodeAction::default()
                })
            })
            .collect()
    }

    /// `dupcheck.showDuplicates [here, places]`: opens the first place
    /// (`window/showDocument`, when the client supports it) and answers the
    /// places.
    fn execute(&mut self, params: ExecuteCommandParams) -> Result<Vec<Location>, String> {
        if params.command != SHOW_DUPLICATES {
            return Err(format!(
                "Unknown command {:?}; the server has {SHOW_DUPLICATES}",
                params.command
            ));
        }
        let places: Vec<Location> = params
            .arguments
            .get(1)
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| {
                format!("{SHOW_DUPLICATES} takes two arguments: the duplicated range's Location and its places' Locations")
            })?;
        if let (true, Some(first)) = (self.show_document, places.first()) {
            self.requests += 1;
            let params = ShowDocumentParams {
                uri: first.uri.clone(),
                external: None,
                take_focus: Some(true),
                selection: Some(first.range),
            };
            self.send(Request::new(
                RequestId::from(format!("dupcheck-{}", self.requests)),
                ShowDocument::METHOD.to_owned(),
                params,
            ));
        }
        Ok(places)
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
