//! POST /api/check against the `project` fixture: exact locations, modes,
//! families, exclusions and statistics.

use crate::common;

use common::{fixture, write, Server};
use serde_json::{json, Value};

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/testdata/project/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture")
}

/// The files named by a check's duplications, in order.
fn files(body: &Value) -> Vec<&str> {
    body["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| d["codebaseLocation"]["file"].as_str().expect("file"))
        .collect()
}

const MERGE_BODY: &str = "export function merge(target, source) {\n  const result = { ...target };\n  for (const key of Object.keys(source)) {\n    const value = source[key];\n    if (value && typeof value === \"object\" && !Array.isArray(value)) {\n      result[key] = merge(result[key] || {}, value);\n    } else if (value !== undefined) {\n      result[key] = value;\n    } else {\n      delete result[key];\n    }\n  }\n  return result;\n}";

#[test]
fn strict_finds_reformatted_copies_with_exact_lines() {
    let server = Server::start("project", &[]);
    let (status, body) =
        server.check(json!({"code": read("src/util/merge.js"), "format": "javascript", "path": "src/util/merge.js"}));
    assert_eq!(status, 200);
    // Each place is the whole of `merge` (its `export` left out).
    let merge_whole = json!({"kind": "function", "name": "merge", "whole": true});
    let copy_fragment = "export function merge(target, source)\n{\n    const result = { ...target }; // shallow copy first\n    for (const key of Object.keys(source))\n    {\n        const value = source[key];\n        if (value && typeof value === \"object\" && !Array.isArray(value))\n        {\n            result[key] = merge(result[key] || {}, value);\n        }\n        else if (value !== undefined) { result[key] = value; }\n        else { delete result[key]; }\n    }\n    return result;\n}";
    assert_json!(
        body,
        json!({
            "duplications": [
                {
                    "snippetLocation": {"startLine": 2, "endLine": 15, "startColumn": 1, "endColumn": 2,
                                        "symbol": merge_whole},
                    "codebaseLocation": {"file": "src/app/merge-copy.js", "startLine": 4, "endLine": 18,
                                         "startColumn": 1, "endColumn": 2, "fragment": copy_fragment,
                                         "symbol": merge_whole},
                    "linesCount": 14,
                    "tokens": 105,
                    "format": "javascript"
                },
                {
                    "snippetLocation": {"startLine": 2, "endLine": 15, "startColumn": 1, "endColumn": 2,
                                        "symbol": merge_whole},
                    "codebaseLocation": {"file": "src/types/merge.ts", "startLine": 4, "endLine": 17,
                                         "startColumn": 1, "endColumn": 2, "fragment": MERGE_BODY,
                                         "symbol": merge_whole},
                    "linesCount": 14,
                    "tokens": 105,
                    "format": "typescript"
                }
            ],
            "statistics": {"totalDuplications": 2, "duplicatedLines": 14, "totalLines": 18, "percentageDuplicated": 77.78}
        })
    );
}

#[test]
fn without_path_the_snippet_finds_its_own_file_too() {
    let server = Server::start("project", &[]);
    let (_, body) = server.check(json!({"code": MERGE_BODY, "format": "js"}));
    assert_eq!(
        files(&body),
        [
            "src/app/merge-copy.js",
            "src/types/merge.ts",
            "src/util/merge.js"
        ]
    );
    assert_eq!(
        body["statistics"],
        json!({"totalDuplications": 3, "duplicatedLines": 14, "totalLines": 14, "percentageDuplicated": 100})
    );
}

#[test]
fn modes_decide_what_counts_as_a_copy() {
    let renamed = read("src/app/renamed.js");
    let literals = read("src/lib/literals.js");
    let path = json!("src/app/renamed.js");
    let all = [
        "src/app/merge-copy.js",
        "src/lib/literals.js",
        "src/types/merge.ts",
        "src/util/merge.js",
    ];
    let others = |own: &str| {
        all.iter()
            .copied()
            .filter(|f| *f != own)
            .collect::<Vec<_>>()
    };
    let with_renamed = |own: &str| {
        let mut v = others(own);
        v.push("src/app/renamed.js");
        v.sort();
        v
    };
    for (mode, renamed_files, literal_files, literal_tokens) in [
        ("strict", vec![], vec![], None),
        // In mild mode the changed string literal splits the match: only
        // the run after it (59 tokens, from line 6 column 38) still qualifies.
        (
            "mild",
            others(""),
            with_renamed("src/lib/literals.js"),
            Some(59),
        ),
        (
            "weak",
            others(""),
            with_renamed("src/lib/literals.js"),
            Some(104),
        ),
    ] {
        let server = Server::start("project", &["--mode", mode]);
        let (_, body) =
            server.check(json!({"code": renamed, "format": "javascript", "path": path}));
        let mut got = files(&body);
        got.sort();
        assert_eq!(got, renamed_files, "renamed.js in {mode}");
        let (_, body) = server.check(
            json!({"code": literals, "format": "javascript", "path": "src/lib/literals.js"}),
        );
        let mut got = files(&body);
        got.sort();
        assert_eq!(got, literal_files, "literals.js in {mode}");
        assert_eq!(
            body["duplications"][0]["tokens"].as_u64(),
            literal_tokens,
            "literals.js in {mode}"
        );
        if mode == "mild" {
            let first = &body["duplications"][0];
            assert_eq!(
                first["snippetLocation"],
                json!({"startLine": 6, "endLine": 15, "startColumn": 38, "endColumn": 2,
                       "symbol": {"kind": "function", "name": "overlay", "whole": false}})
            );
        }
    }
}

#[test]
fn weak_mode_matches_python_and_rust_with_exact_locations() {
    needs_formats!("python", "rust");
    let server = Server::start("project", &["--mode", "weak"]);
    let (_, body) =
        server.check(json!({"code": read("py/report.py"), "format": "PY", "path": "py/report.py"}));
    assert_json!(
        body["duplications"],
        json!([{
            "snippetLocation": {"startLine": 4, "endLine": 17, "startColumn": 1, "endColumn": 60,
                                "symbol": {"kind": "function", "name": "describe", "whole": true}},
            "codebaseLocation": {"file": "py/stats.py", "startLine": 4, "endLine": 17, "startColumn": 1, "endColumn": 75,
                                 "fragment": read("py/stats.py").split_once("\n\n\n").expect("blank lines").1.trim_end(),
                                 "symbol": {"kind": "function", "name": "summarize", "whole": true}},
            "linesCount": 14, "tokens": 89, "format": "python",
            // What the copy renamed, the snippet's name first.
            "renamed": [["describe", "summarize"], ["samples", "values"], ["digits", "precision"],
                        ["acc", "total"], ["n", "count"], ["lo", "smallest"], ["hi", "largest"],
                        ["s", "value"]]
        }])
    );
    // Rust: a pasted function matches lib.rs, nothing from other.rs.
    let code = read("rs/lib.rs");
    let function = &code[code.find("pub fn").expect("fn")..];
    let (_, body) = server.check(json!({"code": function, "format": "rs"}));
    assert_eq!(files(&body), ["rs/lib.rs"]);
    assert_eq!(body["duplications"][0]["codebaseLocation"]["startLine"], 5);
    assert_eq!(body["duplications"][0]["codebaseLocation"]["endLine"], 17);
}

#[test]
fn an_incomplete_diff_hunk_still_matches() {
    // A review bot pastes a hunk: no function head, an unclosed block.
    let hunk = "    const value = source[key];\n    if (value && typeof value === \"object\" && !Array.isArray(value)) {\n      result[key] = merge(result[key] || {}, value);\n    } else if (value !== undefined) {\n      result[key] = value;\n    } else {\n      delete result[key];\n    }\n  }\n  return result;\n";
    let server = Server::start("project", &["--min-tokens", "30"]);
    let (_, body) =
        server.check(json!({"code": hunk, "format": "javascript", "path": "src/app/new.js"}));
    assert_eq!(
        files(&body),
        [
            "src/app/merge-copy.js",
            "src/types/merge.ts",
            "src/util/merge.js"
        ]
    );
    assert_eq!(body["duplications"][2]["codebaseLocation"]["startLine"], 5);
    assert_eq!(body["duplications"][2]["codebaseLocation"]["endLine"], 14);
    assert_eq!(
        body["duplications"][2]["snippetLocation"],
        json!({"startLine": 1, "endLine": 10, "startColumn": 5, "endColumn": 17})
    );
}

#[test]
fn every_location_of_repeated_code_is_reported() {
    let temp = fixture("project");
    for n in 1..=3 {
        write(temp.path(), &format!("copies/c{n}.js"), MERGE_BODY);
    }
    let server = Server::start_in(temp, &[]);
    let (_, body) =
        server.check(json!({"code": MERGE_BODY, "format": "javascript", "path": "copies/c1.js"}));
    assert_eq!(
        files(&body),
        [
            "copies/c2.js",
            "copies/c3.js",
            "src/app/merge-copy.js",
            "src/types/merge.ts",
            "src/util/merge.js"
        ]
    );
}

#[test]
fn skip_local_drops_matches_in_the_snippets_folder() {
    let temp = fixture("project");
    write(temp.path(), "src/types/merge2.ts", MERGE_BODY);
    let server = Server::start_in(temp, &["--skipLocal"]);
    let (_, body) =
        server.check(json!({"code": MERGE_BODY, "format": "ts", "path": "src/types/merge.ts"}));
    assert_eq!(files(&body), ["src/app/merge-copy.js", "src/util/merge.js"]);
    // Without a path, skipLocal has no folder to apply.
    let (_, body) = server.check(json!({"code": MERGE_BODY, "format": "ts"}));
    assert_eq!(files(&body).len(), 4);
}

#[test]
fn format_may_come_from_the_path() {
    let server = Server::start("project", &[]);
    let (status, body) = server.check(json!({"code": MERGE_BODY, "path": "src/util/merge.js"}));
    assert_eq!(status, 200);
    assert_eq!(
        files(&body),
        ["src/app/merge-copy.js", "src/types/merge.ts"]
    );
}

#[test]
fn a_known_format_that_is_not_scanned_answers_empty() {
    let server = Server::start("project", &["--format", "python"]);
    let (status, body) = server.check(json!({"code": MERGE_BODY, "format": "javascript"}));
    assert_eq!(status, 200);
    assert_json!(
        body,
        json!({"duplications": [], "statistics": {"totalDuplications": 0, "duplicatedLines": 0, "totalLines": 14, "percentageDuplicated": 0}})
    );
}

#[test]
fn form_bodies_are_accepted_like_jscpd_server() {
    let server = Server::start("project", &[]);
    let body: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("code", MERGE_BODY)
        .append_pair("format", "javascript")
        .finish();
    let res = server.request(
        "POST",
        "/api/check",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        body.as_bytes(),
    );
    assert_eq!(res.status, 200);
    assert_eq!(files(&res.json()).len(), 3);
    // And a JSON body with no Content-Type at all.
    let json_body = json!({"code": MERGE_BODY, "format": "javascript"}).to_string();
    let res = server.request("POST", "/api/check", &[], json_body.as_bytes());
    assert_eq!(
        (res.status, res.header("content-type")),
        (200, Some("application/json; charset=utf-8"))
    );
}

#[test]
fn recheck_sees_new_files() {
    let server = Server::start("project", &[]);
    let (_, body) = server.check(json!({"code": MERGE_BODY, "format": "javascript"}));
    assert_eq!(files(&body).len(), 3);
    write(&server.dir, "later/again.js", MERGE_BODY);
    let (_, body) =
        server.check(json!({"code": MERGE_BODY, "format": "javascript", "recheck": true}));
    assert_eq!(
        files(&body),
        [
            "later/again.js",
            "src/app/merge-copy.js",
            "src/types/merge.ts",
            "src/util/merge.js"
        ]
    );
}

#[test]
fn an_editors_successive_buffers_get_the_answers_of_fresh_checks() {
    // With a `path`, each check reparses and rewalks only what changed since
    // the last check of that path; the answers must not show it. The edits
    // fall after the buffer's first lines, which choose how it is parsed.
    let server = Server::start("project", &[]);
    let head: String = (0..30)
        .map(|i| format!("let unrelated{i} = {i};\n"))
        .collect();
    let original = format!("{head}{}", read("src/util/merge.js"));
    let versions = [
        original.clone(),
        original.replacen("export function", "\nexport function", 1),
        original.replace("result[key] = value;", "result[key] = value + 1;"),
        original.replace("  return result;\n", ""),
        original.clone(),
    ];
    let mut answers = Vec::new();
    for code in &versions {
        let (status, edited) = server
            .check(json!({"code": code, "format": "javascript", "path": "src/app/editing.js"}));
        assert_eq!(status, 200);
        let (_, fresh) = server.check(json!({"code": code, "format": "javascript"}));
        assert_eq!(edited, fresh);
        answers.push(edited);
    }
    // merge-copy.js's run no longer starts at its import's `;` (which
    // matched the `;` ending line 30): all three start on line 31, the
    // longer first.
    assert_eq!(
        files(&answers[0]),
        [
            "src/types/merge.ts",
            "src/util/merge.js",
            "src/app/merge-copy.js"
        ]
    );
    // The blank line inserted before the function moves the copy's end.
    let end_line =
        |answer: &Value| answer["duplications"][0]["snippetLocation"]["endLine"].as_u64();
    assert_eq!(end_line(&answers[0]), Some(45));
    assert_eq!(end_line(&answers[1]), Some(46));
    assert_ne!(answers[2], answers[0]);
    assert_eq!(answers[4], answers[0]);
}

/// The SARIF answer to a check of `body`, validated.
fn sarif_of(server: &Server, body: Value) -> Value {
    let res = server.request(
        "POST",
        "/api/check?output=sarif",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    );
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("application/sarif+json"));
    let log = res.json();
    common::sarif_schema::assert_valid(&log);
    log
}

#[test]
fn sarif_answers_give_one_result_per_place_of_the_snippet() {
    let server = Server::start("project", &[]);
    let code = read("src/util/merge.js");
    let mut log = sarif_of(
        &server,
        json!({"code": code, "format": "javascript", "path": "src/util/merge.js"}),
    );
    let results = log["runs"][0]["results"].as_array_mut().expect("results");
    assert_eq!(results.len(), 1);
    let hash = &mut results[0]["partialFingerprints"]["primaryLocationLineHash"];
    assert!(hash.as_str().is_some_and(|h| h.ends_with(":1")), "{hash}");
    *hash = json!("H");
    let location = |uri: &str, start: u32, end: u32| {
        json!({
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": start, "startColumn": 1, "endLine": end, "endColumn": 2}
        })
    };
    assert_json!(
        results[0],
        json!({
            "ruleId": "duplicate-code",
            "ruleIndex": 0,
            "level": "warning",
            "message": {"text": "Duplicated code in `merge()`: 14 lines (105 tokens), also at [src/app/merge-copy.js:4](1) and [src/types/merge.ts:4](2)."},
            "locations": [{"physicalLocation": location("src/util/merge.js", 2, 15)}],
            "relatedLocations": [
                {"id": 1, "physicalLocation": location("src/app/merge-copy.js", 4, 18),
                 "message": {"text": "src/app/merge-copy.js:4"}},
                {"id": 2, "physicalLocation": location("src/types/merge.ts", 4, 17),
                 "message": {"text": "src/types/merge.ts:4"}}
            ],
            "partialFingerprints": {"primaryLocationLineHash": "H"},
            "properties": {"lines": 14, "tokens": 105}
        })
    );
    assert!(log["runs"][0].get("artifacts").is_none());
}

#[test]
fn without_a_path_the_snippet_is_the_sarif_logs_artifact() {
    let server = Server::start("project", &[]);
    let log = sarif_of(&server, json!({"code": MERGE_BODY, "format": "js"}));
    let run = &log["runs"][0];
    assert_json!(
        run["artifacts"],
        json!([{
            "description": {"text": "The snippet checked (sent without a path)"},
            "contents": {"text": MERGE_BODY},
            "sourceLanguage": "javascript"
        }])
    );
    let result = &run["results"][0];
    assert_json!(
        result["locations"][0]["physicalLocation"],
        json!({
            "artifactLocation": {"index": 0},
            "region": {"startLine": 1, "startColumn": 1, "endLine": 14, "endColumn": 2}
        })
    );
    assert_eq!(result["relatedLocations"].as_array().map(Vec::len), Some(3));
    // reviewdog's lines have no path for it; JSON stays the default.
    let res = server.request(
        "POST",
        "/api/check?output=rdjsonl",
        &[],
        json!({"code": MERGE_BODY, "format": "js"})
            .to_string()
            .as_bytes(),
    );
    let line: Value = serde_json::from_slice(&res.body).expect("one JSON line");
    assert_json!(
        line["location"],
        json!({"range": {"start": {"line": 1, "column": 1}, "end": {"line": 14, "column": 2}}})
    );
    assert_eq!(
        line["message"],
        "Duplicated code in `merge()`: 14 lines (105 tokens), also at src/app/merge-copy.js:4-18, src/types/merge.ts:4-17 and src/util/merge.js:2-15."
    );
    let (_, plain) = server.check(json!({"code": MERGE_BODY, "format": "js"}));
    let res = server.request(
        "POST",
        "/api/check?output=json",
        &[("Accept", "application/json")],
        json!({"code": MERGE_BODY, "format": "js"})
            .to_string()
            .as_bytes(),
    );
    assert_json!(res.json(), plain);
}
