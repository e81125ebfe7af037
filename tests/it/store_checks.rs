//! Checks that read the store (issue 30): a server started with `--store`
//! answers from its own directory and from every other repository
//! published there, each place of another repository with its name; the
//! answers equal a local server's over the same files; its own copy in
//! the store is never read; a store that is down is said, never taken for
//! "no duplicates".

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{fixture, write, Server};
use crate::pg::PgServer;
use crate::store::{publish, run, store};

/// A function of about ten lines named `name`.
pub fn function(name: &str) -> String {
    format!(
        "function {name}(items, rate) {{\n  let total = 0;\n  for (const item of items) {{\n    if (item.price > 0) {{\n      total += item.price * item.count;\n    }}\n  }}\n  const tax = total * rate;\n  return {{ total, tax, sum: total + tax }};\n}}\n"
    )
}

/// A function unlike [`function`].
const OTHER: &str = "export function parse(line) {\n  const fields = line.split(\",\");\n  const out = {};\n  for (const field of fields) {\n    const [key, value] = field.split(\"=\");\n    out[key.trim()] = value === undefined ? null : value.trim();\n  }\n  return out;\n}\n";

/// A directory holding `files`.
pub fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (rel, text) in files {
        write(dir.path(), rel, text);
    }
    dir
}

/// `(repository, file, startLine, endLine)` of each duplication of a check.
pub fn places(answer: &Value) -> Vec<(String, String, u64, u64)> {
    answer["duplications"]
        .as_array()
        .unwrap_or_else(|| panic!("no duplications in {answer}"))
        .iter()
        .map(|d| {
            let at = &d["codebaseLocation"];
            (
                at["repository"].as_str().unwrap_or("").to_owned(),
                at["file"].as_str().expect("a file").to_owned(),
                at["startLine"].as_u64().expect("a line"),
                at["endLine"].as_u64().expect("a line"),
            )
        })
        .collect()
}

pub fn place(repository: &str, file: &str, start: u64, end: u64) -> (String, String, u64, u64) {
    (repository.into(), file.into(), start, end)
}

#[test]
fn a_check_finds_the_copies_in_two_other_repositories_by_name() {
    let url = store();
    let payments = tree(&[
        ("src/money.js", &function("total")),
        ("src/parse.js", OTHER),
    ]);
    let shop = tree(&[
        (
            "lib/cart/sum.js",
            &format!("// Cart sums.\n\n{}", function("cartTotal")),
        ),
        ("lib/util.js", "export const one = 1;\n"),
    ]);
    assert_eq!(
        publish(payments.path(), &url, "github.com/acme/payments").0,
        Some(0)
    );
    assert_eq!(
        publish(shop.path(), &url, "github.com/acme/shop").0,
        Some(0)
    );
    // A third repository, with a copy of its own.
    let web = tree(&[("app/checkout.js", &function("checkout"))]);
    let server = Server::start_in(
        web,
        &["--store", &url, "--repository", "github.com/acme/web"],
    );
    let snippet = function("sumUp");
    let (status, answer) =
        server.check(json!({"code": snippet, "format": "javascript", "mode": "mild"}));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        places(&answer),
        [
            place("", "app/checkout.js", 1, 10),
            place("github.com/acme/payments", "src/money.js", 1, 10),
            place("github.com/acme/shop", "lib/cart/sum.js", 3, 12),
        ]
    );
    let shop_copy = &answer["duplications"][2];
    assert_eq!(
        shop_copy["codebaseLocation"]["fragment"],
        function("cartTotal").trim_end()
    );
    assert_eq!(
        (
            &shop_copy["snippetLocation"]["startLine"],
            &shop_copy["tokens"],
            &shop_copy["format"]
        ),
        (
            &json!(1),
            &answer["duplications"][0]["tokens"],
            &json!("javascript")
        )
    );
    assert_eq!(answer["store"], json!({"status": "ok"}));
    assert_eq!(answer["statistics"]["totalDuplications"], 3);
    // As SARIF: the other repositories' places are relative to their own
    // roots, named in the message with their repository.
    let sarif = server.request(
        "POST",
        "/api/check?output=sarif",
        &[("Content-Type", "application/json")],
        json!({"code": snippet, "format": "javascript", "mode": "mild", "path": "new.js"})
            .to_string()
            .as_bytes(),
    );
    let sarif = sarif.json();
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(
        result["message"]["text"],
        "Duplicated code in `sumUp()`: 10 lines (63 tokens), also at [app/checkout.js:1](1), [github.com/acme/payments/src/money.js:1](2) and [github.com/acme/shop/lib/cart/sum.js:3](3)."
    );
    let artifacts: Vec<&Value> = result["relatedLocations"]
        .as_array()
        .expect("related locations")
        .iter()
        .map(|r| &r["physicalLocation"]["artifactLocation"])
        .collect();
    assert_eq!(
        artifacts,
        [
            &json!({"uri": "app/checkout.js", "uriBaseId": "%SRCROOT%"}),
            &json!({"uri": "src/money.js", "uriBaseId": "github.com/acme/payments"}),
            &json!({"uri": "lib/cart/sum.js", "uriBaseId": "github.com/acme/shop"}),
        ]
    );
    // Its variables renamed: the same places in mild mode, none in strict.
    let renamed = function("sumUp").replace("total", "acc");
    let (_, mild) = server.check(json!({"code": renamed, "format": "javascript", "mode": "mild"}));
    assert_eq!(places(&mild), places(&answer));
    let (_, strict) =
        server.check(json!({"code": renamed, "format": "javascript", "mode": "strict"}));
    assert_eq!(places(&strict), []);
    // Code found nowhere.
    let (_, none) = server.check(json!({"code": "const x = 1;\n", "format": "javascript"}));
    assert_eq!(none["duplications"], json!([]));
    assert_eq!(none["store"], json!({"status": "ok"}));
}

#[test]
fn a_repository_never_reads_its_own_copy_in_the_store_and_sees_what_others_publish() {
    let url = store();
    let payments = tree(&[("src/money.js", &function("total"))]);
    assert_eq!(
        publish(payments.path(), &url, "github.com/acme/payments").0,
        Some(0)
    );
    // The payments repository itself, its file since edited: its live
    // index answers, not the copy it published.
    write(payments.path(), "src/money.js", OTHER);
    let server = Server::spawn(
        payments.path(),
        &["--store", &url, "--repository", "github.com/acme/payments"],
    );
    let mut server = server;
    server.wait_ready();
    let (_, answer) =
        server.check(json!({"code": function("x"), "format": "javascript", "mode": "mild"}));
    assert_eq!(places(&answer), []);
    // Another repository publishes a copy: the next check sees it, and a
    // rename and a deletion republished are seen as they are.
    let shop = tree(&[("a.js", &function("a")), ("b.js", &function("b"))]);
    assert_eq!(
        publish(shop.path(), &url, "github.com/acme/shop").0,
        Some(0)
    );
    let (_, answer) =
        server.check(json!({"code": function("x"), "format": "javascript", "mode": "mild"}));
    assert_eq!(
        places(&answer),
        [
            place("github.com/acme/shop", "a.js", 1, 10),
            place("github.com/acme/shop", "b.js", 1, 10)
        ]
    );
    std::fs::rename(shop.path().join("a.js"), shop.path().join("renamed.js")).expect("rename");
    std::fs::remove_file(shop.path().join("b.js")).expect("remove");
    assert_eq!(
        publish(shop.path(), &url, "github.com/acme/shop").0,
        Some(0)
    );
    let (_, answer) =
        server.check(json!({"code": function("x"), "format": "javascript", "mode": "mild"}));
    assert_eq!(
        places(&answer),
        [place("github.com/acme/shop", "renamed.js", 1, 10)]
    );
}

#[test]
fn the_store_down_is_said_and_the_check_answers_from_the_directory() {
    let mut pg = PgServer::start();
    let db = pg.database();
    let url = pg.url(&db);
    let out = run(Path::new("."), &["store", "init", "--store", &url], &[]);
    assert_eq!(out.status.code(), Some(0));
    let other = tree(&[("x.js", &function("x"))]);
    assert_eq!(publish(other.path(), &url, "other").0, Some(0));
    let here = tree(&[("here.js", &function("here"))]);
    let server = Server::start_in(here, &["--store", &url, "--repository", "here"]);
    let check =
        || server.check(json!({"code": function("y"), "format": "javascript", "mode": "mild"}));
    let (_, answer) = check();
    assert_eq!(
        places(&answer),
        [place("", "here.js", 1, 10), place("other", "x.js", 1, 10)]
    );
    pg.stop();
    let (status, answer) = check();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(places(&answer), [place("", "here.js", 1, 10)]);
    assert_eq!(
        answer["store"],
        json!({"status": "unavailable", "error": "unreachable"})
    );
    pg.restart();
    // Checks leave a store that did not answer alone for a few seconds;
    // the health asks at once, and its answer ends the pause.
    let (_, health) = server.get("/api/health");
    assert_eq!(health["store"]["status"], "ok", "{health}");
    let (_, answer) = check();
    assert_eq!(
        places(&answer),
        [place("", "here.js", 1, 10), place("other", "x.js", 1, 10)]
    );
    assert_eq!(answer["store"], json!({"status": "ok"}));
}

/// Every file of `dir` (relative path with `/`, text), sorted.
fn files_of(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                let rel = path
                    .strip_prefix(dir)
                    .expect("inside")
                    .to_string_lossy()
                    .replace('\\', "/");
                found.push((rel, text));
            }
        }
    }
    found.sort();
    found
}

/// A check's duplications with their file named `repository/path` (a
/// local server's files are in folders named as the repositories),
/// sorted: what both servers must agree on.
fn comparable(answer: &Value) -> Vec<Value> {
    let mut list: Vec<Value> = answer["duplications"]
        .as_array()
        .unwrap_or_else(|| panic!("no duplications in {answer}"))
        .iter()
        .map(|d| {
            let mut d = d.clone();
            let at = d["codebaseLocation"].as_object_mut().expect("a location");
            if let Some(Value::String(repository)) = at.remove("repository") {
                let file = at["file"].as_str().expect("a file").to_owned();
                at.insert("file".into(), json!(format!("{repository}/{file}")));
            }
            d
        })
        .collect();
    list.sort_by_key(|d| d.to_string());
    list
}

#[test]
fn answers_through_the_store_equal_a_local_server_over_the_same_files() {
    let url = store();
    let names = ["clones", "near_miss", "project"];
    let all = tempfile::tempdir().expect("temp dir");
    let mut snippets = Vec::new();
    for name in names {
        let repository = fixture(name);
        // Ignore files are the directory's business, not the store's.
        let _ = std::fs::remove_file(repository.path().join(".gitignore"));
        let (code, line) = publish(repository.path(), &url, name);
        assert_eq!(code, Some(0), "{line}");
        for (rel, text) in files_of(repository.path()) {
            write(all.path(), &format!("{name}/{rel}"), &text);
            // The whole file, and its second half.
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            snippets.push((rel.clone(), text.clone()));
            snippets.push((rel, lines[lines.len() / 2..].concat()));
        }
    }
    let local = Server::start_in(all, &[]);
    let through = Server::start_in(
        tempfile::tempdir().expect("temp dir"),
        &["--store", &url, "--repository", "none"],
    );
    let mut compared = 0;
    for (rel, code) in &snippets {
        let Some(format) = Path::new(rel).extension().and_then(|e| e.to_str()) else {
            continue;
        };
        for mode in ["strict", "mild", "weak"] {
            let request = json!({"code": code, "format": format, "mode": mode});
            let (status, want) = local.check(request.clone());
            if status != 200 {
                continue;
            }
            let (status, got) = through.check(request);
            assert_eq!(status, 200, "{got}");
            assert_eq!(got["store"], json!({"status": "ok"}));
            assert_eq!(comparable(&got), comparable(&want), "{rel} in {mode} mode");
            assert_eq!(
                got["statistics"], want["statistics"],
                "{rel} in {mode} mode"
            );
            compared += usize::from(!comparable(&want).is_empty());
        }
    }
    assert!(compared >= 30, "only {compared} checks found duplications");
}

/// A server with `args` over `github.com/acme/web` (a copy of [`function`]
/// in `app/checkout.js`) beside `github.com/acme/payments` (another, in
/// `src/money.js`) in a fresh store.
fn web_beside_payments(args: &[&str]) -> Server {
    let url = store();
    let payments = tree(&[("src/money.js", &function("total"))]);
    let (code, line) = publish(payments.path(), &url, "github.com/acme/payments");
    assert_eq!(code, Some(0), "{line}");
    let web = tree(&[("app/checkout.js", &function("checkout"))]);
    let mut all = vec!["--store", &url, "--repository", "github.com/acme/web"];
    all.extend_from_slice(args);
    Server::start_in(web, &all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_check_code_names_the_repositories_of_its_places() {
    let server = web_beside_payments(&[]);
    let input = json!({"code": function("sumUp"), "format": "javascript", "mode": "mild"});
    let (status, rest) = server.check(input.clone());
    assert_eq!(status, 200, "{rest}");
    for revision in crate::mcp::REVISIONS {
        let client = crate::mcp::connect(&server, revision).await;
        crate::mcp::assert_answer(
            &crate::mcp::call(&client, "check_code", input.clone()).await,
            &rest,
            "2 duplications found in the project and the store's other repositories:\n\
             - `checkout()` in app/checkout.js:1-10: 10 lines (63 tokens), lines 1-10 of the code (`sumUp()`); renaming sumUp → checkout: call it instead\n\
             - `total()` in github.com/acme/payments/src/money.js:1-10: 10 lines (63 tokens), lines 1-10 of the code (`sumUp()`); renaming sumUp → total: call it instead",
        );
        client.cancel().await.expect("close");
    }
}

#[test]
fn report_with_a_store_lists_the_clones_with_other_repositories() {
    let url = store();
    let shop = tree(&[("src/a.js", &function("a")), ("src/parse.js", OTHER)]);
    assert_eq!(
        publish(shop.path(), &url, "github.com/acme/shop").0,
        Some(0)
    );
    let web = tree(&[
        ("app/b.js", &function("b")),
        ("app/c.js", "export const c = 3;\n"),
    ]);
    let report = |url: &str| {
        run(
            web.path(),
            &[
                "report",
                ".",
                "--store",
                url,
                "--repository",
                "github.com/acme/web",
                "--reporter",
                "console,json",
                "--output",
                "out",
            ],
            &[],
        )
    };
    let out = report(&url);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::store::last_error(&out)
    );
    assert_eq!(
        crate::store::stdout(&out),
        "lines  tokens  format      first          second\n   \
            10      61  javascript  app/b.js:1-10  github.com/acme/shop/src/a.js:1-10\n                           \
         in part of `b()` and part of `a()`\n\n\
         2 files, 11 lines, 69 tokens: 0 clones, 0 duplicated lines (0%), 0 duplicated tokens (0%)\n\
         store: 1 clone with other repositories"
    );
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(web.path().join("out/dupcheck-report.json")).expect("json report"),
    )
    .expect("json");
    assert_eq!(
        json["clones"][0]["second"]["repository"],
        "github.com/acme/shop"
    );
    assert_eq!(json["clones"][0]["second"]["path"], "src/a.js");
    assert_eq!(json["clones"][0]["first"].get("repository"), None);
    assert_eq!(
        json["store"],
        json!({"status": "ok", "clones": 1, "skippedFiles": 0, "unchecked": []})
    );
    // The JSON report is a baseline: the clone with the other repository
    // is known to the next run.
    let baseline = web.path().join("out/dupcheck-report.json");
    let again = run(
        web.path(),
        &[
            "report",
            ".",
            "--store",
            &url,
            "--repository",
            "github.com/acme/web",
            "--baseline",
            baseline.to_str().expect("utf-8"),
            "--fail-on-new",
        ],
        &[],
    );
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        crate::store::stdout(&again)
    );
    assert!(crate::store::stdout(&again).contains("baseline: 0 new clones, 1 known"));
    // Nothing listening: the report says the comparison was not made.
    let down = report("postgres://nobody@127.0.0.1:9/none");
    assert_eq!(down.status.code(), Some(0));
    assert!(
        crate::store::stdout(&down)
            .ends_with("store: unavailable (unreachable): other repositories were not compared"),
        "{}",
        crate::store::stdout(&down)
    );
    let stderr = String::from_utf8_lossy(&down.stderr);
    assert!(
        stderr.lines().any(|l| l.starts_with("dupcheck: warning: other repositories were not compared: cannot reach the store at nobody@127.0.0.1:9/none")),
        "{stderr}"
    );
}

/// A diff that adds `rel` holding `text`.
fn new_file_diff(rel: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut diff = format!(
        "diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for line in lines {
        diff.push_str(&format!("+{line}\n"));
    }
    diff
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_check_names_the_copies_its_added_code_makes_in_other_repositories() {
    let server = web_beside_payments(&["--mode", "mild"]);
    let diff = new_file_diff("app/new.js", &function("sumUp"));
    let res = server.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "text/x-diff")],
        diff.as_bytes(),
    );
    assert_eq!(res.status, 200);
    let rest = res.json();
    let places: Vec<(String, String)> = rest["files"][0]["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            let at = &d["codebaseLocation"];
            (
                at["repository"].as_str().unwrap_or("").to_owned(),
                at["file"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            (String::new(), "app/checkout.js".to_owned()),
            (
                "github.com/acme/payments".to_owned(),
                "src/money.js".to_owned()
            )
        ]
    );
    assert_eq!(rest["store"], json!({"status": "ok"}));
    assert_eq!(rest["statistics"]["totalDuplications"], 2);
    for revision in crate::mcp::REVISIONS {
        let client = crate::mcp::connect(&server, revision).await;
        crate::mcp::assert_answer(
            &crate::mcp::call(&client, "check_diff", json!({"diff": diff})).await,
            &rest,
            "2 duplications added:\n\
             - `sumUp()` in app/new.js:1-10 duplicates `checkout()` in app/checkout.js:1-10: 10 lines (63 tokens, 10 added), renaming sumUp → checkout\n\
             - `sumUp()` in app/new.js:1-10 duplicates `total()` in github.com/acme/payments/src/money.js:1-10: 10 lines (63 tokens, 10 added), renaming sumUp → total",
        );
        client.cancel().await.expect("close");
    }
}

#[test]
fn a_store_that_never_answers_costs_a_check_its_deadline_not_its_answer() {
    // A port that accepts connections and says nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let here = tree(&[("here.js", &function("here"))]);
    let url = format!("postgres://reader:pw@127.0.0.1:{port}/code");
    let server = Server::start_in(here, &["--store", &url, "--repository", "here"]);
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let (status, answer) =
            server.check(json!({"code": function("y"), "format": "javascript", "mode": "mild"}));
        let took = started.elapsed();
        assert_eq!(status, 200, "{answer}");
        assert_eq!(places(&answer), [place("", "here.js", 1, 10)]);
        assert_eq!(
            answer["store"],
            json!({"status": "unavailable", "error": "unreachable"})
        );
        // The store's deadline is 2 s; the check's answer comes after it.
        assert!(took < std::time::Duration::from_secs(6), "{took:?}");
    }
}
