//! The config file, `.dupcheck.json` in DIR: its keys (jscpd's among
//! them), each type-checked into [`FileValues`]; unknown keys are warned
//! about once each, never fatal.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::ConfigError;
use super::values::{parse_size, similarity_ok, split_list};
use crate::engine::patterns::IgnorePatterns;
use crate::engine::tokens::Mode;

pub(crate) const CONFIG_FILE: &str = ".dupcheck.json";

/// Keys the config file accepts.
const KNOWN_KEYS: [&str; 24] = [
    "port",
    "host",
    "format",
    "ignore",
    "minLines",
    "minTokens",
    "mode",
    "absolute",
    "noSymlinks",
    "gitignore",
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
    "store",
    "repository",
];

/// The config file's values, each already type-checked.
#[derive(Debug, Default)]
pub(crate) struct FileValues {
    pub(crate) port: Option<u16>,
    pub(crate) host: Option<String>,
    pub(crate) format: Option<Vec<String>>,
    pub(crate) ignore: Option<Vec<String>>,
    pub(crate) min_lines: Option<u32>,
    pub(crate) min_tokens: Option<u32>,
    pub(crate) mode: Option<Mode>,
    pub(crate) absolute: Option<bool>,
    pub(crate) no_symlinks: Option<bool>,
    pub(crate) gitignore: Option<bool>,
    pub(crate) skip_local: Option<bool>,
    pub(crate) include_generated: Option<bool>,
    pub(crate) near_miss: Option<bool>,
    pub(crate) similarity: Option<f64>,
    pub(crate) max_size: Option<u64>,
    pub(crate) max_lines: Option<u64>,
    pub(crate) max_body: Option<u64>,
    pub(crate) allowed_origins: Option<Vec<String>>,
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) ignore_case: Option<bool>,
    pub(crate) ignore_pattern: Option<IgnorePatterns>,
    pub(crate) keep_imports: Option<bool>,
    pub(crate) store: Option<String>,
    pub(crate) repository: Option<String>,
}

/// Reads and type-checks a config file.
pub(crate) fn read_config(
    path: &Path,
    warn: &mut impl FnMut(String),
) -> Result<FileValues, ConfigError> {
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
        gitignore: keys.get("gitignore", "must be true or false", Value::as_bool)?,
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
        store: keys.get("store", "must be a string", |v| {
            v.as_str().map(String::from)
        })?,
        repository: keys.get("repository", "must be a string", |v| {
            v.as_str().map(String::from)
        })?,
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
pub(crate) fn array(v: &Value) -> Option<Vec<String>> {
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

pub(crate) fn list(v: &Value) -> Option<Vec<String>> {
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

pub(crate) fn size(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => parse_size(s),
        _ => None,
    }
}
