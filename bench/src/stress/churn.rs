//! Scenario `churn`: the watcher under file churn.
//!
//! A server watches a copy of the fixture (watcher and cache on, the
//! defaults) while 300 deterministic file operations run over about 40 s:
//! JavaScript, TypeScript, Python and Rust files created (fixture code, so
//! often duplicated), rewritten, cut short, emptied, renamed (to other
//! folders, other languages, `.txt`), deleted, written in bursts, made
//! unreadable (`chmod 000`) and readable again, folders renamed and
//! deleted; and, once each, a symbolic link loop (a -> b -> a), a folder
//! link to its parent, links to a file and to a folder, a dangling link,
//! 10 MB `.js` files (one later shrunk), a binary `.py` (NUL bytes) and a
//! `.py` that is not UTF-8. A check and a health request every 25 operations
//! make sure it keeps serving.
//!
//! Then, once `/api/stats` gives the same answer twice 2 s apart, its
//! `statistics.total` and `statistics.formats` must equal those of a fresh
//! server (`--no-cache --no-watch`) on the same folder; differences are
//! printed file by file. Permissions are restored before the folder is
//! removed.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fixture::{self, Lcg, SOURCES};
use crate::http::{self, Conn};
use crate::report::Row;
use crate::server::{Server, READY_LIMIT};

/// File operations made.
const OPERATIONS: usize = 300;
/// The pause after each operation.
const PAUSE: Duration = Duration::from_millis(110);
/// The longest the operations may take in all.
const CHURN_BUDGET: Duration = Duration::from_secs(120);
/// How often the server is asked something during the churn.
const ASK_EVERY: usize = 25;
/// The gap between two equal `/api/stats` answers that makes it quiet.
const QUIET_GAP: Duration = Duration::from_secs(2);
/// The longest the wait for quiet lasts.
const QUIET_LIMIT: Duration = Duration::from_secs(60);
/// Extensions of the files made, with the format of their content.
const EXTENSIONS: [(&str, &str); 4] = [
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
    ("rs", "rust"),
];
/// Folders files are made in.
const FOLDERS: [&str; 5] = [
    "churn/a",
    "churn/b",
    "churn/a/deep",
    "churn/c/d/e",
    "src/more",
];

/// The files the churn knows of, and its random state.
struct Churn<'a> {
    dir: &'a Path,
    rng: Lcg,
    /// Regular files, relative to `dir`.
    files: Vec<String>,
    /// Files made unreadable.
    locked: Vec<String>,
    /// Names made so far, for unique names.
    made: usize,
}

/// Runs the scenario.
pub fn run() -> Row {
    let mut row = Row::new("churn");
    let dir = fixture::project_copy();
    let Some(mut watched) = Server::start_ready("churn", dir.path(), &[], READY_LIMIT, &mut row)
    else {
        return row;
    };
    if let Err(err) = std::fs::create_dir_all(dir.path().join("churn")) {
        row.fail(format!("create the churn folder: {err}"));
    }
    let mut churn = Churn {
        dir: dir.path(),
        rng: Lcg::new(2026),
        files: SOURCES.iter().map(|(_, rel)| (*rel).to_owned()).collect(),
        locked: Vec::new(),
        made: 0,
    };
    let started = Instant::now();
    let mut conn = None;
    for i in 0..OPERATIONS {
        if row.over_budget(started, CHURN_BUDGET, format_args!("{i} operations")) {
            break;
        }
        if let Err(err) = churn.step(i) {
            eprintln!("stress: churn: operation {i} could not be made: {err}");
        }
        if i % ASK_EVERY == ASK_EVERY - 1 {
            ask(&mut row, watched.port, &mut conn);
            if let Some(crash) = watched.crash() {
                row.fail(format!("during the churn: {crash}"));
                restore_permissions(dir.path());
                return row;
            }
        }
        thread::sleep(PAUSE);
    }
    let churned = started.elapsed();
    let quiet_started = Instant::now();
    let after = quiet_stats(&mut row, watched.port);
    let quiet = quiet_started.elapsed();
    row.figure(format!(
        "{OPERATIONS} operations in {:.0} s, quiet after {:.1} s",
        churned.as_secs_f64(),
        quiet.as_secs_f64()
    ));
    let args = ["--no-cache", "--no-watch"];
    if let Some(fresh) =
        Server::start_ready("churn-fresh", dir.path(), &args, READY_LIMIT, &mut row)
    {
        row.requests += 1;
        let scanned = Conn::open(fresh.port)
            .and_then(|mut conn| conn.get("/api/stats"))
            .map_err(|err| err.to_string())
            .and_then(|res| res.json_object().map(Value::Object));
        match (after, scanned) {
            (Some(after), Ok(scanned)) => {
                let differences = compare(&after["statistics"], &scanned["statistics"]);
                let total = &scanned["statistics"]["total"];
                row.figure(format!(
                    "{} files, {} clones, {} differences from a fresh scan",
                    total["sources"],
                    total["clones"],
                    differences.len()
                ));
                for difference in differences {
                    row.fail(format!("watched and fresh statistics differ: {difference}"));
                }
            }
            (None, _) => {}
            (_, Err(err)) => row.fail(format!("stats of the fresh server: {err}")),
        }
        compare_skipped(watched.port, &fresh.ready);
        fresh.finish(&mut row);
    }
    watched.finish(&mut row);
    restore_permissions(dir.path());
    row
}

impl Churn<'_> {
    /// Makes operation `i`: a special one at fixed places, else a random one.
    fn step(&mut self, i: usize) -> std::io::Result<()> {
        let dir = self.dir;
        match i {
            30 => {
                std::os::unix::fs::symlink("loop-b.js", dir.join("churn/loop-a.js"))?;
                std::os::unix::fs::symlink("loop-a.js", dir.join("churn/loop-b.js"))
            }
            60 => {
                std::fs::create_dir_all(dir.join("churn/b"))?;
                std::os::unix::fs::symlink("..", dir.join("churn/b/up"))
            }
            90 => std::fs::write(dir.join("churn/big.js"), ten_mb_of("src/util/merge.js")),
            120 => {
                let mut binary = b"def f(a):\n    return a\n".to_vec();
                binary.extend_from_slice(&[0, 1, 2, 0, 255, 0]);
                binary.extend_from_slice(fixture::source("py/stats.py").as_bytes());
                std::fs::write(dir.join("churn/binary.py"), binary)
            }
            150 => {
                let mut latin1 = fixture::source("py/report.py").into_bytes();
                latin1.extend_from_slice(b"\n# caf\xE9 cr\xE8me\n");
                std::fs::write(dir.join("churn/latin1.py"), latin1)
            }
            180 => std::os::unix::fs::symlink(
                "../src/util/merge.js",
                dir.join("churn/link-to-merge.js"),
            ),
            210 => std::os::unix::fs::symlink("nowhere.py", dir.join("churn/dangling.py")),
            240 => std::fs::write(
                dir.join("churn/big.js"),
                fixture::source("src/app/renamed.js"),
            ),
            270 => std::os::unix::fs::symlink("../src", dir.join("churn/alias")),
            285 => std::fs::write(
                dir.join("churn/big-again.js"),
                ten_mb_of("src/app/merge-copy.js"),
            ),
            _ => self.random_step(),
        }
    }

    /// One random operation.
    fn random_step(&mut self) -> std::io::Result<()> {
        let dir = self.dir;
        let roll = self.rng.below(100);
        if self.files.is_empty() || roll < 25 {
            let (ext, format) = *self.rng.pick(&EXTENSIONS);
            let rel = self.new_name(ext);
            let text = self.code(format);
            fixture::write(dir, &rel, text);
            self.files.push(rel);
            return Ok(());
        }
        let at = self.rng.below(self.files.len());
        let rel = self.files[at].clone();
        let path = dir.join(&rel);
        match roll {
            // Rewritten: other code, more code, cut short or emptied.
            25..=49 => {
                if self.locked.contains(&rel) {
                    return Ok(());
                }
                let format = format_of(&rel);
                let text = match self.rng.below(4) {
                    0 => self.code(format),
                    1 => std::fs::read_to_string(&path)? + &self.code(format),
                    2 => {
                        let old = std::fs::read_to_string(&path)?;
                        let mut cut = old.len() / 2;
                        while !old.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        old[..cut].to_owned()
                    }
                    _ => String::new(),
                };
                std::fs::write(&path, text)
            }
            // Renamed: elsewhere, to another language, or out of the index.
            50..=64 => {
                let ext = match self.rng.below(10) {
                    0 => "txt",
                    1 => self.rng.pick(&EXTENSIONS).0,
                    _ => rel.rsplit('.').next().unwrap_or("js"),
                };
                let to = self.new_name(ext);
                std::fs::create_dir_all(dir.join(&to).parent().unwrap_or(dir))?;
                std::fs::rename(&path, dir.join(&to))?;
                if let Some(locked) = self.locked.iter_mut().find(|l| **l == rel) {
                    locked.clone_from(&to);
                }
                if ext == "txt" {
                    self.files.swap_remove(at);
                } else {
                    self.files[at] = to;
                }
                Ok(())
            }
            // Deleted.
            65..=74 => {
                self.files.swap_remove(at);
                self.locked.retain(|l| *l != rel);
                std::fs::remove_file(&path)
            }
            // Made unreadable, or readable again.
            75..=81 => {
                if self.locked.contains(&rel) {
                    return Ok(());
                }
                self.locked.push(rel);
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000))
            }
            82..=86 => match self.locked.pop() {
                Some(locked) => std::fs::set_permissions(
                    dir.join(locked),
                    std::fs::Permissions::from_mode(0o644),
                ),
                None => Ok(()),
            },
            // A folder renamed or deleted, with its files.
            87..=91 => {
                let folder = *self.rng.pick(&FOLDERS);
                if !dir.join(folder).is_dir() {
                    return Ok(());
                }
                let prefix = format!("{folder}/");
                if self.rng.chance(50) {
                    self.made += 1;
                    let to = format!("{folder}-moved-{}", self.made);
                    std::fs::rename(dir.join(folder), dir.join(&to))?;
                    for file in self.files.iter_mut().chain(self.locked.iter_mut()) {
                        if let Some(rest) = file.strip_prefix(&prefix) {
                            *file = format!("{to}/{rest}");
                        }
                    }
                } else {
                    std::fs::remove_dir_all(dir.join(folder))?;
                    self.files.retain(|f| !f.starts_with(&prefix));
                    self.locked.retain(|f| !f.starts_with(&prefix));
                }
                Ok(())
            }
            // A burst of writes to one file.
            _ => {
                if self.locked.contains(&rel) {
                    return Ok(());
                }
                let format = format_of(&rel);
                for _ in 0..5 {
                    let text = self.code(format);
                    std::fs::write(&path, text)?;
                }
                Ok(())
            }
        }
    }

    /// A new file name with extension `ext` in one of the folders.
    fn new_name(&mut self, ext: &str) -> String {
        self.made += 1;
        let folder = self.rng.pick(&FOLDERS);
        format!("{folder}/f{}.{ext}", self.made)
    }

    /// Fixture code of `format` (or of its family): a whole file, now and
    /// then with a line of its own so that copies are not all identical.
    fn code(&mut self, format: &str) -> String {
        let candidates: Vec<&str> = SOURCES
            .iter()
            .filter(|(f, _)| family(f) == family(format))
            .map(|(_, rel)| *rel)
            .collect();
        let rel = *self.rng.pick(&candidates);
        let mut text = fixture::source(rel);
        if self.rng.chance(30) {
            self.made += 1;
            let line = match format {
                "python" => format!("\nVALUE_{} = {}\n", self.made, self.made),
                "rust" => format!("\npub const VALUE_{}: u32 = {};\n", self.made, self.made),
                _ => format!("\nexport const value{} = {};\n", self.made, self.made),
            };
            text.push_str(&line);
        }
        text
    }
}

/// The fixture file `rel` repeated to 10 MB (over the 1 MB `--max-size`).
fn ten_mb_of(rel: &str) -> String {
    let unit = fixture::source(rel);
    unit.repeat((10 << 20) / unit.len() + 1)
}

/// The formats that share code: TypeScript takes JavaScript too.
fn family(format: &str) -> &str {
    if format == "typescript" {
        "javascript"
    } else {
        format
    }
}

/// The format of a file's content, by its extension.
fn format_of(rel: &str) -> &'static str {
    let ext = rel.rsplit('.').next().unwrap_or_default();
    EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map_or("javascript", |(_, format)| *format)
}

/// A check and a health request, which must both be 200 JSON.
fn ask(row: &mut Row, port: u16, conn: &mut Option<Conn>) {
    let open = match http::reuse(conn, port, http::TIMEOUT) {
        Ok(open) => open,
        Err(err) => {
            row.fail(format!("cannot connect during the churn: {err}"));
            return;
        }
    };
    let check = json!({"code": fixture::source("src/util/merge.js"), "format": "javascript"});
    for what in ["check", "health"] {
        let answer = if what == "check" {
            open.post_json("/api/check", &check.to_string())
        } else {
            open.get("/api/health")
        };
        row.requests += 1;
        match answer {
            Ok(res) if res.status == 200 && res.json_object().is_ok() => {}
            Ok(res) => row.fail(format!("{what} during the churn: {}", res.summary())),
            Err(err) => {
                row.fail(format!("{what} during the churn: {err}"));
                *conn = None;
                return;
            }
        }
    }
}

/// Polls `/api/stats` until two answers 2 s apart are equal (timestamps
/// aside), and returns the last.
fn quiet_stats(row: &mut Row, port: u16) -> Option<Value> {
    let started = Instant::now();
    let mut last: Option<Value> = None;
    while started.elapsed() < QUIET_LIMIT {
        row.requests += 1;
        let answer = Conn::open(port)
            .and_then(|mut conn| conn.get("/api/stats"))
            .map_err(|err| err.to_string())
            .and_then(|res| match res.status {
                200 => res.json_object().map(Value::Object),
                _ => Err(res.summary()),
            });
        let stats = match answer {
            Ok(stats) => stats,
            Err(err) => {
                row.fail(format!("stats after the churn: {err}"));
                return None;
            }
        };
        let same = last.as_ref().is_some_and(|l| {
            l["statistics"]["total"] == stats["statistics"]["total"]
                && l["statistics"]["formats"] == stats["statistics"]["formats"]
        });
        if same {
            return Some(stats);
        }
        last = Some(stats);
        thread::sleep(QUIET_GAP);
    }
    row.fail(format!(
        "the watched server's statistics still changed after {} s",
        QUIET_LIMIT.as_secs()
    ));
    last
}

/// The differences between two `statistics` objects, file by file.
fn compare(watched: &Value, fresh: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if watched["total"] != fresh["total"] {
        out.push(format!(
            "total: watched {} / fresh {}",
            watched["total"], fresh["total"]
        ));
    }
    let empty = serde_json::Map::new();
    let formats = |stats: &Value| stats["formats"].as_object().cloned().unwrap_or_default();
    let (a, b) = (formats(watched), formats(fresh));
    for name in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        let (Some(wa), Some(fb)) = (a.get(name), b.get(name)) else {
            out.push(format!(
                "format {name}: only in the {} server",
                if a.contains_key(name) {
                    "watched"
                } else {
                    "fresh"
                }
            ));
            continue;
        };
        if wa["total"] != fb["total"] {
            out.push(format!(
                "format {name} total: watched {} / fresh {}",
                wa["total"], fb["total"]
            ));
        }
        let sources_a = wa["sources"].as_object().unwrap_or(&empty);
        let sources_b = fb["sources"].as_object().unwrap_or(&empty);
        for file in sources_a
            .keys()
            .chain(sources_b.keys().filter(|k| !sources_a.contains_key(*k)))
        {
            match (sources_a.get(file), sources_b.get(file)) {
                (Some(x), Some(y)) if x != y => {
                    out.push(format!("{name} file {file}: watched {x} / fresh {y}"))
                }
                (Some(_), None) => {
                    out.push(format!("{name} file {file}: only in the watched index"))
                }
                (None, Some(_)) => out.push(format!("{name} file {file}: only in the fresh index")),
                _ => {}
            }
        }
    }
    out
}

/// Notes (without failing) when the two servers count skipped files
/// differently.
fn compare_skipped(watched_port: u16, fresh_health: &Value) {
    let watched = Conn::open(watched_port)
        .and_then(|mut conn| conn.get("/api/health"))
        .ok()
        .and_then(|res| res.json());
    if let Some(watched) = watched {
        if watched["skipped"] != fresh_health["skipped"] {
            eprintln!(
                "stress: churn: note: skipped files: watched {} / fresh {}",
                watched["skipped"], fresh_health["skipped"]
            );
        }
    }
}

/// Makes every file and folder under `dir` readable and writable again
/// (links are not followed), so that it can be removed.
fn restore_permissions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
            restore_permissions(&path);
        } else if meta.is_file() && meta.permissions().mode() & 0o600 != 0o600 {
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644));
        }
    }
}
