//! The one validated [`Config`]: flags over the config file over the
//! defaults, in one place ([`Config::resolve`]); typed values (the
//! normalization with its compiled ignore patterns, byte sizes, format
//! ids, host names).

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use ignore::overrides::{Override, OverrideBuilder};

use super::error::ConfigError;
use super::file::{read_config, FileValues, CONFIG_FILE};
use super::flags::{Cli, ScanArgs, ServeArgs};
use super::store_tls::split_tls;
use super::values::{is_postgres, origin_host, parse_host, split_list, StoreUrl};
use crate::engine::grammar::{FormatId, Registry};
use crate::engine::matching::Thresholds;
use crate::engine::patterns::IgnorePatterns;
use crate::engine::tokens::{Mode, Normalization};

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
    /// Honour `.gitignore` and `.git/info/exclude` (not with
    /// `--no-gitignore` or `"gitignore": false`).
    pub gitignore: bool,
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
    /// The PostgreSQL store (`--store`, `DUPCHECK_STORE`, `"store"`), a
    /// URL or connection string that parses; `None` without one, or with
    /// one of jscpd's other stores (ignored with a warning).
    pub store: Option<StoreUrl>,
    /// This repository's name in the store (`--repository`), if given.
    pub repository: Option<String>,
}

/// The defaults (docs/options.md).
const DEFAULT_PORT: u16 = 3000;
const DEFAULT_MIN_LINES: u32 = 5;
const DEFAULT_MIN_TOKENS: u32 = 50;
const DEFAULT_MAX_SIZE: u64 = 1024 * 1024;
const DEFAULT_MAX_BODY: u64 = 10 * 1024 * 1024;
const CACHE_DIR: &str = ".dupcheck-cache";

#[cfg(test)]
impl Config {
    /// The configuration of `dupcheck DIR ARGS…` in `dir`, for tests.
    pub(crate) fn of_args(dir: &std::path::Path, args: &[&str]) -> Config {
        use clap::Parser as _;
        let argv = ["dupcheck", dir.to_str().expect("a UTF-8 test dir")];
        let cli = Cli::try_parse_from(argv.iter().chain(args)).expect("valid test flags");
        let registry = crate::engine::grammar::Registry::builtin();
        Config::resolve(&cli, dir, &registry, |_| {}).expect("a valid test configuration")
    }
}

impl Config {
    /// Merges `cli` over the config file over the defaults. `cwd` resolves
    /// relative paths; `warn` receives one line per unknown config key, and
    /// one for a `--store` that is not PostgreSQL's. `DUPCHECK_STORE` is
    /// read between the flag and the file.
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
    pub(crate) fn resolve_parts(
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
                            problem: match registry.absent(n) {
                                Some(absent) => format!(
                                    "{absent}; formats of this build: {}",
                                    registry.names().join(", ")
                                ),
                                None => format!(
                                    "unknown format {n:?}; known formats: {}",
                                    registry.names().join(", ")
                                ),
                            },
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
        let store = scan
            .store
            .clone()
            .or_else(|| {
                std::env::var("DUPCHECK_STORE")
                    .ok()
                    .filter(|v| !v.is_empty())
            })
            .or(file.store);
        let store = match store {
            Some(value) if is_postgres(&value) => {
                let malformed = |problem: String| ConfigError::Option {
                    option: "--store",
                    problem: format!("not a PostgreSQL URL or connection string: {problem}"),
                };
                // tokio-postgres knows neither `verify-ca`, `verify-full`
                // nor `sslrootcert`: it reads the rest.
                let (rest, _) = split_tls(&value).map_err(malformed)?;
                <tokio_postgres::Config as std::str::FromStr>::from_str(&rest).map_err(|e| {
                    malformed(
                        std::error::Error::source(&e)
                            .map_or_else(|| e.to_string(), |cause| cause.to_string()),
                    )
                })?;
                Some(StoreUrl(value))
            }
            Some(store) => {
                warn(match &cache_dir {
                    Some(cache) => format!(
                        "warning: --store {store} is ignored: dupcheck keeps its own index cache in {} (see --cache-dir, --no-cache)",
                        cache.display()
                    ),
                    None => format!(
                        "warning: --store {store} is ignored: dupcheck keeps its own index cache, off here (--no-cache)"
                    ),
                });
                None
            }
            None => None,
        };
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
            gitignore: !scan.no_gitignore && (scan.gitignore || file.gitignore.unwrap_or(true)),
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
            store,
            repository: scan.repository.clone().or(file.repository),
            dir,
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

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
        let file = r#"{"port": 4000, "minLines": 7, "mode": "weak", "format": ["py", "go"], "skipLocal": true, "maxSize": "2kb"}"#;
        let (c, _) = resolve(&["--port", "5000", "-m", "mild"], Some(file)).unwrap();
        assert_eq!(
            (c.port, c.thresholds.min_lines, c.mode),
            (5000, 7, Mode::Mild)
        );
        let id = |name: &str| Registry::builtin().lookup(name).unwrap().id;
        assert_eq!(c.formats, [id("python"), id("go")]);
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
    fn a_postgres_store_is_kept_and_never_shown_by_debug() {
        let url = "postgres://me:hunter2@db/code";
        let (c, warnings) = resolve(&["--store", url, "--repository", "acme/x"], None).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.store, Some(StoreUrl(url.into())));
        assert_eq!(c.repository.as_deref(), Some("acme/x"));
        assert!(!format!("{c:?}").contains("hunter2"));
        let file = r#"{"store": "host=db user=me dbname=code", "repository": "from/file"}"#;
        let (c, _) = resolve(&[], Some(file)).unwrap();
        assert_eq!(
            c.store,
            Some(StoreUrl("host=db user=me dbname=code".into()))
        );
        assert_eq!(c.repository.as_deref(), Some("from/file"));
        let err = resolve(&["--store", "postgres://me:hunter2@db:x/code"], None).unwrap_err();
        assert_eq!(
            err,
            "invalid value for --store: not a PostgreSQL URL or connection string: invalid value for option `port`"
        );
    }

    #[cfg(not(feature = "lang-rust"))]
    #[test]
    fn a_format_this_build_lacks_is_named_so() {
        let err = resolve(&["--format", "rs"], None).unwrap_err();
        assert_eq!(
            err,
            format!(
                "invalid value for --format: format \"rust\" is not compiled into this build \
                 (Cargo feature lang-rust); formats of this build: {}",
                Registry::builtin().names().join(", ")
            )
        );
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
