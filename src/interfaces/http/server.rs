//! Server: binds, announces the real address, accepts connections, and
//! stops in bounded time on SIGINT or SIGTERM.
//!
//! Invariants: the first scan starts in the background as soon as the port
//! is bound (before the runtime: [`bind`]), and the `listening on` line is
//! printed (and flushed) once the server listens; headers must arrive
//! within the header time-out (30 s), or a 408 answers; on a signal the
//! server stops accepting, gives in-flight requests up to [`GRACE`], then
//! answers those still running 503, cancels every parse and scan, and
//! returns within about a second more.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioTimer;
use hyper_util::server::graceful::GracefulShutdown;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::TcpListener;

use super::conn::{answer_dropped, JsonErrorsIo};
use super::error::ApiError;
use super::{router, State};
use crate::project::scanner::LAST_CACHE_WRITE;
use crate::service::workspace::Workspace;
use crate::store::live::Live;

/// How long in-flight requests get after a stop signal.
pub(crate) const GRACE: Duration = Duration::from_secs(5);
/// How long the 503 answers of a stop get to go out.
const LAST_ANSWERS: Duration = Duration::from_millis(250);

/// Serves on `listener` ([`bind`]) until SIGINT or SIGTERM, the project of
/// `workspace`, whose first scan was started ([`Workspace::start`]).
pub(crate) async fn serve(
    listener: std::net::TcpListener,
    workspace: Arc<Workspace>,
    store: Option<Arc<Live>>,
) -> std::io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    // Before the announcement: a client that saw it may stop the server.
    let stop = stop_signal();
    let config = workspace.config();
    println!(
        "dupcheck listening on http://{addr} (scanning {})",
        config.dir.display()
    );
    use std::io::Write;
    std::io::stdout().flush()?;
    if config.host.is_unspecified() && config.allowed_hosts.is_empty() {
        crate::stderr_line(&format!(
            "dupcheck: warning: bound to {}, so reachable from the network, and any Host is served; bind to 127.0.0.1 (--host) or name the hosts to serve (--allowed-host) to refuse the rest",
            config.host
        ));
    }
    let header_timeout = config.header_timeout;

    let (grace_over, grace_over_rx) = tokio::sync::watch::channel(false);
    let state = Arc::new(State {
        workspace: Arc::clone(&workspace),
        grace_over: grace_over_rx,
        store,
    });
    // A store that does not answer is said in the log at once.
    if let Some(store) = state.store.clone() {
        tokio::spawn(async move { store.health().await });
    }

    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
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
                let (io, kept) = JsonErrorsIo::new(stream);
                let connection = graceful.watch(builder.serve_connection(io, service));
                tokio::spawn(async move {
                    let ended = connection.await;
                    match ended {
                        Err(err) if err.is_timeout() => {
                            answer_dropped(&kept, ApiError::HeaderTimeout { timeout: header_timeout }).await;
                        }
                        Err(err) if err.is_parse_version_h2() => {
                            answer_dropped(&kept, ApiError::Http2).await;
                        }
                        Err(err) => tracing::debug!("connection ended: {err}"),
                        Ok(()) => {}
                    }
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    tracing::info!("stopping: finishing in-flight requests");
    let drained = graceful.shutdown();
    tokio::pin!(drained);
    tokio::select! {
        () = &mut drained => {}
        () = tokio::time::sleep(GRACE) => {
            tracing::warn!("requests still running after {GRACE:?} are answered 503");
            let _ = grace_over.send(true);
            crate::engine::parse::stop();
            let _ = tokio::time::timeout(LAST_ANSWERS, &mut drained).await;
        }
    }
    crate::engine::parse::stop();
    let flush = tokio::task::spawn_blocking(move || workspace.scanner.flush_cache());
    if tokio::time::timeout(LAST_CACHE_WRITE, flush).await.is_err() {
        tracing::warn!("the cache was not written in time; the next start rebuilds what changed");
    }
    Ok(())
}

/// Binds `host`:`port` for [`serve`], as tokio's own bind does (address
/// reuse, so that a restart on the same port does not wait out the last
/// connections; non-blocking), but before any runtime: the first scan
/// starts right after.
pub(crate) fn bind(host: IpAddr, port: u16) -> std::io::Result<std::net::TcpListener> {
    let addr = SocketAddr::new(host, port);
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Connections waiting to be accepted (tokio's and mio's).
const BACKLOG: i32 = 1024;

/// The cores this process may use.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Listens for SIGINT and SIGTERM from now on (not from the first poll: a
/// signal during start-up, while the watcher walks DIR, must stop it too);
/// the future resolves on the first.
pub(crate) fn stop_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let listen = |kind: SignalKind, name: &str| {
            signal(kind)
                .inspect_err(|err| tracing::warn!("cannot listen for {name}: {err}"))
                .ok()
        };
        let mut interrupt = listen(SignalKind::interrupt(), "SIGINT");
        let mut term = listen(SignalKind::terminate(), "SIGTERM");
        async move {
            let received = |s: &mut Option<tokio::signal::unix::Signal>| {
                let s = s.take();
                async move {
                    match s {
                        Some(mut s) => s.recv().await,
                        None => std::future::pending().await,
                    }
                }
            };
            tokio::select! {
                _ = received(&mut interrupt) => {}
                _ = received(&mut term) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_bound_for_reuse_and_listens_before_any_runtime() {
        let localhost = IpAddr::from([127, 0, 0, 1]);
        let listener = bind(localhost, 0).unwrap();
        let socket = socket2::SockRef::from(&listener);
        assert!(socket.reuse_address().unwrap());
        assert!(socket.nonblocking().unwrap());
        // It accepts already: a client connects before anything serves.
        let addr = listener.local_addr().unwrap();
        std::net::TcpStream::connect(addr).unwrap();
        // A second server on the same port is refused, as before.
        let taken = bind(localhost, addr.port()).unwrap_err();
        assert_eq!(taken.kind(), std::io::ErrorKind::AddrInUse);
    }
}
