//! Configuration: the command line and `.dupcheck.json`, merged and checked.
//!
//! In: raw flags ([`Cli`], parsed by clap) and the config file's JSON. Out:
//! one validated [`Config`] with typed values (the [`Normalization`]: mode,
//! case, compiled ignore patterns; byte sizes, format ids, origin host
//! names). Precedence lives in one place, [`Config::resolve`]: command line
//! over config file over defaults. jscpd-server's own options are accepted
//! too (`-g`, `--store`, `--ignoreCase`, `--ignore-pattern`).
//!
//! Invariant: every error names the option or key at fault and what it
//! accepts; `main` prints it on one line and exits with status 2.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use clap::Parser;
use ignore::overrides::{Override, OverrideBuilder};
use serde_json::{Map, Value};

use crate::engine::grammar::{FormatId, Registry};
use crate::engine::matching::Thresholds;
use crate::engine::patterns::IgnorePatterns;
use crate::engine::tokens::{Mode, Normalization};

/// Raw command-line flags, before merging with the config file.
#[derive(Debug, Parser)]
#[command(
    name = "dupcheck",
    version,
    about = "A duplicate-code server: POST a snippet, get every place in the codebase it duplicates.",
    args_conflicts_with_subcommands = true,
    after_help = "Run `dupcheck report --help` for the one-run report for CI. A directory named `report` is reachable as `./report`."
)]
pub struct Cli {
    /// A one-run command instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// What is scanned and how.
    #[command(flatten)]
    pub scan: ScanArgs,
    /// How the server serves.
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Print the normalized tokens of FILE and exit (for grammar work)
    #[arg(long, value_name = "FILE", hide = true)]
    pub dump_tokens: Option<PathBuf>,
    /// Print the syntax tree of FILE and exit (for grammar work)
    #[arg(long, value_name = "FILE", hide = true)]
    pub dump_tree: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Scan DIR once, report the project's clones and exit (for CI)
    #[command(after_help = REPORT_EXIT_CODES)]
    Report(ReportArgs),
    /// Speak the Language Server Protocol on stdin and stdout (for editors)
    Lsp(LspArgs),
}

/// The flags of `dupcheck lsp`: those of a scan. DIR is the root the
/// editor sends in `initialize`; the flag is used when it sends none.
#[derive(Debug, Clone, clap::Args)]
pub struct LspArgs {
    /// Ask the dupcheck server running at URL (http://HOST:PORT, serving
    /// the workspace) instead of scanning in process; it does not see the
    /// editor's other unsaved buffers
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// What is scanned and how.
    #[command(flatten)]
    pub scan: ScanArgs,
}

/// The exit codes of `dupcheck report`, shown by its `--help`.
const REPORT_EXIT_CODES: &str = "Exit status:
  0  no clone above the threshold, and with --fail-on-new no new clone
  1  the duplicated-lines percentage is above --threshold, or --fail-on-new
     and a clone is not in the --baseline
  2  usage error, unreadable DIR, config, baseline or diff, or a failed write";

/// The flags of every scan, the server's and `report`'s.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScanArgs {
    /// Working directory to scan [default: the current directory]
    pub dir: Option<PathBuf>,
    /// Config file (relative to the current directory) [default: DIR/.dupcheck.json]
    #[arg(short = 'c', long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Only scan these formats, comma-separated (javascript,python) [default: all]
    #[arg(short = 'f', long, value_name = "LIST")]
    pub format: Option<String>,
    /// Exclude files matching these gitignore-style globs, comma-separated, relative to DIR
    #[arg(short = 'i', long, value_name = "GLOBS")]
    pub ignore: Option<String>,
    /// Minimum lines of a reported duplication [default: 5]
    #[arg(short = 'l', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub min_lines: Option<u32>,
    /// Minimum normalized tokens of a reported duplication [default: 50]
    #[arg(short = 'k', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub min_tokens: Option<u32>,
    /// Detection mode: strict keeps identifiers, mild abstracts them, weak abstracts literals too [default: strict]
    #[arg(short = 'm', long, value_name = "MODE", value_parser = ["strict", "mild", "weak"], ignore_case = true)]
    pub mode: Option<String>,
    /// Report absolute file paths
    #[arg(short = 'a', long)]
    pub absolute: bool,
    /// Do not follow symbolic links
    #[arg(short = 'n', long = "noSymlinks")]
    pub no_symlinks: bool,
    /// Skip duplications whose two locations are in the same folder
    #[arg(long = "skipLocal")]
    pub skip_local: bool,
    /// Scan generated files too (an `@generated`, `Code generated ... DO NOT EDIT.` or `<auto-generated` header, or minified: a line over 1,000 characters in the first 5)
    #[arg(long)]
    pub include_generated: bool,
    /// Report checked snippets' near-miss copies (a few statements inserted, deleted or changed) only as their exact parts, unless a check asks for them ("nearMiss": true)
    #[arg(long)]
    pub no_near_miss: bool,
    /// Least similarity of a near-miss duplication: matched tokens over tokens spanned, on the longer side [default: 0.8]
    #[arg(long, value_name = "RATIO", value_parser = parse_similarity)]
    pub similarity: Option<f64>,
    /// Skip files larger than this (100kb, 1mb, plain bytes) [default: 1mb]
    #[arg(short = 'z', long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub max_size: Option<u64>,
    /// Skip files with more lines than this [default: unlimited]
    #[arg(short = 'x', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_lines: Option<u64>,
    /// Cache folder for warm restarts [default: DIR/.dupcheck-cache]
    #[arg(long, value_name = "PATH", conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the cache
    #[arg(long)]
    pub no_cache: bool,
    /// Compare tokens kept as text without case: identifiers (strict mode), keywords, literals
    #[arg(long = "ignoreCase")]
    pub ignore_case: bool,
    /// Keep import, package, `use`, `#include` and `using` declarations as tokens (by default they are not compared)
    #[arg(long)]
    pub keep_imports: bool,
    /// Skip code blocks matching this regular expression: tokens inside a match are dropped;
    /// repeatable, or comma-separated as in jscpd (commas in (), [], {} or escaped belong to the pattern)
    #[arg(long = "ignore-pattern", value_name = "REGEX")]
    pub ignore_pattern: Vec<String>,
    /// Accepted for jscpd: dupcheck always honours .gitignore (and .ignore)
    #[arg(short = 'g', long)]
    pub gitignore: bool,
    /// Accepted for jscpd and ignored, with a warning: dupcheck keeps its own index cache (--cache-dir)
    #[arg(long, value_name = "NAME")]
    pub store: Option<String>,
}

impl ScanArgs {
    /// The `--ignore-pattern`s given, each occurrence split at its commas
    /// as jscpd splits them ([`split_patterns`]).
    pub fn ignore_patterns(&self) -> Vec<String> {
        self.ignore_pattern
            .iter()
            .flat_map(|p| split_patterns(p))
            .collect()
    }
}

/// The flags of the server alone.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Port to listen on; 0 picks a free port [default: 3000]
    #[arg(short = 'p', long, value_name = "N")]
    pub port: Option<u16>,
    /// Address to bind: an IPv4 or IPv6 literal, or localhost [default: 0.0.0.0]
    #[arg(short = 'H', long, value_name = "ADDR")]
    pub host: Option<String>,
    /// Largest accepted request body (100kb, 10mb, plain bytes) [default: 10mb]
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub max_body: Option<u64>,
    /// Extra browser Origin host to allow (hostname, host:port or URL); repeatable
    #[arg(long = "allowed-origin", value_name = "HOST")]
    pub allowed_origin: Vec<String>,
    /// Extra Host name to serve when bound to a specific address (DNS
    /// rebinding guard); repeatable
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_host: Vec<String>,
    /// Do not watch DIR for changes (use POST /api/recheck to refresh)
    #[arg(long)]
    pub no_watch: bool,
    /// Seconds a client may take to send its request headers (for tests)
    #[arg(long, hide = true, value_name = "SECS", default_value_t = 30)]
    pub header_timeout: u64,
}

/// The flags of `dupcheck report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// What is scanned and how, as for the server.
    #[command(flatten)]
    pub scan: ScanArgs,
    /// Reporters, comma-separated: console, json, sarif, markdown
    #[arg(
        short = 'r',
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "console"
    )]
    pub reporter: Vec<Reporter>,
    /// Folder for the json, sarif and markdown reports (dupcheck-report.json, .sarif, .md) [default: they go to stdout]
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Exit 1 when the duplicated-lines percentage is above PCT (0-100); with --diff, of the added lines
    #[arg(short = 't', long, value_name = "PCT", value_parser = parse_percent)]
    pub threshold: Option<f64>,
    /// A JSON report of an earlier run: clones not in it are marked new
    #[arg(short = 'b', long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Exit 1 when a clone is not in the --baseline
    #[arg(long, requires = "baseline")]
    pub fail_on_new: bool,
    /// Report only the duplications that touch the added lines of this unified diff (`-` reads stdin)
    #[arg(short = 'd', long, value_name = "FILE")]
    pub diff: Option<PathBuf>,
    /// Write the cache after the scan, as the server does [default: only read it]
    #[arg(long, conflicts_with = "no_cache")]
    pub write_cache: bool,
}

/// One reporter of `dupcheck report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Reporter {
    /// A table of clones, largest first, then the totals, on stdout.
    Console,
    /// `dupcheck-report.json`: clones, statistics; the baseline format.
    Json,
    /// `dupcheck-report.sarif`: SARIF 2.1.0, for code scanning.
    Sarif,
    /// `dupcheck-report.md`: a table for a pull-request comment.
    Markdown,
}

fn parse_percent(s: &str) -> Result<f64, String> {
    s.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| format!("{s:?} is not a percentage from 0 to 100"))
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// DIR is missing, not a directory, or unreadable.
    #[error("cannot serve {path}: {reason}")]
    Dir { path: PathBuf, reason: String },
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The config file is not a JSON object.
    #[error("config file {path} is not valid JSON: {reason}")]
    Json { path: PathBuf, reason: String },
    /// A key of the config file has a bad value.
    #[error("config file {path}: key \"{key}\" {problem}")]
    Key {
        path: PathBuf,
        key: &'static str,
        problem: String,
    },
    /// A command-line option has a bad value.
    #[error("invalid value for {option}: {problem}")]
    Option {
        option: &'static str,
        problem: String,
    },
}

/// The validated settings of one server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Canonical working directory.
    pub dir: PathBuf,
    /// Address to bind.
    pub host: IpAddr,
    /// Port to listen on.
    pub port: u16,
    /// Formats to scan.
    pub formats: Vec<FormatId>,
    /// `--ignore` globs, relative to DIR, compiled as exclusions.
    pub ignore: Override,
    /// Detection thresholds.
    pub thresholds: Thresholds,
    /// The default mode: of checks that name none, of the statistics, the
    /// clone list and reports.
    pub mode: Mode,
    /// How tokens are made: case, ignore patterns.
    pub normalization: Normalization,
    /// Report absolute paths.
    pub absolute: bool,
    /// Do not follow symbolic links.
    pub no_symlinks: bool,
    /// Skip duplications within one folder.
    pub skip_local: bool,
    /// Scan generated and minified files too.
    pub include_generated: bool,
    /// Whether checks find near-miss copies (type 3) unless they say
    /// otherwise (not with `--no-near-miss`).
    pub near_miss: bool,
    /// The least similarity of a near-miss copy (`--similarity`).
    pub similarity: f64,
    /// Largest file scanned, in bytes.
    pub max_size: u64,
    /// Most lines of a file scanned.
    pub max_lines: Option<u64>,
    /// Largest request body, in bytes.
    pub max_body: u64,
    /// Extra allowed Origin host names, lower case.
    pub allowed_origins: Vec<String>,
    /// Extra allowed Host names, lower case.
    pub allowed_hosts: Vec<String>,
    /// How long a client may take to send its request headers.
    pub header_timeout: std::time::Duration,
    /// Where the cache lives; `None` with `--no-cache`.
    pub cache_dir: Option<PathBuf>,
    /// Whether to watch DIR and apply changes as they happen.
    pub watch: bool,
}

/// Defaults of SPEC section 1.
const DEFAULT_PORT: u16 = 3000;
const DEFAULT_MIN_LINES: u32 = 5;
const DEFAULT_MIN_TOKENS: u32 = 50;
const DEFAULT_MAX_SIZE: u64 = 1024 * 1024;
const DEFAULT_MAX_BODY: u64 = 10 * 1024 * 1024;
const CONFIG_FILE: &str = ".dupcheck.json";
const CACHE_DIR: &str = ".dupcheck-cache";

/// Keys the config file accepts.
const KNOWN_KEYS: [&str; 21] = [
    "port",
    "host",
    "format",
    "ignore",
    "minLines",
    "minTokens",
    "mode",
    "absolute",
    "noSymlinks",
    "skipLocal",
    "includeGenerated",
    "nearMiss",
    "similarity",
    "maxSize",
    "maxLines",
    "maxBody",
    "allowedOrigins",
    "allowedHosts",
    "ignoreCase",
    "ignorePattern",
    "keepImports",
];

/// The config file's values, each already type-checked.
#[derive(Debug, Default)]
struct FileValues {
    port: Option<u16>,
    host: Option<String>,
    format: Option<Vec<String>>,
    ignore: Option<Vec<String>>,
    min_lines: Option<u32>,
    min_tokens: Option<u32>,
    mode: Option<Mode>,
    absolute: Option<bool>,
    no_symlinks: Option<bool>,
    skip_local: Option<bool>,
    include_generated: Option<bool>,
    near_miss: Option<bool>,
    similarity: Option<f64>,
    max_size: Option<u64>,
    max_lines: Option<u64>,
    max_body: Option<u64>,
    allowed_origins: Option<Vec<String>>,
    allowed_hosts: Option<Vec<String>>,
    ignore_case: Option<bool>,
    ignore_pattern: Option<IgnorePatterns>,
    keep_imports: Option<bool>,
}

impl Config {
    /// Merges `cli` over the config file over the defaults. `cwd` resolves
    /// relative paths; `warn` receives one line per unknown config key, and
    /// one for `--store`.
    pub fn resolve(
        cli: &Cli,
        cwd: &Path,
        registry: &Registry,
        warn: impl FnMut(String),
    ) -> Result<Config, ConfigError> {
        Config::resolve_parts(&cli.scan, &cli.serve, cwd, registry, warn)
    }

    /// [`Config::resolve`] from the two groups of flags: `dupcheck report`
    /// has no server flags and passes `ServeArgs::default()`.
    pub fn resolve_parts(
        scan: &ScanArgs,
        serve: &ServeArgs,
        cwd: &Path,
        registry: &Registry,
        mut warn: impl FnMut(String),
    ) -> Result<Config, ConfigError> {
        let dir = resolve_dir(&cwd.join(scan.dir.as_deref().unwrap_or(Path::new("."))))?;
        let file = match &scan.config {
            Some(path) => read_config(&cwd.join(path), &mut warn)?,
            None => {
                let path = dir.join(CONFIG_FILE);
                if path.exists() {
                    read_config(&path, &mut warn)?
                } else {
                    FileValues::default()
                }
            }
        };
        let host_text = serve
            .host
            .clone()
            .or(file.host)
            .unwrap_or_else(|| "0.0.0.0".into());
        let host = parse_host(&host_text).ok_or_else(|| ConfigError::Option {
            option: "--host",
            problem: format!("{host_text:?} is not an IPv4 or IPv6 address or localhost"),
        })?;
        let formats = match scan.format.as_deref().map(split_list).or(file.format) {
            None => registry.formats().iter().map(|f| f.id).collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    registry
                        .lookup(n)
                        .map(|f| f.id)
                        .ok_or_else(|| ConfigError::Option {
                            option: "--format",
                            problem: format!(
                                "unknown format {n:?}; known formats: {}",
                                registry.names().join(", ")
                            ),
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        let ignore_globs = scan
            .ignore
            .as_deref()
            .map(split_list)
            .or(file.ignore)
            .unwrap_or_default();
        let ignore = compile_ignore(&dir, &ignore_globs)?;
        let mode = match &scan.mode {
            Some(m) => Mode::parse(m).ok_or_else(|| ConfigError::Option {
                option: "--mode",
                problem: format!("{m:?}; allowed: {}", Mode::NAMES),
            })?,
            None => file.mode.unwrap_or_default(),
        };
        let ignore_patterns = match scan.ignore_patterns() {
            given if given.is_empty() => file.ignore_pattern.unwrap_or_default(),
            given => IgnorePatterns::new(&given).map_err(|e| ConfigError::Option {
                option: "--ignore-pattern",
                problem: e.to_string(),
            })?,
        };
        let normalization = Normalization {
            ignore_case: scan.ignore_case || file.ignore_case.unwrap_or(false),
            ignore_patterns,
            keep_imports: scan.keep_imports || file.keep_imports.unwrap_or(false),
        };
        let hosts = |option, given: &[String], from_file: &Option<Vec<String>>| {
            given
                .iter()
                .chain(from_file.iter().flatten())
                .map(|o| {
                    origin_host(o).ok_or_else(|| ConfigError::Option {
                        option,
                        problem: format!("{o:?} is not a hostname, host:port or URL"),
                    })
                })
                .collect::<Result<Vec<String>, _>>()
        };
        let allowed_origins = hosts(
            "--allowed-origin",
            &serve.allowed_origin,
            &file.allowed_origins,
        )?;
        let allowed_hosts = hosts("--allowed-host", &serve.allowed_host, &file.allowed_hosts)?;
        let cache_dir = match (&scan.cache_dir, scan.no_cache) {
            (_, true) => None,
            (Some(path), false) => Some(cwd.join(path)),
            (None, false) => Some(dir.join(CACHE_DIR)),
        };
        if let Some(store) = &scan.store {
            warn(match &cache_dir {
                Some(cache) => format!(
                    "warning: --store {store} is ignored: dupcheck keeps its own index cache in {} (see --cache-dir, --no-cache)",
                    cache.display()
                ),
                None => format!(
                    "warning: --store {store} is ignored: dupcheck keeps its own index cache, off here (--no-cache)"
                ),
            });
        }
        Ok(Config {
            host,
            port: serve.port.or(file.port).unwrap_or(DEFAULT_PORT),
            formats,
            ignore,
            thresholds: Thresholds {
                min_lines: scan
                    .min_lines
                    .or(file.min_lines)
                    .unwrap_or(DEFAULT_MIN_LINES),
                min_tokens: scan
                    .min_tokens
                    .or(file.min_tokens)
                    .unwrap_or(DEFAULT_MIN_TOKENS),
            },
            mode,
            normalization,
            absolute: scan.absolute || file.absolute.unwrap_or(false),
            no_symlinks: scan.no_symlinks || file.no_symlinks.unwrap_or(false),
            skip_local: scan.skip_local || file.skip_local.unwrap_or(false),
            include_generated: scan.include_generated || file.include_generated.unwrap_or(false),
            near_miss: !scan.no_near_miss && file.near_miss.unwrap_or(true),
            similarity: scan
                .similarity
                .or(file.similarity)
                .unwrap_or(crate::engine::near_miss::DEFAULT_SIMILARITY),
            max_size: scan.max_size.or(file.max_size).unwrap_or(DEFAULT_MAX_SIZE),
            max_lines: scan.max_lines.or(file.max_lines),
            max_body: serve.max_body.or(file.max_body).unwrap_or(DEFAULT_MAX_BODY),
            allowed_origins,
            allowed_hosts,
            header_timeout: std::time::Duration::from_secs(serve.header_timeout.max(1)),
            cache_dir,
            watch: !serve.no_watch,
            dir,
        })
    }
}

/// Whether `ratio` is a similarity: above 0, at most 1.
fn similarity_ok(ratio: f64) -> bool {
    ratio > 0.0 && ratio <= 1.0
}

/// `--similarity`: a number above 0, at most 1.
fn parse_similarity(arg: &str) -> Result<f64, String> {
    arg.parse::<f64>()
        .ok()
        .filter(|r| similarity_ok(*r))
        .ok_or_else(|| format!("{arg:?} is not a number above 0, at most 1"))
}

/// Canonicalizes DIR and checks that it is a readable directory.
fn resolve_dir(path: &Path) -> Result<PathBuf, ConfigError> {
    let fail = |reason: String| ConfigError::Dir {
        path: path.to_owned(),
        reason,
    };
    let dir = path.canonicalize().map_err(|e| fail(e.to_string()))?;
    if !dir.is_dir() {
        return Err(fail("not a directory".into()));
    }
    std::fs::read_dir(&dir).map_err(|e| fail(e.to_string()))?;
    Ok(dir)
}

/// Compiles the `--ignore` globs, relative to DIR, into exclusion rules
/// for the walker; a bad glob is reported before serving.
fn compile_ignore(dir: &Path, globs: &[String]) -> Result<Override, ConfigError> {
    let bad = |glob: &str, e: ignore::Error| ConfigError::Option {
        option: "--ignore",
        problem: format!("bad glob {glob:?}: {e}"),
    };
    let mut builder = OverrideBuilder::new(dir);
    for glob in globs {
        builder.add(&format!("!{glob}")).map_err(|e| bad(glob, e))?;
    }
    builder.build().map_err(|e| bad(&globs.join(","), e))
}

/// Splits `--ignore-pattern`'s value at its commas, as jscpd does, but for
/// the commas a regular expression holds: escaped (`\,`) or inside
/// parentheses, brackets or braces (`a{1,3}`, `[,;]`). Empty items are
/// dropped; nothing is trimmed (a space may be part of a pattern).
pub fn split_patterns(s: &str) -> Vec<String> {
    let mut patterns = Vec::new();
    let (mut depth, mut in_class, mut escaped) = (0usize, 0usize, false);
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' => in_class += 1,
            ']' if in_class > 0 => in_class -= 1,
            _ if in_class > 0 => {}
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                patterns.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    patterns.push(&s[start..]);
    patterns
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// Splits a comma-separated list, dropping empty items.
fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// An address to bind: an IP literal (brackets allowed) or `localhost`.
fn parse_host(s: &str) -> Option<IpAddr> {
    if s.eq_ignore_ascii_case("localhost") {
        return Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    s.trim_start_matches('[').trim_end_matches(']').parse().ok()
}

/// The host name of an Origin header value, a URL, `host:port` or a bare host,
/// lower case and without brackets or port; `None` if there is none.
pub fn origin_host(s: &str) -> Option<String> {
    let s = s.trim();
    let authority = s.split_once("://").map_or(s, |(_, rest)| rest);
    let authority = authority.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Parses a size: a plain number of bytes, or a number with `kb`, `mb` or
/// `gb` (powers of 1024), case-insensitive, e.g. `100kb`, `1.5mb`.
pub fn parse_size(s: &str) -> Option<u64> {
    let lower = s.trim().to_ascii_lowercase();
    let (number, unit) = [
        ("kb", 1u64 << 10),
        ("mb", 1 << 20),
        ("gb", 1 << 30),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suffix, unit)| lower.strip_suffix(suffix).map(|n| (n.trim(), *unit)))
    .unwrap_or((lower.as_str(), 1));
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    Some((value * unit as f64).round() as u64)
}

fn parse_size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).ok_or_else(|| {
        format!("{s:?} is not a size; use bytes or a number with kb or mb, e.g. 100kb, 1mb")
    })
}

/// Reads and type-checks a config file.
fn read_config(path: &Path, warn: &mut impl FnMut(String)) -> Result<FileValues, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let json: Value = serde_json::from_str(&text).map_err(|e| ConfigError::Json {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let Value::Object(map) = json else {
        return Err(ConfigError::Json {
            path: path.to_owned(),
            reason: "expected an object of options".into(),
        });
    };
    for key in map.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        warn(format!(
            "warning: config file {}: unknown key \"{key}\" ignored",
            path.display()
        ));
    }
    let keys = Keys { path, map: &map };
    Ok(FileValues {
        port: keys.get("port", "must be a port number 0-65535", |v| {
            v.as_u64().and_then(|n| u16::try_from(n).ok())
        })?,
        host: keys.get("host", "must be a string", |v| v.as_str().map(String::from))?,
        format: keys.get(
            "format",
            "must be a string \"a,b\" or an array of strings",
            list,
        )?,
        ignore: keys.get(
            "ignore",
            "must be a string \"a,b\" or an array of strings",
            list,
        )?,
        min_lines: keys.get("minLines", "must be an integer >= 1", positive_u32)?,
        min_tokens: keys.get("minTokens", "must be an integer >= 1", positive_u32)?,
        mode: keys.get("mode", "must be one of: strict, mild, weak", |v| {
            v.as_str().and_then(Mode::parse)
        })?,
        absolute: keys.get("absolute", "must be true or false", Value::as_bool)?,
        no_symlinks: keys.get("noSymlinks", "must be true or false", Value::as_bool)?,
        skip_local: keys.get("skipLocal", "must be true or false", Value::as_bool)?,
        include_generated: keys.get("includeGenerated", "must be true or false", Value::as_bool)?,
        near_miss: keys.get("nearMiss", "must be true or false", Value::as_bool)?,
        similarity: keys.get("similarity", "must be a number above 0, at most 1", |v| {
            v.as_f64().filter(|r| similarity_ok(*r))
        })?,
        max_size: keys.get(
            "maxSize",
            "must be a size such as \"100kb\", \"1mb\" or a number of bytes",
            size,
        )?,
        max_lines: keys.get("maxLines", "must be an integer >= 1", |v| {
            v.as_u64().filter(|&n| n >= 1)
        })?,
        max_body: keys.get(
            "maxBody",
            "must be a size such as \"100kb\", \"10mb\" or a number of bytes",
            size,
        )?,
        allowed_origins: keys.get("allowedOrigins", "must be an array of strings", array)?,
        allowed_hosts: keys.get("allowedHosts", "must be an array of strings", array)?,
        ignore_case: keys.get("ignoreCase", "must be true or false", Value::as_bool)?,
        keep_imports: keys.get("keepImports", "must be true or false", Value::as_bool)?,
        ignore_pattern: keys
            .get(
                "ignorePattern",
                "must be an array of strings (regular expressions)",
                array,
            )?
            .map(|patterns| {
                IgnorePatterns::new(&patterns).map_err(|e| ConfigError::Key {
                    path: path.to_owned(),
                    key: "ignorePattern",
                    problem: format!("has {e}"),
                })
            })
            .transpose()?,
    })
}

/// An array of strings.
fn array(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Array(_) => list(v),
        _ => None,
    }
}

/// Typed access to the keys of one config file.
struct Keys<'a> {
    path: &'a Path,
    map: &'a Map<String, Value>,
}

impl Keys<'_> {
    /// The value of `key` converted by `convert`, or an error saying the key
    /// `problem` when it does not convert.
    fn get<T>(
        &self,
        key: &'static str,
        problem: &str,
        convert: impl Fn(&Value) -> Option<T>,
    ) -> Result<Option<T>, ConfigError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => convert(v).map(Some).ok_or_else(|| ConfigError::Key {
                path: self.path.to_owned(),
                key,
                problem: problem.to_owned(),
            }),
        }
    }
}

fn list(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(split_list(s)),
        Value::Array(items) => items.iter().map(|i| i.as_str().map(String::from)).collect(),
        _ => None,
    }
}

fn positive_u32(v: &Value) -> Option<u32> {
    v.as_u64()
        .filter(|&n| n >= 1)
        .and_then(|n| u32::try_from(n).ok())
}

fn size(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => parse_size(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(args: &[&str], config: Option<&str>) -> Result<(Config, Vec<String>), String> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = config {
            std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        }
        let mut argv = vec!["dupcheck", dir.path().to_str().unwrap()];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let mut warnings = Vec::new();
        let config = Config::resolve(&cli, dir.path(), &Registry::builtin(), |w| warnings.push(w))
            .map_err(|e| e.to_string())?;
        Ok((config, warnings))
    }

    #[test]
    fn sizes() {
        for (text, bytes) in [
            ("100kb", 102_400),
            ("1mb", 1_048_576),
            ("1MB", 1_048_576),
            ("2048", 2048),
            ("1.5kb", 1536),
            ("10b", 10),
        ] {
            assert_eq!(parse_size(text), Some(bytes), "{text}");
        }
        for bad in ["", "mb", "ten", "-1kb", "1tb"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn origin_hosts() {
        for (text, host) in [
            ("http://localhost:3000", "localhost"),
            ("https://Example.COM", "example.com"),
            ("http://[::1]:8080/x", "::1"),
            ("example.com:8080", "example.com"),
            ("tools.internal", "tools.internal"),
        ] {
            assert_eq!(origin_host(text).as_deref(), Some(host), "{text}");
        }
        assert_eq!(origin_host("http://"), None);
    }

    #[test]
    fn defaults() {
        let (c, warnings) = resolve(&[], None).unwrap();
        assert_eq!(c.port, 3000);
        assert_eq!(c.host.to_string(), "0.0.0.0");
        assert_eq!((c.thresholds.min_lines, c.thresholds.min_tokens), (5, 50));
        assert_eq!(c.mode, Mode::Strict);
        assert!(!c.normalization.ignore_case);
        assert!(c.normalization.ignore_patterns.is_empty());
        assert_eq!(
            (c.max_size, c.max_body, c.max_lines),
            (1 << 20, 10 << 20, None)
        );
        assert_eq!(c.formats.len(), Registry::builtin().formats().len());
        assert!(warnings.is_empty());
    }

    #[test]
    fn command_line_wins_over_config_file() {
        let file = r#"{"port": 4000, "minLines": 7, "mode": "weak", "format": ["py", "rust"], "skipLocal": true, "maxSize": "2kb"}"#;
        let (c, _) = resolve(&["--port", "5000", "-m", "mild"], Some(file)).unwrap();
        assert_eq!(
            (c.port, c.thresholds.min_lines, c.mode),
            (5000, 7, Mode::Mild)
        );
        assert_eq!(c.formats, [3, 4]);
        assert!(c.skip_local);
        assert_eq!(c.max_size, 2048);
    }

    #[test]
    fn jscpd_options_and_their_keys() {
        let (c, warnings) = resolve(&["--ignoreCase", "-g"], None).unwrap();
        assert!(c.normalization.ignore_case && warnings.is_empty());
        let sources = |c: &Config| -> Vec<String> {
            c.normalization
                .ignore_patterns
                .sources()
                .map(String::from)
                .collect()
        };
        let file = r#"{"ignoreCase": true, "ignorePattern": ["from file", "a,b"]}"#;
        let (c, _) = resolve(&[], Some(file)).unwrap();
        assert!(c.normalization.ignore_case);
        assert_eq!(sources(&c), ["from file", "a,b"]);
        // The command line's patterns replace the file's.
        let (c, _) = resolve(
            &["--ignore-pattern", "x,y{1,2}", "--ignore-pattern=z"],
            Some(file),
        )
        .unwrap();
        assert_eq!(sources(&c), ["x", "y{1,2}", "z"]);
        let err = resolve(&[], Some(r#"{"ignoreCase": "yes"}"#)).unwrap_err();
        assert!(
            err.ends_with("key \"ignoreCase\" must be true or false"),
            "{err}"
        );
        let err = resolve(&["--ignore-pattern", "(x"], None).unwrap_err();
        assert_eq!(
            err,
            "invalid value for --ignore-pattern: \"(x\" is not a usable regular expression: unclosed group (at character 1)"
        );
    }

    #[test]
    fn store_is_accepted_with_one_warning() {
        let (c, warnings) = resolve(&["--store", "leveldb"], None).unwrap();
        assert_eq!(
            warnings,
            [format!(
                "warning: --store leveldb is ignored: dupcheck keeps its own index cache in {} (see --cache-dir, --no-cache)",
                c.cache_dir.unwrap().display()
            )]
        );
        let (_, warnings) = resolve(&["--store", "x", "--no-cache"], None).unwrap();
        assert_eq!(
            warnings,
            ["warning: --store x is ignored: dupcheck keeps its own index cache, off here (--no-cache)"]
        );
    }

    #[test]
    fn patterns_split_at_commas_but_those_a_pattern_holds() {
        for (value, patterns) in [
            ("a,b", &["a", "b"][..]),
            ("a{1,3},b", &["a{1,3}", "b"]),
            ("[,;]x,(a|b,c)", &["[,;]x", "(a|b,c)"]),
            (r"a\,b,c", &[r"a\,b", "c"]),
            (r"[\],]", &[r"[\],]"]),
            (",a,,b,", &["a", "b"]),
            (" a , b", &[" a ", " b"]),
        ] {
            assert_eq!(split_patterns(value), patterns, "{value}");
        }
    }

    #[test]
    fn unknown_keys_warn_once_each() {
        let (_, warnings) = resolve(&[], Some(r#"{"colour": 1, "minLines": 3}"#)).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].ends_with("unknown key \"colour\" ignored"),
            "{warnings:?}"
        );
    }

    #[test]
    fn bad_values_name_the_option_or_key() {
        let err = resolve(&[], Some(r#"{"minLines": "five"}"#)).unwrap_err();
        assert!(
            err.ends_with("key \"minLines\" must be an integer >= 1"),
            "{err}"
        );
        let err = resolve(&[], Some("{not json")).unwrap_err();
        assert!(err.contains(".dupcheck.json is not valid JSON"), "{err}");
        let err = resolve(&["--format", "cobol"], None).unwrap_err();
        assert_eq!(
            err,
            format!(
                "invalid value for --format: unknown format \"cobol\"; known formats: {}",
                Registry::builtin().names().join(", ")
            )
        );
        let err = resolve(&["--host", "nowhere"], None).unwrap_err();
        assert_eq!(
            err,
            "invalid value for --host: \"nowhere\" is not an IPv4 or IPv6 address or localhost"
        );
        for (args, option) in [
            (&["--min-lines", "0"][..], "--min-lines"),
            (&["--port", "70000"][..], "--port"),
            (&["--mode", "loose"][..], "--mode"),
            (&["--max-size", "big"][..], "--max-size"),
        ] {
            let err = resolve(args, None).unwrap_err();
            assert!(err.contains(option), "{err}");
        }
    }
}
