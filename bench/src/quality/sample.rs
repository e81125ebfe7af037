//! Sampling: the functions of a corpus, located in their files, shuffled
//! with the seed.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use dupcheck::engine::grammar::Format;
use dupcheck::engine::parse::Budget;
use dupcheck::engine::tokens::{tokenize, Mode, Normalization, Token};
use tree_sitter::Node;

use crate::args::Args;
use crate::lang::Sampler;
use crate::MIN_TOKENS;

/// Lines of a sampled function.
const FUNCTION_LINES: RangeInclusive<u32> = 8..=60;
/// Files over the server's default `--max-size` are not sampled.
const MAX_FILE_BYTES: usize = 1 << 20;

/// A sampled function, located in its file.
pub struct Function {
    /// The file on disk.
    pub path: PathBuf,
    /// The file as the server reports it (relative to the served folder).
    pub file: String,
    /// Where the snippet starts: the start of the function's line when only
    /// indentation precedes the function there, else the function itself.
    pub snippet_start: usize,
    pub start_byte: usize,
    pub end_byte: usize,
    pub start_line: u32,
    pub end_line: u32,
}

impl Function {
    pub fn lines(&self) -> u32 {
        self.end_line - self.start_line + 1
    }
}

/// Deterministic pseudo-random numbers (SplitMix64).
pub struct Rng(u64);

impl Rng {
    /// A generator seeded by `seed` and a text (FNV-1a over the text).
    pub fn derive(seed: u64, text: &str) -> Rng {
        Rng(text.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
        }))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability 1/n.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

/// Files of `format` under `root`, sorted; hidden entries are skipped.
pub fn source_files(root: &Path, format: &Format) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let extension = path.extension().map(|e| e.to_string_lossy().to_lowercase());
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            } else if path.is_dir() {
                stack.push(path);
            } else if extension.is_some_and(|e| format.extensions.contains(&e)) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text of a file the server would index, or `None`.
pub fn read_source(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    (text.len() <= MAX_FILE_BYTES && !text.contains('\0')).then_some(text)
}

/// Whether the server skips `src` as generated or minified (by the same
/// rules).
fn generated(format: &Format, src: &str) -> bool {
    use dupcheck::project::walk::{generated_header, minified};
    let tokens = tokenize(format, src, &Normalization::default()).unwrap_or_default();
    let code = tokens.first().map_or(src.len(), |t| t.start as usize);
    minified(src) || generated_header(&src[..code])
}

/// Every node of the subtree of `node`, in preorder.
pub fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    loop {
        out.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

/// A parse of `text`, a file or a snippet of the corpora, within a file's
/// budget.
pub fn parse(format: &Format, text: &str) -> Option<tree_sitter::Tree> {
    dupcheck::engine::parse::parse(format, text, None, &Budget::for_file(text.len())).ok()
}

/// ERROR and MISSING nodes in a parse of `text`, a snippet, after the
/// language's code prefix.
pub fn problems(format: &Format, lang: &dyn Sampler, text: &str) -> usize {
    let Some(tree) = parse(format, &format!("{}{text}", lang.syntax().code_prefix)) else {
        return usize::MAX;
    };
    let broken = |n: &Node| n.is_error() || n.is_missing();
    descendants(tree.root_node())
        .iter()
        .filter(|n| broken(n))
        .count()
}

/// Where a function's code ends: its node's end, or with
/// [`Syntax::trim_comments`](crate::lang::Syntax) the end of its last
/// token that is not in a comment; as a byte and a 0-based row.
pub fn code_end(lang: &dyn Sampler, node: Node<'_>) -> (usize, usize) {
    let whole = (node.end_byte(), node.end_position().row);
    if !lang.syntax().trim_comments {
        return whole;
    }
    let mut last = None;
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind().contains("comment") {
            continue;
        } else if n.child_count() == 0 && n.end_byte() > n.start_byte() {
            last = last.max(Some((n.end_byte(), n.end_position().row)));
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    last.unwrap_or(whole)
}

/// The start of the line of `byte` when only whitespace precedes it there.
pub fn line_start_if_blank(src: &str, byte: usize) -> usize {
    let start = src[..byte].rfind('\n').map_or(0, |i| i + 1);
    if src[start..byte].trim().is_empty() {
        start
    } else {
        byte
    }
}

/// The sampleable functions of one file, reported as `file`.
fn functions_in(format: &Format, lang: &dyn Sampler, path: &Path, file: &str) -> Vec<Function> {
    let Some(src) = read_source(path) else {
        return Vec::new();
    };
    if generated(format, &src) {
        return Vec::new();
    }
    let Some(tree) = parse(format, &src) else {
        return Vec::new();
    };
    let function = |n: Node| {
        let (end_byte, end_row) = code_end(lang, n);
        Function {
            path: path.to_path_buf(),
            file: file.to_string(),
            snippet_start: line_start_if_blank(&src, n.start_byte()),
            start_byte: n.start_byte(),
            end_byte,
            start_line: n.start_position().row as u32 + 1,
            end_line: end_row as u32 + 1,
        }
    };
    let prefix = lang.syntax().code_prefix;
    let long_enough = |f: &Function| {
        snippet_tokens(format, prefix, &src[f.snippet_start..f.end_byte])
            .is_some_and(|n| n >= MIN_TOKENS)
    };
    descendants(tree.root_node())
        .into_iter()
        .filter(|n| lang.is_function(*n))
        .map(function)
        .filter(|f| FUNCTION_LINES.contains(&f.lines()) && long_enough(f))
        .collect()
}

/// Up to `args.limit` functions of the folder `name` of `base`, shuffled
/// with the seed; reported paths start with `name/`.
pub fn sample(
    format: &Format,
    lang: &dyn Sampler,
    base: &Path,
    name: &str,
    args: &Args,
) -> Vec<Function> {
    let root = base.join(name);
    let mut all = Vec::new();
    for path in source_files(&root, format) {
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        all.extend(functions_in(
            format,
            lang,
            &path,
            &format!("{name}/{relative}"),
        ));
    }
    let mut rng = Rng::derive(args.seed, name);
    for i in (1..all.len()).rev() {
        all.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    all.truncate(args.limit);
    all
}

/// The tokens of `snippet` (parsed after the language's `prefix`, as the
/// server reads it), or `None` if it does not tokenize.
pub fn snippet_tokens(format: &Format, prefix: &str, snippet: &str) -> Option<usize> {
    snippet_ids(format, prefix, snippet, Mode::Strict).map(|ids| ids.len())
}

/// The identities in `mode` of the tokens of `snippet` (parsed as
/// [`snippet_tokens`] parses it), or `None` if it does not tokenize.
pub fn snippet_ids(format: &Format, prefix: &str, snippet: &str, mode: Mode) -> Option<Vec<u64>> {
    let tokens = match prefix {
        "" => tokenize(format, snippet, &Normalization::default()),
        _ => tokenize(
            format,
            &format!("{prefix}{snippet}"),
            &Normalization::default(),
        ),
    };
    let in_snippet = |t: &&Token| t.start as usize >= prefix.len();
    tokens.ok().map(|tokens| {
        tokens
            .iter()
            .filter(in_snippet)
            .map(|t| t.id_in(mode))
            .collect()
    })
}

/// The tokens `a` and `b` share in order: the length of their longest
/// common subsequence, whatever the gaps between the tokens shared (at
/// least what any detector could count as shared).
pub fn common_tokens(a: &[u64], b: &[u64]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_tokens_counts_what_two_streams_share_in_order() {
        assert_eq!(common_tokens(&[1, 2, 3, 4, 5], &[1, 9, 3, 4, 5, 6]), 4);
        assert_eq!(common_tokens(&[1, 2, 3], &[3, 2, 1]), 1);
        assert_eq!(common_tokens(&[], &[1, 2]), 0);
        assert_eq!(common_tokens(&[7, 7, 8], &[7, 8, 7, 8]), 3);
    }
}
