//! The pre-commit hooks of `.pre-commit-hooks.yaml`, run by pre-commit
//! itself (`pre-commit try-repo`, from target/test-venv, pinned in
//! tests/requirements.txt) in a temporary git repository, with the binary
//! under test first on PATH: a new copy fails the commit's check and names
//! its files and lines, and the same repository without it passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{write, BIN};

/// A tool of the tests' Python environment (tests/setup installs it);
/// a missing tool fails the test, naming the fix.
pub fn venv_tool(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-venv/bin")
        .join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `bash tests/setup` (it installs tests/requirements.txt)",
        path.display()
    );
    path
}

/// PATH with the folder of the binary under test first.
pub fn path_with_binary() -> String {
    let bin_dir = Path::new(BIN).parent().expect("binary's folder");
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs git in `dir`, which must succeed.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=dupcheck tests",
            "-c",
            "user.email=tests@dupcheck.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A git repository holding only this project's `.pre-commit-hooks.yaml`,
/// committed: what `try-repo` reads of a hook repository with
/// `language: system` hooks (it installs nothing).
fn hook_repository() -> tempfile::TempDir {
    let repo = tempfile::tempdir().expect("temp");
    let manifest =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"))
            .expect(".pre-commit-hooks.yaml");
    write(repo.path(), ".pre-commit-hooks.yaml", manifest);
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-qm", "hooks"]);
    repo
}

/// `pre-commit try-repo HOOKS HOOK --all-files` in `project`; its
/// combined output.
fn try_repo(project: &Path, hooks: &Path, hook: &str, home: &Path) -> (Output, String) {
    let out = Command::new(venv_tool("pre-commit"))
        .current_dir(project)
        .args([
            "try-repo",
            &hooks.display().to_string(),
            hook,
            "--all-files",
        ])
        .env("PATH", path_with_binary())
        .env("PRE_COMMIT_HOME", home)
        .env("PRE_COMMIT_COLOR", "never")
        .env("GIT_AUTHOR_NAME", "dupcheck tests")
        .env("GIT_AUTHOR_EMAIL", "tests@dupcheck.invalid")
        .env("GIT_COMMITTER_NAME", "dupcheck tests")
        .env("GIT_COMMITTER_EMAIL", "tests@dupcheck.invalid")
        .output()
        .expect("run pre-commit");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

/// The function of the `stats` fixture: 8 lines, 61 tokens.
fn area() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/stats/lib/a.js"))
        .expect("a.js")
}

/// Code with no copy anywhere.
const OTHER: &str = "export function total(items) {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.count;\n  }\n  return sum;\n}\n";

#[test]
fn the_threshold_hook_fails_on_a_new_copy_naming_its_lines_and_passes_without_it() {
    let hooks = hook_repository();
    let home = tempfile::tempdir().expect("temp");
    let project = tempfile::tempdir().expect("temp");
    let dir = project.path();
    write(dir, "src/area.js", area());
    write(dir, "src/total.js", OTHER);
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    let (out, text) = try_repo(dir, hooks.path(), "dupcheck", home.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("dupcheck (duplicated lines within the threshold)")
            && text.contains("Passed"),
        "{text}"
    );
    // A copy of the function, in a new file.
    write(dir, "lib/copy.js", format!("// copied\n{}", area()));
    git(dir, &["add", "-A"]);
    let (out, text) = try_repo(dir, hooks.path(), "dupcheck", home.path());
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("- exit code: 1"), "{text}");
    assert!(
        text.contains(
            "\
lines  tokens  format      first            second
    8      61  javascript  lib/copy.js:2-9  src/area.js:1-8
"
        ),
        "{text}"
    );
    assert!(
        text.contains("threshold: 66.67% duplicated lines is above 0%"),
        "{text}"
    );
}

#[test]
fn the_baseline_hook_passes_known_clones_and_fails_on_a_new_one() {
    let hooks = hook_repository();
    let home = tempfile::tempdir().expect("temp");
    let project = tempfile::tempdir().expect("temp");
    let dir = project.path();
    write(dir, "src/area.js", area());
    write(dir, "src/shape.js", area());
    write(dir, "src/total.js", OTHER);
    // The baseline: the JSON report of today's clone.
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(["report", "--no-cache", "-r", "json"])
        .output()
        .expect("dupcheck report");
    assert_eq!(out.status.code(), Some(0));
    write(dir, "dupcheck-baseline.json", &out.stdout);
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    let (out, text) = try_repo(dir, hooks.path(), "dupcheck-baseline", home.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Passed"), "{text}");
    write(dir, "lib/copy.js", area());
    git(dir, &["add", "-A"]);
    let (out, text) = try_repo(dir, hooks.path(), "dupcheck-baseline", home.path());
    assert_eq!(out.status.code(), Some(1), "{text}");
    for line in [
        "    8      61  javascript  lib/copy.js:1-8  src/area.js:1-8   new",
        "    8      61  javascript  lib/copy.js:1-8  src/shape.js:1-8  new",
        "    8      61  javascript  src/area.js:1-8  src/shape.js:1-8  known",
        "baseline: 2 new clones, 1 known",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
}

#[test]
fn the_manifest_and_the_documented_configuration_validate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(venv_tool("pre-commit"))
        .arg("validate-manifest")
        .arg(root.join(".pre-commit-hooks.yaml"))
        .output()
        .expect("run pre-commit");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let docs = std::fs::read_to_string(root.join("docs/pre-commit.md")).expect("docs");
    let start = docs.find("```yaml\n").expect("a yaml block") + "```yaml\n".len();
    let end = start + docs[start..].find("```").expect("its end");
    let temp = tempfile::tempdir().expect("temp");
    write(temp.path(), ".pre-commit-config.yaml", &docs[start..end]);
    let out = Command::new(venv_tool("pre-commit"))
        .arg("validate-config")
        .arg(temp.path().join(".pre-commit-config.yaml"))
        .output()
        .expect("run pre-commit");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(docs[start..end].contains("id: dupcheck\n"));
}
