//! `dupcheck report`: one run for CI. Clone counts equal `/api/stats`,
//! threshold and baseline exit codes, the json, SARIF and Markdown reports,
//! `--diff -`, usage errors, and a directory named `report`.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{fixture, sarif_schema::assert_valid, write, Server, BIN};
use serde_json::{json, Value};

/// Runs `dupcheck report` in `dir` with `args` (no cache), feeding `stdin`.
fn report(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .current_dir(dir)
        .arg("report")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dupcheck report");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("run dupcheck report")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The lines `dupcheck report` prints for the `stats` fixture, before any
/// threshold or baseline line.
const STATS_TABLE: &str = "\
lines  tokens  format      first     second
    8      61  javascript  b.js:2-9  lib/a.js:1-8
                           in `area()` and `area()`

3 files, 20 lines, 154 tokens: 1 clone, 16 duplicated lines (80%), 122 duplicated tokens (79.22%)
";

#[test]
fn clone_counts_equal_api_stats_for_the_same_options() {
    let temp = fixture("stats");
    // More clones: a copy in the same folder and one renamed (mild mode).
    let b = std::fs::read_to_string(temp.path().join("b.js")).expect("b.js");
    write(temp.path(), "lib/b2.js", &b);
    write(temp.path(), "c/b3.js", b.replace("shape", "form"));
    for options in [
        &["--no-cache"][..],
        &["--no-cache", "--mode", "mild"],
        &[
            "--no-cache",
            "--mode",
            "mild",
            "--skipLocal",
            "--min-tokens",
            "40",
        ],
        &[
            "--no-cache",
            "--ignoreCase",
            "--ignore-pattern",
            r"throw new Error\(.*\);",
            "--min-tokens",
            "30",
        ],
    ] {
        let out = report(
            temp.path(),
            &[&["--reporter", "json"], options].concat(),
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let mut ours: Value = serde_json::from_slice(&out.stdout).expect("json report");
        let copy = tempfile::tempdir().expect("temp");
        for rel in ["b.js", "lib/a.js", "lib/b2.js", "c/b3.js", "c.py"] {
            write(
                copy.path(),
                rel,
                std::fs::read(temp.path().join(rel)).expect("read"),
            );
        }
        let server = Server::start_in(copy, options);
        let (_, mut theirs) = server.get("/api/stats");
        ours["statistics"]["detectionDate"] = json!("D");
        theirs["statistics"]["detectionDate"] = json!("D");
        assert_json!(ours["statistics"], theirs["statistics"]);
        assert_eq!(
            ours["clones"].as_array().expect("clones").len() as u64,
            theirs["statistics"]["total"]["clones"]
                .as_u64()
                .expect("count"),
            "{options:?}"
        );
    }
}

#[test]
fn threshold_exit_codes_and_console_lines() {
    let temp = fixture("stats");
    let out = report(temp.path(), &["--no-cache", "--threshold", "80"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        format!("{STATS_TABLE}threshold: 80% duplicated lines is within 80%\n")
    );
    // Off a terminal, stderr gets the one summary line.
    assert!(
        stderr(&out).starts_with("dupcheck: scanned 3 files, 20 lines, 154 tokens in "),
        "{}",
        stderr(&out)
    );
    let out = report(temp.path(), &["--no-cache", "--threshold", "79.5"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!("{STATS_TABLE}threshold: 80% duplicated lines is above 79.5%\n")
    );
    let out = report(temp.path(), &["--no-cache"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), STATS_TABLE);
    // No cache is written unless asked.
    assert!(!temp.path().join(".dupcheck-cache").exists());
    let out = report(temp.path(), &["--write-cache"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(temp.path().join(".dupcheck-cache").is_dir());
}

#[test]
fn json_report_fields() {
    let temp = fixture("stats");
    let out = report(
        temp.path(),
        &["--no-cache", "--reporter", "json", "--output", "out"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let text = std::fs::read_to_string(temp.path().join("out/dupcheck-report.json")).expect("file");
    let mut got: Value = serde_json::from_str(&text).expect("json");
    let fingerprint = got["clones"][0]["fingerprint"].as_str().expect("hex");
    assert!(
        fingerprint.len() == 16 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit()),
        "{fingerprint}"
    );
    got["clones"][0]["fingerprint"] = json!("F");
    got["statistics"] = got["statistics"]["total"].clone();
    let fragment = std::fs::read_to_string(temp.path().join("lib/a.js")).expect("a.js");
    assert_json!(
        got,
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "mode": "strict",
            "minLines": 5,
            "minTokens": 50,
            "clones": [{
                "format": "javascript",
                "lines": 8,
                "tokens": 61,
                "fingerprint": "F",
                "first": {"path": "b.js", "start": {"line": 2, "column": 1}, "end": {"line": 9, "column": 2}, "symbol": {"kind": "function", "name": "area", "whole": true}},
                "second": {"path": "lib/a.js", "start": {"line": 1, "column": 1}, "end": {"line": 8, "column": 2}, "symbol": {"kind": "function", "name": "area", "whole": true}},
                "fragment": fragment.trim_end(),
            }],
            "statistics": {"lines": 20, "tokens": 154, "sources": 3, "clones": 1,
                           "duplicatedLines": 16, "duplicatedTokens": 122,
                           "percentage": 80, "percentageTokens": 79.22,
                           "newDuplicatedLines": 0, "newClones": 0},
        })
    );
}

#[test]
fn sarif_report_validates_against_the_schema() {
    let temp = fixture("stats");
    let out = report(
        temp.path(),
        &["--no-cache", "-r", "sarif,console", "-o", "out"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), STATS_TABLE);
    let text =
        std::fs::read_to_string(temp.path().join("out/dupcheck-report.sarif")).expect("file");
    let log: Value = serde_json::from_str(&text).expect("json");
    assert_valid(&log);
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1);
    let location = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "b.js");
    assert_eq!(location["region"]["startLine"], 2);
    assert_eq!(location["region"]["endLine"], 9);
    let related = &results[0]["relatedLocations"][0]["physicalLocation"];
    assert_eq!(related["artifactLocation"]["uri"], "lib/a.js");
    assert_eq!(related["region"]["startLine"], 1);
}

#[test]
fn markdown_report_content() {
    let temp = fixture("stats");
    let out = report(
        temp.path(),
        &["--no-cache", "--reporter", "markdown", "--threshold", "50"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "# Duplicate code\n\
         \n\
         | Lines | Tokens | Format | First | Second |\n\
         |---:|---:|---|---|---|\n\
         | 8 | 61 | javascript | `b.js:2-9` | `lib/a.js:1-8` |\n\
         \n\
         3 files, 20 lines, 154 tokens: 1 clone, 16 duplicated lines (80%), 122 duplicated tokens (79.22%)  \n\
         threshold: 80% duplicated lines is above 50%  \n"
    );
}

#[test]
fn a_baseline_survives_unrelated_edits_and_a_new_copy_fails() {
    let temp = fixture("stats");
    let dir = temp.path();
    let out = report(dir, &["--no-cache", "-r", "json", "-o", "base"], b"");
    assert_eq!(out.status.code(), Some(0));
    let baseline = [
        "--no-cache",
        "--baseline",
        "base/dupcheck-report.json",
        "--fail-on-new",
    ];
    // Lines inserted above the clone on both sides, and edits elsewhere,
    // different in each file (the same lines around both would be a copy
    // of lib/a.js whole, two statements inserted in b.js).
    for (rel, above, below) in [
        ("b.js", "const y = 2;", "let z = 3;"),
        ("lib/a.js", "const w = 5;", "let q = 4;"),
    ] {
        let text = std::fs::read_to_string(dir.join(rel)).expect("read");
        write(dir, rel, format!("// moved\n{above}\n\n{text}{below}\n"));
    }
    let out = report(dir, &baseline, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "\
lines  tokens  format      first      second         baseline
    8      61  javascript  b.js:5-12  lib/a.js:4-11  known
                           in `area()` and `area()`

3 files, 28 lines, 174 tokens: 1 clone, 16 duplicated lines (57.14%), 122 duplicated tokens (70.11%)
baseline: 0 new clones, 1 known
"
    );
    // A further copy of the known clone is new, naming its file.
    let a = std::fs::read_to_string(dir.join("lib/a.js")).expect("a.js");
    write(dir, "more/copy.js", &a);
    let out = report(dir, &baseline, b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "\
lines  tokens  format      first          second             baseline
   11      71  javascript  lib/a.js:2-12  more/copy.js:2-12  new
    8      61  javascript  b.js:5-12      lib/a.js:4-11      known
                           in `area()` and `area()`
    8      61  javascript  b.js:5-12      more/copy.js:4-11  new
                           in `area()` and `area()`

4 files, 40 lines, 245 tokens: 3 clones, 30 duplicated lines (75%), 203 duplicated tokens (82.86%)
baseline: 2 new clones, 1 known
"
    );
    // Without --fail-on-new, new clones are reported and the run passes.
    let out = report(dir, &baseline[..3], b"");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_diff_from_stdin_reports_only_clones_of_its_added_lines() {
    let temp = fixture("stats");
    let diff =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/report/copy.diff"))
            .expect("diff");
    let out = report(
        temp.path(),
        &["--no-cache", "--diff", "-", "-r", "json,console"],
        &diff,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = stdout(&out);
    let (json_text, console) = got.split_at(got.find("\nlines").expect("console") + 1);
    let report_json: Value = serde_json::from_str(json_text).expect("json");
    let clones = report_json["clones"].as_array().expect("clones");
    // The new file duplicates both places of the old clone; the old clone
    // itself touches no added line.
    assert_eq!(clones.len(), 2, "{report_json:#}");
    for (clone, other) in clones.iter().zip(["b.js", "lib/a.js"]) {
        assert_eq!(clone["first"]["path"], "copy.js");
        assert_eq!(clone["first"]["start"], json!({"line": 1, "column": 1}));
        assert_eq!(clone["first"]["end"], json!({"line": 8, "column": 2}));
        assert_eq!(clone["second"]["path"], other);
        assert_eq!(clone["addedLines"], 8);
    }
    assert_json!(
        report_json["statistics"],
        json!({"totalDuplications": 2, "addedLines": 8, "duplicatedAddedLines": 8,
               "percentageDuplicated": 100})
    );
    assert_eq!(
        console,
        "\
lines  tokens  format      first        second
    8      61  javascript  copy.js:1-8  b.js:2-9
                           in `area()` and `area()`
    8      61  javascript  copy.js:1-8  lib/a.js:1-8
                           in `area()` and `area()`

the diff adds 8 lines: 2 duplications, 8 duplicated added lines (100%)
"
    );
}

#[test]
fn usage_errors_exit_2_with_clap_messages() {
    let temp = fixture("stats");
    for (args, message) in [
        (
            &["--threshold", "120"][..],
            "error: invalid value '120' for '--threshold <PCT>': \"120\" is not a percentage from 0 to 100",
        ),
        (
            &["--fail-on-new"],
            "error: the following required arguments were not provided:\n  --baseline <FILE>",
        ),
        (&["--port", "0"], "error: unexpected argument '--port' found"),
        (
            &["--reporter", "html"],
            "error: invalid value 'html' for '--reporter <LIST>'",
        ),
    ] {
        let out = report(temp.path(), args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).starts_with(message), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
    }
    let out = report(temp.path(), &["--baseline", "missing.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("dupcheck: error: cannot read the baseline "),
        "{}",
        stderr(&out)
    );
    write(temp.path(), "bad.json", "{\"clones\": 3}");
    let out = report(temp.path(), &["--baseline", "bad.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with("is not a dupcheck JSON report: it has no \"clones\" array\n"),
        "{}",
        stderr(&out)
    );
    let help = Command::new(BIN)
        .args(["report", "--help"])
        .output()
        .expect("help");
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("Exit status:\n  0  "), "{help}");
}

#[test]
fn a_directory_named_report_is_served_as_dot_slash_report() {
    let temp = tempfile::tempdir().expect("temp");
    let inner = fixture("stats");
    for rel in ["b.js", "lib/a.js", "c.py"] {
        write(
            temp.path(),
            &format!("report/{rel}"),
            std::fs::read(inner.path().join(rel)).expect("read"),
        );
    }
    let mut child = Command::new(BIN)
        .current_dir(temp.path())
        .args([
            "./report",
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--no-cache",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dupcheck");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let _ = child.kill();
    let _ = child.wait();
    let served = std::fs::canonicalize(temp.path().join("report")).expect("canonical");
    assert!(
        line.starts_with("dupcheck listening on http://127.0.0.1:")
            && line
                .trim_end()
                .ends_with(&format!("(scanning {})", served.display())),
        "{line}"
    );
    // And `report` reports on it.
    let out = report(temp.path(), &["./report", "--no-cache"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), STATS_TABLE);
}

/// The Code Quality report `dupcheck report -r codequality -o out` writes
/// in `dir`.
fn code_quality(dir: &Path) -> Value {
    let out = report(dir, &["--no-cache", "-r", "codequality", "-o", "out"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let text = std::fs::read_to_string(dir.join("out/gl-code-quality-report.json"))
        .expect("gl-code-quality-report.json");
    serde_json::from_str(&text).expect("json")
}

#[test]
fn code_quality_report_has_an_issue_per_place_and_keeps_fingerprints_when_lines_move() {
    let temp = fixture("stats");
    let dir = temp.path();
    let mut got = code_quality(dir);
    let prints: Vec<String> = got
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| i["fingerprint"].as_str().expect("fingerprint").to_owned())
        .collect();
    assert_eq!(prints.len(), 2);
    assert_ne!(prints[0], prints[1]);
    // The first 16 digits are the JSON report's fingerprint of the clone.
    let out = report(dir, &["--no-cache", "-r", "json"], b"");
    let json_report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    let content = json_report["clones"][0]["fingerprint"]
        .as_str()
        .expect("hex");
    for print in &prints {
        assert!(
            print.len() == 32 && print.bytes().all(|b| b.is_ascii_hexdigit()),
            "{print}"
        );
        assert_eq!(&print[..16], content);
    }
    for issue in got.as_array_mut().expect("issues") {
        issue["fingerprint"] = json!("F");
    }
    let issue = |path: &str, begin: u32, end: u32, other: &str, other_lines: (u32, u32)| {
        json!({
            "type": "issue",
            "check_name": "duplicate-code",
            "description": format!(
                "Duplicated code in `area()`: 8 lines (61 tokens), also at {other}:{}-{}. It duplicates `area()`.",
                other_lines.0, other_lines.1
            ),
            "categories": ["Duplication"],
            "fingerprint": "F",
            "severity": "minor",
            "location": {"path": path, "lines": {"begin": begin, "end": end}},
            "other_locations": [
                {"path": other, "lines": {"begin": other_lines.0, "end": other_lines.1}},
            ],
        })
    };
    assert_json!(
        got,
        json!([
            issue("b.js", 2, 9, "lib/a.js", (1, 8)),
            issue("lib/a.js", 1, 8, "b.js", (2, 9)),
        ])
    );
    // Lines inserted above the clone on both sides (comments and blank
    // lines, which leave its tokens as they were) move its issues, not
    // their fingerprints.
    for (rel, lines) in [("b.js", "\n\n\n"), ("lib/a.js", "// moved\n// down\n\n")] {
        let text = std::fs::read_to_string(dir.join(rel)).expect("read");
        write(dir, rel, format!("{lines}{text}"));
    }
    let moved = code_quality(dir);
    let lines: Vec<(&str, u64)> = moved
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| {
            (
                i["location"]["path"].as_str().expect("path"),
                i["location"]["lines"]["begin"].as_u64().expect("begin"),
            )
        })
        .collect();
    assert_eq!(lines, [("b.js", 5), ("lib/a.js", 4)]);
    let moved_prints: Vec<&str> = moved
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| i["fingerprint"].as_str().expect("fingerprint"))
        .collect();
    assert_eq!(moved_prints, prints);
}

#[test]
fn code_quality_of_a_diff_is_the_added_code_and_rdjsonl_is_reviewdogs() {
    let temp = fixture("stats");
    let diff =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/report/copy.diff"))
            .expect("diff");
    let out = report(
        temp.path(),
        &["--no-cache", "--diff", "-", "-r", "codequality"],
        &diff,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let issues: Value = serde_json::from_slice(&out.stdout).expect("json");
    let issues = issues.as_array().expect("issues");
    // One place of added code, duplicating both places of the old clone.
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert_eq!(
        issues[0]["location"],
        json!({"path": "copy.js", "lines": {"begin": 1, "end": 8}})
    );
    assert_eq!(
        issues[0]["description"],
        "Duplicated code in `area()`: 8 lines (61 tokens), also at b.js:2-9 and lib/a.js:1-8."
    );
    let out = report(
        temp.path(),
        &["--no-cache", "-r", "rdjsonl,console", "-o", "out"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), STATS_TABLE);
    let text =
        std::fs::read_to_string(temp.path().join("out/dupcheck-report.rdjsonl")).expect("file");
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: Value = serde_json::from_str(text.trim_end()).expect("json line");
    let mut source = json!({"name": "dupcheck"});
    if let Some(url) = [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|u| !u.is_empty())
    {
        source["url"] = json!(url);
    }
    assert_json!(
        line,
        json!({
            "message": "Duplicated code in `area()`: 8 lines (61 tokens), also at lib/a.js:1-8. It duplicates `area()`.",
            "location": {"path": "b.js", "range": {"start": {"line": 2, "column": 1},
                                                   "end": {"line": 9, "column": 2}}},
            "severity": "WARNING",
            "source": source,
            "code": {"value": "duplicate-code"},
        })
    );
}
