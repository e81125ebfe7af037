//! Open documents and their checks: opened, changed and closed documents,
//! debounced into batches for the worker, and the worker's results
//! published as diagnostics; every open document rechecked when the index
//! changes.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use lsp_types::notification::PublishDiagnostics;
use lsp_types::{
    Diagnostic, DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    MessageType, PublishDiagnosticsParams, Url,
};

use super::text::apply_changes;
use super::worker::{Batch, FromWorker, Job, Outcome};
use super::{Doc, Server, QUIET};
use crate::engine::grammar::FormatId;

impl Server<'_> {
    /// The document's path relative to the workspace, and its format.
    fn locate(&self, uri: &Url, language: Option<&str>) -> (Option<String>, Option<FormatId>) {
        let dir = self.engine.as_ref().map(|e| e.dir().to_owned());
        let path = uri.to_file_path().ok();
        let rel = match (&path, &dir) {
            (Some(path), Some(dir)) => path.strip_prefix(dir).ok().and_then(|rel| {
                let parts: Option<Vec<&str>> =
                    rel.components().map(|c| c.as_os_str().to_str()).collect();
                parts.map(|p| p.join("/")).filter(|r| !r.is_empty())
            }),
            _ => None,
        };
        let format = path
            .as_deref()
            .and_then(|p| self.registry.for_path(p))
            .or_else(|| language.and_then(|l| self.registry.lookup(l)))
            .map(|f| f.id);
        (rel, format)
    }

    pub(super) fn did_open(&mut self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let (rel, format) = self.locate(&document.uri, Some(&document.language_id));
        let format = format.or_else(|| {
            self.registry
                .for_shebang(document.text.as_bytes())
                .map(|f| f.id)
        });
        let uri = document.uri;
        if let Some(old) = self.docs.get(&uri) {
            // Opened again without closing: its checks are superseded.
            old.changes.fetch_add(1, Ordering::SeqCst);
        }
        self.docs.insert(
            uri.clone(),
            Doc {
                version: document.version,
                text: document.text,
                rel,
                format,
                due: None,
                published: None,
                settled: None,
                changes: Arc::default(),
            },
        );
        self.edited(&uri);
    }

    pub(super) fn did_change(&mut self, params: DidChangeTextDocumentParams) {
        let encoding = self.encoding;
        let uri = params.text_document.uri;
        let Some(doc) = self.docs.get_mut(&uri) else {
            tracing::warn!("didChange of {uri} that is not open: ignored");
            return;
        };
        apply_changes(&mut doc.text, params.content_changes, encoding);
        doc.version = params.text_document.version;
        doc.changes.fetch_add(1, Ordering::SeqCst);
        self.edited(&uri);
    }

    pub(super) fn did_close(&mut self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Some(doc) = self.docs.remove(&uri) {
            doc.changes.fetch_add(1, Ordering::SeqCst);
            self.answer_pending(&uri);
            self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics: Vec::new(),
                version: None,
            });
            // The others' duplications with it are gone (or on disk).
            self.edited(&uri);
        }
    }

    /// After an edit of `uri`: a superseded batch stops, and the documents
    /// whose duplications may change are due a quiet while from now: in
    /// process every open one (the edited one is checked first), with a
    /// server the edited one alone.
    fn edited(&mut self, uri: &Url) {
        self.edits.fetch_add(1, Ordering::SeqCst);
        let due = Instant::now() + QUIET;
        if self.engine.as_ref().is_some_and(|e| e.sees_open_buffers()) {
            self.recheck_all(due);
        } else if let Some(doc) = self.docs.get_mut(uri) {
            doc.due = Some(due);
        }
    }

    pub(super) fn recheck_all(&mut self, due: Instant) {
        for doc in self.docs.values_mut() {
            doc.due = Some(due);
        }
    }

    pub(super) fn next_due(&self) -> Option<Instant> {
        self.docs.values().filter_map(|d| d.due).min()
    }

    /// Rechecks the open documents when the index changed under them.
    pub(super) fn watch_snapshot(&mut self) {
        let Some(scanner) = self.engine.as_ref().and_then(|e| e.scanner()) else {
            return;
        };
        let Some(snapshot) = scanner.snapshot() else {
            return;
        };
        let address = Arc::as_ptr(&snapshot) as usize;
        if self.snapshot.replace(address).is_some_and(|a| a != address) {
            self.recheck_all(Instant::now());
        }
    }

    /// Sends the documents that are due to the worker, unless it is busy.
    pub(super) fn start_batch(&mut self) {
        let now = Instant::now();
        let Some(engine) = &self.engine else { return };
        if self.busy
            || !self
                .docs
                .values()
                .any(|d| d.due.is_some_and(|due| due <= now))
        {
            return;
        }
        let mut jobs: Vec<(i32, Job)> = Vec::new();
        let mut open = Vec::new();
        for (uri, doc) in &mut self.docs {
            let text: Arc<str> = Arc::from(doc.text.as_str());
            if let Some(rel) = &doc.rel {
                open.push((rel.clone(), Arc::clone(&text)));
            }
            if doc.due.is_some_and(|due| due <= now) {
                doc.due = None;
                // The one whose diagnostics are oldest goes first: the one
                // just edited.
                let stale = doc.published.as_ref().map_or(i32::MIN, |(v, _)| *v);
                jobs.push((
                    stale.saturating_sub(doc.version),
                    Job {
                        uri: uri.clone(),
                        version: doc.version,
                        rel: doc.rel.clone(),
                        format: doc.format,
                        text,
                        edits: (doc.changes.load(Ordering::SeqCst), Arc::clone(&doc.changes)),
                    },
                ));
            }
        }
        jobs.sort_by_key(|(staleness, job)| (*staleness, job.uri.to_string()));
        open.sort();
        let batch = Batch {
            engine: Arc::clone(engine),
            jobs: jobs.into_iter().map(|(_, job)| job).collect(),
            open,
            edits: self.edits.load(Ordering::SeqCst),
            encoding: self.encoding,
            severity: self.settings.severity,
        };
        if self.batches.send(batch).is_ok() {
            self.busy = true;
        }
    }

    pub(super) fn take_result(&mut self, result: FromWorker) {
        let (uri, version, engine, outcome) = match result {
            FromWorker::Done => {
                self.busy = false;
                return;
            }
            FromWorker::Checked {
                uri,
                version,
                engine,
                outcome,
            } => (uri, version, engine, outcome),
        };
        let current = self.engine.as_ref().map(|e| e.id);
        let Some(doc) = self.docs.get_mut(&uri) else {
            return;
        };
        if doc.version != version || current != Some(engine) {
            // Superseded: a newer check is due.
            return;
        }
        let groups = match outcome {
            Outcome::Found(groups) => groups,
            Outcome::Cancelled => {
                doc.due.get_or_insert_with(Instant::now);
                return;
            }
            Outcome::Refused(why) => {
                tracing::warn!("{uri} not checked: {why}");
                Vec::new()
            }
            Outcome::Unanswered { message, retry } => {
                // The diagnostics stay as they were; the next edit (or the
                // server's Retry-After) tries again.
                doc.settled = Some(version);
                if let Some(retry) = retry {
                    doc.due.get_or_insert_with(|| Instant::now() + retry);
                }
                self.answer_pending(&uri);
                tracing::warn!("{uri} not checked: {message}");
                if self.unanswered.as_ref() != Some(&message) {
                    self.show_message(MessageType::WARNING, format!("dupcheck: {message}"));
                    self.unanswered = Some(message);
                }
                return;
            }
        };
        if self.unanswered.take().is_some() {
            tracing::info!("the dupcheck server answers again");
        }
        let diagnostics: Vec<Diagnostic> = groups.iter().map(|g| g.diagnostic.clone()).collect();
        doc.published = Some((version, groups));
        doc.settled = Some(version);
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: Some(version),
        });
        self.answer_pending(&uri);
    }
}
