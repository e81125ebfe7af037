//! GET /api/clones: the project's clones, largest first, filtered and paged.

use crate::common;

use common::{error, write, Server};
use serde_json::{json, Value};

/// The fixture's three clones, largest first, found with `--min-tokens 20`:
/// each place the whole of a function (`export` left out or not).
fn place(file: &str, lines: (u32, u32), columns: (u32, u32), function: &str) -> Value {
    json!({"file": file, "startLine": lines.0, "endLine": lines.1,
           "startColumn": columns.0, "endColumn": columns.1,
           "symbol": {"kind": "function", "name": function, "whole": true}})
}

fn merge() -> Value {
    json!({"id": "342c0547dd953337", "format": "javascript", "tokens": 122, "lines": 16,
           "first": place("lib/vendor.js", (3, 18), (1, 2), "merge"),
           "second": place("src/merge.js", (2, 17), (8, 2), "merge")})
}

fn summarize() -> Value {
    json!({"id": "a68f56ada7e2195e", "format": "python", "tokens": 71, "lines": 11,
           "first": place("src/stats.py", (1, 11), (1, 78), "summarize"),
           "second": place("tools/report.py", (4, 14), (1, 78), "summarize")})
}

fn clamp() -> Value {
    json!({"id": "b4d21c4f03f752aa", "format": "javascript", "tokens": 37, "lines": 9,
           "first": place("lib/range.js", (1, 9), (1, 2), "clamp"),
           "second": place("src/merge.js", (19, 27), (1, 2), "clamp")})
}

fn start() -> Server {
    Server::start("clones", &["--min-tokens", "20", "--no-cache"])
}

#[test]
fn lists_every_clone_largest_first_with_exact_places() {
    let server = start();
    let (status, body) = server.get("/api/clones");
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"clones": [merge(), summarize(), clamp()], "total": 3, "nextCursor": null})
    );
    // The list is what /api/stats counts.
    let (_, stats) = server.get("/api/stats");
    assert_eq!(stats["statistics"]["total"]["clones"], 3);
}

#[test]
fn pages_follow_the_cursor_without_repeats_or_gaps() {
    let server = start();
    let mut listed = Vec::new();
    let mut path = "/api/clones?limit=1".to_owned();
    loop {
        let (status, body) = server.get(&path);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["total"], 3);
        let clones = body["clones"].as_array().expect("clones");
        assert_eq!(clones.len(), 1, "{body}");
        listed.push(clones[0].clone());
        match &body["nextCursor"] {
            Value::String(cursor) => path = format!("/api/clones?limit=1&cursor={cursor}"),
            Value::Null => break,
            other => panic!("nextCursor {other}"),
        }
    }
    assert_eq!(listed, [merge(), summarize(), clamp()]);

    let (_, two) = server.get("/api/clones?limit=2");
    assert_eq!(two["clones"], json!([merge(), summarize()]));
    let cursor = two["nextCursor"].as_str().expect("a cursor");
    let (_, rest) = server.get(&format!("/api/clones?limit=2&cursor={cursor}"));
    assert_eq!(
        rest,
        json!({"clones": [clamp()], "total": 3, "nextCursor": null})
    );
}

#[test]
fn a_cursor_stays_meaningful_after_the_index_changes() {
    let server = start();
    let (_, first) = server.get("/api/clones?limit=1");
    let cursor = first["nextCursor"].as_str().expect("a cursor").to_owned();
    // A new, larger clone appears before the cursor: the next page goes on
    // after the clone already seen, not at a shifted offset.
    let big = std::fs::read_to_string(server.dir.join("src/merge.js")).expect("read");
    write(&server.dir, "copy/merge.js", &big);
    let (status, _) = server.post("/api/recheck", "");
    assert_eq!(status, 200);
    let (_, next) = server.get(&format!("/api/clones?limit=1&cursor={cursor}"));
    assert_eq!(next["clones"][0]["format"], "python", "{next}");
    assert_eq!(next["clones"][0]["id"], summarize()["id"]);
}

#[test]
fn filters_by_path_format_and_size() {
    let server = start();
    let ids = |query: &str| -> (Vec<String>, Value) {
        let (status, body) = server.get(&format!("/api/clones?{query}"));
        assert_eq!(status, 200, "{query}: {body}");
        let ids = body["clones"]
            .as_array()
            .expect("clones")
            .iter()
            .map(|c| c["id"].as_str().expect("id").to_owned())
            .collect();
        (ids, body["total"].clone())
    };
    let (merge, summarize, clamp) = (merge(), summarize(), clamp());
    let id = |c: &Value| c["id"].as_str().expect("id").to_owned();
    // A folder names clones with a place in it, on either side.
    assert_eq!(ids("path=lib"), (vec![id(&merge), id(&clamp)], json!(2)));
    assert_eq!(ids("path=lib/"), (vec![id(&merge), id(&clamp)], json!(2)));
    assert_eq!(ids("path=./tools/"), (vec![id(&summarize)], json!(1)));
    // A file, also as an absolute path inside DIR.
    assert_eq!(ids("path=lib/range.js"), (vec![id(&clamp)], json!(1)));
    let absolute = server.dir.join("lib/range.js");
    let absolute = absolute.to_str().expect("utf-8 path");
    assert_eq!(
        ids(&format!("path={absolute}")),
        (vec![id(&clamp)], json!(1))
    );
    // A prefix of a name is not a folder.
    assert_eq!(ids("path=li"), (vec![], json!(0)));
    // Formats by name, alias or extension.
    assert_eq!(ids("format=py"), (vec![id(&summarize)], json!(1)));
    assert_eq!(ids("format=javascript&path=src/merge.js").1, json!(2));
    assert_eq!(
        ids("minTokens=71"),
        (vec![id(&merge), id(&summarize)], json!(2))
    );
    assert_eq!(ids("minTokens=123").1, json!(0));
}

#[test]
fn fragments_are_the_text_of_each_place() {
    let server = start();
    let (_, body) = server.get("/api/clones?format=python&fragments=true");
    let clone = &body["clones"][0];
    let function = "def summarize(rows):\n    total = 0\n    count = 0\n    largest = None\n    for row in rows:\n        total += row.amount\n        count += 1\n        if largest is None or row.amount > largest.amount:\n            largest = row\n    mean = total / count if count else 0\n    return {\"total\": total, \"count\": count, \"mean\": mean, \"largest\": largest}";
    assert_eq!(clone["first"]["fragment"], function);
    assert_eq!(clone["second"]["fragment"], function);
    let (_, without) = server.get("/api/clones?format=python&fragments=false");
    assert_eq!(without["clones"][0], summarize());
}

#[test]
fn bad_parameters_are_clear_errors() {
    let server = start();
    let cases = [
        ("limit=0", "Field \"limit\" must be a whole number from 1 to 1000"),
        ("limit=1001", "Field \"limit\" must be a whole number from 1 to 1000"),
        ("limit=ten", "Field \"limit\" must be a whole number from 1 to 1000"),
        ("minTokens=-1", "Field \"minTokens\" must be a whole number from 0 to 4294967295"),
        ("fragments=yes", "Field \"fragments\" must be true or false"),
        ("cursor=abc", "Field \"cursor\" is not a cursor of this server: send back the nextCursor of the previous page"),
        ("limit=1&limit=2", "Parameter \"limit\" is given twice"),
        ("sort=lines", "Unknown parameter \"sort\"; the clone list takes path, format, minTokens, limit, cursor, fragments"),
    ];
    for (query, message) in cases {
        let (status, body) = server.get(&format!("/api/clones?{query}"));
        assert_eq!(
            (status, body),
            (400, error("ValidationError", message, 400)),
            "{query}"
        );
    }
    let (status, body) = server.get("/api/clones?format=cobol");
    assert_eq!(status, 400);
    assert_eq!(body["error"], "UnsupportedFormat");
    let (status, body) = server.post("/api/clones", "");
    assert_eq!(status, 405, "{body}");
}

#[test]
fn trailing_slashes_are_the_same_routes() {
    let server = start();
    let (status, body) = server.get("/api/clones/?limit=1");
    assert_eq!((status, &body["total"]), (200, &json!(3)));
    let (status, body) = server.get("/api/health/");
    assert_eq!((status, &body["status"]), (200, &json!("ready")));
}
