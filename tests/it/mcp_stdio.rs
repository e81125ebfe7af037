//! `dupcheck mcp` driven by the official Python MCP SDK's stdio client
//! (`tests/mcp_stdio.py`), as an agent starts it: the four tools listed,
//! `check_code` answering what `POST /api/check` answers, bad input a tool
//! error, the end of input a clean exit (status 0); in process on DIR, and
//! with `--server URL` asking a running server.

use std::process::Command;

use serde_json::{json, Value};

use crate::common::{self, venv_bin, Server, BIN};

/// What the Python client saw: the tools' names, each call's result, and
/// the exit status of `dupcheck mcp ARGS` (null if it had to be killed).
fn session(args: &[&str], calls: &Value) -> Value {
    let status = tempfile::tempdir().expect("temp dir");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_stdio.py");
    let out = Command::new(venv_bin("python"))
        .arg(script)
        .arg(calls.to_string())
        .arg(status.path().join("status"))
        .args(["--", BIN, "mcp"])
        .args(args)
        .output()
        .expect("run tests/mcp_stdio.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/testdata/project/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture")
}

/// A tool's success: `structured` as structured content, `text` as text.
fn answer(structured: &Value, text: &str) -> Value {
    json!({"isError": false, "structuredContent": structured, "text": text})
}

/// A tool's error saying `text`.
fn tool_error(text: &str) -> Value {
    json!({"isError": true, "structuredContent": null, "text": text})
}

const MERGE_SUMMARY: &str = "2 duplications found in the project:\n\
    - `merge()` in src/app/merge-copy.js:4-18: 14 lines (105 tokens), lines 2-15 of the code (`merge()`)\n\
    - `merge()` in src/types/merge.ts:4-17: 14 lines (105 tokens), lines 2-15 of the code (`merge()`)";

/// The calls of both tests, and what a server on `project` answers to the
/// first over REST.
fn calls(server: &Server) -> (Value, Value) {
    let merge = json!({"code": read("src/util/merge.js"), "format": "javascript", "path": "src/util/merge.js"});
    let (status, rest) = server.check(merge.clone());
    assert_eq!(status, 200, "{rest}");
    let places: Vec<&Value> = rest["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| &d["codebaseLocation"]["file"])
        .collect();
    assert_eq!(places, ["src/app/merge-copy.js", "src/types/merge.ts"]);
    let calls = json!([
        ["check_code", merge],
        ["check_code", {"code": "let a = 1;"}],
        ["check_code", {"code": "let a = 1;", "format": "js", "mode": "loose"}],
    ]);
    (calls, rest)
}

/// The answers to the bad calls of [`calls`], as REST's messages.
fn bad_input() -> [Value; 2] {
    [
        tool_error("Missing required field: format"),
        tool_error("Unknown mode \"loose\"; use \"strict\", \"mild\" or \"weak\""),
    ]
}

#[test]
fn mcp_on_stdio_answers_as_the_api_and_exits_at_the_end_of_input() {
    let server = Server::start("project", &[]);
    let (calls, rest) = calls(&server);
    let dir = common::fixture("project");
    let dir = dir.path().to_str().expect("utf-8 path");
    let got = session(&[dir], &calls);
    let [missing, mode] = bad_input();
    assert_json!(
        got,
        json!({
            "tools": ["check_code", "check_diff", "list_clones", "project_stats"],
            "results": [answer(&rest, MERGE_SUMMARY), missing, mode],
            "exit": 0,
        })
    );
}

#[test]
fn mcp_with_server_asks_the_running_server() {
    let server = Server::start("project", &[]);
    let (calls, rest) = calls(&server);
    let url = format!("http://127.0.0.1:{}", server.port);
    let got = session(&["--server", &url], &calls);
    let [missing, mode] = bad_input();
    assert_json!(
        got,
        json!({
            "tools": ["check_code", "check_diff", "list_clones", "project_stats"],
            "results": [answer(&rest, MERGE_SUMMARY), missing, mode],
            "exit": 0,
        })
    );
}

#[test]
fn mcp_with_a_server_that_does_not_answer_says_so_in_a_tool_error() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let got = session(&["--server", &url], &json!([["project_stats", {}]]));
    let text = got["results"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(got["results"][0]["isError"], true, "{got}");
    assert!(
        text.starts_with(&format!(
            "Cannot ask the dupcheck server at {url} (--server): client error (Connect)"
        )),
        "{text}"
    );
    assert_eq!(got["exit"], 0);
}

#[test]
fn mcp_with_a_bad_server_url_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["mcp", "--server", "localhost:3000/x"])
        .output()
        .expect("run dupcheck mcp");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "dupcheck: error: --server \"localhost:3000/x\": expected the URL of a running dupcheck server, http://HOST:PORT\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn stdout_carries_only_protocol_messages_and_the_end_of_input_exits_0() {
    use std::io::Write;
    let dir = common::fixture("project");
    let mut child = Command::new(BIN)
        .args(["mcp", "--no-cache"])
        .arg(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start dupcheck mcp");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let mut stdin = child.stdin.take().expect("stdin");
    for message in &messages {
        writeln!(stdin, "{message}").expect("write a message");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("wait for dupcheck mcp");
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "dupcheck");
    assert_eq!(lines[1]["id"], 2);
    assert_eq!(
        lines[1]["result"]["tools"].as_array().map(Vec::len),
        Some(4)
    );
    // Logs go to stderr; no protocol message does.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MCP on stdio, scanning"), "{stderr}");
    assert!(!stderr.contains("jsonrpc"), "{stderr}");
}

#[test]
fn sigterm_ends_a_session_with_0_and_the_cache_written() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let dir = common::fixture("project");
    let start = || {
        Command::new(BIN)
            .arg("mcp")
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start dupcheck mcp")
    };
    // The summary line of the first scan, read from stderr.
    let summary = |child: &mut std::process::Child| {
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut lines = stderr.lines().map_while(Result::ok);
        let line = lines
            .find(|line| line.starts_with("dupcheck: scanned"))
            .expect("a scan summary");
        // Keep reading, so that the child never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        line
    };
    let mut first = start();
    // The input stays open: only the signal ends the session.
    let mut stdin = first.stdin.take().expect("stdin");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    writeln!(stdin, "{initialize}").expect("write a message");
    let scanned = summary(&mut first);
    assert!(scanned.contains("parsed, 0 reused)"), "{scanned}");
    let mut stdout = BufReader::new(first.stdout.take().expect("stdout"));
    let mut reply = String::new();
    stdout.read_line(&mut reply).expect("the reply");
    assert_eq!(
        serde_json::from_str::<Value>(&reply).expect("JSON")["id"],
        1
    );
    common::sigterm(&first);
    let status = first.wait().expect("wait for dupcheck mcp");
    assert_eq!(status.code(), Some(0));
    drop(stdin);

    // The next start reads every file back from the cache.
    let mut second = start();
    let scanned = summary(&mut second);
    assert!(scanned.contains("(0 parsed, "), "{scanned}");
    drop(second.stdin.take());
    assert_eq!(second.wait().expect("wait").code(), Some(0));
}
