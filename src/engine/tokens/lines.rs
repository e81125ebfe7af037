//! Lines and columns from byte offsets: a [`LineIndex`] of one text, and
//! the [`Position`]s it gives (1-based lines, columns in characters).
//!
//! Invariant: a line index is kept for every file of an index, so it holds
//! about 2 bytes per line: the start of every [`BLOCK`]th line, and each
//! line's start as an offset from its block's (test:
//! `line_starts_are_kept_exactly_at_the_limits`).

use std::ops::Range;

use crate::engine::text::Slices;

/// Lines per block of line starts.
const BLOCK: usize = 64;

/// Lines and columns of byte offsets in one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset where each line starts; the first is 0.
    starts: Starts,
}

/// Where each line starts.
#[derive(Debug, Clone)]
enum Starts {
    /// Lines in blocks of [`BLOCK`]: where each block's first line starts,
    /// and where each line starts from there. For texts whose blocks all
    /// span less than 64 KiB: lines shorter than 1 KiB on average.
    Narrow { blocks: Vec<u32>, offsets: Vec<u16> },
    /// Where each line starts, for other texts.
    Wide(Vec<u32>),
}

impl Default for LineIndex {
    /// The index of an empty text: one line, starting at 0.
    fn default() -> LineIndex {
        LineIndex::of_starts(vec![0])
    }
}

/// A 1-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters (Unicode scalar values).
    pub column: u32,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> LineIndex {
        // Counted first, so that the table is exactly as long as the text's
        // lines: it is kept for every file of the index.
        // memchr's SIMD search: a warm start of the Linux kernel indexes
        // 884 MB of text here, where a byte-by-byte filter took a second.
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes());
        let mut starts = Vec::with_capacity(newlines.count() + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i as u32 + 1));
        LineIndex::of_starts(starts)
    }

    /// The index of lines starting at `starts` (increasing, the first 0),
    /// in blocks where they fit.
    fn of_starts(starts: Vec<u32>) -> LineIndex {
        let fits = starts
            .chunks(BLOCK)
            .all(|block| block[block.len() - 1] - block[0] <= u32::from(u16::MAX));
        if !fits {
            return LineIndex {
                starts: Starts::Wide(starts),
            };
        }
        let blocks = starts.iter().step_by(BLOCK).copied().collect();
        let mut offsets = Vec::with_capacity(starts.len());
        for block in starts.chunks(BLOCK) {
            offsets.extend(block.iter().map(|&s| (s - block[0]) as u16));
        }
        LineIndex {
            starts: Starts::Narrow { blocks, offsets },
        }
    }

    /// Where 0-based line `i` starts (`i` below [`LineIndex::count`]).
    fn start(&self, i: usize) -> u32 {
        match &self.starts {
            Starts::Narrow { blocks, offsets } => blocks[i / BLOCK] + u32::from(offsets[i]),
            Starts::Wide(starts) => starts[i],
        }
    }

    /// 1-based line of the byte at `offset`.
    pub fn line_of(&self, offset: u32) -> u32 {
        match &self.starts {
            Starts::Narrow { blocks, offsets } => {
                // The first line starts at 0, so the block is found.
                let block = blocks.partition_point(|&b| b <= offset).max(1) - 1;
                let from = block * BLOCK;
                let within = &offsets[from..(from + BLOCK).min(offsets.len())];
                let base = blocks[block];
                (from + within.partition_point(|&o| base + u32::from(o) <= offset)) as u32
            }
            Starts::Wide(starts) => starts.partition_point(|&s| s <= offset) as u32,
        }
    }

    /// Position of the character starting at byte `offset`.
    pub(crate) fn start_position(&self, text: &(impl Slices + ?Sized), offset: u32) -> Position {
        let line = self.line_of(offset);
        let line_start = self.start(line as usize - 1) as usize;
        let column = columns(text, line_start..offset as usize) + 1;
        Position { line, column }
    }

    /// Position just after a range ending (exclusive) at byte `end`: the line
    /// of its last character, and the column after that character.
    pub(crate) fn end_position(&self, text: &(impl Slices + ?Sized), end: u32) -> Position {
        let line = self.line_of(end.saturating_sub(1));
        let line_start = self.start(line as usize - 1) as usize;
        let column = columns(text, line_start..end as usize) + 1;
        Position { line, column }
    }

    /// [`LineIndex::start_position`] in a text known to be ASCII, where a
    /// column is a byte offset: the text is not needed.
    pub(crate) fn ascii_start_position(&self, offset: u32) -> Position {
        let line = self.line_of(offset);
        let column = offset - self.start(line as usize - 1) + 1;
        Position { line, column }
    }

    /// [`LineIndex::end_position`] in a text known to be ASCII.
    pub(crate) fn ascii_end_position(&self, end: u32) -> Position {
        let line = self.line_of(end.saturating_sub(1));
        let column = end - self.start(line as usize - 1) + 1;
        Position { line, column }
    }

    /// Lines it knows: the `\n`-separated lines and the (maybe empty)
    /// line after the last `\n`.
    pub(crate) fn count(&self) -> u32 {
        (match &self.starts {
            Starts::Narrow { offsets, .. } => offsets.len(),
            Starts::Wide(starts) => starts.len(),
        }) as u32
    }

    /// Byte offset where 1-based `line` starts; `None` past the last line.
    pub(crate) fn line_start(&self, line: u32) -> Option<u32> {
        let i = (line as usize).checked_sub(1)?;
        (i < self.count() as usize).then(|| self.start(i))
    }

    /// Bytes it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.starts {
            Starts::Narrow { blocks, offsets } => {
                blocks.capacity() * std::mem::size_of::<u32>()
                    + offsets.capacity() * std::mem::size_of::<u16>()
            }
            Starts::Wide(starts) => starts.capacity() * std::mem::size_of::<u32>(),
        }
    }

    /// Lines as an editor shows them: `\n`-separated, not counting the empty
    /// line after a final `\n`; 0 for an empty text.
    pub(crate) fn editor_lines(&self, text: &str) -> u32 {
        self.editor_lines_of(text.len())
    }

    /// [`LineIndex::editor_lines`] of its text, known by its length `len`
    /// alone: the text ends with `\n` iff its last line starts at `len`.
    pub(crate) fn editor_lines_of(&self, len: usize) -> u32 {
        let n = self.count();
        if len == 0 {
            0
        } else if self.start(n as usize - 1) as usize == len {
            n - 1
        } else {
            n
        }
    }
}

/// Characters in bytes `range` of `text` (a part of one line).
fn columns(text: &(impl Slices + ?Sized), range: Range<usize>) -> u32 {
    text.slice(range)
        .expect("a position lies in its text, on a character boundary")
        .chars()
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that `index` answers as the plain table of `starts`.
    fn check(index: &LineIndex, starts: &[u32], wide: bool) {
        assert_eq!(matches!(index.starts, Starts::Wide(_)), wide);
        assert_eq!(index.count() as usize, starts.len());
        for (i, &s) in starts.iter().enumerate() {
            assert_eq!(index.line_start(i as u32 + 1), Some(s));
            for offset in [s, s.saturating_sub(1), s + 1] {
                let expected = starts.partition_point(|&x| x <= offset) as u32;
                assert_eq!(index.line_of(offset), expected, "offset {offset}");
            }
        }
        assert_eq!(index.line_start(0), None);
        assert_eq!(index.line_start(starts.len() as u32 + 1), None);
        assert_eq!(index.line_of(u32::MAX), starts.len() as u32);
    }

    #[test]
    fn line_starts_are_kept_exactly_at_the_limits() {
        for lines in [1usize, 2, 63, 64, 65, 128, 129, 300] {
            let text: String = (0..lines).map(|i| "x".repeat(i % 7) + "\n").collect();
            let index = LineIndex::new(&text);
            let mut starts = vec![0u32];
            starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
            check(&index, &starts, false);
            let n = starts.len();
            assert_eq!(index.heap_bytes(), 2 * n + 4 * n.div_ceil(BLOCK));
        }
        // A block of 64 lines spanning 65,535 bytes fits; one more byte
        // does not, and the whole text is kept wide.
        for (long, wide) in [
            (u32::from(u16::MAX) - 62, false),
            (u32::from(u16::MAX) - 61, true),
        ] {
            let mut starts = vec![0u32];
            for i in 1..200u32 {
                let step = if i == 63 { long } else { 1 };
                starts.push(starts[i as usize - 1] + step);
            }
            let spans: Vec<u32> = starts
                .chunks(BLOCK)
                .map(|b| b[b.len() - 1] - b[0])
                .collect();
            assert_eq!(spans[0], 62 + long);
            assert_eq!(spans[0] > u32::from(u16::MAX), wide);
            check(&LineIndex::of_starts(starts.clone()), &starts, wide);
        }
        check(&LineIndex::default(), &[0], false);
        check(&LineIndex::new(""), &[0], false);
    }
}
