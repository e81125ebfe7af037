//! Symbols (issue 31): each place of an answer names the definition it
//! lies in: a method in its class, a nested function, a whole copy, and
//! none for top-level code; through the cache of a warm restart too.

use crate::common;

use common::{write, Server};
use serde_json::{json, Value};

const BUILDER: &str = "\
export class OptionsBuilder {
  constructor() {
    this.options = {};
  }
  static mergeOptions(target, source) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (value !== undefined && value !== null) {
        target[key] = value;
      } else {
        delete target[key];
      }
    }
    return target;
  }
  reset(defaults, overrides, keep) {
    this.options = Object.assign({}, defaults, overrides);
    this.history.push({ at: Date.now(), keep, size: this.options.length });
    return this.options;
  }
}
";

const MERGE: &str = "\
function outer() {
  function merge(target, source) {
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (value !== undefined && value !== null) {
        target[key] = value;
      } else {
        delete target[key];
      }
    }
    return target;
  }
  const table = new Map([[1, 2], [3, 4], [5, 6], [7, 8]]);
  console.log(table.size, typeof merge, merge.length, table.get(1));
  return { merge, table };
}
";

const TOP: &str = "\
const settings = load(\"settings.json\");
for (const entry of settings.entries) {
  register(entry.name, entry.handler, entry.priority);
  announce(entry.name, settings.verbose, settings.prefix);
}
";

/// A temporary project of the three files, and `TOP` again in `b.js`.
fn project() -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    write(temp.path(), "src/builder.js", BUILDER);
    write(temp.path(), "src/merge.js", MERGE);
    write(temp.path(), "src/a.js", TOP);
    write(temp.path(), "src/b.js", format!("// Again.\n{TOP}"));
    temp
}

fn symbol(kind: &str, name: &str, container: Option<&str>, whole: bool) -> Value {
    let mut s = json!({"kind": kind, "name": name, "whole": whole});
    if let Some(container) = container {
        s["container"] = json!(container);
    }
    s
}

/// The clone list as the project gives it, with `--min-tokens 20` in
/// mild mode: the method from its name on (`static` and `function`
/// differ, so neither place is its definition whole), and the top-level
/// statements, which no definition holds.
fn clones() -> Value {
    json!([
        {"id": "ID", "format": "javascript", "tokens": 61, "lines": 11,
         "renamed": [["mergeOptions", "merge"]],
         "first": {"file": "src/builder.js", "startLine": 5, "endLine": 15, "startColumn": 10, "endColumn": 4,
                   "symbol": symbol("method", "mergeOptions", Some("OptionsBuilder"), false)},
         "second": {"file": "src/merge.js", "startLine": 2, "endLine": 12, "startColumn": 12, "endColumn": 4,
                    "symbol": symbol("function", "merge", None, false)}},
        {"id": "ID", "format": "javascript", "tokens": 49, "lines": 5,
         "first": {"file": "src/a.js", "startLine": 1, "endLine": 5, "startColumn": 1, "endColumn": 2},
         "second": {"file": "src/b.js", "startLine": 2, "endLine": 6, "startColumn": 1, "endColumn": 2}}
    ])
}

/// The clones of `server`, their ids blanked (hashes of the places).
fn listed(server: &Server) -> Value {
    let (status, mut body) = server.get("/api/clones");
    assert_eq!(status, 200, "{body}");
    for clone in body["clones"].as_array_mut().expect("clones") {
        clone["id"] = json!("ID");
    }
    body["clones"].take()
}

#[test]
fn clones_name_the_method_the_nested_function_and_no_symbol_at_the_top_level() {
    let server = Server::start_in(
        project(),
        &["--min-tokens", "20", "--mode", "mild", "--no-cache"],
    );
    assert_json!(listed(&server), clones());
}

#[test]
fn a_check_names_the_symbols_of_both_sides() {
    let server = Server::start_in(
        project(),
        &["--min-tokens", "20", "--mode", "mild", "--no-cache"],
    );
    // The method pasted alone: parsed inside a class wrapper, which is
    // no definition of the snippet's.
    let method =
        &BUILDER[BUILDER.find("  static").expect("method")..BUILDER.find("  reset").expect("end")];
    let (status, body) = server.check(json!({"code": method, "format": "js"}));
    assert_eq!(status, 200, "{body}");
    let places: Vec<(Value, Value, Value)> = body["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            (
                d["codebaseLocation"]["file"].clone(),
                d["snippetLocation"]["symbol"].clone(),
                d["codebaseLocation"]["symbol"].clone(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            (
                json!("src/builder.js"),
                symbol("method", "mergeOptions", None, true),
                symbol("method", "mergeOptions", Some("OptionsBuilder"), true),
            ),
            (
                json!("src/merge.js"),
                // From the name on: `static` and `function` differ.
                symbol("method", "mergeOptions", None, false),
                symbol("function", "merge", None, false),
            ),
        ]
    );
    // Top-level code has no symbol on either side.
    let (_, body) = server.check(json!({"code": TOP, "format": "js"}));
    for d in body["duplications"].as_array().expect("duplications") {
        assert_eq!(d["snippetLocation"].get("symbol"), None, "{d}");
        assert_eq!(d["codebaseLocation"].get("symbol"), None, "{d}");
    }
    assert_eq!(body["duplications"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_warm_restart_keeps_the_symbols_in_its_cache() {
    let temp = project();
    let dir = temp.path().to_owned();
    let mut cold = Server::start_in(temp, &["--min-tokens", "20", "--mode", "mild"]);
    assert_json!(listed(&cold), clones());
    assert_eq!(cold.terminate(), Some(0));
    assert!(dir.join(".dupcheck-cache/index-v1.bin").is_file());
    let mut warm = Server::spawn(&dir, &["--min-tokens", "20", "--mode", "mild"]);
    warm.wait_ready();
    assert_json!(listed(&warm), clones());
}

/// A file the watcher indexed reaches the cache through a journal record:
/// after `kill -9`, a start that parses nothing has its definitions too.
#[cfg(unix)]
#[test]
fn a_file_journaled_by_an_update_keeps_its_symbols_after_kill_9() {
    let temp = project();
    let dir = temp.path().to_owned();
    let args = ["--min-tokens", "20", "--mode", "mild"];
    let cache = dir.join(".dupcheck-cache");
    let mut server = Server::spawn(&dir, &args);
    server.wait_ready();
    let eventually = |what: &str, done: &dyn Fn() -> bool| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !done() {
            assert!(std::time::Instant::now() < until, "no {what} in 30 s");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    eventually("cache", &|| cache.join("index-v1.bin").is_file());
    // A copy of the builder under another class's name.
    write(
        &dir,
        "src/copied.js",
        BUILDER.replace("OptionsBuilder", "CopiedBuilder"),
    );
    let copied = symbol("class", "CopiedBuilder", None, true);
    // A place is `file` in `/api/clones`, `path` in the JSON report.
    let names_the_copy = |clones: &Value, key: &str| {
        clones.as_array().expect("clones").iter().any(|c| {
            [&c["first"], &c["second"]]
                .iter()
                .any(|p| p[key] == "src/copied.js" && p["symbol"] == copied)
        })
    };
    eventually("clone of the copy", &|| {
        names_the_copy(&listed(&server), "file")
    });
    eventually("journal", &|| cache.join("index-v1.journal").is_file());
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());

    // The report reads the cache and its journal: nothing is parsed.
    let out = std::process::Command::new(common::BIN)
        .current_dir(&dir)
        .args(["report", "-r", "json"])
        .args(args)
        .output()
        .expect("run dupcheck report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("(0 parsed, 5 reused)"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert!(names_the_copy(&report["clones"], "path"), "{report}");
}
