//! The GitHub Action (`action.yml`) and the workflows under
//! `.github/workflows/`: actionlint and SchemaStore's schemas (through
//! check-jsonschema, which ships them) pass on them and fail on a broken
//! copy; the documented `.gitlab-ci.yml` job passes GitLab CI's schema;
//! and `tests/actions/run_action.py` runs the composite's steps as the
//! runner does (`GITHUB_*`, `INPUT_*`, step outputs) on a fixture, with the
//! binary under test: outputs, the SARIF upload step, exit status.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

use crate::common::{fixture, write, BIN};
use crate::precommit::{git, path_with_binary, venv_tool};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// check-jsonschema with one of its vendored SchemaStore schemas.
fn schema_check(schema: &str, files: &[&Path]) -> Output {
    Command::new(venv_tool("check-jsonschema"))
        .arg("--builtin-schema")
        .arg(schema)
        .args(files)
        .output()
        .expect("run check-jsonschema")
}

/// actionlint on `files`, from `dir` (where `uses: ./` is resolved).
fn actionlint(dir: &Path, files: &[&str]) -> Output {
    Command::new(venv_tool("actionlint"))
        .current_dir(dir)
        .arg("-no-color")
        .args(files)
        .output()
        .expect("run actionlint")
}

/// The first ```yaml block of a Markdown file.
fn yaml_block(markdown: &str) -> String {
    let start = markdown.find("```yaml\n").expect("a yaml block") + "```yaml\n".len();
    let end = start + markdown[start..].find("```").expect("its end");
    markdown[start..end].to_owned()
}

#[test]
fn the_action_and_workflows_pass_actionlint_and_their_schemas() {
    let root = root();
    let workflows = [".github/workflows/release.yml", ".github/workflows/ci.yml"];
    let out = actionlint(&root, &workflows);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(text(&out), "");
    let out = schema_check("vendor.github-actions", &[&root.join("action.yml")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("ok -- validation done"),
        "{}",
        text(&out)
    );
    let paths: Vec<PathBuf> = workflows.iter().map(|w| root.join(w)).collect();
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let out = schema_check("vendor.github-workflows", &paths);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The workflow docs/github-actions.md tells users to copy.
    let temp = tempfile::tempdir().expect("temp");
    let docs = std::fs::read_to_string(root.join("docs/github-actions.md"))
        .expect("docs/github-actions.md");
    write(
        temp.path(),
        ".github/workflows/duplicates.yml",
        yaml_block(&docs),
    );
    let documented = temp.path().join(".github/workflows/duplicates.yml");
    let out = schema_check("vendor.github-workflows", &[&documented]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = actionlint(temp.path(), &[".github/workflows/duplicates.yml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The job docs/gitlab.md tells users to copy.
    let docs = std::fs::read_to_string(root.join("docs/gitlab.md")).expect("docs/gitlab.md");
    write(temp.path(), ".gitlab-ci.yml", yaml_block(&docs));
    let out = schema_check("vendor.gitlab-ci", &[&temp.path().join(".gitlab-ci.yml")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The same tools fail what is broken: a misspelt `using`, and a
    // workflow giving the action an input it does not have (actionlint
    // reads the action's inputs from action.yml).
    let action = std::fs::read_to_string(root.join("action.yml")).expect("action.yml");
    write(
        temp.path(),
        "action.yml",
        action.replace("using: composite", "using: composit"),
    );
    let out = schema_check("vendor.github-actions", &[&temp.path().join("action.yml")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    write(temp.path(), "action.yml", &action);
    write(
        temp.path(),
        ".github/workflows/dup.yml",
        "on: push\njobs:\n  dup:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n        with:\n          threshhold: 5\n",
    );
    git(temp.path(), &["init", "-q"]);
    let out = actionlint(temp.path(), &[".github/workflows/dup.yml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("input \"threshhold\" is not defined in action"),
        "{}",
        text(&out)
    );
}

/// Runs the action's steps in `workspace` with `inputs` and `PATH`; the
/// harness's exit status and its JSON (outputs, steps, uses, summary).
fn run_action(workspace: &Path, inputs: &[(&str, &str)], path: &str) -> (Option<i32>, Value) {
    run_action_with(workspace, inputs, path, &[])
}

/// [`run_action`] with further variables of the runner (`env`).
fn run_action_with(
    workspace: &Path,
    inputs: &[(&str, &str)],
    path: &str,
    env: &[(&str, &str)],
) -> (Option<i32>, Value) {
    let mut cmd = Command::new(venv_tool("python"));
    cmd.arg(root().join("tests/actions/run_action.py"))
        .arg(root())
        .arg(workspace)
        .env("PATH", path);
    for (name, value) in inputs {
        cmd.arg("--input").arg(format!("{name}={value}"));
    }
    for (name, value) in env {
        cmd.arg("--env").arg(format!("{name}={value}"));
    }
    let out = cmd.output().expect("run the action's steps");
    let value: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    (out.status.code(), value)
}

/// Which steps ran, and their exit statuses.
fn ran(result: &Value) -> Vec<(bool, Option<i64>)> {
    result["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| (s["ran"] == true, s["exit"].as_i64()))
        .collect()
}

#[test]
fn the_action_reports_sets_outputs_and_uploads_sarif_when_asked() {
    let temp = fixture("stats");
    let (code, result) = run_action(
        temp.path(),
        &[
            ("dupcheck-path", BIN),
            ("mode", "strict"),
            ("minTokens", "50"),
            ("threshold", "90"),
            ("upload-sarif", "true"),
        ],
        &std::env::var("PATH").unwrap_or_default(),
    );
    assert_eq!(code, Some(0), "{result:#}");
    assert_eq!(
        result["outputs"],
        json!({"clones": "1", "percentage": "80", "new-clones": "", "exit-code": "0",
               "report-dir": "dupcheck-report"})
    );
    assert_eq!(
        ran(&result),
        [
            (true, Some(0)),
            (true, Some(0)),
            (true, Some(0)),
            (false, None)
        ]
    );
    assert_eq!(
        result["uses"],
        json!([{"uses": "github/codeql-action/upload-sarif@v4",
                "with": {"sarif_file": "dupcheck-report/dupcheck-report.sarif",
                         "category": "dupcheck"}}])
    );
    let sarif: Value = serde_json::from_str(
        &std::fs::read_to_string(temp.path().join("dupcheck-report/dupcheck-report.sarif"))
            .expect("the SARIF report"),
    )
    .expect("json");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        result["summary"],
        "# Duplicate code\n\n| Lines | Tokens | Format | First | Second |\n|---:|---:|---|---|---|\n\
         | 8 | 61 | javascript | `b.js:2-9` | `lib/a.js:1-8` |\n\n\
         3 files, 20 lines, 154 tokens: 1 clone, 16 duplicated lines (80%), 122 duplicated tokens (79.22%)  \n\
         threshold: 80% duplicated lines is within 90%  \n"
    );
}

#[test]
fn a_threshold_exceeded_fails_the_action_after_its_outputs_are_set() {
    let temp = fixture("stats");
    // No dupcheck-path: the dupcheck on PATH, the binary under test.
    let (code, result) = run_action(temp.path(), &[("threshold", "50")], &path_with_binary());
    assert_eq!(code, Some(1), "{result:#}");
    assert_eq!(result["outputs"]["clones"], "1");
    assert_eq!(result["outputs"]["percentage"], "80");
    assert_eq!(result["outputs"]["exit-code"], "1");
    // Reported, no SARIF upload (not asked), then the failing step.
    assert_eq!(
        ran(&result),
        [
            (true, Some(0)),
            (true, Some(0)),
            (false, None),
            (true, Some(1))
        ]
    );
    assert_eq!(result["uses"], json!([]));
    // `args` reaches dupcheck, split on spaces: clones of 9 lines or more
    // only, so none.
    let (code, result) = run_action(
        temp.path(),
        &[("threshold", "50"), ("args", "--min-lines 9  --no-cache")],
        &path_with_binary(),
    );
    assert_eq!(code, Some(0), "{result:#}");
    assert_eq!(result["outputs"]["clones"], "0");
    assert_eq!(result["outputs"]["percentage"], "0");
}

#[test]
fn a_new_clone_against_the_baseline_fails_the_action() {
    let temp = fixture("stats");
    let dir = temp.path();
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(["report", "--no-cache", "-r", "json", "-o", "base"])
        .output()
        .expect("dupcheck report");
    assert_eq!(out.status.code(), Some(0));
    let inputs = [
        ("dupcheck-path", BIN),
        ("baseline", "base/dupcheck-report.json"),
        ("reporters", "console"),
    ];
    let (code, result) = run_action(dir, &inputs, &std::env::var("PATH").unwrap_or_default());
    assert_eq!(code, Some(0), "{result:#}");
    assert_eq!(result["outputs"]["new-clones"], "0");
    let a = std::fs::read_to_string(dir.join("lib/a.js")).expect("a.js");
    write(dir, "more/copy.js", &a);
    let (code, result) = run_action(dir, &inputs, &std::env::var("PATH").unwrap_or_default());
    assert_eq!(code, Some(1), "{result:#}");
    assert_eq!(result["outputs"]["clones"], "3");
    assert_eq!(result["outputs"]["new-clones"], "2");
    assert_eq!(result["outputs"]["exit-code"], "1");
}

/// A static HTTP server on loopback (Python's http.server), killed on drop.
struct Files {
    child: Child,
    port: u16,
}

impl Files {
    fn serve(dir: &Path) -> Files {
        let mut child = Command::new(venv_tool("python"))
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .arg("--directory")
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start http.server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its first line");
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let port = line
            .split(" port ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Files { child, port }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn without_a_binary_the_action_installs_the_release_tarball_of_its_tag() {
    // A release as GitHub's REST API lists it, on loopback: its assets,
    // and the tarball. The tarball's `dupcheck` is a script running the
    // binary under test (the debug binary, 400 MB, would take long to
    // pack); what is tested is finding, fetching and unpacking it.
    let served = tempfile::tempdir().expect("temp");
    let files = Files::serve(served.path());
    let base = format!("http://127.0.0.1:{}", files.port);
    let stage = tempfile::tempdir().expect("temp");
    let folder = "dupcheck-v0.1.0-x86_64-unknown-linux-gnu";
    write(
        stage.path(),
        &format!("{folder}/dupcheck"),
        format!("#!/bin/sh\nexec '{BIN}' \"$@\"\n"),
    );
    write(stage.path(), &format!("{folder}/README.md"), "dupcheck\n");
    let status = Command::new("chmod")
        .arg("755")
        .arg(stage.path().join(folder).join("dupcheck"))
        .status()
        .expect("chmod");
    assert!(status.success());
    let tarball = format!("{folder}.tar.gz");
    std::fs::create_dir_all(served.path().join("assets")).expect("assets");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(served.path().join("assets").join(&tarball))
        .arg("-C")
        .arg(stage.path())
        .arg(folder)
        .status()
        .expect("tar");
    assert!(status.success());
    write(
        served.path(),
        "repos/acme/dupcheck/releases/tags/v0.1.0",
        json!({
            "tag_name": "v0.1.0",
            "assets": [
                {"name": "dupcheck-0.1.0-py3-none-manylinux_2_17_x86_64.whl",
                 "url": format!("{base}/assets/none.whl")},
                {"name": tarball, "url": format!("{base}/assets/{tarball}")},
            ],
        })
        .to_string(),
    );
    let temp = fixture("stats");
    // No dupcheck on this PATH.
    let path = "/usr/bin:/bin";
    let env = [
        ("GITHUB_API_URL", base.as_str()),
        ("GITHUB_ACTION_REPOSITORY", "acme/dupcheck"),
        ("GITHUB_ACTION_REF", "v0.1.0"),
    ];
    let (code, result) = run_action_with(temp.path(), &[("threshold", "90")], path, &env);
    assert_eq!(code, Some(0), "{result:#}");
    let bin = result["step_outputs"]["install"]["bin"]
        .as_str()
        .expect("the install step's bin");
    assert!(
        bin.ends_with(&format!("/dupcheck-v0.1.0/{folder}/dupcheck")),
        "{bin}"
    );
    assert_eq!(result["outputs"]["clones"], "1");
    assert_eq!(result["outputs"]["percentage"], "80");
    // A branch is no release: the install step says so and fails.
    let env = [
        ("GITHUB_API_URL", base.as_str()),
        ("GITHUB_ACTION_REPOSITORY", "acme/dupcheck"),
        ("GITHUB_ACTION_REF", "main"),
    ];
    let (code, result) = run_action_with(temp.path(), &[], path, &env);
    assert_eq!(code, Some(1), "{result:#}");
    assert_eq!(
        ran(&result),
        [(true, Some(1)), (false, None), (false, None), (false, None)]
    );
    // `version` names the release whatever the action's ref.
    let (code, result) = run_action_with(temp.path(), &[("version", "v0.1.0")], path, &env);
    assert_eq!(code, Some(0), "{result:#}");
    assert_eq!(result["outputs"]["clones"], "1");
}
