//! Keystroke to published diagnostics in `dupcheck lsp`, in process and
//! with `--server` (asking a running server), beside the same check over
//! HTTP (`POST /api/check` with the buffer's `path`), in one run.
//!
//! Usage: `cargo run --release -p dupcheck-bench --bin lsp_bench -- DIR FILE [EDITS]`
//! (FILE relative to DIR; EDITS 200 by default). Both servers are the
//! release binary (`DUPCHECK_BIN`, else `target/release/dupcheck`) on DIR,
//! without the cache (nothing is written into DIR). Each LSP edit inserts, then deletes, one
//! character in the middle of FILE and waits for the diagnostics of that
//! version; the time is from sending the change to receiving them, less
//! the server's 150 ms debounce. Each HTTP check posts the edited buffer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};

/// The binary, unless `DUPCHECK_BIN` names another.
fn bin() -> String {
    std::env::var("DUPCHECK_BIN").unwrap_or_else(|_| "target/release/dupcheck".into())
}
const DEBOUNCE: Duration = Duration::from_millis(150);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, rel) = match args.as_slice() {
        [dir, rel, ..] => (Path::new(dir).canonicalize().expect("DIR"), rel.clone()),
        _ => panic!("usage: lsp_bench DIR FILE [EDITS]"),
    };
    let edits: usize = args.get(2).map_or(200, |n| n.parse().expect("EDITS"));
    let text = std::fs::read_to_string(dir.join(&rel)).expect("FILE");
    let middle = text.lines().count() as u32 / 2;
    let lsp = lsp_latencies(&dir, &rel, &text, middle, edits, &[]);
    let (mut server, port) = start_server(&dir);
    let url = format!("http://127.0.0.1:{port}");
    let remote = lsp_latencies(&dir, &rel, &text, middle, edits, &["--server", &url]);
    let http = http_latencies(port, &rel, &text, middle, edits);
    let _ = server.kill();
    let _ = server.wait();
    println!("{} ({} lines), {edits} edits", rel, text.lines().count());
    report("lsp (keystroke to diagnostics, less the debounce)", lsp);
    report("lsp --server (the same, through POST /api/check)", remote);
    report("http (POST /api/check with path)", http);
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    println!(
        "{name}: p50 {:.1} ms, p99 {:.1} ms",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
}

/// The buffer after edit `i`: a character inserted at the start of the
/// middle line on odd edits.
fn edited(text: &str, middle: u32, i: usize) -> String {
    if i.is_multiple_of(2) {
        return text.to_owned();
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    let line = format!(" {}", lines[middle as usize]);
    lines[middle as usize] = &line;
    lines.join("\n")
}

fn lsp_latencies(
    dir: &Path,
    rel: &str,
    text: &str,
    middle: u32,
    edits: usize,
    args: &[&str],
) -> Vec<Duration> {
    let mut child = Command::new(bin())
        .args(["lsp", "--no-cache"])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start dupcheck lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let uri = lsp_types::Url::from_file_path(dir.join(rel)).expect("uri");
    let root = lsp_types::Url::from_file_path(dir).expect("uri");
    let mut send = |m: Message| m.write(&mut stdin).expect("write");
    send(
        Request::new(
            RequestId::from(1),
            "initialize".into(),
            json!({"rootUri": root, "capabilities": {}}),
        )
        .into(),
    );
    let mut wait = |pick: &dyn Fn(&Message) -> bool| loop {
        let m = Message::read(&mut stdout).expect("read").expect("open");
        if pick(&m) {
            return m;
        }
    };
    wait(&|m| matches!(m, Message::Response(_)));
    let note =
        |method: &str, params: Value| Message::from(Notification::new(method.into(), params));
    send(note("initialized", json!({})));
    send(note(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "", "version": 0, "text": text}}),
    ));
    let published = |version: i32| {
        let uri = uri.to_string();
        move |m: &Message| {
            matches!(m, Message::Notification(n) if n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == uri.as_str() && n.params["version"] == version)
        }
    };
    let started = Instant::now();
    wait(&published(0));
    eprintln!(
        "first diagnostics (scan included) in {:?}",
        started.elapsed()
    );
    let mut times = Vec::with_capacity(edits);
    for i in 1..=edits {
        let change = if !i.is_multiple_of(2) {
            json!({"range": {"start": {"line": middle, "character": 0}, "end": {"line": middle, "character": 0}}, "text": " "})
        } else {
            json!({"range": {"start": {"line": middle, "character": 0}, "end": {"line": middle, "character": 1}}, "text": ""})
        };
        let sent = Instant::now();
        send(note(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": i}, "contentChanges": [change]}),
        ));
        wait(&published(i as i32));
        times.push(sent.elapsed().saturating_sub(DEBOUNCE));
    }
    send(Request::new(RequestId::from(2), "shutdown".into(), Value::Null).into());
    wait(&|m| matches!(m, Message::Response(_)));
    send(note("exit", Value::Null));
    let _ = child.wait();
    times
}

/// A server on DIR (without the cache) and its port.
fn start_server(dir: &Path) -> (std::process::Child, u16) {
    let mut child = Command::new(bin())
        .args(["--port", "0", "--host", "127.0.0.1", "--no-cache"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dupcheck");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("listening line");
    let port: u16 = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|p| p.parse().ok())
        .expect("port");
    (child, port)
}

fn http_latencies(port: u16, rel: &str, text: &str, middle: u32, edits: usize) -> Vec<Duration> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let format = Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_owned();
    let mut post = |code: &str| -> (Duration, u16) {
        let body = json!({"code": code, "format": format, "path": rel}).to_string();
        let request = format!(
            "POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let sent = Instant::now();
        stream.write_all(request.as_bytes()).expect("send");
        let (status, _) = read_response(&mut stream);
        (sent.elapsed(), status)
    };
    // The first check waits for the scan.
    loop {
        let (_, status) = post(text);
        if status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    (1..=edits)
        .map(|i| {
            let (time, status) = post(&edited(text, middle, i));
            assert_eq!(status, 200);
            time
        })
        .collect()
}

/// Reads one HTTP/1.1 response with a Content-Length: its status and body.
fn read_response(stream: &mut TcpStream) -> (u16, Vec<u8>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("head");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let status = head[9..12].parse().expect("status");
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(|v| v.trim().parse().expect("length"))
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    stream.read_exact(&mut body).expect("body");
    (status, body)
}
