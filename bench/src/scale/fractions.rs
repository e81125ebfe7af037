//! The fractions of the tree: the units it is cut into (whole folders,
//! with the lines dupcheck scans in each), the units picked for a share
//! (nested: each fraction holds the smaller ones), and the copy of them
//! made of hard links that dupcheck then serves.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use dupcheck::engine::grammar::Registry;
use rayon::prelude::*;

use crate::env::{default_config, Env};
use crate::SHARES;

/// A folder holding more than this share of the tree's lines is split
/// into its subfolders: the smallest fraction measured is an eighth.
const SPLIT_ABOVE: u64 = SHARES[0] as u64;

/// How deep splits may go (drivers/gpu/drm/amd is 4 deep).
const MAX_DEPTH: usize = 8;

/// Most folders split: the kernel needs a handful.
const MAX_SPLITS: usize = 1000;

/// What a unit holds.
enum Holds {
    /// A folder, relative to the tree, with all it holds.
    Folder(String),
    /// The files of its own of a split folder (relative to the tree).
    Files { folder: String, names: Vec<String> },
}

/// A part of the tree that a fraction takes whole or not at all.
pub(crate) struct Unit {
    /// How it is listed: the folder, or `FOLDER/*` for the files of its
    /// own of a split folder (`*` for the top's).
    pub(crate) name: String,
    /// Lines of the files dupcheck scans in it.
    pub(crate) lines: u64,
    holds: Holds,
}

/// The tree cut into units.
pub(crate) struct Units {
    /// The tree, `.corpora/linux-6.12`.
    tree: PathBuf,
    /// Lines of the files dupcheck scans in the tree.
    pub(crate) lines: u64,
    /// Files dupcheck scans in the tree (generated ones among them: the
    /// scan skips those once read).
    pub(crate) files: u64,
    /// Lines per format, most first.
    pub(crate) formats: Vec<(String, u64)>,
    /// The units, most lines first.
    pub(crate) units: Vec<Unit>,
}

/// The folder `rel` (a file or a folder) is in; `""` for the top.
fn parent(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

impl Units {
    /// Counts the lines of each file `dupcheck TREE` scans (read as it
    /// reads them, on all cores), sums them per folder, and splits every
    /// folder holding more than an eighth of them, from the top down.
    pub(crate) fn measure(tree: &Path, registry: &Registry) -> Result<Units, String> {
        let config = default_config(tree, registry)?;
        let (candidates, _) =
            dupcheck::project::walk::candidates(&config, registry).map_err(|e| e.to_string())?;
        let counted: Vec<(&str, &str, u64)> = candidates
            .par_iter()
            .filter_map(|c| {
                let text = dupcheck::project::walk::read(&c.abs, config.max_size, config.max_lines)
                    .ok()?;
                let format = registry.get(c.format).name.as_str();
                Some((c.rel.as_str(), format, text.lines().count() as u64))
            })
            .collect();
        let mut folder_lines: BTreeMap<&str, u64> = BTreeMap::new();
        let mut children: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut own_files: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
        let mut formats: BTreeMap<&str, u64> = BTreeMap::new();
        for &(rel, format, lines) in &counted {
            *formats.entry(format).or_default() += lines;
            let folder = parent(rel);
            own_files
                .entry(folder)
                .or_default()
                .push((rel[folder.len()..].trim_start_matches('/'), lines));
            let mut at = folder;
            // Every folder up to the top, each linked to its parent.
            for _ in 0..64 {
                *folder_lines.entry(at).or_default() += lines;
                if at.is_empty() {
                    break;
                }
                children.entry(parent(at)).or_default().insert(at);
                at = parent(at);
            }
        }
        let total = folder_lines.get("").copied().unwrap_or(0);
        let threshold = total / SPLIT_ABOVE;
        let mut units = Vec::new();
        let mut pending = vec![""];
        for _ in 0..MAX_SPLITS {
            let Some(folder) = pending.pop() else { break };
            for &child in children.get(folder).into_iter().flatten() {
                let lines = folder_lines[child];
                if lines > threshold && child.split('/').count() < MAX_DEPTH {
                    pending.push(child);
                } else {
                    units.push(Unit {
                        name: child.to_owned(),
                        lines,
                        holds: Holds::Folder(child.to_owned()),
                    });
                }
            }
            if let Some(files) = own_files.get(folder) {
                units.push(Unit {
                    name: if folder.is_empty() {
                        "*".to_owned()
                    } else {
                        format!("{folder}/*")
                    },
                    lines: files.iter().map(|f| f.1).sum(),
                    holds: Holds::Files {
                        folder: folder.to_owned(),
                        names: files.iter().map(|f| f.0.to_owned()).collect(),
                    },
                });
            }
        }
        // Left whole if the splits ran out (never with the kernel).
        units.extend(pending.into_iter().map(|folder| Unit {
            name: folder.to_owned(),
            lines: folder_lines[folder],
            holds: Holds::Folder(folder.to_owned()),
        }));
        units.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.name.cmp(&b.name)));
        let mut formats: Vec<(String, u64)> = formats
            .into_iter()
            .map(|(f, n)| (f.to_owned(), n))
            .collect();
        formats.sort_by_key(|f| std::cmp::Reverse(f.1));
        Ok(Units {
            tree: tree.to_owned(),
            lines: total,
            files: counted.len() as u64,
            formats,
            units,
        })
    }

    /// The units of the fraction 1/`share`. The fractions are nested, each
    /// holding the one below it (1/8 within 1/4 within 1/2), so that a
    /// figure grows from one to the next by the code added, not by another
    /// mix of code: from the eighth up to `share`, each unit not yet picked
    /// that brings the sum of lines closer to that share is added, the
    /// tree's top-level folders first (the units of the brief), then the
    /// parts of the folders split, each group largest first. The whole tree
    /// holds every unit.
    fn pick(&self, share: u32) -> Vec<&Unit> {
        if share == 1 {
            return self.units.iter().collect();
        }
        let (top, parts): (Vec<&Unit>, Vec<&Unit>) =
            self.units.iter().partition(|u| !u.name.contains('/'));
        let order: Vec<&Unit> = top.into_iter().chain(parts).collect();
        let mut taken = vec![false; order.len()];
        let mut sum = 0.0;
        for step in SHARES.into_iter().filter(|&d| d >= share) {
            let target = self.lines as f64 / f64::from(step);
            for (unit, taken) in order.iter().zip(&mut taken) {
                let with = sum + unit.lines as f64;
                if !*taken && (with - target).abs() < (sum - target).abs() {
                    sum = with;
                    *taken = true;
                }
            }
        }
        order
            .into_iter()
            .zip(taken)
            .filter_map(|(unit, taken)| taken.then_some(unit))
            .collect()
    }
}

/// One fraction of the tree, linked into a folder of its own.
pub(crate) struct Fraction {
    /// The denominator of its share.
    pub(crate) share: u32,
    /// `1/N`.
    pub(crate) name: String,
    /// `.corpora/linux-6.12-scale/1-N`.
    pub(crate) dir: PathBuf,
    /// The same, relative to the repository, as shown.
    pub(crate) shown: String,
    /// The units it holds, as listed.
    pub(crate) units: Vec<String>,
    /// Lines of the files dupcheck scans in them.
    pub(crate) lines: u64,
}

impl Fraction {
    /// Links the units of 1/`share` into `.corpora/linux-6.12-scale/1-N`
    /// (the whole tree for 1/1), unless that folder was made of the same
    /// units before: its `1-N.units` beside it says which.
    pub(crate) fn build(env: &Env, units: &Units, share: u32) -> Result<Fraction, String> {
        let picked = units.pick(share);
        // Canonical: the server's lines, reported verbatim, show it.
        let corpora = env.corpus("");
        let scale = fs::canonicalize(&corpora)
            .unwrap_or(corpora)
            .join("linux-6.12-scale");
        let dir = scale.join(format!("1-{share}"));
        let manifest_path = scale.join(format!("1-{share}.units"));
        let names: Vec<String> = picked.iter().map(|u| u.name.clone()).collect();
        let manifest = format!("of {} lines: {}\n", units.lines, names.join(" "));
        let fraction = Fraction {
            share,
            name: format!("1/{share}"),
            lines: picked.iter().map(|u| u.lines).sum(),
            units: names,
            dir,
            shown: format!(".corpora/linux-6.12-scale/1-{share}"),
        };
        fs::create_dir_all(&scale).map_err(|e| format!("cannot make {}: {e}", scale.display()))?;
        if fraction.dir.is_dir()
            && fs::read_to_string(&manifest_path).ok() == Some(manifest.clone())
        {
            return Ok(fraction);
        }
        let fail = |what: &str, e: std::io::Error| format!("cannot {what}: {e}");
        // The manifest goes first and comes back last: a copy left half
        // made by an interrupted run is made again.
        match fs::remove_file(&manifest_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(fail("remove the old manifest", e))
            }
            _ => {}
        }
        empty_links_folder(&fraction.dir)?;
        if share == 1 {
            copy_links(&units.tree.join("."), &fraction.dir)?;
        } else {
            link_units(&units.tree, &fraction.dir, &picked)?;
        }
        fs::write(&manifest_path, manifest).map_err(|e| fail("write the manifest", e))?;
        Ok(fraction)
    }

    /// The units of 1/`share` and their lines, nothing linked: what
    /// [`Fraction::build`] would make.
    pub(crate) fn plan(units: &Units, share: u32) -> (Vec<String>, u64) {
        let picked = units.pick(share);
        let lines = picked.iter().map(|u| u.lines).sum();
        (picked.into_iter().map(|u| u.name.clone()).collect(), lines)
    }
}

/// Makes `dir`, a folder of links into the tree, empty: removed with what
/// it holds (links only: the tree's files stay), then made again.
pub(crate) fn empty_links_folder(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))
}

/// `cp -al FROM TO`: a copy of hard links (the same filesystem), fast
/// and without a byte of the files copied.
pub(crate) fn copy_links(from: &Path, to: &Path) -> Result<(), String> {
    let status = Command::new("cp")
        .arg("-al")
        .arg(from)
        .arg(to)
        .status()
        .map_err(|e| format!("cannot run cp: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!(
            "cp -al {} {} failed: {status}",
            from.display(),
            to.display()
        )),
    }
}

/// Links `picked` from `tree` into `dir`, with the folders above them and
/// the `.gitignore` of each of those folders and of the top: the same
/// files are then ignored as in the whole tree.
fn link_units(tree: &Path, dir: &Path, picked: &[&Unit]) -> Result<(), String> {
    let link = |rel: &str| {
        fs::hard_link(tree.join(rel), dir.join(rel)).map_err(|e| format!("cannot link {rel}: {e}"))
    };
    let mut made: BTreeSet<String> = BTreeSet::new();
    let mut folder_above = |folder: &str| -> Result<(), String> {
        let mut at = String::new();
        for part in folder.split('/').filter(|p| !p.is_empty()) {
            at = if at.is_empty() {
                part.to_owned()
            } else {
                format!("{at}/{part}")
            };
            if made.insert(at.clone()) && !dir.join(&at).is_dir() {
                fs::create_dir(dir.join(&at)).map_err(|e| format!("cannot make {at}: {e}"))?;
                let ignore = format!("{at}/.gitignore");
                if tree.join(&ignore).is_file() {
                    link(&ignore)?;
                }
            }
        }
        Ok(())
    };
    if tree.join(".gitignore").is_file() {
        link(".gitignore")?;
    }
    for unit in picked {
        match &unit.holds {
            Holds::Folder(rel) => {
                folder_above(parent(rel))?;
                copy_links(&tree.join(rel), &dir.join(rel))?;
            }
            Holds::Files { folder, names } => {
                folder_above(folder)?;
                for name in names {
                    let rel = if folder.is_empty() {
                        name.clone()
                    } else {
                        format!("{folder}/{name}")
                    };
                    link(&rel)?;
                }
            }
        }
    }
    Ok(())
}
