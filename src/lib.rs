//! dupcheck: a duplicate-code server.
//!
//! The crate is laid out in data-flow order. A scan goes
//! [`config`] → [`walk`] → [`grammar`] + [`tokens`] (parse and normalize) →
//! [`fingerprint`] (winnowing) → [`index`] → [`matching`] → [`stats`], driven
//! by [`scan`], which builds an immutable snapshot and swaps it in whole. The
//! [`http`] module serves checks against the current snapshot.
//!
//! Every stage below `http` is synchronous and pure enough to be called from
//! tests and benchmarks directly:
//!
//! ```
//! use dupcheck::{grammar::Registry, tokens::{tokenize, Mode}};
//! let registry = Registry::builtin();
//! let js = registry.lookup("js").unwrap();
//! let tokens = tokenize(js, "let a = 1; // note", Mode::Mild);
//! assert_eq!(tokens.len(), 5); // `let $id = 1 ;`, the comment dropped
//! ```
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod config;
pub mod fingerprint;
pub mod grammar;
pub mod http;
pub mod index;
pub mod matching;
pub mod scan;
pub mod stats;
pub mod tokens;
pub mod walk;

pub mod hash;
pub mod time;

/// The version reported by `/`, `/api/health` and `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
