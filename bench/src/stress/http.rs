//! A tiny HTTP/1.1 client over `std::net::TcpStream`: keep-alive
//! connections ([`Conn`]), one-shot exchanges of raw bytes ([`exchange`]),
//! and a response parser that reads `Content-Length`, chunked and
//! until-close bodies.
//!
//! It only ever connects to 127.0.0.1, and every read and write has a
//! time-out, so a server that hangs fails a request instead of the run.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// How long a response may take unless a caller says otherwise.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The Content-Type of every answer of the server, errors included.
pub const JSON_TYPE: &str = "application/json; charset=utf-8";

/// The longest response head the parser accepts.
const MAX_HEAD: usize = 64 << 10;

/// The largest response body the parser accepts.
const MAX_BODY: usize = 512 << 20;

/// A parsed response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body, chunked encoding removed.
    pub body: Vec<u8>,
}

impl Response {
    /// The value of the first header called `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the server closes the connection after this response.
    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The body as a JSON object, or why it is not one (wrong Content-Type,
    /// not JSON, not an object).
    pub fn json_object(&self) -> Result<serde_json::Map<String, Value>, String> {
        if self.header("content-type") != Some(JSON_TYPE) {
            return Err(format!("not JSON: {}", self.summary()));
        }
        match self.json() {
            Some(Value::Object(map)) => Ok(map),
            _ => Err(format!("body is not a JSON object: {}", self.summary())),
        }
    }

    /// Checks that this is the JSON error `{"error", "message",
    /// "statusCode"}` of its status, and returns its `error` name.
    pub fn error_name(&self) -> Result<String, String> {
        let map = self.json_object()?;
        let name = map.get("error").and_then(Value::as_str);
        let message = map.get("message").and_then(Value::as_str);
        let code = map.get("statusCode").and_then(Value::as_u64);
        match (name, message, code) {
            (Some(name), Some(message), Some(code))
                if map.len() == 3 && code == u64::from(self.status) && !message.is_empty() =>
            {
                if message.contains("panicked") || message.contains("RUST_BACKTRACE") {
                    Err(format!("the message leaks a panic: {}", self.summary()))
                } else {
                    Ok(name.to_owned())
                }
            }
            _ => Err(format!("not the JSON error shape: {}", self.summary())),
        }
    }

    /// Status, Content-Type and the start of the body, for failure reports.
    pub fn summary(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let shown: String = text.chars().take(300).collect();
        let more = if shown.len() < text.len() { "..." } else { "" };
        format!(
            "status {}, content-type {:?}, {} body bytes: {shown}{more}",
            self.status,
            self.header("content-type").unwrap_or("none"),
            self.body.len()
        )
    }
}

/// The bytes of a request to 127.0.0.1 with `Host` and, for a body or a
/// POST, `Content-Length` set; `headers` come after those.
pub fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if !body.is_empty() || method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Connects to 127.0.0.1:`port` with `timeout` on every read and write.
pub fn connect(port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    Ok(stream)
}

/// The keep-alive connection in `conn`, opened anew (its reads and writes
/// giving up after `timeout`) when there is none or the server closed it.
/// A failure to open leaves `conn` as it was.
pub fn reuse(conn: &mut Option<Conn>, port: u16, timeout: Duration) -> io::Result<&mut Conn> {
    if conn.as_ref().is_none_or(Conn::is_closed) {
        *conn = Some(Conn::open_with(port, timeout)?);
    }
    Ok(conn.as_mut().expect("opened above"))
}

/// A keep-alive connection.
pub struct Conn {
    stream: TcpStream,
    /// Bytes read past the last response.
    buf: Vec<u8>,
    closed: bool,
}

impl Conn {
    /// Opens a connection to 127.0.0.1:`port`.
    pub fn open(port: u16) -> io::Result<Conn> {
        Conn::open_with(port, TIMEOUT)
    }

    /// Opens a connection to 127.0.0.1:`port` whose reads and writes give
    /// up after `timeout`.
    pub fn open_with(port: u16, timeout: Duration) -> io::Result<Conn> {
        Ok(Conn {
            stream: connect(port, timeout)?,
            buf: Vec::new(),
            closed: false,
        })
    }

    /// Whether the server said it closes this connection.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Sends `raw`, one whole request, and reads its response.
    pub fn send(&mut self, raw: &[u8]) -> io::Result<Response> {
        if self.closed {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the server closed this connection",
            ));
        }
        self.stream.write_all(raw)?;
        let response = read_response(&mut self.stream, &mut self.buf)?;
        self.closed = response.closes();
        Ok(response)
    }

    /// GETs `path`.
    pub fn get(&mut self, path: &str) -> io::Result<Response> {
        self.send(&request("GET", path, &[], b""))
    }

    /// POSTs the JSON `body` to `path`.
    pub fn post_json(&mut self, path: &str, body: &str) -> io::Result<Response> {
        self.send(&request(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        ))
    }
}

/// Sends `raw` on a new connection and reads one response, within
/// `timeout`. The bytes are written from another thread while this one
/// reads: the server may answer (413, 431) and close before reading them
/// all, and the answer must not be lost to a blocked write.
pub fn exchange(port: u16, raw: &[u8], timeout: Duration) -> io::Result<Response> {
    let mut stream = connect(port, timeout)?;
    let mut writer = stream.try_clone()?;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // A server that answered early may refuse the rest: not an error.
            let _ = writer.write_all(raw);
        });
        let mut buf = Vec::new();
        let response = read_response(&mut stream, &mut buf);
        // Unblocks the writer if the server stopped reading.
        let _ = stream.shutdown(Shutdown::Both);
        response
    })
}

/// Reads one response from `stream`, skipping interim ones (`100
/// Continue`); `buf` holds bytes already read and keeps those read past the
/// response.
pub fn read_response(stream: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<Response> {
    loop {
        let response = read_one(stream, buf)?;
        if !(100..200).contains(&response.status) || response.status == 101 {
            return Ok(response);
        }
    }
}

/// Reads one response, interim or final.
fn read_one(stream: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<Response> {
    let head_end = loop {
        if let Some(at) = find(buf, b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("a response head over 64 KB"));
        }
        if fill(stream, buf)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the connection closed after {} bytes, before a whole response head{}",
                    buf.len(),
                    if buf.is_empty() {
                        String::new()
                    } else {
                        format!(": {:?}", String::from_utf8_lossy(buf))
                    }
                ),
            ));
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid(&format!("a bad status line {status_line:?}")))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    buf.drain(..head_end + 4);
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let length = response.header("content-length").map(str::parse::<usize>);
    response.body = if status == 204 || status == 304 || (100..200).contains(&status) {
        Vec::new()
    } else if chunked {
        read_chunked(stream, buf)?
    } else if let Some(length) = length {
        let length = length.map_err(|_| invalid("a bad Content-Length"))?;
        if length > MAX_BODY {
            return Err(invalid("a body over 512 MB"));
        }
        read_exactly(stream, buf, length)?
    } else {
        while fill(stream, buf)? > 0 {
            if buf.len() > MAX_BODY {
                return Err(invalid("a body over 512 MB"));
            }
        }
        std::mem::take(buf)
    };
    Ok(response)
}

/// Reads a chunked body, trailers included.
fn read_chunked(stream: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(stream, buf)?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| invalid(&format!("a bad chunk size {line:?}")))?;
        if size == 0 {
            // Trailers, up to an empty line.
            while !read_line(stream, buf)?.is_empty() {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("a body over 512 MB"));
        }
        body.extend(read_exactly(stream, buf, size)?);
        if !read_line(stream, buf)?.is_empty() {
            return Err(invalid("a chunk not followed by CRLF"));
        }
    }
}

/// Reads up to the next CRLF and returns the line without it.
fn read_line(stream: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<String> {
    loop {
        if let Some(at) = find(buf, b"\r\n") {
            let line = String::from_utf8_lossy(&buf[..at]).into_owned();
            buf.drain(..at + 2);
            return Ok(line);
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("a chunk line over 64 KB"));
        }
        if fill(stream, buf)? == 0 {
            return Err(eof("a chunked body"));
        }
    }
}

/// Reads `n` bytes.
fn read_exactly(stream: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> io::Result<Vec<u8>> {
    while buf.len() < n {
        if fill(stream, buf)? == 0 {
            return Err(eof(&format!("a body of {n} bytes")));
        }
    }
    Ok(buf.drain(..n).collect())
}

/// Appends what one read returns to `buf`; 0 at the end of the stream.
fn fill(stream: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 64 << 10];
    loop {
        match stream.read(&mut chunk) {
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(n);
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}

/// Where `needle` first occurs in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the server sent {what}"),
    )
}

fn eof(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the connection closed in the middle of {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_of_every_framing_parse() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}\
            HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n\
            3;x=1\r\nabc\r\n1\r\nd\r\n0\r\nT: 1\r\n\r\n\
            HTTP/1.0 400 Bad Request\r\n\r\nrest";
        let mut stream = &raw[..];
        let mut buf = Vec::new();
        let first = read_response(&mut stream, &mut buf).expect("first");
        assert_eq!((first.status, &first.body[..]), (200, &b"{}"[..]));
        let second = read_response(&mut stream, &mut buf).expect("second");
        assert_eq!((second.status, &second.body[..]), (404, &b"abcd"[..]));
        let third = read_response(&mut stream, &mut buf).expect("third");
        assert_eq!((third.status, &third.body[..]), (400, &b"rest"[..]));
    }
}
