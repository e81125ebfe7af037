//! A first run that indexes nothing says why: the `.gitignore` rule (file
//! and line) or `--format` that left DIR's source files out, and the flag
//! that lifts it; `--no-gitignore` (or `"gitignore": false`) scans them.
//! The rule applies inside a git repository and outside one alike, as
//! Debian's kernel tarball shows (its top `.gitignore` ends with `/*` and
//! `!/debian/`).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{spawn_with_stderr, stderr_line, write, BIN};

/// A tree whose `.gitignore` ignores everything but `debian/`, with two
/// copies of a function in `src/`.
fn tarball() -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    let merge = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/project/src/util/merge.js"
    ))
    .expect("fixture");
    write(
        temp.path(),
        ".gitignore",
        "# Build outputs\n*.o\n\n/*\n!/debian/\n",
    );
    write(temp.path(), "src/a.js", &merge);
    write(temp.path(), "src/b.js", &merge);
    write(temp.path(), "debian/changelog", "linux (6.12-1) unstable\n");
    temp
}

/// `dupcheck report DIR ARGS` (no cache).
fn report(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("report")
        .arg(dir)
        .arg("--no-cache")
        .args(args)
        .output()
        .expect("run dupcheck report")
}

/// Its stderr's lines.
fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

const IGNORED: &str = "dupcheck: no file indexed: 2 source files are ignored, src/a.js by .gitignore:4: /*; --no-gitignore scans them";

/// Asserts the report on `dir` says why it indexed nothing, and that
/// `--no-gitignore` scans both files and finds their clone.
fn assert_says_why_and_lifts(dir: &Path) {
    let out = report(dir, &[]);
    assert_eq!(out.status.code(), Some(0));
    let said = lines(&out);
    assert_eq!(said[0], IGNORED, "{said:?}");
    assert!(
        said[1].starts_with("dupcheck: scanned 0 files, "),
        "{said:?}"
    );
    let out = report(dir, &["--no-gitignore"]);
    let said = lines(&out);
    assert!(
        said[0].starts_with("dupcheck: scanned 2 files, 34 lines, "),
        "{said:?}"
    );
    assert!(
        !said.iter().any(|l| l.contains("no file indexed")),
        "{said:?}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("src/a.js:2-17  src/b.js:2-17"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_gitignore_that_ignores_everything_is_named_outside_a_git_repository() {
    let temp = tarball();
    assert_says_why_and_lifts(temp.path());
}

#[test]
fn a_gitignore_that_ignores_everything_is_named_inside_a_git_repository() {
    let temp = tarball();
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(temp.path())
        .status()
        .expect("run git init");
    assert!(init.success());
    assert_says_why_and_lifts(temp.path());
}

#[test]
fn the_config_file_lifts_gitignore_too() {
    let temp = tarball();
    write(temp.path(), ".dupcheck.json", r#"{"gitignore": false}"#);
    let said = lines(&report(temp.path(), &[]));
    assert!(
        said[0].starts_with("dupcheck: scanned 2 files, "),
        "{said:?}"
    );
}

#[test]
fn the_server_says_why_its_first_scan_indexed_nothing() {
    let temp = tarball();
    let mut child = spawn_with_stderr(temp.path(), &["--no-cache"]);
    let line = stderr_line(&mut child, "dupcheck: no file indexed", false);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(line, IGNORED);
}

#[test]
fn a_format_filter_that_leaves_every_file_out_is_named() {
    let temp = tarball();
    let said = lines(&report(
        temp.path(),
        &["--no-gitignore", "--format", "python"],
    ));
    assert_eq!(
        said[0],
        "dupcheck: no file indexed: 2 source files are of formats --format leaves out, src/a.js of javascript; add their formats to --format to scan them"
    );
}

#[test]
fn an_empty_directory_says_nothing_more() {
    let temp = tempfile::tempdir().expect("temp dir");
    write(temp.path(), "README.md", "# no code\n");
    let said = lines(&report(temp.path(), &[]));
    assert!(
        said[0].starts_with("dupcheck: scanned 0 files, "),
        "{said:?}"
    );
    assert!(
        !said.iter().any(|l| l.contains("no file indexed")),
        "{said:?}"
    );
}
