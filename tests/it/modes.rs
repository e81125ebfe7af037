//! One index, every mode (issue 12, section 2): a check naming its `mode`
//! (POST /api/check, POST /api/check-diff, JSON and form) is answered as a
//! server started with that `--mode` answers it, on the `project` fixture's
//! files as they are, renamed and with changed literals.

use crate::common;

use std::path::Path;

use common::{error, Server};
use serde_json::{json, Value};

const MODES: [&str; 3] = ["strict", "mild", "weak"];
/// Thresholds low enough for the fixture's small files to have
/// duplications in every mode.
const THRESHOLDS: [&str; 4] = ["--min-tokens", "20", "--min-lines", "2"];

/// The fixture's source files: relative path and text.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/project");
    let mut files = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("fixture folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some() {
                let rel = path.strip_prefix(&root).expect("inside");
                let text = std::fs::read_to_string(&path).expect("fixture file");
                files.push((rel.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    files.sort();
    files
}

/// `text` with some identifiers renamed (mild and weak modes still find
/// it), or with its digits changed (weak mode still finds it).
fn variants(text: &str) -> [String; 3] {
    let mut renamed = text.to_owned();
    for name in ["result", "value", "key", "total", "count", "rows", "items"] {
        renamed = renamed.replace(name, &format!("{name}2"));
    }
    let changed: String = text
        .chars()
        .map(|c| match c {
            '0'..='8' => char::from(c as u8 + 1),
            c => c,
        })
        .collect();
    [text.to_owned(), renamed, changed]
}

/// A diff that adds the file `rel` with `text`.
fn new_file_diff(rel: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut diff = format!(
        "diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for line in lines {
        diff.push('+');
        diff.push_str(line);
        diff.push('\n');
    }
    diff
}

/// The duplications of an answer.
fn count(body: &Value) -> usize {
    body["statistics"]["totalDuplications"]
        .as_u64()
        .expect("totalDuplications") as usize
}

#[test]
fn a_check_in_each_mode_answers_as_a_server_started_in_that_mode() {
    needs_formats!(project);
    let mild = [&["--mode", "mild"][..], &THRESHOLDS].concat();
    let one = Server::start("project", &mild);
    let servers: Vec<Server> = MODES
        .iter()
        .map(|m| Server::start("project", &[&["--mode", m][..], &THRESHOLDS].concat()))
        .collect();
    let mut found = [0; 3];
    for (rel, text) in sources() {
        for code in variants(&text) {
            for (m, (mode, server)) in MODES.iter().zip(&servers).enumerate() {
                // As the file itself (never reported against itself), and
                // as a snippet of it pasted elsewhere.
                for path in [Value::from(rel.as_str()), Value::Null] {
                    let body =
                        json!({"code": code, "path": path, "format": rel.rsplit('.').next()});
                    let mut asked = body.clone();
                    asked["mode"] = json!(mode);
                    let (status, got) = one.check(asked);
                    let (_, expected) = server.check(body.clone());
                    assert_eq!(status, 200, "{got}");
                    assert_json!(got, expected);
                    found[m] += count(&got);
                    if *mode == "mild" {
                        // No mode is the server's.
                        assert_json!(one.check(body).1, expected);
                    }
                }
            }
        }
    }
    // The fixture and its variants make the modes answer differently
    // (weak mode joins mild mode's runs across changed literals, so it may
    // list fewer, longer duplications).
    assert!(
        found[0] > 0 && found[0] < found[1] && found[1] != found[2],
        "{found:?}"
    );
}

#[test]
fn a_diff_check_in_each_mode_answers_as_a_server_started_in_that_mode() {
    let one = Server::start("project", &[&["--mode", "weak"][..], &THRESHOLDS].concat());
    let servers: Vec<Server> = MODES
        .iter()
        .map(|m| Server::start("project", &[&["--mode", m][..], &THRESHOLDS].concat()))
        .collect();
    let mut found = [0; 3];
    for (rel, text) in sources() {
        let [_, renamed, changed] = variants(&text);
        let new_rel = format!("new/{}", rel.replace('/', "-"));
        for code in [text.clone(), renamed, changed] {
            let diff = new_file_diff(&new_rel, &code);
            for (m, (mode, server)) in MODES.iter().zip(&servers).enumerate() {
                let raw = [("Content-Type", "text/x-diff")];
                let expected = server.request("POST", "/api/check-diff", &raw, diff.as_bytes());
                assert_eq!(expected.status, 200);
                let expected = expected.json();
                let asked = json!({"diff": diff, "mode": mode}).to_string();
                let (status, got) = one.post("/api/check-diff", &asked);
                assert_eq!(status, 200, "{got}");
                assert_json!(got, expected);
                // A form's fields, in either order.
                let encode =
                    |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                let form = [("Content-Type", "application/x-www-form-urlencoded")];
                for body in [
                    format!("diff={}&mode={mode}", encode(&diff)),
                    format!("mode={mode}&diff={}", encode(&diff)),
                ] {
                    let res = one.request("POST", "/api/check-diff", &form, body.as_bytes());
                    assert_eq!(res.status, 200);
                    assert_json!(res.json(), expected);
                }
                found[m] += expected["statistics"]["totalDuplications"]
                    .as_u64()
                    .expect("totalDuplications");
            }
        }
    }
    assert!(
        found[0] > 0 && found[0] < found[1] && found[1] != found[2],
        "{found:?}"
    );
}

#[test]
fn a_mode_is_strict_mild_or_weak() {
    let server = Server::start("project", &[]);
    let unknown = |name: &str| {
        error(
            "ValidationError",
            &format!("Unknown mode \"{name}\"; use \"strict\", \"mild\" or \"weak\""),
            400,
        )
    };
    let check =
        |mode: Value| server.check(json!({"code": "let a = 1;", "format": "js", "mode": mode}));
    assert_eq!(check(json!("fuzzy")), (400, unknown("fuzzy")));
    assert_eq!(check(json!("")), (400, unknown("")));
    let not_a_string = error("ValidationError", "Field \"mode\" must be a string", 400);
    assert_eq!(check(json!(2)), (400, not_a_string.clone()));
    // Names are read without case, as `--mode` reads them; null is absent.
    assert_eq!(check(json!("MILD")).0, 200);
    assert_eq!(check(Value::Null).0, 200);
    // A form's mode.
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let res = server.request(
        "POST",
        "/api/check",
        &form,
        b"code=let+a+%3D+1%3B&format=js&mode=loose",
    );
    assert_eq!((res.status, res.json()), (400, unknown("loose")));
    // A diff check's.
    let (status, body) = server.post("/api/check-diff", r#"{"diff": "", "mode": "loose"}"#);
    assert_eq!((status, body), (400, unknown("loose")));
    let (status, body) = server.post("/api/check-diff", r#"{"diff": "", "mode": ["weak"]}"#);
    assert_eq!((status, body), (400, not_a_string));
}
