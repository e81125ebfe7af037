//! dupcheck: a duplicate-code server.
//!
//! The crate is laid out in data-flow order. A scan goes
//! [`config`] → [`walk`] → [`grammar`] + [`parse`] (within a budget) +
//! [`tokens`] (normalize; [`embed`] finds the code of markup files) → [`fingerprint`] (winnowing) → [`index`] →
//! [`matching`] → [`stats`], driven
//! by [`scan`], which builds an immutable snapshot and swaps it in whole,
//! reusing what [`cache`] kept from the last run and applying what [`watch`]
//! sees change. The [`http`] module serves checks ([`check`] for a snippet,
//! [`diff_check`] for a diff) against the current snapshot;
//! [`snippet`] parses what clients send (cut out of context), reparsing an
//! editor's buffer incrementally from the parse [`buffers`] kept.
//! [`report`] is the command line's one run for CI: one scan, the clones
//! `/api/stats` counts, reported.
//!
//! Every stage below `http` is synchronous and pure enough to be called from
//! tests and benchmarks directly:
//!
//! ```
//! use dupcheck::{grammar::Registry, tokens::{tokenize, Mode}};
//! let registry = Registry::builtin();
//! let js = registry.lookup("js").unwrap();
//! let tokens = tokenize(js, "let a = 1; // note", Mode::Mild).unwrap();
//! assert_eq!(tokens.len(), 5); // `let $id = 1 ;`, the comment dropped
//! ```
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

/// Editors' buffers: the last parse of each checked path, for reparsing.
pub mod buffers;
/// The persisted index for warm restarts.
pub mod cache;
/// One snippet checked within its budgets.
pub mod check;
/// Flags and the config file, merged into one validated `Config`.
pub mod config;
/// Unified diffs: changed files, hunks, new texts rebuilt from their base.
pub mod diff;
/// One diff checked: the duplications its added lines make.
pub mod diff_check;
/// The `<script>` code of markup formats (HTML, Vue, Svelte).
pub mod embed;
/// Winnowing of k-gram hashes into fingerprints.
pub mod fingerprint;
/// `grammars.toml`: formats, grammars, node-kind classes.
pub mod grammar;
/// The HTTP API.
pub mod http;
/// Files and sorted fingerprint postings.
pub mod index;
/// Verified maximal runs: snippet matches and project clones.
pub mod matching;
/// Parsing under a time and memory budget.
pub mod parse;
/// `dupcheck report`: one scan, the clones reported, an exit status for CI.
pub mod report;
/// Findings as SARIF 2.1.0 and reviewdog's rdjsonl, for CI and review bots.
pub mod sarif;
/// Scans, snapshots, and the scanner that swaps them.
pub mod scan;
/// Snippets cut out of their context, and editors' buffers reparsed.
pub mod snippet;
/// Statistics rows and snippet statistics.
pub mod stats;
/// Parsing and normalization into token streams.
pub mod tokens;
/// Which files of DIR are scanned, and reading them.
pub mod walk;
/// Live updates from file-system events.
pub mod watch;

/// The crate's hash maps and the fixed token hash.
pub mod hash;
/// ISO 8601 timestamps.
pub mod time;

/// Writes one line to stderr, ignoring failure: a closed stderr (a
/// `| head` that exited) must never stop the server, as `eprintln!` would.
pub fn stderr_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// A stderr writer for logs that ignores write failures (see
/// [`stderr_line`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct LossyStderr;

impl std::io::Write for LossyStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// The version reported by `/`, `/api/health` and `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
