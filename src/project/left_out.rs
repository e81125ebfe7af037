//! Why a scan indexed nothing: the one line that names what left DIR's
//! source files out, and how to lift it.
//!
//! In: the [`Config`] of a scan that indexed no file, and the
//! [`Registry`]. Out: `None` when DIR holds no source file outside hidden
//! folders (nothing was left out), else one line naming why the first
//! source file (in path order) was left out: a rule of an ignore file with
//! its file and line (`.gitignore:4: /*`) and `--no-gitignore`, the
//! `--ignore` globs, or `--format`; and how many source files the same
//! kind of reason left out.
//!
//! The walk here reads no ignore file and keeps every format; each source
//! file's path is then matched, folder by folder from DIR down, against
//! the ignore files the scan's walk reads (`.ignore`, `.gitignore`, then
//! DIR's `.git/info/exclude`; a deeper file first), as the `ignore` crate
//! does: the first folder or file a rule ignores is where the walk stopped.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};

use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::project::config::Config;
use crate::project::walk::relative;

/// Why a source file was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reason {
    /// A rule of an ignore file: the file (relative to DIR), its line
    /// number and the rule as written.
    Rule {
        file: String,
        line: usize,
        rule: String,
    },
    /// The `--ignore` globs (or the config file's `ignore`).
    IgnoreGlobs,
    /// Its format is not among `--format`'s; its format's name.
    Format(String),
}

impl Reason {
    /// Whether `self` and `other` are the same kind of reason.
    fn same_kind(&self, other: &Reason) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// The line saying why the scan of `config` indexed no file, if DIR holds
/// source files it left out.
pub(crate) fn why_nothing_indexed(config: &Config, registry: &Registry) -> Option<String> {
    let mut ignores = Ignores::new(config);
    let walker = WalkBuilder::new(&config.dir)
        .standard_filters(false)
        .hidden(true)
        .follow_links(!config.no_symlinks)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    let mut first: Option<(String, Reason)> = None;
    let mut count = 0usize;
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(format) = registry.for_path(entry.path()) else {
            continue;
        };
        let Some(rel) = relative(&config.dir, entry.path()) else {
            continue;
        };
        let reason = if let Some(rule) = ignores.rule_for(&rel) {
            rule
        } else if config.ignore.matched(entry.path(), false).is_ignore() {
            Reason::IgnoreGlobs
        } else if !config.formats.contains(&format.id) {
            Reason::Format(format.name.clone())
        } else {
            // Left out for another reason (its size, its text): the scan
            // line counts it.
            continue;
        };
        match &first {
            None => {
                first = Some((rel, reason));
                count = 1;
            }
            Some((_, kind)) if kind.same_kind(&reason) => count += 1,
            Some(_) => {}
        }
    }
    let (rel, reason) = first?;
    let files = match count {
        1 => "1 source file is".to_owned(),
        n => format!("{n} source files are"),
    };
    Some(match reason {
        Reason::Rule { file, line, rule } if file.ends_with(".ignore") => format!(
            "dupcheck: no file indexed: {files} ignored, {rel} by {file}:{line}: {rule}; edit {file} to scan them (--no-gitignore does not lift .ignore rules)"
        ),
        Reason::Rule { file, line, rule } => format!(
            "dupcheck: no file indexed: {files} ignored, {rel} by {file}:{line}: {rule}; --no-gitignore scans them"
        ),
        Reason::IgnoreGlobs => format!(
            "dupcheck: no file indexed: {files} excluded by --ignore (or the config file's \"ignore\"), {rel} among them; change it to scan them"
        ),
        Reason::Format(name) => format!(
            "dupcheck: no file indexed: {files} of formats --format leaves out, {rel} of {name}; add their formats to --format to scan them"
        ),
    })
}

/// The ignore files of DIR's folders, read once each.
struct Ignores<'c> {
    config: &'c Config,
    /// Per folder (relative to DIR, "" for DIR), its matchers in the order
    /// they take precedence.
    folders: HashMap<String, Vec<Gitignore>>,
}

impl<'c> Ignores<'c> {
    fn new(config: &'c Config) -> Ignores<'c> {
        Ignores {
            config,
            folders: HashMap::default(),
        }
    }

    /// The rule that left `rel` (a file, relative to DIR) out, if one did:
    /// the first of its folders (from DIR down), or itself, that a rule
    /// ignores.
    fn rule_for(&mut self, rel: &str) -> Option<Reason> {
        let parts: Vec<&str> = rel.split('/').collect();
        let config = self.config;
        for end in 1..=parts.len() {
            let path = config.dir.join(parts[..end].join("/"));
            let is_dir = end < parts.len();
            // The folders holding ignore files that apply: deepest first.
            'levels: for level in (0..end).rev() {
                let folder = parts[..level].join("/");
                for matcher in self.matchers(&folder) {
                    match matcher.matched(&path, is_dir) {
                        Match::None => {}
                        Match::Whitelist(_) => break 'levels,
                        Match::Ignore(glob) => {
                            let from = glob.from().map(Path::to_path_buf);
                            return Some(reason(&config.dir, from, glob.original()));
                        }
                    }
                }
            }
        }
        None
    }
}

/// The rule `original` of the ignore file `from` (in DIR `dir`), with its
/// line.
fn reason(dir: &Path, from: Option<PathBuf>, original: &str) -> Reason {
    let from = from.unwrap_or_default();
    let text = std::fs::read_to_string(&from).unwrap_or_default();
    // The last line that is the rule: within a file the last match wins.
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end() == original)
        .map(|(i, _)| i + 1)
        .last()
        .unwrap_or(0);
    Reason::Rule {
        file: relative(dir, &from).unwrap_or_else(|| from.display().to_string()),
        line,
        rule: original.to_owned(),
    }
}

impl Ignores<'_> {
    /// The matchers of `folder` (relative to DIR), in precedence order.
    fn matchers(&mut self, folder: &str) -> &[Gitignore] {
        let config = self.config;
        self.folders.entry(folder.to_owned()).or_insert_with(|| {
            let dir = if folder.is_empty() {
                config.dir.clone()
            } else {
                config.dir.join(folder)
            };
            let mut files = vec![dir.join(".ignore")];
            if config.gitignore {
                files.push(dir.join(".gitignore"));
                if folder.is_empty() {
                    files.push(dir.join(".git/info/exclude"));
                }
            }
            files
                .into_iter()
                .filter(|file| file.is_file())
                .filter_map(|file| {
                    let mut builder = GitignoreBuilder::new(&dir);
                    builder.add(&file);
                    builder.build().ok()
                })
                .collect()
        })
    }
}
