//! [`ConfigError`]: a configuration that cannot be used, naming the option
//! or key at fault and what it accepts.

use std::path::PathBuf;

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
