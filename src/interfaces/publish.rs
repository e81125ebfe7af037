//! `dupcheck publish [DIR]`, `dupcheck store init` and `dupcheck store
//! gc`: the commands that write the store.
//!
//! In: [`PublishArgs`] or a [`StoreCommand`] (the scan's flags, with
//! `--store` and `--repository`). Out: progress lines on stderr, one
//! summary line on stdout, and exit 0; a store that fails is one
//! [`RunError::Store`] line and exit 1, bad usage exit 2.
//!
//! A thin adapter: the scan is [`Workspace::scanned_once`] (the cache
//! read, as `report` reads it), the rest is [`crate::store`]'s, on a
//! Tokio runtime of one thread made for the command.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::engine::grammar::Registry;
use crate::interfaces::run_error::RunError;
use crate::project::config::{Config, PublishArgs, ScanArgs, ServeArgs, StoreCommand};
use crate::project::progress::Progress;
use crate::service::workspace::Workspace;
use crate::store::connect::Target;
use crate::store::gc::Collected;
use crate::store::publish::{Counts, Hooks, Pause, Publication};
use crate::store::{repository, schema};

/// Runs `dupcheck publish`.
pub(crate) fn publish(
    args: &PublishArgs,
    cwd: &Path,
    registry: Arc<Registry>,
) -> Result<u8, RunError> {
    let started = Instant::now();
    let (config, target) = resolve(&args.scan, cwd, &registry)?;
    let name = match &config.repository {
        Some(name) => name.clone(),
        None => repository::default_name(&config.dir),
    };
    repository::validate(&name)?;
    let dir = config.dir.clone();
    let progress = Progress::console(started);
    let (workspace, snapshot) = Workspace::scanned_once(config, Arc::clone(&registry), &progress)
        .map_err(|source| {
        progress.finish();
        RunError::Scan { dir, source }
    })?;
    progress.finish();
    let config = workspace.config();
    let key = crate::project::cache::key_of(config);
    let scanned = started.elapsed();
    let pause = args.pause_at.as_deref().map(|point| match point {
        "contents" => Pause::Contents,
        _ => Pause::Commit,
    });
    let wait = |point: Pause| {
        crate::stderr_line(&format!("dupcheck: publish paused at {point:?}"));
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
    };
    let report = |line: String| crate::stderr_line(&format!("dupcheck: {line}"));
    let (summary, collected) = runtime()?.block_on(async {
        let mut client = target.connect(true).await?;
        let publication = Publication {
            repository: &name,
            settings_key: key,
            files: &snapshot.index.files,
            registry: &registry,
            winnow: snapshot.index.winnow,
        };
        let hooks = Hooks {
            progress: &report,
            pause: pause.map(|p| (p, &wait as &dyn Fn(Pause))),
        };
        let summary = crate::store::publish::publish(&mut client, &publication, &hooks).await?;
        // The copy is published: a collection that fails is a warning.
        let collected = crate::store::gc::collect(&mut client).await;
        Ok::<_, crate::store::StoreError>((summary, collected))
    })?;
    let collected = match collected {
        Ok(collected) => collected_text(collected),
        Err(e) => {
            crate::stderr_line(&format!(
                "dupcheck: warning: the publish is done, but its gc failed: {e}"
            ));
            "gc failed".into()
        }
    };
    let files = |counts: Counts| {
        format!(
            "{} file{} ({} line{})",
            counts.files,
            if counts.files == 1 { "" } else { "s" },
            counts.lines,
            if counts.lines == 1 { "" } else { "s" }
        )
    };
    println!(
        "published {name}: {} written, {} reused, {} removed{}; {}; {:.2} s (scan {:.2} s)",
        files(summary.written),
        files(summary.reused),
        files(summary.removed),
        if summary.unchanged { ", unchanged" } else { "" },
        collected,
        started.elapsed().as_secs_f64(),
        scanned.as_secs_f64(),
    );
    Ok(0)
}

/// Runs `dupcheck store init` or `dupcheck store gc`.
pub(crate) fn store(
    command: &StoreCommand,
    cwd: &Path,
    registry: &Registry,
) -> Result<u8, RunError> {
    let scan = match command {
        StoreCommand::Init(scan) | StoreCommand::Gc(scan) => scan,
    };
    let (_, target) = resolve(scan, cwd, registry)?;
    let described = target.describe();
    let line = runtime()?.block_on(async {
        let mut client = target.connect(true).await?;
        Ok::<_, crate::store::StoreError>(match command {
            StoreCommand::Init(_) => match schema::init(&mut client).await? {
                schema::Initialized::Created => {
                    format!(
                        "store {described}: schema version {} created",
                        schema::VERSION
                    )
                }
                schema::Initialized::Migrated(from) => format!(
                    "store {described}: schema migrated from version {from} to {}",
                    schema::VERSION
                ),
                schema::Initialized::Current => format!(
                    "store {described}: schema already at version {}",
                    schema::VERSION
                ),
            },
            StoreCommand::Gc(_) => {
                let collected = crate::store::gc::collect(&mut client).await?;
                format!("store {described}: {}", collected_text(collected))
            }
        })
    })?;
    println!("{line}");
    Ok(0)
}

/// The configuration and the store of a command that needs one.
fn resolve(scan: &ScanArgs, cwd: &Path, registry: &Registry) -> Result<(Config, Target), RunError> {
    let config = Config::resolve_parts(scan, &ServeArgs::default(), cwd, registry, |w| {
        crate::stderr_line(&format!("dupcheck: {w}"))
    })?;
    let Some(store) = &config.store else {
        return Err(RunError::Usage(
            "no store: give --store URL (a postgres:// URL or a libpq connection string), DUPCHECK_STORE or \"store\" in .dupcheck.json".into(),
        ));
    };
    let target = Target::parse(&store.0)?;
    Ok((config, target))
}

/// What a collection did, as the end of a summary line.
fn collected_text(collected: Collected) -> String {
    if collected.skipped {
        "gc skipped: a publish is running".into()
    } else {
        format!(
            "gc removed {} cop{} and {} content{}",
            collected.copies,
            if collected.copies == 1 { "y" } else { "ies" },
            collected.contents,
            if collected.contents == 1 { "" } else { "s" }
        )
    }
}

/// The runtime of one command's calls to the store.
fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RunError::io("start the runtime"))
}
