//! The one error of every command (`dupcheck [DIR]`, `report`, `lsp`):
//! what stopped it before it could do its work, as one line for stderr,
//! and the exit status, from one `match`.

use std::path::PathBuf;

use crate::project::config::ConfigError;
use crate::project::scan::ScanError;
use crate::service::diff_check::DiffRefusal;
use crate::store::StoreError;

/// Why a command stopped before doing its work.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A flag or the config file is wrong.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A flag's value is wrong (one checked outside the configuration).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing something failed: `what` says what, as in
    /// "cannot {what}".
    #[error("cannot {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A file named on the command line holds the wrong thing.
    #[error("{0}")]
    Input(String),
    /// The port cannot be served.
    #[error("cannot serve on port {port}: {source}")]
    Serve { port: u16, source: std::io::Error },
    /// The scan of `report` failed.
    #[error("cannot scan {}: {source}", dir.display())]
    Scan { dir: PathBuf, source: ScanError },
    /// The diff given to `report` cannot be checked.
    #[error("cannot check the diff: {0}")]
    Diff(DiffRefusal),
    /// The store failed (or refused a name, or its URL).
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// Exit status of a command that could not do its work: bad usage, a bad
/// file, or a failure to start.
pub(crate) const EXIT_USAGE: u8 = 2;

/// Exit status of a command the store failed (`publish`, `store`).
pub(crate) const EXIT_STORE: u8 = 1;

impl RunError {
    /// The process's exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Config(_)
            | RunError::Usage(_)
            | RunError::Io { .. }
            | RunError::Input(_)
            | RunError::Serve { .. }
            | RunError::Scan { .. }
            | RunError::Diff(_) => EXIT_USAGE,
            // A malformed URL and a refused name are usage; the store's
            // own failures are 1.
            RunError::Store(e) if matches!(e.kind(), "url" | "refused") => EXIT_USAGE,
            RunError::Store(_) => EXIT_STORE,
        }
    }

    /// An [`RunError::Io`] failure to do `what`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
        let what = what.into();
        move |source| RunError::Io { what, source }
    }
}
