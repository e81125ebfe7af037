//! The dashboard (issue 14): the API it reads (`GET /api/tree`,
//! `GET /api/clone`), the page and its files, and the page itself driven in
//! Debian's headless Chromium by `tests/browser/dashboard.mjs` (Playwright).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{error, Server};
use serde_json::{json, Value};

/// The per-file rows of `/api/stats`, by path.
fn file_rows(server: &Server) -> Vec<(String, Value)> {
    let (status, stats) = server.get("/api/stats");
    assert_eq!(status, 200, "{stats}");
    let mut rows = Vec::new();
    for format in stats["statistics"]["formats"].as_object().unwrap().values() {
        for (path, row) in format["sources"].as_object().unwrap() {
            rows.push((path.clone(), row.clone()));
        }
    }
    rows
}

/// What `/api/tree` must say of `path`: the sums of the rows of its files,
/// and the clones `/api/clones?path=` counts there.
fn expected_node(server: &Server, rows: &[(String, Value)], path: &str, kind: &str) -> Value {
    let inside: Vec<&Value> = rows
        .iter()
        .filter(|(p, _)| path.is_empty() || p == path || p.starts_with(&format!("{path}/")))
        .map(|(_, row)| row)
        .collect();
    let sum = |field: &str| {
        inside
            .iter()
            .map(|r| r[field].as_u64().unwrap())
            .sum::<u64>()
    };
    let (lines, duplicated) = (sum("lines"), sum("duplicatedLines"));
    let percentage = if lines == 0 {
        0.0
    } else {
        (duplicated as f64 * 10_000.0 / lines as f64).round() / 100.0
    };
    let (status, clones) = server.get(&format!("/api/clones?path={path}&limit=1"));
    assert_eq!(status, 200, "{clones}");
    let format = (kind == "file").then(|| {
        let (_, stats) = server.get("/api/stats");
        stats["statistics"]["formats"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(_, f)| f["sources"].get(path).is_some())
            .map(|(name, _)| name.clone())
            .unwrap()
    });
    json!({
        "name": path.rsplit('/').next().unwrap(),
        "path": path,
        "kind": kind,
        "files": inside.len(),
        "lines": lines,
        "duplicatedLines": duplicated,
        "percentage": if percentage.fract() == 0.0 { json!(percentage as u64) } else { json!(percentage) },
        "clones": clones["total"],
        "format": format,
    })
}

#[test]
fn the_tree_sums_the_stats_rows_folder_by_folder() {
    let server = Server::start("dashboard", &["--no-watch"]);
    let rows = file_rows(&server);
    let (status, top) = server.get("/api/tree");
    assert_eq!(status, 200, "{top}");
    assert_eq!(
        (&top["totalChildren"], &top["nextOffset"]),
        (&json!(3), &Value::Null)
    );
    assert_json!(top["folder"], expected_node(&server, &rows, "", "folder"));
    let children = top["children"].clone();
    // The top folder's figures are /api/stats's total.
    let (_, stats) = server.get("/api/stats");
    let total = &stats["statistics"]["total"];
    assert_eq!(
        (
            &top["folder"]["files"],
            &top["folder"]["lines"],
            &top["folder"]["duplicatedLines"],
            &top["folder"]["percentage"],
            &top["folder"]["clones"]
        ),
        (
            &total["sources"],
            &total["lines"],
            &total["duplicatedLines"],
            &total["percentage"],
            &total["clones"]
        )
    );
    // Its children, most lines first.
    let want: Vec<Value> = ["src", "lib", "scripts"]
        .iter()
        .map(|p| expected_node(&server, &rows, p, "folder"))
        .collect();
    let mut by_lines = want.clone();
    by_lines.sort_by_key(|n| std::cmp::Reverse(n["lines"].as_u64().unwrap()));
    assert_json!(children, Value::Array(by_lines));

    // One level down, folders and files together.
    let (status, src) = server.get("/api/tree?path=src");
    assert_eq!(status, 200, "{src}");
    let names: Vec<&str> = src["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["src/app", "src/util"]);
    let (_, app) = server.get("/api/tree?path=src/app/");
    assert_json!(
        app["children"],
        json!([
            expected_node(&server, &rows, "src/app/settings.js", "file"),
            expected_node(&server, &rows, "src/app/defaults.js", "file"),
        ])
    );
    // An absolute path inside the directory is the same folder.
    let absolute = format!(
        "{}/src/app",
        std::fs::canonicalize(&server.dir).unwrap().display()
    );
    let (status, same) = server.get(&format!("/api/tree?path={absolute}"));
    assert_eq!(status, 200, "{same}");
    assert_json!(same, app);
}

#[test]
fn the_tree_is_paged() {
    let server = Server::start("dashboard", &["--no-watch"]);
    let (_, all) = server.get("/api/tree");
    let (status, first) = server.get("/api/tree?limit=2");
    assert_eq!(status, 200, "{first}");
    assert_json!(
        first["children"],
        json!(all["children"].as_array().unwrap()[..2])
    );
    assert_eq!(
        (&first["totalChildren"], &first["nextOffset"]),
        (&json!(3), &json!(2))
    );
    let (_, last) = server.get("/api/tree?limit=2&offset=2");
    assert_json!(
        last["children"],
        json!(all["children"].as_array().unwrap()[2..])
    );
    assert_eq!(last["nextOffset"], Value::Null);
    let (_, past) = server.get("/api/tree?offset=10");
    assert_eq!(
        (&past["children"], &past["nextOffset"]),
        (&json!([]), &Value::Null)
    );
}

#[test]
fn tree_and_clone_refusals() {
    let server = Server::start("dashboard", &["--no-watch"]);
    for (path, status, body) in [
        (
            "/api/tree?path=nope",
            404,
            error("NotFound", "No folder \"nope\" holds an indexed file; send a folder of the tree (empty for the top)", 404),
        ),
        (
            "/api/tree?path=src/util/merge.js",
            404,
            error("NotFound", "No folder \"src/util/merge.js\" holds an indexed file; send a folder of the tree (empty for the top)", 404),
        ),
        (
            "/api/tree?depth=2",
            400,
            error("ValidationError", "Unknown parameter \"depth\"; the tree takes path, limit, offset", 400),
        ),
        (
            "/api/tree?limit=0",
            400,
            error("ValidationError", "Field \"limit\" must be a whole number from 1 to 2000", 400),
        ),
        (
            "/api/tree?path=a&path=b",
            400,
            error("ValidationError", "Parameter \"path\" is given twice", 400),
        ),
        (
            "/api/clone",
            400,
            error("ValidationError", "Missing required parameter: id (a clone's id from /api/clones)", 400),
        ),
        (
            "/api/clone?id=xyz",
            400,
            error("ValidationError", "Field \"id\" must be a clone's id: 16 hex digits", 400),
        ),
        (
            "/api/clone?id=0123456789abcdef",
            404,
            error("NotFound", "No clone 0123456789abcdef in the current index; the code changed since the list was read: list the clones again", 404),
        ),
    ] {
        let (got, answer) = server.get(path);
        assert_eq!(got, status, "{path}");
        assert_json!(answer, body);
    }
}

#[test]
fn a_clone_in_detail_has_both_places_lines_and_tokens() {
    let server = Server::start("dashboard", &["--no-watch"]);
    let (_, list) = server.get("/api/clones?fragments=true");
    let clones = list["clones"].as_array().unwrap();
    assert_eq!(clones.len(), 2, "{list}");
    for clone in clones {
        let (status, detail) =
            server.get(&format!("/api/clone?id={}", clone["id"].as_str().unwrap()));
        assert_eq!(status, 200, "{detail}");
        for key in ["id", "format", "tokens", "lines"] {
            assert_eq!(detail[key], clone[key], "{key}");
        }
        assert_eq!(detail["tokensListed"], clone["tokens"]);
        for side in ["first", "second"] {
            let (place, shown) = (&clone[side], &detail[side]);
            for key in ["file", "startLine", "endLine", "startColumn", "endColumn"] {
                assert_eq!(shown[key], place[key], "{side} {key}");
            }
            // The whole lines, as the file has them.
            let text =
                std::fs::read_to_string(server.dir.join(place["file"].as_str().unwrap())).unwrap();
            let (start, end) = (
                place["startLine"].as_u64().unwrap() as usize,
                place["endLine"].as_u64().unwrap() as usize,
            );
            let lines: Vec<&str> = text.lines().skip(start - 1).take(end - start + 1).collect();
            assert_eq!(shown["text"], lines.join("\n"));
            assert!(shown["text"]
                .as_str()
                .unwrap()
                .contains(place["fragment"].as_str().unwrap()));
            // One position per token, from the place's first to its last.
            let tokens = shown["tokens"].as_array().unwrap();
            assert_eq!(tokens.len() as u64, clone["tokens"].as_u64().unwrap());
            assert_eq!(
                tokens[0].as_array().unwrap()[..2],
                [place["startLine"].clone(), place["startColumn"].clone()]
            );
            assert_eq!(
                tokens[tokens.len() - 1].as_array().unwrap()[2..],
                [place["endLine"].clone(), place["endColumn"].clone()]
            );
        }
    }
    // The JavaScript copy renamed its identifiers (found in mild mode): the
    // renamed tokens, and only they, differ; the Python copy is verbatim.
    let detail_of = |format: &str| {
        let clone = clones.iter().find(|c| c["format"] == format).unwrap();
        server
            .get(&format!("/api/clone?id={}", clone["id"].as_str().unwrap()))
            .1
    };
    let python = detail_of("python");
    assert_eq!(python["differing"], json!([]));
    let js = detail_of("javascript");
    let token_text = |side: &str, i: usize| {
        let t = &js[side]["tokens"][i];
        let start = js[side]["startLine"].as_u64().unwrap();
        let line = js[side]["text"]
            .as_str()
            .unwrap()
            .split('\n')
            .nth((t[0].as_u64().unwrap() - start) as usize)
            .unwrap();
        let chars: Vec<char> = line.chars().collect();
        chars[t[1].as_u64().unwrap() as usize - 1..t[3].as_u64().unwrap() as usize - 1]
            .iter()
            .collect::<String>()
    };
    let differing: Vec<(String, String)> = js["differing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let i = i.as_u64().unwrap() as usize;
            (token_text("first", i), token_text("second", i))
        })
        .collect();
    let mut renames: Vec<(String, String)> = differing.clone();
    renames.sort();
    renames.dedup();
    assert_eq!(
        renames,
        [
            ("base", "target"),
            ("combine", "merge"),
            ("extra", "source"),
            ("item", "value"),
            ("name", "key"),
            ("out", "result"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned())),
        "{differing:?}"
    );
}

#[test]
fn browsers_get_the_page_and_api_clients_the_json() {
    let server = Server::start("dashboard", &["--no-watch"]);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/interfaces/dashboard");
    let html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let page = server.request("GET", "/", &[("Accept", html)], b"");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("vary"), Some("Accept"));
    assert_eq!(
        page.header("content-security-policy"),
        Some("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
    );
    assert_eq!(page.body, std::fs::read(dir.join("index.html")).unwrap());
    // curl and API clients keep the description.
    for accept in [None, Some("*/*"), Some("application/json")] {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("Accept", a)).into_iter().collect();
        let res = server.request("GET", "/", &headers, b"");
        assert_eq!(res.status, 200);
        assert_eq!(res.json()["name"], "dupcheck", "{accept:?}");
    }
    for (path, file, content_type) in [
        (
            "/dashboard/app.js",
            "app.js",
            "text/javascript; charset=utf-8",
        ),
        (
            "/dashboard/style.css",
            "style.css",
            "text/css; charset=utf-8",
        ),
    ] {
        let res = server.request("GET", path, &[], b"");
        assert_eq!(res.status, 200, "{path}");
        assert_eq!(res.header("content-type"), Some(content_type));
        assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(res.body, std::fs::read(dir.join(file)).unwrap());
    }
    let res = server.request("GET", "/dashboard/nope.js", &[], b"");
    assert_eq!(res.status, 404);
    // The page's own requests carry its origin: they are served.
    let origin = format!("http://127.0.0.1:{}", server.port);
    let res = server.request(
        "POST",
        "/api/check",
        &[("Origin", &origin), ("Content-Type", "application/json")],
        br#"{"code": "let a = 1;", "format": "javascript"}"#,
    );
    assert_eq!(res.status, 200);
}

/// Where the browser test writes its screenshots: `target/dashboard/`.
fn screenshots() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("dashboard")
}

#[test]
fn the_dashboard_in_headless_chromium() {
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        browser.join("node_modules/playwright-core").is_dir(),
        "run `npm ci` in tests/browser first (.ci/run does)"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does)"
    );
    let server = Server::start("dashboard", &[]);
    let url = format!("http://127.0.0.1:{}/", server.port);
    let out = Command::new("node")
        .arg(browser.join("dashboard.mjs"))
        .args([
            url.as_str(),
            server.dir.to_str().unwrap(),
            screenshots().to_str().unwrap(),
        ])
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser test failed:\n{stderr}\n{stdout}"
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(report["ok"], true);
    eprintln!("dashboard in Chromium: {report}");
    for view in ["main", "folder", "table", "clone", "clones", "try"] {
        for size in ["desktop", "phone"] {
            let shot = screenshots().join(format!("{view}-{size}.png"));
            assert!(shot.is_file(), "{} was not written", shot.display());
        }
    }
}
