//! POST /api/check-diff: diffs made with git in a clone of the `diff`
//! fixture and checked by a server on the original, as a review bot on the
//! target branch does; exact lines and `addedLines`, moved and deleted
//! code, code pasted twice by one diff, files skipped, a diff against
//! another commit, bodies and errors, SARIF and rdjsonl answers.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::sarif_schema::assert_valid;
use common::{error, Server};
use serde_json::{json, Value};

/// Runs git in `dir`, away from the machine's own configuration, and
/// returns its output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("git prints UTF-8 here")
}

/// Makes `dir` a repository with one commit of what it holds.
fn init(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    configure(dir);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
}

fn configure(dir: &Path) {
    git(dir, &["config", "user.name", "dupcheck tests"]);
    git(dir, &["config", "user.email", "tests@dupcheck.invalid"]);
}

/// A text of the `diff` fixture.
fn fixture(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/diff")
            .join(rel),
    )
    .expect("fixture file")
}

/// A repository made from the `diff` fixture and served, and a clone of
/// it where a pull request's changes are made.
struct Review {
    server: Server,
    work: tempfile::TempDir,
}

impl Review {
    /// Serves the fixture's repository at its first commit with `args`.
    fn start(args: &[&str]) -> Review {
        Review::start_after(args, |_| {})
    }

    /// Like [`Review::start`], `later` changing the served repository
    /// after the clone was made (a commit the diff is not made against).
    fn start_after(args: &[&str], later: impl FnOnce(&Path)) -> Review {
        let served = common::fixture("diff");
        init(served.path());
        let work = tempfile::tempdir().expect("temp dir");
        git(
            served.path(),
            &[
                "clone",
                "-q",
                served.path().to_str().expect("UTF-8 path"),
                work.path().to_str().expect("UTF-8 path"),
            ],
        );
        configure(work.path());
        later(served.path());
        Review {
            server: Server::start_in(served, args),
            work,
        }
    }

    fn dir(&self) -> &Path {
        self.work.path()
    }

    /// Writes a file of the clone.
    fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        common::write(self.dir(), rel, text);
    }

    /// Inserts `text` into a file of the clone before its line `line`.
    fn insert(&self, rel: &str, line: usize, text: &str) {
        let old = std::fs::read_to_string(self.dir().join(rel)).expect("read");
        let mut lines: Vec<&str> = old.split_inclusive('\n').collect();
        lines.insert(line - 1, text);
        self.write(rel, lines.concat());
    }

    /// Replaces `from` with `to` in a file of the clone.
    fn replace(&self, rel: &str, from: &str, to: &str) {
        let old = std::fs::read_to_string(self.dir().join(rel)).expect("read");
        assert!(old.contains(from), "{rel} has no {from:?}");
        self.write(rel, old.replacen(from, to, 1));
    }

    /// The diff of the clone's changes to its commit, as `git diff` prints
    /// it (new files, renames and binary files included), with `options`.
    fn diff(&self, options: &[&str]) -> String {
        git(self.dir(), &["add", "-A"]);
        let mut args = vec!["diff", "--cached", "--no-color", "--no-ext-diff"];
        args.extend(options);
        git(self.dir(), &args)
    }

    /// POSTs `diff` as `text/x-diff` to `/api/check-diff` with `query`.
    fn post(&self, query: &str, diff: &str) -> common::Response {
        self.server.request(
            "POST",
            &format!("/api/check-diff{query}"),
            &[("Content-Type", "text/x-diff")],
            diff.as_bytes(),
        )
    }

    /// Checks the clone's changes: status 200 and the JSON answer.
    fn check(&self) -> Value {
        let res = self.post("", &self.diff(&["-M"]));
        assert_eq!(res.status, 200, "{}", String::from_utf8_lossy(&res.body));
        res.json()
    }

    /// Checks the clone's changes sent as the `diff` of a JSON body with
    /// `fields`: status 200 and the JSON answer.
    fn check_with(&self, fields: Value) -> Value {
        let mut body = fields;
        body["diff"] = Value::String(self.diff(&["-M"]));
        let (status, answer) = self.server.post("/api/check-diff", &body.to_string());
        assert_eq!(status, 200, "{answer}");
        answer
    }
}

/// `parseQuery` of `src/util/query.js`, renamed and re-laid-out a little.
const READ_TERMS: &str = r#"import { fetchJson } from "./net.js";

// Search terms from a URL's query.
function readTerms(input) {
  const terms = {};
  const rest = input.startsWith("?") ? input.slice(1) : input;
  for (const part of rest.split("&")) {
    if (!part) {
      continue;
    }
    const [k, v = ""] = part.split("=");
    const name = decodeURIComponent(k.replace(/\+/g, " "));
    const text = decodeURIComponent(v.replace(/\+/g, " "));
    terms[name] = name in terms ? [].concat(terms[name], text) : text;
  }
  return terms;
}

export async function search(url) {
  return fetchJson("/search", readTerms(new URL(url).search));
}
"#;

const SLUGIFY: &str = r#"export function slugify(title, separator = "-") {
  const words = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  return words.join(separator);
}
"#;

/// What `READ_TERMS` renamed in `src/util/query.js`'s `parseQuery`: the
/// copy's names first, in order of first appearance.
fn read_terms_renamed() -> serde_json::Value {
    json!([
        ["readTerms", "parseQuery"],
        ["input", "text"],
        ["terms", "params"],
        ["rest", "trimmed"],
        ["part", "pair"],
        ["k", "rawKey"],
        ["v", "rawValue"],
        ["name", "key"],
        ["text", "value"]
    ])
}

/// The part of `src/util/table.js` that `renderTable` is, with the blank
/// line after it, and the rest.
fn render_table() -> (String, String) {
    let table = fixture("src/util/table.js");
    let at = table.find("export function pad").expect("pad");
    let head = &table[..at];
    let function = head
        .strip_prefix("// Plain-text tables.\n")
        .expect("comment");
    (function.to_owned(), table[at..].to_owned())
}

#[test]
fn a_renamed_copy_in_a_new_file_is_reported_at_its_new_lines() {
    let review = Review::start(&["--mode", "mild"]);
    review.write("src/app/search.js", READ_TERMS);
    assert_json!(
        review.check(),
        json!({
            "files": [{
                "path": "src/app/search.js",
                "format": "javascript",
                "duplications": [{
                    "snippetLocation": {"startLine": 4, "endLine": 17, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "readTerms", "whole": true}},
                    "codebaseLocation": {
                        "file": "src/util/query.js", "startLine": 2, "endLine": 15,
                        "startColumn": 8, "endColumn": 2,
                        "fragment": fixture("src/util/query.js")
                            .trim_start_matches("// Query strings.\nexport ")
                            .trim_end(),
                        "symbol": {"kind": "function", "name": "parseQuery", "whole": true}
                    },
                    "linesCount": 14,
                    "tokens": 128,
                    "format": "javascript",
                    "addedLines": 14,
                    "renamed": read_terms_renamed()
                }]
            }],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 1, "addedLines": 21, "duplicatedAddedLines": 14,
                           "percentageDuplicated": 66.67}
        })
    );
}

#[test]
fn a_copy_edited_after_it_was_pasted_is_reported_whole_with_its_gap() {
    let review = Review::start(&["--mode", "mild"]);
    // A statement inserted into the renamed copy.
    let edited = READ_TERMS.replace(
        "    const [k, v = \"\"] = part.split(\"=\");\n",
        "    const [k, v = \"\"] = part.split(\"=\");\n    if (k.length > 64) {\n      throw new RangeError(k);\n    }\n",
    );
    review.write("src/app/search.js", &edited);
    let query = fixture("src/util/query.js");
    let function = query
        .trim_start_matches("// Query strings.\nexport ")
        .trim_end();
    let copy = json!({
        "snippetLocation": {"startLine": 4, "endLine": 20, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "readTerms", "whole": true}},
        "codebaseLocation": {
            "file": "src/util/query.js", "startLine": 2, "endLine": 15,
            "startColumn": 8, "endColumn": 2, "fragment": function,
            "symbol": {"kind": "function", "name": "parseQuery", "whole": true}
        },
        "linesCount": 17,
        "tokens": 128,
        "format": "javascript",
        "addedLines": 17,
        "similarity": 0.938,
        "gaps": [{"snippet": {"startLine": 12, "endLine": 14}, "codebase": null}],
        "renamed": read_terms_renamed()
    });
    assert_json!(review.check()["files"][0]["duplications"], json!([copy]));
    // Asked without near-miss copies: its two exact parts.
    let split = function.find("\n    const key").expect("const key");
    let part = |snippet: [u32; 4],
                codebase: [u32; 4],
                fragment: &str,
                tokens: u32,
                renamed: serde_json::Value| {
        json!({
            "snippetLocation": {"startLine": snippet[0], "endLine": snippet[1],
                                "startColumn": snippet[2], "endColumn": snippet[3], "symbol": {"kind": "function", "name": "readTerms", "whole": false}},
            "codebaseLocation": {
                "file": "src/util/query.js", "startLine": codebase[0], "endLine": codebase[1],
                "startColumn": codebase[2], "endColumn": codebase[3], "fragment": fragment,
                "symbol": {"kind": "function", "name": "parseQuery", "whole": false}
            },
            "linesCount": snippet[1] - snippet[0] + 1,
            "tokens": tokens,
            "format": "javascript",
            "addedLines": snippet[1] - snippet[0] + 1,
            "renamed": renamed
        })
    };
    assert_json!(
        review.check_with(json!({"nearMiss": false}))["files"][0]["duplications"],
        json!([
            part(
                [4, 11, 1, 41],
                [2, 9, 8, 53],
                &function[..split],
                69,
                json!([
                    ["readTerms", "parseQuery"],
                    ["input", "text"],
                    ["terms", "params"],
                    ["rest", "trimmed"],
                    ["part", "pair"],
                    ["k", "rawKey"],
                    ["v", "rawValue"]
                ])
            ),
            part(
                [15, 20, 5, 2],
                [10, 15, 5, 2],
                &function[split + 5..],
                59,
                json!([
                    ["name", "key"],
                    ["k", "rawKey"],
                    ["text", "value"],
                    ["v", "rawValue"],
                    ["terms", "params"]
                ])
            )
        ])
    );
}

#[test]
fn moved_code_is_not_reported() {
    let review = Review::start(&[]);
    let (function, rest) = render_table();
    review.write(
        "src/util/table.js",
        format!("// Plain-text tables.\n{rest}"),
    );
    review.write("src/view/grid.js", format!("// Grids.\n{function}"));
    assert_json!(
        review.check(),
        json!({
            "files": [
                {"path": "src/util/table.js", "format": "javascript", "duplications": []},
                {"path": "src/view/grid.js", "format": "javascript", "duplications": []}
            ],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 0, "addedLines": 14, "duplicatedAddedLines": 0,
                           "percentageDuplicated": 0}
        })
    );
}

/// The duplication of `settings.js`'s `merge` once its one different line
/// is made `merge.js`'s.
fn settings_merge_duplication() -> Value {
    let merge = fixture("src/util/merge.js");
    json!({
        "snippetLocation": {"startLine": 4, "endLine": 17, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "merge", "whole": true}},
        "codebaseLocation": {
            "file": "src/util/merge.js", "startLine": 2, "endLine": 15,
            "startColumn": 1, "endColumn": 2,
            "fragment": merge.trim_start_matches("// Deep merge of plain objects.\n").trim_end(),
            "symbol": {"kind": "function", "name": "merge", "whole": true}
        },
        "linesCount": 14,
        "tokens": 105,
        "format": "javascript",
        "addedLines": 1
    })
}

#[test]
fn an_edited_line_that_completes_a_copy_is_reported() {
    let review = Review::start(&[]);
    review.replace(
        "src/app/settings.js",
        "      result[key] = null;\n",
        "      delete result[key];\n",
    );
    assert_json!(
        review.check(),
        json!({
            "files": [{
                "path": "src/app/settings.js",
                "format": "javascript",
                "duplications": [settings_merge_duplication()]
            }],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 1, "addedLines": 1, "duplicatedAddedLines": 1,
                           "percentageDuplicated": 100}
        })
    );
}

#[test]
fn an_edited_line_inside_a_copy_reports_the_copy() {
    // merge.js's `merge` and settings.js's differ in one line (the last
    // branch); the edited line is another.
    let review = Review::start(&[]);
    review.replace(
        "src/util/merge.js",
        "      result[key] = value;\n",
        "      result[key] = value; // as it is\n",
    );
    let settings = fixture("src/app/settings.js");
    let start = settings.find("export function merge").expect("merge");
    let end = settings.find("\n\nexport function load").expect("load");
    // Whole, as a near-miss copy with its one gap; `result [ key ]`, in
    // both versions of the differing line, counts as matched: 100 tokens
    // in parts and 4 in the gap, of 106 on the longer side.
    assert_json!(
        review.check(),
        json!({
            "files": [{
                "path": "src/util/merge.js",
                "format": "javascript",
                "duplications": [{
                    "snippetLocation": {"startLine": 2, "endLine": 15, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "merge", "whole": true}},
                    "codebaseLocation": {
                        "file": "src/app/settings.js", "startLine": 4, "endLine": 17,
                        "startColumn": 1, "endColumn": 2, "fragment": &settings[start..end],
                        "symbol": {"kind": "function", "name": "merge", "whole": true}
                    },
                    "linesCount": 14,
                    "tokens": 104,
                    "format": "javascript",
                    "addedLines": 1,
                    "similarity": 0.981,
                    "gaps": [{"snippet": {"startLine": 11, "endLine": 11},
                              "codebase": {"startLine": 13, "endLine": 13}}]
                }]
            }],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 1, "addedLines": 1, "duplicatedAddedLines": 1,
                           "percentageDuplicated": 100}
        })
    );
    // Without near-miss copies, the first nine lines they share.
    let shared = &settings[start
        ..settings
            .find("    } else {\n      result[key] = null")
            .expect("else")
            + 12];
    assert_json!(
        review.check_with(json!({"nearMiss": false})),
        json!({
            "files": [{
                "path": "src/util/merge.js",
                "format": "javascript",
                "duplications": [{
                    "snippetLocation": {"startLine": 2, "endLine": 10, "startColumn": 1, "endColumn": 13, "symbol": {"kind": "function", "name": "merge", "whole": false}},
                    "codebaseLocation": {
                        "file": "src/app/settings.js", "startLine": 4, "endLine": 12,
                        "startColumn": 1, "endColumn": 13, "fragment": shared,
                        "symbol": {"kind": "function", "name": "merge", "whole": false}
                    },
                    "linesCount": 9,
                    "tokens": 93,
                    "format": "javascript",
                    "addedLines": 1
                }]
            }],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 1, "addedLines": 1, "duplicatedAddedLines": 1,
                           "percentageDuplicated": 100}
        })
    );
}

#[test]
fn an_edit_elsewhere_in_a_copy_is_not_its_duplication() {
    // settings.js's `merge` already duplicates most of merge.js's; an
    // edit of its last function adds no duplicated line.
    let review = Review::start(&[]);
    review.replace("src/app/settings.js", "\"utf8\"", "\"utf-8\"");
    assert_json!(
        review.check()["files"],
        json!([{"path": "src/app/settings.js", "format": "javascript", "duplications": []}])
    );
}

#[test]
fn a_block_pasted_into_two_files_is_reported_between_them() {
    let review = Review::start(&[]);
    review.insert("src/app/settings.js", 3, &format!("{SLUGIFY}\n"));
    review.write(
        "src/util/table.js",
        format!("{}\n{SLUGIFY}", fixture("src/util/table.js")),
    );
    let duplication = |(line, other_line): (u32, u32), other: &str| {
        json!({
            "snippetLocation": {"startLine": line, "endLine": line + 8, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "slugify", "whole": true}},
            "codebaseLocation": {
                "file": other, "startLine": other_line, "endLine": other_line + 8,
                "startColumn": 1, "endColumn": 2, "fragment": SLUGIFY.trim_end(),
                "symbol": {"kind": "function", "name": "slugify", "whole": true}
            },
            "linesCount": 9,
            "tokens": 59,
            "format": "javascript",
            "addedLines": 9
        })
    };
    assert_json!(
        review.check(),
        json!({
            "files": [
                {"path": "src/app/settings.js", "format": "javascript",
                 "duplications": [duplication((3, 19), "src/util/table.js")]},
                {"path": "src/util/table.js", "format": "javascript",
                 "duplications": [duplication((19, 3), "src/app/settings.js")]}
            ],
            "skipped": [],
            "warnings": [],
            "statistics": {"totalDuplications": 2, "addedLines": 20, "duplicatedAddedLines": 18,
                           "percentageDuplicated": 90}
        })
    );
}

#[test]
fn a_block_pasted_twice_into_one_new_file_is_reported_both_ways() {
    let review = Review::start(&[]);
    review.write(
        "src/text.js",
        format!(
            "// Two copies.\n{SLUGIFY}\n{}",
            SLUGIFY.replace("slugify", "slug")
        ),
    );
    let body = review.check();
    let places: Vec<(u64, u64, &str)> = body["files"][0]["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            (
                d["snippetLocation"]["startLine"].as_u64().expect("line"),
                d["codebaseLocation"]["startLine"].as_u64().expect("line"),
                d["codebaseLocation"]["file"].as_str().expect("file"),
            )
        })
        .collect();
    // The function's name differs: the runs start after it, on line 2 and
    // line 12 of the file.
    assert_eq!(places, [(2, 12, "src/text.js"), (12, 2, "src/text.js")]);
}

#[test]
fn code_copied_out_of_a_deleted_file_is_not_reported() {
    let (function, _) = render_table();
    for options in [&["--no-renames"][..], &["-M"][..]] {
        let review = Review::start(&[]);
        std::fs::remove_file(review.dir().join("src/util/table.js")).expect("remove");
        review.write("src/view/grid.js", format!("// Grids.\n{function}"));
        let res = review.post("", &review.diff(options));
        assert_eq!(res.status, 200);
        let body = res.json();
        assert_json!(
            body["files"],
            json!([{"path": "src/view/grid.js", "format": "javascript", "duplications": []}])
        );
        let deleted = json!([{"path": "src/util/table.js", "reason": "deleted"}]);
        if options == ["--no-renames"] {
            assert_json!(body["skipped"], deleted);
            assert_eq!(body["statistics"]["addedLines"], 14);
        } else {
            // Found as a rename: only the comment is added.
            assert_json!(body["skipped"], json!([]));
            assert_eq!(body["statistics"]["addedLines"], 1);
        }
    }
}

#[test]
fn binary_renamed_mode_only_symlink_and_deleted_files_are_no_errors() {
    use std::os::unix::fs::PermissionsExt;
    let review = Review::start(&[]);
    let dir = review.dir();
    std::fs::create_dir_all(dir.join("src/lib")).expect("mkdir");
    std::fs::rename(dir.join("src/util/query.js"), dir.join("src/lib/query.js")).expect("mv");
    review.replace(
        "src/lib/query.js",
        "// Query strings.",
        "// Query strings of URLs.",
    );
    review.write(
        "assets/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
    );
    review.write("notes.txt", "Notes.\n");
    std::fs::remove_file(dir.join("src/util/table.js")).expect("rm");
    std::fs::set_permissions(
        dir.join("src/util/merge.js"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::os::unix::fs::symlink("util/merge.js", dir.join("src/current.js")).expect("ln");
    let diff = review.diff(&["-M"]);
    let res = review.post("", &diff);
    assert_eq!(res.status, 200);
    assert_json!(
        res.json(),
        json!({
            // The renamed file's unchanged lines are not copies of its old
            // version: that version is gone.
            "files": [{"path": "src/lib/query.js", "format": "javascript", "duplications": []}],
            "skipped": [
                {"path": "assets/logo.png", "reason": "binary"},
                {"path": "notes.txt", "reason": "unknownFormat"},
                {"path": "src/current.js", "reason": "symlink"},
                {"path": "src/util/merge.js", "reason": "modeOnly"},
                {"path": "src/util/table.js", "reason": "deleted"}
            ],
            "warnings": [],
            "statistics": {"totalDuplications": 0, "addedLines": 1, "duplicatedAddedLines": 0,
                           "percentageDuplicated": 0}
        })
    );
    // In SARIF, what was skipped is told as notifications.
    let res = review.post("?output=sarif", &diff);
    let log = res.json();
    assert_valid(&log);
    let notifications = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(
        notifications[0],
        json!({
            "level": "note",
            "message": {"text": "assets/logo.png was not checked: binary."},
            "locations": [{"physicalLocation": {"artifactLocation": {
                "uri": "assets/logo.png", "uriBaseId": "%SRCROOT%"}}}]
        })
    );
    assert_eq!(notifications.as_array().map(Vec::len), Some(5));
}

#[test]
fn a_diff_against_another_commit_is_checked_from_its_hunks_with_a_warning() {
    let review = Review::start_after(&[], |served| {
        let settings = served.join("src/app/settings.js");
        let text = std::fs::read_to_string(&settings).expect("read");
        std::fs::write(&settings, format!("// Loaded once.\n{text}")).expect("write");
        git(served, &["commit", "-q", "-am", "later"]);
    });
    let query = fixture("src/util/query.js");
    let function = query.strip_prefix("// Query strings.\n").expect("comment");
    review.insert("src/app/settings.js", 18, &format!("{function}\n"));
    assert_json!(
        review.check(),
        json!({
            "files": [{
                "path": "src/app/settings.js",
                "format": "javascript",
                "duplications": [{
                    // The new file's lines, as the diff numbers them.
                    "snippetLocation": {"startLine": 18, "endLine": 31, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "parseQuery", "whole": true}},
                    "codebaseLocation": {
                        "file": "src/util/query.js", "startLine": 2, "endLine": 15,
                        "startColumn": 1, "endColumn": 2, "fragment": function.trim_end(),
                        "symbol": {"kind": "function", "name": "parseQuery", "whole": true}
                    },
                    "linesCount": 14,
                    "tokens": 129,
                    "format": "javascript",
                    "addedLines": 14
                }]
            }],
            "skipped": [],
            "warnings": [{
                "path": "src/app/settings.js",
                "message": "src/app/settings.js does not match the diff: hunk 1 expects other text at line 15 of it (is the diff against another commit?); its hunks were checked alone"
            }],
            "statistics": {"totalDuplications": 1, "addedLines": 15, "duplicatedAddedLines": 14,
                           "percentageDuplicated": 93.33}
        })
    );
}

#[test]
fn a_server_already_at_the_diffs_new_commit_answers_the_same() {
    let args = ["--mode", "mild"];
    let review = Review::start(&args);
    review.write("src/app/search.js", READ_TERMS);
    review.replace(
        "src/app/settings.js",
        "      result[key] = null;\n",
        "      delete result[key];\n",
    );
    let diff = review.diff(&["-M"]);
    let at_base = review.post("", &diff).json();
    assert_eq!(at_base["statistics"]["totalDuplications"], 2, "{at_base}");
    assert_json!(at_base["warnings"], json!([]));
    // A developer's working tree: the changes are there already.
    let at_head = Server::start_in(review.work, &args);
    let res = at_head.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "text/x-diff")],
        diff.as_bytes(),
    );
    assert_json!(res.json(), at_base);
}

#[test]
fn a_diff_may_come_as_json_as_a_form_or_raw_with_any_diff_type() {
    let review = Review::start(&[]);
    review.replace(
        "src/app/settings.js",
        "      result[key] = null;\n",
        "      delete result[key];\n",
    );
    let diff = review.diff(&[]);
    let want = review.check();
    let bodies: [(Option<&str>, Vec<u8>); 6] = [
        (
            Some("application/json"),
            json!({"diff": diff}).to_string().into_bytes(),
        ),
        (None, json!({"diff": diff}).to_string().into_bytes()),
        (None, diff.clone().into_bytes()),
        (Some("text/x-patch"), diff.clone().into_bytes()),
        // What `curl --data-binary @-` sends without a Content-Type.
        (
            Some("application/x-www-form-urlencoded"),
            diff.clone().into_bytes(),
        ),
        (
            Some("application/x-www-form-urlencoded"),
            form_urlencoded::Serializer::new(String::new())
                .append_pair("diff", &diff)
                .finish()
                .into_bytes(),
        ),
    ];
    for (content_type, body) in bodies {
        let headers: Vec<(&str, &str)> = content_type
            .map(|t| vec![("Content-Type", t)])
            .unwrap_or_default();
        let res = review
            .server
            .request("POST", "/api/check-diff", &headers, &body);
        assert_eq!(res.status, 200, "{content_type:?}");
        assert_json!(res.json(), want);
    }
    // Nothing changed: nothing to report.
    let res = review.post("", "");
    assert_json!(
        res.json(),
        json!({"files": [], "skipped": [], "warnings": [],
               "statistics": {"totalDuplications": 0, "addedLines": 0, "duplicatedAddedLines": 0,
                              "percentageDuplicated": 0}})
    );
}

#[test]
fn paths_outside_the_directory_are_skipped() {
    let review = Review::start(&[]);
    let diff = "diff --git a/../outside.js b/../outside.js\nnew file mode 100644\n--- /dev/null\n+++ b/../outside.js\n@@ -0,0 +1 @@\n+let x = 1;\n";
    let res = review.post("", diff);
    assert_eq!(res.status, 200);
    assert_json!(
        res.json()["skipped"],
        json!([{"path": "../outside.js", "reason": "outsideDirectory"}])
    );
}

#[test]
fn new_texts_over_the_file_limits_are_skipped() {
    let review = Review::start(&["--max-size", "1kb"]);
    review.write("src/big.js", "let a_value = 12345;\n".repeat(60));
    assert_json!(
        review.check()["skipped"],
        json!([{"path": "src/big.js", "reason": "tooLarge"}])
    );
}

#[test]
fn what_is_not_a_diff_and_other_bad_requests_get_json_errors() {
    let review = Review::start(&[]);
    let res = review.post("", "Fix the tests, please.\n");
    assert_eq!(res.status, 400);
    assert_json!(
        res.json(),
        error(
            "ValidationError",
            "The diff cannot be read: not a unified diff: no file header (a `diff --git` line, or `---` and `+++` lines); send what `git diff` prints",
            400
        )
    );
    let res = review.post("", "diff --git a/x.js b/x.js\n@@ -1,2 +1,2 @@\n-a\n");
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "ValidationError");
    let server = &review.server;
    assert_json!(
        server.post("/api/check-diff", "{\"patch\": \"\"}").1,
        error("ValidationError", "Missing required field: diff", 400)
    );
    assert_json!(
        server.post("/api/check-diff", "{\"diff\": 1}").1,
        error("ValidationError", "Field \"diff\" must be a string", 400)
    );
    assert_json!(
        server.post("/api/check-diff", "[]").1,
        error("ValidationError", "Request body must be a JSON object", 400)
    );
    let res = server.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "image/png")],
        b"x",
    );
    assert_eq!(res.status, 415);
    assert_json!(
        res.json(),
        error(
            "UnsupportedMediaType",
            "Content-Type \"image/png\" is not supported; send the diff as text/x-diff or text/x-patch, or application/json ({\"diff\": \"...\"})",
            415
        )
    );
    let res = server.request("GET", "/api/check-diff", &[], b"");
    assert_eq!(res.status, 405);
    assert_eq!(res.header("allow"), Some("POST"));
    let res = review.post("?output=xml", "");
    assert_eq!(res.status, 400);
    assert_json!(
        res.json(),
        error(
            "ValidationError",
            "Unknown output \"xml\"; use output=json, output=sarif or output=rdjsonl",
            400
        )
    );
}

#[test]
fn a_diff_larger_than_max_body_is_refused() {
    let review = Review::start(&["--max-body", "1kb"]);
    let res = review.post("", &"+".repeat(2000));
    assert_eq!(res.status, 413);
    assert_json!(
        res.json(),
        error(
            "PayloadTooLarge",
            "Request body is larger than the 1kb limit; send a smaller snippet or raise --max-body",
            413
        )
    );
}

/// The SARIF answer to the diff adding [`READ_TERMS`] (mild mode), after
/// `above` lines put on top of it: validated, with its one result.
fn sarif_of_read_terms(review: &Review, above: &str, accept: bool) -> Value {
    review.write("src/app/search.js", format!("{above}{READ_TERMS}"));
    let diff = review.diff(&[]);
    let res = if accept {
        review.server.request(
            "POST",
            "/api/check-diff",
            &[
                ("Content-Type", "text/x-diff"),
                ("Accept", "application/sarif+json"),
            ],
            diff.as_bytes(),
        )
    } else {
        review.post("?output=sarif", &diff)
    };
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("application/sarif+json"));
    let log = res.json();
    assert_valid(&log);
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{log}");
    results[0].clone()
}

#[test]
fn sarif_answers_validate_and_keep_their_fingerprint_when_code_moves() {
    let review = Review::start(&["--mode", "mild"]);
    let mut result = sarif_of_read_terms(&review, "", false);
    let hash = result["partialFingerprints"]["primaryLocationLineHash"]
        .as_str()
        .expect("hash")
        .to_owned();
    assert!(
        hash.len() == 18
            && hash.ends_with(":1")
            && hash[..16].bytes().all(|b| b.is_ascii_hexdigit()),
        "{hash}"
    );
    result["partialFingerprints"]["primaryLocationLineHash"] = json!("H");
    let location = |uri: &str, lines: [u32; 4]| {
        json!({
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": lines[0], "startColumn": lines[1],
                       "endLine": lines[2], "endColumn": lines[3]}
        })
    };
    assert_json!(
        result,
        json!({
            "ruleId": "duplicate-code",
            "ruleIndex": 0,
            "level": "warning",
            "message": {"text": "Duplicated code in `readTerms()`: 14 lines (128 tokens), also at [src/util/query.js:2](1). It duplicates `parseQuery()`. Renamed: readTerms → parseQuery, input → text, terms → params, rest → trimmed, part → pair, k → rawKey, v → rawValue, name → key, text → value."},
            "locations": [{"physicalLocation": location("src/app/search.js", [4, 1, 17, 2])}],
            "relatedLocations": [{
                "id": 1,
                "physicalLocation": location("src/util/query.js", [2, 8, 15, 2]),
                "message": {"text": "src/util/query.js:2"}
            }],
            "partialFingerprints": {"primaryLocationLineHash": "H"},
            "properties": {"lines": 14, "tokens": 128}
        })
    );
    // Asked by Accept, with the code three lines lower: same alert.
    let moved = sarif_of_read_terms(&review, "// 1\n// 2\n// 3\n", true);
    assert_eq!(
        moved["locations"][0]["physicalLocation"]["region"]["startLine"],
        7
    );
    assert_eq!(
        moved["partialFingerprints"]["primaryLocationLineHash"],
        json!(hash)
    );
}

#[test]
fn rdjsonl_answers_are_one_reviewdog_diagnostic_per_line() {
    let review = Review::start(&["--mode", "mild"]);
    // Columns: character 9 of its line is byte 10.
    review.write(
        "src/app/search.js",
        READ_TERMS.replace("function readTerms", "/* é */ function readTerms"),
    );
    let res = review.post("?output=rdjsonl", &review.diff(&[]));
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("application/x-ndjson"));
    let text = String::from_utf8(res.body.clone()).expect("UTF-8");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(text.ends_with('\n'));
    assert_json!(
        Value::Array(lines),
        json!([{
            "message": "Duplicated code in `readTerms()`: 14 lines (128 tokens), also at src/util/query.js:2-15. It duplicates `parseQuery()`. Renamed: readTerms → parseQuery, input → text, terms → params, rest → trimmed, part → pair, k → rawKey, v → rawValue, name → key, text → value.",
            "location": {
                "path": "src/app/search.js",
                "range": {"start": {"line": 4, "column": 10}, "end": {"line": 17, "column": 2}}
            },
            "severity": "WARNING",
            "source": {"name": "dupcheck"},
            "code": {"value": "duplicate-code"}
        }])
    );
}

#[test]
fn a_diff_too_large_to_check_is_refused_unparsed() {
    let review = Review::start(&["--max-body", "20mb"]);
    let line = "+let a_value = 12345;\n";
    let lines = 15_000_000 / line.len();
    let diff = format!(
        "diff --git a/big.js b/big.js\nnew file mode 100644\n--- /dev/null\n+++ b/big.js\n@@ -0,0 +1,{lines} @@\n{}",
        line.repeat(lines)
    );
    let res = review.post("", &diff);
    assert_eq!(res.status, 422);
    assert_json!(
        res.json(),
        error(
            "SnippetTooComplex",
            &format!("The diff is too large to check: the new texts of its files hold {} bytes, more than the 13981013 one check may parse; send a diff of fewer or smaller files", (line.len() - 1) * lines),
            422
        )
    );
}
