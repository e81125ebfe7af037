//! The session's workspace: `initialize` (the client's capabilities, the
//! workspace folder, `initializationOptions`), the engine it starts (in
//! process, a [`Workspace`], or a server with `--server`), and settings
//! changed while it runs.

use std::sync::Arc;
use std::time::Instant;

use lsp_types::{
    CodeActionProviderCapability, ExecuteCommandOptions, HoverProviderCapability, InitializeParams,
    InitializeResult, MessageType, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions,
};
use serde_json::Value;

use super::remote::Remote;
use super::settings::Settings;
use super::text::Encoding;
use super::worker::{Checker, Engine, TaskGuard};
use super::{Phase, Server, SERVER_SETTINGS, SHOW_DUPLICATES};
use crate::project::config::{Config, ServeArgs};
use crate::service::workspace::Workspace;
use crate::store::connect::Target;
use crate::store::live::Live;

impl Server<'_> {
    pub(super) fn initialize(
        &mut self,
        params: InitializeParams,
    ) -> Result<InitializeResult, String> {
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
            let watch = self.runtime.spawn(super::remote::watch(
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
        let store = match config.store.as_ref().map(|s| Target::parse(&s.0)) {
            Some(Ok(target)) => Some(Arc::new(Live::new(target))),
            Some(Err(e)) => return Err(e.to_string()),
            None => None,
        };
        let cores = crate::interfaces::http::server::cores();
        let workspace = Workspace::start(config, Arc::clone(&self.registry), cores, store);
        self.engines += 1;
        self.snapshot = None;
        Ok(Arc::new(Engine {
            id: self.engines,
            checker: Checker::Local(workspace),
            _watch: None,
        }))
    }

    pub(super) fn did_change_configuration(&mut self, settings: &Value) {
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
}
