//! The command line as clap parses it: raw flags ([`Cli`], its
//! subcommands and their argument groups), before the config file and the
//! defaults are merged in ([`super::resolve`]).

use std::path::PathBuf;

use clap::Parser;

use super::values::{parse_percent, parse_similarity, parse_size_arg, split_patterns};

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
    /// Serve the MCP tools on stdin and stdout (for AI coding agents)
    Mcp(McpArgs),
    /// Scan DIR once and make the store's copy of this repository equal to it (for CI, on the main branch)
    #[command(after_help = PUBLISH_EXIT_CODES)]
    Publish(PublishArgs),
    /// Create, migrate or clean the store (--store URL)
    #[command(subcommand)]
    Store(StoreCommand),
}

/// The flags of `dupcheck publish`: those of a scan (with `--store` and
/// `--repository`).
#[derive(Debug, Clone, clap::Args)]
pub struct PublishArgs {
    /// What is scanned and how, and where it goes.
    #[command(flatten)]
    pub scan: ScanArgs,
    /// Stop at this point of the publish until stdin gives a line (for tests)
    #[arg(long, hide = true, value_name = "POINT", value_parser = ["contents", "commit"])]
    pub pause_at: Option<String>,
}

/// `dupcheck store init` and `dupcheck store gc`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum StoreCommand {
    /// Create the store's schema, or migrate it to this version
    Init(ScanArgs),
    /// Remove the copies no repository points at, and the contents no copy uses
    Gc(ScanArgs),
}

/// The exit codes of `dupcheck publish`, shown by its `--help`.
const PUBLISH_EXIT_CODES: &str = "Exit status:
  0  published (or unchanged)
  1  the store failed: unreachable, refused the login, another schema
     version, another publish of this repository running
  2  usage error, unreadable DIR or config, no --store";

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

/// The flags of `dupcheck mcp`: those of a scan of DIR, or the server to
/// ask instead.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// Ask the dupcheck server running at URL (http://HOST:PORT) instead of
    /// scanning in process; the flags of a scan are then the server's
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
    /// Least similarity of a near-miss duplication: matched tokens over tokens spanned, on the longer side (for a copy of one unit whole, over both sides' mean) [default: 0.8]
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
    /// Accepted for jscpd: dupcheck honours .gitignore unless --no-gitignore
    #[arg(short = 'g', long)]
    pub gitignore: bool,
    /// Scan files that .gitignore and .git/info/exclude rules leave out (.ignore rules still apply)
    #[arg(long, conflicts_with = "gitignore")]
    pub no_gitignore: bool,
    /// The PostgreSQL store of every repository: a postgres:// URL or a libpq connection string (several hosts allowed) [env: DUPCHECK_STORE]; jscpd's other stores (leveldb, redis) are ignored with a warning
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// This repository's name in the store [default: the origin remote as host/org/repo, else DIR's name]
    #[arg(long, value_name = "NAME")]
    pub repository: Option<String>,
}

impl ScanArgs {
    /// The `--ignore-pattern`s given, each occurrence split at its commas
    /// as jscpd splits them ([`split_patterns`]).
    pub(crate) fn ignore_patterns(&self) -> Vec<String> {
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
    /// Reporters, comma-separated: console, json, sarif, markdown, codequality, rdjsonl
    #[arg(
        short = 'r',
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "console"
    )]
    pub reporter: Vec<Reporter>,
    /// Folder for the file reports (dupcheck-report.json, .sarif, .md, .rdjsonl, gl-code-quality-report.json) [default: they go to stdout]
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
    /// `gl-code-quality-report.json`: GitLab's Code Quality report, an issue per duplicated place.
    Codequality,
    /// `dupcheck-report.rdjsonl`: reviewdog's diagnostics, one JSON object a line.
    Rdjsonl,
}
