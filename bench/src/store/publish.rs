//! The repositories and their publishes: the corpora as a tree of links
//! (one folder per repository, named as it), `dupcheck store init`, one
//! `dupcheck publish` per repository with the figures of its summary line,
//! and the two republishes (the largest repository unchanged, and a copy
//! of it with one file changed).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use crate::env::Env;
use crate::output::progress;

/// The corpora `make quality` uses (`bench/src/quality/corpora.rs`), in its
/// table order: each is one repository, named as the corpus.
pub(crate) const CORPORA: [&str; 14] = [
    "lodash",
    "rxjs",
    "django",
    "tokio",
    "client_golang",
    "commons-lang",
    "libgit2",
    "imgui",
    "newtonsoft",
    "activesupport",
    "dbal",
    "react-native",
    "expo-modules",
    "scala",
];

/// The corpora of `--quick`: three small ones of three languages.
pub(crate) const QUICK: [&str; 3] = ["rxjs", "client_golang", "activesupport"];

/// The repository `--kernel` adds, `.corpora/linux-6.12`.
pub(crate) const KERNEL: &str = "linux-6.12";

/// One repository: its name and where its files are.
pub(crate) struct Repository {
    /// Its name in the store, and its folder's in the tree.
    pub(crate) name: String,
    /// Its folder in the tree: a link to the corpus.
    pub(crate) dir: PathBuf,
}

/// The tree of repositories: a folder holding one symbolic link per
/// repository, named as it, to its corpus (dupcheck follows links), so
/// that a server over the folder scans what the publishes scanned.
pub(crate) fn link_tree(
    corpora: &Path,
    names: &[&str],
    kernel: bool,
    tree: &Path,
) -> Result<Vec<Repository>, String> {
    fs::create_dir_all(tree).map_err(|e| format!("cannot make {}: {e}", tree.display()))?;
    let mut sources: Vec<(String, PathBuf)> = names
        .iter()
        .map(|name| (name.to_string(), corpora.join("all").join(name)))
        .collect();
    if kernel {
        sources.push((KERNEL.into(), corpora.join(KERNEL)));
    }
    let mut repositories = Vec::new();
    for (name, source) in sources {
        if !source.is_dir() {
            let how = match name.as_str() {
                KERNEL => "bash bench/fetch-kernel.sh",
                _ => "bash bench/fetch-corpora.sh",
            };
            return Err(format!("{} is missing: {how}", source.display()));
        }
        let dir = tree.join(&name);
        std::os::unix::fs::symlink(&source, &dir)
            .map_err(|e| format!("cannot link {}: {e}", dir.display()))?;
        repositories.push(Repository { name, dir });
    }
    Ok(repositories)
}

/// Files and lines of one part of a publish's summary line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counted {
    pub(crate) files: u64,
    pub(crate) lines: u64,
}

/// What `dupcheck publish` said, and how long its process ran.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// The repository.
    pub(crate) name: String,
    pub(crate) written: Counted,
    pub(crate) reused: Counted,
    pub(crate) removed: Counted,
    /// The tree equalled the current copy: no copy written.
    pub(crate) unchanged: bool,
    /// What its `gc` said.
    pub(crate) gc: String,
    /// Its own seconds, from its start to its summary line.
    pub(crate) seconds: f64,
    /// Of them, the scan's.
    pub(crate) scan_seconds: f64,
    /// The process's wall seconds, from spawn to exit.
    pub(crate) wall_seconds: f64,
    /// The line itself.
    pub(crate) line: String,
}

impl Published {
    /// Files in the repository: written and reused.
    pub(crate) fn files(&self) -> u64 {
        self.written.files + self.reused.files
    }

    /// Lines in the repository: written and reused.
    pub(crate) fn lines(&self) -> u64 {
        self.written.lines + self.reused.lines
    }

    /// Seconds after the scan: the store's work (and `gc`'s).
    pub(crate) fn after_scan(&self) -> f64 {
        (self.seconds - self.scan_seconds).max(0.0)
    }

    /// Lines of the repository per second after the scan.
    pub(crate) fn lines_per_second(&self) -> f64 {
        self.lines() as f64 / self.after_scan().max(1e-9)
    }

    /// The figures for the JSON report.
    pub(crate) fn json(&self) -> Value {
        let counted = |c: Counted| json!({"files": c.files, "lines": c.lines});
        json!({
            "repository": self.name, "files": self.files(), "lines": self.lines(),
            "written": counted(self.written), "reused": counted(self.reused),
            "removed": counted(self.removed), "unchanged": self.unchanged, "gc": self.gc,
            "seconds": self.seconds, "scanSeconds": self.scan_seconds,
            "afterScanSeconds": self.after_scan(), "linesPerSecondAfterScan": self.lines_per_second(),
            "wallSeconds": self.wall_seconds, "summaryLine": self.line,
        })
    }
}

/// Parses `N file(s) (L line(s)) WHAT`.
fn counted(part: &str, what: &str) -> Option<Counted> {
    let part = part.trim().strip_suffix(what)?.trim();
    let (files, rest) = part.split_once(' ')?;
    let lines = rest.split_once('(')?.1.split_whitespace().next()?;
    Some(Counted {
        files: files.parse().ok()?,
        lines: lines.parse().ok()?,
    })
}

/// Parses `published NAME: A written, B reused, C removed[, unchanged];
/// GC; T s (scan S s)`.
pub(crate) fn parse_summary(name: &str, line: &str) -> Option<Published> {
    let rest = line.strip_prefix(&format!("published {name}: "))?;
    let mut parts = rest.split("; ");
    let counts = parts.next()?;
    let gc = parts.next()?.to_owned();
    let times = parts.next()?;
    let unchanged = counts.ends_with(", unchanged");
    let counts = counts.trim_end_matches(", unchanged");
    let mut each = counts.split(", ");
    let written = counted(each.next()?, "written")?;
    let reused = counted(each.next()?, "reused")?;
    let removed = counted(each.next()?, "removed")?;
    let seconds = times.split_whitespace().next()?.parse().ok()?;
    let scan_seconds = times
        .split_once("(scan ")?
        .1
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(Published {
        name: name.into(),
        written,
        reused,
        removed,
        unchanged,
        gc,
        seconds,
        scan_seconds,
        wall_seconds: 0.0,
        line: line.into(),
    })
}

/// `dupcheck store init --store URL`; its line.
pub(crate) fn init(env: &Env, url: &str) -> Result<String, String> {
    let out = Command::new(&env.server)
        .args(["store", "init", "--store", url])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run dupcheck store init: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "dupcheck store init failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `dupcheck publish DIR --store URL --repository NAME --no-cache` (a
/// cold scan: no cache read, and none is written into the corpora).
pub(crate) fn publish(env: &Env, dir: &Path, url: &str, name: &str) -> Result<Published, String> {
    let started = Instant::now();
    let out = Command::new(&env.server)
        .arg("publish")
        .arg(dir)
        .args(["--store", url, "--repository", name, "--no-cache"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run dupcheck publish: {e}"))?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "dupcheck publish {name} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let line = stdout.lines().last().unwrap_or("").trim();
    let mut published = parse_summary(name, line)
        .ok_or_else(|| format!("publish {name}: cannot read its summary line {line:?}"))?;
    published.wall_seconds = wall_seconds;
    progress(&format!("store: {line}"));
    Ok(published)
}

/// Copies `from` into `to` (a new folder), following links, every file a
/// copy of its own (not a link), so that changing one leaves the corpus
/// untouched.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let out = Command::new("cp")
        .arg("-rL")
        .arg(from)
        .arg(to)
        .output()
        .map_err(|e| format!("cannot run cp: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "cp -rL {} {}: {}",
            from.display(),
            to.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// Changes one file of `dir`, `rel`: its first ten lines appended at its
/// end (code pasted: new tokens and postings); what was done.
pub(crate) fn change_one_file(dir: &Path, rel: &str) -> Result<String, String> {
    let path = dir.join(rel);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let head: String = text.split_inclusive('\n').take(10).collect();
    let mut changed = text.clone();
    if !changed.ends_with('\n') {
        changed.push('\n');
    }
    changed.push_str(&head);
    fs::write(&path, &changed).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!(
        "{rel}: its first {} lines appended at its end",
        head.lines().count()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_are_read() {
        let line = "published github.com/acme/shop: 1 file (2 lines) written, 504 files \
                    (123829 lines) reused, 0 files (0 lines) removed; gc removed 1 copy and \
                    1 content; 1.12 s (scan 1.09 s)";
        let p = parse_summary("github.com/acme/shop", line).expect("read");
        assert_eq!((p.written.files, p.written.lines), (1, 2));
        assert_eq!((p.reused.files, p.reused.lines), (504, 123829));
        assert_eq!((p.files(), p.lines()), (505, 123831));
        assert!(!p.unchanged);
        assert_eq!(p.gc, "gc removed 1 copy and 1 content");
        assert!((p.after_scan() - 0.03).abs() < 1e-9);
        let same = "published x: 0 files (0 lines) written, 3 files (30 lines) reused, 0 files \
                    (0 lines) removed, unchanged; gc removed nothing; 0.20 s (scan 0.18 s)";
        let p = parse_summary("x", same).expect("read");
        assert!(p.unchanged);
        assert_eq!(p.lines(), 30);
    }
}
