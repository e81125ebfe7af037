//! Worker: the checks of open documents, one batch at a time, off the
//! thread that reads the editor's messages.
//!
//! In: a [`Batch`]: the engine (scanner, kept parses), the documents to
//! check (the edited one first) and the texts of every open document. Out:
//! per document, its duplications as LSP diagnostics ([`Group`]s), or why
//! it was not checked; then [`FromWorker::Done`].
//!
//! Invariants: every check is one engine call,
//! [`check_buffer`](crate::engine::open_check::check_buffer), against the
//! snapshot shadowed by the open buffers; a batch stops early when the
//! editor has edited since it began (its remaining documents come back
//! `Cancelled`, to be checked again in the next batch); a panic in a check
//! is that document's error, never the worker's end.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range,
    Url,
};

use super::text::{Encoding, Lines};
use crate::engine::check::CheckRequest;
use crate::engine::grammar::FormatId;
use crate::engine::hash::HashMap;
use crate::engine::open_check::{check_buffer, Duplication, OpenBuffers};
use crate::project::buffers::Buffers;
use crate::project::scan::{panic_message, Scanner};

/// The most lines of a fragment a hover shows.
const HOVER_LINES: usize = 60;

/// The engine for one configuration: a scanner on the workspace (with its
/// watcher) and the kept parses of the buffers checked.
pub struct Engine {
    /// Which configuration: results of an older one are dropped.
    pub id: u64,
    /// The scanner.
    pub scanner: Arc<Scanner>,
    /// Kept parses of checked buffers.
    pub buffers: Buffers,
    /// The watcher, kept for as long as the engine: it stops when dropped.
    pub _watcher: Option<notify::RecommendedWatcher>,
}

/// One document to check.
pub struct Job {
    /// Its URI.
    pub uri: Url,
    /// Its version.
    pub version: i32,
    /// Its path relative to the workspace, when inside it.
    pub rel: Option<String>,
    /// Its format, if known.
    pub format: Option<FormatId>,
    /// Its text.
    pub text: Arc<str>,
}

/// Documents to check together.
pub struct Batch {
    /// The engine to check with.
    pub engine: Arc<Engine>,
    /// The documents, in the order to check them.
    pub jobs: Vec<Job>,
    /// Every open document inside the workspace: path and text.
    pub open: Vec<(String, Arc<str>)>,
    /// The editor's edit count when the batch was made.
    pub edits: u64,
    /// How positions count.
    pub encoding: Encoding,
    /// The diagnostics' severity.
    pub severity: DiagnosticSeverity,
}

/// One duplicated range of a document.
#[derive(Debug, Clone)]
pub struct Group {
    /// Its diagnostic.
    pub diagnostic: Diagnostic,
    /// The other places, in SPEC 6.1's order.
    pub places: Vec<Location>,
    /// The first other place as `path:first-last`.
    pub first_name: String,
    /// Tokens duplicated with the first other place.
    pub first_tokens: u32,
    /// The first other place's text (at most [`HOVER_LINES`] lines).
    pub first_fragment: String,
    /// Its format's name (for a code fence).
    pub language: String,
}

impl Group {
    /// Its range in the document.
    pub fn range(&self) -> &Range {
        &self.diagnostic.range
    }
}

/// The outcome of one document's check.
pub enum Outcome {
    /// Its duplicated ranges.
    Found(Vec<Group>),
    /// Not checked: why.
    Refused(String),
    /// Not checked: the editor edited since the batch began.
    Cancelled,
}

/// What the worker sends back.
pub enum FromWorker {
    /// One document checked (or not).
    Checked {
        /// The document.
        uri: Url,
        /// The version checked.
        version: i32,
        /// The engine that checked it.
        engine: u64,
        /// What came of it.
        outcome: Outcome,
    },
    /// The batch is over.
    Done,
}

/// Starts the worker thread.
pub fn spawn(
    runtime: tokio::runtime::Handle,
    edits: Arc<AtomicU64>,
) -> std::io::Result<(Sender<Batch>, Receiver<FromWorker>)> {
    let (batch_tx, batch_rx) = crossbeam_channel::unbounded::<Batch>();
    let (out_tx, out_rx) = crossbeam_channel::unbounded();
    std::thread::Builder::new()
        .name("dupcheck-lsp-check".into())
        .spawn(move || {
            let mut open: Option<(u64, OpenBuffers)> = None;
            for batch in batch_rx {
                run(&runtime, &edits, batch, &mut open, &out_tx);
                if out_tx.send(FromWorker::Done).is_err() {
                    return;
                }
            }
        })?;
    Ok((batch_tx, out_rx))
}

/// Checks the documents of `batch`, sending each outcome as it comes.
fn run(
    runtime: &tokio::runtime::Handle,
    edits: &AtomicU64,
    batch: Batch,
    open: &mut Option<(u64, OpenBuffers)>,
    out: &Sender<FromWorker>,
) {
    let engine = &batch.engine;
    let scanner = &engine.scanner;
    let send = |job: &Job, outcome| {
        let _ = out.send(FromWorker::Checked {
            uri: job.uri.clone(),
            version: job.version,
            engine: engine.id,
            outcome,
        });
    };
    // Checks wait for the first scan (or join the one running).
    let snapshot = match scanner.snapshot() {
        Some(snapshot) => Ok(snapshot),
        None => runtime.block_on(scanner.rescan()),
    };
    let snapshot = match snapshot {
        Ok(snapshot) => snapshot,
        Err(err) => {
            for job in &batch.jobs {
                send(
                    job,
                    Outcome::Refused(format!("the workspace was not scanned: {err}")),
                );
            }
            return;
        }
    };
    let previous = open.take().filter(|(id, _)| *id == engine.id);
    let shadows = OpenBuffers::build(
        scanner.config(),
        scanner.registry(),
        &snapshot,
        previous.as_ref().map(|(_, o)| o),
        &batch.open,
    );
    let mut texts = Texts::default();
    for (i, job) in batch.jobs.iter().enumerate() {
        if i > 0 && edits.load(Ordering::SeqCst) != batch.edits {
            send(job, Outcome::Cancelled);
            continue;
        }
        let Some(format) = job.format else {
            send(job, Outcome::Found(Vec::new()));
            continue;
        };
        let request = CheckRequest {
            code: job.text.to_string(),
            format,
            path: job.rel.clone(),
        };
        let checked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            check_buffer(scanner, &engine.buffers, &snapshot, &shadows, &request)
        }));
        let outcome = match checked {
            Ok(Ok(answer)) => {
                Outcome::Found(groups(&batch, &job.text, &answer.duplications, &mut texts))
            }
            Ok(Err(refusal)) => Outcome::Refused(refusal.to_string()),
            Err(panic) => {
                tracing::error!(
                    "the check of {} failed: {}",
                    job.uri,
                    panic_message(&*panic)
                );
                Outcome::Refused("the check failed (a bug: see the server's log)".into())
            }
        };
        send(job, outcome);
    }
    *open = Some((engine.id, shadows));
}

/// Line tables of the other places' files, made once per batch.
#[derive(Default)]
struct Texts {
    lines: HashMap<String, Lines>,
}

/// The duplicated ranges of a document of text `text`, each with its other
/// places: duplications of one range are one group.
fn groups(batch: &Batch, text: &str, found: &[Duplication], texts: &mut Texts) -> Vec<Group> {
    let config = batch.engine.scanner.config();
    let registry = batch.engine.scanner.registry();
    let encoding = batch.encoding;
    let own = Lines::new(text);
    let mut groups: Vec<(crate::engine::matching::Span, Vec<&Duplication>)> = Vec::new();
    for d in found {
        match groups.iter_mut().find(|(span, _)| *span == d.snippet) {
            Some((_, list)) => list.push(d),
            None => groups.push((d.snippet, vec![d])),
        }
    }
    groups
        .into_iter()
        .map(|(span, list)| {
            let places: Vec<(Location, String)> = list
                .iter()
                .map(|d| {
                    let file = &d.file;
                    let lines = texts
                        .lines
                        .entry(file.rel.clone())
                        .or_insert_with(|| Lines::new(&file.text));
                    let range = lines.range(&file.text, d.codebase, encoding);
                    let uri = Url::from_file_path(config.dir.join(&file.rel))
                        .unwrap_or_else(|()| batch_uri_fallback(&file.rel));
                    let name = format!(
                        "{}:{}-{}",
                        file.path, d.codebase.start.line, d.codebase.end.line
                    );
                    (Location::new(uri, range), name)
                })
                .collect();
            let first = list[0];
            let message = match places.len() {
                1 => format!("Duplicates {} ({} tokens)", places[0].1, first.tokens),
                n => format!("Duplicated in {n} places"),
            };
            let related = places
                .iter()
                .zip(&list)
                .map(|((location, name), d)| DiagnosticRelatedInformation {
                    location: location.clone(),
                    message: format!("{name} ({} tokens)", d.tokens),
                })
                .collect();
            let fragment: Vec<&str> = first.fragment().lines().take(HOVER_LINES + 1).collect();
            let mut first_fragment = fragment[..fragment.len().min(HOVER_LINES)].join("\n");
            if fragment.len() > HOVER_LINES {
                first_fragment.push_str("\n…");
            }
            Group {
                diagnostic: Diagnostic {
                    range: own.range(text, span, encoding),
                    severity: Some(batch.severity),
                    code: Some(NumberOrString::String("duplicate".into())),
                    source: Some("dupcheck".into()),
                    message,
                    related_information: Some(related),
                    ..Diagnostic::default()
                },
                first_name: places[0].1.clone(),
                first_tokens: first.tokens,
                places: places.into_iter().map(|(l, _)| l).collect(),
                first_fragment,
                language: registry.get(first.file.format).name.clone(),
            }
        })
        .collect()
}

/// A URI for a path that is not a file path (never for an absolute DIR).
fn batch_uri_fallback(rel: &str) -> Url {
    Url::parse(&format!("file:///{rel}")).unwrap_or_else(|_| {
        Url::parse("file:///").expect("file:/// is a URL: the invariant of the url crate")
    })
}
