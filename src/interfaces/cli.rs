//! The command line: what `main` runs once clap has parsed the flags.
//!
//! In: the parsed [`Cli`] and the current directory. Out: the exit status
//! of a run that ended as it should (`report`'s 0 or 1, `lsp`'s, `mcp`'s), or the
//! [`RunError`] that stopped it, which `main` prints as one line.
//! `dupcheck [DIR]` serves ([`serve`]): the port is bound and the
//! [`Workspace`] started, its first scan running, before the async
//! runtime is built. The hidden `--dump-tokens` and `--dump-tree` serve
//! grammar work.
//!
//! Invariant: every failure of every command is one [`RunError`], and its
//! exit status comes from one `match` ([`RunError::exit_code`]).

use std::path::Path;
use std::sync::Arc;

use crate::engine::grammar::{Format, Registry};
use crate::engine::patterns::IgnorePatterns;
use crate::engine::tokens::{Mode, Normalization};
use crate::interfaces::run_error::RunError;
use crate::project::config::{Cli, Command, Config};
use crate::service::workspace::Workspace;
use crate::store::live::Live;

/// Runs the command `cli` names in `cwd`; its exit status.
pub fn run(cli: Cli) -> Result<u8, RunError> {
    let cwd = std::env::current_dir().map_err(RunError::io("read the current directory"))?;
    match &cli.command {
        Some(Command::Report(args)) => {
            crate::interfaces::report::run(args, &cwd, Registry::builtin())
                .map(|outcome| outcome.code())
        }
        Some(Command::Lsp(args)) => crate::interfaces::lsp::run(args, &cwd, Registry::builtin()),
        Some(Command::Mcp(args)) => {
            crate::interfaces::mcp::stdio::run(args, &cwd, Registry::builtin())
        }
        Some(Command::Publish(args)) => {
            crate::interfaces::publish::publish(args, &cwd, Registry::builtin())
        }
        Some(Command::Store(command)) => {
            crate::interfaces::publish::store(command, &cwd, &Registry::builtin())
        }
        None => serve(cli, &cwd).map(|()| 0),
    }
}

/// `dupcheck [DIR]`: serves until a stop signal (or dumps a file's tokens
/// or tree, with the hidden flags).
fn serve(cli: Cli, cwd: &Path) -> Result<(), RunError> {
    let registry = Registry::builtin();
    if let Some(path) = &cli.dump_tokens {
        return dump_tokens(&cli, &registry, path);
    }
    if let Some(path) = &cli.dump_tree {
        let (format, text) = read_for_dump(&registry, path)?;
        let dump = crate::engine::tokens::dump_tree(format, &text)
            .map_err(|e| RunError::Input(format!("{}: {e}", path.display())))?;
        print!("{dump}");
        return Ok(());
    }
    let config = Config::resolve(&cli, cwd, &registry, |warning| {
        crate::stderr_line(&format!("dupcheck: {warning}"))
    })?;
    let store = config
        .store
        .as_ref()
        .map(|store| crate::store::connect::Target::parse(&store.0))
        .transpose()?
        .map(|target| Arc::new(Live::new(target)));
    let port = config.port;
    let cannot_serve = |source| RunError::Serve { port, source };
    // The first scan starts as soon as the port is bound, while the
    // runtime starts.
    let listener =
        crate::interfaces::http::server::bind(config.host, port).map_err(cannot_serve)?;
    // Checks are CPU-bound: more blocking threads than a few per core only
    // add switches and allocator arenas, not throughput.
    let cores = crate::interfaces::http::server::cores();
    let workspace = Workspace::start(config, registry, cores, store.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(4 * cores)
        .build()
        .map_err(RunError::io("start the runtime"))?;
    let served = runtime.block_on(crate::interfaces::http::server::serve(
        listener, workspace, store,
    ));
    // Blocking work and a scan still running are abandoned; the exit does
    // not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served.map_err(cannot_serve)
}

/// `--dump-tokens FILE`: prints the normalized tokens of FILE, as the
/// command line's `--mode`, `--ignoreCase`, `--ignore-pattern` and
/// `--keep-imports` make them.
fn dump_tokens(cli: &Cli, registry: &Registry, path: &Path) -> Result<(), RunError> {
    let (format, text) = read_for_dump(registry, path)?;
    let mode = cli
        .scan
        .mode
        .as_deref()
        .and_then(Mode::parse)
        .unwrap_or_default();
    let normalization = Normalization {
        ignore_case: cli.scan.ignore_case,
        keep_imports: cli.scan.keep_imports,
        ignore_patterns: IgnorePatterns::new(&cli.scan.ignore_patterns())
            .map_err(|e| RunError::Usage(format!("invalid value for --ignore-pattern: {e}")))?,
    };
    let dump = crate::engine::tokens::dump(format, &text, &normalization, mode)
        .map_err(|e| RunError::Input(format!("{}: {e}", path.display())))?;
    print!("{dump}");
    Ok(())
}

/// The format and text of a file given to `--dump-tokens` or `--dump-tree`.
fn read_for_dump<'r>(
    registry: &'r Registry,
    path: &Path,
) -> Result<(&'r Format, String), RunError> {
    let text =
        std::fs::read_to_string(path).map_err(RunError::io(format!("read {}", path.display())))?;
    let format = registry
        .for_path(path)
        .or_else(|| registry.for_shebang(text.as_bytes()))
        .ok_or_else(|| RunError::Input(format!("{}: unknown file extension", path.display())))?;
    Ok((format, text))
}
