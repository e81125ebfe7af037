//! `dupcheck lsp` driven as editors drive it: the real binary over stdio,
//! with a client written on `lsp-server`'s messages (its framing), on
//! JavaScript and Python fixtures (`testdata/lsp`); and once through
//! Neovim's own client, headless.

mod common;

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;

use crossbeam_channel::Receiver;
use lsp_server::{Message, Notification, Request, RequestId, Response};
use serde_json::{json, Value};

/// The longest any answer may take before the test gives up (a hang
/// guard, not a timing assertion).
const PATIENCE: Duration = Duration::from_secs(60);

/// An editor's side of a session with `dupcheck lsp`.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    from_server: Receiver<Message>,
    next_id: i32,
    /// Messages read while waiting for another one.
    seen: Vec<Message>,
    dir: tempfile::TempDir,
}

impl Client {
    /// Starts `dupcheck lsp ARGS` on a copy of `testdata/lsp` (not
    /// initialized yet).
    fn spawn(args: &[&str]) -> Client {
        let dir = common::fixture("lsp");
        let mut child = Command::new(common::BIN)
            .arg("lsp")
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dupcheck lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, from_server) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            while let Ok(Some(message)) = Message::read(&mut stdout) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            from_server,
            next_id: 0,
            seen: Vec::new(),
            dir,
        }
    }

    /// Starts and initializes a session on the fixture's root, with
    /// `options` as `initializationOptions`; `utf8` offers UTF-8 positions.
    fn start(options: Value, utf8: bool) -> (Client, Value) {
        let mut client = Client::spawn(&["--no-cache"]);
        let root = client.uri("");
        let encodings = if utf8 {
            json!(["utf-8", "utf-16"])
        } else {
            json!(["utf-16"])
        };
        let result = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root,
                "workspaceFolders": [{"uri": root, "name": "fixture"}],
                "initializationOptions": options,
                "capabilities": {
                    "general": {"positionEncodings": encodings},
                    "window": {"showDocument": {"support": true}}
                }
            }),
        );
        let result = result.result.expect("initialize answered");
        client.notify("initialized", json!({}));
        (client, result)
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The URI of `rel` in the fixture (`""`: the fixture).
    fn uri(&self, rel: &str) -> String {
        let root = self.dir.path().canonicalize().expect("canonical fixture");
        let path = if rel.is_empty() { root } else { root.join(rel) };
        lsp_types::Url::from_file_path(path)
            .expect("absolute path")
            .to_string()
    }

    fn send(&mut self, message: impl Into<Message>) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        message.into().write(stdin).expect("write to the server");
    }

    /// Writes `bytes` as they are.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(Notification::new(method.to_owned(), params));
    }

    /// Sends a request and waits for its answer.
    fn request(&mut self, method: &str, params: Value) -> Answer {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.to_owned(), params));
        self.answer(&id)
    }

    /// Waits for the answer to `id`.
    fn answer(&mut self, id: &RequestId) -> Answer {
        let message = self.wait(|m| matches!(m, Message::Response(r) if &r.id == id));
        let Message::Response(Response {
            response_result, ..
        }) = message
        else {
            unreachable!()
        };
        match response_result {
            Ok(result) => Answer {
                result: Some(result),
                error: None,
            },
            Err(error) => Answer {
                result: None,
                error: Some(json!({"code": error.code, "message": error.message})),
            },
        }
    }

    /// Waits for the first message (seen before or coming) that `pick`
    /// picks, and takes it.
    fn wait(&mut self, mut pick: impl FnMut(&Message) -> bool) -> Message {
        if let Some(at) = self.seen.iter().position(&mut pick) {
            return self.seen.remove(at);
        }
        loop {
            let message = self
                .from_server
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no such message; seen: {:#?}", self.seen));
            if pick(&message) {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// Waits for diagnostics of `rel` at `version` that `pick` picks.
    fn diagnostics_where(
        &mut self,
        rel: &str,
        version: i32,
        mut pick: impl FnMut(&Value) -> bool,
    ) -> Value {
        let uri = self.uri(rel);
        let message = self.wait(|m| match m {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                n.params["uri"] == uri
                    && n.params["version"] == version
                    && pick(&n.params["diagnostics"])
            }
            _ => false,
        });
        let Message::Notification(n) = message else {
            unreachable!()
        };
        n.params["diagnostics"].clone()
    }

    /// The first diagnostics published for `rel` at `version`.
    fn diagnostics(&mut self, rel: &str, version: i32) -> Value {
        self.diagnostics_where(rel, version, |_| true)
    }

    fn open(&mut self, rel: &str, language: &str, text: &str) {
        let uri = self.uri(rel);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    /// Ends the session as an editor does; the exit status.
    fn stop(mut self) -> ExitStatus {
        let answer = self.request("shutdown", Value::Null);
        assert_eq!(answer.result, Some(Value::Null));
        assert_eq!(answer.error, None);
        self.notify("exit", Value::Null);
        self.child.wait().expect("exit status")
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: its result or its error (`code` and `message`).
#[derive(Debug)]
struct Answer {
    result: Option<Value>,
    error: Option<Value>,
}

/// A range as JSON.
fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

/// The fixture's function, pasted after `prefix` on its first line.
fn pasted_merge(root: &Path, prefix: &str) -> String {
    let original = std::fs::read_to_string(root.join("src/util/merge.js")).expect("fixture");
    format!("{prefix}{original}\nstart();\n")
}

#[test]
fn a_pasted_function_is_a_diagnostic_with_exact_utf16_ranges_and_its_original_as_related() {
    let (mut client, init) = Client::start(Value::Null, false);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(init["capabilities"]["textDocumentSync"]["change"], 2);
    assert_eq!(init["serverInfo"]["name"], "dupcheck");
    // Non-ASCII before the copy on its first line: 'é' is one UTF-16 unit
    // and two bytes, '𝄞' two units and four bytes.
    let prefix = "const greeting = \"héllo 𝄞\"; ";
    let text = pasted_merge(client.root(), prefix);
    client.open("src/app.js", "javascript", &text);
    let diagnostics = client.diagnostics("src/app.js", 1);
    let merge = client.uri("src/util/merge.js");
    // `export` starts after 28 characters, 29 UTF-16 units.
    assert_eq!(
        diagnostics,
        json!([{
            "range": range(0, 29, 17, 1),
            "severity": 3,
            "code": "duplicate",
            "source": "dupcheck",
            "message": "Duplicates src/util/merge.js:1-18 (133 tokens)",
            "relatedInformation": [{
                "location": {"uri": merge, "range": range(0, 0, 17, 1)},
                "message": "src/util/merge.js:1-18 (133 tokens)"
            }]
        }])
    );
    assert_eq!(client.stop().code(), Some(0));
}

#[test]
fn utf8_positions_are_offered_and_counted_in_bytes() {
    let (mut client, init) = Client::start(json!({"severity": "warning"}), true);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    let prefix = "const greeting = \"héllo 𝄞\"; ";
    let text = pasted_merge(client.root(), prefix);
    client.open("src/app.js", "javascript", &text);
    let diagnostics = client.diagnostics("src/app.js", 1);
    assert_eq!(
        diagnostics[0]["range"],
        range(0, prefix.len() as u32, 17, 1)
    );
    assert_eq!(diagnostics[0]["severity"], 2);
}

#[test]
fn incremental_edits_are_checked_and_a_renamed_copy_still_matches_in_mild_mode() {
    let (mut client, _) = Client::start(json!({"mode": "mild"}), false);
    let uri = client.uri("src/app.js");
    let original = std::fs::read_to_string(client.root().join("src/app.js")).expect("fixture");
    client.open("src/app.js", "javascript", &original);
    assert_eq!(client.diagnostics("src/app.js", 1), json!([]));
    // Paste the function at the end, then rename `value` on its line 4.
    let pasted = std::fs::read_to_string(client.root().join("src/util/merge.js")).expect("fixture");
    let end = original.lines().count() as u32;
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": range(end, 0, end, 0), "text": format!("\n{pasted}")}]
        }),
    );
    let first = end + 1;
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 3},
            "contentChanges": [{"range": range(first + 3, 10, first + 3, 15), "text": "item"}]
        }),
    );
    let diagnostics = client.diagnostics("src/app.js", 3);
    assert_eq!(
        diagnostics[0]["range"],
        range(first, 0, first + 17, 1),
        "{diagnostics:#}"
    );
    assert_eq!(
        diagnostics[0]["message"],
        "Duplicates src/util/merge.js:1-18 (133 tokens)"
    );
    // Closing clears the document's diagnostics.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let cleared = client.wait(|m| {
        matches!(m, Message::Notification(n)
            if n.method == "textDocument/publishDiagnostics" && n.params["uri"] == uri
                && n.params["diagnostics"] == json!([]) && n.params.get("version").is_none())
    });
    assert!(matches!(cleared, Message::Notification(_)));
}

#[test]
fn python_code_copied_between_two_unsaved_buffers_is_found_in_both() {
    let (mut client, _) = Client::start(Value::Null, false);
    let function = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    // A new function, in no file on disk: two open buffers hold it.
    let fresh = function
        .replace("summarize", "tally")
        .replace("totals", "sums")
        .replace("counts", "sizes");
    client.open("py/new_a.py", "python", &format!("import os\n\n\n{fresh}"));
    client.open("py/new_b.py", "python", &format!("{fresh}\n\nprint(1)\n"));
    let in_b = client.diagnostics_where("py/new_b.py", 1, |d| d != &json!([]));
    let in_a = client.diagnostics_where("py/new_a.py", 1, |d| d != &json!([]));
    let (a, b) = (client.uri("py/new_a.py"), client.uri("py/new_b.py"));
    assert_eq!(
        in_b,
        json!([{
            "range": range(0, 0, 12, 60),
            "severity": 3,
            "code": "duplicate",
            "source": "dupcheck",
            "message": "Duplicates py/new_a.py:4-16 (103 tokens)",
            "relatedInformation": [{
                "location": {"uri": a, "range": range(3, 0, 15, 60)},
                "message": "py/new_a.py:4-16 (103 tokens)"
            }]
        }])
    );
    assert_eq!(in_a[0]["range"], range(3, 0, 15, 60));
    assert_eq!(
        in_a[0]["relatedInformation"][0]["location"],
        json!({"uri": b, "range": range(0, 0, 12, 60)})
    );
}

#[test]
fn an_open_buffer_shadows_its_file_on_disk() {
    let (mut client, _) = Client::start(Value::Null, false);
    // stats.py's function moved out of it in the editor (unsaved): a copy
    // of it elsewhere no longer duplicates the stale text on disk.
    client.open(
        "py/stats.py",
        "python",
        "def summarize(rows):\n    return {}\n",
    );
    let function = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    client.open("py/report.py", "python", &function);
    assert_eq!(client.diagnostics("py/report.py", 1), json!([]));
}

#[test]
fn hover_and_code_action_show_the_other_places() {
    let (mut client, _) = Client::start(Value::Null, false);
    let function = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    client.open("py/report.py", "python", &function);
    let diagnostics = client.diagnostics("py/report.py", 1);
    let stats = client.uri("py/stats.py");
    let report = client.uri("py/report.py");
    assert_eq!(diagnostics[0]["range"], range(0, 0, 12, 65));
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": report}, "position": {"line": 5, "character": 4}}),
    );
    assert_eq!(
        hover.result,
        Some(json!({
            "contents": {
                "kind": "markdown",
                "value": format!("**Duplicates** `py/stats.py:1-13` (103 tokens)\n\n```python\n{}\n```", function.trim_end())
            },
            "range": range(0, 0, 12, 65)
        }))
    );
    // Outside any duplicated range: no hover.
    let nothing = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": report}, "position": {"line": 40, "character": 0}}),
    );
    assert_eq!(nothing.result, Some(Value::Null));
    let actions = client.request(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": report},
            "range": range(2, 0, 2, 0),
            "context": {"diagnostics": []}
        }),
    );
    let places = json!([{"uri": stats, "range": range(0, 0, 12, 65)}]);
    assert_eq!(
        actions.result,
        Some(json!([{
            "title": "Show the duplicate",
            "diagnostics": diagnostics,
            "command": {
                "title": "Show the duplicate",
                "command": "dupcheck.showDuplicates",
                "arguments": [{"uri": report, "range": range(0, 0, 12, 65)}, places]
            }
        }]))
    );
    // The editor runs the command: the server opens the first place and
    // answers them all.
    let command = actions.result.unwrap()[0]["command"].clone();
    client.next_id += 1;
    let id = RequestId::from(client.next_id);
    client.send(Request::new(
        id.clone(),
        "workspace/executeCommand".into(),
        json!({"command": command["command"], "arguments": command["arguments"]}),
    ));
    let show =
        client.wait(|m| matches!(m, Message::Request(r) if r.method == "window/showDocument"));
    let Message::Request(show) = show else {
        unreachable!()
    };
    assert_eq!(
        show.params,
        json!({"uri": stats, "takeFocus": true, "selection": range(0, 0, 12, 65)})
    );
    client.send(Response::new_ok(show.id, json!({"success": true})));
    assert_eq!(client.answer(&id).result, Some(places));
}

#[test]
fn bad_messages_get_errors_and_the_server_lives_on() {
    let (mut client, _) = Client::start(Value::Null, false);
    // Not JSON-RPC, with an id: answered.
    let body = r#"{"jsonrpc":"2.0","id":77,"method":5}"#;
    client.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    let answer = client.answer(&RequestId::from(77));
    assert_eq!(
        answer.error,
        Some(json!({
            "code": -32600,
            "message": "The message is not a JSON-RPC request: it needs \"jsonrpc\": \"2.0\", a string \"method\" and an object or array \"params\""
        }))
    );
    // Not JSON at all: nothing to answer, the next message still is.
    let body = "{{{ not json";
    client.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    let unknown = client.request("dupcheck/unknown", json!({}));
    assert_eq!(
        unknown.error,
        Some(json!({"code": -32601, "message": "Unknown method \"dupcheck/unknown\""}))
    );
    let bad_params = client.request("textDocument/hover", json!({"position": 3}));
    assert_eq!(bad_params.error.as_ref().unwrap()["code"], -32602);
    let bad_command = client.request(
        "workspace/executeCommand",
        json!({"command": "rm", "arguments": []}),
    );
    assert_eq!(
        bad_command.error,
        Some(
            json!({"code": -32602, "message": "Unknown command \"rm\"; the server has dupcheck.showDuplicates"})
        )
    );
    // A bad setting changes nothing and says why.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"dupcheck": {"minTokens": 0}}}),
    );
    let shown =
        client.wait(|m| matches!(m, Message::Notification(n) if n.method == "window/showMessage"));
    let Message::Notification(shown) = shown else {
        unreachable!()
    };
    assert_eq!(
        shown.params,
        json!({"type": 1, "message": "dupcheck: setting \"minTokens\" must be an integer >= 1; settings unchanged"})
    );
    // Still serving: a duplication is still found.
    let function = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    client.open("py/report.py", "python", &function);
    assert_eq!(
        client.diagnostics("py/report.py", 1)[0]["message"],
        "Duplicates py/stats.py:1-13 (103 tokens)"
    );
    assert_eq!(client.stop().code(), Some(0));
}

#[test]
fn configuration_changes_apply_and_requests_before_initialize_are_refused() {
    let mut client = Client::spawn(&["--no-cache"]);
    let early = client.request("textDocument/hover", json!({}));
    assert_eq!(
        early.error,
        Some(
            json!({"code": -32002, "message": "The server is not initialized: send initialize first"})
        )
    );
    let bad = client.request(
        "initialize",
        json!({"capabilities": {}, "initializationOptions": {"mode": "loose"}}),
    );
    assert_eq!(
        bad.error,
        Some(
            json!({"code": -32602, "message": "initializationOptions: setting \"mode\" must be one of: strict, mild, weak"})
        )
    );
    let root = client.uri("");
    let good = client.request(
        "initialize",
        json!({"rootUri": root, "capabilities": {}, "initializationOptions": {"minTokens": 1000}}),
    );
    assert!(good.result.is_some(), "{good:?}");
    client.notify("initialized", json!({}));
    let function = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    client.open("py/report.py", "python", &function);
    // 103 tokens are fewer than minTokens.
    assert_eq!(client.diagnostics("py/report.py", 1), json!([]));
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"minTokens": 100, "severity": "error"}}),
    );
    let diagnostics = client.diagnostics_where("py/report.py", 1, |d| d != &json!([]));
    assert_eq!(diagnostics[0]["severity"], 1);
    assert_eq!(
        diagnostics[0]["message"],
        "Duplicates py/stats.py:1-13 (103 tokens)"
    );
}

#[test]
fn exit_without_shutdown_is_status_1_and_requests_after_shutdown_are_refused() {
    let (mut client, _) = Client::start(Value::Null, false);
    let answer = client.request("shutdown", Value::Null);
    assert_eq!(answer.result, Some(Value::Null));
    let late = client.request("textDocument/hover", json!({}));
    assert_eq!(
        late.error,
        Some(json!({"code": -32600, "message": "The server is shut down: only exit is expected"}))
    );
    client.notify("exit", Value::Null);
    assert_eq!(client.child.wait().unwrap().code(), Some(0));

    let (mut client, _) = Client::start(Value::Null, false);
    client.notify("exit", Value::Null);
    assert_eq!(client.child.wait().unwrap().code(), Some(1));
}

/// Neovim (`nvim --headless`, its built-in client) starts `dupcheck lsp`,
/// opens a file with a planted copy and holds its diagnostics.
#[test]
fn neovim_shows_the_planted_copy() {
    let dir = common::fixture("lsp");
    let root = dir.path().canonicalize().expect("canonical");
    let planted = pasted_merge(&root, "");
    common::write(&root, "src/planted.js", &planted);
    let out = root.join("diagnostics.txt");
    let script = root.join("check.lua");
    // Neovim 0.7 (Debian's) has vim.lsp.start_client, not vim.lsp.start.
    let lua = format!(
        r#"
local out = {out:?}
local client = vim.lsp.start_client({{
  name = "dupcheck",
  cmd = {{ {bin:?}, "lsp", "--no-cache" }},
  root_dir = {root:?},
}})
vim.cmd("edit " .. {file:?})
vim.lsp.buf_attach_client(0, client)
local found = vim.wait(60000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
local lines = {{}}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("%d:%d-%d:%d %s %s", d.lnum, d.col, d.end_lnum, d.end_col, d.source, d.message))
end
if not found then table.insert(lines, "none") end
vim.fn.writefile(lines, out)
vim.lsp.stop_client(client)
vim.cmd("qall!")
"#,
        out = out.display().to_string(),
        bin = common::BIN,
        root = root.display().to_string(),
        file = root.join("src/planted.js").display().to_string(),
    );
    std::fs::write(&script, lua).expect("write script");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-S"])
        .arg(&script)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("nvim is installed (.ci/run installs it)");
    assert!(status.success(), "{status}");
    let got = std::fs::read_to_string(&out).expect("diagnostics written");
    assert_eq!(
        got,
        "0:0-17:1 dupcheck Duplicates src/util/merge.js:1-18 (133 tokens)\n"
    );
}
