//! The folder tree's totals: every folder's figures and its children in
//! the tree's order, what `/api/tree` pages through.
//!
//! In: the index, its whole-project clones and their statistics (the rows
//! of `/api/stats`). Out: [`Folders`]: per folder holding a file, its
//! files, lines, duplicated lines and clones, and its children (folders
//! and files), most lines first, then by name, folders before files.
//!
//! Invariants: a folder's figures are the sums of its files' rows (the top
//! folder's are `/api/stats`'s total), and a clone counts once in each
//! folder or file holding a place of it. Built once per snapshot and
//! settings, on the tree's first use: a folder's answer is then its page
//! of children, not a pass over every file and clone.

use crate::engine::clones::ClonePair;
use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::engine::index::Index;
use crate::engine::stats::ProjectStats;

/// The figures of a folder or file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Figures {
    /// Files in it (1 for a file).
    pub files: u64,
    /// Lines, as an editor counts them.
    pub lines: u64,
    /// Lines inside at least one clone.
    pub duplicated_lines: u64,
    /// Clones with a place in it.
    pub clones: u64,
}

/// A child of a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    /// A folder, by its number ([`Folders::folder`]).
    Folder(u32),
    /// A file of the index, by its index.
    File(u32),
}

/// A folder's path (relative to DIR, `/`-separated, empty for the top),
/// figures and children in the tree's order.
#[derive(Debug, Default)]
pub(crate) struct Folder {
    pub path: Box<str>,
    pub figures: Figures,
    pub children: Vec<Child>,
}

/// Every folder holding an indexed file, and every file's figures.
#[derive(Debug, Default)]
pub(crate) struct Folders {
    /// The folders, the top one first.
    folders: Vec<Folder>,
    /// The number of each folder but the top by its path: `rel[..i]` for
    /// every `/` at `i` of a file's `rel`.
    by_path: HashMap<Box<str>, u32>,
    /// Each file's figures, by index.
    files: Vec<Figures>,
}

impl Folders {
    /// The folders of `index`, with its `clones` and their `stats`.
    pub(crate) fn new(
        index: &Index,
        clones: &[ClonePair],
        stats: &ProjectStats,
        registry: &Registry,
    ) -> Folders {
        let mut folders = vec![Folder::default()];
        let mut parent: Vec<u32> = vec![0];
        let mut by_path: HashMap<Box<str>, u32> = HashMap::default();
        let mut files = Vec::with_capacity(index.files.len());
        // The folder holding each file.
        let mut holder: Vec<u32> = Vec::with_capacity(index.files.len());
        for (i, file) in index.files.iter().enumerate() {
            let rel = file.rel.as_str();
            let mut up = 0u32;
            for (at, _) in rel.match_indices('/') {
                let next = match by_path.get(&rel[..at]) {
                    Some(&n) => n,
                    None => {
                        let n = folders.len() as u32;
                        by_path.insert(Box::from(&rel[..at]), n);
                        folders.push(Folder {
                            path: Box::from(&rel[..at]),
                            ..Folder::default()
                        });
                        parent.push(up);
                        folders[up as usize].children.push(Child::Folder(n));
                        n
                    }
                };
                up = next;
            }
            folders[up as usize].children.push(Child::File(i as u32));
            holder.push(up);
            let format = &registry.get(file.format).name;
            let row = stats
                .formats
                .get(format)
                .and_then(|rows| rows.sources.get(&file.path));
            let figures = Figures {
                files: 1,
                lines: row.map_or(0, |r| r.lines),
                duplicated_lines: row.map_or(0, |r| r.duplicated_lines),
                clones: 0,
            };
            files.push(figures);
            let mut f = up;
            loop {
                let sum = &mut folders[f as usize].figures;
                sum.files += 1;
                sum.lines += figures.lines;
                sum.duplicated_lines += figures.duplicated_lines;
                if f == 0 {
                    break;
                }
                f = parent[f as usize];
            }
        }
        // Each clone counts once in every folder above either place: the
        // first place's folders are marked with the clone, and the second
        // place's are counted up to the first marked one.
        let mut mark = vec![u32::MAX; folders.len()];
        for (i, clone) in clones.iter().enumerate() {
            let (a, b) = (clone.first.0 as usize, clone.second.0 as usize);
            files[a].clones += 1;
            if b != a {
                files[b].clones += 1;
            }
            for (side, file) in [a, b].into_iter().enumerate() {
                let mut f = holder[file];
                loop {
                    if side == 1 && mark[f as usize] == i as u32 {
                        break;
                    }
                    mark[f as usize] = i as u32;
                    folders[f as usize].figures.clones += 1;
                    if f == 0 {
                        break;
                    }
                    f = parent[f as usize];
                }
            }
        }
        // The tree's order: most lines first, then by name, a folder
        // before a file of the same name.
        let name_of = |child: &Child, folders: &[Folder]| -> (u64, bool, String) {
            match *child {
                Child::Folder(n) => {
                    let folder = &folders[n as usize];
                    (folder.figures.lines, false, name(&folder.path).to_owned())
                }
                Child::File(f) => {
                    let rel = &index.files[f as usize].rel;
                    (files[f as usize].lines, true, name(rel).to_owned())
                }
            }
        };
        for n in 0..folders.len() {
            let mut children = std::mem::take(&mut folders[n].children);
            let mut keyed: Vec<((u64, bool, String), Child)> = children
                .drain(..)
                .map(|child| (name_of(&child, &folders), child))
                .collect();
            keyed.sort_by(|(x, _), (y, _)| {
                y.0.cmp(&x.0)
                    .then_with(|| x.2.cmp(&y.2))
                    .then_with(|| x.1.cmp(&y.1))
            });
            children.extend(keyed.into_iter().map(|(_, child)| child));
            folders[n].children = children;
        }
        Folders {
            folders,
            by_path,
            files,
        }
    }

    /// The number of the folder at `path` (relative to DIR, no leading or
    /// final `/`; empty for the top); `None` when no file is inside it.
    pub(crate) fn find(&self, path: &str) -> Option<u32> {
        if path.is_empty() {
            return (self.folders[0].figures.files > 0).then_some(0);
        }
        self.by_path.get(path).copied()
    }

    /// Folder number `n`.
    pub(crate) fn folder(&self, n: u32) -> &Folder {
        &self.folders[n as usize]
    }

    /// The figures of file `file` (by index).
    pub(crate) fn file(&self, file: u32) -> Figures {
        self.files[file as usize]
    }
}

/// The last segment of a path.
pub(crate) fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or("")
}
