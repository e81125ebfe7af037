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
