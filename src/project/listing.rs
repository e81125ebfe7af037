//! The clone list's index: a snapshot's clones in page order, and what
//! finds a page or one clone without reading them all.
//!
//! In: the index and its whole-project clones (one list of
//! `Snapshot::clones`). Out: a [`Listing`]: the clones in page order
//! (tokens, then lines of the larger place, descending; then the first
//! place by path and byte offset, then the second), each clone by its id,
//! and per file, folder and format the positions of the clones with a
//! place there.
//!
//! Invariants: every list of positions is ascending, so the clones a
//! filter keeps are in page order, and those of at least `n` tokens are a
//! prefix of it; a folder's list holds each clone once however many of
//! its places are inside. Built once per snapshot and settings, on the
//! list's first use, so that a page costs a binary search and the page,
//! not a sort of every clone (332,196 on the Linux kernel).

use crate::engine::clones::ClonePair;
use crate::engine::grammar::FormatId;
use crate::engine::hash::HashMap;
use crate::engine::index::{FileView, Index};
use crate::engine::matching::Span;
use crate::engine::tokens::Tokens;

/// A clone's place in page order, in numbers: tokens and lines (each
/// subtracted from `u32::MAX`, larger first), then the rank of the first
/// place's path and its byte offset, then the second's.
type PageKey = (u32, u32, u32, u32, u32, u32);

/// A snapshot's clones in page order, with their ids and where they are.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The index (into the clone list) of the clone at each position.
    order: Vec<u32>,
    /// Each clone's id and index, sorted (ids, then indexes): a sorted
    /// array is a third of a hash map's size, and a lookup is a few
    /// hundred nanoseconds either way.
    ids: Vec<(u64, u32)>,
    /// `by_file[file_starts[f]..file_starts[f + 1]]`: the positions of
    /// the clones with a place in file `f`.
    file_starts: Vec<u32>,
    by_file: Vec<u32>,
    /// Each folder holding a file (its path relative to DIR without the
    /// final `/`: `rel[..i]` for every `/` at `i` of a file's `rel`) and
    /// the positions of the clones with a place in a file inside it.
    by_folder: HashMap<Box<str>, Vec<u32>>,
    /// Per format id, the positions of the clones with a place in it.
    by_format: Vec<Vec<u32>>,
}

impl Listing {
    /// The listing of `clones`, found in `index`.
    pub(crate) fn new(index: &Index, clones: &[ClonePair]) -> Listing {
        let files = &index.files;
        // Paths compared once: a file's rank among the paths sorted (equal
        // paths, equal ranks) orders as its path does.
        let mut by_rel: Vec<u32> = (0..files.len() as u32).collect();
        by_rel.sort_unstable_by(|&a, &b| files[a as usize].rel.cmp(&files[b as usize].rel));
        let mut rank = vec![0u32; files.len()];
        for (i, pair) in by_rel.windows(2).enumerate() {
            let (prev, this) = (pair[0] as usize, pair[1] as usize);
            let same = files[prev].rel == files[this].rel;
            rank[this] = if same { rank[prev] } else { i as u32 + 1 };
        }
        let byte = |(f, start): (u32, u32)| files[f as usize].tokens.at(start as usize).start;
        let mut keyed: Vec<(PageKey, u32)> = clones
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let key = (
                    u32::MAX - c.len,
                    u32::MAX - lines(index, c),
                    rank[c.first.0 as usize],
                    byte(c.first),
                    rank[c.second.0 as usize],
                    byte(c.second),
                );
                (key, i as u32)
            })
            .collect();
        keyed.sort_unstable();
        let order: Vec<u32> = keyed.into_iter().map(|(_, i)| i).collect();

        let mut ids: Vec<(u64, u32)> = clones
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let place =
                    |(f, start): (u32, u32)| (files[f as usize].rel.as_str(), byte((f, start)));
                (id(place(c.first), place(c.second), c.len), i as u32)
            })
            .collect();
        ids.sort_unstable();

        // Each file's folders, named once: a clone's are its two files'.
        let mut folder_ids: HashMap<&str, u32> = HashMap::default();
        let mut folder_names: Vec<&str> = Vec::new();
        let mut folders_of: Vec<Vec<u32>> = Vec::with_capacity(files.len());
        for file in files.iter() {
            let rel = file.rel.as_str();
            let chain = (rel.match_indices('/'))
                .map(|(i, _)| {
                    *folder_ids.entry(&rel[..i]).or_insert_with(|| {
                        folder_names.push(&rel[..i]);
                        folder_names.len() as u32 - 1
                    })
                })
                .collect();
            folders_of.push(chain);
        }
        let formats = files.iter().map(|f| f.format + 1).max().unwrap_or(0);
        let mut by_format: Vec<Vec<u32>> = vec![Vec::new(); formats];
        let mut in_folder: Vec<Vec<u32>> = vec![Vec::new(); folder_names.len()];
        let mut counts = vec![0u32; files.len() + 1];
        // Positions ascend, so a list whose last entry is this position
        // already holds it: the clone's other place is there too.
        let push = |list: &mut Vec<u32>, position: u32| {
            if list.last() != Some(&position) {
                list.push(position);
            }
        };
        for (position, &i) in order.iter().enumerate() {
            let position = position as u32;
            let c = &clones[i as usize];
            let (a, b) = (c.first.0 as usize, c.second.0 as usize);
            counts[a] += 1;
            if b != a {
                counts[b] += 1;
            }
            for f in [a, b] {
                push(&mut by_format[files[f].format], position);
                for &folder in &folders_of[f] {
                    push(&mut in_folder[folder as usize], position);
                }
            }
        }
        // Per file, in one array: offsets first, then the positions.
        let mut file_starts = Vec::with_capacity(files.len() + 1);
        let mut at = 0;
        for count in &counts[..files.len()] {
            file_starts.push(at);
            at += count;
        }
        file_starts.push(at);
        let mut by_file = vec![0u32; at as usize];
        let mut next: Vec<u32> = file_starts[..files.len()].to_vec();
        for (position, &i) in order.iter().enumerate() {
            let c = &clones[i as usize];
            let (a, b) = (c.first.0 as usize, c.second.0 as usize);
            let places = if a == b { 1 } else { 2 };
            for f in [a, b].into_iter().take(places) {
                by_file[next[f] as usize] = position as u32;
                next[f] += 1;
            }
        }
        let by_folder = folder_names
            .into_iter()
            .zip(in_folder)
            .map(|(name, positions)| (Box::from(name), positions))
            .collect();
        Listing {
            order,
            ids,
            file_starts,
            by_file,
            by_folder,
            by_format,
        }
    }

    /// Clones listed.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// The index (into the clone list) of the clone at `position`.
    pub(crate) fn at(&self, position: u32) -> u32 {
        self.order[position as usize]
    }

    /// The index of the clone whose id is `id`; of several, the first in
    /// the clone list.
    pub(crate) fn by_id(&self, id: u64) -> Option<u32> {
        let first = self.ids.partition_point(|&(x, _)| x < id);
        self.ids
            .get(first)
            .filter(|(x, _)| *x == id)
            .map(|&(_, i)| i)
    }

    /// The positions of the clones with a place in file `file`.
    pub(crate) fn in_file(&self, file: u32) -> &[u32] {
        let f = file as usize;
        &self.by_file[self.file_starts[f] as usize..self.file_starts[f + 1] as usize]
    }

    /// The positions of the clones with a place in a file whose path
    /// starts with `folder` and a `/`.
    pub(crate) fn in_folder(&self, folder: &str) -> &[u32] {
        self.by_folder.get(folder).map_or(&[], |v| &v[..])
    }

    /// The positions of the clones with a place in format `format`.
    pub(crate) fn in_format(&self, format: FormatId) -> &[u32] {
        self.by_format.get(format).map_or(&[], |v| &v[..])
    }
}

/// Lines of the larger place of `c`.
pub(crate) fn lines(index: &Index, c: &ClonePair) -> u32 {
    let (first_len, second_len) = c.extent();
    [(c.first, first_len), (c.second, second_len)]
        .map(|((f, start), len)| {
            let file = &index.files[f as usize];
            file.token_end_line(start + len - 1) - file.token_line(start) + 1
        })
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// The span of `len` tokens of `file` from token `start`.
pub(crate) fn span(file: &FileView<'_>, start: u32, len: u32) -> Span {
    Span {
        start: file.token_start(start),
        end: file.token_end(start + len - 1),
    }
}

/// A clone's id: a hash of its two places (path, byte offset) and size.
pub(crate) fn id(first: (&str, u32), second: (&str, u32), tokens: u32) -> u64 {
    let mut bytes = Vec::with_capacity(first.0.len() + second.0.len() + 16);
    for (rel, at) in [first, second] {
        bytes.extend_from_slice(rel.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&at.to_le_bytes());
    }
    bytes.extend_from_slice(&tokens.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}
