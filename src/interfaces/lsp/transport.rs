//! Transport: LSP messages over stdin and stdout, framed by `lsp-server`.
//!
//! In: the bytes an editor writes to the server's stdin. Out: each message
//! on a channel, or, for a message that is not one (not JSON, not JSON-RPC,
//! or over [`MAX_MESSAGE`]), a [`Incoming::Malformed`] with its body, so
//! that the server can answer it and read on; and every message sent on
//! the outgoing channel written to stdout.
//!
//! Invariants: only protocol messages reach stdout (logs go to stderr); a
//! malformed message never ends the reading (`lsp-server`'s own stdio
//! transport stops at the first one); memory stays bounded: a header line
//! is read up to [`MAX_HEADER_LINE`] bytes, and the body of a message
//! announced larger than [`MAX_MESSAGE`] is skipped as it streams in, never
//! held.

use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use lsp_server::Message;

/// The largest message read: an editor sends whole buffers in `didOpen`.
pub(crate) const MAX_MESSAGE: usize = 64 << 20;
/// The longest header line read.
pub(crate) const MAX_HEADER_LINE: u64 = 4096;

/// What the reader got.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A message.
    Message(Message),
    /// Bytes framed as a message that are not one.
    Malformed {
        /// Why, as `lsp-server` or the size limit says.
        error: String,
        /// Its body as read (empty when skipped for its size).
        body: Vec<u8>,
    },
}

/// The two threads and their channels.
pub(crate) struct Transport {
    /// Messages from the editor; disconnected at the end of stdin or after
    /// `exit`.
    pub incoming: Receiver<Incoming>,
    /// Messages to the editor.
    pub outgoing: Sender<Message>,
    writer: JoinHandle<()>,
}

impl Transport {
    /// Starts reading stdin and writing stdout.
    pub(crate) fn stdio() -> io::Result<Transport> {
        let (in_tx, incoming) = crossbeam_channel::bounded(64);
        let (outgoing, out_rx) = crossbeam_channel::unbounded::<Message>();
        std::thread::Builder::new()
            .name("dupcheck-lsp-read".into())
            .spawn(move || read_all(Framed::new(io::stdin().lock()), &in_tx))?;
        let writer = std::thread::Builder::new()
            .name("dupcheck-lsp-write".into())
            .spawn(move || {
                let mut stdout = io::stdout().lock();
                for message in out_rx {
                    if let Err(err) = message.write(&mut stdout) {
                        tracing::warn!("cannot write to the editor: {err}");
                        return;
                    }
                }
                let _ = stdout.flush();
            })?;
        Ok(Transport {
            incoming,
            outgoing,
            writer,
        })
    }

    /// Writes what is queued and stops the writer.
    pub(crate) fn finish(self) {
        drop(self.outgoing);
        let _ = self.writer.join();
    }
}

/// Reads messages until the end of the input or `exit`.
fn read_all(mut input: Framed<impl BufRead>, to: &Sender<Incoming>) {
    loop {
        let incoming = match Message::read(&mut input) {
            Ok(None) => return,
            Ok(Some(message)) => Incoming::Message(message),
            Err(err) if err.kind() == io::ErrorKind::InvalidData => Incoming::Malformed {
                error: match input.skipped.take() {
                    Some(len) => format!(
                        "a message of {len} bytes is larger than the {MAX_MESSAGE} bytes a message may have"
                    ),
                    None => short(&err.to_string()),
                },
                body: std::mem::take(&mut input.body),
            },
            Err(err) => {
                tracing::warn!("cannot read from the editor: {err}");
                return;
            }
        };
        let exit =
            matches!(&incoming, Incoming::Message(Message::Notification(n)) if n.method == "exit");
        if to.send(incoming).is_err() || exit {
            return;
        }
    }
}

/// The first line of `error`, at most 200 characters.
fn short(error: &str) -> String {
    let line = error.lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The input as `lsp-server` reads it (header lines, then the body with
/// `read_exact`), bounded: long header lines are cut (a malformed header),
/// an oversized body is skipped and announced to `lsp-server` as empty,
/// and the last body is kept for the answer to a malformed message.
struct Framed<R> {
    inner: R,
    /// The body read since the last header line.
    body: Vec<u8>,
    /// The length of a body skipped for its size, until the header block
    /// ends.
    skipping: Option<usize>,
    /// The length of the last body skipped.
    skipped: Option<usize>,
}

impl<R: BufRead> Framed<R> {
    fn new(inner: R) -> Framed<R> {
        Framed {
            inner,
            body: Vec::new(),
            skipping: None,
            skipped: None,
        }
    }
}

impl<R: BufRead> Read for Framed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.body.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Framed<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt)
    }

    fn read_line(&mut self, line: &mut String) -> io::Result<usize> {
        self.body.clear();
        let start = line.len();
        let n = (&mut self.inner).take(MAX_HEADER_LINE).read_line(line)?;
        let header = &line[start..];
        if header == "\r\n" {
            if let Some(len) = self.skipping.take() {
                // The header block ends: drop the body as it streams in.
                io::copy(&mut (&mut self.inner).take(len as u64), &mut io::sink())?;
                self.skipped = Some(len);
            }
            return Ok(n);
        }
        let value = header
            .split_once(": ")
            .filter(|(name, _)| name.eq_ignore_ascii_case("Content-Length"))
            .and_then(|(_, value)| value.trim_end().parse::<usize>().ok());
        if let Some(len) = value.filter(|&len| len > MAX_MESSAGE) {
            self.skipping = Some(len);
            line.truncate(start);
            line.push_str("Content-Length: 0\r\n");
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn read(input: &str) -> Vec<Incoming> {
        let (tx, rx) = crossbeam_channel::unbounded();
        read_all(Framed::new(io::Cursor::new(input.as_bytes().to_vec())), &tx);
        drop(tx);
        rx.into_iter().collect()
    }

    #[test]
    fn a_malformed_message_is_reported_with_its_body_and_reading_goes_on() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let input = [
            frame(r#"{"id":7,"method":3}"#),
            frame("not json"),
            frame(good),
        ]
        .concat();
        let got = read(&input);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(
            matches!(&got[0], Incoming::Malformed { body, .. } if body == br#"{"id":7,"method":3}"#)
        );
        assert!(matches!(&got[1], Incoming::Malformed { body, .. } if body == b"not json"));
        assert!(
            matches!(&got[2], Incoming::Message(Message::Request(r)) if r.method == "shutdown")
        );
    }

    #[test]
    fn an_oversized_message_is_skipped_without_being_held() {
        let big = "x".repeat(MAX_MESSAGE + 1);
        let good = r#"{"jsonrpc":"2.0","method":"exit"}"#;
        let input = [frame(&big), frame(good)].concat();
        let got = read(&input);
        assert_eq!(got.len(), 2);
        match &got[0] {
            Incoming::Malformed { error, body } => {
                assert_eq!(
                    error,
                    &format!("a message of {} bytes is larger than the {MAX_MESSAGE} bytes a message may have", MAX_MESSAGE + 1)
                );
                assert!(body.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&got[1], Incoming::Message(Message::Notification(n)) if n.method == "exit")
        );
    }
}
