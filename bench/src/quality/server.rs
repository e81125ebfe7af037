//! The server under test and a minimal HTTP client for it: `/api/health`
//! until ready, `/api/check` for each snippet.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dupcheck::engine::tokens::Mode;
use serde_json::{json, Value};

/// The server under test; killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    /// Starts `binary` on `dir` in `mode`, its stderr to `log`, and waits
    /// until its first scan is done.
    pub fn start(binary: &Path, dir: &Path, mode: Mode, log: &Path) -> io::Result<Server> {
        let child = Command::new(binary)
            .arg(dir)
            .args(["--port", "0", "--host", "127.0.0.1", "--mode", mode.name()])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log)?)
            .spawn()?;
        let mut server = Server { child, port: 0 };
        let stdout = server
            .child
            .stdout
            .take()
            .ok_or(io::ErrorKind::BrokenPipe)?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        // `dupcheck listening on http://127.0.0.1:PORT (scanning DIR)`
        let port = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://127.0.0.1:"));
        server.port = port
            .and_then(|port| port.parse().ok())
            .ok_or_else(|| io::Error::other(format!("unexpected first line {line:?}")))?;
        server.wait_ready()?;
        Ok(server)
    }

    /// Polls `/api/health` until the status is `ready`.
    fn wait_ready(&self) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(600);
        let mut client = Client::new(self.port);
        while Instant::now() < deadline {
            let (_, body) = client.request("GET", "/api/health", "")?;
            let health: Value = serde_json::from_slice(&body).unwrap_or_default();
            if health["status"] == "ready" {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(io::Error::other("the first scan took over 10 minutes"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 client over one kept-alive connection.
pub struct Client {
    port: u16,
    conn: Option<BufReader<TcpStream>>,
}

impl Client {
    pub fn new(port: u16) -> Client {
        Client { port, conn: None }
    }

    /// Sends one request; returns the status and the body. A kept-alive
    /// connection that the server has closed is replaced once.
    pub fn request(&mut self, method: &str, path: &str, body: &str) -> io::Result<(u16, Vec<u8>)> {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        );
        if let Some(answer) = self
            .conn
            .as_mut()
            .and_then(|conn| exchange(conn, &head).ok())
        {
            return Ok(answer);
        }
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let conn = self.conn.insert(BufReader::new(stream));
        exchange(conn, &head)
    }
}

/// Writes one request on `conn` and reads the answer: its status and its
/// body (which the server always sends with a Content-Length).
fn exchange(conn: &mut BufReader<TcpStream>, request: &str) -> io::Result<(u16, Vec<u8>)> {
    conn.get_mut().write_all(request.as_bytes())?;
    let mut line = String::new();
    conn.read_line(&mut line)?;
    let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok());
    let status = status.ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
    let mut length = None;
    loop {
        line.clear();
        if conn.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok();
        }
    }
    let mut body = vec![0; length.ok_or_else(|| io::Error::other("no Content-Length"))?];
    conn.read_exact(&mut body)?;
    Ok((status, body))
}

/// One reported duplication, as far as the benchmark looks at it.
pub struct Dup {
    pub file: String,
    pub start: u32,
    pub end: u32,
    pub tokens: u64,
}

/// The duplications reported for a snippet and the latency in milliseconds,
/// or why the request failed.
pub type Answer = Result<(Vec<Dup>, f64), String>;

/// Posts a snippet to `/api/check`.
pub fn check(client: &mut Client, format: &str, code: &str) -> Answer {
    let body = json!({ "code": code, "format": format }).to_string();
    let started = Instant::now();
    let (status, answer) = client
        .request("POST", "/api/check", &body)
        .map_err(|e| e.to_string())?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let answer: Value =
        serde_json::from_slice(&answer).map_err(|e| format!("status {status}: {e}"))?;
    let Some(dups) = answer["duplications"].as_array().filter(|_| status == 200) else {
        return Err(format!("status {status}: {answer}"));
    };
    let dup = |d: &Value| {
        let at = &d["codebaseLocation"];
        let line = |key: &str| at[key].as_u64().unwrap_or(0) as u32;
        let file = at["file"].as_str().unwrap_or_default().to_string();
        Dup {
            file,
            start: line("startLine"),
            end: line("endLine"),
            tokens: d["tokens"].as_u64().unwrap_or(0),
        }
    };
    Ok((dups.iter().map(dup).collect(), ms))
}
