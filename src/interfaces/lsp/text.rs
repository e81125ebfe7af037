//! Text: LSP positions in the negotiated encoding, and buffers edited by
//! the editor's incremental changes.
//!
//! In: a text and LSP positions (0-based line, `character` counted in UTF-8
//! bytes or UTF-16 code units, as negotiated in `initialize`),
//! or the engine's positions (1-based line, 1-based column in characters).
//! Out: byte offsets, LSP positions, edited texts.
//!
//! Invariants: a position past the end of its line means the end of the
//! line, and a line past the last means the end of the text (the protocol's
//! rule); an offset never falls inside a character (UTF-8 positions inside
//! one are moved to its start); the line ending is not part of a line.

use lsp_types::{Position, PositionEncodingKind, Range, TextDocumentContentChangeEvent};

use crate::engine::matching::Span;

/// How `character` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units, the protocol's default.
    Utf16,
}

impl Encoding {
    /// The encoding to use for a client offering `offered` (in its order of
    /// preference): UTF-8 when offered, as the engine counts bytes;
    /// otherwise UTF-16, which every client supports.
    pub(crate) fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        if offered.is_some_and(|o| o.contains(&PositionEncodingKind::UTF8)) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        }
    }

    /// Its name in the protocol.
    pub(crate) fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }
    }

    /// Units of `c` in this encoding.
    fn units(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
        }
    }
}

/// Byte offsets where the lines of a text start.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    /// The line starts of `text`.
    pub(crate) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    /// The text of 0-based `line` without its line ending, and its start;
    /// `None` past the last line.
    fn line<'t>(&self, text: &'t str, line: u32) -> Option<(usize, &'t str)> {
        let start = *self.starts.get(line as usize)?;
        let end = self
            .starts
            .get(line as usize + 1)
            .map_or(text.len(), |&next| next - 1);
        let content = &text[start..end];
        Some((start, content.strip_suffix('\r').unwrap_or(content)))
    }

    /// The byte offset of `position` in `text`.
    pub(crate) fn offset(&self, text: &str, position: Position, encoding: Encoding) -> usize {
        let Some((start, line)) = self.line(text, position.line) else {
            return text.len();
        };
        let mut units = 0;
        for (at, c) in line.char_indices() {
            if units >= position.character {
                return start + at;
            }
            units += encoding.units(c);
            if units > position.character {
                // Inside a character: its start.
                return start + at;
            }
        }
        start + line.len()
    }

    /// The LSP position of the engine's 1-based `line` and 1-based
    /// character `column` in `text`.
    pub(crate) fn position(
        &self,
        text: &str,
        line: u32,
        column: u32,
        encoding: Encoding,
    ) -> Position {
        let line0 = line.saturating_sub(1);
        let Some((_, content)) = self.line(text, line0) else {
            return Position::new(line0, 0);
        };
        let character = content
            .chars()
            .take(column.saturating_sub(1) as usize)
            .map(|c| encoding.units(c))
            .sum();
        Position::new(line0, character)
    }

    /// The LSP range of the engine's `span` in `text`.
    pub(crate) fn range(&self, text: &str, span: Span, encoding: Encoding) -> Range {
        Range::new(
            self.position(text, span.start.line, span.start.column, encoding),
            self.position(text, span.end.line, span.end.column, encoding),
        )
    }
}

/// Applies the editor's `changes`, in order, to `text`.
pub(crate) fn apply_changes(
    text: &mut String,
    changes: Vec<TextDocumentContentChangeEvent>,
    encoding: Encoding,
) {
    for change in changes {
        match change.range {
            None => *text = change.text,
            Some(range) => {
                let lines = Lines::new(text);
                let start = lines.offset(text, range.start, encoding);
                let end = lines.offset(text, range.end, encoding).max(start);
                text.replace_range(start..end, &change.text);
            }
        }
    }
}

/// Whether `position` is within `range` (its end included: a cursor just
/// after the last character is on it).
pub(crate) fn contains(range: &Range, position: Position) -> bool {
    range.start <= position && position <= range.end
}

/// Whether two ranges share a position.
pub(crate) fn overlaps(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "let s = 'é𝄞x';\r\nnext\n";

    #[test]
    fn positions_count_the_negotiated_units() {
        let lines = Lines::new(TEXT);
        let x = TEXT.find('x').unwrap();
        // 'é' is 2 bytes, 1 UTF-16 unit; '𝄞' is 4 bytes, 2 UTF-16 units.
        for (encoding, character) in [(Encoding::Utf8, 15), (Encoding::Utf16, 12)] {
            assert_eq!(
                lines.offset(TEXT, Position::new(0, character), encoding),
                x,
                "{encoding:?}"
            );
            assert_eq!(
                lines.position(TEXT, 1, 12, encoding),
                Position::new(0, character),
                "{encoding:?}"
            );
        }
    }

    #[test]
    fn positions_past_the_line_or_the_text_clamp_and_never_split_a_character() {
        let lines = Lines::new(TEXT);
        let end_of_first = TEXT.find('\r').unwrap();
        assert_eq!(
            lines.offset(TEXT, Position::new(0, 99), Encoding::Utf16),
            end_of_first
        );
        assert_eq!(
            lines.offset(TEXT, Position::new(7, 0), Encoding::Utf16),
            TEXT.len()
        );
        // Inside '𝄞' (UTF-16 unit 10 is its second half): its start.
        let clef = TEXT.find('𝄞').unwrap();
        assert_eq!(
            lines.offset(TEXT, Position::new(0, 11), Encoding::Utf16),
            clef
        );
        assert_eq!(
            lines.offset(TEXT, Position::new(0, 12), Encoding::Utf8),
            clef
        );
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let mut text = TEXT.to_owned();
        let change = |l0, c0, l1, c1, new: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: new.to_owned(),
        };
        apply_changes(
            &mut text,
            vec![change(0, 12, 0, 13, "y"), change(1, 0, 1, 4, "last")],
            Encoding::Utf16,
        );
        assert_eq!(text, "let s = 'é𝄞y';\r\nlast\n");
        apply_changes(
            &mut text,
            vec![TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "all".into(),
            }],
            Encoding::Utf16,
        );
        assert_eq!(text, "all");
    }
}
