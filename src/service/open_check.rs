//! Checks of an editor's buffer among its other open buffers: the engine
//! call behind `dupcheck lsp`.
//!
//! In: the [`Scanner`]'s configuration, the kept [`Buffers`], a
//! [`Snapshot`], the [`OpenBuffers`] (the other buffers an editor holds
//! open, whose unsaved texts shadow their files on disk) and a
//! [`CheckRequest`] with the buffer's `path`. Out: a [`BufferAnswer`], the
//! duplications of the buffer in the answer's order (docs/api.md) and the
//! texts of the files they were found in (indexed files or open buffers),
//! or the [`Refusal`] of
//! [`check_snippet`](crate::service::check::check_snippet).
//!
//! The codebase is taken as the editor sees it, as `diff_check` takes it as
//! a diff leaves it: the snapshot without the indexed versions of the open
//! buffers that differ from them, plus a small index of those buffers'
//! texts. So a duplication between two unsaved buffers is found, and code
//! moved out of an open buffer is not reported against its stale version on
//! disk.
//!
//! Invariants: with no open buffers, the duplications are those of
//! [`check_snippet`](crate::service::check::check_snippet) for the same request (the same
//! tokenizing, the same matching, the same exclusions); the buffer's own
//! file never matches, neither on disk nor open; one budget covers the
//! buffer's parse and both matchings; an answer lists at most
//! [`MAX_DUPLICATIONS`] duplications, the first in order.

use std::cmp::Reverse;
use std::path::Path;
use std::sync::Arc;

use crate::engine::definitions::Definitions;
use crate::engine::grammar::Registry;
use crate::engine::index::{folder_of, FileMeta, Index, SourceFile, Views};
use crate::engine::matching::Exclusions;
use crate::engine::parse::Budget;
use crate::engine::snippet::SnippetDefinitions;
use crate::engine::text::FileText;
use crate::engine::tokens::tokenize_defined;
use crate::engine::tokens::Token;
use crate::project::buffers::Buffers;
use crate::project::config::Config;
use crate::project::generated::generated_text;
use crate::project::scanner::Scanner;
use crate::project::snapshot::Snapshot;
use crate::service::answer::{Checked, Duplication};
use crate::service::check::{
    budget_for, request_matches, tokenize_request, CheckRequest, Found, Refusal, StoreStatus,
    MAX_DUPLICATIONS,
};

/// The buffers an editor holds open whose texts differ from their indexed
/// files (or that are not indexed): an index of their texts, and the
/// indexed files they shadow.
pub(crate) struct OpenBuffers {
    /// The open texts, tokenized whole as files of their format.
    index: Index,
    /// Snapshot files whose open buffers differ from them, sorted.
    shadowed: Vec<u32>,
}

impl OpenBuffers {
    /// The open buffers `open` (a path relative to DIR with `/`, and the
    /// buffer's text) over `snapshot`. A buffer equal to its indexed file
    /// adds nothing; one of a format not scanned, ignored, or larger than
    /// `--max-size` is left out as a scan leaves it out (its indexed
    /// version, if any, still shadowed when it differs). Texts tokenized
    /// for `previous` are taken over when unchanged. Blocking.
    pub(crate) fn build(
        config: &Config,
        registry: &Registry,
        snapshot: &Snapshot,
        previous: Option<&OpenBuffers>,
        open: &[(String, Arc<str>)],
    ) -> OpenBuffers {
        let index = &snapshot.index;
        let mut shadowed = Vec::new();
        let mut files = Vec::new();
        for (rel, text) in open {
            let indexed = index.file_by_rel(rel);
            if let Some(id) = indexed {
                if index.files[id as usize].text.is(text) {
                    continue;
                }
                shadowed.push(id);
            }
            let kept = previous.and_then(|p| {
                let id = p.index.file_by_rel(rel)?;
                let file = &p.index.files[id as usize];
                file.text.is(text).then(|| Arc::clone(file))
            });
            if let Some(file) = kept.or_else(|| tokenized(config, registry, rel, text)) {
                files.push(file);
            }
        }
        shadowed.sort_unstable();
        shadowed.dedup();
        OpenBuffers {
            index: Index::build(files, registry, index.winnow),
            shadowed,
        }
    }

    /// Whether no open buffer is indexed here.
    pub(crate) fn is_empty(&self) -> bool {
        self.index.files.is_empty()
    }
}

/// The open buffer at `rel` as a file of the small index, when a scan
/// would take it.
fn tokenized(
    config: &Config,
    registry: &Registry,
    rel: &str,
    text: &str,
) -> Option<Arc<SourceFile>> {
    let format = registry
        .for_path(Path::new(rel))
        .or_else(|| registry.for_shebang(text.as_bytes()))?;
    if !config.formats.contains(&format.id)
        || text.len() as u64 > config.max_size
        || text.contains('\0')
        || config
            .ignore
            .matched(config.dir.join(rel), false)
            .is_ignore()
    {
        return None;
    }
    let budget = Budget::for_file(text.len());
    let (tokens, definitions) = match tokenize_defined(format, text, &config.normalization, &budget)
    {
        Ok(parsed) => parsed,
        Err(err) => {
            tracing::debug!("open buffer {rel} left out: {err}");
            return None;
        }
    };
    if generated_text(config, format, text, &tokens) {
        return None;
    }
    let path = if config.absolute {
        config.dir.join(rel).to_string_lossy().into_owned()
    } else {
        rel.to_owned()
    };
    let meta = FileMeta::of(text, text.len() as u64, 0);
    Some(Arc::new(
        SourceFile::with_tokens(path, rel.to_owned(), format, text.to_owned(), tokens, meta)
            .with_definitions(definitions),
    ))
}

/// The duplications of a buffer.
#[derive(Debug)]
pub(crate) struct BufferAnswer {
    /// The first [`MAX_DUPLICATIONS`] duplications in the answer's order
    /// (docs/api.md): each a place of the buffer (at its `path`) and the
    /// place it duplicates, quoted, in an indexed file or an open buffer.
    pub duplications: Vec<Duplication>,
    /// The files those other places are in, by `rel`: an editor counts
    /// columns in UTF-16, which only a place's text tells, and an open
    /// buffer's text is not the one on disk. Shared, not copied.
    files: Vec<Arc<SourceFile>>,
    /// The files of other repositories (in the store) that other places
    /// are in, by repository and `rel`.
    elsewhere: Vec<(Arc<str>, Arc<SourceFile>)>,
    /// The buffer's tokens, for the store's lookup.
    tokens: Vec<Token>,
    /// The buffer's definitions, for its places' symbols.
    definitions: SnippetDefinitions,
    /// How the store answered, when there is one and it was asked.
    pub store: Option<StoreStatus>,
}

impl BufferAnswer {
    /// The text of the file at `rel` (relative to DIR) that a duplication's
    /// other place is in: an indexed file's, or an open buffer's.
    pub(crate) fn text_of(&self, rel: &str) -> Option<&FileText> {
        let i = self
            .files
            .binary_search_by(|f| f.rel.as_str().cmp(rel))
            .ok()?;
        Some(&self.files[i].text)
    }

    /// The text of the file at `rel` in `repository` of the store.
    pub(crate) fn text_in(&self, repository: &str, rel: &str) -> Option<&FileText> {
        self.elsewhere
            .iter()
            .find(|(r, f)| &**r == repository && f.rel == rel)
            .map(|(_, f)| &f.text)
    }

    /// Adds the places `found` in other repositories (by the store, which
    /// answered `status`): the duplications stay in the answer's order,
    /// this directory's places before other repositories' for one range
    /// and length, and at most [`MAX_DUPLICATIONS`].
    pub(crate) fn add_elsewhere(
        &mut self,
        found: Vec<Found>,
        status: StoreStatus,
        request: &CheckRequest,
        registry: &Registry,
    ) {
        self.store = Some(status);
        let format = registry.get(request.format);
        let definitions = self.definitions.get(format);
        let format = &format.name;
        let rel = request.path.as_deref().unwrap_or_default();
        let checked = Checked::new(&request.code, &self.tokens, definitions);
        // Each file's text is read back once for the answer.
        let views = Views::default();
        for Found {
            file,
            repository,
            m,
        } in &found
        {
            let Some(repository) = repository else {
                continue;
            };
            let place = checked.place(rel, format, m.snippet);
            let snippet = (&self.tokens[..], request.code.as_str());
            let view = views.of(file);
            let m = m.clone();
            let mut d = Duplication::of_match(place, m, snippet, &view, registry, request.mode);
            d.other.repository = Some(repository.to_string());
            self.duplications.push(d);
            self.elsewhere
                .push((Arc::clone(repository), Arc::clone(file)));
        }
        self.duplications.sort_by(|x, y| {
            let key = |d: &Duplication| {
                (
                    d.place.span.start.line,
                    Reverse(d.tokens),
                    d.other.repository.clone(),
                    d.other.path.clone(),
                    d.other.span.start.line,
                    d.place.span.start.column,
                )
            };
            key(x).cmp(&key(y))
        });
        self.duplications.truncate(MAX_DUPLICATIONS);
    }

    /// The buffer's tokens.
    pub(crate) fn tokens(&self) -> &[Token] {
        &self.tokens
    }
}

/// Checks the buffer `request` (with its `path`, relative to DIR) against
/// `snapshot` shadowed by `open` (blocking: run it off the reactor). The
/// buffer's parse is kept in `buffers` for its next version, as
/// [`check_snippet`](crate::service::check::check_snippet) keeps it.
pub(crate) fn check_buffer(
    scanner: &Scanner,
    buffers: &Buffers,
    snapshot: &Snapshot,
    open: &OpenBuffers,
    request: &CheckRequest,
) -> Result<BufferAnswer, Refusal> {
    let config = scanner.config();
    let format = scanner.registry().get(request.format);
    if !config.formats.contains(&format.id) {
        return Ok(BufferAnswer {
            duplications: Vec::new(),
            files: Vec::new(),
            elsewhere: Vec::new(),
            tokens: Vec::new(),
            definitions: SnippetDefinitions::default(),
            store: None,
        });
    }
    let budget = budget_for(request.code.len());
    let (tokens, definitions) = tokenize_request(scanner, buffers, request, &budget)?;
    let path = request.path.as_deref();
    let local_folder = path.filter(|_| config.skip_local).map(folder_of);
    let matching = |index: &Index, files: &[u32]| {
        let exclude = Exclusions {
            own_file: path,
            local_folder,
            files,
            ..Exclusions::default()
        };
        request_matches(index, format, request, &tokens, config, exclude, &budget)
    };
    let on_disk = matching(&snapshot.index, &open.shadowed)?;
    let in_open = if open.is_empty() {
        Vec::new()
    } else {
        matching(&open.index, &[])?
    };
    let mut found: Vec<_> = [(&snapshot.index, on_disk), (&open.index, in_open)]
        .into_iter()
        .flat_map(|(index, matches)| {
            matches
                .into_iter()
                .map(|m| (Arc::clone(&index.files[m.file as usize]), m))
        })
        .collect();
    // The answer's order (docs/api.md): snippet line, longer first, file, codebase line.
    found.sort_by_cached_key(|(file, m)| {
        (
            m.snippet.start.line,
            Reverse(m.matched()),
            file.path.clone(),
            m.codebase.start.line,
            m.snippet.start.column,
            m.run.b,
        )
    });
    found.truncate(MAX_DUPLICATIONS);
    let rel = path.unwrap_or_default();
    let registry = scanner.registry();
    let mut files = Vec::new();
    // The buffer's definitions are needed only for the places listed.
    let none = Definitions::default();
    let listed = if found.is_empty() {
        &none
    } else {
        definitions.get(format)
    };
    let checked = Checked::new(&request.code, &tokens, listed);
    // Each file's text is read back once for the answer.
    let views = Views::default();
    let duplications = found
        .iter()
        .map(|(file, m)| {
            let place = checked.place(rel, &format.name, m.snippet);
            let snippet = (&tokens[..], request.code.as_str());
            let view = views.of(file);
            let m = m.clone();
            let d = Duplication::of_match(place, m, snippet, &view, registry, request.mode);
            files.push(Arc::clone(file));
            d
        })
        .collect();
    // One file per `rel`: a buffer's indexed version that differs from it
    // is shadowed, so never among the places.
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    files.dedup_by(|a, b| Arc::ptr_eq(a, b));
    Ok(BufferAnswer {
        duplications,
        files,
        elsewhere: Vec::new(),
        tokens,
        definitions,
        store: None,
    })
}
