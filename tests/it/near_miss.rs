//! Near-miss copies (issue 12, section 1): a copied function with a line
//! inserted, one deleted and two variables renamed is one duplication of
//! the whole function, with its similarity and gaps, unless the check says
//! `"nearMiss": false` or the server runs with `--no-near-miss`; never in a
//! mode that tells the renamed variables apart.

use crate::common;

use common::{error, Server};
use serde_json::{json, Value};

/// `testdata/near_miss/src/orders.js` copied, renamed (`orders` → `list`,
/// `taxRate` → `rate`), a log line inserted (line 7) and the `average`
/// line (12 of the original) dropped.
const EDITED: &str = r#"function summarize(list, rate) {
  const totals = { count: 0, net: 0, tax: 0 };
  for (const order of list) {
    if (order.status === "cancelled") {
      continue;
    }
    console.log("order", order.id);
    const net = order.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
    totals.count += 1;
    totals.net += net;
    totals.tax += net * rate;
  }
  return totals;
}
"#;

fn check(server: &Server, extra: Value) -> (u16, Value) {
    let mut body = json!({"code": EDITED, "format": "javascript"});
    for (key, value) in extra.as_object().expect("object") {
        body[key] = value.clone();
    }
    server.check(body)
}

/// The duplications without their fragments.
fn places(answer: &Value) -> Vec<Value> {
    answer["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            let mut d = d.clone();
            d["codebaseLocation"]
                .as_object_mut()
                .expect("location")
                .remove("fragment");
            d
        })
        .collect()
}

fn whole_function() -> Value {
    json!({
        "snippetLocation": {"startLine": 1, "endLine": 14, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "summarize", "whole": true}},
        "codebaseLocation": {"file": "src/orders.js", "startLine": 1, "endLine": 14, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "summarizeOrders", "whole": true}},
        "linesCount": 14,
        "tokens": 98,
        "format": "javascript",
        "similarity": 0.871,
        "gaps": [
            {"snippet": {"startLine": 7, "endLine": 7}, "codebase": null},
            {"snippet": null, "codebase": {"startLine": 12, "endLine": 12}}
        ],
        // The snippet's names first.
        "renamed": [["summarize", "summarizeOrders"], ["list", "orders"], ["rate", "taxRate"]]
    })
}

#[test]
fn an_edited_copy_is_one_duplication_of_the_whole_function() {
    let server = Server::start("near_miss", &["--mode", "mild"]);
    for extra in [
        json!({}),
        json!({"nearMiss": true}),
        json!({"nearMiss": null}),
    ] {
        let (status, answer) = check(&server, extra.clone());
        assert_eq!(status, 200, "{answer}");
        assert_eq!(places(&answer), [whole_function()], "{extra}");
    }
    let (_, answer) = check(&server, json!({}));
    let fragment = answer["duplications"][0]["codebaseLocation"]["fragment"]
        .as_str()
        .expect("fragment");
    let original = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/near_miss/src/orders.js"),
    )
    .expect("fixture");
    assert_eq!(fragment, original.trim_end());
    // "nearMiss": false: only exact parts of min-tokens (none here: each
    // part is under 50 tokens).
    let (status, answer) = check(&server, json!({"nearMiss": false}));
    assert_eq!(status, 200);
    assert_eq!(places(&answer), Vec::<Value>::new());
    // Strict mode tells the renamed variables apart: no chain crosses them.
    let (_, answer) = check(&server, json!({"mode": "strict"}));
    assert_eq!(places(&answer), Vec::<Value>::new());
    // A form says it as text.
    for (near_miss, expected) in [("true", vec![whole_function()]), ("false", vec![])] {
        let form = format!(
            "format=js&nearMiss={near_miss}&code={}",
            form_urlencoded::byte_serialize(EDITED.as_bytes()).collect::<String>()
        );
        let response = server.request(
            "POST",
            "/api/check",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            form.as_bytes(),
        );
        assert_eq!(response.status, 200);
        assert_eq!(places(&response.json()), expected, "{near_miss}");
    }
}

#[test]
fn no_near_miss_option_similarity_and_bad_fields() {
    let server = Server::start("near_miss", &["--mode", "mild", "--no-near-miss"]);
    let (_, answer) = check(&server, json!({}));
    assert_eq!(places(&answer), Vec::<Value>::new());
    let (_, answer) = check(&server, json!({"nearMiss": true}));
    assert_eq!(places(&answer), [whole_function()]);
    let (status, answer) = check(&server, json!({"nearMiss": "yes"}));
    assert_eq!(status, 400);
    assert_eq!(
        answer,
        error(
            "ValidationError",
            "Field \"nearMiss\" must be a boolean",
            400
        )
    );
    // A similarity above this copy's (0.871) is not met.
    let strict = Server::start("near_miss", &["--mode", "mild", "--similarity", "0.9"]);
    let (_, answer) = check(&strict, json!({}));
    assert_eq!(places(&answer), Vec::<Value>::new());
    // Nor is it in .dupcheck.json.
    let dir = common::fixture("near_miss");
    common::write(
        dir.path(),
        ".dupcheck.json",
        r#"{"mode": "mild", "similarity": 0.9}"#,
    );
    let from_file = Server::start_in(dir, &[]);
    let (_, answer) = check(&from_file, json!({}));
    assert_eq!(places(&answer), Vec::<Value>::new());
}

/// `testdata/near_miss/src/retry.js` (52 tokens) with a log line inserted
/// (line 7): under min-tokens once the line is taken off, so found only
/// because a short inserted statement is free, which it is not in weak
/// mode.
const LOGGED: &str = r#"function retry(task, attempts) {
  let failure = null;
  for (let i = 0; i < attempts; i++) {
    try {
      return task(i);
    } catch (error) {
      console.log("retry", i);
      failure = error;
    }
  }
  throw failure;
}
"#;

#[test]
fn a_short_function_with_a_line_inserted_is_found_but_in_weak_mode() {
    let server = Server::start("near_miss", &["--mode", "mild"]);
    let found = |gap_end: u32| {
        let mut found = json!({
            "snippetLocation": {"startLine": 1, "endLine": 12, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "retry", "whole": true}},
            "codebaseLocation": {"file": "src/retry.js", "startLine": 1, "endLine": 11, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "retry", "whole": true}},
            "linesCount": 12,
            "tokens": 52,
            "format": "javascript",
            "similarity": 0.92,
            "gaps": [{"snippet": {"startLine": 7, "endLine": gap_end}, "codebase": null}]
        });
        if gap_end == 8 {
            found["renamed"] = json!([["console", "failure"]]);
        }
        vec![found]
    };
    for (mode, expected) in [
        ("strict", found(7)),
        // In mild mode `console` and `failure` are both `$id`: the part
        // before the line takes `console` for `failure` (so it says it
        // renamed one to the other), and the gap ends on line 8, at
        // `failure`.
        ("mild", found(8)),
        ("weak", Vec::new()),
    ] {
        let (status, answer) = server.check(json!({"code": LOGGED, "format": "js", "mode": mode}));
        assert_eq!(status, 200, "{answer}");
        assert_eq!(places(&answer), expected, "{mode}");
    }
}

/// The fixture with the edited copy saved beside its original.
fn project_with_the_copy() -> tempfile::TempDir {
    let dir = common::fixture("near_miss");
    common::write(dir.path(), "src/summary.js", EDITED);
    dir
}

#[test]
fn whole_project_clones_find_the_edited_copy_whole() {
    let server = Server::start_in(project_with_the_copy(), &["--mode", "mild"]);
    let (status, page) = server.get("/api/clones");
    assert_eq!(status, 200, "{page}");
    let clones = page["clones"].as_array().expect("clones");
    assert_eq!(clones.len(), 1, "{page}");
    let mut clone = clones[0].clone();
    let id = clone
        .as_object_mut()
        .expect("clone")
        .remove("id")
        .expect("id");
    assert_eq!(
        clone,
        json!({
            "format": "javascript",
            "tokens": 98,
            "lines": 14,
            "first": {"file": "src/orders.js", "startLine": 1, "endLine": 14, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "summarizeOrders", "whole": true}},
            "second": {"file": "src/summary.js", "startLine": 1, "endLine": 14, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "summarize", "whole": true}},
            "similarity": 0.871,
            "gaps": [
                {"first": null, "second": {"startLine": 7, "endLine": 7}},
                {"first": {"startLine": 12, "endLine": 12}, "second": null}
            ],
            "renamed": [["summarizeOrders", "summarize"], ["orders", "list"], ["taxRate", "rate"]]
        })
    );
    // The side-by-side view marks the matched tokens only, pair by pair.
    let id = id.as_str().expect("id");
    let (status, detail) = server.get(&format!("/api/clone?id={id}"));
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["tokensListed"], 98);
    assert_eq!(detail["similarity"], 0.871);
    assert_eq!(detail["gaps"], clone["gaps"]);
    for side in ["first", "second"] {
        let tokens = detail[side]["tokens"].as_array().expect("tokens");
        assert_eq!(tokens.len(), 98);
        // No token of a gap line: line 12 of the original, 7 of the copy.
        let gap_line = if side == "first" { 12 } else { 7 };
        assert!(tokens.iter().all(|t| t[0] != gap_line), "{side}");
    }
    // `orders` → `list`, `taxRate` → `rate`: 3 and 2 places.
    assert_eq!(detail["differing"].as_array().expect("differing").len(), 5);
    assert_eq!(detail["renamed"], clone["renamed"]);
    // The statistics count it, the gap lines included in each place.
    let (_, stats) = server.get("/api/stats");
    let total = &stats["statistics"]["total"];
    assert_eq!(
        (total["clones"].clone(), total["duplicatedLines"].clone()),
        (json!(1), json!(28))
    );
}

#[test]
fn whole_project_clones_without_near_miss_or_in_strict_mode_are_none() {
    for args in [
        &["--mode", "mild", "--no-near-miss"][..],
        &["--mode", "strict"][..],
    ] {
        let server = Server::start_in(project_with_the_copy(), args);
        let (status, page) = server.get("/api/clones");
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["clones"], json!([]), "{args:?}");
        assert_eq!(page["total"], 0, "{args:?}");
    }
}

#[test]
fn the_report_lists_the_edited_copy_with_its_similarity() {
    let dir = project_with_the_copy();
    let out = std::process::Command::new(common::BIN)
        .args([
            "report",
            "--mode",
            "mild",
            "--no-cache",
            "--reporter",
            "json",
        ])
        .current_dir(dir.path())
        .output()
        .expect("run dupcheck report");
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let clones = report["clones"].as_array().expect("clones");
    assert_eq!(clones.len(), 1, "{report}");
    assert_eq!(clones[0]["similarity"], 0.871);
    assert_eq!(clones[0]["tokens"], 98);
    let place = |path: &str, function: &str| {
        json!({"path": path, "start": {"line": 1, "column": 1}, "end": {"line": 14, "column": 2},
               "symbol": {"kind": "function", "name": function, "whole": true}})
    };
    assert_eq!(
        clones[0]["first"],
        place("src/orders.js", "summarizeOrders")
    );
    assert_eq!(clones[0]["second"], place("src/summary.js", "summarize"));
}

/// `testdata/near_miss/src/orders.js`'s function copied between two
/// others, its last statement (`return totals;`) deleted.
const LAST_STATEMENT_DELETED: &str = r#"function describe(order) {
  return `${order.id}: ${order.status}`;
}

function summarizeOrders(orders, taxRate) {
  const totals = { count: 0, net: 0, tax: 0 };
  for (const order of orders) {
    if (order.status === "cancelled") {
      continue;
    }
    const net = order.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
    totals.count += 1;
    totals.net += net;
    totals.tax += net * taxRate;
  }
  totals.average = totals.count ? totals.net / totals.count : 0;
}

function shipping(order) {
  const weight = order.items.length * 2;
  return weight > 10 ? 15 : 5;
}
"#;

/// Every clone of `/api/clones`, page by page.
fn every_clone(server: &Server) -> Vec<Value> {
    let (mut clones, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/api/clones?limit=1&cursor={cursor}"),
            None => "/api/clones?limit=1".to_owned(),
        };
        let (status, page) = server.get(&path);
        assert_eq!(status, 200, "{page}");
        clones.extend(page["clones"].as_array().expect("clones").iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return clones,
        }
    }
}

#[test]
fn a_copy_whose_last_statement_was_deleted_ends_at_its_end_as_a_check_finds_it() {
    for mode in ["strict", "mild"] {
        let dir = common::fixture("near_miss");
        common::write(dir.path(), "src/late.js", LAST_STATEMENT_DELETED);
        let server = Server::start_in(dir, &["--mode", mode]);
        let clones = every_clone(&server);
        let without_id: Vec<Value> = (clones.iter())
            .map(|c| {
                let mut c = c.clone();
                c.as_object_mut().expect("clone").remove("id");
                c
            })
            .collect();
        assert_eq!(
            without_id,
            [json!({
                "format": "javascript",
                "tokens": 113,
                "lines": 14,
                "first": {"file": "src/late.js", "startLine": 5, "endLine": 17, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "summarizeOrders", "whole": true}},
                "second": {"file": "src/orders.js", "startLine": 1, "endLine": 14, "startColumn": 1, "endColumn": 2, "symbol": {"kind": "function", "name": "summarizeOrders", "whole": true}},
                "similarity": 0.974,
                "gaps": [{"first": null, "second": {"startLine": 13, "endLine": 13}}]
            })],
            "{mode}"
        );
        // A check of the copied function finds the same two ends.
        let function: String = LAST_STATEMENT_DELETED
            .lines()
            .skip(4)
            .take(13)
            .collect::<Vec<_>>()
            .join("\n");
        let (status, answer) = server.check(json!({"code": function, "format": "javascript"}));
        assert_eq!(status, 200, "{answer}");
        let found = &places(&answer)[0]["codebaseLocation"];
        assert_eq!(
            (
                found["file"].clone(),
                found["startLine"].clone(),
                found["endLine"].clone()
            ),
            (json!("src/orders.js"), json!(1), json!(14)),
            "{mode}"
        );
        // One entry a clone, and the statistics count the list.
        let (_, stats) = server.get("/api/stats");
        assert_eq!(
            stats["statistics"]["total"]["clones"],
            clones.len(),
            "{mode}"
        );
    }
}

/// Every id in the clone list is unique and the statistics count the list,
/// in every fixture with clones and every mode.
#[test]
fn clone_ids_are_unique_and_counted_once() {
    for fixture in ["project", "near_miss", "clones", "stats"] {
        for mode in ["strict", "mild", "weak"] {
            let server = Server::start(fixture, &["--mode", mode]);
            let clones = every_clone(&server);
            let mut ids: Vec<&str> = (clones.iter())
                .map(|c| c["id"].as_str().expect("id"))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), clones.len(), "{fixture} {mode}");
            let (_, stats) = server.get("/api/stats");
            assert_eq!(
                stats["statistics"]["total"]["clones"],
                clones.len(),
                "{fixture} {mode}"
            );
        }
    }
}

/// `dupcheck report` with `reporter` on the fixture with the copy whose
/// last statement was deleted: its output (the report file's text when it
/// writes one to `--output`).
fn report_of_the_late_copy(reporter: &str) -> String {
    let dir = common::fixture("near_miss");
    common::write(dir.path(), "src/late.js", LAST_STATEMENT_DELETED);
    let out = tempfile::tempdir().expect("temp");
    let run = std::process::Command::new(common::BIN)
        .args([
            "report",
            "--mode",
            "mild",
            "--no-cache",
            "--reporter",
            reporter,
        ])
        .arg("--output")
        .arg(out.path())
        .current_dir(dir.path())
        .output()
        .expect("run dupcheck report");
    let written = std::fs::read_dir(out.path()).expect("output").next();
    match written {
        Some(file) => std::fs::read_to_string(file.expect("entry").path()).expect("report"),
        None => String::from_utf8(run.stdout).expect("utf-8"),
    }
}

#[test]
fn console_markdown_and_sarif_reports_say_how_similar_a_near_miss_copy_is() {
    let console = report_of_the_late_copy("console");
    assert_eq!(
        console.lines().take(2).collect::<Vec<_>>(),
        [
            "lines  tokens  format      first             second              similarity",
            "   14     113  javascript  src/late.js:5-17  src/orders.js:1-14  97.4%",
        ],
        "{console}"
    );
    let markdown = report_of_the_late_copy("markdown");
    assert!(
        markdown.contains(
            "| Lines | Tokens | Format | First | Second | Similarity |\n\
             |---:|---:|---|---|---|---:|\n\
             | 14 | 113 | javascript | `src/late.js:5-17` | `src/orders.js:1-14` | 97.4% |\n"
        ),
        "{markdown}"
    );
    let sarif: Value = serde_json::from_str(&report_of_the_late_copy("sarif")).expect("SARIF");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(
        result["message"]["text"],
        "Near-miss copy in `summarizeOrders()` (97.4% similar): 13 lines (113 tokens matched), also at [src/orders.js:1](1). It duplicates `summarizeOrders()`."
    );
    assert_eq!(
        result["properties"],
        json!({"lines": 13, "tokens": 113, "similarity": 0.974})
    );
}

#[test]
fn reports_say_what_a_renamed_copy_renamed() {
    let dir = project_with_the_copy();
    let report = |reporter: &str| {
        let out = std::process::Command::new(common::BIN)
            .args([
                "report",
                "--mode",
                "mild",
                "--no-cache",
                "--reporter",
                reporter,
            ])
            .current_dir(dir.path())
            .output()
            .expect("run dupcheck report");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let console = report("console");
    assert_eq!(
        console.lines().take(4).collect::<Vec<_>>(),
        [
            "lines  tokens  format      first               second               similarity",
            "   14      98  javascript  src/orders.js:1-14  src/summary.js:1-14  87.1%",
            "                           in `summarizeOrders()` and `summarize()`",
            "                           renamed: summarizeOrders → summarize, orders → list, taxRate → rate",
        ],
        "{console}"
    );
    let json: Value = serde_json::from_str(&report("json")).expect("JSON");
    assert_eq!(
        json["clones"][0]["renamed"],
        json!([
            ["summarizeOrders", "summarize"],
            ["orders", "list"],
            ["taxRate", "rate"]
        ])
    );
}
