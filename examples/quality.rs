//! Clone-injection quality benchmark: how many injected clones the real
//! server finds, how exactly it places them, and how often it reports code
//! that is not there.
//!
//! For each corpus fetched by `bench/fetch-corpora.sh` (lodash/JavaScript,
//! rxjs/TypeScript, django/Python, tokio/Rust) it samples functions of 8 to
//! 60 lines and at least 50 tokens with a fixed seed and makes clones of
//! each: T0 verbatim; T1 new layout (indentation doubled, comment and blank
//! lines inserted, braces moved to their own line, lines joined after a
//! comma); T2i every local variable and parameter renamed; T2l renamed and
//! every number and string literal changed; T3 renamed and one statement in
//! the middle inserted or deleted. A variant that parses worse than its
//! original (more ERROR or MISSING nodes) is dropped and counted; one with
//! nothing to change (no local, no literal) is skipped.
//!
//! Then, for each mode, it serves `.corpora/all` with
//! `target/release/dupcheck` (default thresholds), posts every variant to
//! `/api/check`, and counts it found when the duplications reported in the
//! function's own file cover at least half of its lines; exact when one of
//! them starts and ends within one line of the function (measured on the
//! variants the mode is meant to find whole: T0 and T1, plus T2i in mild and
//! weak, plus T2l in weak). Functions sampled the same way from a negative
//! corpus (code that is not indexed) are false positives when anything at
//! all is reported.
//!
//! Each miss is diagnosed locally: the longest common run of normalized
//! tokens between the variant and the function as tokenized inside its file.
//! A run under the thresholds makes the miss expected by construction; a
//! longer one that the server did not report is a server miss.
//!
//! ```text
//! make quality    # = bash bench/fetch-corpora.sh, cargo build --release
//!                 #   --bins --examples, cargo run --release --example quality
//! target/release/examples/quality --corpus django --mode mild --limit 20
//! target/release/examples/quality --corpus rxjs --dump /tmp/variants
//! ```
//!
//! It prints one row per corpus and mode (recall per variant, exact, false
//! positives, latency) and writes everything, each miss with its code and
//! diagnosis included, to `target/quality.json`. `--dump DIR` also writes
//! every variant to a file, to compare with `dupcheck --dump-tokens FILE`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use dupcheck::grammar::{Class, Format, Registry};
use dupcheck::parse::Budget;
use dupcheck::snippet::tokenize_snippet;
use dupcheck::tokens::{for_each_leaf, tokenize, LineIndex, Mode, Token};
use serde::Serialize;
use serde_json::{json, Value};
use tree_sitter::Node;

/// The server's default thresholds, which the benchmark runs with.
const MIN_TOKENS: usize = 50;
const MIN_LINES: u32 = 5;
/// Lines of a sampled function.
const FUNCTION_LINES: RangeInclusive<u32> = 8..=60;
/// Files over the server's default `--max-size` are not sampled.
const MAX_FILE_BYTES: usize = 1 << 20;
/// The variants, in table order.
const VARIANTS: [&str; 5] = ["T0", "T1", "T2i", "T2l", "T3"];
const MODES: [Mode; 3] = [Mode::Strict, Mode::Mild, Mode::Weak];

/// The corpora: a folder of `.corpora/all`, its format, and the folder of
/// `.corpora` its negatives come from.
const CORPORA: [(&str, &str, &str); 4] = [
    ("lodash", "javascript", "neg-js"),
    ("rxjs", "typescript", "neg-ts"),
    ("django", "python", "neg-py"),
    ("tokio", "rust", "neg-rs"),
];

#[derive(Parser)]
#[command(about = "Clone-injection quality benchmark of the dupcheck server")]
struct Args {
    /// Only this corpus: lodash, rxjs, django or tokio.
    #[arg(long)]
    corpus: Option<String>,
    /// Only this mode: strict, mild or weak.
    #[arg(long, value_parser = |s: &str| Mode::parse(s).ok_or(format!("use {}", Mode::NAMES)))]
    mode: Option<Mode>,
    /// Functions sampled per corpus, and as many negatives.
    #[arg(long, default_value_t = 250)]
    limit: usize,
    /// Seed of the sampling and of the variants.
    #[arg(long, default_value_t = 20_241_122)]
    seed: u64,
    /// Folder the corpora were fetched to.
    #[arg(long, default_value = ".corpora")]
    corpora: PathBuf,
    /// The server binary.
    #[arg(long, default_value = "target/release/dupcheck")]
    server: PathBuf,
    /// Where the JSON results go; the server logs go beside it.
    #[arg(long, default_value = "target/quality.json")]
    out: PathBuf,
    /// Also write every variant to DIR/CORPUS/NNN-VARIANT.EXT, to compare
    /// with `dupcheck --dump-tokens`.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("quality: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let registry = Registry::builtin();
    let all = args.corpora.join("all");
    require(&all, "run bench/fetch-corpora.sh")?;
    require(&args.server, "run cargo build --release --bins")?;
    let mut prepared = Vec::new();
    for (name, format, negative) in CORPORA {
        if args.corpus.as_deref().is_some_and(|wanted| wanted != name) {
            continue;
        }
        let format = registry
            .lookup(format)
            .ok_or(format!("no format {format}"))?;
        prepared.push(prepare(name, negative, format, &args)?);
    }
    if prepared.is_empty() {
        return Err("unknown corpus: use lodash, rxjs, django or tokio".into());
    }
    let mut reports = Vec::new();
    for mode in MODES
        .into_iter()
        .filter(|m| args.mode.is_none_or(|wanted| wanted == *m))
    {
        let log = args
            .out
            .with_file_name(format!("quality-server-{}.log", mode.name()));
        let server = Server::start(&args.server, &all, mode, &log)
            .map_err(|e| format!("cannot start the server: {e} (log: {})", log.display()))?;
        for corpus in &prepared {
            let report = evaluate(corpus, mode, server.port);
            print_row(&report, reports.is_empty());
            reports.push(report);
        }
    }
    let results = json!({ "seed": args.seed, "limit": args.limit, "results": reports });
    std::fs::write(&args.out, format!("{results:#}"))
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    println!("\nfull results, misses included: {}", args.out.display());
    Ok(())
}

/// An error naming a missing input and the command that makes it.
fn require(path: &Path, how: &str) -> Result<(), String> {
    match path.exists() {
        true => Ok(()),
        false => Err(format!("{} is missing: {how}", path.display())),
    }
}

// ---------------------------------------------------------------- sampling

/// The language-specific rules of sampling and variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Ecma,
    Python,
    Rust,
}

impl Lang {
    fn of(format: &Format) -> Lang {
        match format.name.as_str() {
            "python" => Lang::Python,
            "rust" => Lang::Rust,
            _ => Lang::Ecma,
        }
    }

    /// How a line comment starts, and the statement T3 inserts.
    fn comment_and_statement(self) -> (&'static str, &'static str) {
        match self {
            Lang::Ecma => ("//", "console.log(\"dupcheck\");"),
            Lang::Python => ("#", "print(\"dupcheck\")"),
            Lang::Rust => ("//", "let _ = \"dupcheck\";"),
        }
    }
}

/// A sampled function, located in its file.
struct Function {
    /// The file on disk.
    path: PathBuf,
    /// The file as the server reports it (relative to the served folder).
    file: String,
    /// Where the snippet starts: the start of the function's line when only
    /// indentation precedes the function there, else the function itself.
    snippet_start: usize,
    start_byte: usize,
    end_byte: usize,
    start_line: u32,
    end_line: u32,
}

impl Function {
    fn lines(&self) -> u32 {
        self.end_line - self.start_line + 1
    }
}

/// Deterministic pseudo-random numbers (SplitMix64).
struct Rng(u64);

impl Rng {
    /// A generator seeded by `seed` and a text (FNV-1a over the text).
    fn derive(seed: u64, text: &str) -> Rng {
        Rng(text.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
        }))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability 1/n.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

/// Files of `format` under `root`, sorted; hidden entries are skipped.
fn source_files(root: &Path, format: &Format) -> Vec<PathBuf> {
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
fn read_source(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    (text.len() <= MAX_FILE_BYTES && !text.contains('\0')).then_some(text)
}

/// Every node of the subtree of `node`, in preorder.
fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
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

/// Kinds of JavaScript and TypeScript function expressions.
const FUNCTION_EXPRESSIONS: [&str; 3] = [
    "arrow_function",
    "function_expression",
    "generator_function",
];

/// Whether `node` is a function or method the benchmark samples.
fn is_function(node: Node<'_>, lang: Lang) -> bool {
    match (lang, node.kind()) {
        (Lang::Python, "function_definition") | (Lang::Rust, "function_item") => true,
        (Lang::Ecma, "function_declaration" | "generator_function_declaration") => true,
        (Lang::Ecma, "method_definition") => true,
        // Function expressions with a block body; one assigned to a variable
        // is sampled as its declaration instead.
        (Lang::Ecma, kind) if FUNCTION_EXPRESSIONS.contains(&kind) => {
            let body = node.child_by_field_name("body").map(|b| b.kind());
            let parent = node.parent().map(|p| p.kind());
            body == Some("statement_block") && parent != Some("variable_declarator")
        }
        (Lang::Ecma, "lexical_declaration" | "variable_declaration") => {
            let value = node
                .named_child(0)
                .and_then(|d| d.child_by_field_name("value"));
            let is_function = value.is_some_and(|v| FUNCTION_EXPRESSIONS.contains(&v.kind()));
            node.named_child_count() == 1 && is_function
        }
        _ => false,
    }
}

/// The start of the line of `byte` when only whitespace precedes it there.
fn line_start_if_blank(src: &str, byte: usize) -> usize {
    let start = src[..byte].rfind('\n').map_or(0, |i| i + 1);
    if src[start..byte].trim().is_empty() {
        start
    } else {
        byte
    }
}

/// The sampleable functions of one file, reported as `file`.
fn functions_in(format: &Format, path: &Path, file: &str) -> Vec<Function> {
    let lang = Lang::of(format);
    let Some(src) = read_source(path) else {
        return Vec::new();
    };
    let Some(tree) = parse(format, &src) else {
        return Vec::new();
    };
    let function = |n: Node| Function {
        path: path.to_path_buf(),
        file: file.to_string(),
        snippet_start: line_start_if_blank(&src, n.start_byte()),
        start_byte: n.start_byte(),
        end_byte: n.end_byte(),
        start_line: n.start_position().row as u32 + 1,
        end_line: n.end_position().row as u32 + 1,
    };
    let long_enough = |f: &Function| {
        tokenize(format, &src[f.snippet_start..f.end_byte], Mode::Strict)
            .is_ok_and(|tokens| tokens.len() >= MIN_TOKENS)
    };
    descendants(tree.root_node())
        .into_iter()
        .filter(|n| is_function(*n, lang))
        .map(function)
        .filter(|f| FUNCTION_LINES.contains(&f.lines()) && long_enough(f))
        .collect()
}

/// Up to `args.limit` functions of the folder `name` of `base`, shuffled
/// with the seed; reported paths start with `name/`.
fn sample(format: &Format, base: &Path, name: &str, args: &Args) -> Vec<Function> {
    let root = base.join(name);
    let mut all = Vec::new();
    for path in source_files(&root, format) {
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        all.extend(functions_in(format, &path, &format!("{name}/{relative}")));
    }
    let mut rng = Rng::derive(args.seed, name);
    for i in (1..all.len()).rev() {
        all.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    all.truncate(args.limit);
    all
}

// ---------------------------------------------------------------- variants

/// What became of one variant of one function.
enum Outcome {
    /// The variant's code.
    Made(String),
    /// It parses worse than the original.
    Dropped,
    /// Nothing to change: no local to rename, no literal, no statement.
    Skipped,
}

/// A function with its variants, in the order of [`VARIANTS`].
struct Case {
    function: Function,
    variants: Vec<Outcome>,
}

/// A corpus ready to post.
struct Prepared<'a> {
    name: &'static str,
    format: &'a Format,
    cases: Vec<Case>,
    negatives: Vec<Function>,
}

/// Samples the functions of the corpus `name`, with variants, and the
/// negatives of the folder `negative`.
fn prepare<'a>(
    name: &'static str,
    negative: &str,
    format: &'a Format,
    args: &Args,
) -> Result<Prepared<'a>, String> {
    let all = args.corpora.join("all");
    require(&all.join(name), "run bench/fetch-corpora.sh")?;
    require(&args.corpora.join(negative), "run bench/fetch-corpora.sh")?;
    let mut cases = Vec::new();
    for function in sample(format, &all, name, args) {
        let Some(variants) = make_variants(format, &function, args.seed) else {
            continue;
        };
        if let Some(dir) = &args.dump {
            dump(&dir.join(name), cases.len(), format, &variants)?;
        }
        cases.push(Case { function, variants });
    }
    let negatives = sample(format, &args.corpora, negative, args);
    let (functions, negative) = (cases.len(), negatives.len());
    eprintln!("{name}: {functions} functions, {negative} negatives");
    Ok(Prepared {
        name,
        format,
        cases,
        negatives,
    })
}

/// Writes the made variants of the function numbered `index` to `dir`.
fn dump(dir: &Path, index: usize, format: &Format, variants: &[Outcome]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, outcome) in VARIANTS.iter().zip(variants) {
        if let Outcome::Made(code) = outcome {
            let path = dir.join(format!(
                "{index:03}-{name}.{}",
                format.extensions.first().map_or("txt", String::as_str)
            ));
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
fn make_variants(format: &Format, function: &Function, seed: u64) -> Option<Vec<Outcome>> {
    let src = read_source(&function.path)?;
    let tree = parse(format, &src)?;
    let range = function.start_byte..function.end_byte;
    let mut node = tree
        .root_node()
        .descendant_for_byte_range(range.start, range.end)?;
    while node.byte_range() != range || !is_function(node, Lang::of(format)) {
        node = node.parent()?;
    }
    Some(variants(format, function, &src, node, seed))
}

/// The five variants of `function`, whose node in `src` is `node`.
fn variants(
    format: &Format,
    function: &Function,
    src: &str,
    node: Node<'_>,
    seed: u64,
) -> Vec<Outcome> {
    let lang = Lang::of(format);
    let (from, to) = (function.snippet_start, function.end_byte);
    let original = &src[from..to];
    let mut rng = Rng::derive(seed, &format!("{}:{}", function.file, function.start_byte));
    let renames = rename_edits(node, src, lang);
    let renamed_and = |extra: Vec<Edit>| {
        apply(
            src,
            from,
            to,
            renames.iter().cloned().chain(extra).collect(),
        )
    };
    let literals = literal_edits(node, src, format);
    let codes = [
        Some(original.to_string()),
        Some(relayout(original, format, lang, &mut rng)),
        (!renames.is_empty()).then(|| renamed_and(Vec::new())),
        (!literals.is_empty()).then(|| renamed_and(literals)),
        statement_edit(node, src, lang, rng.one_in(2)).map(|edit| renamed_and(vec![edit])),
    ];
    let baseline = problems(format, original);
    let outcome = |code: Option<String>| match code {
        None => Outcome::Skipped,
        Some(code) if problems(format, &code) > baseline => Outcome::Dropped,
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

/// A parse of `text`, a file or a snippet of the corpora, within a file's
/// budget.
fn parse(format: &Format, text: &str) -> Option<tree_sitter::Tree> {
    dupcheck::parse::parse(format, text, None, &Budget::for_file(text.len())).ok()
}

/// ERROR and MISSING nodes in a parse of `text`.
fn problems(format: &Format, text: &str) -> usize {
    let Some(tree) = parse(format, text) else {
        return usize::MAX;
    };
    let broken = |n: &Node| n.is_error() || n.is_missing();
    descendants(tree.root_node())
        .iter()
        .filter(|n| broken(n))
        .count()
}

/// T1: indentation doubled, comment and blank lines inserted, and in brace
/// languages `{` moved to its own line and lines joined after a comma.
/// Nothing changes inside a token (a multi-line string keeps its lines).
fn relayout(text: &str, format: &Format, lang: Lang, rng: &mut Rng) -> String {
    let mut leaves = Vec::new();
    // The functions sampled parse within their budget (`functions_in`).
    let _ = for_each_leaf(format, text, |class, start, end| {
        leaves.push((class, start, end))
    });
    let inside = |p: usize| leaves.iter().any(|&(_, s, e)| s < p && p < e);
    let in_text = |p: usize| {
        let textual = |c: Class| matches!(c, Class::String | Class::Comment);
        leaves
            .iter()
            .any(|&(c, s, e)| textual(c) && s <= p && p < e)
    };
    let braces = lang != Lang::Python;
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
        let open_end = i + 1 < lines.len() && !inside(offset + body.len()) && !code.ends_with('\\');
        let split_brace = open_end && braces && opens_block(code, lang) && !in_text(last);
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
        joined = open_end && braces && code.ends_with(',') && !in_text(last) && rng.one_in(3);
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

/// Whether a line ends with a `{` that may move to its own line.
fn opens_block(code: &str, lang: Lang) -> bool {
    // JavaScript's automatic semicolons make `return\n{` mean something
    // else, so there only the braces after these move.
    let after = [") {", "else {", "=> {", "try {", "finally {", "do {"];
    code.ends_with(" {") && (lang == Lang::Rust || after.iter().any(|e| code.ends_with(e)))
}

/// Sometimes a comment line indented like `next`, sometimes a blank line.
fn insert_filler(out: &mut String, next: &str, lang: Lang, rng: &mut Rng) {
    if rng.one_in(3) {
        let indent = next[..next.len() - next.trim_start().len()].repeat(2);
        out.push_str(&format!(
            "{indent}{} dupcheck T1 note\n",
            lang.comment_and_statement().0
        ));
    }
    if rng.one_in(4) {
        out.push('\n');
    }
}

/// Texts of the locals and parameters declared inside `function`.
fn declared_names(function: Node<'_>, src: &str, lang: Lang) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for node in descendants(function) {
        let field = match (lang, node.kind()) {
            (
                _,
                "formal_parameters" | "parameters" | "lambda_parameters" | "closure_parameters",
            ) => {
                collect_bindings(node, src, lang, &mut names);
                continue;
            }
            (Lang::Ecma, "arrow_function" | "catch_clause") => "parameter",
            (Lang::Ecma, "variable_declarator") => "name",
            (Lang::Ecma, "for_in_statement") if node.child_by_field_name("kind").is_some() => {
                "left"
            }
            (Lang::Python, "assignment" | "augmented_assignment" | "for_statement") => "left",
            (Lang::Python, "for_in_clause") => "left",
            (Lang::Python, "as_pattern") => "alias",
            (Lang::Rust, "let_declaration" | "for_expression" | "let_condition" | "match_arm") => {
                "pattern"
            }
            _ => continue,
        };
        if let Some(target) = node.child_by_field_name(field) {
            collect_bindings(target, src, lang, &mut names);
        }
    }
    names.retain(|n| !matches!(n.as_str(), "self" | "cls" | "this" | "_"));
    names
}

/// Adds the names a pattern binds; never property or field names, nor
/// capitalized Rust names (enum variants, constants).
fn collect_bindings(node: Node<'_>, src: &str, lang: Lang, names: &mut BTreeSet<String>) {
    let text = &src[node.byte_range()];
    let field = match node.kind() {
        "identifier" => {
            if lang != Lang::Rust || text.starts_with(|c: char| c.is_lowercase() || c == '_') {
                names.insert(text.to_string());
            }
            return;
        }
        "type_annotation" | "type" | "decorator" | "attribute" | "subscript"
        | "member_expression" => {
            return;
        }
        "default_parameter" | "typed_default_parameter" => "name",
        "required_parameter" | "optional_parameter" | "parameter" | "field_pattern" => "pattern",
        "assignment_pattern" | "object_assignment_pattern" => "left",
        "pair_pattern" => "value",
        _ => {
            for i in 0..node.named_child_count() {
                // Neither the path of a tuple-struct pattern (`Some` of
                // `Some(x)`) nor a match guard binds anything.
                let field = node.field_name_for_named_child(i as u32);
                let binds = !matches!(field, Some("type" | "condition"));
                if let Some(child) = node.named_child(i as u32).filter(|_| binds) {
                    collect_bindings(child, src, lang, names);
                }
            }
            return;
        }
    };
    if let Some(child) = node.child_by_field_name(field) {
        collect_bindings(child, src, lang, names);
    }
}

/// Whether an identifier node names something other than a local: a
/// property, a keyword argument, a path segment, a lifetime, a label or a
/// macro.
fn is_not_a_local(node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let is_field = |name: &str| parent.child_by_field_name(name) == Some(node);
    match parent.kind() {
        "attribute" => is_field("attribute"),
        "keyword_argument" | "scoped_identifier" | "scoped_type_identifier" => is_field("name"),
        "macro_invocation" => is_field("macro"),
        "lifetime" | "label" => true,
        _ => false,
    }
}

/// T2i: every identifier leaf naming a declared local gets a new name,
/// inside string interpolations too.
fn rename_edits(function: Node<'_>, src: &str, lang: Lang) -> Vec<Edit> {
    let names = declared_names(function, src, lang);
    let renamed = |n: &Node| n.kind() == "identifier" && names.contains(&src[n.byte_range()]);
    descendants(function)
        .into_iter()
        .filter(|n| renamed(n) && !is_not_a_local(*n))
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
fn literal_edits(function: Node<'_>, src: &str, format: &Format) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut stack = vec![function];
    while let Some(node) = stack.pop() {
        let (start, text) = (node.start_byte(), &src[node.byte_range()]);
        let quoted = [
            "string",
            "template_string",
            "string_literal",
            "raw_string_literal",
        ];
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
fn statement_edit(function: Node<'_>, src: &str, lang: Lang, insert: bool) -> Option<Edit> {
    let (first, last) = (function.start_position().row, function.end_position().row);
    let inner = |n: &Node| {
        let row = n.start_position().row;
        row > first && row == n.end_position().row && row < last
    };
    let in_block = |n: &Node| {
        let block =
            |p: Node| matches!(p.kind(), "statement_block" | "block") && p.named_child_count() >= 2;
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
            format!("{indent}{}\n", lang.comment_and_statement().1),
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

// ---------------------------------------------------------------- server

/// The server under test; killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts `binary` on `dir` in `mode`, its stderr to `log`, and waits
    /// until its first scan is done.
    fn start(binary: &Path, dir: &Path, mode: Mode, log: &Path) -> io::Result<Server> {
        let child = Command::new(binary)
            .arg(dir)
            .args(["--port", "0", "--host", "127.0.0.1", "--mode", mode.name()])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log)?)
            .spawn()?;
        let mut server = Server { child, port: 0 };
        let stdout = server
            .child
            .stdout
            .take()
            .ok_or(io::ErrorKind::BrokenPipe)?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        // `dupcheck listening on http://127.0.0.1:PORT (scanning DIR)`
        let port = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://127.0.0.1:"));
        server.port = port
            .and_then(|port| port.parse().ok())
            .ok_or_else(|| io::Error::other(format!("unexpected first line {line:?}")))?;
        server.wait_ready()?;
        Ok(server)
    }

    /// Polls `/api/health` until the status is `ready`.
    fn wait_ready(&self) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(600);
        let mut client = Client::new(self.port);
        while Instant::now() < deadline {
            let (_, body) = client.request("GET", "/api/health", "")?;
            let health: Value = serde_json::from_slice(&body).unwrap_or_default();
            if health["status"] == "ready" {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(io::Error::other("the first scan took over 10 minutes"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 client over one kept-alive connection.
struct Client {
    port: u16,
    conn: Option<BufReader<TcpStream>>,
}

impl Client {
    fn new(port: u16) -> Client {
        Client { port, conn: None }
    }

    /// Sends one request; returns the status and the body. A kept-alive
    /// connection that the server has closed is replaced once.
    fn request(&mut self, method: &str, path: &str, body: &str) -> io::Result<(u16, Vec<u8>)> {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        );
        if let Some(answer) = self
            .conn
            .as_mut()
            .and_then(|conn| exchange(conn, &head).ok())
        {
            return Ok(answer);
        }
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let conn = self.conn.insert(BufReader::new(stream));
        exchange(conn, &head)
    }
}

/// Writes one request on `conn` and reads the answer: its status and its
/// body (which the server always sends with a Content-Length).
fn exchange(conn: &mut BufReader<TcpStream>, request: &str) -> io::Result<(u16, Vec<u8>)> {
    conn.get_mut().write_all(request.as_bytes())?;
    let mut line = String::new();
    conn.read_line(&mut line)?;
    let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok());
    let status = status.ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
    let mut length = None;
    loop {
        line.clear();
        if conn.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok();
        }
    }
    let mut body = vec![0; length.ok_or_else(|| io::Error::other("no Content-Length"))?];
    conn.read_exact(&mut body)?;
    Ok((status, body))
}

// ---------------------------------------------------------------- evaluation

/// One reported duplication, as far as the benchmark looks at it.
struct Dup {
    file: String,
    start: u32,
    end: u32,
    tokens: u64,
}

/// The duplications reported for a snippet and the latency in milliseconds,
/// or why the request failed.
type Answer = Result<(Vec<Dup>, f64), String>;

/// Posts a snippet to `/api/check`.
fn check(client: &mut Client, format: &str, code: &str) -> Answer {
    let body = json!({ "code": code, "format": format }).to_string();
    let started = Instant::now();
    let (status, answer) = client
        .request("POST", "/api/check", &body)
        .map_err(|e| e.to_string())?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let answer: Value =
        serde_json::from_slice(&answer).map_err(|e| format!("status {status}: {e}"))?;
    let Some(dups) = answer["duplications"].as_array().filter(|_| status == 200) else {
        return Err(format!("status {status}: {answer}"));
    };
    let dup = |d: &Value| {
        let at = &d["codebaseLocation"];
        let line = |key: &str| at[key].as_u64().unwrap_or(0) as u32;
        let file = at["file"].as_str().unwrap_or_default().to_string();
        Dup {
            file,
            start: line("startLine"),
            end: line("endLine"),
            tokens: d["tokens"].as_u64().unwrap_or(0),
        }
    };
    Ok((dups.iter().map(dup).collect(), ms))
}

/// Whether the duplications find `function` (those in its file cover at
/// least half of its lines) and whether one of them is exact (its start and
/// end within one line of the function's).
fn judge(function: &Function, dups: &[Dup]) -> (bool, bool) {
    let own: Vec<&Dup> = dups.iter().filter(|d| d.file == function.file).collect();
    let covered = (function.start_line..=function.end_line)
        .filter(|&line| own.iter().any(|d| d.start <= line && line <= d.end))
        .count() as u32;
    let exact = |d: &&Dup| {
        d.start.abs_diff(function.start_line) <= 1 && d.end.abs_diff(function.end_line) <= 1
    };
    let found = 2 * covered >= function.lines();
    (found, found && own.iter().any(exact))
}

/// The variants a mode is meant to find whole; exactness is measured on them.
fn expected(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Strict => &VARIANTS[..2],
        Mode::Mild => &VARIANTS[..3],
        Mode::Weak => &VARIANTS[..4],
    }
}

/// Counts of one variant in one corpus and mode.
#[derive(Debug, Default, Serialize)]
struct VariantStats {
    made: usize,
    dropped: usize,
    skipped: usize,
    found: usize,
    exact: usize,
}

impl VariantStats {
    /// Counts a variant's outcome; returns its code when it was made.
    fn count<'a>(&mut self, outcome: &'a Outcome) -> Option<&'a str> {
        match outcome {
            Outcome::Made(code) => {
                self.made += 1;
                return Some(code);
            }
            Outcome::Dropped => self.dropped += 1,
            Outcome::Skipped => self.skipped += 1,
        }
        None
    }
}

/// A function (or a variant of it) and what the server reported for it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'static str>,
    file: String,
    start_line: u32,
    end_line: u32,
    /// The duplications, as `FILE:START-END (N tokens)`.
    reported: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnosis: Option<Diagnosis>,
}

impl Record {
    fn new(variant: Option<&'static str>, function: &Function, dups: &[Dup]) -> Record {
        let describe = |d: &Dup| format!("{}:{}-{} ({} tokens)", d.file, d.start, d.end, d.tokens);
        Record {
            variant,
            file: function.file.clone(),
            start_line: function.start_line,
            end_line: function.end_line,
            reported: dups.iter().map(describe).collect(),
            diagnosis: None,
        }
    }
}

/// Why a variant was missed, as far as a local comparison tells.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Diagnosis {
    /// `request failed: …`; `partial: …` (reported, but under half of the
    /// function's lines); `server miss` (a common run meets both thresholds
    /// yet nothing was reported); `below thresholds` (no common run meets
    /// them), maybe with `: the original parses differently` (the verbatim
    /// snippet already tokenizes differently out of its file).
    verdict: String,
    /// Normalized tokens of the variant and of the function in its file.
    variant_tokens: usize,
    function_tokens: usize,
    /// The longest common run of the two, and the variant lines it spans.
    longest_common_run: usize,
    run_lines: u32,
    /// Whether the verbatim snippet already tokenizes differently out of
    /// its file (a context-dependent parse).
    original_differs: bool,
    code: String,
}

/// Latency percentiles in milliseconds.
#[derive(Serialize)]
struct Latency {
    p50: f64,
    p99: f64,
}

/// Results of one corpus in one mode.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    corpus: &'static str,
    format: String,
    mode: &'static str,
    functions: usize,
    variants: BTreeMap<&'static str, VariantStats>,
    /// Found and exact among the variants the mode is meant to find whole.
    expected_found: usize,
    expected_exact: usize,
    negatives: usize,
    false_positives: Vec<Record>,
    latency_ms: Latency,
    /// Misses counted by variant and verdict.
    miss_verdicts: BTreeMap<String, usize>,
    misses: Vec<Record>,
    /// Found, but not exactly, among the variants meant to be found whole.
    inexact: Vec<Record>,
}

/// Posts every variant and negative of a corpus to the server on `port`.
fn evaluate(prepared: &Prepared, mode: Mode, port: u16) -> Report {
    let mut client = Client::new(port);
    let mut tally = Tally::default();
    for case in &prepared.cases {
        post_variants(&mut client, prepared.format, mode, case, &mut tally);
    }
    let false_positives = post_negatives(&mut client, prepared, &mut tally.latencies);
    let mut miss_verdicts = BTreeMap::new();
    for miss in &tally.misses {
        let verdict = miss.diagnosis.as_ref().map_or("", |d| d.verdict.as_str());
        *miss_verdicts
            .entry(format!("{} {verdict}", miss.variant.unwrap_or("")))
            .or_default() += 1;
    }
    let expected_stats = || expected(mode).iter().filter_map(|v| tally.variants.get(v));
    Report {
        corpus: prepared.name,
        format: prepared.format.name.clone(),
        mode: mode.name(),
        functions: prepared.cases.len(),
        expected_found: expected_stats().map(|s| s.found).sum(),
        expected_exact: expected_stats().map(|s| s.exact).sum(),
        variants: tally.variants,
        negatives: prepared.negatives.len(),
        false_positives,
        latency_ms: percentiles(tally.latencies),
        miss_verdicts,
        misses: tally.misses,
        inexact: tally.inexact,
    }
}

/// What posting the variants of a corpus gave so far.
#[derive(Default)]
struct Tally {
    variants: BTreeMap<&'static str, VariantStats>,
    misses: Vec<Record>,
    inexact: Vec<Record>,
    latencies: Vec<f64>,
}

/// Posts the variants of one function and tallies the answers.
fn post_variants(client: &mut Client, format: &Format, mode: Mode, case: &Case, tally: &mut Tally) {
    for (&name, outcome) in VARIANTS.iter().zip(&case.variants) {
        let stats = tally.variants.entry(name).or_default();
        let Some(code) = stats.count(outcome) else {
            continue;
        };
        let answer = check(client, &format.name, code);
        let dups = answer.as_ref().map_or(&[][..], |(dups, _)| dups);
        let (found, exact) = judge(&case.function, dups);
        stats.found += usize::from(found);
        stats.exact += usize::from(exact);
        tally
            .latencies
            .extend(answer.as_ref().ok().map(|(_, ms)| *ms));
        let mut record = Record::new(Some(name), &case.function, dups);
        if !found {
            record.diagnosis = Some(diagnose(format, mode, &case.function, code, &answer));
            tally.misses.push(record);
        } else if !exact && expected(mode).contains(&name) {
            tally.inexact.push(record);
        }
    }
}

/// Posts the negatives of a corpus; returns those something was reported for.
fn post_negatives(
    client: &mut Client,
    prepared: &Prepared,
    latencies: &mut Vec<f64>,
) -> Vec<Record> {
    let mut false_positives = Vec::new();
    for negative in &prepared.negatives {
        let src = read_source(&negative.path).unwrap_or_default();
        let code = src
            .get(negative.snippet_start..negative.end_byte)
            .unwrap_or("");
        match check(client, &prepared.format.name, code) {
            Ok((dups, ms)) => {
                latencies.push(ms);
                if !dups.is_empty() {
                    false_positives.push(Record::new(None, negative, &dups));
                }
            }
            Err(error) => eprintln!("checking {} failed: {error}", negative.file),
        }
    }
    false_positives
}

/// Explains a miss: how much of the variant the function shares at all.
fn diagnose(
    format: &Format,
    mode: Mode,
    function: &Function,
    code: &str,
    answer: &Answer,
) -> Diagnosis {
    let src = read_source(&function.path).unwrap_or_default();
    let ids = |tokens: Vec<Token>| tokens.into_iter().map(|t| t.id).collect::<Vec<u64>>();
    let in_function =
        |t: &Token| t.start as usize >= function.start_byte && t.end as usize <= function.end_byte;
    let reference: Vec<Token> = tokenize(format, &src, mode)
        .unwrap_or_default()
        .into_iter()
        .filter(in_function)
        .collect();
    let snippet = src.get(function.snippet_start..function.end_byte);
    let original = tokenize_snippet(format, snippet.unwrap_or(""), mode).unwrap_or_default();
    let query = tokenize_snippet(format, code, mode).unwrap_or_default();
    let (run, end) = longest_common_run(&query, &reference);
    let run_lines = match run {
        0 => 0,
        _ => {
            let lines = LineIndex::new(code);
            lines.line_of(query[end - 1].end - 1) - lines.line_of(query[end - run].start) + 1
        }
    };
    let original_differs = ids(original) != ids(reference.clone());
    let own_file = |(dups, _): &(Vec<Dup>, f64)| dups.iter().any(|d| d.file == function.file);
    let verdict = match answer {
        Err(error) => format!("request failed: {error}"),
        Ok(answer) if own_file(answer) => "partial: under half of the lines reported".into(),
        Ok(_) if run >= MIN_TOKENS && run_lines >= MIN_LINES => "server miss".into(),
        Ok(_) if original_differs => "below thresholds: the original parses differently".into(),
        Ok(_) => "below thresholds".into(),
    };
    Diagnosis {
        verdict,
        variant_tokens: query.len(),
        function_tokens: reference.len(),
        longest_common_run: run,
        run_lines,
        original_differs,
        code: code.to_string(),
    }
}

/// The length of the longest run of equal identities in `a` and `b`, and
/// where it ends in `a` (exclusive).
fn longest_common_run(a: &[Token], b: &[Token]) -> (usize, usize) {
    let (mut previous, mut current) = (vec![0; b.len() + 1], vec![0; b.len() + 1]);
    let mut best = (0, 0);
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            current[j + 1] = if x.id == y.id { previous[j] + 1 } else { 0 };
            if current[j + 1] > best.0 {
                best = (current[j + 1], i + 1);
            }
        }
        std::mem::swap(&mut previous, &mut current);
    }
    best
}

/// The median and the 99th percentile.
fn percentiles(mut values: Vec<f64>) -> Latency {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let last = values.len().saturating_sub(1) as f64;
        values
            .get((last * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Latency {
        p50: at(0.5),
        p99: at(0.99),
    }
}

/// Prints one table row, and the header before the first.
fn print_row(report: &Report, header: bool) {
    const HEADER: [&str; 13] = [
        "corpus", "mode", "n", "T0", "T1", "T2i", "T2l", "T3", "exact", "FP", "p50ms", "p99ms",
        "dropped",
    ];
    const WIDTHS: [usize; 13] = [7, 6, 4, 6, 6, 6, 6, 6, 6, 16, 6, 6, 7];
    let print = |cells: &[String]| {
        let cells = cells
            .iter()
            .zip(WIDTHS)
            .map(|(cell, width)| format!("{cell:>width$}"));
        println!("{}", cells.collect::<Vec<_>>().join(" "));
    };
    if header {
        print(&HEADER.map(String::from));
    }
    let ratio = |part: usize, whole: usize| match whole {
        0 => "-".to_string(),
        _ => format!("{:.3}", part as f64 / whole as f64),
    };
    let stats = |v: &str| {
        report
            .variants
            .get(v)
            .map_or("-".into(), |s| ratio(s.found, s.made))
    };
    let fps = report.false_positives.len();
    let mut cells = vec![
        report.corpus.to_string(),
        report.mode.to_string(),
        report.functions.to_string(),
    ];
    cells.extend(VARIANTS.map(stats));
    cells.extend([
        ratio(report.expected_exact, report.expected_found),
        format!(
            "{:.2}% ({fps}/{})",
            100.0 * fps as f64 / report.negatives.max(1) as f64,
            report.negatives
        ),
        format!("{:.2}", report.latency_ms.p50),
        format!("{:.2}", report.latency_ms.p99),
        report
            .variants
            .values()
            .map(|s| s.dropped)
            .sum::<usize>()
            .to_string(),
    ]);
    print(&cells);
}
