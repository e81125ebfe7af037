//! The variants of a sampled function: T0 verbatim, T1 relaid out, T2i
//! locals renamed, T2l renamed and literals changed, T3 renamed and one
//! statement inserted or deleted. Every edit is the language's sampler's
//! to judge (`lang/`); a variant that parses worse than the original is
//! dropped. A T3 left with fewer than min-tokens tokens (a statement
//! deleted from a short function) is skipped: it shares too little with
//! the original to be a duplication.

use std::path::Path;

use dupcheck::engine::grammar::{Class, Format};
use dupcheck::engine::tokens::for_each_leaf;
use tree_sitter::Node;

use crate::lang::{declared_names, Layout, Sampler};
use crate::sample::{
    code_end, descendants, line_start_if_blank, parse, problems, read_source, snippet_tokens,
    Function, Rng,
};
use crate::MIN_TOKENS;

/// The variants, in table order.
pub const VARIANTS: [&str; 5] = ["T0", "T1", "T2i", "T2l", "T3"];

/// What became of one variant of one function.
pub enum Outcome {
    /// The variant's code.
    Made(String),
    /// It parses worse than the original (its code, for `--dump`).
    Dropped(String),
    /// Nothing to change: no local to rename, no literal, no statement.
    Skipped,
}

/// A function with its variants, in the order of [`VARIANTS`].
pub struct Case {
    pub function: Function,
    pub variants: Vec<Outcome>,
}

/// Writes the variants of the function numbered `index` to `dir`, those
/// dropped as `NNN-VARIANT.dropped.EXT`.
pub fn dump(dir: &Path, index: usize, format: &Format, variants: &[Outcome]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let extension = format.extensions.first().map_or("txt", String::as_str);
    for (name, outcome) in VARIANTS.iter().zip(variants) {
        let (code, dropped) = match outcome {
            Outcome::Made(code) => (code, ""),
            Outcome::Dropped(code) => (code, ".dropped"),
            Outcome::Skipped => continue,
        };
        {
            let path = dir.join(format!("{index:03}-{name}{dropped}.{extension}"));
            std::fs::write(&path, code)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// A replacement of a byte range of the file.
#[derive(Clone)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

impl Edit {
    fn new(start: usize, end: usize, text: impl Into<String>) -> Edit {
        Edit {
            start,
            end,
            text: text.into(),
        }
    }
}

/// Re-parses the file of `function` and makes its variants.
pub fn make_variants(
    format: &Format,
    lang: &dyn Sampler,
    function: &Function,
    seed: u64,
) -> Option<Vec<Outcome>> {
    let src = read_source(&function.path)?;
    let tree = parse(format, &src)?;
    let (start, end) = (function.start_byte, function.end_byte);
    let mut node = tree.root_node().descendant_for_byte_range(start, end)?;
    while node.start_byte() != start || code_end(lang, node).0 != end || !lang.is_function(node) {
        node = node.parent()?;
    }
    Some(variants(format, lang, function, &src, node, seed))
}

/// The five variants of `function`, whose node in `src` is `node`.
fn variants(
    format: &Format,
    lang: &dyn Sampler,
    function: &Function,
    src: &str,
    node: Node<'_>,
    seed: u64,
) -> Vec<Outcome> {
    let (from, to) = (function.snippet_start, function.end_byte);
    let original = &src[from..to];
    let mut rng = Rng::derive(seed, &format!("{}:{}", function.file, function.start_byte));
    let renames = rename_edits(lang, node, src);
    let renamed_and = |extra: Vec<Edit>| {
        apply(
            src,
            from,
            to,
            renames.iter().cloned().chain(extra).collect(),
        )
    };
    let literals = literal_edits(lang, node, src, format);
    let codes = [
        Some(original.to_string()),
        Some(relayout(original, format, lang, &mut rng)),
        (!renames.is_empty()).then(|| renamed_and(Vec::new())),
        (!literals.is_empty()).then(|| renamed_and(literals)),
        statement_edit(lang, node, src, rng.one_in(2)).map(|edit| renamed_and(vec![edit])),
    ];
    let baseline = problems(format, lang, original);
    // A statement deleted from a function near min-tokens leaves a copy
    // that shares fewer: no duplication by definition, not a miss.
    let shares_enough = |code: &String| {
        snippet_tokens(format, lang.syntax().code_prefix, code).is_some_and(|n| n >= MIN_TOKENS)
    };
    let [t0, t1, t2i, t2l, t3] = codes;
    let codes = [t0, t1, t2i, t2l, t3.filter(shares_enough)];
    let outcome = |code: Option<String>| match code {
        None => Outcome::Skipped,
        Some(code) if problems(format, lang, &code) > baseline => Outcome::Dropped(code),
        Some(code) => Outcome::Made(code),
    };
    codes.into_iter().map(outcome).collect()
}

/// `src[from..to]` with `edits` (file offsets) applied; an edit overlapping
/// an earlier one is left out.
fn apply(src: &str, from: usize, to: usize, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::new();
    let mut at = from;
    for edit in &edits {
        if edit.start < at || edit.end > to {
            continue;
        }
        out.push_str(&src[at..edit.start]);
        out.push_str(&edit.text);
        at = edit.end;
    }
    out.push_str(&src[at..to]);
    out
}

/// T1: indentation doubled, comment and blank lines inserted, and as the
/// language's [`Layout`] allows, `{` moved to its own line and lines joined
/// after a comma. Nothing changes inside a token (a multi-line string keeps
/// its lines), and no line ending with `\` (a continued line, a macro) is
/// followed by a comment.
fn relayout(text: &str, format: &Format, lang: &dyn Sampler, rng: &mut Rng) -> String {
    let (leaves, verbatim) = leaves_of(text, format, lang);
    let inside = |p: usize| {
        let within = |&(s, e): &(usize, usize)| s < p && p < e;
        leaves.iter().any(|&(_, s, e)| within(&(s, e))) || verbatim.iter().any(within)
    };
    let in_text = |p: usize| {
        let textual = |c: Class| matches!(c, Class::String | Class::Comment);
        let within = |&(s, e): &(usize, usize)| s <= p && p < e;
        leaves
            .iter()
            .any(|&(c, s, e)| textual(c) && within(&(s, e)))
            || verbatim.iter().any(within)
    };
    let layout = lang.syntax().layout;
    let (braces, joins) = (layout == Layout::Braces, layout != Layout::Lines);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (mut out, mut offset, mut joined) = (String::new(), 0, false);
    for (i, line) in lines.iter().enumerate() {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let indent_len = if inside(offset) {
            0
        } else {
            body.len() - body.trim_start().len()
        };
        let indent = body[..indent_len].repeat(2);
        let code = body[indent_len..].trim_end();
        let last = offset + indent_len + code.len().saturating_sub(1);
        // Nor where a verbatim node (a heredoc's body) starts on the next
        // line: a line added before it would be in it.
        let next = offset + line.len();
        let verbatim_next = verbatim.iter().any(|&(s, e)| s <= next && next < e);
        let open_end = i + 1 < lines.len()
            && !inside(offset + body.len())
            && !verbatim_next
            && !code.ends_with('\\');
        let split_brace = open_end && braces && lang.opens_block(code) && !in_text(last);
        if !joined {
            out.push_str(&indent);
        }
        if split_brace && rng.one_in(2) {
            out.push_str(&format!(
                "{}\n{indent}{{",
                code[..code.len() - 1].trim_end()
            ));
        } else {
            out.push_str(&body[indent_len..]);
        }
        joined = open_end && joins && code.ends_with(',') && !in_text(last) && rng.one_in(3);
        if joined {
            out.push(' ');
        } else if line.ends_with('\n') {
            out.push('\n');
            if open_end {
                insert_filler(&mut out, lines[i + 1], lang, rng);
            }
        }
        offset += line.len();
    }
    out
}

/// The classified leaves of a snippet, and the ranges of its nodes of the
/// language's [`Syntax::verbatim`](crate::lang::Syntax) kinds; parsed after
/// the language's code prefix, offsets in `text`.
#[allow(clippy::type_complexity)]
fn leaves_of(
    text: &str,
    format: &Format,
    lang: &dyn Sampler,
) -> (Vec<(Class, usize, usize)>, Vec<(usize, usize)>) {
    let syntax = lang.syntax();
    let shift = syntax.code_prefix.len();
    let code = format!("{}{text}", syntax.code_prefix);
    let mut leaves = Vec::new();
    // The functions sampled parse within their budget (`sample`).
    let _ = for_each_leaf(format, &code, |leaf| {
        let (start, end) = (leaf.start as usize, leaf.end as usize);
        if start >= shift {
            leaves.push((leaf.class, start - shift, end - shift));
        }
    });
    let mut verbatim = Vec::new();
    if !syntax.verbatim.is_empty() {
        if let Some(tree) = parse(format, &code) {
            let kept = |n: &Node| syntax.verbatim.contains(&n.kind()) && n.start_byte() >= shift;
            verbatim = descendants(tree.root_node())
                .iter()
                .filter(|n| kept(n))
                .map(|n| (n.start_byte() - shift, n.end_byte() - shift))
                .collect();
        }
    }
    (leaves, verbatim)
}

/// Sometimes a comment line indented like `next`, sometimes a blank line.
fn insert_filler(out: &mut String, next: &str, lang: &dyn Sampler, rng: &mut Rng) {
    if rng.one_in(3) {
        let indent = next[..next.len() - next.trim_start().len()].repeat(2);
        out.push_str(&format!(
            "{indent}{} dupcheck T1 note\n",
            lang.syntax().line_comment
        ));
    }
    if rng.one_in(4) {
        out.push('\n');
    }
}

/// T2i: every name leaf that is an occurrence of a declared local gets a
/// new name, inside string interpolations too.
fn rename_edits(lang: &dyn Sampler, function: Node<'_>, src: &str) -> Vec<Edit> {
    let names = declared_names(lang, function, src);
    let kinds = lang.syntax().names;
    let renamed = |n: &Node| kinds.contains(&n.kind()) && names.contains(&src[n.byte_range()]);
    descendants(function)
        .into_iter()
        .filter(|n| renamed(n) && lang.is_local(*n))
        .map(|n| {
            Edit::new(
                n.start_byte(),
                n.end_byte(),
                format!("{}_rn", &src[n.byte_range()]),
            )
        })
        .collect()
}

/// T2l's literal part: numbers plus one, strings with a suffix.
fn literal_edits(lang: &dyn Sampler, function: Node<'_>, src: &str, format: &Format) -> Vec<Edit> {
    let quoted = lang.syntax().strings;
    let mut edits = Vec::new();
    let mut stack = vec![function];
    while let Some(node) = stack.pop() {
        let (start, text) = (node.start_byte(), &src[node.byte_range()]);
        match format.class_of(node.kind_id()) {
            Some(Class::Number) => {
                if let Some(bumped) = bump_number(text) {
                    edits.push(Edit::new(start, node.end_byte(), bumped));
                }
            }
            Some(Class::String) if quoted.contains(&node.kind()) => {
                if let Some(at) = string_end(text) {
                    edits.push(Edit::new(start + at, start + at, "_x"));
                }
            }
            Some(_) => {}
            None => {
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
            }
        }
    }
    edits
}

/// A decimal number plus one (its leading digits), or `None` for other
/// notations (hex, octal, binary, a leading dot or zero).
fn bump_number(text: &str) -> Option<String> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let radix_prefix =
        text.starts_with('0') && text[1..].starts_with(|c: char| c.is_ascii_alphabetic());
    if digits == 0 || radix_prefix || (digits > 1 && text.starts_with('0')) {
        return None;
    }
    let n: u64 = text[..digits].parse().ok()?;
    Some(format!("{}{}", n.checked_add(1)?, &text[digits..]))
}

/// The offset of a string literal's closing quote or quotes (before Rust's
/// raw-string `#`s).
fn string_end(text: &str) -> Option<usize> {
    let trimmed = text.trim_end_matches('#');
    let quote = trimmed
        .chars()
        .last()
        .filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let open = text.find(['"', '\'', '`'])?;
    let triple =
        text[open..].starts_with(&quote.to_string().repeat(3)) && trimmed.len() - open >= 6;
    Some(trimmed.len() - if triple { 3 } else { 1 })
}

/// T3's edit: the one-line statement nearest the function's middle,
/// deleted, or preceded by a new one when `insert`.
fn statement_edit(lang: &dyn Sampler, function: Node<'_>, src: &str, insert: bool) -> Option<Edit> {
    let syntax = lang.syntax();
    let (first, last) = (function.start_position().row, function.end_position().row);
    let inner = |n: &Node| {
        let row = n.start_position().row;
        row > first && row == n.end_position().row && row < last
    };
    let in_block = |n: &Node| {
        let block = |p: Node| syntax.blocks.contains(&p.kind()) && p.named_child_count() >= 2;
        n.is_named() && !n.kind().contains("comment") && n.parent().is_some_and(block)
    };
    let candidate = descendants(function)
        .into_iter()
        .filter(|n| inner(n) && in_block(n) && alone_on_line(src, n.start_byte(), n.end_byte()))
        .min_by_key(|n| {
            (
                n.start_position().row.abs_diff((first + last) / 2),
                n.start_byte(),
            )
        })?;
    let start = line_start_if_blank(src, candidate.start_byte());
    if insert {
        let indent = &src[start..candidate.start_byte()];
        return Some(Edit::new(
            start,
            start,
            format!("{indent}{}\n", syntax.statement),
        ));
    }
    let end = candidate.end_byte();
    Some(Edit::new(
        start,
        src[end..].find('\n').map_or(src.len(), |i| end + i + 1),
        "",
    ))
}

/// Whether nothing but whitespace shares the lines of `start..end`.
fn alone_on_line(src: &str, start: usize, end: usize) -> bool {
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let rest = src[end..].split('\n').next().unwrap_or("");
    src[line_start..start].trim().is_empty() && rest.trim().is_empty()
}
