//! GET /api/stats, /api/health and /, and POST /api/recheck.

use crate::common;

use common::{write, Server};
use serde_json::{json, Value};

#[allow(clippy::too_many_arguments)]
fn row(
    lines: u64,
    tokens: u64,
    sources: u64,
    clones: u64,
    dup_lines: u64,
    dup_tokens: u64,
    pct: Value,
    pct_tokens: Value,
) -> Value {
    json!({"lines": lines, "tokens": tokens, "sources": sources, "clones": clones,
           "duplicatedLines": dup_lines, "duplicatedTokens": dup_tokens,
           "percentage": pct, "percentageTokens": pct_tokens,
           "newDuplicatedLines": 0, "newClones": 0})
}

fn is_iso8601_millis(v: &Value) -> bool {
    let s = v.as_str().unwrap_or("");
    s.len() == 24 && s.ends_with('Z') && s.as_bytes()[10] == b'T' && s.as_bytes()[19] == b'.'
}

#[test]
fn stats_rows_per_file_format_and_total() {
    let server = Server::start("stats", &[]);
    let (status, mut body) = server.get("/api/stats");
    assert_eq!(status, 200);
    assert!(is_iso8601_millis(&body["timestamp"]), "{body}");
    assert!(
        is_iso8601_millis(&body["statistics"]["detectionDate"]),
        "{body}"
    );
    body["timestamp"] = json!("T");
    body["statistics"]["detectionDate"] = json!("D");
    assert_json!(
        body,
        json!({
            "statistics": {
                "detectionDate": "D",
                "formats": {
                    "javascript": {
                        "sources": {
                            "b.js": row(10, 83, 1, 1, 8, 61, json!(80), json!(73.49)),
                            "lib/a.js": row(8, 61, 1, 1, 8, 61, json!(100), json!(100)),
                        },
                        "total": row(18, 144, 2, 1, 16, 122, json!(88.89), json!(84.72)),
                    },
                    "python": {
                        "sources": {"c.py": row(2, 10, 1, 0, 0, 0, json!(0), json!(0))},
                        "total": row(2, 10, 1, 0, 0, 0, json!(0), json!(0)),
                    }
                },
                "total": row(20, 154, 3, 1, 16, 122, json!(80), json!(79.22)),
                "cappedFingerprints": 0
            },
            "timestamp": "T"
        })
    );
}

#[test]
fn skip_local_and_absolute_paths_shape_the_rows() {
    let temp = common::fixture("stats");
    write(
        temp.path(),
        "lib/b2.js",
        std::fs::read(temp.path().join("b.js")).expect("b.js"),
    );
    let server = Server::start_in(temp, &["--skipLocal", "--absolute"]);
    let (_, body) = server.get("/api/stats");
    let dir = std::fs::canonicalize(&server.dir).expect("canonical dir");
    let sources = &body["statistics"]["formats"]["javascript"]["sources"];
    let clones = |rel: &str| sources[dir.join(rel).to_str().expect("utf-8 path")]["clones"].clone();
    // lib/a.js and lib/b2.js share a folder: only the pairs with b.js count.
    assert_eq!(
        (clones("b.js"), clones("lib/a.js"), clones("lib/b2.js")),
        (json!(2), json!(1), json!(1))
    );
    assert_eq!(body["statistics"]["total"]["clones"], 2);
}

#[test]
fn health_reports_state_and_skips() {
    let temp = common::fixture("stats");
    write(temp.path(), "bin.js", b"var a = 1;\0\0");
    write(temp.path(), "latin1.py", b"x = 'caf\xe9'\n");
    write(temp.path(), "big.js", "var a = 1;\n".repeat(200));
    write(temp.path(), ".hidden/h.js", "var a = 1;\n");
    let server = Server::start_in(temp, &["--max-size", "1kb", "--no-watch"]);
    // Clone detection runs after the scan: done within moments here.
    let mut body = json!(null);
    for _ in 0..200 {
        let (status, health) = server.get("/api/health");
        assert_eq!(status, 200);
        body = health;
        if body["clones"]["status"] == "done" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(is_iso8601_millis(&body["lastScanTime"]), "{body}");
    body["lastScanTime"] = json!("T");
    for pointer in ["/scanSeconds", "/clones/seconds"] {
        let seconds = body.pointer_mut(pointer).expect("seconds");
        assert!(seconds.as_f64().is_some_and(|s| s >= 0.0), "{seconds}");
        *seconds = json!("S");
    }
    let dir = std::fs::canonicalize(&server.dir).expect("canonical dir");
    assert_json!(
        body,
        json!({"status": "ready", "workingDirectory": dir.to_str(), "lastScanTime": "T", "lastUpdateTime": null, "scanning": false,
               "files": 3, "lines": 20, "scanSeconds": "S", "clones": {"status": "done", "seconds": "S", "count": 1},
               "mode": "strict", "minTokens": 50, "minLines": 5,
               "skipped": {"tooLarge": 1, "binary": 1, "notUtf8": 1}, "version": "0.1.0"})
    );
}

#[test]
fn root_describes_the_api() {
    let server = Server::start("stats", &[]);
    let (status, body) = server.get("/");
    assert_eq!(status, 200);
    assert_eq!(body["name"], "dupcheck");
    assert_eq!(body["version"], "0.1.0");
    // A slim build lists its own (features::a_slim_build_reads_and_lists_only_its_formats).
    if cfg!(feature = "all-languages") {
        assert_eq!(
            body["formats"],
            json!([
                "javascript",
                "typescript",
                "tsx",
                "python",
                "rust",
                "go",
                "java",
                "c",
                "cpp",
                "objective-c",
                "csharp",
                "ruby",
                "php",
                "kotlin",
                "swift",
                "scala",
                "bash",
                "lua",
                "elixir",
                "haskell",
                "zig",
                "dart",
                "ocaml",
                "ocaml-interface",
                "julia",
                "r",
                "sql",
                "solidity",
                "html",
                "vue",
                "svelte"
            ])
        );
    }
    let endpoints = body["endpoints"].as_object().expect("endpoints");
    let mut names: Vec<&str> = endpoints.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "GET /",
            "GET /api/clone",
            "GET /api/clones",
            "GET /api/health",
            "GET /api/openapi.json",
            "GET /api/repositories",
            "GET /api/stats",
            "GET /api/tree",
            "POST /api/check",
            "POST /api/check-diff",
            "POST /api/recheck",
            "POST /mcp"
        ]
    );
}

#[test]
fn recheck_rescans_and_reports() {
    needs_formats!("rust");
    let server = Server::start("stats", &[]);
    write(&server.dir, "d.rs", "fn main() {}\n");
    let (status, body) = server.post("/api/recheck", "");
    assert_eq!(status, 200);
    assert_eq!(body["message"], "Rescan complete");
    assert_eq!(body["files"], 4);
    assert!(
        body["durationMs"].is_u64() && is_iso8601_millis(&body["lastScanTime"]),
        "{body}"
    );
    let (_, stats) = server.get("/api/stats");
    assert_eq!(
        stats["statistics"]["formats"]["rust"]["total"]["sources"],
        1
    );
}
