//! The folder tree: one folder's children with their size and duplication,
//! the service call behind `GET /api/tree` (the dashboard's treemap).
//!
//! In: a snapshot, its config and registry, a folder (relative to DIR,
//! `/`-separated, empty for the top) and a page (`limit`, `offset`). Out: a
//! [`Folder`]: the folder's own figures and one page of its children
//! (sub-folders and files), largest first.
//!
//! Invariants: a folder's lines, duplicated lines and files are the sums of
//! its files' rows of `/api/stats` (the same rows, so the top folder's
//! figures equal `/api/stats`'s total); a clone counts once for each child
//! holding a place of it, however many places it holds there. Every
//! folder's figures and ordered children are summed once per snapshot and
//! settings (`Snapshot::folder_totals`), so a call costs its page, which
//! bounds the answer's size: the Linux kernel's top folder answers as fast
//! as a small project's.

use crate::engine::grammar::Registry;
use crate::engine::stats::Percent;
use crate::project::config::Config;
use crate::project::folders::{name, Child, Figures};
use crate::project::snapshot::Snapshot;

/// Children per page when the query does not say.
pub(crate) const DEFAULT_LIMIT: usize = 200;
/// The most children one page lists.
pub(crate) const MAX_LIMIT: usize = 2_000;

/// Which folder, and which of its children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeQuery {
    /// The folder, relative to DIR and `/`-separated; empty for the top.
    pub path: String,
    /// Children on the page, 1 to [`MAX_LIMIT`].
    pub limit: usize,
    /// Children skipped before the page.
    pub offset: usize,
}

impl Default for TreeQuery {
    fn default() -> Self {
        TreeQuery {
            path: String::new(),
            limit: DEFAULT_LIMIT,
            offset: 0,
        }
    }
}

/// A folder and one page of its children.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Folder {
    /// The folder's own figures (its `path` is the one asked for).
    pub folder: Node,
    /// Its children (folders and files), most lines first, then by name.
    pub children: Vec<Node>,
    /// Children of the folder, on every page.
    pub total_children: usize,
    /// The `offset` of the next page; `null` on the last.
    pub next_offset: Option<usize>,
}

/// What a node of the tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A folder: its figures sum its files'.
    Folder,
    /// A file of the index.
    File,
}

/// A folder or file with its figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// Its last path segment (empty for the top folder).
    pub name: String,
    /// Relative to DIR, `/`-separated (empty for the top folder).
    pub path: String,
    /// A folder or a file.
    pub kind: Kind,
    /// Files in it (1 for a file).
    pub files: u64,
    /// Lines, as an editor counts them.
    pub lines: u64,
    /// Lines inside at least one clone.
    pub duplicated_lines: u64,
    /// `duplicatedLines` of `lines`, in percent.
    pub percentage: Percent,
    /// Clones with a place in it.
    pub clones: u64,
    /// For a file, its format; `null` for a folder.
    pub format: Option<String>,
}

/// The folder `query` names, with one page of its children; `None` when no
/// indexed file is inside it (no such folder, or a file). Read off the
/// snapshot's [`crate::project::folders::Folders`]: the answer costs its
/// page.
pub(crate) fn folder(
    snapshot: &Snapshot,
    config: &Config,
    registry: &Registry,
    query: &TreeQuery,
) -> Option<Folder> {
    let folders = snapshot.folder_totals(config, registry);
    let prefix = query.path.trim_matches('/');
    let own = folders.folder(folders.find(prefix)?);
    let total_children = own.children.len();
    let limit = query.limit.clamp(1, MAX_LIMIT);
    let end = query.offset.saturating_add(limit).min(total_children);
    let page = own.children[query.offset.min(total_children)..end]
        .iter()
        .map(|&child| match child {
            Child::Folder(n) => {
                let folder = folders.folder(n);
                node(&folder.path, Kind::Folder, folder.figures, None)
            }
            Child::File(f) => {
                let file = &snapshot.index.files[f as usize];
                let format = registry.get(file.format).name.clone();
                node(&file.rel, Kind::File, folders.file(f), Some(format))
            }
        })
        .collect();
    Some(Folder {
        folder: node(prefix, Kind::Folder, own.figures, None),
        children: page,
        total_children,
        next_offset: (end < total_children).then_some(end),
    })
}

/// The node of the folder or file at `path`.
fn node(path: &str, kind: Kind, figures: Figures, format: Option<String>) -> Node {
    Node {
        name: name(path).to_owned(),
        path: path.to_owned(),
        kind,
        files: figures.files,
        lines: figures.lines,
        duplicated_lines: figures.duplicated_lines,
        percentage: Percent::of(figures.duplicated_lines, figures.lines),
        clones: figures.clones,
        format,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::HashMap;
    use crate::engine::stats::Row;
    use crate::service::clones::tests::generated;

    /// Figures summed while reading the files.
    #[derive(Default)]
    struct Sum {
        files: u64,
        lines: u64,
        duplicated_lines: u64,
        clones: u64,
        format: Option<String>,
    }

    impl Sum {
        fn add(&mut self, row: &Row) {
            self.files += 1;
            self.lines += row.lines;
            self.duplicated_lines += row.duplicated_lines;
        }

        fn node(self, name: &str, path: String, kind: Kind) -> Node {
            Node {
                name: name.to_owned(),
                path,
                kind,
                files: self.files,
                lines: self.lines,
                duplicated_lines: self.duplicated_lines,
                percentage: Percent::of(self.duplicated_lines, self.lines),
                clones: self.clones,
                format: self.format,
            }
        }
    }

    /// The folder as it was answered before the folder totals: every file
    /// and clone read on each call.
    fn reference(
        snapshot: &Snapshot,
        config: &Config,
        registry: &Registry,
        query: &TreeQuery,
    ) -> Option<Folder> {
        let stats = snapshot.stats(config, registry);
        let files = &snapshot.index.files;
        let prefix = query.path.trim_matches('/');
        // The child of the folder holding a file: its name, and whether it is a
        // file (the rest of the path has no `/`).
        let child_of = |rel: &'_ str| -> Option<(usize, bool)> {
            let rest = if prefix.is_empty() {
                rel
            } else {
                rel.strip_prefix(prefix)?.strip_prefix('/')?
            };
            Some(match rest.find('/') {
                Some(at) => (at, false),
                None => (rest.len(), true),
            })
        };
        let mut own = Sum::default();
        let mut children: HashMap<(&str, bool), Sum> = HashMap::default();
        // Which child holds each file (`None`: outside the folder).
        let mut holder: Vec<Option<(&str, bool)>> = Vec::with_capacity(files.len());
        for file in files {
            let Some((len, is_file)) = child_of(&file.rel) else {
                holder.push(None);
                continue;
            };
            let name_start = if prefix.is_empty() {
                0
            } else {
                prefix.len() + 1
            };
            let name = &file.rel[name_start..name_start + len];
            let format = &registry.get(file.format).name;
            let row = stats
                .formats
                .get(format)
                .and_then(|rows| rows.sources.get(&file.path))
                .cloned()
                .unwrap_or_default();
            own.add(&row);
            let sum = children.entry((name, is_file)).or_default();
            sum.add(&row);
            if is_file {
                sum.format = Some(format.clone());
            }
            holder.push(Some((name, is_file)));
        }
        if own.files == 0 {
            return None;
        }
        let found = snapshot.clones(config);
        let clones = &found.0[..];
        for clone in clones {
            let a = holder[clone.first.0 as usize];
            let b = holder[clone.second.0 as usize];
            if a.is_some() || b.is_some() {
                own.clones += 1;
            }
            for (i, child) in [a, b].into_iter().enumerate() {
                // A clone with both places in one child counts once there.
                if let Some(key) = child.filter(|c| i == 0 || Some(*c) != a) {
                    if let Some(sum) = children.get_mut(&key) {
                        sum.clones += 1;
                    }
                }
            }
        }
        let mut nodes: Vec<Node> = children
            .into_iter()
            .map(|((name, is_file), sum)| {
                let path = if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}/{name}")
                };
                let kind = if is_file { Kind::File } else { Kind::Folder };
                sum.node(name, path, kind)
            })
            .collect();
        nodes.sort_by(|x, y| {
            y.lines
                .cmp(&x.lines)
                .then_with(|| x.name.cmp(&y.name))
                .then_with(|| (x.kind == Kind::File).cmp(&(y.kind == Kind::File)))
        });
        let total_children = nodes.len();
        let limit = query.limit.clamp(1, MAX_LIMIT);
        let end = query.offset.saturating_add(limit).min(total_children);
        let page = nodes
            .drain(query.offset.min(total_children)..end)
            .collect::<Vec<_>>();
        let name = prefix.rsplit('/').next().unwrap_or("");
        Some(Folder {
            folder: own.node(name, prefix.to_owned(), Kind::Folder),
            children: page,
            total_children,
            next_offset: (end < total_children).then_some(end),
        })
    }

    #[test]
    fn every_folder_answers_as_when_each_call_read_every_file_and_clone() {
        for mode in ["strict", "mild"] {
            let (_dir, snapshot, config, registry) = generated(mode);
            let mut paths: Vec<String> = ["", "/", "a/", "/a/b/", "a//b", "nope", "a/b/z.js"]
                .into_iter()
                .map(str::to_owned)
                .collect();
            for file in &snapshot.index.files {
                let rel = file.rel.as_str();
                paths.extend(rel.match_indices('/').map(|(i, _)| rel[..i].to_owned()));
                paths.push(rel.to_owned());
            }
            for path in paths {
                for (limit, offset) in [(200, 0), (1, 0), (2, 1), (3, 2), (1, 7), (5, 100)] {
                    let query = TreeQuery {
                        path: path.clone(),
                        limit,
                        offset,
                    };
                    assert_eq!(
                        folder(&snapshot, &config, &registry, &query),
                        reference(&snapshot, &config, &registry, &query),
                        "{mode}: {query:?}"
                    );
                }
            }
        }
    }
}
