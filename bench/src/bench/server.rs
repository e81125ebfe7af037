//! The servers under test and HTTP to them: `target/release/dupcheck` and
//! jscpd-rs's `jscpd-server` as child processes (port, spawn time, stderr
//! lines stamped as read, RSS, SIGTERM on drop), dupcheck's summary line,
//! a small keep-alive HTTP/1.1 client, and the waits for readiness
//! (`/api/health`) and for the cache file to be written.

use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;

use crate::env::{proc_status_mb, Env, PEER_FORMATS};

/// Longest a peer run or a first scan may take.
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(300);

/// A server process under test; stopped (SIGTERM, then SIGKILL) on drop.
pub(crate) struct Server {
    child: Child,
    /// The port it listens on, on 127.0.0.1.
    pub(crate) port: u16,
    /// When it was spawned.
    pub(crate) spawned: Instant,
    /// stderr lines with the moment each was read.
    stderr: Receiver<(Instant, String)>,
}

/// Forwards the lines of `reader` to a channel, stamped when read, until EOF
/// (also after the receiver is gone, so the pipe never fills).
fn line_channel<R: Read + Send + 'static>(reader: Option<R>) -> Receiver<(Instant, String)> {
    let (tx, rx) = mpsc::channel();
    if let Some(reader) = reader {
        thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send((Instant::now(), line));
            }
        });
    }
    rx
}

impl Server {
    /// Starts `target/release/dupcheck DIR` on a free port and reads the
    /// port from its `listening on` line.
    pub(crate) fn dupcheck(env: &Env, dir: &Path, flags: &[&str]) -> Result<Server, String> {
        Server::dupcheck_with(env, dir, flags, &[])
    }

    /// [`Server::dupcheck`] with environment variables of its own (the
    /// scale benchmark's `DUPCHECK_LOG`, for the memory lines).
    pub(crate) fn dupcheck_with(
        env: &Env,
        dir: &Path,
        flags: &[&str],
        vars: &[(&str, &str)],
    ) -> Result<Server, String> {
        let spawned = Instant::now();
        let mut child = Command::new(&env.server)
            .arg(dir)
            .args(["--port", "0", "--host", "127.0.0.1"])
            .args(flags)
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start dupcheck: {e}"))?;
        let stdout = line_channel(child.stdout.take());
        let stderr = line_channel(child.stderr.take());
        let mut server = Server {
            child,
            port: 0,
            spawned,
            stderr,
        };
        let (_, line) = stdout
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| "dupcheck printed no `listening on` line within 30 s".to_owned())?;
        server.port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|port| port.parse().ok())
            .ok_or(format!("no port in {line:?}"))?;
        Ok(server)
    }

    /// Starts jscpd-rs's `jscpd-server DIR` with the thresholds, formats and
    /// file limits dupcheck uses; it answers once its scan is done.
    pub(crate) fn jscpd(env: &Env, dir: &Path) -> Result<Server, String> {
        let port = free_port()?;
        let spawned = Instant::now();
        let mut child = Command::new(env.tools.join("jscpd-rs/bin/jscpd-server"))
            .arg(dir)
            .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
            .arg("--config")
            .arg(&env.jscpd_config)
            .args(["--format", PEER_FORMATS, "--min-tokens", "50"])
            .args(["--min-lines", "5", "--max-size", "1mb"])
            .args(["--max-lines", "1000000"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start jscpd-server: {e}"))?;
        let _stdout = line_channel(child.stdout.take());
        let stderr = line_channel(child.stderr.take());
        Ok(Server {
            child,
            port,
            spawned,
            stderr,
        })
    }

    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for dupcheck's `dupcheck: scanned ...` line (its index answers
    /// checks) and the line of the clones after it (the whole-project
    /// clone detection that follows is done, and no longer shares the
    /// cores with what is measured next): when the first was read, and it.
    /// Binaries before the two lines gave one with both (`... reused): N
    /// clones, ...`), after detection.
    pub(crate) fn summary(&self, limit: Duration) -> Result<(Instant, String), String> {
        let deadline = Instant::now() + limit;
        let mut scanned = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.line(left) {
                Some((at, line)) if line.starts_with("dupcheck: scanned") => {
                    if line.contains(" clones, ") {
                        return Ok((at, line));
                    }
                    scanned = Some((at, line));
                }
                Some((_, line)) if line.contains(" duplicated lines, detected in ") => {
                    if let Some(scanned) = scanned {
                        return Ok(scanned);
                    }
                }
                Some(_) => continue,
                None => return Err(format!("no summary lines within {limit:?}")),
            }
        }
    }

    /// Its next stderr line and when it was read, waiting up to `limit`;
    /// `None` after `limit`, or at once when stderr is closed and read.
    pub(crate) fn line(&self, limit: Duration) -> Option<(Instant, String)> {
        self.stderr.recv_timeout(limit).ok()
    }

    /// Its VmRSS now, in MB.
    pub(crate) fn rss_mb(&self) -> Option<f64> {
        proc_status_mb(self.pid(), "VmRSS")
    }

    /// SIGTERM, up to 15 s for a graceful exit, then SIGKILL.
    pub(crate) fn stop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        // SAFETY: signals our own child, which try_wait says is not reaped.
        unsafe { libc::kill(self.pid() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                _ => return,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port nothing listens on at the moment.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// What dupcheck's summary line says.
pub(crate) struct Summary {
    /// Files scanned.
    pub(crate) files: u64,
    /// Files parsed.
    pub(crate) parsed: u64,
    /// Files not parsed again: their tokens came from the cache.
    pub(crate) reused: u64,
}

/// Parses `dupcheck: scanned N files, ... in X s (P parsed, R reused): ...`.
pub(crate) fn parse_summary(line: &str) -> Option<Summary> {
    let first_number = |s: &str| s.split_whitespace().next()?.parse().ok();
    let rest = line.strip_prefix("dupcheck: scanned ")?;
    let (_, counts) = rest.split_once('(')?;
    let (_, reused) = counts.split_once(", ")?;
    Some(Summary {
        files: first_number(rest)?,
        parsed: first_number(counts)?,
        reused: first_number(reused)?,
    })
}

// -------------------------------------------------------------------- HTTP --

/// A response: its status and its whole body.
pub(crate) struct Response {
    /// The status code.
    pub(crate) status: u16,
    /// The body, unchunked.
    pub(crate) body: Vec<u8>,
}

/// A keep-alive HTTP/1.1 connection to 127.0.0.1.
pub(crate) struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    /// Connects to `port`, with 60 s read and write timeouts.
    pub(crate) fn open(port: u16) -> io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        stream.set_write_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            reader: BufReader::with_capacity(1 << 16, stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends a complete request (see [`request`]) and reads the response.
    pub(crate) fn exchange(&mut self, request: &[u8]) -> io::Result<Response> {
        self.writer.write_all(request)?;
        self.read_response()
    }

    /// Reads one response: status line, headers, and a body of
    /// Content-Length bytes or chunks.
    fn read_response(&mut self) -> io::Result<Response> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
        let status_line = self.line()?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("bad status line"))?;
        let (mut length, mut chunked) = (None, false);
        for _ in 0..200 {
            let line = self.line()?;
            if line.is_empty() {
                let body = match (chunked, length) {
                    (true, _) => self.chunked_body()?,
                    (false, Some(n)) => self.exact(n)?,
                    (false, None) => return Err(bad("response without Content-Length")),
                };
                return Ok(Response { status, body });
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(bad("bad header line"));
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse().map_err(|_| bad("bad Content-Length"))?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            }
        }
        Err(bad("too many headers"))
    }

    /// One CRLF-terminated line, without its terminator.
    fn line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    /// Exactly `n` bytes.
    fn exact(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut body = vec![0; n];
        self.reader.read_exact(&mut body)?;
        Ok(body)
    }

    /// A chunked body, its trailers skipped.
    fn chunked_body(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        for _ in 0..1_000_000 {
            let size_line = self.line()?;
            let hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(hex, 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            if size == 0 {
                // Trailers end with an empty line.
                while !self.line()?.is_empty() {}
                return Ok(body);
            }
            body.extend(self.exact(size)?);
            self.line()?;
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "too many chunks",
        ))
    }
}

/// The bytes of one request with a JSON body (empty for GET).
pub(crate) fn request(method: &str, path: &str, port: u16, body: &str) -> Vec<u8> {
    let mut bytes = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// A `POST /api/check` of `code` in `format`.
pub(crate) fn check_request(port: u16, code: &str, format: &str) -> Vec<u8> {
    let body = json!({ "code": code, "format": format }).to_string();
    request("POST", "/api/check", port, &body)
}

/// Whether `needle` occurs in `haystack`.
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Polls `/api/health` every `poll` until it says ready; when it did.
pub(crate) fn wait_ready(port: u16, limit: Duration, poll: Duration) -> Result<Instant, String> {
    let deadline = Instant::now() + limit;
    let health = request("GET", "/api/health", port, "");
    let mut conn: Option<Conn> = None;
    while Instant::now() < deadline {
        if conn.is_none() {
            conn = Conn::open(port).ok();
        }
        if let Some(c) = conn.as_mut() {
            match c.exchange(&health) {
                Ok(r) if r.status == 200 && contains(&r.body, b"\"ready\"") => {
                    return Ok(Instant::now())
                }
                Ok(_) => {}
                Err(_) => conn = None,
            }
        }
        thread::sleep(poll);
    }
    Err(format!("not ready within {limit:?}"))
}

/// Waits until the cache of `dir` was written at or after `since`.
pub(crate) fn wait_for_cache(dir: &Path, since: SystemTime, limit: Duration) -> bool {
    let file = dupcheck::project::cache::file_in(&dir.join(".dupcheck-cache"));
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let written = fs::metadata(&file).and_then(|m| m.modified());
        if written.is_ok_and(|t| t >= since) {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}
