//! The `dupcheck` command: parse flags, serve (or run `report`), and on any
//! error print one line and exit with status 2. `report` exits 0 or 1 by
//! its outcome.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::process::ExitCode;

use clap::Parser;
use dupcheck::engine::grammar::Registry;
use dupcheck::project::config::{Cli, Command, Config};

/// Exit status for bad usage or a failure to start.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DUPCHECK_LOG")
                .unwrap_or_else(|_| "dupcheck=info".into()),
        )
        .with_writer(|| dupcheck::LossyStderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match main_status(cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            dupcheck::stderr_line(&format!("dupcheck: error: {message}"));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn main_status(cli: Cli) -> Result<u8, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    match &cli.command {
        Some(Command::Report(args)) => {
            dupcheck::interfaces::report::run(args, &cwd, Registry::builtin())
                .map(|outcome| outcome.code())
        }
        Some(Command::Lsp(args)) => dupcheck::interfaces::lsp::run(args, &cwd, Registry::builtin()),
        None => run(cli, &cwd).map(|()| 0),
    }
}

fn run(cli: Cli, cwd: &std::path::Path) -> Result<(), String> {
    let registry = Registry::builtin();
    if let Some(path) = &cli.dump_tokens {
        return dump_tokens(&cli, &registry, path);
    }
    if let Some(path) = &cli.dump_tree {
        let (format, text) = read_for_dump(&registry, path)?;
        let dump = dupcheck::engine::tokens::dump_tree(format, &text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        print!("{dump}");
        return Ok(());
    }
    let config = Config::resolve(&cli, cwd, &registry, |warning| {
        dupcheck::stderr_line(&format!("dupcheck: {warning}"))
    })
    .map_err(|e| e.to_string())?;
    let port = config.port;
    let cannot_serve = |e: std::io::Error| format!("cannot serve on port {port}: {e}");
    // The first scan starts as soon as the port is bound, while the
    // runtime starts.
    let listener =
        dupcheck::interfaces::http::server::bind(config.host, port).map_err(cannot_serve)?;
    let scanner = dupcheck::project::scan::Scanner::new(std::sync::Arc::new(config), registry);
    scanner.start_scan();
    // Checks are CPU-bound: more blocking threads than a few per core only
    // add switches and allocator arenas, not throughput.
    let cores = dupcheck::interfaces::http::server::cores();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(4 * cores)
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let served = runtime.block_on(dupcheck::interfaces::http::server::serve(listener, scanner));
    // Blocking work and a scan still running are abandoned; the exit does
    // not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served.map_err(cannot_serve)
}

/// `--dump-tokens FILE`: prints the normalized tokens of FILE, as the
/// command line's `--mode`, `--ignoreCase`, `--ignore-pattern` and
/// `--keep-imports` make them.
fn dump_tokens(cli: &Cli, registry: &Registry, path: &std::path::Path) -> Result<(), String> {
    let (format, text) = read_for_dump(registry, path)?;
    let mode = cli
        .scan
        .mode
        .as_deref()
        .and_then(dupcheck::engine::tokens::Mode::parse)
        .unwrap_or_default();
    let normalization = dupcheck::engine::tokens::Normalization {
        ignore_case: cli.scan.ignore_case,
        keep_imports: cli.scan.keep_imports,
        ignore_patterns: dupcheck::engine::patterns::IgnorePatterns::new(
            &cli.scan.ignore_patterns(),
        )
        .map_err(|e| format!("invalid value for --ignore-pattern: {e}"))?,
    };
    let dump = dupcheck::engine::tokens::dump(format, &text, &normalization, mode)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    print!("{dump}");
    Ok(())
}

/// The format and text of a file given to `--dump-tokens` or `--dump-tree`.
fn read_for_dump<'r>(
    registry: &'r Registry,
    path: &std::path::Path,
) -> Result<(&'r dupcheck::engine::grammar::Format, String), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let format = registry
        .for_path(path)
        .or_else(|| registry.for_shebang(text.as_bytes()))
        .ok_or_else(|| format!("{}: unknown file extension", path.display()))?;
    Ok((format, text))
}
