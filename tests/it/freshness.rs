//! Freshness (docs/decisions.md, the watcher and the cache): the watcher applies changes without a rescan,
//! statistics after updates equal a fresh scan's, and the cache makes
//! restarts warm without ever being trusted blindly.

use crate::common;

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::{fixture, sigterm, spawn_with_stderr, stderr_line, write, Server};
use serde_json::{json, Value};

/// Polls `probe` until it returns `Some`, for at most 20 s: the watcher
/// works asynchronously, so there is nothing else to wait on.
fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Files a check of `code` names.
fn matched_files(server: &Server, code: &str) -> Vec<String> {
    let (_, body) = server.check(json!({"code": code, "format": "javascript"}));
    let mut files: Vec<String> = body["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            d["codebaseLocation"]["file"]
                .as_str()
                .expect("file")
                .to_owned()
        })
        .collect();
    files.sort();
    files
}

/// `/api/stats` without its timestamps.
fn stats(server: &Server) -> Value {
    let (_, mut body) = server.get("/api/stats");
    body["timestamp"] = Value::Null;
    body["statistics"]["detectionDate"] = Value::Null;
    body
}

fn merge_js() -> String {
    std::fs::read_to_string(format!(
        "{}/testdata/project/src/util/merge.js",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("merge.js")
}

#[test]
fn the_watcher_applies_creations_edits_renames_and_deletions() {
    let server = Server::start("project", &[]);
    let code = merge_js();
    let before = matched_files(&server, &code);
    assert_eq!(
        before,
        [
            "src/app/merge-copy.js",
            "src/types/merge.ts",
            "src/util/merge.js"
        ]
    );

    write(&server.dir, "new/fresh.js", &code);
    eventually("the new file", || {
        matched_files(&server, &code)
            .contains(&"new/fresh.js".to_owned())
            .then_some(())
    });
    let (_, health) = server.get("/api/health");
    assert!(health["lastUpdateTime"].is_string(), "{health}");

    std::fs::rename(
        server.dir.join("new/fresh.js"),
        server.dir.join("new/renamed.js"),
    )
    .expect("rename");
    eventually("the rename", || {
        let files = matched_files(&server, &code);
        (files.contains(&"new/renamed.js".to_owned())
            && !files.contains(&"new/fresh.js".to_owned()))
        .then_some(())
    });

    write(
        &server.dir,
        "src/app/merge-copy.js",
        "export const nothing = 0;\n",
    );
    std::fs::remove_file(server.dir.join("src/types/merge.ts")).expect("delete");
    eventually("the edit and the deletion", || {
        (matched_files(&server, &code) == ["new/renamed.js", "src/util/merge.js"]).then_some(())
    });

    // Ignore rules apply to new files too.
    write(&server.dir, "build/out.js", &code);
    write(&server.dir, "new/late.js", &code);
    eventually("the next file", || {
        matched_files(&server, &code)
            .contains(&"new/late.js".to_owned())
            .then_some(())
    });
    assert!(!matched_files(&server, &code).contains(&"build/out.js".to_owned()));
}

#[test]
fn stats_after_updates_equal_a_fresh_scan() {
    let server = Server::start("project", &[]);
    let code = merge_js();
    write(&server.dir, "a/one.js", &code);
    write(&server.dir, "a/two.js", format!("{code}\n{code}"));
    std::fs::remove_file(server.dir.join("src/app/renamed.js")).expect("delete");
    write(&server.dir, "py/stats.py", "x = 1\n");
    eventually("all changes", || {
        let (_, stats) = server.get("/api/stats");
        let js = &stats["statistics"]["formats"]["javascript"]["sources"];
        let py = &stats["statistics"]["formats"]["python"]["sources"];
        (js.get("a/two.js").is_some()
            && js.get("src/app/renamed.js").is_none()
            && py["py/stats.py"]["lines"] == 1)
            .then_some(())
    });
    let updated = stats(&server);
    let mut fresh = Server::spawn(&server.dir, &["--no-cache", "--no-watch"]);
    fresh.wait_ready();
    assert_json!(updated, stats(&fresh));
}

/// The inotify watches process `pid` holds: one per folder watched.
#[cfg(target_os = "linux")]
fn inotify_watches(pid: u32) -> usize {
    inotify_masks(pid).len()
}

#[cfg(target_os = "linux")]
#[test]
fn the_folders_scanned_are_watched_as_they_come_and_go_and_ignored_ones_never() {
    let temp = fixture("project");
    // An ignored tree (`build/` is in the fixture's .gitignore) as deep as
    // node_modules gets.
    for i in 0..20 {
        write(
            temp.path(),
            &format!("build/deps/d{i}/lib/index.js"),
            "x;\n",
        );
    }
    let server = Server::start_in(temp, &[]);
    let code = merge_js();
    let watches = |n: usize| {
        eventually(&format!("{n} folders watched"), || {
            (inotify_watches(server.pid()) == n).then_some(())
        })
    };
    // DIR, py, rs, src and its four folders.
    watches(8);

    // Folders made at once, their file written before they are watched.
    write(&server.dir, "n1/n2/n3/copy.js", &code);
    eventually("the file in new folders", || {
        matched_files(&server, &code)
            .contains(&"n1/n2/n3/copy.js".to_owned())
            .then_some(())
    });
    watches(11);
    // Watched: an edit there arrives.
    write(
        &server.dir,
        "n1/n2/n3/copy.js",
        "export const nothing = 0;\n",
    );
    eventually("the edit in a new folder", || {
        (!matched_files(&server, &code).contains(&"n1/n2/n3/copy.js".to_owned())).then_some(())
    });

    // Deleted, then made again: watched again.
    std::fs::remove_dir_all(server.dir.join("n1")).expect("delete");
    watches(8);
    write(&server.dir, "n1/n2/n3/again.js", &code);
    eventually("the file in folders made again", || {
        matched_files(&server, &code)
            .contains(&"n1/n2/n3/again.js".to_owned())
            .then_some(())
    });
    watches(11);
    write(
        &server.dir,
        "n1/n2/n3/again.js",
        "export const nothing = 0;\n",
    );
    eventually("the edit in a folder made again", || {
        (!matched_files(&server, &code).contains(&"n1/n2/n3/again.js".to_owned())).then_some(())
    });

    // A folder ignored from now on is no longer watched.
    write(&server.dir, ".gitignore", "build/\nn1/\n");
    watches(8);
}

/// The event masks of the inotify watches process `pid` holds, as the
/// kernel lists them (`mask:` in hexadecimal).
#[cfg(target_os = "linux")]
fn inotify_masks(pid: u32) -> Vec<u32> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fdinfo")).expect("fdinfo");
    let mut masks = Vec::new();
    for fd in fds {
        let info = std::fs::read_to_string(fd.expect("fd").path()).unwrap_or_default();
        for line in info.lines().filter(|l| l.starts_with("inotify wd:")) {
            let mask = line
                .split_whitespace()
                .find_map(|field| field.strip_prefix("mask:"))
                .expect("a watch's mask");
            masks.push(u32::from_str_radix(mask, 16).expect("a hexadecimal mask"));
        }
    }
    masks
}

/// A process reading the tree (a build, a grep, an editor's indexer) costs
/// the server nothing: the system is asked for changes only, not for files
/// opened, read or closed unwritten, so none of those reaches the watch.
#[cfg(target_os = "linux")]
#[test]
fn files_opened_and_read_are_not_watched_for() {
    const IN_ACCESS: u32 = 0x1;
    const IN_MODIFY: u32 = 0x2;
    const IN_CLOSE_NOWRITE: u32 = 0x10;
    const IN_OPEN: u32 = 0x20;
    const IN_CREATE: u32 = 0x100;
    const IN_DELETE: u32 = 0x200;
    let server = Server::start_in(fixture("project"), &[]);
    let masks = eventually("the folders watched", || {
        let masks = inotify_masks(server.pid());
        (masks.len() == 8).then_some(masks)
    });
    for mask in masks {
        assert_eq!(
            mask & (IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE),
            0,
            "mask {mask:#x}"
        );
        let changes = IN_MODIFY | IN_CREATE | IN_DELETE;
        assert_eq!(mask & changes, changes, "mask {mask:#x}");
    }
}

/// Runs dupcheck on `dir` until its first scan is summarized; returns the
/// summary line from stderr, and the child (to stop).
fn start_and_read_summary(dir: &Path, args: &[&str]) -> (String, Child) {
    let mut args = args.to_vec();
    args.push("--no-watch");
    let mut child = spawn_with_stderr(dir, &args);
    (stderr_line(&mut child, "dupcheck: scanned", true), child)
}

fn stop(child: Child) {
    sigterm(&child);
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `(N parsed, M reused)` part of a summary line.
fn parsed_reused(summary: &str) -> &str {
    let start = summary.find('(').expect("(");
    &summary[start..=summary[start..].find(')').expect(")") + start]
}

#[cfg(unix)]
#[test]
fn warm_restarts_reuse_the_cache_and_never_trust_a_bad_one() {
    needs_formats!(project);
    let temp = fixture("project");
    let dir = temp.path();
    let (summary, child) = start_and_read_summary(dir, &[]);
    assert_eq!(parsed_reused(&summary), "(9 parsed, 0 reused)", "{summary}");
    stop(child);
    let cache = dir.join(".dupcheck-cache");
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore"))
            .expect(".gitignore")
            .lines()
            .last(),
        Some("*")
    );

    let (summary, child) = start_and_read_summary(dir, &[]);
    assert_eq!(parsed_reused(&summary), "(0 parsed, 9 reused)", "{summary}");
    stop(child);

    write(dir, "py/stats.py", "def changed():\n    return 1\n");
    let (summary, child) = start_and_read_summary(dir, &[]);
    assert_eq!(parsed_reused(&summary), "(1 parsed, 8 reused)", "{summary}");
    stop(child);

    // Another mode does not change tokens (each keeps its class, and every
    // mode is derived from them): the cache applies.
    let (summary, child) = start_and_read_summary(dir, &["--mode", "weak"]);
    assert_eq!(parsed_reused(&summary), "(0 parsed, 9 reused)", "{summary}");
    stop(child);

    let file = cache.join("index-v1.bin");
    let mut bytes = std::fs::read(&file).expect("cache file");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, &bytes).expect("corrupt");
    let (summary, child) = start_and_read_summary(dir, &["--mode", "weak"]);
    assert_eq!(parsed_reused(&summary), "(9 parsed, 0 reused)", "{summary}");
    stop(child);
    std::fs::write(&file, &bytes[..100]).expect("truncate");
    let (summary, child) = start_and_read_summary(dir, &["--mode", "weak"]);
    assert_eq!(parsed_reused(&summary), "(9 parsed, 0 reused)", "{summary}");
    stop(child);
    let (summary, child) = start_and_read_summary(dir, &["--mode", "weak"]);
    assert_eq!(
        parsed_reused(&summary),
        "(0 parsed, 9 reused)",
        "rebuilt: {summary}"
    );
    stop(child);
    // Comparing without case changes tokens: the cache does not apply.
    let (summary, child) = start_and_read_summary(dir, &["--ignoreCase"]);
    assert_eq!(parsed_reused(&summary), "(9 parsed, 0 reused)", "{summary}");
    stop(child);
}

#[cfg(unix)]
#[test]
fn a_warm_start_over_the_same_files_takes_the_kept_clone_list() {
    const KEPT: &str = " (the last run's, kept in the cache)";
    let temp = fixture("project");
    let dir = temp.path();
    let list = dir.join(".dupcheck-cache/clones-v1.bin");
    // The clones line of a start with `args` (the line after the scan's),
    // and the child (to stop).
    let clones_line = |args: &[&str]| {
        use std::io::BufRead;
        let mut args = args.to_vec();
        args.push("--no-watch");
        let mut child = spawn_with_stderr(dir, &args);
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let mut next = || lines.next().expect("a line").expect("stderr");
        assert!(next().starts_with("dupcheck: scanned"));
        (next(), child)
    };
    // "N clones, P% duplicated lines" of a clones line.
    let counts = |line: &str| line.split(", detected in").next().map(str::to_owned);

    let (cold, child) = clones_line(&[]);
    assert!(
        cold.contains(" clones, ") && !cold.ends_with(KEPT),
        "{cold}"
    );
    eventually("the clone list kept", || list.exists().then_some(()));
    stop(child);

    let (warm, child) = clones_line(&[]);
    assert!(warm.ends_with(KEPT), "{warm}");
    assert_eq!(counts(&warm), counts(&cold));
    stop(child);

    // Other settings, or other files: detected again (and kept anew).
    let (mild, child) = clones_line(&["--mode", "mild"]);
    assert!(!mild.ends_with(KEPT), "{mild}");
    stop(child);
    let (again, child) = clones_line(&["--mode", "mild"]);
    assert!(again.ends_with(KEPT), "{again}");
    stop(child);
    write(dir, "py/stats.py", "def changed():\n    return 1\n");
    let (changed, child) = clones_line(&["--mode", "mild"]);
    assert!(!changed.ends_with(KEPT), "{changed}");
    stop(child);
}

/// The summary line and the clones line of a start on `dir` with `args`
/// (no watcher), and the child (to stop).
fn start_and_read_both_lines(dir: &Path, args: &[&str]) -> (String, String, Child) {
    use std::io::BufRead;
    let mut args = args.to_vec();
    args.push("--no-watch");
    let mut child = spawn_with_stderr(dir, &args);
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut next = || lines.next().expect("a line").expect("stderr");
    let summary = next();
    assert!(summary.starts_with("dupcheck: scanned"), "{summary}");
    (summary, next(), child)
}

/// What the watcher applies reaches the cache as journal records, never a
/// rewrite of the cache file, and the clone list is kept for the files as
/// they are: a restart after a stop at any moment (here SIGKILL, which
/// leaves no time to flush anything) parses nothing and takes the list.
#[cfg(unix)]
#[test]
fn updates_are_journaled_and_a_restart_after_any_stop_reuses_them() {
    const KEPT: &str = " (the last run's, kept in the cache)";
    let temp = fixture("project");
    let dir = temp.path();
    let cache = dir.join(".dupcheck-cache");
    let index = cache.join("index-v1.bin");
    let journal = cache.join("index-v1.journal");
    let list = cache.join("clones-v1.bin");
    let read = |path: &Path| std::fs::read(path).ok();

    let mut server = Server::spawn(dir, &[]);
    server.wait_ready();
    eventually("the cache and the clone list", || {
        (index.exists() && list.exists()).then_some(())
    });
    let written = read(&index);
    let kept = read(&list);
    assert!(!journal.exists());

    // A copy of merge.js added, and stats.py changed.
    write(dir, "src/app/third.js", merge_js());
    write(dir, "py/stats.py", "def changed():\n    return 1\n");
    eventually("the copy indexed", || {
        let files = matched_files(&server, &merge_js());
        files.contains(&"src/app/third.js".to_owned()).then_some(())
    });
    eventually("the clone list of the files as they are", || {
        (journal.exists() && read(&list) != kept).then_some(())
    });
    let status = std::process::Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    assert_eq!(read(&index), written, "the cache file was rewritten");

    let (summary, clones, child) = start_and_read_both_lines(dir, &[]);
    assert_eq!(
        parsed_reused(&summary),
        "(0 parsed, 10 reused)",
        "{summary}"
    );
    assert!(clones.ends_with(KEPT), "{clones}");
    stop(child);

    // Edited while stopped: the next start parses that file alone, and
    // appends it to the journal too.
    let journaled = read(&journal).expect("journal").len();
    write(dir, "src/app/third.js", "export const gone = 1;\n");
    let (summary, _, child) = start_and_read_both_lines(dir, &[]);
    assert_eq!(parsed_reused(&summary), "(1 parsed, 9 reused)", "{summary}");
    stop(child);
    assert!(read(&journal).expect("journal").len() > journaled);
    assert_eq!(read(&index), written);
    let (summary, clones, child) = start_and_read_both_lines(dir, &[]);
    assert_eq!(
        parsed_reused(&summary),
        "(0 parsed, 10 reused)",
        "{summary}"
    );
    assert!(clones.ends_with(KEPT), "{clones}");
    stop(child);
}

#[test]
fn no_cache_writes_nothing_and_cache_dir_moves_it() {
    let temp = fixture("stats");
    let server = Server::start_in(temp, &["--no-cache"]);
    assert!(!server.dir.join(".dupcheck-cache").exists());
    drop(server);
    let elsewhere = tempfile::tempdir().expect("temp");
    let temp = fixture("stats");
    let server = Server::start_in(
        temp,
        &[
            "--cache-dir",
            elsewhere.path().join("c").to_str().expect("utf-8"),
        ],
    );
    eventually("the cache file", || {
        elsewhere
            .path()
            .join("c/index-v1.bin")
            .exists()
            .then_some(())
    });
    assert!(!server.dir.join(".dupcheck-cache").exists());
}

/// A file of 150 KB (its text packed in blocks of 64 KiB) with a copied
/// function in its third block, among lines of accented comments: a warm
/// start takes its packed text from the cache, and every answer quoting
/// it (a check, the clone list, a clone's lines) is the cold start's, to
/// the column.
#[cfg(unix)]
#[test]
fn a_warm_start_quotes_a_large_file_from_its_kept_text_as_the_cold_one_did() {
    needs_formats!("c");
    const COPIED: &str = "\
int copied_sum(const int *values, int count)
{
\t/* somme été */ int total = 0;
\tfor (int i = 0; i < count; i++) {
\t\tif (values[i] > 0)
\t\t\ttotal += values[i] * 2;
\t\telse
\t\t\ttotal -= values[i];
\t}
\treturn total;
}";
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = temp.path();
    let filler = |from: usize, to: usize| -> String {
        (from..to)
            .map(|i| format!("int reg_{i} = 0x{i:x}; /* registre n° {i}, réglé */\n"))
            .collect()
    };
    // The copy starts on line 3,001, past 130,000 bytes.
    let big = format!("{}{COPIED}\n{}", filler(0, 3_000), filler(3_000, 3_400));
    assert!(big.len() > 150_000 && big[..big.find("int copied").unwrap()].len() > 131_072);
    write(dir, "big.c", &big);
    write(dir, "small.c", format!("/* la copie */\n{COPIED}\n"));
    let args = ["--mode", "strict", "--no-watch"];
    let answers = |server: &Server| {
        let (status, check) = server.check(json!({"code": COPIED, "format": "c"}));
        assert_eq!(status, 200, "{check}");
        let (status, list) = server.get("/api/clones?limit=10");
        assert_eq!(status, 200, "{list}");
        let id = list["clones"][0]["id"].as_str().expect("an id").to_owned();
        let (status, clone) = server.get(&format!("/api/clone?id={id}"));
        assert_eq!(status, 200, "{clone}");
        (check, list, clone)
    };

    let mut cold = Server::spawn(dir, &args);
    cold.wait_ready();
    let cold_answers = answers(&cold);
    assert_eq!(cold.terminate(), Some(0));
    let (summary, child) = start_and_read_summary(dir, &["--mode", "strict"]);
    assert_eq!(parsed_reused(&summary), "(0 parsed, 2 reused)", "{summary}");
    stop(child);
    let mut warm = Server::spawn(dir, &args);
    warm.wait_ready();
    let warm_answers = answers(&warm);
    assert_eq!(warm.terminate(), Some(0));

    let (check, list, clone) = &cold_answers;
    let in_big: Vec<&Value> = check["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .filter(|d| d["codebaseLocation"]["file"] == "big.c")
        .collect();
    assert_eq!(in_big.len(), 1, "{check}");
    let at = &in_big[0]["codebaseLocation"];
    assert_eq!(
        (
            &at["startLine"],
            &at["endLine"],
            &at["startColumn"],
            &at["endColumn"]
        ),
        (&json!(3001), &json!(3011), &json!(1), &json!(2)),
        "{at}"
    );
    assert_eq!(at["fragment"], COPIED);
    assert_eq!(list["clones"].as_array().map(Vec::len), Some(1), "{list}");
    // The clone's lines, and the columns of a token after accented
    // letters (in characters: 18, where bytes would say 19).
    let side = |file: &str| {
        ["first", "second"]
            .into_iter()
            .map(|side| &clone[side])
            .find(|place| place["file"] == file)
            .unwrap_or_else(|| panic!("{file} in {clone}"))
    };
    let (first, second) = (side("big.c"), side("small.c"));
    assert_eq!(
        (&first["startLine"], &first["endLine"]),
        (&json!(3001), &json!(3011))
    );
    assert_eq!(
        (&first["text"], &second["text"]),
        (&json!(COPIED), &json!(COPIED))
    );
    let int_at = |place: &Value, line: u64| {
        let tokens = place["tokens"].as_array().expect("tokens");
        tokens.contains(&json!([line, 18, line, 21]))
    };
    assert!(int_at(first, 3003) && int_at(second, 4), "{clone}");
    assert_eq!(warm_answers, cold_answers);
}
