//! Connections: the socket as hyper sees it, so that the errors hyper
//! answers itself are JSON too.
//!
//! hyper answers a request it cannot parse (bad request line, header bytes
//! or Content-Length: 400; URI too long: 414; headers too large: 431) with
//! an empty body, and on its header time-out it closes the connection
//! without a word; it has no hook for either. [`JsonErrorsIo`] wraps the
//! socket: it recognises the error head hyper writes (always the whole end
//! of one write, since the wrapper is not vectored and hyper writes nothing
//! after it) and writes the [`ApiError`]'s JSON response in its place; and
//! when hyper drops the connection without a word (its header time-out, or
//! an HTTP/2 preface), it keeps the socket so that [`answer_dropped`] can
//! answer 408 or 505.
//!
//! Invariants: bytes of our own responses pass through unchanged (they
//! always carry a Content-Type, which hyper's error heads never do); an idle
//! keep-alive connection (nothing received since the last response) is
//! closed silently at the time-out, as before: a 408 goes only to a client
//! that sent part of a head, or nothing at all on a new connection.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::error::ApiError;

/// The socket of a connection hyper dropped on its header time-out.
pub(crate) type Kept = Arc<Mutex<Option<TcpStream>>>;

/// A socket that turns hyper's own error responses into JSON ones.
pub(crate) struct JsonErrorsIo {
    /// The socket, until dropped.
    inner: Option<TcpStream>,
    /// Bytes of a replaced response still to write.
    pending: Vec<u8>,
    /// Whether a response was written.
    wrote_any: bool,
    /// Whether bytes arrived since the last response was written.
    read_since_write: bool,
    /// Whether hyper shut the connection down (it ended cleanly).
    shut: bool,
    /// Where the socket goes when hyper drops it on an error.
    kept: Kept,
}

impl JsonErrorsIo {
    /// Wraps `stream`; the second value receives the socket if hyper drops
    /// it while a client owes it a request head.
    pub(crate) fn new(stream: TcpStream) -> (JsonErrorsIo, Kept) {
        let kept = Kept::default();
        let io = JsonErrorsIo {
            inner: Some(stream),
            pending: Vec::new(),
            wrote_any: false,
            read_since_write: false,
            shut: false,
            kept: Arc::clone(&kept),
        };
        (io, kept)
    }

    fn io(&mut self) -> Pin<&mut TcpStream> {
        Pin::new(
            self.inner
                .as_mut()
                .expect("the socket is only taken out on drop"),
        )
    }

    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            let written = self.io().poll_write(cx, &pending);
            self.pending = pending;
            match ready!(written)? {
                0 => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                n => drop(self.pending.drain(..n)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl Drop for JsonErrorsIo {
    fn drop(&mut self) {
        // hyper drops the socket without shutting it down on its errors, its
        // header time-out among them. A client that owes a head gets a 408.
        let owes_a_head = !self.wrote_any || self.read_since_write;
        if !self.shut && owes_a_head {
            if let Some(stream) = self.inner.take() {
                *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = Some(stream);
            }
        }
    }
}

impl hyper::rt::Read for JsonErrorsIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // As hyper_util::rt::TokioIo does it.
        // SAFETY: the bytes tokio reports filled were initialized by it, and
        // only those are advanced over.
        let n = unsafe {
            let mut tbuf = ReadBuf::uninit(buf.as_mut());
            ready!(self.io().poll_read(cx, &mut tbuf))?;
            tbuf.filled().len()
        };
        // SAFETY: see above.
        unsafe { buf.advance(n) };
        self.read_since_write |= n > 0;
        Poll::Ready(Ok(()))
    }
}

impl hyper::rt::Write for JsonErrorsIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some((start, error)) = hyper_error_head(buf) {
            let mut out = buf[..start].to_vec();
            out.extend_from_slice(&error_response(&buf[start..start + 8], &error));
            self.pending = out;
            self.wrote_any = true;
            // Flush and shutdown write the rest.
            let _ = self.poll_pending(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        let n = ready!(self.io().poll_write(cx, buf))?;
        if n > 0 {
            self.wrote_any = true;
            self.read_since_write = false;
        }
        Poll::Ready(Ok(n))
    }

    /// Not vectored: hyper then writes each response head as one buffer,
    /// whose end is its error head when it answers an error.
    fn is_write_vectored(&self) -> bool {
        false
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        self.io().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shut = true;
        ready!(self.poll_pending(cx))?;
        self.io().poll_shutdown(cx)
    }
}

/// If `buf` ends with the head hyper writes for a request it cannot parse
/// (`HTTP/1.x 400 Bad Request\r\n[connection: close\r\n]content-length:
/// 0\r\n[date: ...\r\n]\r\n`, or 414, 431), where that head starts and the
/// error it stands for.
fn hyper_error_head(buf: &[u8]) -> Option<(usize, ApiError)> {
    fn eat(rest: &mut &[u8], prefix: &[u8]) -> bool {
        rest.strip_prefix(prefix).map(|r| *rest = r).is_some()
    }
    if !buf.ends_with(b"\r\n\r\n") {
        return None;
    }
    let start = buf.windows(7).rposition(|w| w == b"HTTP/1.")?;
    let mut rest = &buf[start..];
    if !(eat(&mut rest, b"HTTP/1.1 ") || eat(&mut rest, b"HTTP/1.0 ")) {
        return None;
    }
    let error = if eat(&mut rest, b"400 Bad Request\r\n") {
        ApiError::BadRequest
    } else if eat(&mut rest, b"414 URI Too Long\r\n") {
        ApiError::UriTooLong
    } else if eat(&mut rest, b"431 Request Header Fields Too Large\r\n") {
        ApiError::HeadersTooLarge
    } else {
        return None;
    };
    eat(&mut rest, b"connection: close\r\n");
    if !eat(&mut rest, b"content-length: 0\r\n") {
        return None;
    }
    if rest.starts_with(b"date: ") {
        let end = rest.windows(2).position(|w| w == b"\r\n")?;
        rest = &rest[end + 2..];
    }
    (rest == b"\r\n").then_some((start, error))
}

/// The whole HTTP/1 response of `error`, with `version` (`HTTP/1.1`), that
/// closes the connection.
fn error_response(version: &[u8], error: &ApiError) -> Vec<u8> {
    let status = error.status();
    let body = error.body();
    let mut out = Vec::with_capacity(160 + body.len());
    out.extend_from_slice(version);
    out.extend_from_slice(
        format!(
            " {} {}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            body.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&body);
    out
}

/// Answers `error` on the socket hyper dropped without a word (its header
/// time-out, an HTTP/2 preface), if it was kept (see [`JsonErrorsIo`]), and
/// closes it.
pub(crate) async fn answer_dropped(kept: &Kept, error: ApiError) {
    let stream = kept.lock().unwrap_or_else(PoisonError::into_inner).take();
    let Some(mut stream) = stream else {
        return;
    };
    let response = error_response(b"HTTP/1.1", &error);
    let mut bytes = &response[..];
    while !bytes.is_empty() {
        match std::future::poll_fn(|cx| Pin::new(&mut stream).poll_write(cx, bytes)).await {
            Ok(n) if n > 0 => bytes = &bytes[n..],
            _ => return,
        }
    }
    let _ = std::future::poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyper_error_heads_are_recognised_and_our_responses_are_not() {
        let date = "date: Mon, 23 Nov 2026 22:08:16 GMT\r\n";
        let head = format!(
            "HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n{date}\r\n"
        );
        assert_eq!(
            hyper_error_head(head.as_bytes()),
            Some((0, ApiError::BadRequest))
        );
        let after_a_response = format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{{}}{head}");
        assert_eq!(
            hyper_error_head(after_a_response.as_bytes()).map(|(at, _)| at),
            Some(after_a_response.len() - head.len())
        );
        for (head, error) in [
            (
                "HTTP/1.0 414 URI Too Long\r\ncontent-length: 0\r\n\r\n",
                ApiError::UriTooLong,
            ),
            (
                "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n",
                ApiError::HeadersTooLarge,
            ),
        ] {
            assert_eq!(hyper_error_head(head.as_bytes()), Some((0, error)));
        }
        let ours = "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hyper_error_head(ours.as_bytes()), None);
    }
}
