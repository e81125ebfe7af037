//! Configuration: the command line and `.dupcheck.json`, merged and checked.
//!
//! In: raw flags ([`Cli`], parsed by clap: [`flags`]) and the config file's
//! JSON ([`file`]). Out: one validated [`Config`] ([`resolve`]) with typed
//! values (the `Normalization`: case, compiled ignore patterns, imports;
//! byte sizes, format ids, origin host names). Precedence lives in one
//! place, [`Config::resolve`]: command line over config file over
//! defaults. jscpd-server's own options are accepted too (`-g`, `--store`,
//! `--ignoreCase`, `--ignore-pattern`).
//!
//! Invariant: every error names the option or key at fault and what it
//! accepts; the command prints it on one line and exits with status 2.

pub mod error;
pub mod file;
pub mod flags;
pub mod resolve;
pub mod store_tls;
pub mod values;

pub use error::ConfigError;
pub use flags::{
    Cli, Command, LspArgs, McpArgs, PublishArgs, ReportArgs, Reporter, ScanArgs, ServeArgs,
    StoreCommand,
};
pub use resolve::Config;
pub use store_tls::{split_tls, SslMode, TlsOptions};
pub use values::{is_postgres, StoreUrl};

pub(crate) use values::origin_host;
