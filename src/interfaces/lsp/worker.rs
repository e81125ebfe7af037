//! Worker: the checks of open documents, one batch at a time, off the
//! thread that reads the editor's messages.
//!
//! In: a [`Batch`]: the engine (in process: scanner and kept parses; or a
//! running server, [`Remote`]), the documents to check (the edited one
//! first) and the texts of every open document. Out: per document, its
//! duplications as LSP diagnostics ([`Group`]s), or why it was not
//! checked; then [`FromWorker::Done`].
//!
//! Invariants: every check is one service call,
//! [`Workspace::check_buffer`] against the
//! snapshot shadowed by the open buffers, or one `POST /api/check` of the
//! server; both become diagnostics through one [`groups`]; a batch stops
//! early when the editor has edited since it began (its remaining
//! documents come back `Cancelled`, to be checked again in the next
//! batch); a server's check whose document changes while it runs is
//! abandoned (its connection dropped); a panic in a check is that
//! document's error, never the worker's end.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    Position, Range, Url,
};

use super::remote::{Failure, Remote};
use super::text::{Encoding, Lines};
use crate::engine::grammar::FormatId;
use crate::engine::hash::HashMap;
use crate::engine::matching::Span;
use crate::engine::text::FileText;
use crate::panic_message;
use crate::project::scanner::Scanner;
use crate::service::answer::renaming;
use crate::service::check::CheckRequest;
use crate::service::open_check::OpenBuffers;
use crate::service::workspace::Workspace;

/// The most lines of a fragment a hover shows.
const HOVER_LINES: usize = 60;
/// How often a server's check looks whether its document changed.
const SUPERSEDED_POLL: Duration = Duration::from_millis(10);

/// The engine for one configuration.
pub(crate) struct Engine {
    /// Which configuration: results of an older one are dropped.
    pub id: u64,
    /// What checks.
    pub checker: Checker,
    /// With a server, the task asking it whether its index changed.
    pub _watch: Option<TaskGuard>,
}

/// What checks the documents.
pub(crate) enum Checker {
    /// The engine in process: the workspace (with its watcher) and the
    /// kept parses of the buffers checked.
    Local(Arc<Workspace>),
    /// A running dupcheck server (`--server URL`).
    Remote(Arc<Remote>),
}

/// A task that is stopped when its guard is dropped.
pub(crate) struct TaskGuard(pub tokio::task::AbortHandle);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Engine {
    /// The workspace's directory: documents' paths are relative to it.
    pub(crate) fn dir(&self) -> &Path {
        match &self.checker {
            Checker::Local(local) => &local.scanner.config().dir,
            Checker::Remote(remote) => remote.root(),
        }
    }

    /// The scanner, in process.
    pub(crate) fn scanner(&self) -> Option<&Arc<Scanner>> {
        match &self.checker {
            Checker::Local(local) => Some(&local.scanner),
            Checker::Remote(_) => None,
        }
    }

    /// Whether a document's duplications depend on the other open
    /// documents (in process they shadow their files; a server sees only
    /// its files on disk).
    pub(crate) fn sees_open_buffers(&self) -> bool {
        matches!(self.checker, Checker::Local(_))
    }
}

/// One document to check.
pub(crate) struct Job {
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
    /// The document's edit count when the job was made, and the count as
    /// it goes on (raised by every change and by closing).
    pub edits: (u64, Arc<AtomicU64>),
}

impl Job {
    /// Whether the document changed (or closed) since the job was made.
    fn superseded(&self) -> bool {
        self.edits.1.load(Ordering::SeqCst) != self.edits.0
    }
}

/// Documents to check together.
pub(crate) struct Batch {
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
pub(crate) struct Group {
    /// Its diagnostic.
    pub diagnostic: Diagnostic,
    /// The other places, in the answer's order (docs/api.md).
    pub places: Vec<Location>,
    /// The first other place as `path:first-last`.
    pub first_name: String,
    /// Tokens duplicated with the first other place.
    pub first_tokens: u32,
    /// What the document renamed against the first other place, as
    /// "total → sum, xs → items".
    pub first_renaming: Option<String>,
    /// The definition the first other place lies in, as people read it
    /// ("`merge()`").
    pub first_symbol: Option<String>,
    /// The first other place's text (at most [`HOVER_LINES`] lines).
    pub first_fragment: String,
    /// Its format's name (for a code fence).
    pub language: String,
}

impl Group {
    /// Its range in the document.
    pub(crate) fn range(&self) -> &Range {
        &self.diagnostic.range
    }
}

/// The outcome of one document's check.
pub(crate) enum Outcome {
    /// Its duplicated ranges.
    Found(Vec<Group>),
    /// Not checked, for a reason of its own (too large, too complex):
    /// nothing to show.
    Refused(String),
    /// Not checked: the server could not be asked or did not answer; when
    /// to try again, if it said.
    Unanswered {
        /// What happened, for the user.
        message: String,
        /// When to try again.
        retry: Option<Duration>,
    },
    /// Not checked: the editor edited since the batch began.
    Cancelled,
}

/// What the worker sends back.
pub(crate) enum FromWorker {
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
pub(crate) fn spawn(
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
                match &batch.engine.checker {
                    Checker::Local(local) => {
                        run_local(&runtime, &edits, local, &batch, &mut open, &out_tx);
                    }
                    Checker::Remote(remote) => run_remote(&runtime, remote, &batch, &out_tx),
                }
                if out_tx.send(FromWorker::Done).is_err() {
                    return;
                }
            }
        })?;
    Ok((batch_tx, out_rx))
}

/// Sends the outcome of `job` in `batch`.
fn send(out: &Sender<FromWorker>, batch: &Batch, job: &Job, outcome: Outcome) {
    let _ = out.send(FromWorker::Checked {
        uri: job.uri.clone(),
        version: job.version,
        engine: batch.engine.id,
        outcome,
    });
}

/// Checks the documents of `batch` in process, sending each outcome as it
/// comes.
fn run_local(
    runtime: &tokio::runtime::Handle,
    edits: &AtomicU64,
    local: &Workspace,
    batch: &Batch,
    open: &mut Option<(u64, OpenBuffers)>,
    out: &Sender<FromWorker>,
) {
    let engine = &batch.engine;
    let scanner = &local.scanner;
    // Checks wait for the first scan (or join the one running).
    let snapshot = match scanner.snapshot() {
        Some(snapshot) => Ok(snapshot),
        None => runtime.block_on(scanner.rescan()),
    };
    let snapshot = match snapshot {
        Ok(snapshot) => snapshot,
        Err(err) => {
            for job in &batch.jobs {
                let why = format!("the workspace was not scanned: {err}");
                send(out, batch, job, Outcome::Refused(why));
            }
            return;
        }
    };
    let previous = open.take().filter(|(id, _)| *id == engine.id);
    let shadows = local.open_buffers(&snapshot, previous.as_ref().map(|(_, o)| o), &batch.open);
    let mut places = Places::new(batch.encoding);
    for (i, job) in batch.jobs.iter().enumerate() {
        if i > 0 && edits.load(Ordering::SeqCst) != batch.edits {
            send(out, batch, job, Outcome::Cancelled);
            continue;
        }
        let Some(format) = job.format else {
            send(out, batch, job, Outcome::Found(Vec::new()));
            continue;
        };
        let request = CheckRequest {
            code: job.text.to_string(),
            format,
            path: job.rel.clone(),
            mode: scanner.config().mode,
            near_miss: scanner.config().near_miss,
        };
        let checked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            local.check_buffer_across(runtime, &snapshot, &shadows, &request)
        }));
        let outcome = match checked {
            Ok(Ok(answer)) => {
                let config = scanner.config();
                let found: Vec<Place> = answer
                    .duplications
                    .iter()
                    .map(|d| {
                        let other = &d.other;
                        let (start, end) = (other.span.start, other.span.end);
                        let (uri, range, file) = match &other.repository {
                            Some(repository) => {
                                // Another repository's file: no path here.
                                // (A store file's path is its path there, as its `rel`.)
                                let named = other.named();
                                let range = match answer.text_in(repository, &other.rel) {
                                    Some(text) => {
                                        places.range(Path::new(&named), Some(text), other.span)
                                    }
                                    None => uncounted(other.span),
                                };
                                (
                                    elsewhere_uri(repository, &other.rel, other.span),
                                    range,
                                    named,
                                )
                            }
                            None => {
                                let absolute = config.dir.join(&other.rel);
                                let text = answer.text_of(&other.rel);
                                let range = places.range(&absolute, text, other.span);
                                (file_uri(&absolute, &other.rel), range, other.path.clone())
                            }
                        };
                        Place {
                            snippet: d.place.span,
                            range,
                            uri,
                            name: format!("{file}:{}-{}", start.line, end.line),
                            tokens: d.tokens,
                            fragment: other.fragment.clone().unwrap_or_default(),
                            language: other.format.clone(),
                            renamed: d.renamed.clone(),
                            symbol: other.symbol_said(),
                        }
                    })
                    .collect();
                Outcome::Found(groups(batch, &job.text, found))
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
        send(out, batch, job, outcome);
    }
    *open = Some((engine.id, shadows));
}

/// Asks the server for the documents of `batch`, one `POST /api/check`
/// each; a check whose document changes meanwhile is abandoned.
fn run_remote(
    runtime: &tokio::runtime::Handle,
    remote: &Remote,
    batch: &Batch,
    out: &Sender<FromWorker>,
) {
    let mut places = Places::new(batch.encoding);
    for job in &batch.jobs {
        let (Some(format), false) = (job.format, job.text.trim().is_empty()) else {
            // Nothing a server would check (it refuses blank code).
            send(out, batch, job, Outcome::Found(Vec::new()));
            continue;
        };
        if job.superseded() {
            send(out, batch, job, Outcome::Cancelled);
            continue;
        }
        let asked = runtime.block_on(async {
            let superseded = async {
                while !job.superseded() {
                    tokio::time::sleep(SUPERSEDED_POLL).await;
                }
            };
            tokio::select! {
                answer = remote.check(job.rel.as_deref(), format, &job.text) => Some(answer),
                () = superseded => None,
            }
        });
        let outcome = match asked {
            None => Outcome::Cancelled,
            Some(Ok(found)) => {
                let found = found
                    .into_iter()
                    .map(|f| {
                        let (uri, range, file) = match &f.repository {
                            // Another repository's file: no path here, and
                            // its columns counted one unit a character.
                            Some(repository) => {
                                let named = format!("{repository}/{}", f.file);
                                let range = uncounted(f.codebase);
                                (elsewhere_uri(repository, &f.file, f.codebase), range, named)
                            }
                            None => (
                                file_uri(&f.absolute, &f.file),
                                places.range(&f.absolute, None, f.codebase),
                                f.file.clone(),
                            ),
                        };
                        Place {
                            snippet: f.snippet,
                            range,
                            uri,
                            name: format!(
                                "{file}:{}-{}",
                                f.codebase.start.line, f.codebase.end.line
                            ),
                            tokens: f.tokens,
                            fragment: f.fragment,
                            language: f.format,
                            renamed: f.renamed,
                            symbol: f.symbol,
                        }
                    })
                    .collect();
                Outcome::Found(groups(batch, &job.text, found))
            }
            Some(Err(Failure::Refused(why))) => Outcome::Refused(why),
            Some(Err(Failure::Unanswered { message, retry })) => {
                Outcome::Unanswered { message, retry }
            }
        };
        send(out, batch, job, outcome);
    }
}

/// One duplication of a document, from the engine or from a server: where
/// in the document, and the other place.
struct Place {
    /// Where in the document.
    snippet: Span,
    /// The other place's file.
    uri: Url,
    /// Its range there.
    range: Range,
    /// It as `path:first-last`.
    name: String,
    /// Tokens duplicated.
    tokens: u32,
    /// Its text.
    fragment: String,
    /// Its format's name.
    language: String,
    /// What the document renamed against it (the document's text first).
    renamed: Vec<(String, String)>,
    /// The definition it lies in, as people read it.
    symbol: Option<String>,
}

/// The ranges of places in their files, with the line tables of the files
/// made once per batch.
struct Places {
    encoding: Encoding,
    /// Each file's text (read back once, or read from disk) and lines, or
    /// `None` when it cannot be read.
    texts: HashMap<PathBuf, Option<(String, Lines)>>,
}

impl Places {
    fn new(encoding: Encoding) -> Places {
        Places {
            encoding,
            texts: HashMap::default(),
        }
    }

    /// The LSP range of `span` in the file at `path` (of text `given`,
    /// else as read from disk). A file that cannot be read counts its
    /// columns as one unit a character.
    fn range(&mut self, path: &Path, given: Option<&FileText>, span: Span) -> Range {
        let known = self.texts.entry(path.to_owned()).or_insert_with(|| {
            let text = match given {
                Some(text) => text.get().into_owned(),
                None => std::fs::read_to_string(path).ok()?,
            };
            let lines = Lines::new(&text);
            Some((text, lines))
        });
        match known {
            Some((text, lines)) => lines.range(text, span, self.encoding),
            None => uncounted(span),
        }
    }
}

/// The LSP range of `span` in a file whose text is unknown: its columns
/// counted one unit a character.
fn uncounted(span: Span) -> Range {
    Range::new(
        Position::new(
            span.start.line.saturating_sub(1),
            span.start.column.saturating_sub(1),
        ),
        Position::new(
            span.end.line.saturating_sub(1),
            span.end.column.saturating_sub(1),
        ),
    )
}

/// The duplicated ranges of a document of text `text`, each with its other
/// places (in the answer's order (docs/api.md)): duplications of one range are one group.
fn groups(batch: &Batch, text: &str, found: Vec<Place>) -> Vec<Group> {
    let own = Lines::new(text);
    let mut groups: Vec<(Span, Vec<Place>)> = Vec::new();
    for place in found {
        match groups.iter_mut().find(|(span, _)| *span == place.snippet) {
            Some((_, list)) => list.push(place),
            None => groups.push((place.snippet, vec![place])),
        }
    }
    groups
        .into_iter()
        .map(|(span, list)| {
            let first = &list[0];
            let renaming = renaming(&first.renamed);
            let symbol = (first.symbol.as_ref()).map_or(String::new(), |s| format!("{s} in "));
            let message = match (list.len(), &renaming) {
                (1, None) => format!(
                    "Duplicates {symbol}{} ({} tokens)",
                    first.name, first.tokens
                ),
                (1, Some(renaming)) => format!(
                    "Duplicates {symbol}{} ({} tokens), renaming {renaming}",
                    first.name, first.tokens
                ),
                (n, _) => format!("Duplicated in {n} places"),
            };
            let related = list
                .iter()
                .map(|p| DiagnosticRelatedInformation {
                    location: Location::new(p.uri.clone(), p.range),
                    message: format!("{} ({} tokens)", p.name, p.tokens),
                })
                .collect();
            let fragment: Vec<&str> = first.fragment.lines().take(HOVER_LINES + 1).collect();
            let mut first_fragment = fragment[..fragment.len().min(HOVER_LINES)].join("\n");
            if fragment.len() > HOVER_LINES {
                first_fragment.push_str("\n…");
            }
            Group {
                diagnostic: Diagnostic {
                    range: own.range(text, span, batch.encoding),
                    severity: Some(batch.severity),
                    code: Some(NumberOrString::String("duplicate".into())),
                    source: Some("dupcheck".into()),
                    message,
                    related_information: Some(related),
                    ..Diagnostic::default()
                },
                first_name: first.name.clone(),
                first_tokens: first.tokens,
                first_renaming: renaming,
                first_symbol: first.symbol.clone(),
                first_fragment,
                language: first.language.clone(),
                places: list
                    .iter()
                    .map(|p| Location::new(p.uri.clone(), p.range))
                    .collect(),
            }
        })
        .collect()
}

/// The URI of the file at `rel` of `repository`, another repository of
/// the store, at `span`: its page on the forge when the repository's name
/// is a forge's `host/org/repo` (GitHub's and GitLab's `blob/HEAD`
/// address, which both serve), else a `dupcheck-store:` URI that names it
/// without pretending it is a local file.
fn elsewhere_uri(repository: &str, rel: &str, span: Span) -> Url {
    let on_forge = repository.split('/').count() >= 3
        && repository
            .split('/')
            .next()
            .is_some_and(|host| host.contains('.'));
    let address = if on_forge {
        format!(
            "https://{repository}/blob/HEAD/{rel}#L{}-L{}",
            span.start.line, span.end.line
        )
    } else {
        format!("dupcheck-store:{repository}/{rel}")
    };
    Url::parse(&address).unwrap_or_else(|_| {
        Url::parse("dupcheck-store:").expect("a scheme alone is a URL: the url crate's invariant")
    })
}

/// The URI of the file at `absolute` (`rel` as a root path when that is
/// not an absolute path).
fn file_uri(absolute: &Path, rel: &str) -> Url {
    Url::from_file_path(absolute).unwrap_or_else(|()| {
        Url::parse(&format!("file:///{rel}")).unwrap_or_else(|_| {
            Url::parse("file:///").expect("file:/// is a URL: the invariant of the url crate")
        })
    })
}
