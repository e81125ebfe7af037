//! What the checks send: snippets of 20, 100 and 1,000 lines cut from the
//! files dupcheck scans in each language corpus (with how long tree-sitter
//! alone takes to parse the 100-line ones), and editing sessions, the
//! buffers an editor sends while a line is typed into a file.

use std::time::Instant;

use dupcheck::engine::grammar::Registry;
use dupcheck::engine::parse::Budget;
use serde_json::{json, Map, Value};

use crate::env::{scanned_sources, Env, Source};
use crate::server::check_request;

/// Where snippets are cut from: corpus and the format of its files.
const LANGUAGES: [(&str, &str); 4] = [
    ("lodash", "javascript"),
    ("rxjs", "typescript"),
    ("django", "python"),
    ("tokio", "rust"),
];

/// A snippet to check, cut from a real file.
pub(crate) struct Snippet {
    format: &'static str,
    origin: String,
    code: String,
}

/// `per_language` snippets of `lines` lines from each language corpus,
/// interleaved by language: from files spread evenly over the sorted file
/// list, starting a third of the way into the file. Deterministic.
fn cut_snippets(env: &Env, registry: &Registry, lines: usize, per_language: usize) -> Vec<Snippet> {
    let mut by_language: Vec<Vec<Snippet>> = Vec::new();
    for (corpus, format) in LANGUAGES {
        let sources = scanned_sources(&env.corpus(corpus), registry).unwrap_or_default();
        let eligible: Vec<&Source> = sources
            .iter()
            .filter(|s| {
                registry.get(s.format).name == format && s.text.lines().count() > lines + 10
            })
            .collect();
        let picks = per_language.min(eligible.len());
        let snippets = (0..picks).filter_map(|k| {
            let source = eligible[(2 * k + 1) * eligible.len() / (2 * picks)];
            let all: Vec<&str> = source.text.lines().collect();
            let start = (all.len() - lines) / 3;
            let code = all[start..start + lines].join("\n");
            (!code.trim().is_empty()).then(|| Snippet {
                format,
                origin: format!("{corpus}/{}:{}", source.rel, start + 1),
                code,
            })
        });
        by_language.push(snippets.collect());
    }
    let rounds = by_language.iter().map(Vec::len).max().unwrap_or(0);
    let mut languages: Vec<_> = by_language.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    for _ in 0..rounds {
        for language in &mut languages {
            out.extend(language.next());
        }
    }
    out
}

/// Snippets of each size, as ready requests for one port, and editing
/// sessions.
pub(crate) struct Workload {
    /// The snippets of 20, 100 and 1,000 lines.
    pub(crate) sizes: Vec<(usize, Vec<Snippet>)>,
    /// Milliseconds tree-sitter alone takes to parse each 100-line snippet
    /// once, cut comments blanked (in this process, the fastest of a few
    /// runs), sorted.
    pub(crate) parse_100_ms: Vec<f64>,
    /// The editing sessions.
    pub(crate) editing: Vec<EditSession>,
}

impl Workload {
    /// Cuts the snippets, times tree-sitter on the 100-line ones, and
    /// makes the editing sessions.
    pub(crate) fn new(env: &Env) -> Workload {
        let registry = Registry::builtin();
        let sizes: Vec<(usize, Vec<Snippet>)> = [(20, 4), (100, 4), (1000, 2)]
            .into_iter()
            .map(|(lines, per_language)| (lines, cut_snippets(env, &registry, lines, per_language)))
            .collect();
        let mut parse_100_ms: Vec<f64> = sizes
            .iter()
            .filter(|(lines, _)| *lines == 100)
            .flat_map(|(_, snippets)| snippets)
            .filter_map(|s| {
                let format = registry.lookup(s.format)?;
                // What a check parses at least: the snippet once, the parts
                // cut inside a comment blanked.
                let code = dupcheck::engine::snippet::blank_cut_comments(format, &s.code);
                let fastest = (0..PARSE_RUNS)
                    .map(|_| {
                        let started = Instant::now();
                        let budget = Budget::for_snippet(code.len());
                        let tree = dupcheck::engine::parse::parse(format, &code, None, &budget);
                        std::hint::black_box(tree.expect("snippets parse within their budget"));
                        started.elapsed().as_secs_f64() * 1e3
                    })
                    .fold(f64::INFINITY, f64::min);
                Some(fastest)
            })
            .collect();
        parse_100_ms.sort_by(f64::total_cmp);
        let editing = edit_sessions(env, &registry);
        Workload {
            sizes,
            parse_100_ms,
            editing,
        }
    }

    /// The checks of every snippet of `lines` lines, for `port`.
    pub(crate) fn requests(&self, lines: usize, port: u16) -> Vec<Vec<u8>> {
        self.sizes
            .iter()
            .filter(|(n, _)| *n == lines)
            .flat_map(|(_, snippets)| snippets)
            .map(|s| check_request(port, &s.code, s.format))
            .collect()
    }

    /// Where each snippet was cut from, for `target/bench.json`.
    pub(crate) fn json(&self) -> Value {
        let sizes: Map<String, Value> = self
            .sizes
            .iter()
            .map(|(lines, snippets)| {
                let origins: Vec<Value> = snippets
                    .iter()
                    .map(|s| json!({"format": s.format, "origin": s.origin}))
                    .collect();
                (lines.to_string(), Value::Array(origins))
            })
            .collect();
        Value::Object(sizes)
    }
}

/// Runs of each tree-sitter parse of a snippet; the fastest counts.
const PARSE_RUNS: usize = 20;

/// Files edited per language in the editing sessions (more in all than
/// the server keeps parses of, so that interleaved they are parsed afresh).
const EDITED_PER_LANGUAGE: usize = 3;

/// What an editor sends while its user types one line into a file: the
/// whole buffer after each keystroke, with the file's path.
pub(crate) struct EditSession {
    /// `CORPUS/REL`, sent as the check's path.
    pub(crate) path: String,
    /// The format of the file.
    pub(crate) format: &'static str,
    /// The buffer before the first keystroke, and after each.
    pub(crate) versions: Vec<String>,
}

/// Typing `value = other + 1` on a new line in the middle of files of 150
/// to 800 lines, spread over each language corpus.
fn edit_sessions(env: &Env, registry: &Registry) -> Vec<EditSession> {
    const TYPED: &str = "value = other + 1";
    let mut sessions = Vec::new();
    for (corpus, format) in LANGUAGES {
        let sources = scanned_sources(&env.corpus(corpus), registry).unwrap_or_default();
        let eligible: Vec<&Source> = sources
            .iter()
            .filter(|s| {
                registry.get(s.format).name == format
                    && (150..=800).contains(&s.text.lines().count())
            })
            .collect();
        let picks = EDITED_PER_LANGUAGE.min(eligible.len());
        for k in 0..picks {
            let source = eligible[(2 * k + 1) * eligible.len() / (2 * picks)];
            let text = &source.text;
            let Some(at) = text[text.len() / 2..]
                .find('\n')
                .map(|i| text.len() / 2 + i)
            else {
                continue;
            };
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let indent: String = text[line_start..at]
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            let versions = (0..=TYPED.len())
                .map(|typed| {
                    format!(
                        "{}\n{indent}{}{}",
                        &text[..at],
                        &TYPED[..typed],
                        &text[at..]
                    )
                })
                .collect();
            sessions.push(EditSession {
                path: format!("{corpus}/{}", source.rel),
                format,
                versions,
            });
        }
    }
    sessions
}
