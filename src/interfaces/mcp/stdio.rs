//! `dupcheck mcp [DIR]`: the MCP tools on stdin and stdout, for an agent
//! that starts its servers as child processes (`uvx dupcheck mcp`,
//! `npx dupcheck mcp`, or the binary's path).
//!
//! In: the flags of a scan, or `--server URL`. The engine runs in process
//! on DIR, started as `dupcheck lsp` starts it ([`Workspace::start`] on
//! `Config::resolve_parts`: flags, `.dupcheck.json`, the cache, the
//! watcher); with `--server URL` each call goes to the running server
//! instead ([`super::remote`]). Out: rmcp's stdio transport, newline-
//! delimited JSON-RPC, every protocol revision rmcp speaks.
//!
//! Invariants: stdout carries only protocol messages (logs go to stderr);
//! the end of input, SIGINT or SIGTERM ends the process with 0, the cache
//! written first (within `LAST_CACHE_WRITE`); a call before the first scan ends is a
//! tool error saying so, as over HTTP.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{QuitReason, ServerInitializeError};
use rmcp::ServiceExt;

use super::remote::Remote;
use super::Tools;
use crate::engine::grammar::Registry;
use crate::interfaces::run_error::RunError;
use crate::project::config::{Config, McpArgs, ServeArgs};
use crate::service::workspace::Workspace;
use crate::store::connect::Target;
use crate::store::live::Live;

/// Exit status when the session failed (the transport broke).
const EXIT_FAILED: u8 = 1;

/// Serves one agent on stdin and stdout until the end of input (or a
/// stopping signal); returns
/// the exit status. Fails only when it cannot start.
pub(crate) fn run(args: &McpArgs, cwd: &Path, registry: Arc<Registry>) -> Result<u8, RunError> {
    let cores = crate::interfaces::http::server::cores();
    let (tools, workspace) = match &args.server {
        Some(url) => {
            let remote = Remote::new(url).map_err(RunError::Usage)?;
            tracing::info!("MCP on stdio, answered by the server at {}", remote.url());
            (Tools::remote(Arc::new(remote)), None)
        }
        None => {
            let config = Config::resolve_parts(
                &args.scan,
                &ServeArgs::default(),
                cwd,
                &registry,
                |warning| crate::stderr_line(&format!("dupcheck: {warning}")),
            )?;
            let store = config
                .store
                .as_ref()
                .map(|store| Target::parse(&store.0))
                .transpose()?
                .map(|target| Arc::new(Live::new(target)));
            tracing::info!("MCP on stdio, scanning {}", config.dir.display());
            let workspace = Workspace::start(config, registry, cores, store);
            (Tools::local(Arc::clone(&workspace)), Some(workspace))
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(2 * cores)
        .build()
        .map_err(RunError::io("start the runtime"))?;
    let status = runtime.block_on(async {
        // From now on: an agent that stops its server with a signal (after
        // closing its input, or instead) gets the same clean exit.
        let stop = crate::interfaces::http::server::stop_signal();
        let session = async {
            match tools.serve(rmcp::transport::stdio()).await {
                Ok(running) => match running.waiting().await {
                    Ok(QuitReason::JoinError(err)) | Err(err) => {
                        tracing::error!("the MCP session failed: {err}");
                        EXIT_FAILED
                    }
                    // The end of input (or a cancel).
                    Ok(_) => 0,
                },
                // The agent went away before the handshake.
                Err(ServerInitializeError::ConnectionClosed(_)) => 0,
                Err(err) => {
                    tracing::error!("the MCP session did not start: {err}");
                    EXIT_FAILED
                }
            }
        };
        tokio::select! {
            status = session => status,
            () = stop => {
                tracing::info!("stopping: SIGINT or SIGTERM received");
                0
            }
        }
    });
    if let Some(workspace) = workspace {
        flush(workspace);
    }
    runtime.shutdown_timeout(Duration::from_millis(100));
    Ok(status)
}

/// Writes the cache, waiting at most `LAST_CACHE_WRITE`.
fn flush(workspace: Arc<Workspace>) {
    let (done, wait) = crossbeam_channel::bounded(1);
    let _ = std::thread::Builder::new().spawn(move || {
        workspace.scanner.flush_cache();
        let _ = done.send(());
    });
    let _ = wait.recv_timeout(crate::project::scanner::LAST_CACHE_WRITE);
}
