//! Why a variant was missed, as far as a local comparison tells: the
//! longest common run of normalized tokens between the variant and the
//! function as tokenized in its file, and the tokens where that run breaks,
//! with the node kinds of their leaves (the kinds a grammar table may not
//! classify yet).

use std::path::{Path, PathBuf};

use dupcheck::engine::grammar::Format;
use dupcheck::engine::hash::HashMap;
use dupcheck::engine::snippet::tokenize_snippet;
use dupcheck::engine::tokens::{tokenize, LineIndex, Mode, Normalization, Token};
use serde::Serialize;
use tree_sitter::Tree;

use crate::sample::{common_tokens, parse, read_source, Function};
use crate::server::{Answer, Dup};
use crate::{MIN_LINES, MIN_TOKENS};

/// Why a variant was missed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    /// `request failed: …`; `partial: …` (reported, but under half of the
    /// function's lines); `server miss` (a common run meets both thresholds
    /// yet nothing was reported); `below thresholds` (no common run meets
    /// them), maybe with `: the original parses differently` (the verbatim
    /// snippet already tokenizes differently out of its file).
    pub verdict: String,
    /// Normalized tokens of the variant and of the function in its file.
    pub variant_tokens: usize,
    pub function_tokens: usize,
    /// The longest common run of the two, and the variant lines it spans.
    pub longest_common_run: usize,
    pub run_lines: u32,
    /// The tokens the two share in order, however scattered.
    pub shared_tokens: usize,
    /// Where the run breaks: the variant's token and the function's, each
    /// as `` `text` kind<parent kind `` (after the run, or before it when
    /// the run ends the variant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub break_at: Option<Break>,
    /// Whether the verbatim snippet already tokenizes differently out of
    /// its file (a context-dependent parse).
    pub original_differs: bool,
    pub code: String,
}

/// The two tokens where a longest common run breaks.
#[derive(Serialize)]
pub struct Break {
    pub variant: String,
    pub function: String,
}

impl Break {
    /// The two leaves' kinds without their texts: what misses share.
    pub fn kinds(&self) -> String {
        let kind = |s: &str| {
            s.rsplit_once("` ")
                .map_or(s.to_string(), |(_, k)| k.to_string())
        };
        let (variant, function) = (kind(&self.variant), kind(&self.function));
        match variant == function {
            true => variant,
            false => format!("{variant} vs {function}"),
        }
    }
}

/// The files of a corpus's functions, each read, tokenized in one mode
/// and parsed once for all the misses in it.
#[derive(Default)]
pub struct Files(HashMap<PathBuf, File>);

struct File {
    src: String,
    tokens: Vec<Token>,
    tree: Option<Tree>,
}

impl Files {
    fn get(&mut self, format: &Format, path: &Path) -> &File {
        self.0.entry(path.to_path_buf()).or_insert_with(|| {
            let src = read_source(path).unwrap_or_default();
            File {
                tokens: tokenize(format, &src, &Normalization::default()).unwrap_or_default(),
                tree: parse(format, &src),
                src,
            }
        })
    }
}

/// Explains a miss: how much of the variant the function shares at all.
/// Identities are compared in `mode`.
pub fn diagnose(
    files: &mut Files,
    format: &Format,
    prefix: &str,
    mode: Mode,
    function: &Function,
    code: &str,
    answer: &Answer,
) -> Diagnosis {
    let file = files.get(format, &function.path);
    let src = &file.src;
    let ids = |tokens: &[Token]| tokens.iter().map(|t| t.id_in(mode)).collect::<Vec<u64>>();
    let in_function = |t: &&Token| {
        t.start as usize >= function.start_byte && t.end() as usize <= function.end_byte
    };
    let reference: Vec<Token> = file.tokens.iter().filter(in_function).cloned().collect();
    let snippet = src.get(function.snippet_start..function.end_byte);
    let normalization = Normalization::default();
    let original =
        tokenize_snippet(format, snippet.unwrap_or(""), &normalization).unwrap_or_default();
    let query = tokenize_snippet(format, code, &normalization).unwrap_or_default();
    let run = longest_common_run(&query, &reference, mode);
    let run_lines = match run.length {
        0 => 0,
        length => {
            let lines = LineIndex::new(code);
            let (first, last) = (&query[run.end_a - length], &query[run.end_a - 1]);
            lines.line_of(last.end() - 1) - lines.line_of(first.start) + 1
        }
    };
    let original_differs = ids(&original) != ids(&reference);
    let own_file = |(dups, _): &(Vec<Dup>, f64)| dups.iter().any(|d| d.file == function.file);
    let verdict = match answer {
        Err(error) => format!("request failed: {error}"),
        Ok(answer) if own_file(answer) => "partial: under half of the lines reported".into(),
        Ok(_) if run.length >= MIN_TOKENS && run_lines >= MIN_LINES => "server miss".into(),
        Ok(_) if original_differs => "below thresholds: the original parses differently".into(),
        Ok(_) => "below thresholds".into(),
    };
    let variant_tree = parse(format, &format!("{prefix}{code}"));
    Diagnosis {
        verdict,
        variant_tokens: query.len(),
        function_tokens: reference.len(),
        longest_common_run: run.length,
        run_lines,
        shared_tokens: common_tokens(&ids(&query), &ids(&reference)),
        break_at: break_at(
            (code, prefix.len(), variant_tree.as_ref(), &query),
            (src, 0, file.tree.as_ref(), &reference),
            &run,
        ),
        original_differs,
        code: code.to_string(),
    }
}

/// The longest run of equal identities in two token streams.
struct Run {
    length: usize,
    /// Where it ends in each (exclusive).
    end_a: usize,
    end_b: usize,
}

/// The longest run of identities equal in `mode` in `a` and `b`.
fn longest_common_run(a: &[Token], b: &[Token], mode: Mode) -> Run {
    let (mut previous, mut current) = (vec![0; b.len() + 1], vec![0; b.len() + 1]);
    let mut best = Run {
        length: 0,
        end_a: 0,
        end_b: 0,
    };
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            current[j + 1] = if x.id_in(mode) == y.id_in(mode) {
                previous[j] + 1
            } else {
                0
            };
            if current[j + 1] > best.length {
                best = Run {
                    length: current[j + 1],
                    end_a: i + 1,
                    end_b: j + 1,
                };
            }
        }
        std::mem::swap(&mut previous, &mut current);
    }
    best
}

/// A token stream with its text, where that text starts in the parse, and
/// the parse.
type Stream<'a> = (&'a str, usize, Option<&'a Tree>, &'a [Token]);

/// The tokens after the run in the variant and in the function, or before
/// it when it ends either; `None` when it covers both whole.
fn break_at(variant: Stream, function: Stream, run: &Run) -> Option<Break> {
    let (query, reference) = (variant.3, function.3);
    let (start_a, start_b) = (run.end_a - run.length, run.end_b - run.length);
    let (a, b) = if run.end_a < query.len() && run.end_b < reference.len() {
        (run.end_a, run.end_b)
    } else if start_a > 0 && start_b > 0 {
        (start_a - 1, start_b - 1)
    } else {
        return None;
    };
    Some(Break {
        variant: describe(variant, &query[a]),
        function: describe(function, &reference[b]),
    })
}

/// A token as `` `text` kind<parent kind ``, its leaf found in the parse
/// (for a snippet, a plain parse: near enough for the kinds).
fn describe((text, at, tree, _): Stream, token: &Token) -> String {
    let (start, end) = (token.start as usize, token.end() as usize);
    let shown: String = text
        .get(start..end)
        .unwrap_or("?")
        .chars()
        .take(40)
        .collect();
    let kinds = tree.and_then(|tree| {
        let leaf = tree
            .root_node()
            .descendant_for_byte_range(at + start, at + end)?;
        let parent = leaf.parent().map_or("", |p| p.kind());
        Some(format!("{}<{parent}", leaf.kind()))
    });
    format!("`{shown}` {}", kinds.unwrap_or_default())
}
