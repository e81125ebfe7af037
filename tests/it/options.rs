//! jscpd-server's options: `--ignoreCase`, `--ignore-pattern` (and their
//! config keys), `--store` and `-g`, on the real binary.

use crate::common;

use std::process::Command;

use common::{spawn_with_stderr, stderr_line, write, Server, BIN};
use serde_json::{json, Value};

/// A report query, keywords in upper case.
const QUERY: &str = "\
SELECT c.name, c.email, SUM(o.total) AS revenue, COUNT(o.id) AS orders
FROM customers c
JOIN orders o ON o.customer_id = c.id
WHERE o.status = 'paid' AND o.created_at >= '2024-01-01'
GROUP BY c.name, c.email
HAVING SUM(o.total) > 100
ORDER BY revenue DESC
LIMIT 10;
";

/// The `reports` project: the query in upper case, and another one.
fn reports() -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    write(temp.path(), "sql/revenue.sql", QUERY);
    write(
        temp.path(),
        "sql/other.sql",
        "SELECT id, name FROM products WHERE price > 10 ORDER BY name;\n",
    );
    temp
}

#[test]
fn ignore_case_finds_a_copy_that_differs_only_in_case() {
    needs_formats!("sql");
    let lower = QUERY
        .replace("SELECT", "select")
        .replace("SUM", "sum")
        .replace("COUNT", "count")
        .replace("AS ", "as ")
        .replace("FROM", "from")
        .replace("JOIN", "join")
        .replace("ON", "on")
        .replace("WHERE", "where")
        .replace("AND", "and")
        .replace("GROUP BY", "group by")
        .replace("HAVING", "having")
        .replace("ORDER BY", "order by")
        .replace("DESC", "desc")
        .replace("LIMIT", "limit");
    assert!(!lower.contains("SELECT") && lower.contains("sum(o.total)"));
    // The query alone: eight lines, no final newline.
    let request = json!({"code": lower.trim_end(), "format": "sql"});

    let server = Server::start_in(reports(), &["--no-watch", "--no-cache"]);
    let (status, body) = server.check(request.clone());
    assert_eq!(status, 200);
    assert_json!(
        body,
        json!({
            "duplications": [],
            "statistics": {"totalDuplications": 0, "duplicatedLines": 0, "totalLines": 8, "percentageDuplicated": 0}
        })
    );
    drop(server);

    let server = Server::start_in(reports(), &["--no-watch", "--no-cache", "--ignoreCase"]);
    let (status, body) = server.check(request);
    assert_eq!(status, 200);
    assert_json!(
        body,
        json!({
            "duplications": [{
                "snippetLocation": {"startLine": 1, "endLine": 8, "startColumn": 1, "endColumn": 10},
                "codebaseLocation": {"file": "sql/revenue.sql", "startLine": 1, "endLine": 8,
                                     "startColumn": 1, "endColumn": 10, "fragment": QUERY.trim_end()},
                "linesCount": 8,
                "tokens": 77,
                "format": "sql"
            }],
            "statistics": {"totalDuplications": 1, "duplicatedLines": 8, "totalLines": 8, "percentageDuplicated": 100}
        })
    );
}

#[test]
fn ignore_case_in_strict_mode_also_folds_identifiers() {
    let function = "\
def LoadUserProfile(UserId, Cache):
    Profile = Cache.get(UserId)
    if Profile is None:
        Profile = Fetch(UserId)
        Cache.set(UserId, Profile)
    return Profile
";
    let renamed = function
        .replace("LoadUserProfile", "loaduserprofile")
        .replace("UserId", "userid")
        .replace("Profile", "profile")
        .replace("Cache", "cache")
        .replace("Fetch", "fetch");
    let clones = |args: &[&str]| {
        let temp = tempfile::tempdir().expect("temp dir");
        write(temp.path(), "a.py", function);
        write(temp.path(), "b.py", &renamed);
        let server = Server::start_in(
            temp,
            &[&["--no-cache", "--min-tokens", "30"], args].concat(),
        );
        server.get("/api/stats").1["statistics"]["total"]["clones"].clone()
    };
    assert_eq!(clones(&[]), json!(0));
    assert_eq!(clones(&["--ignoreCase"]), json!(1));
}

/// A generated block, the same in two files.
const GENERATED: &str = "\
// <generated>
export const TABLE = [
  { code: 'AF', name: 'Afghanistan', dial: '+93' },
  { code: 'AL', name: 'Albania', dial: '+355' },
  { code: 'DZ', name: 'Algeria', dial: '+213' },
  { code: 'AD', name: 'Andorra', dial: '+376' },
];
// </generated>
";

/// Real code, the same in two files.
const FUNCTION: &str = "\
export function total(items, rate) {
  let sum = 0;
  for (const item of items) {
    if (item.count > 0 && !item.free) {
      sum += item.price * item.count;
    }
  }
  return Math.round(sum * (1 + rate) * 100) / 100;
}
";

/// The generated block and the function in two files, in both orders.
fn generated_project() -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    write(temp.path(), "src/a.js", format!("{GENERATED}\n{FUNCTION}"));
    write(temp.path(), "src/b.js", format!("{FUNCTION}\n{GENERATED}"));
    temp
}

/// The pattern that skips the generated block, in jscpd's way.
const SKIP_GENERATED: &str = r"(?s)// <generated>.*?// </generated>";

/// `(file, startLine, endLine, tokens)` of each duplication of a check.
fn places(body: &Value) -> Vec<(String, u64, u64, u64)> {
    body["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            let at = &d["codebaseLocation"];
            (
                at["file"].as_str().expect("file").to_owned(),
                at["startLine"].as_u64().expect("line"),
                at["endLine"].as_u64().expect("line"),
                d["tokens"].as_u64().expect("tokens"),
            )
        })
        .collect()
}

#[test]
fn ignore_pattern_removes_a_block_from_checks_and_stats() {
    // `src/a.js` as an editor sends it, without its final newline.
    let code = format!("{GENERATED}\n{FUNCTION}");
    let snippet = json!({"code": code.trim_end(), "format": "javascript", "path": "src/a.js"});
    let server = Server::start_in(generated_project(), &["--no-cache"]);
    let (_, body) = server.check(snippet.clone());
    assert_eq!(
        places(&body),
        [
            // The block's tokens: its comments are no tokens.
            ("src/b.js".to_owned(), 12, 17, 63),
            ("src/b.js".to_owned(), 1, 9, 67)
        ]
    );
    assert_eq!(
        body["statistics"],
        json!({"totalDuplications": 2, "duplicatedLines": 15, "totalLines": 18, "percentageDuplicated": 83.33})
    );
    let (_, stats) = server.get("/api/stats");
    assert_eq!(
        stats["statistics"]["total"],
        json!({"lines": 36, "tokens": 260, "sources": 2, "clones": 2,
               "duplicatedLines": 30, "duplicatedTokens": 260,
               "percentage": 83.33, "percentageTokens": 100,
               "newDuplicatedLines": 0, "newClones": 0})
    );
    drop(server);

    // From the command line, or from the config file: the block is gone.
    for (args, config) in [
        (vec!["--no-cache", "--ignore-pattern", SKIP_GENERATED], None),
        (
            vec!["--no-cache"],
            Some(json!({"ignorePattern": ["^$", SKIP_GENERATED]})),
        ),
    ] {
        let temp = generated_project();
        if let Some(config) = &config {
            write(temp.path(), ".dupcheck.json", config.to_string());
        }
        let server = Server::start_in(temp, &args);
        let (_, body) = server.check(snippet.clone());
        assert_json!(
            body,
            json!({
                "duplications": [{
                    "snippetLocation": {"startLine": 10, "endLine": 18, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "total", "whole": true}},
                    "codebaseLocation": {"file": "src/b.js", "startLine": 1, "endLine": 9,
                                         "startColumn": 1, "endColumn": 2, "fragment": FUNCTION.trim_end(), "symbol": {"kind": "function", "name": "total", "whole": true}},
                    "linesCount": 9,
                    "tokens": 67,
                    "format": "javascript"
                }],
                "statistics": {"totalDuplications": 1, "duplicatedLines": 9, "totalLines": 18, "percentageDuplicated": 50}
            })
        );
        let (_, stats) = server.get("/api/stats");
        assert_eq!(
            stats["statistics"]["total"],
            json!({"lines": 36, "tokens": 134, "sources": 2, "clones": 1,
                   "duplicatedLines": 18, "duplicatedTokens": 134,
                   "percentage": 50, "percentageTokens": 100,
                   "newDuplicatedLines": 0, "newClones": 0}),
            "{config:?}"
        );
    }
}

#[test]
fn ignore_pattern_applies_to_the_new_files_of_a_diff() {
    let text = format!("{GENERATED}\n{FUNCTION}");
    let added: String = text.lines().map(|l| format!("+{l}\n")).collect();
    let diff = format!(
        "diff --git a/src/c.js b/src/c.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/c.js\n@@ -0,0 +1,{} @@\n{added}",
        text.lines().count()
    );
    let check_diff = |server: &Server| {
        let res = server.request(
            "POST",
            "/api/check-diff",
            &[("Content-Type", "text/x-diff")],
            diff.as_bytes(),
        );
        assert_eq!(res.status, 200, "{}", String::from_utf8_lossy(&res.body));
        res.json()
    };
    let server = Server::start_in(generated_project(), &["--no-cache"]);
    let body = check_diff(&server);
    assert_eq!(body["statistics"]["totalDuplications"], 3, "{body}");
    drop(server);

    let server = Server::start_in(
        generated_project(),
        &["--no-cache", "--ignore-pattern", SKIP_GENERATED],
    );
    let function = |file: &str, start: u64| {
        json!({
            "snippetLocation": {"startLine": 10, "endLine": 18, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "total", "whole": true}},
            "codebaseLocation": {"file": file, "startLine": start, "endLine": start + 8,
                                 "startColumn": 1, "endColumn": 2, "fragment": FUNCTION.trim_end(), "symbol": {"kind": "function", "name": "total", "whole": true}},
            "linesCount": 9,
            "tokens": 67,
            "format": "javascript",
            "addedLines": 9
        })
    };
    assert_json!(
        check_diff(&server),
        json!({
            "files": [{
                "path": "src/c.js",
                "format": "javascript",
                "duplications": [function("src/a.js", 10), function("src/b.js", 1)]
            }],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 2, "addedLines": 18, "duplicatedAddedLines": 9,
                           "percentageDuplicated": 50}
        })
    );
}

#[test]
fn the_command_line_pattern_replaces_the_config_files() {
    let temp = generated_project();
    write(
        temp.path(),
        ".dupcheck.json",
        json!({"ignorePattern": [SKIP_GENERATED], "ignoreCase": true}).to_string(),
    );
    // `a{1,3}` keeps its comma; the list skips nothing of the two files.
    let server = Server::start_in(temp, &["--no-cache", "--ignore-pattern", "zzz{1,3},qqq"]);
    let (_, stats) = server.get("/api/stats");
    assert_eq!(stats["statistics"]["total"]["clones"], 2);
}

/// Runs dupcheck on `dir` to completion with `args`; returns the exit code
/// and stderr.
fn fails(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .arg(dir)
        .args(["--port", "0", "--host", "127.0.0.1"])
        .args(args)
        .output()
        .expect("run dupcheck");
    assert!(out.stdout.is_empty(), "it served");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_ignore_pattern_exits_2_with_one_line_naming_it() {
    let temp = generated_project();
    let (code, err) = fails(temp.path(), &["--ignore-pattern", "ok,a(b"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "dupcheck: error: invalid value for --ignore-pattern: \"a(b\" is not a usable regular expression: unclosed group (at character 2)\n"
    );
    // A pattern too large to compile within the limit.
    let (code, err) = fails(temp.path(), &["--ignore-pattern", r"\w{500}"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "dupcheck: error: invalid value for --ignore-pattern: \"\\\\w{500}\" is not a usable regular expression: it compiles to more than the 256 KB a pattern may take; make it smaller (bounded repetitions such as {1000} grow it, Unicode classes such as \\w too: (?-u) makes them ASCII)\n"
    );
    write(
        temp.path(),
        ".dupcheck.json",
        r#"{"ignorePattern": ["[z-a]"]}"#,
    );
    let (code, err) = fails(temp.path(), &[]);
    assert_eq!(code, 2);
    let config = std::fs::canonicalize(temp.path())
        .expect("canonical")
        .join(".dupcheck.json");
    assert_eq!(
        err,
        format!(
            "dupcheck: error: config file {}: key \"ignorePattern\" has \"[z-a]\" is not a usable regular expression: invalid character class range, the start must be <= the end (at character 2)\n",
            config.display()
        )
    );
    write(temp.path(), ".dupcheck.json", r#"{"ignorePattern": "x"}"#);
    let (code, err) = fails(temp.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        err.ends_with(
            ".dupcheck.json: key \"ignorePattern\" must be an array of strings (regular expressions)\n"
        ),
        "{err}"
    );
}

#[test]
fn store_and_gitignore_are_accepted_and_store_warns() {
    let temp = generated_project();
    write(temp.path(), ".gitignore", "build/\n");
    write(
        temp.path(),
        "build/out.js",
        format!("{FUNCTION}{GENERATED}"),
    );
    let mut child = spawn_with_stderr(temp.path(), &["--store", "leveldb", "-g", "--no-watch"]);
    let warning = stderr_line(&mut child, "dupcheck: warning", true);
    let summary = stderr_line(&mut child, "dupcheck: scanned", false);
    let _ = child.kill();
    let _ = child.wait();
    let dir = std::fs::canonicalize(temp.path()).expect("canonical");
    assert_eq!(
        warning,
        format!(
            "dupcheck: warning: --store leveldb is ignored: dupcheck keeps its own index cache in {} (see --cache-dir, --no-cache)",
            dir.join(".dupcheck-cache").display()
        )
    );
    // build/ is ignored: two files.
    assert!(
        summary.starts_with("dupcheck: scanned 2 files"),
        "{summary}"
    );

    // Served, `--gitignore` as the long option, no warning but the store's.
    let server = Server::start_in(generated_project(), &["--gitignore", "--store", "x"]);
    assert_eq!(server.get("/api/health").1["status"], "ready");
    let mut child = spawn_with_stderr(temp.path(), &["--gitignore", "--no-cache", "--no-watch"]);
    let first = stderr_line(&mut child, "dupcheck: ", false);
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.starts_with("dupcheck: scanned 2 files"), "{first}");
}

#[test]
fn report_takes_the_options_too() {
    let temp = generated_project();
    let out = Command::new(BIN)
        .current_dir(temp.path())
        .args([
            "report",
            "--no-cache",
            "--reporter",
            "json",
            "--store",
            "x",
            "-g",
            "--ignoreCase",
            "--ignore-pattern",
            SKIP_GENERATED,
        ])
        .output()
        .expect("run dupcheck report");
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    let clones: Vec<(&str, &str, u64)> = report["clones"]
        .as_array()
        .expect("clones")
        .iter()
        .map(|c| {
            (
                c["first"]["path"].as_str().expect("path"),
                c["second"]["path"].as_str().expect("path"),
                c["tokens"].as_u64().expect("tokens"),
            )
        })
        .collect();
    assert_eq!(clones, [("src/a.js", "src/b.js", 67)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some("dupcheck: warning: --store x is ignored: dupcheck keeps its own index cache, off here (--no-cache)")
    );
}
