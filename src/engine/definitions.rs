//! Definitions: the functions, methods, classes and modules of a parsed
//! text, kept compact beside its tokens.
//!
//! In: the nodes of a parse as the token walk meets them (a [`Collector`]
//! rides along that walk, so a file's definitions cost no second pass over
//! its tree), and the format's `definitions` of `grammars.toml` (which node
//! kinds are definitions, of what [`DefKind`], the field path to their
//! name, and `definition_wrappers`). Out: a text's [`Definitions`], 16
//! bytes each, sorted by start; [`symbols`](crate::engine::symbols) reads
//! the symbol of a place off them.
//!
//! Invariants: definitions are sorted by their outer start (outer before
//! inner at one start) and nest as the tree does; a definition whose name
//! path finds no node is not recorded (a symbol is never guessed); a name
//! is the text of the node its path ends at, read from the text kept
//! beside the definitions.

use tree_sitter::Tree;

use crate::engine::grammar::{DefKind, Defines, Format, Kinds};
use crate::engine::text::Slices;
use crate::engine::visible_nodes::{visible_nodes, Step, Visible};

/// One definition of a text: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Definition {
    /// Byte offset of the definition's own first byte.
    pub start: u32,
    /// Byte offset just past its last byte.
    pub end: u32,
    /// Byte offset of its name.
    pub name_start: u32,
    /// Length of its name in bytes.
    pub name_len: u16,
    /// Its [`DefKind`] (low 4 bits) and how many bytes before `start` its
    /// wrapper starts (a decorator, an `export`; high 12 bits, 0 for none).
    pub packed: u16,
}

/// The most bytes a wrapper may open a definition with: a longer one is
/// not kept (the definition starts at its own start).
const MOST_WRAPPER_BYTES: u32 = (1 << 12) - 1;

impl Definition {
    /// A definition of `kind` at `start..end`, named at `name_start`
    /// (`name_len` bytes), its wrapper from `outer` on.
    fn new(
        outer: u32,
        start: u32,
        end: u32,
        name_start: u32,
        name_len: u16,
        kind: DefKind,
    ) -> Self {
        let lead = match start - outer {
            lead if lead <= MOST_WRAPPER_BYTES => lead as u16,
            _ => 0,
        };
        Definition {
            start,
            end,
            name_start,
            name_len,
            packed: lead << 4 | kind as u16,
        }
    }

    /// Its kind.
    pub(crate) fn kind(&self) -> DefKind {
        DefKind::from_byte((self.packed & 0xf) as u8).unwrap_or(DefKind::Function)
    }

    /// Byte offset of its wrapper's first byte, or of its own when it has
    /// none.
    pub(crate) fn outer(&self) -> u32 {
        self.start.saturating_sub(u32::from(self.packed >> 4))
    }

    /// Its name in `text`, the text it was found in.
    pub(crate) fn name<'t>(&self, text: &'t (impl Slices + ?Sized)) -> &'t str {
        let start = self.name_start as usize;
        text.slice(start..start + usize::from(self.name_len))
            .unwrap_or("")
    }

    /// It moved `shift` bytes on.
    pub(crate) fn shifted(&self, shift: u32) -> Definition {
        Definition {
            start: self.start + shift,
            end: self.end + shift,
            name_start: self.name_start + shift,
            ..*self
        }
    }

    /// Whether it (with its wrapper) holds `start..end`.
    pub(crate) fn holds(&self, start: u32, end: u32) -> bool {
        self.outer() <= start && end <= self.end
    }

    /// Whether it is well formed inside a text of `len` bytes: its ranges
    /// in order and inside the text, its kind known.
    pub(crate) fn fits(&self, len: u64) -> bool {
        let name_end = u64::from(self.name_start) + u64::from(self.name_len);
        u32::from(self.packed >> 4) <= self.start
            && self.start <= self.end
            && u64::from(self.end) <= len
            && name_end <= len
            && DefKind::from_byte((self.packed & 0xf) as u8).is_some()
    }

    /// The order definitions are kept in.
    fn order(&self) -> (u32, std::cmp::Reverse<u32>) {
        (self.outer(), std::cmp::Reverse(self.end))
    }
}

/// The definitions of one text, sorted by outer start (outer first at one
/// start).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Definitions(Box<[Definition]>);

impl Definitions {
    /// Definitions in any order, sorted.
    pub(crate) fn sorted(mut definitions: Vec<Definition>) -> Definitions {
        definitions.sort_by_key(Definition::order);
        Definitions(definitions.into_boxed_slice())
    }

    /// Definitions if they are in order; `None` otherwise (a damaged
    /// cache).
    pub(crate) fn checked(definitions: Vec<Definition>) -> Option<Definitions> {
        let ordered = definitions.windows(2).all(|w| w[0].order() <= w[1].order());
        ordered.then(|| Definitions(definitions.into_boxed_slice()))
    }

    /// Every definition, in order.
    pub fn as_slice(&self) -> &[Definition] {
        &self.0
    }

    /// Bytes they hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.0)
    }

    /// Those within `offset..offset + len` of a text, moved to start at
    /// `offset` (a snippet parsed inside its wrapper: the wrapper's own
    /// definitions are not the snippet's).
    pub(crate) fn within(&self, offset: u32, len: u32) -> Definitions {
        let end = offset + len;
        Definitions(
            self.0
                .iter()
                .filter(|d| offset <= d.outer() && d.end <= end)
                .map(|d| Definition {
                    start: d.start - offset,
                    end: d.end - offset,
                    name_start: d.name_start - offset,
                    ..*d
                })
                .collect(),
        )
    }
}

/// Gathers definitions as the token walk meets their nodes, in document
/// order.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    definitions: Vec<Definition>,
    /// The byte range of the last definition wrapper met: a definition
    /// ending where it ends starts, with its wrapper, where it starts.
    wrapper: Option<(u32, u32)>,
}

impl Collector {
    /// Notes the node `v` if `kinds` declares it a definition or a
    /// definition's wrapper.
    #[inline]
    pub(crate) fn visit(&mut self, kinds: &Kinds, v: &Visible<'_>) {
        let rule = match kinds.defines(v.kind) {
            Defines::Nothing => return,
            Defines::Wrapper => {
                self.wrapper = Some((v.start as u32, v.end as u32));
                return;
            }
            Defines::Definition(rule) => rule,
        };
        let Some(name) = rule.name_of(v.node) else {
            return;
        };
        let Ok(name_len) = u16::try_from(name.end_byte() - name.start_byte()) else {
            return;
        };
        let (start, end) = (v.start as u32, v.end as u32);
        let outer = match self.wrapper {
            Some((w_start, w_end)) if w_start <= start && w_end == end => w_start,
            _ => start,
        };
        let name_start = name.start_byte() as u32;
        let definition = Definition::new(outer, start, end, name_start, name_len, rule.kind);
        self.definitions.push(definition);
    }

    /// The definitions gathered, sorted (a wrapper's start can move one
    /// before a definition met earlier inside the wrapper).
    pub(crate) fn finish(self) -> Definitions {
        Definitions::sorted(self.definitions)
    }
}

/// The definitions of `tree`, walked on their own (a snippet's tree, whose
/// tokens came from a walk that kept none); none for a format that
/// declares none.
pub(crate) fn of_tree(format: &Format, tree: &Tree) -> Definitions {
    let kinds = format.kinds();
    if !kinds.has_definitions() {
        return Definitions::default();
    }
    let mut collector = Collector::default();
    visible_nodes(tree.root_node(), |v| {
        collector.visit(kinds, &v);
        if v.has_children && kinds.class_of(v.kind).is_none() {
            Step::Descend
        } else {
            Step::Skip
        }
    });
    collector.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_take_16_bytes() {
        assert_eq!(std::mem::size_of::<Definition>(), 16);
    }
}
