//! Dumps for grammar work: a text's normalized tokens (`--dump-tokens`)
//! and its syntax tree (`--dump-tree`), as a person reads them.

use super::leaves::for_each_leaf;
use super::lines::LineIndex;
#[cfg(test)]
use super::normalize::Fate;
use super::normalize::Normalization;
use super::Mode;
use crate::engine::grammar::Format;
use crate::engine::parse::{parse, Budget, ParseError};

/// Renders the normalized tokens of `text` one per line, as
/// `line:column class identity` (the identity in `mode`), for
/// `--dump-tokens` and golden tests: comments show as `(dropped)`, the
/// leaves of imports as `(import)`, those after a disabling suppression
/// comment as `(suppressed)`, tokens inside an ignore pattern's match as
/// `(ignored)`, identities compared without case in lower case.
pub(crate) fn dump(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    mode: Mode,
) -> Result<String, ParseError> {
    let lines = LineIndex::new(text);
    let mut out = String::new();
    let mut normalizer = normalization.of(text);
    for_each_leaf(format, text, |leaf| {
        let shown = normalizer.shown(mode, format, leaf);
        let at = lines.start_position(text, leaf.start);
        out.push_str(&format!(
            "{}:{} {} {}\n",
            at.line,
            at.column,
            leaf.class.name(),
            shown.escape_debug()
        ));
    })?;
    Ok(out)
}

/// Renders the syntax tree of `text` one node per line, indented by depth,
/// as `field: kind` (anonymous kinds quoted) and, for leaves, their text:
/// what a `grammars.toml` table is written from (`--dump-tree`).
pub(crate) fn dump_tree(format: &Format, text: &str) -> Result<String, ParseError> {
    let tree = parse(format, text, None, &Budget::for_file(text.len()))?;
    let mut out = String::new();
    let mut cursor = tree.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        out.push_str(&"  ".repeat(depth));
        if let Some(field) = cursor.field_name() {
            out.push_str(field);
            out.push_str(": ");
        }
        match node.kind() {
            kind if node.is_missing() => out.push_str(&format!("MISSING {kind:?}")),
            kind if node.is_named() => out.push_str(kind),
            kind => out.push_str(&format!("{kind:?}")),
        }
        if node.child_count() == 0 && node.is_named() {
            out.push_str(&format!(" {:?}", &text[node.byte_range()]));
        }
        out.push('\n');
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return Ok(out);
            }
            depth -= 1;
        }
    }
}

/// The identity texts of `text` in `mode` joined by spaces: the normalized
/// form a person reads (without case in lower case), used by golden tests.
#[cfg(test)]
pub(crate) fn normalized(
    format: &Format,
    text: &str,
    normalization: &Normalization,
    mode: Mode,
) -> Result<String, ParseError> {
    let mut parts = Vec::new();
    let mut normalizer = normalization.of(text);
    for_each_leaf(format, text, |leaf| {
        if let Fate::Kept(class) = normalizer.decide(format, leaf) {
            let shown = normalizer.identity_shown(mode, class, leaf);
            parts.push(shown.replace('\n', "\\n"));
        }
    })?;
    Ok(parts.join(" "))
}
