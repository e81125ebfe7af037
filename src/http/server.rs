//! Server: binds, announces the real address, accepts connections, and
//! stops gracefully on SIGINT or SIGTERM.
//!
//! Invariants: the `listening on` line is printed (and flushed) only once the
//! port is bound, before the first scan starts in the background; headers
//! must arrive within 30 s; on a signal the server stops accepting and gives
//! in-flight requests up to 5 s.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use super::{router, State};
use crate::check::Admission;
use crate::config::Config;
use crate::grammar::Registry;
use crate::scan::Scanner;

/// How long a client may take to send its request headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long in-flight requests get after a stop signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves until SIGINT or SIGTERM.
pub async fn serve(config: Config, registry: Arc<Registry>) -> std::io::Result<()> {
    let listener = TcpListener::bind((config.host, config.port)).await?;
    let addr = listener.local_addr()?;
    println!(
        "dupcheck listening on http://{addr} (scanning {})",
        config.dir.display()
    );
    use std::io::Write;
    std::io::stdout().flush()?;

    let scanner = Scanner::new(Arc::new(config), registry);
    let state = Arc::new(State {
        scanner: Arc::clone(&scanner),
        buffers: Default::default(),
        admission: Admission::new(cores()),
    });
    // Watch before the first scan, so no change made during it is lost.
    let _watcher = if scanner.config().watch {
        crate::watch::spawn(Arc::clone(&scanner))
    } else {
        None
    };
    let first = Arc::clone(&scanner);
    tokio::spawn(async move {
        // The outcome is logged by the scanner; checks wait for the snapshot.
        let _ = first.rescan().await;
    });

    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(err) => {
                        // Out of file descriptors and the like: keep serving.
                        tracing::warn!("accept failed: {err}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let state = Arc::clone(&state);
                let service = service_fn(move |req| router::route(Arc::clone(&state), req));
                let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    if let Err(err) = connection.await {
                        tracing::debug!("connection ended: {err}");
                    }
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    tracing::info!("stopping: finishing in-flight requests");
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN_TIMEOUT) => tracing::warn!("in-flight requests did not finish in time"),
    }
    let _ = tokio::task::spawn_blocking(move || scanner.flush_cache()).await;
    Ok(())
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(err) => {
                    tracing::warn!("cannot listen for SIGTERM: {err}");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
