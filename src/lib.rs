//! dupcheck: a duplicate-code server.
//!
//! The crate is grouped in four layers, each laid out in data-flow order,
//! every arrow pointing down (tests/it/tidy.rs holds them):
//!
//! - [`engine`]: pure stages, code in, tokens, fingerprints, index, runs
//!   and clones out. [`engine::grammar`] + [`engine::parse`] (within a
//!   budget) + [`engine::tokens`] (normalize; [`engine::embed`] finds the
//!   code of markup files, [`engine::snippet`] parses code cut out of its
//!   file) → [`engine::fingerprint`] (winnowing) → [`engine::index`] →
//!   [`engine::runs`] → [`engine::matching`] and [`engine::near_miss`] →
//!   [`engine::stats`]. It knows no directory, request or output format.
//! - [`project`]: the working directory. [`project::config`] →
//!   [`project::walk`] → [`project::scan`], whose [`project::snapshot`] the
//!   [`project::scanner`] swaps in whole, reusing what [`project::cache`]
//!   kept from the last run and applying what [`project::watch`] sees
//!   change; [`project::buffers`] keeps editors' last parses.
//! - [`service`]: the calls every interface makes, over the current
//!   snapshot: [`service::workspace::Workspace`] (started the same way by
//!   every command) checks a snippet, a diff or an open buffer, lists the
//!   clones and the folder tree; answers are plain data.
//! - [`interfaces`]: thin adapters over the service. The command line
//!   ([`interfaces::cli`]), the HTTP API ([`interfaces::http`]) with MCP and
//!   the dashboard, the language server ([`interfaces::lsp`]), `report`
//!   for CI ([`interfaces::report`]), and every output format
//!   ([`interfaces::render`]).
//!
//! The engine is synchronous and pure enough to be called from tests and
//! benchmarks directly:
//!
//! ```
//! use dupcheck::engine::{grammar::Registry, tokens::{tokenize, Mode, Normalization}};
//! let registry = Registry::builtin();
//! let js = registry.lookup("js").unwrap();
//! let tokens = tokenize(js, "let a = 1; // note", &Normalization::default()).unwrap();
//! assert_eq!(tokens.len(), 5); // `let a = 1 ;`, the comment dropped
//! // In mild mode `a` is `$id`, as `b` is: every mode is derived from the tokens.
//! let other = tokenize(js, "let b = 1;", &Normalization::default()).unwrap();
//! assert_eq!(tokens[1].id_in(Mode::Mild), other[1].id_in(Mode::Mild));
//! assert_ne!(tokens[1].id_in(Mode::Strict), other[1].id_in(Mode::Strict));
//! ```
//!
//! [`engine::tokens::Normalization::default`] is the common case; the
//! configuration's (`--ignoreCase`, `--ignore-pattern`, `--keep-imports`)
//! is built once in [`project::config::Config`].
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

/// Pure stages, code in, duplications out: grammars, parsing, tokens,
/// fingerprints, the index, runs, matching, statistics.
pub mod engine;
/// Adapters over the service: the HTTP API, MCP, LSP, `report`, SARIF.
pub mod interfaces;
/// The working directory: config, walking, scans and snapshots, the cache,
/// the watcher, editors' buffers.
pub mod project;
/// The calls every interface makes: checks, clones, the folder tree.
pub mod service;
/// Every repository of an organisation in one PostgreSQL database:
/// `publish`, `store init` and `gc`, the list of repositories.
pub mod store;

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

/// The text of a panic payload, for the log.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// The version reported by `/`, `/api/health` and `--version`.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");
