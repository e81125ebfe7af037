//! The variants of a sampled function: T0 verbatim, T1 relaid out, T2i
//! locals renamed, T2l renamed and literals changed, T3 renamed and one to
//! three statements edited, T3c ("classic", T3 until 2026-11-28) renamed
//! and the one statement nearest the middle inserted or deleted. Every
//! edit is the language's sampler's to judge (`lang/`); a variant that
//! parses worse than the original is dropped. A T3 or T3c that shares
//! fewer than min-tokens tokens with the original (its longest common
//! subsequence in mild mode: statements deleted or changed in a short
//! function) is skipped: it shares too little to be a duplication. (Until
//! 2026-11-28 only a copy itself under min-tokens was.)
//!
//! T3's edits vary with the function's own seeded generator: one to three
//! of them ([`EditCount`]), each on a different one-line statement, each at
//! a [`Position`] (the first statement not yet edited, the one nearest the
//! middle, the last) and of a [`Kind`] (a statement inserted before it, it
//! deleted, or it changed: an infix operator swapped, an argument added to
//! a call, or, when it has neither, the whole statement replaced). The
//! edits made are kept with the case ([`Case::edits`]) for the breakdown
//! of recall by position, kind and count.

use std::path::Path;

use dupcheck::engine::grammar::{Class, Format};
use dupcheck::engine::tokens::{for_each_leaf, Mode};
use tree_sitter::Node;

use crate::lang::{declared_names, Layout, Sampler};
use crate::sample::{
    code_end, common_tokens, descendants, line_start_if_blank, parse, problems, read_source,
    snippet_ids, Function, Rng,
};
use crate::MIN_TOKENS;

/// The variants, in table order.
pub const VARIANTS: [&str; 6] = ["T0", "T1", "T2i", "T2l", "T3", "T3c"];

/// Where a T3 edit lies among the function's editable statements: the
/// first not yet edited, the one nearest the function's middle line, or
/// the last. (In a function with fewer than three editable statements the
/// places coincide.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Position {
    Start,
    Middle,
    End,
}

/// What a T3 edit does to its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The language's statement inserted before it.
    Insert,
    /// It deleted (a statement that is its block's last is changed
    /// instead, so that no block is left empty).
    Delete,
    /// An infix operator swapped (`+` for `-`, `<` for `<=`, `&&` for
    /// `||`), an argument added to a call, or it replaced whole by the
    /// language's statement when it has neither.
    Change,
}

impl Position {
    pub const ALL: [Position; 3] = [Position::Start, Position::Middle, Position::End];

    pub fn name(self) -> &'static str {
        match self {
            Position::Start => "start",
            Position::Middle => "middle",
            Position::End => "end",
        }
    }
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Insert, Kind::Delete, Kind::Change];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Insert => "insert",
            Kind::Delete => "delete",
            Kind::Change => "change",
        }
    }
}

/// The most edits a T3 makes (it makes one to this many, as many as the
/// function has editable statements).
pub const MAX_EDITS: usize = 3;

/// How many edits a T3 asks for: `1..=MAX_EDITS`.
type EditCount = usize;

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
    /// T3's edits, in the order made (empty when no T3 was made).
    pub edits: Vec<(Position, Kind)>,
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
pub fn make_case(
    format: &Format,
    lang: &dyn Sampler,
    function: Function,
    seed: u64,
) -> Option<Case> {
    let src = read_source(&function.path)?;
    let tree = parse(format, &src)?;
    let (start, end) = (function.start_byte, function.end_byte);
    let mut node = tree.root_node().descendant_for_byte_range(start, end)?;
    while node.start_byte() != start || code_end(lang, node).0 != end || !lang.is_function(node) {
        node = node.parent()?;
    }
    let (variants, edits) = variants(format, lang, &function, &src, node, seed);
    Some(Case {
        function,
        variants,
        edits,
    })
}

/// The variants of `function`, whose node in `src` is `node`, and T3's
/// edits when it was made.
fn variants(
    format: &Format,
    lang: &dyn Sampler,
    function: &Function,
    src: &str,
    node: Node<'_>,
    seed: u64,
) -> (Vec<Outcome>, Vec<(Position, Kind)>) {
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
    let t1 = relayout(original, format, lang, &mut rng);
    // T3c draws from the variants' generator after T1, as T3 did before
    // it was widened; T3 has a generator of its own.
    let t3c = statement_edit(lang, node, src, rng.one_in(2)).map(|edit| renamed_and(vec![edit]));
    let mut t3_rng = Rng::derive(
        seed,
        &format!("T3:{}:{}", function.file, function.start_byte),
    );
    let (t3_edits, mut edits) = statement_edits(lang, node, src, &mut t3_rng);
    let codes = [
        Some(original.to_string()),
        Some(t1),
        (!renames.is_empty()).then(|| renamed_and(Vec::new())),
        (!literals.is_empty()).then(|| renamed_and(literals)),
        (!t3_edits.is_empty()).then(|| renamed_and(t3_edits)),
        t3c,
    ];
    let baseline = problems(format, lang, original);
    // Statements deleted or changed in a function near min-tokens leave a
    // copy that shares fewer with it, in order and in mild mode (identifiers
    // renamed alike): no duplication by definition, not a miss.
    let prefix = lang.syntax().code_prefix;
    let original_ids = snippet_ids(format, prefix, original, Mode::Mild);
    let shares_enough = |code: &String| {
        let ids = snippet_ids(format, prefix, code, Mode::Mild);
        match (&original_ids, ids) {
            (Some(original), Some(ids)) => common_tokens(original, &ids) >= MIN_TOKENS,
            _ => false,
        }
    };
    let [t0, t1, t2i, t2l, t3, t3c] = codes;
    let codes = [
        t0,
        t1,
        t2i,
        t2l,
        t3.filter(shares_enough),
        t3c.filter(shares_enough),
    ];
    let outcome = |code: Option<String>| match code {
        None => Outcome::Skipped,
        Some(code) if problems(format, lang, &code) > baseline => Outcome::Dropped(code),
        Some(code) => Outcome::Made(code),
    };
    let outcomes: Vec<Outcome> = codes.into_iter().map(outcome).collect();
    if !matches!(outcomes[4], Outcome::Made(_)) {
        edits.clear();
    }
    (outcomes, edits)
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

/// T3's edits: one to [`MAX_EDITS`] of them on distinct statements among
/// [`editable_statements`], each at a position and of a kind drawn from
/// `rng`; with what each was.
fn statement_edits(
    lang: &dyn Sampler,
    function: Node<'_>,
    src: &str,
    rng: &mut Rng,
) -> (Vec<Edit>, Vec<(Position, Kind)>) {
    let count: EditCount = 1 + (rng.next() % MAX_EDITS as u64) as usize;
    let plan: Vec<(Position, Kind)> = (0..count)
        .map(|_| {
            let position = Position::ALL[(rng.next() % 3) as usize];
            (position, Kind::ALL[(rng.next() % 3) as usize])
        })
        .collect();
    planned_edits(lang, function, src, &plan, rng)
}

/// The edits of `plan`, in order, each on a statement of
/// [`editable_statements`] not edited before (as many as there are), a
/// change's own choice drawn from `rng`; with what each edit was.
fn planned_edits(
    lang: &dyn Sampler,
    function: Node<'_>,
    src: &str,
    plan: &[(Position, Kind)],
    rng: &mut Rng,
) -> (Vec<Edit>, Vec<(Position, Kind)>) {
    let syntax = lang.syntax();
    let statements = editable_statements(lang, function, src);
    let middle = (function.start_position().row + function.end_position().row) / 2;
    let mut used = vec![false; statements.len()];
    // Statements deleted so far from each block (by the block's start).
    let mut deleted: Vec<usize> = Vec::new();
    let (mut edits, mut made) = (Vec::new(), Vec::new());
    for &(position, kind) in plan {
        let mut free = (0..statements.len()).filter(|&i| !used[i]);
        let chosen = match position {
            Position::Start => free.next(),
            Position::End => free.next_back(),
            Position::Middle => free.min_by_key(|&i| {
                let row = statements[i].start_position().row;
                (row.abs_diff(middle), i)
            }),
        };
        let Some(i) = chosen else { break };
        used[i] = true;
        let statement = statements[i];
        let block = statement.parent().map_or(0, |p| p.start_byte());
        let left = statement.parent().map_or(0, |p| p.named_child_count())
            - deleted.iter().filter(|&&b| b == block).count();
        let kind = match kind {
            Kind::Delete if left <= 1 => Kind::Change,
            kind => kind,
        };
        let start = line_start_if_blank(src, statement.start_byte());
        let edit = match kind {
            Kind::Insert => {
                let indent = &src[start..statement.start_byte()];
                Edit::new(start, start, format!("{indent}{}\n", syntax.statement))
            }
            Kind::Delete => {
                deleted.push(block);
                let end = statement.end_byte();
                let end = src[end..].find('\n').map_or(src.len(), |i| end + i + 1);
                // A function's last statement (Python) ends the function.
                Edit::new(start, end.min(function.end_byte()), "")
            }
            Kind::Change => change_edit(lang, statement, src, rng),
        };
        edits.push(edit);
        made.push((position, kind));
    }
    (edits, made)
}

/// Infix operators a change swaps, and what for.
const SWAPS: [(&str, &str); 16] = [
    ("+", "-"),
    ("-", "+"),
    ("*", "/"),
    ("/", "*"),
    ("<", "<="),
    ("<=", "<"),
    (">", ">="),
    (">=", ">"),
    ("==", "!="),
    ("!=", "=="),
    ("===", "!=="),
    ("!==", "==="),
    ("&&", "||"),
    ("||", "&&"),
    ("and", "or"),
    ("or", "and"),
];

/// A change of `statement`: one of its infix operators swapped or an
/// argument added to one of its parenthesized argument lists, drawn from
/// `rng`; the whole statement replaced by the language's statement when it
/// has neither.
fn change_edit(lang: &dyn Sampler, statement: Node<'_>, src: &str, rng: &mut Rng) -> Edit {
    let named = |n: Option<Node>| n.is_some_and(|n| n.is_named());
    let mut options = Vec::new();
    for node in descendants(statement) {
        let text = &src[node.byte_range()];
        let swap = SWAPS.iter().find(|(from, _)| *from == text);
        // Infix only: between two named nodes (not `-x`, `*p`, `List<T>`).
        let infix = named(node.prev_sibling()) && named(node.next_sibling());
        if let Some(&(_, to)) = swap.filter(|_| node.child_count() == 0 && infix) {
            options.push(Edit::new(node.start_byte(), node.end_byte(), to));
        }
        let count = node.child_count();
        let child_text = |i: u32| node.child(i).map(|c| &src[c.byte_range()]);
        let parenthesized =
            count >= 2 && child_text(0) == Some("(") && child_text(count - 1) == Some(")");
        if node.kind().contains("argument") && parenthesized {
            let close = node.end_byte() - 1;
            let argument = match (node.named_child_count(), child_text(count - 2)) {
                (0, _) => "0",
                (_, Some(",")) => " 0",
                _ => ", 0",
            };
            options.push(Edit::new(close, close, argument));
        }
    }
    if options.is_empty() {
        let text = lang.syntax().statement;
        return Edit::new(statement.start_byte(), statement.end_byte(), text);
    }
    let at = (rng.next() % options.len() as u64) as usize;
    options.swap_remove(at)
}

/// The one-line statements of `function` T3 may edit, in order, none
/// inside another: alone on their lines, not on its first line, in a
/// statement list ([`Syntax::blocks`](crate::lang::Syntax)) of two or more.
/// (A function whose last line is a statement, as Python's, may have it
/// edited.)
fn editable_statements<'t>(lang: &dyn Sampler, function: Node<'t>, src: &str) -> Vec<Node<'t>> {
    let mut kept: Vec<Node<'t>> = Vec::new();
    for node in candidates(lang, function, src, true) {
        if kept
            .last()
            .is_none_or(|k| node.start_byte() >= k.end_byte())
        {
            kept.push(node);
        }
    }
    kept
}

/// The statements T3 and T3c may edit, in document order, nested ones
/// included; on the function's last line only when `last_line` (T3c's
/// never are).
fn candidates<'t>(
    lang: &dyn Sampler,
    function: Node<'t>,
    src: &str,
    last_line: bool,
) -> Vec<Node<'t>> {
    let syntax = lang.syntax();
    let (first, last) = (function.start_position().row, function.end_position().row);
    let inner = |n: &Node| {
        let row = n.start_position().row;
        row > first && row == n.end_position().row && (row < last || last_line)
    };
    let in_block = |n: &Node| {
        let block = |p: Node| syntax.blocks.contains(&p.kind()) && p.named_child_count() >= 2;
        n.is_named() && !n.kind().contains("comment") && n.parent().is_some_and(block)
    };
    descendants(function)
        .into_iter()
        .filter(|n| inner(n) && in_block(n) && alone_on_line(src, n.start_byte(), n.end_byte()))
        .collect()
}

/// T3c's edit (T3 until 2026-11-28): the one-line statement nearest the
/// function's middle, deleted, or preceded by a new one when `insert`.
fn statement_edit(lang: &dyn Sampler, function: Node<'_>, src: &str, insert: bool) -> Option<Edit> {
    let syntax = lang.syntax();
    let (first, last) = (function.start_position().row, function.end_position().row);
    let candidate = candidates(lang, function, src, false)
        .into_iter()
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

#[cfg(test)]
mod tests {
    use dupcheck::engine::grammar::Registry;

    use super::*;
    use crate::lang;

    /// The function in `src` of `format` with `plan` applied (no renames),
    /// and the edits made.
    fn edited(
        format: &str,
        src: &str,
        plan: &[(Position, Kind)],
    ) -> (String, Vec<(Position, Kind)>) {
        let registry = Registry::builtin();
        let format = registry.lookup(format).expect("a built-in format");
        let lang = lang::for_format(&format.name).expect("a sampler");
        let tree = parse(format, src).expect("a parse");
        let function = descendants(tree.root_node())
            .into_iter()
            .find(|n| lang.is_function(*n))
            .expect("a function");
        let mut rng = Rng::derive(1, "test");
        let (edits, made) = planned_edits(lang, function, src, plan, &mut rng);
        let (from, to) = (function.start_byte(), function.end_byte());
        (apply(src, from, to, edits), made)
    }

    /// Checks that `plan` on the Python function makes `expected`, and
    /// what it says it made.
    fn check(plan: &[(Position, Kind)], expected: &str, made: &[(Position, Kind)]) {
        let (code, got) = edited("python", PYTHON, plan);
        assert_eq!(code, expected, "plan {plan:?}");
        assert_eq!(got, made, "plan {plan:?}");
    }

    const PYTHON: &str = "def f(a, b):
    x = a + b
    y = g(x)
    h()
    z = -y
    if x < y:
        w = 1
    return z
";

    use Kind::{Change, Delete, Insert};
    use Position::{End, Middle, Start};

    #[test]
    fn insert_at_start_goes_before_the_first_statement() {
        check(
            &[(Start, Insert)],
            "def f(a, b):\n    print(\"dupcheck\")\n    x = a + b\n    y = g(x)\n    h()\n    z = -y\n    if x < y:\n        w = 1\n    return z",
            &[(Start, Insert)],
        );
    }

    #[test]
    fn delete_at_end_removes_the_last_statement_line() {
        check(
            &[(End, Delete)],
            "def f(a, b):\n    x = a + b\n    y = g(x)\n    h()\n    z = -y\n    if x < y:\n        w = 1\n",
            &[(End, Delete)],
        );
    }

    #[test]
    fn change_in_the_middle_adds_an_argument() {
        // The statement nearest the middle line (4 of 0..=7) is `h()`.
        check(
            &[(Middle, Change)],
            "def f(a, b):\n    x = a + b\n    y = g(x)\n    h(0)\n    z = -y\n    if x < y:\n        w = 1\n    return z",
            &[(Middle, Change)],
        );
    }

    #[test]
    fn change_swaps_an_infix_operator_not_a_prefix_one() {
        check(
            &[(Start, Change)],
            "def f(a, b):\n    x = a - b\n    y = g(x)\n    h()\n    z = -y\n    if x < y:\n        w = 1\n    return z",
            &[(Start, Change)],
        );
        // `z = -y` has no infix operator and no call: it is replaced whole.
        let (code, _) = edited(
            "python",
            PYTHON,
            &[
                (Start, Delete),
                (Start, Delete),
                (Start, Delete),
                (Start, Change),
            ],
        );
        assert!(
            code.contains("\n    print(\"dupcheck\")\n    if x < y:"),
            "{code}"
        );
    }

    #[test]
    fn three_edits_touch_three_statements() {
        check(
            &[(Start, Delete), (Start, Insert), (End, Change)],
            "def f(a, b):\n    print(\"dupcheck\")\n    y = g(x)\n    h()\n    z = -y\n    if x < y:\n        w = 1\n    print(\"dupcheck\")",
            &[(Start, Delete), (Start, Insert), (End, Change)],
        );
    }

    #[test]
    fn a_block_is_never_emptied_and_edits_stop_when_statements_run_out() {
        let src = "def f(a):\n    if a:\n        x = 1\n        y = 2\n    return a\n";
        let (code, made) = edited(
            "python",
            src,
            &[
                (Middle, Delete),
                (Middle, Delete),
                (End, Delete),
                (Start, Insert),
            ],
        );
        // `if a:` spans lines, so `x = 1`, `y = 2` and `return a` are the
        // statements; the second deletion in the `if` block is a change,
        // of a statement with no operator and no call: replaced whole.
        assert_eq!(made, [(Middle, Delete), (Middle, Change), (End, Delete)]);
        assert_eq!(code, "def f(a):\n    if a:\n        print(\"dupcheck\")\n");
    }

    /// One function per sampler, four one-line statements in its body on
    /// lines 1 to 4 of the function: an infix operator in the first, a
    /// call with an argument in the second, the last a comparison.
    const EVERY_LANGUAGE: [(&str, &str); 13] = [
        (
            "javascript",
            "function f(a, b) {\n  let x = a + b;\n  let y = g(x);\n  h();\n  return x < y;\n}\n",
        ),
        (
            "python",
            "def f(a, b):\n    x = a + b\n    y = g(x)\n    h()\n    return x < y\n",
        ),
        (
            "rust",
            "fn f(a: i32, b: i32) -> bool {\n    let x = a + b;\n    let y = g(x);\n    h();\n    x < y\n}\n",
        ),
        (
            "go",
            "package p\n\nfunc f(a int, b int) bool {\n\tx := a + b\n\ty := g(x)\n\th()\n\treturn x < y\n}\n",
        ),
        (
            "java",
            "class C {\n  boolean f(int a, int b) {\n    int x = a + b;\n    int y = g(x);\n    h();\n    return x < y;\n  }\n}\n",
        ),
        (
            "c",
            "int f(int a, int b) {\n  int x = a + b;\n  int y = g(x);\n  h();\n  return x < y;\n}\n",
        ),
        (
            "cpp",
            "bool f(int a, int b) {\n  int x = a + b;\n  int y = g(x);\n  h();\n  return x < y;\n}\n",
        ),
        (
            "csharp",
            "class C {\n  bool F(int a, int b) {\n    int x = a + b;\n    int y = G(x);\n    H();\n    return x < y;\n  }\n}\n",
        ),
        (
            "ruby",
            "def f(a, b)\n  x = a + b\n  y = g(x)\n  h()\n  x < y\nend\n",
        ),
        (
            "php",
            "<?php\nfunction f($a, $b) {\n  $x = $a + $b;\n  $y = g($x);\n  h();\n  return $x < $y;\n}\n",
        ),
        (
            "kotlin",
            "fun f(a: Int, b: Int): Boolean {\n    val x = a + b\n    val y = g(x)\n    h()\n    return x < y\n}\n",
        ),
        (
            "swift",
            "func f(a: Int, b: Int) -> Bool {\n    let x = a + b\n    let y = g(x)\n    h()\n    return x < y\n}\n",
        ),
        (
            "scala",
            "object O {\n  def f(a: Int, b: Int): Boolean = {\n    val x = a + b\n    val y = g(x)\n    h()\n    x < y\n  }\n}\n",
        ),
    ];

    #[test]
    fn every_kind_at_every_position_in_every_language() {
        let registry = Registry::builtin();
        for (name, src) in EVERY_LANGUAGE {
            let format = registry.lookup(name).expect("a built-in format");
            let lang = lang::for_format(&format.name).expect("a sampler");
            let tree = parse(format, src).expect("a parse");
            let function = descendants(tree.root_node())
                .into_iter()
                .find(|n| lang.is_function(*n))
                .expect("a function");
            let original = &src[function.start_byte()..function.end_byte()];
            let before: Vec<&str> = original.lines().collect();
            for position in Position::ALL {
                for kind in Kind::ALL {
                    let (code, made) = edited(name, src, &[(position, kind)]);
                    let context = format!("{name} {position:?} {kind:?}:\n{code}");
                    assert_eq!(made, [(position, kind)], "{context}");
                    assert!(
                        problems(format, lang, &code) <= problems(format, lang, original),
                        "parses worse: {context}"
                    );
                    let after: Vec<&str> = code.lines().collect();
                    let line = match position {
                        Position::Start => 1,
                        Position::Middle => 2,
                        Position::End => 4,
                    };
                    let first_change =
                        (0..after.len().max(before.len())).find(|&i| after.get(i) != before.get(i));
                    assert_eq!(first_change, Some(line), "{context}");
                    let statement = lang.syntax().statement;
                    match kind {
                        Kind::Insert => {
                            assert_eq!(after.len(), before.len() + 1, "{context}");
                            assert_eq!(after[line].trim(), statement, "{context}");
                        }
                        Kind::Delete => {
                            assert_eq!(after.len() + 1, before.len(), "{context}");
                            assert_eq!(after.get(line), before.get(line + 1), "{context}");
                        }
                        Kind::Change => {
                            assert_eq!(after.len(), before.len(), "{context}");
                            let expected = match position {
                                Position::Start => before[line].replace(" + ", " - "),
                                Position::Middle => before[line].replace("x)", "x, 0)"),
                                Position::End => before[line].replace(" < ", " <= "),
                            };
                            assert_eq!(after[line], expected, "{context}");
                        }
                    }
                }
            }
        }
    }
}
