//! One sampler per language: which nodes are the functions sampled, which
//! names their parameters and locals bind (and which occurrences of those
//! names are the locals, not fields, properties, types, keyword arguments
//! or labels), the line comment and the statement the variants insert, and
//! what a relayout may do.
//!
//! A language is a [`Syntax`] (tables) plus a [`Sampler`] (the tables and
//! hooks for what a table cannot say). The engine that walks patterns with
//! the tables is here, shared by all.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::sample::descendants;

mod c;
mod cpp;
mod csharp;
mod ecma;
mod go;
mod java;
mod kotlin;
mod php;
mod python;
mod ruby;
mod rust;
mod scala;
mod swift;

/// Every sampler, each for the formats it names.
const SAMPLERS: [&dyn Sampler; 13] = [
    &ecma::Ecma,
    &python::Python,
    &rust::Rust,
    &go::Go,
    &java::Java,
    &c::C,
    &cpp::Cpp,
    &csharp::CSharp,
    &ruby::Ruby,
    &php::Php,
    &kotlin::Kotlin,
    &swift::Swift,
    &scala::Scala,
];

/// The sampler of the format named `format`.
pub fn for_format(format: &str) -> Option<&'static dyn Sampler> {
    SAMPLERS
        .into_iter()
        .find(|s| s.syntax().formats.contains(&format))
}

/// Which children of a node a rule is about.
#[derive(Debug, Clone, Copy)]
pub enum Part {
    /// Those under this field (every one of them).
    Field(&'static str),
    /// The first named child.
    First,
    /// Every child.
    All,
    /// The named children of this kind.
    Kind(&'static str),
}

impl Part {
    /// The children of `node` this part names.
    fn of<'t>(self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        match self {
            Part::Field(field) => node.children_by_field_name(field, &mut cursor).collect(),
            Part::First => node.named_child(0).into_iter().collect(),
            Part::All => node.named_children(&mut cursor).collect(),
            Part::Kind(kind) => node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == kind)
                .collect(),
        }
    }

    /// Whether `child` is in this part of its parent `node`.
    fn contains(self, node: Node<'_>, child: Node<'_>) -> bool {
        match self {
            Part::All => true,
            _ => self.of(node).contains(&child),
        }
    }
}

/// What a relayout (T1) may do besides doubling the indentation and
/// inserting comment and blank lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Nothing more: indentation and `end` languages (Python, Ruby), where a
    /// line break can end a statement anywhere.
    Lines,
    /// Lines joined after a comma, but no brace moved: Go, where a `{` on
    /// its own line is a syntax error (semicolon insertion).
    Joins,
    /// Lines joined after a comma, and a `{` that ends a line moved to its
    /// own line where [`Sampler::opens_block`] allows.
    Braces,
}

/// The tables of one language. Kind names are the grammar's.
pub struct Syntax {
    /// Names of the formats it samples (as in `grammars.toml`).
    pub formats: &'static [&'static str],
    /// Node kinds of the functions and methods sampled.
    pub functions: &'static [&'static str],
    /// Kinds whose whole subtree is a pattern of bound names: parameter
    /// lists.
    pub parameter_lists: &'static [&'static str],
    /// Kinds that declare names, and the part of them that is the pattern
    /// (`"*"`: any kind).
    pub declarations: &'static [(&'static str, Part)],
    /// Leaf kinds that name a local: inside a pattern a bound name, in the
    /// body an occurrence that T2i renames.
    pub names: &'static [&'static str],
    /// Kinds inside a pattern that bind nothing (types, attributes).
    pub opaque: &'static [&'static str],
    /// Kinds inside a pattern of which only one part binds.
    pub parts: &'static [(&'static str, Part)],
    /// Fields of other pattern kinds that bind nothing (types, guards).
    pub skip_fields: &'static [&'static str],
    /// Parents, and the part of them, where a name leaf is not a local: a
    /// property, a field, a keyword argument, a path segment, a label.
    pub not_local: &'static [(&'static str, Part)],
    /// How a line comment starts.
    pub line_comment: &'static str,
    /// The statement T3 and T3c insert (one line), and T3 puts in place of
    /// a statement it changes that has no infix operator and no call.
    pub statement: &'static str,
    /// Kinds of statement lists: T3 and T3c edit statements of them.
    pub blocks: &'static [&'static str],
    /// String literal kinds whose closing quote T2l may append to.
    pub strings: &'static [&'static str],
    /// What T1 may do.
    pub layout: Layout,
    /// Kinds whose text T1 never touches, over the leaves the format
    /// classifies (heredocs, multi-line strings with interpolations).
    pub verbatim: &'static [&'static str],
    /// Whether a function ends at its last token rather than at its node's
    /// end (some grammars end a function after the comments that follow
    /// it). Off for the first four languages, whose samples stay as they
    /// were published.
    pub trim_comments: bool,
    /// What precedes any code of a file (PHP's `<?php`): a snippet is
    /// parsed after it when the variants are made and judged.
    pub code_prefix: &'static str,
}

/// Names never renamed: receivers.
const RECEIVERS: [&str; 4] = ["self", "cls", "this", "_"];

/// A language's sampling rules: its tables, and hooks for what they cannot
/// say (each has a default reading the tables).
pub trait Sampler: Sync {
    fn syntax(&self) -> &'static Syntax;

    /// Whether `node` is a function or method the benchmark samples.
    fn is_function(&self, node: Node<'_>) -> bool {
        self.syntax().functions.contains(&node.kind())
    }

    /// The part of `node` that is a pattern of declared names, if it
    /// declares any.
    fn declaration(&self, node: Node<'_>) -> Option<Part> {
        let declarations = self.syntax().declarations;
        let kind = node.kind();
        if let Some(&(_, part)) = declarations.iter().find(|(k, _)| *k == kind) {
            return Some(part);
        }
        let any = declarations.iter().filter(|(k, _)| *k == "*");
        any.map(|&(_, part)| part)
            .find(|part| !part.of(node).is_empty())
    }

    /// Whether a name bound in a pattern is a new local (not a constant
    /// matched against).
    fn binds(&self, _name: &str) -> bool {
        true
    }

    /// Whether a name leaf (one of [`Syntax::names`]) is an occurrence of a
    /// local rather than a property, a field, a keyword argument or a label.
    fn is_local(&self, node: Node<'_>) -> bool {
        !in_part(node, self.syntax().not_local)
    }

    /// Whether a line that ends with ` {` may have it moved to its own line.
    fn opens_block(&self, code: &str) -> bool {
        code.ends_with(" {")
    }
}

/// Whether `node` is in one of the `(parent kind, part)` places.
pub fn in_part(node: Node<'_>, places: &[(&str, Part)]) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    places
        .iter()
        .any(|&(kind, part)| parent.kind() == kind && part.contains(parent, node))
}

/// Texts of the locals and parameters declared inside `function`.
pub fn declared_names(lang: &dyn Sampler, function: Node<'_>, src: &str) -> BTreeSet<String> {
    let syntax = lang.syntax();
    let mut names = BTreeSet::new();
    for node in descendants(function) {
        if syntax.parameter_lists.contains(&node.kind()) {
            collect_bindings(lang, node, src, &mut names);
            continue;
        }
        if let Some(part) = lang.declaration(node) {
            for target in part.of(node) {
                collect_bindings(lang, target, src, &mut names);
            }
        }
    }
    names.retain(|n| !RECEIVERS.contains(&n.as_str()));
    names
}

/// Adds the names a pattern binds, by the tables of `lang`.
fn collect_bindings(lang: &dyn Sampler, node: Node<'_>, src: &str, names: &mut BTreeSet<String>) {
    let syntax = lang.syntax();
    let kind = node.kind();
    if syntax.names.contains(&kind) {
        let text = &src[node.byte_range()];
        if lang.binds(text) {
            names.insert(text.to_string());
        }
        return;
    }
    if syntax.opaque.contains(&kind) {
        return;
    }
    if let Some(&(_, part)) = syntax.parts.iter().find(|(k, _)| *k == kind) {
        for child in part.of(node) {
            collect_bindings(lang, child, src, names);
        }
        return;
    }
    for i in 0..node.named_child_count() {
        let field = node.field_name_for_named_child(i as u32);
        let binds = !field.is_some_and(|f| syntax.skip_fields.contains(&f));
        if let Some(child) = node.named_child(i as u32).filter(|_| binds) {
            collect_bindings(lang, child, src, names);
        }
    }
}

/// Whether the name starts lower-case or with `_`: in Rust and Scala a
/// capitalized name in a pattern is a constant or a variant, not a binding.
pub fn lower_case(name: &str) -> bool {
    name.starts_with(|c: char| c.is_lowercase() || c == '_')
}

/// Whether a line ends with ` {` after one of `keywords` starting it, or
/// after one of `endings`: for languages where a `{` after a call's
/// arguments is a trailing closure, which must stay on the line.
pub fn block_after(code: &str, keywords: &[&str], endings: &[&str]) -> bool {
    let head = code.trim_start().trim_start_matches("} ");
    let starts = keywords.iter().any(|k| {
        head.strip_prefix(k)
            .is_some_and(|rest| rest.starts_with([' ', '(']))
    });
    code.ends_with(" {") && (starts || endings.iter().any(|e| code.ends_with(e)))
}
