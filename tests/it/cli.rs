//! The command line: bad values, the config file, what is scanned, and
//! graceful stop.

use crate::common;

use std::process::Command;

use common::{fixture, sigterm, spawn_with_stderr, stderr_line, write, Server, BIN};
use serde_json::json;

/// Runs dupcheck to completion (it must fail before serving); returns the
/// exit code and stderr.
fn fails(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .args(["--port", "0", "--host", "127.0.0.1"])
        .output()
        .expect("run dupcheck");
    assert!(
        out.stdout.is_empty(),
        "printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Paths of the files a server indexed.
fn indexed(server: &Server) -> Vec<String> {
    let (_, body) = server.get("/api/stats");
    let mut files: Vec<String> = body["statistics"]["formats"]
        .as_object()
        .expect("formats")
        .values()
        .flat_map(|f| f["sources"].as_object().expect("sources").keys().cloned())
        .collect();
    files.sort();
    files
}

#[test]
fn bad_values_exit_2_naming_the_option() {
    let dir = fixture("stats");
    let d = dir.path().to_str().expect("utf-8");
    let (code, err) = fails(&[d, "--mode", "loose"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--mode")
            && err.contains("strict")
            && err.contains("mild")
            && err.contains("weak"),
        "{err}"
    );
    for (args, option) in [
        (vec![d, "--port", "70000"], "--port"),
        (vec![d, "--min-lines", "0"], "--min-lines"),
        (vec![d, "--min-tokens=-3"], "--min-tokens"),
        (vec![d, "--max-size", "huge"], "--max-size"),
        (vec![d, "--format", "cobol"], "--format"),
        (vec![d, "--host", "example"], "--host"),
    ] {
        let (code, err) = fails(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(option), "{args:?}: {err}");
    }
}

#[test]
fn a_missing_directory_exits_2_with_one_line() {
    let (code, err) = fails(&["/no/such/dir"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "dupcheck: error: cannot serve /no/such/dir: No such file or directory (os error 2)\n"
    );
    let temp = fixture("stats");
    let file = temp.path().join("b.js");
    let (code, err) = fails(&[file.to_str().expect("utf-8")]);
    assert_eq!(code, 2);
    assert!(err.ends_with("b.js: not a directory\n"), "{err}");
}

#[test]
fn config_file_errors_name_the_file_and_key() {
    let temp = fixture("stats");
    let d = temp.path().to_str().expect("utf-8");
    write(temp.path(), ".dupcheck.json", r#"{"minTokens": "many"}"#);
    let (code, err) = fails(&[d]);
    assert_eq!(code, 2);
    assert!(
        err.contains(".dupcheck.json: key \"minTokens\" must be an integer >= 1"),
        "{err}"
    );
    write(temp.path(), ".dupcheck.json", "{\"minTokens\": 5,");
    let (code, err) = fails(&[d]);
    assert_eq!(code, 2);
    assert!(err.contains(".dupcheck.json is not valid JSON"), "{err}");
    let (code, err) = fails(&[d, "--config", "/no/such/config.json"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read config file /no/such/config.json"),
        "{err}"
    );
}

#[test]
fn config_file_values_apply_under_the_command_line() {
    let temp = fixture("stats");
    write(
        temp.path(),
        ".dupcheck.json",
        r#"{"minTokens": 500, "format": "javascript"}"#,
    );
    let server = Server::start_in(temp, &[]);
    assert_eq!(indexed(&server), ["b.js", "lib/a.js"]);
    assert_eq!(
        server.get("/api/stats").1["statistics"]["total"]["clones"],
        0
    );
    drop(server);
    let temp = fixture("stats");
    write(
        temp.path(),
        ".dupcheck.json",
        r#"{"minTokens": 500, "colour": "blue"}"#,
    );
    let server = Server::start_in(temp, &["--min-tokens", "50"]);
    assert_eq!(
        server.get("/api/stats").1["statistics"]["total"]["clones"],
        1
    );
}

#[test]
fn unknown_config_keys_warn_on_stderr() {
    let temp = fixture("stats");
    write(temp.path(), ".dupcheck.json", r#"{"colour": "blue"}"#);
    let mut child = spawn_with_stderr(temp.path(), &[]);
    let line = stderr_line(&mut child, "dupcheck: warning", false) + "\n";
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        line.starts_with("dupcheck: warning: config file ")
            && line.ends_with(".dupcheck.json: unknown key \"colour\" ignored\n"),
        "{line}"
    );
}

/// The whole stderr of a server started with `args` and `env`, until its
/// summary line, then stopped (once it said it listens: the scan starts
/// before, and its line may come before the server handles signals).
#[cfg(unix)]
fn stderr_until_ready(args: &[&str], env: &[(&str, &str)]) -> String {
    use std::io::{BufRead, Read};
    let temp = fixture("stats");
    let mut child = std::process::Command::new(BIN)
        .arg(temp.path())
        .args(["--port", "0", "--no-watch", "--no-cache"])
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start dupcheck");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut listening = String::new();
    stdout.read_line(&mut listening).expect("stdout line");
    assert!(listening.contains("listening"), "{listening}");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut all = String::new();
    while !all.contains("dupcheck: scanned") {
        let read = stderr.read_line(&mut all).expect("stderr line");
        assert!(read > 0, "stderr ended before the summary line: {all}");
    }
    sigterm(&child);
    let _ = stderr.read_to_string(&mut all);
    let _ = child.wait();
    all
}

#[cfg(unix)]
#[test]
fn serving_every_interface_is_said_and_logs_have_no_colour_codes_in_a_pipe() {
    let all = stderr_until_ready(&["--host", "0.0.0.0"], &[]);
    let warning = "dupcheck: warning: bound to 0.0.0.0, so reachable from the network, and any Host is served; bind to 127.0.0.1 (--host) or name the hosts to serve (--allowed-host) to refuse the rest\n";
    assert!(all.contains(warning), "{all}");
    let local = stderr_until_ready(
        &["--host", "127.0.0.1"],
        &[("DUPCHECK_LOG", "dupcheck=debug")],
    );
    assert!(!local.contains("warning"), "{local}");
    assert!(local.contains(" DEBUG "), "debug logs were on: {local}");
    assert!(local.contains(" INFO "), "the stop is logged: {local}");
    assert!(!local.contains('\x1b'), "no ANSI escape codes: {local:?}");
}

#[test]
fn ignore_rules_format_filter_and_hidden_files() {
    let temp = fixture("project");
    let copy = std::fs::read_to_string(temp.path().join("src/util/merge.js")).expect("merge.js");
    write(temp.path(), "build/out.js", &copy); // .gitignore: build/
    write(temp.path(), "vendor/lib.js", &copy);
    write(temp.path(), "dist/app.min.js", &copy);
    write(temp.path(), "notes/.ignore", "*.js\n");
    write(temp.path(), "notes/n.js", &copy);
    write(temp.path(), ".cache/x.js", &copy);
    write(temp.path(), "README.md", "# not code\n");
    let server = Server::start_in(
        temp,
        &["--ignore", "**/vendor/**,*.min.js", "--format", "js,python"],
    );
    assert_eq!(
        indexed(&server),
        [
            "py/report.py",
            "py/stats.py",
            "src/app/merge-copy.js",
            "src/app/renamed.js",
            "src/lib/literals.js",
            "src/util/merge.js"
        ]
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_followed_by_link_path_unless_disabled() {
    let outside = fixture("stats");
    let temp = fixture("stats");
    std::os::unix::fs::symlink(outside.path().join("lib"), temp.path().join("linked"))
        .expect("symlink");
    std::os::unix::fs::symlink(temp.path(), temp.path().join("lib/loop")).expect("cycle");
    let server = Server::start_in(temp, &[]);
    assert_eq!(
        indexed(&server),
        ["b.js", "c.py", "lib/a.js", "linked/a.js"]
    );
    let (_, health) = server.get("/api/health");
    assert_eq!(
        health["skipped"],
        json!({"unreadable": 1}),
        "the cycle is skipped"
    );
    drop(server);

    let temp = fixture("stats");
    std::os::unix::fs::symlink(outside.path().join("lib"), temp.path().join("linked"))
        .expect("symlink");
    let server = Server::start_in(temp, &["--noSymlinks"]);
    assert_eq!(indexed(&server), ["b.js", "c.py", "lib/a.js"]);
}

#[cfg(unix)]
#[test]
fn sigterm_stops_gracefully_with_status_0() {
    let temp = fixture("stats");
    let mut server = Server::spawn(temp.path(), &[]);
    server.wait_ready();
    let status = server.terminate();
    assert_eq!(status, Some(0));
}

/// The server says when its index answers checks, then, on its own line,
/// what whole-project clone detection found after it.
#[test]
fn the_scanned_line_comes_before_the_clones_line() {
    let temp = fixture("stats");
    let mut child = spawn_with_stderr(temp.path(), &["--no-watch", "--no-cache"]);
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut lines = Vec::new();
    while lines.len() < 2 {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut stderr, &mut line).expect("stderr line");
        assert!(read > 0, "stderr ended early: {lines:?}");
        if line.starts_with("dupcheck: ") && !line.starts_with("dupcheck: warning") {
            lines.push(line.trim_end().to_owned());
        }
    }
    sigterm(&child);
    let _ = child.wait();
    let (scanned, clones) = (&lines[0], &lines[1]);
    let seconds = |line: &str, before: &str| {
        let rest = line.split(before).nth(1).expect("seconds");
        rest.split(' ')
            .next()
            .expect("number")
            .parse::<f64>()
            .expect("a number")
    };
    assert!(
        scanned.starts_with("dupcheck: scanned 3 files, 20 lines, 154 tokens in ")
            && scanned.ends_with(" s (3 parsed, 0 reused)"),
        "{scanned}"
    );
    assert!(seconds(scanned, " tokens in ") >= 0.0);
    assert!(
        clones.starts_with("dupcheck: 1 clone, 80% duplicated lines, detected in ")
            && clones.ends_with(" s"),
        "{clones}"
    );
    assert!(seconds(clones, "detected in ") >= 0.0);
}

/// Regression: with stderr piped to a reader that went away (`| head -1`),
/// the log line written on stop panicked and the exit status was 101.
#[cfg(unix)]
#[test]
fn a_closed_stderr_never_crashes_the_server() {
    let temp = fixture("stats");
    let mut child = spawn_with_stderr(temp.path(), &["--no-watch"]);
    let line = stderr_line(&mut child, "dupcheck: scanned", false);
    assert!(line.starts_with("dupcheck: scanned 3 files"), "{line}");
    // The reader is dropped: stderr is now a broken pipe.
    sigterm(&child);
    assert_eq!(child.wait().expect("wait").code(), Some(0));
}

#[test]
fn version_and_help() {
    let out = Command::new(BIN).arg("--version").output().expect("run");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "dupcheck 0.1.0\n");
    let out = Command::new(BIN).arg("--help").output().expect("run");
    let help = String::from_utf8_lossy(&out.stdout);
    for option in [
        "--port",
        "--host",
        "--config",
        "--format",
        "--ignore",
        "--min-lines",
        "--min-tokens",
        "--mode",
        "--absolute",
        "--noSymlinks",
        "--skipLocal",
        "--max-size",
        "--max-lines",
        "--max-body",
        "--allowed-origin",
        "--ignoreCase",
        "--ignore-pattern <REGEX>",
        "--store <URL>",
        "--repository <NAME>",
        "--no-gitignore",
    ] {
        assert!(help.contains(option), "{option} missing from --help");
    }
    assert!(
        help.contains(
            "-g, --gitignore               Accepted for jscpd: dupcheck honours .gitignore unless --no-gitignore"
        ),
        "{help}"
    );
}
