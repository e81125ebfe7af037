//! `dupcheck lsp` driven as editors drive it: the real binary over stdio,
//! with a client written on `lsp-server`'s messages (its framing), on
//! JavaScript and Python fixtures (`testdata/lsp`); and once through
//! Neovim's own client, headless.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
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
    /// The workspace (canonical).
    root: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Client {
    /// Starts `dupcheck lsp ARGS` on a copy of `testdata/lsp` (not
    /// initialized yet).
    fn spawn(args: &[&str]) -> Client {
        let dir = common::fixture("lsp");
        let mut client = Client::spawn_at(dir.path(), args);
        client._temp = Some(dir);
        client
    }

    /// Starts `dupcheck lsp ARGS` in `root` (not initialized yet).
    fn spawn_at(root: &Path, args: &[&str]) -> Client {
        let mut child = Command::new(common::BIN)
            .arg("lsp")
            .args(args)
            .current_dir(root)
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
            root: root.canonicalize().expect("canonical workspace"),
            _temp: None,
        }
    }

    /// Starts and initializes a session on the fixture's root, with
    /// `options` as `initializationOptions`; `utf8` offers UTF-8 positions.
    fn start(options: Value, utf8: bool) -> (Client, Value) {
        let mut client = Client::spawn(&["--no-cache"]);
        let result = client.initialize(options, utf8);
        (client, result)
    }

    /// Initializes the session on its root; the result.
    fn initialize(&mut self, options: Value, utf8: bool) -> Value {
        let client = self;
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
        result
    }

    fn root(&self) -> &Path {
        &self.root
    }

    /// The URI of `rel` in the workspace (`""`: the workspace).
    fn uri(&self, rel: &str) -> String {
        let root = self.root.clone();
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
        let id = self.send_request(method, params);
        self.answer(&id)
    }

    /// Sends a request; its id.
    fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.to_owned(), params));
        id
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
            "message": "Duplicates `mergeDeep()` in src/util/merge.js:1-18 (133 tokens)",
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
        "Duplicates `mergeDeep()` in src/util/merge.js:1-18 (133 tokens), renaming item → value"
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
            "message": "Duplicates `tally()` in py/new_a.py:4-16 (103 tokens)",
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
                "value": format!("**Duplicates** `summarize()` in `py/stats.py:1-13` (103 tokens)\n\n```python\n{}\n```", function.trim_end())
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
        "Duplicates `summarize()` in py/stats.py:1-13 (103 tokens)"
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
        "Duplicates `summarize()` in py/stats.py:1-13 (103 tokens)"
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
        "0:0-17:1 dupcheck Duplicates `mergeDeep()` in src/util/merge.js:1-18 (133 tokens)\n"
    );
}

/// The diagnostics an editor would get for `rel` from `/api/check`'s
/// answer (`answer`) to its text `text`: each snippet range once, UTF-16
/// positions, the codebase places as related information.
fn diagnostics_of_answer(root: &Path, text: &str, answer: &Value) -> Value {
    fn position(text: &str, line: u64, column: u64) -> Value {
        let content = text.split('\n').nth(line as usize - 1).unwrap_or("");
        let units: usize = content
            .chars()
            .take(column as usize - 1)
            .map(char::len_utf16)
            .sum();
        json!({"line": line - 1, "character": units})
    }
    fn range_of(text: &str, location: &Value) -> Value {
        let n = |key: &str| location[key].as_u64().expect("a number");
        json!({
            "start": position(text, n("startLine"), n("startColumn")),
            "end": position(text, n("endLine"), n("endColumn")),
        })
    }
    let mut groups: Vec<(Value, Vec<Value>, String)> = Vec::new();
    for d in answer["duplications"].as_array().expect("duplications") {
        let here = range_of(text, &d["snippetLocation"]);
        let place = &d["codebaseLocation"];
        let file = place["file"].as_str().expect("file");
        let other = std::fs::read_to_string(root.join(file)).expect("codebase file");
        let related = json!({
            "location": {
                "uri": lsp_types::Url::from_file_path(root.join(file)).unwrap().to_string(),
                "range": range_of(&other, place),
            },
            "message": format!("{file}:{}-{} ({} tokens)", place["startLine"], place["endLine"], d["tokens"]),
        });
        match groups.iter_mut().find(|(range, _, _)| range == &here) {
            Some((_, list, _)) => list.push(related),
            None => groups.push((here, vec![related], said(&place["symbol"]))),
        }
    }
    groups
        .into_iter()
        .map(|(range, related, said)| {
            let message = match related.len() {
                1 => format!(
                    "Duplicates {said}{}",
                    related[0]["message"].as_str().expect("message")
                ),
                n => format!("Duplicated in {n} places"),
            };
            json!({
                "range": range,
                "severity": 3,
                "code": "duplicate",
                "source": "dupcheck",
                "message": message,
                "relatedInformation": related,
            })
        })
        .collect()
}

/// The `symbol` of an answer's place as the diagnostic names it, before
/// the place: "`` `summarize()` in ``", "`` part of class `Stats` in ``".
fn said(symbol: &Value) -> String {
    let Some(kind) = symbol["kind"].as_str() else {
        return String::new();
    };
    let name = symbol["name"].as_str().expect("name");
    let qualified = match symbol["container"].as_str() {
        Some(container) => format!("{container}.{name}"),
        None => name.to_owned(),
    };
    let named = match kind {
        "function" | "method" => format!("`{qualified}()`"),
        _ => format!("{kind} `{qualified}`"),
    };
    match symbol["whole"].as_bool() {
        Some(true) => format!("{named} in "),
        _ => format!("part of {named} in "),
    }
}

/// Buffers with non-ASCII text before the copies, on both sides, and a
/// range duplicated in two files: `(rel, language, text)`.
fn planted_buffers(root: &Path) -> Vec<(&'static str, &'static str, String)> {
    let merge = std::fs::read_to_string(root.join("src/util/merge.js")).expect("fixture");
    let stats = std::fs::read_to_string(root.join("py/stats.py")).expect("fixture");
    vec![
        (
            "src/app.js",
            "javascript",
            format!("const greeting = \"héllo 𝄞\"; {merge}\nstart();\n"),
        ),
        ("py/report.py", "python", format!("import os\n\n{stats}")),
    ]
}

/// A second copy of merge.js's function on disk, after a non-ASCII
/// comment on its first line: the JavaScript buffer's range duplicates two
/// places.
fn plant_second_copy(root: &Path) {
    let merge = std::fs::read_to_string(root.join("src/util/merge.js")).expect("fixture");
    common::write(root, "src/copy.js", format!("/* 𝄞é */ {merge}"));
}

#[test]
fn a_buffers_diagnostics_equal_the_duplications_api_check_answers_for_its_text_and_path() {
    let temp = common::fixture("lsp");
    plant_second_copy(temp.path());
    let server = common::Server::start_in(temp, &["--no-cache"]);
    let mut client = Client::spawn_at(&server.dir, &["--no-cache"]);
    client.initialize(Value::Null, false);
    let root = client.root().to_owned();
    let mut published = Vec::new();
    for (rel, language, text) in planted_buffers(&root) {
        client.open(rel, language, &text);
        let diagnostics = client.diagnostics_where(rel, 1, |d| d != &json!([]));
        let (status, answer) = server.check(json!({"code": text, "format": language, "path": rel}));
        assert_eq!(status, 200, "{answer}");
        let expected = diagnostics_of_answer(&root, &text, &answer);
        // Line by line, so that a difference shows where it is.
        assert_eq!(
            serde_json::to_string_pretty(&diagnostics).unwrap(),
            serde_json::to_string_pretty(&expected).unwrap(),
            "{rel}"
        );
        published.push(diagnostics);
    }
    // The JavaScript range is duplicated in both files, the first after a
    // non-ASCII comment: 9 characters, 10 UTF-16 units.
    assert_eq!(published[0][0]["message"], "Duplicated in 2 places");
    assert_eq!(
        published[0][0]["relatedInformation"][0]["location"]["range"]["start"],
        json!({"line": 0, "character": 10})
    );
    assert_eq!(
        published[1][0]["message"],
        "Duplicates `summarize()` in py/stats.py:1-13 (103 tokens)"
    );
    assert_eq!(client.stop().code(), Some(0));
}

#[test]
fn with_server_the_diagnostics_and_hovers_are_those_of_the_process_mode() {
    let temp = common::fixture("lsp");
    plant_second_copy(temp.path());
    let server = common::Server::start_in(temp, &["--no-cache"]);
    let url = format!("http://127.0.0.1:{}", server.port);
    let mut local = Client::spawn_at(&server.dir, &["--no-cache"]);
    local.initialize(Value::Null, false);
    let mut remote = Client::spawn_at(&server.dir, &["--server", &url]);
    remote.initialize(Value::Null, false);
    let root = local.root().to_owned();
    let mut compared = 0;
    for (rel, language, text) in planted_buffers(&root) {
        let mut got = Vec::new();
        for client in [&mut local, &mut remote] {
            client.open(rel, language, &text);
            let diagnostics = client.diagnostics_where(rel, 1, |d| d != &json!([]));
            let uri = client.uri(rel);
            let hover = client.request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 2}}),
            );
            assert!(hover.result.as_ref().is_some_and(|h| h != &Value::Null));
            got.push((diagnostics, hover.result));
        }
        assert_eq!(got[0], got[1], "{rel}");
        compared += got[0].0.as_array().unwrap().len();
    }
    assert_eq!(compared, 2);
    assert_eq!(local.stop().code(), Some(0));
    assert_eq!(remote.stop().code(), Some(0));
}

/// A port of 127.0.0.1 where nothing listens (bound, then freed).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

#[test]
fn a_server_that_is_down_is_one_message_and_an_edit_after_it_is_up_is_checked() {
    let dir = common::fixture("lsp");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut client = Client::spawn_at(dir.path(), &["--server", &url]);
    client.initialize(Value::Null, false);
    let stats = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    let uri = client.uri("py/report.py");
    client.open("py/report.py", "python", &stats);
    let shown =
        client.wait(|m| matches!(m, Message::Notification(n) if n.method == "window/showMessage"));
    let Message::Notification(shown) = shown else {
        unreachable!()
    };
    assert_eq!(shown.params["type"], 2);
    let message = shown.params["message"].as_str().unwrap();
    let expected = format!("dupcheck: cannot reach the dupcheck server at {url}: ");
    assert!(message.starts_with(&expected), "{message}");
    assert!(message.contains("Connection refused"), "{message}");
    // A second edit fails the same way: no second message. A hover waits
    // for its check, so once it is answered the check is over.
    let edit = |client: &mut Client, version: i32| {
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": format!("{stats}\n# edit {version}\n")}]
            }),
        );
        client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 4}}),
        )
    };
    let hover = edit(&mut client, 2);
    assert_eq!(hover.result, Some(Value::Null));
    let noticed = client
        .seen
        .iter()
        .filter(|m| {
            matches!(m, Message::Notification(n)
                if n.method == "window/showMessage" || n.method == "textDocument/publishDiagnostics")
        })
        .count();
    assert_eq!(noticed, 0, "{:#?}", client.seen);
    // The server comes up: the next edit is checked.
    let mut server = common::Server::spawn_on(client.root(), port, &["--no-cache"]);
    server.wait_ready();
    let hover = edit(&mut client, 3);
    drop(server);
    let diagnostics = client.diagnostics("py/report.py", 3);
    assert_eq!(
        diagnostics[0]["message"],
        "Duplicates `summarize()` in py/stats.py:1-13 (103 tokens)"
    );
    assert_eq!(
        hover.result.unwrap()["contents"]["value"]
            .as_str()
            .unwrap()
            .lines()
            .next(),
        Some("**Duplicates** `summarize()` in `py/stats.py:1-13` (103 tokens)")
    );
    assert_eq!(client.stop().code(), Some(0));
}

#[test]
fn with_server_a_file_saved_elsewhere_reaches_the_open_documents() {
    let server = common::Server::start("lsp", &["--no-cache"]);
    let url = format!("http://127.0.0.1:{}", server.port);
    let mut client = Client::spawn_at(&server.dir, &["--server", &url]);
    client.initialize(Value::Null, false);
    let function = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    // A function in no file on disk (as in the test of unsaved buffers).
    let fresh = function
        .replace("summarize", "tally")
        .replace("totals", "sums")
        .replace("counts", "sizes");
    client.open("py/new.py", "python", &fresh);
    assert_eq!(client.diagnostics("py/new.py", 1), json!([]));
    // Another file is saved with the same function: the server's watcher
    // indexes it, and the open document is checked again.
    common::write(client.root(), "py/saved.py", &fresh);
    let diagnostics = client.diagnostics_where("py/new.py", 1, |d| d != &json!([]));
    assert_eq!(
        diagnostics[0]["message"],
        "Duplicates `tally()` in py/saved.py:1-13 (103 tokens)"
    );
    assert_eq!(client.stop().code(), Some(0));
}

#[test]
fn a_bad_server_url_is_a_usage_error() {
    let output = Command::new(common::BIN)
        .args(["lsp", "--server", "https://example.test/api"])
        .stdin(Stdio::null())
        .output()
        .expect("run dupcheck lsp");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(output.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "dupcheck: error: --server \"https://example.test/api\": expected the URL of a running dupcheck server, http://HOST:PORT\n"
    );
}

/// A TCP proxy before a real server that holds each `POST /api/check`
/// until the test lets it through: a check in flight for as long as the
/// test needs.
struct Gate {
    port: u16,
    /// Each check as it arrives: its JSON body, and the way to let it on.
    arrived: Receiver<(Value, crossbeam_channel::Sender<()>)>,
}

impl Gate {
    fn before(target: u16) -> Gate {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let (tx, arrived) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let _ = Gate::serve(stream, target, &tx);
                });
            }
        });
        Gate { port, arrived }
    }

    /// Passes the requests of one connection on, one at a time.
    fn serve(
        client: std::net::TcpStream,
        target: u16,
        arrived: &crossbeam_channel::Sender<(Value, crossbeam_channel::Sender<()>)>,
    ) -> std::io::Result<()> {
        let mut from_client = BufReader::new(client.try_clone()?);
        let mut to_client = client;
        loop {
            let (head, body) = match read_http(&mut from_client)? {
                Some(message) => message,
                None => return Ok(()),
            };
            if head.starts_with("POST /api/check ") {
                let (go, wait) = crossbeam_channel::bounded(1);
                let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
                if arrived.send((json, go)).is_err() || wait.recv().is_err() {
                    return Ok(());
                }
            }
            let mut server = std::net::TcpStream::connect(("127.0.0.1", target))?;
            server.write_all(head.as_bytes())?;
            server.write_all(&body)?;
            let mut from_server = BufReader::new(server);
            let (head, body) = read_http(&mut from_server)?.expect("an answer");
            to_client.write_all(head.as_bytes())?;
            to_client.write_all(&body)?;
        }
    }
}

/// One HTTP/1.1 message with a Content-Length: its head (with the blank
/// line) and body; `None` at the end of the stream.
fn read_http(input: &mut impl BufRead) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let len = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    input.read_exact(&mut body)?;
    Ok(Some((head, body)))
}

#[test]
fn a_check_superseded_in_flight_is_abandoned_and_waiting_requests_are_answered_or_cancelled() {
    let server = common::Server::start("lsp", &["--no-cache"]);
    let gate = Gate::before(server.port);
    let url = format!("http://127.0.0.1:{}", gate.port);
    let mut client = Client::spawn_at(&server.dir, &["--server", &url]);
    client.initialize(Value::Null, false);
    let stats = std::fs::read_to_string(client.root().join("py/stats.py")).expect("fixture");
    let uri = client.uri("py/report.py");
    client.open("py/report.py", "python", &stats);
    let next = |gate: &Gate| {
        gate.arrived
            .recv_timeout(PATIENCE)
            .expect("a check reaches the server")
    };
    let (first, _hold_first) = next(&gate);
    assert_eq!(
        first,
        json!({"code": stats, "format": "python", "path": "py/report.py"})
    );
    // While version 1 is being checked, the editor moves the copy two
    // lines down.
    let moved = format!("import os\n\n{stats}");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": moved}]}),
    );
    // A hover waits for version 2's check; the editor cancels it.
    let hover = client.send_request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 5, "character": 4}}),
    );
    client.notify("$/cancelRequest", json!({ "id": hover }));
    assert_eq!(
        client.answer(&hover).error,
        Some(json!({"code": -32800, "message": "The request was cancelled"}))
    );
    // A code action waits too, and is not cancelled.
    let action = client.send_request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(4, 0, 4, 0), "context": {"diagnostics": []}}),
    );
    // Version 1's check is abandoned: version 2's reaches the server while
    // version 1's is still held.
    let (second, let_second_on) = next(&gate);
    assert_eq!(second["code"], moved.as_str());
    let_second_on.send(()).expect("the gate waits");
    let actions = client.answer(&action).result.expect("code actions");
    // The code action was answered after version 2's diagnostics, and
    // from them.
    let published: Vec<Value> = client
        .seen
        .iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                Some(n.params.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(published.len(), 1, "{published:#?}");
    assert_eq!(published[0]["version"], 2);
    assert_eq!(published[0]["diagnostics"][0]["range"], range(2, 0, 14, 65));
    assert_eq!(actions[0]["title"], "Show the duplicate");
    assert_eq!(
        actions[0]["command"]["arguments"][0]["range"],
        range(2, 0, 14, 65)
    );
    assert_eq!(client.stop().code(), Some(0));
}

#[test]
fn with_a_store_the_places_of_other_repositories_are_related_information() {
    let url = crate::store::store();
    let dir = common::fixture("lsp");
    let merge = std::fs::read_to_string(dir.path().join("src/util/merge.js")).expect("fixture");
    // Another repository's copy, after a line with characters that are two
    // UTF-16 units: its columns are counted in its own text.
    let shop = tempfile::tempdir().expect("temp dir");
    common::write(shop.path(), "lib/merge.js", format!("// 𝄞𝄞\n{merge}"));
    let (code, line) = crate::store::publish(shop.path(), &url, "github.com/acme/shop");
    assert_eq!(code, Some(0), "{line}");
    let mut client = Client::spawn_at(
        dir.path(),
        &[
            "--no-cache",
            "--store",
            &url,
            "--repository",
            "github.com/acme/web",
        ],
    );
    client._temp = Some(dir);
    client.initialize(Value::Null, false);
    let text = pasted_merge(client.root(), "");
    client.open("src/app.js", "javascript", &text);
    let diagnostics = client.diagnostics("src/app.js", 1);
    assert_eq!(
        diagnostics,
        json!([{
            "range": range(0, 0, 17, 1),
            "severity": 3,
            "code": "duplicate",
            "source": "dupcheck",
            "message": "Duplicated in 2 places",
            "relatedInformation": [{
                "location": {"uri": client.uri("src/util/merge.js"), "range": range(0, 0, 17, 1)},
                "message": "src/util/merge.js:1-18 (133 tokens)"
            }, {
                "location": {
                    "uri": "https://github.com/acme/shop/blob/HEAD/lib/merge.js#L2-L19",
                    "range": range(1, 0, 18, 1)
                },
                "message": "github.com/acme/shop/lib/merge.js:2-19 (133 tokens)"
            }]
        }])
    );
    assert_eq!(client.stop().code(), Some(0));
}
