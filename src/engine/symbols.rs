//! Definitions: the functions, methods, classes and modules of a parsed
//! text, and the symbol a place lies in.
//!
//! In: the nodes of a parse as the token walk meets them (a [`Collector`]
//! rides along that walk, so a file's definitions cost no second pass over
//! its tree), and the format's `definitions` of `grammars.toml` (which node
//! kinds are definitions, of what [`DefKind`], and the field path to their
//! name). Out: a file's [`Definitions`], compact and sorted by start; for a
//! place (a byte range), its [`Symbol`]: the innermost definition holding
//! it whole, the nearest class-like definition around that, and whether
//! the place covers the definition from its first token to its last.
//!
//! Invariants: definitions are sorted by start, outer before inner at one
//! start, and nest as the tree does; a definition whose name path finds no
//! node is not recorded (a symbol is never guessed); a name is the text of
//! the node its path ends at, read from the text kept beside the
//! definitions. A place that no definition holds has no symbol.

use serde::Deserialize;
use tree_sitter::{Node, Tree};

use crate::engine::grammar::{Format, Kinds};
use crate::engine::tokens::{LineIndex, Position, Token};
use crate::engine::visible_nodes::{visible_nodes, Step, Visible};

/// What a definition is: the small fixed vocabulary answers use
/// (docs/matching.md, "Symbols").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum DefKind {
    /// A function (a method when a class-like definition holds it
    /// directly).
    Function = 1,
    /// A method, declared as such by its grammar.
    Method = 2,
    /// A class (and a record, an object, a contract).
    Class = 3,
    /// A struct or union.
    Struct = 4,
    /// An enum.
    Enum = 5,
    /// An interface or protocol.
    Interface = 6,
    /// A trait.
    Trait = 7,
    /// An `impl` block, named by its type.
    Impl = 8,
    /// A module or namespace.
    Module = 9,
}

impl DefKind {
    /// Every kind, by its byte minus one.
    const ALL: [DefKind; 9] = [
        DefKind::Function,
        DefKind::Method,
        DefKind::Class,
        DefKind::Struct,
        DefKind::Enum,
        DefKind::Interface,
        DefKind::Trait,
        DefKind::Impl,
        DefKind::Module,
    ];

    /// Its name in answers.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Method => "method",
            DefKind::Class => "class",
            DefKind::Struct => "struct",
            DefKind::Enum => "enum",
            DefKind::Interface => "interface",
            DefKind::Trait => "trait",
            DefKind::Impl => "impl",
            DefKind::Module => "module",
        }
    }

    /// The kind stored as `byte`.
    pub(crate) fn from_byte(byte: u8) -> Option<DefKind> {
        DefKind::ALL.get(usize::from(byte).checked_sub(1)?).copied()
    }

    /// Whether it holds other definitions as members: every kind but
    /// functions and methods. A function such a definition holds directly
    /// is a method.
    pub(crate) fn is_container(self) -> bool {
        !matches!(self, DefKind::Function | DefKind::Method)
    }

    /// Whether it is callable: a function or a method.
    pub(crate) fn is_callable(self) -> bool {
        !self.is_container()
    }
}

/// How one kind of definition is named, from `grammars.toml`.
#[derive(Debug, Clone)]
pub(crate) struct DefinitionRule {
    /// What it is.
    pub kind: DefKind,
    /// The field path from the definition's node to its name: each step a
    /// field id, and whether it is followed as long as it leads somewhere
    /// (`declarator*`: C's declarators nest).
    pub name: Vec<(std::num::NonZeroU16, bool)>,
}

impl DefinitionRule {
    /// The node naming `node`, if its path leads to one.
    fn name_of<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut at = node;
        for &(field, repeat) in &self.name {
            at = at.child_by_field_id(field.get())?;
            if repeat {
                while let Some(next) = at.child_by_field_id(field.get()) {
                    at = next;
                }
            }
        }
        Some(at)
    }
}

/// One definition of a text: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Definition {
    /// Byte offset of its first byte (of its wrapper's, when a decorator
    /// or an `export` opens it).
    pub start: u32,
    /// Byte offset just past its last byte.
    pub end: u32,
    /// Byte offset of its name.
    pub name_start: u32,
    /// Length of its name in bytes.
    pub name_len: u16,
    /// Its [`DefKind`] as a byte.
    pub kind: u8,
}

impl Definition {
    /// Its kind.
    pub(crate) fn kind(&self) -> DefKind {
        DefKind::from_byte(self.kind).unwrap_or(DefKind::Function)
    }

    /// Its name in `text`, the text it was found in.
    pub(crate) fn name<'t>(&self, text: &'t str) -> &'t str {
        let start = self.name_start as usize;
        text.get(start..start + usize::from(self.name_len))
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

    /// Whether it holds `start..end`.
    fn holds(&self, start: u32, end: u32) -> bool {
        self.start <= start && end <= self.end
    }
}

/// The definitions of one text, sorted by start (outer first at one start).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Definitions(Box<[Definition]>);

/// The definition a place lies in, as answers name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Symbol {
    /// Its kind (a function a class-like definition holds directly is a
    /// method).
    pub kind: DefKind,
    /// Its name as written.
    pub name: String,
    /// The name of the nearest class-like definition around it.
    pub container: Option<String>,
    /// Whether the place covers it from its first token to its last.
    pub whole: bool,
}

impl Definitions {
    /// Definitions already sorted by start (outer first at one start).
    pub(crate) fn from_sorted(definitions: Vec<Definition>) -> Definitions {
        Definitions(definitions.into_boxed_slice())
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
                .filter(|d| offset <= d.start && d.end <= end)
                .map(|d| Definition {
                    start: d.start - offset,
                    end: d.end - offset,
                    name_start: d.name_start - offset,
                    ..*d
                })
                .collect(),
        )
    }

    /// The symbol of the place `start..end` (bytes of `text`, whose
    /// `tokens` they are): the innermost definition holding it, if any.
    pub(crate) fn symbol(
        &self,
        text: &str,
        tokens: &[Token],
        start: u32,
        end: u32,
    ) -> Option<Symbol> {
        let defs = &self.0;
        let before = defs.partition_point(|d| d.start <= start);
        // Definitions nest, so those before the place that hold it are its
        // ancestors, innermost last.
        let mut holding = defs[..before].iter().rev().filter(|d| d.holds(start, end));
        let inner = holding.next()?;
        let parent = holding.clone().next();
        let container = holding
            .clone()
            .find(|d| d.kind().is_container())
            .map(|d| d.name(text).to_owned());
        let mut kind = inner.kind();
        if kind == DefKind::Function && parent.is_some_and(|p| p.kind().is_container()) {
            kind = DefKind::Method;
        }
        Some(Symbol {
            kind,
            name: inner.name(text).to_owned(),
            container,
            whole: covers(inner, tokens, start, end),
        })
    }

    /// The symbol of a place given by its [`Position`]s in a text and its
    /// line table.
    pub(crate) fn symbol_at(
        &self,
        text: &str,
        lines: &LineIndex,
        tokens: &[Token],
        from: Position,
        to: Position,
    ) -> Option<Symbol> {
        if self.0.is_empty() {
            return None;
        }
        let start = offset_of(text, lines, from)?;
        let end = offset_of(text, lines, to)?;
        self.symbol(text, tokens, start, end)
    }
}

/// Whether `start..end` holds every token of `definition`: from its first
/// token (the first starting at or after its start) to its last (the last
/// starting before its end). Walls (suppressed code) count as tokens.
fn covers(definition: &Definition, tokens: &[Token], start: u32, end: u32) -> bool {
    let first = tokens.partition_point(|t| t.start < definition.start);
    let past = tokens.partition_point(|t| t.start < definition.end);
    if first >= past {
        return false;
    }
    start <= tokens[first].start && tokens[past - 1].end() <= end
}

/// The byte offset of a position (1-based line, column in characters).
fn offset_of(text: &str, lines: &LineIndex, at: Position) -> Option<u32> {
    let line_start = lines.line_start(at.line)? as usize;
    let rest = text.get(line_start..)?;
    let column = at.column.checked_sub(1)? as usize;
    let bytes = match rest.char_indices().nth(column) {
        Some((i, _)) => i,
        None => rest.len(),
    };
    u32::try_from(line_start + bytes).ok()
}

/// Gathers definitions as the token walk meets their nodes, in document
/// order.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    definitions: Vec<Definition>,
    /// The byte range of the last definition wrapper met: a definition
    /// ending where it ends starts where it starts.
    wrapper: Option<(u32, u32)>,
}

impl Collector {
    /// Notes the node `v` if `kinds` declares it a definition or a
    /// definition's wrapper.
    #[inline]
    pub(crate) fn visit(&mut self, kinds: &Kinds, v: &Visible<'_>) {
        let Some(rule) = kinds.definition(v.kind) else {
            if kinds.is_definition_wrapper(v.kind) {
                self.wrapper = Some((v.start as u32, v.end as u32));
            }
            return;
        };
        let Some(name) = rule.name_of(v.node) else {
            return;
        };
        let (start, end) = (v.start as u32, v.end as u32);
        let Ok(name_len) = u16::try_from(name.end_byte() - name.start_byte()) else {
            return;
        };
        let start = match self.wrapper {
            Some((w_start, w_end)) if w_start <= start && w_end == end => w_start,
            _ => start,
        };
        self.definitions.push(Definition {
            start,
            end,
            name_start: name.start_byte() as u32,
            name_len,
            kind: rule.kind as u8,
        });
    }

    /// The definitions gathered, sorted.
    pub(crate) fn finish(mut self) -> Definitions {
        // The walk meets them in document order; a wrapper's start can move
        // one before a definition met earlier inside the wrapper.
        self.definitions
            .sort_by_key(|d| (d.start, std::cmp::Reverse(d.end)));
        Definitions(self.definitions.into_boxed_slice())
    }
}

/// The definitions of `tree`, walked on their own (a snippet's tree, whose
/// tokens came from a walk that kept none); `None` for a format that
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
    use crate::engine::grammar::Registry;
    use crate::engine::parse::Budget;
    use crate::engine::tokens::{tokenize_defined, Normalization};

    /// The symbol of the first occurrence of `place` in `code`, as
    /// `kind name [in container] [whole]`; "none" when none.
    fn check(format: &str, code: &str, place: &str, expected: &str) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).unwrap();
        let (tokens, definitions) = tokenize_defined(
            format,
            code,
            &Normalization::default(),
            &Budget::for_file(code.len()),
        )
        .unwrap();
        let start = code.find(place).expect("place in code") as u32;
        let end = start + place.trim_end().len() as u32;
        let got = match definitions.symbol(code, &tokens, start, end) {
            None => "none".to_owned(),
            Some(s) => {
                let mut said = format!("{} {}", s.kind.name(), s.name);
                if let Some(c) = s.container {
                    said.push_str(&format!(" in {c}"));
                }
                if s.whole {
                    said.push_str(" whole");
                }
                said
            }
        };
        assert_eq!(got, expected, "{format:?}: {place:?}");
    }

    const JS: &str = "\
import x from 'y';
const top = 1;
console.log(top);
export class OptionsBuilder {
  mergeOptions(a, b) {
    const out = {};
    for (const k of a) { out[k] = b[k]; }
    return out;
  }
}
function outer() {
  function inner(q) {
    return q * 2;
  }
  return inner(3);
}
";

    #[test]
    fn javascript_methods_nested_functions_and_top_level() {
        check(
            "js",
            JS,
            "for (const k",
            "method mergeOptions in OptionsBuilder",
        );
        check(
            "js",
            JS,
            "mergeOptions(a, b) {\n    const out = {};\n    for (const k of a) { out[k] = b[k]; }\n    return out;\n  }",
            "method mergeOptions in OptionsBuilder whole",
        );
        check("js", JS, "return q * 2;", "function inner");
        check(
            "js",
            JS,
            "function inner(q) {\n    return q * 2;\n  }",
            "function inner whole",
        );
        check("js", JS, "console.log(top);", "none");
        // An export opens the class: a copy from `export` on is whole.
        let class_end = JS.find("function outer").unwrap();
        let class_start = JS.find("export class").unwrap();
        check(
            "js",
            JS,
            &JS[class_start..class_end],
            "class OptionsBuilder whole",
        );
    }

    const PY: &str = "\
import os
x = 1
print(x)
class Stats:
    @staticmethod
    def total(xs):
        s = 0
        for v in xs:
            s += v
        return s
def outer():
    def inner(q):
        return q * 2
    return inner(3)
";

    #[test]
    fn python_methods_nested_functions_and_top_level() {
        check("python", PY, "for v in xs:", "method total in Stats");
        let start = PY.find("    @staticmethod").unwrap() + 4;
        let end = PY.find("def outer").unwrap();
        check("python", PY, &PY[start..end], "method total in Stats whole");
        check("python", PY, "return q * 2", "function inner");
        check("python", PY, "print(x)", "none");
    }

    #[test]
    fn rust_methods_in_impls_and_traits() {
        let code = "\
use std::fmt;
mod shapes {
    struct Square { side: u32 }
    impl Square {
        fn area(&self) -> u32 {
            self.side * self.side
        }
    }
}
fn free() -> u32 { 1 + 2 }
";
        check(
            "rust",
            code,
            "self.side * self.side",
            "method area in Square",
        );
        check("rust", code, "side: u32", "struct Square in shapes");
        check(
            "rust",
            code,
            "fn free() -> u32 { 1 + 2 }",
            "function free whole",
        );
        check("rust", code, "use std::fmt;", "none");
    }

    #[test]
    fn c_functions_are_named_through_their_declarators() {
        let code = "\
#include <stdio.h>
static int *pick(int *a, int n) {
    return a + n;
}
int sum(int *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    return s;
}
";
        check("c", code, "return a + n;", "function pick");
        check("c", code, "for (int i = 0", "function sum");
        check("c", code, "#include <stdio.h>", "none");
    }

    #[test]
    fn java_methods_in_classes() {
        let code = "\
package p;
class Box {
    int twice(int v) {
        return v * 2;
    }
    class Inner { void run() { go(); } }
}
";
        check("java", code, "return v * 2;", "method twice in Box");
        check("java", code, "go();", "method run in Inner");
    }

    #[test]
    fn go_functions_and_methods() {
        let code = "\
package main
func (b *Box) Twice(v int) int {
\treturn v * 2
}
func Sum(xs []int) int {
\treturn len(xs)
}
";
        check("go", code, "return v * 2", "method Twice");
        check("go", code, "return len(xs)", "function Sum");
    }

    #[test]
    fn definitions_take_16_bytes() {
        assert_eq!(std::mem::size_of::<Definition>(), 16);
    }
}
