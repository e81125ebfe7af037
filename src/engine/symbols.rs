//! Symbols: the definition a place lies in, as answers name it.
//!
//! In: a text's [`Definitions`](crate::engine::definitions::Definitions),
//! its tokens and a place (a byte range, or the positions answers give).
//! Out: its [`Symbol`]: the innermost definition whose range (with its
//! wrapper: a decorator, an `export`) holds the whole place, its kind (a
//! function that a class-like definition other than a module holds
//! directly is a method), the
//! nearest class-like definition around it, and whether the place covers
//! it whole: from the definition's own first token (its wrapper's tokens
//! may be left out) to its last.
//!
//! Invariants: a place that no definition holds has no symbol; nothing is
//! guessed from names or lines.

use crate::engine::definitions::{Definition, Definitions};
use crate::engine::grammar::DefKind;
use crate::engine::text::Slices;
use crate::engine::tokens::{LineIndex, Position, Tokens};

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
    /// The symbol of the place `start..end` (bytes of `text`, whose
    /// `tokens` they are): the innermost definition holding it, if any.
    pub(crate) fn symbol(
        &self,
        text: &(impl Slices + ?Sized),
        tokens: &(impl Tokens + ?Sized),
        start: u32,
        end: u32,
    ) -> Option<Symbol> {
        let defs = self.as_slice();
        let before = defs.partition_point(|d| d.outer() <= start);
        // Definitions nest, so those before the place that hold it are its
        // ancestors, innermost last.
        let mut holding = defs[..before].iter().rev().filter(|d| d.holds(start, end));
        let inner = holding.next()?;
        let parent = holding.clone().next();
        let container = holding
            .find(|d| d.kind().is_container())
            .map(|d| d.name(text).to_owned());
        let mut kind = inner.kind();
        if kind == DefKind::Function && parent.is_some_and(|p| p.kind().has_methods()) {
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
        text: &(impl Slices + ?Sized),
        lines: &LineIndex,
        tokens: &(impl Tokens + ?Sized),
        from: Position,
        to: Position,
    ) -> Option<Symbol> {
        if self.as_slice().is_empty() {
            return None;
        }
        let start = offset_of(text, lines, from)?;
        let end = offset_of(text, lines, to)?;
        self.symbol(text, tokens, start, end)
    }
}

/// Whether `start..end` holds every token of `definition` from its own
/// first token (the first starting at or after its start, after any
/// wrapper) to its last (the last starting before its end). Walls
/// (suppressed code) count as tokens.
fn covers(definition: &Definition, tokens: &(impl Tokens + ?Sized), start: u32, end: u32) -> bool {
    let first = tokens.partition_point(|t| t.start < definition.start);
    let past = tokens.partition_point(|t| t.start < definition.end);
    if first >= past {
        return false;
    }
    start <= tokens.at(first).start && tokens.at(past - 1).end() <= end
}

/// The byte offset of a position (1-based line, column in characters; a
/// column past its line's end is the next line's start).
fn offset_of(text: &(impl Slices + ?Sized), lines: &LineIndex, at: Position) -> Option<u32> {
    let line_start = lines.line_start(at.line)? as usize;
    let line_end = lines
        .line_start(at.line + 1)
        .map_or(text.text_len(), |s| s as usize);
    let rest = text.slice(line_start..line_end)?;
    let column = at.column.checked_sub(1)? as usize;
    let bytes = match rest.char_indices().nth(column) {
        Some((i, _)) => i,
        None => rest.len(),
    };
    u32::try_from(line_start + bytes).ok()
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn an_export_or_a_decorator_may_be_left_out_of_a_whole_copy() {
        let code = "export function merge(a, b) {\n  return a + b;\n}\n";
        check(
            "js",
            code,
            "function merge(a, b) {\n  return a + b;\n}",
            "function merge whole",
        );
        check("js", code, code, "function merge whole");
        check("js", code, "return a + b;", "function merge");
    }

    #[test]
    fn the_scripts_of_markup_files_have_their_definitions() {
        let code = "<template><p/></template>\n<script>\nexport default {\n  methods: {},\n};\nfunction helper(x) {\n  return x + 1;\n}\n</script>\n";
        check("vue", code, "return x + 1;", "function helper");
        check("vue", code, "<template>", "none");
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
    fn methods_in_classes_and_top_level_code_in_more_formats() {
        // (format, code, a place in a method, its symbol, top-level code).
        let cases = [
            (
                "cpp",
                "namespace geo {\nclass Shape {\n public:\n  int area() { return w * h; }\n};\n}\nint x = 1;\n",
                "return w * h;",
                "method area in Shape",
                "int x = 1;",
            ),
            (
                "csharp",
                "using System;\nnamespace Geo {\n  class Shape {\n    int Area() { return w * h; }\n  }\n}\n",
                "return w * h;",
                "method Area in Shape",
                "using System;",
            ),
            (
                "ruby",
                "module Geo\n  class Shape\n    def area\n      w * h\n    end\n  end\nend\nputs 1\n",
                "w * h",
                "method area in Shape",
                "puts 1",
            ),
            (
                "php",
                "<?php\nclass Shape {\n  function area() { return $this->w * $this->h; }\n}\necho 1;\n",
                "return $this->w * $this->h;",
                "method area in Shape",
                "echo 1;",
            ),
            (
                "kotlin",
                "class Shape {\n  fun area(): Int { return w * h }\n}\nval x = 1\n",
                "return w * h",
                "method area in Shape",
                "val x = 1",
            ),
            (
                "scala",
                "import geo._\nobject Geo {\n  def area(w: Int, h: Int): Int = w * h\n}\n",
                "w * h",
                "method area in Geo",
                "import geo._",
            ),
            (
                "ts",
                "export interface Sized { size(): number }\nnamespace Geo {\n  export function area(w: number) { return w * 2; }\n}\nconsole.log(1);\n",
                "return w * 2;",
                "function area in Geo",
                "console.log(1);",
            ),
        ];
        for (format, code, inside, symbol, top) in cases {
            check(format, code, inside, symbol);
            check(format, code, top, "none");
        }
    }
}
