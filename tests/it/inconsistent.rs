//! Inconsistent changes (issue 31): a diff that fixes one copy of a clone
//! and not another is told so by `/api/check-diff`, with the copy left
//! behind; the same fix in both, a rename in mild mode, and a deleted copy
//! are not. Diffs are made by git in a real repository, as a review bot
//! gets them.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{write, Server};

/// A function of ten lines named `name`.
fn function(name: &str) -> String {
    format!(
        "function {name}(items, rate) {{\n  let total = 0;\n  for (const item of items) {{\n    if (item.price > 0) {{\n      total += item.price * item.count;\n    }}\n  }}\n  const tax = total * rate;\n  return {{ total, tax, sum: total + tax }};\n}}\n"
    )
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A repository with two copies of [`function`] (in `src/a.js` after a
/// header, and `lib/b.js`) committed, served in mild mode.
fn repository() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "src/a.js",
        format!("// Totals.\n\n{}", function("a")),
    );
    write(dir.path(), "lib/b.js", function("b"));
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "two copies"]);
    let mut server = Server::spawn(dir.path(), &["--mode", "mild", "--no-watch"]);
    server.wait_ready();
    (dir, server)
}

/// The `inconsistentChanges` of the working tree's diff.
fn inconsistent(dir: &Path, server: &Server) -> Value {
    let diff = git(dir, &["diff", "HEAD"]);
    let res = server.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "text/x-diff")],
        diff.as_bytes(),
    );
    assert_eq!(res.status, 200);
    res.json()
        .get("inconsistentChanges")
        .cloned()
        .unwrap_or(json!([]))
}

fn edit(dir: &Path, rel: &str, from: &str, to: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

#[test]
fn a_fix_to_one_copy_points_at_the_copy_it_left_behind() {
    let (dir, server) = repository();
    edit(
        dir.path(),
        "src/a.js",
        "item.price > 0",
        "item.price > 0 && item.count > 0",
    );
    assert_eq!(
        inconsistent(dir.path(), &server),
        json!([{
            "file": "src/a.js",
            "startLine": 3,
            "endLine": 12,
            "addedLines": [6],
            "deletedLines": [6],
            "symbol": {"kind": "function", "name": "a", "whole": true},
            "copies": [{"file": "lib/b.js", "startLine": 1, "endLine": 10,
                        "symbol": {"kind": "function", "name": "b", "whole": true}}],
            "message": "`a()` in src/a.js:3-12 changed here; its copy in lib/b.js:1-10 was not changed the same way"
        }])
    );
    // As SARIF, for review bots: a warning of its own rule on the changed
    // copy, the copy left behind related.
    let diff = git(dir.path(), &["diff", "HEAD"]);
    let res = server.request(
        "POST",
        "/api/check-diff?output=sarif",
        &[("Content-Type", "text/x-diff")],
        diff.as_bytes(),
    );
    let log = res.json();
    crate::common::sarif_schema::assert_valid(&log);
    let run = &log["runs"][0];
    assert_eq!(
        run["tool"]["driver"]["rules"][1]["id"],
        "inconsistent-change"
    );
    let results: Vec<&Value> = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["ruleId"] == "inconsistent-change")
        .collect();
    assert_eq!(results.len(), 1, "{run}");
    assert_eq!(
        (&results[0]["ruleIndex"], &results[0]["level"], &results[0]["message"]["text"]),
        (
            &json!(1),
            &json!("warning"),
            &json!("This copy of duplicated code changed; its copy at [lib/b.js:1](1) did not change the same way.")
        )
    );
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        3
    );
    assert_eq!(
        results[0]["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "lib/b.js"
    );
    // As rdjsonl, for reviewdog.
    let res = server.request(
        "POST",
        "/api/check-diff?output=rdjsonl",
        &[("Content-Type", "text/x-diff")],
        diff.as_bytes(),
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&res.body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .filter(|d: &Value| d["code"]["value"] == "inconsistent-change")
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0]["message"],
        "This copy of duplicated code changed; its copy at lib/b.js:1-10 did not change the same way."
    );
    // The same fix in both copies: nothing left behind.
    edit(
        dir.path(),
        "lib/b.js",
        "item.price > 0",
        "item.price > 0 && item.count > 0",
    );
    assert_eq!(inconsistent(dir.path(), &server), json!([]));
}

#[test]
fn a_rename_in_mild_mode_a_deleted_copy_and_a_moved_copy_are_not_inconsistent() {
    let (dir, server) = repository();
    // A rename: the copies are still equal in mild mode.
    edit(dir.path(), "src/a.js", "let total = 0;", "let sum = 0;");
    edit(
        dir.path(),
        "src/a.js",
        "total += item.price",
        "sum += item.price",
    );
    edit(
        dir.path(),
        "src/a.js",
        "const tax = total * rate;",
        "const tax = sum * rate;",
    );
    edit(
        dir.path(),
        "src/a.js",
        "return { total, tax, sum: total + tax };",
        "return { sum, tax, sum: sum + tax };",
    );
    assert_eq!(inconsistent(dir.path(), &server), json!([]));
    git(dir.path(), &["checkout", "-q", "--", "."]);
    // A fix to one copy while the other is deleted.
    edit(dir.path(), "src/a.js", "item.price > 0", "item.price >= 0");
    std::fs::remove_file(dir.path().join("lib/b.js")).expect("remove");
    assert_eq!(inconsistent(dir.path(), &server), json!([]));
    git(dir.path(), &["checkout", "-q", "--", "."]);
    // One copy deleted whole from its file (moved away): not a fix.
    write(dir.path(), "src/a.js", "// Totals.\n");
    assert_eq!(inconsistent(dir.path(), &server), json!([]));
}

#[test]
fn report_diff_says_which_copy_a_change_left_behind() {
    let (dir, _server) = repository();
    edit(
        dir.path(),
        "src/a.js",
        "item.price > 0",
        "item.price > 0 && item.count > 0",
    );
    let diff = git(dir.path(), &["diff", "HEAD"]);
    write(dir.path(), "change.diff", &diff);
    let out = Command::new(crate::common::BIN)
        .current_dir(dir.path())
        .args([
            "report",
            ".",
            "--mode",
            "mild",
            "--diff",
            "change.diff",
            "--reporter",
            "console,json,codequality",
            "--output",
            "out",
        ])
        .output()
        .expect("run report");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stdout);
    assert!(
        console.lines().any(|l| l
            == "inconsistent change: `a()` in src/a.js:3-12 changed here; its copy in lib/b.js:1-10 was not changed the same way"),
        "{console}"
    );
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/dupcheck-report.json")).expect("json report"),
    )
    .expect("json");
    assert_eq!(
        json["inconsistentChanges"],
        json!([{
            "file": "src/a.js", "startLine": 3, "endLine": 12,
            "symbol": {"kind": "function", "name": "a", "whole": true},
            "copies": [{"file": "lib/b.js", "startLine": 1, "endLine": 10,
                        "symbol": {"kind": "function", "name": "b", "whole": true}}],
            "message": "`a()` in src/a.js:3-12 changed here; its copy in lib/b.js:1-10 was not changed the same way"
        }])
    );
    // GitLab's Code Quality report has it as an issue of its own.
    let issues: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/gl-code-quality-report.json"))
            .expect("code quality report"),
    )
    .expect("json");
    let left_behind: Vec<&Value> = issues
        .as_array()
        .expect("issues")
        .iter()
        .filter(|i| i["check_name"] == "inconsistent-change")
        .collect();
    assert_eq!(left_behind.len(), 1, "{issues:#}");
    let mut issue = left_behind[0].clone();
    issue["fingerprint"] = json!("F");
    assert_eq!(
        issue,
        json!({
            "type": "issue",
            "check_name": "inconsistent-change",
            "description": "This copy of duplicated code changed; its copy at lib/b.js:1-10 did not change the same way.",
            "categories": ["Duplication"],
            "fingerprint": "F",
            "severity": "major",
            "location": {"path": "src/a.js", "lines": {"begin": 3, "end": 12}},
            "other_locations": [{"path": "lib/b.js", "lines": {"begin": 1, "end": 10}}],
        })
    );
}
