//! The workspace: one project as every interface serves it, and the calls
//! they make on it.
//!
//! [`Workspace::start`] is the one way to start serving a directory: the
//! scanner (whose first scan reads the cache and starts at once, on a
//! thread of its own), editors' kept parses, the admission of checks, and
//! the watcher (with `--watch`, the default). The HTTP server, the MCP
//! tools mounted in it and the language server all start it the same way;
//! `dupcheck report`, which runs once, makes its one scan through
//! [`Workspace::scanned_once`].
//!
//! Each call ([`Workspace::check`], [`Workspace::check_diff`],
//! [`Workspace::stats`], [`Workspace::clones`], [`Workspace::clone_detail`],
//! [`Workspace::tree`], [`Workspace::recheck`]) is async, reads the current
//! snapshot ([`ServiceError::NotReady`] before the first scan ends), runs
//! its CPU work on the blocking pool, and hands the answer, plain data, to
//! the caller's `render` there, while the snapshot it borrows from is held.
//! A panic in that work is a [`ServiceError::Internal`], logged; the process
//! goes on. The language server's worker threads check open buffers
//! through the blocking [`Workspace::open_buffers`] and
//! [`Workspace::check_buffer`].

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::engine::grammar::Registry;
use crate::engine::snippet::SnippetDefinitions;
use crate::engine::stats::ProjectStats;
use crate::project::buffers::Buffers;
use crate::project::config::Config;
use crate::project::left_out::why_nothing_indexed;
use crate::project::progress::Progress;
use crate::project::scan::ScanError;
use crate::project::scanner::Scanner;
use crate::project::snapshot::{DetectionState, Snapshot};
use crate::project::watch::Watch;
use crate::service::across;
use crate::service::check::{self, Admission, CheckAnswer, CheckRequest, Refusal, StoreStatus};
use crate::service::clones::{CloneDetail, ClonesPage, ClonesQuery};
use crate::service::diff_check::{DiffAnswer, DiffOptions, DiffRefusal};
use crate::service::open_check::{BufferAnswer, OpenBuffers};
use crate::service::tree::{Folder, TreeQuery};
use crate::store::live::Live;
use crate::store::lookup::{self, Query};
use crate::store::StoreError;

/// One project served: its scanner, editors' kept parses, the admission of
/// checks and the watcher (which stops when the workspace is dropped).
pub(crate) struct Workspace {
    /// The current snapshot, its rescans and updates, the cache.
    pub scanner: Arc<Scanner>,
    /// The last parse of each checked `path`, to reparse its next version.
    pub buffers: Buffers,
    /// When a check may run.
    pub admission: Admission,
    /// The store of other repositories, when there is one.
    pub store: Option<across::Store>,
    /// The watcher, when the configuration asks for one.
    _watch: Option<Watch>,
}

/// How long a call that needs the project's clones (statistics, the clone
/// list, the tree) waits for a detection running before it answers
/// [`ServiceError::Detecting`]: on a big tree detection takes minutes, and
/// a client is better told how far it has come.
pub(crate) const DETECTION_WAIT: Duration = Duration::from_secs(3);

/// Why a call of the service was not answered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServiceError {
    /// The first scan has not finished.
    #[error("the first scan has not finished")]
    NotReady,
    /// Whole-project clone detection is running: files looked up so far,
    /// of how many.
    #[error("clone detection is running ({done} of {files} files looked up)")]
    Detecting { done: usize, files: usize },
    /// A snippet check was refused (too large, too complex, too busy).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A diff check was refused (not a diff, too large, too complex).
    #[error(transparent)]
    DiffRefused(#[from] DiffRefusal),
    /// The rescan asked for failed.
    #[error("{0}")]
    Scan(String),
    /// No indexed file is in the folder asked for.
    #[error("no folder {0:?} holds an indexed file")]
    NoSuchFolder(String),
    /// The current index has no clone of that id.
    #[error("no clone {0} in the current index")]
    NoSuchClone(String),
    /// The work failed unexpectedly (a panic, logged).
    #[error("internal error")]
    Internal,
}

impl Workspace {
    /// Starts serving `config`'s directory: the scanner, whose first scan
    /// starts now on a thread of its own (no async runtime needed), and the
    /// watcher when `config.watch`. `cores` sizes the admission of checks.
    /// Checks read the store `live` too, when given.
    pub(crate) fn start(
        config: Config,
        registry: Arc<Registry>,
        cores: usize,
        live: Option<Arc<Live>>,
    ) -> Arc<Workspace> {
        let watch = config.watch;
        let store = live.map(|live| across::Store::of(live, &config));
        let scanner = Scanner::new(Arc::new(config), registry);
        scanner.start_scan();
        let watch = watch.then(|| crate::project::watch::spawn(Arc::clone(&scanner)));
        Workspace::of(scanner, cores, watch, store)
    }

    /// A workspace for a command that runs once (`dupcheck report`): its
    /// one scan made now, on this thread, with `progress` (the cache read,
    /// not written), and no watcher. Its snapshot, or why the scan failed.
    /// A scan that indexed no file says why on stderr, when ignore rules or
    /// `--format` left source files out.
    pub(crate) fn scanned_once(
        config: Config,
        registry: Arc<Registry>,
        progress: &Progress,
    ) -> Result<(Arc<Workspace>, Arc<Snapshot>), ScanError> {
        let scanner = Scanner::new(Arc::new(config), registry);
        let snapshot = scanner.scan_now(progress)?;
        if snapshot.index.files.is_empty() {
            if let Some(why) = why_nothing_indexed(scanner.config(), scanner.registry()) {
                progress.print(&why);
            }
        }
        Ok((Workspace::of(scanner, 1, None, None), snapshot))
    }

    /// A workspace over `scanner` whose first scan is not started, and
    /// without a watcher: for tests of what answers before it ends.
    #[cfg(test)]
    pub(crate) fn unstarted(scanner: Arc<Scanner>) -> Arc<Workspace> {
        Workspace::of(scanner, 1, None, None)
    }

    /// The workspace of `scanner`, admitting checks for `cores`, with the
    /// watcher `watch` if any.
    fn of(
        scanner: Arc<Scanner>,
        cores: usize,
        watch: Option<Watch>,
        store: Option<across::Store>,
    ) -> Arc<Workspace> {
        Arc::new(Workspace {
            scanner,
            buffers: Buffers::default(),
            admission: Admission::new(cores),
            store,
            _watch: watch,
        })
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &Config {
        self.scanner.config()
    }

    /// The format registry.
    pub(crate) fn registry(&self) -> &Registry {
        self.scanner.registry()
    }

    /// The current snapshot, or [`ServiceError::NotReady`].
    pub(crate) fn snapshot(&self) -> Result<Arc<Snapshot>, ServiceError> {
        self.scanner.snapshot().ok_or(ServiceError::NotReady)
    }

    /// One snippet check: admitted by the snippet's size, on the current
    /// snapshot (or, with `recheck`, on a fresh rescan), the check and
    /// `render` on the blocking pool.
    pub(crate) async fn check<T, E, R>(
        self: &Arc<Self>,
        request: CheckRequest,
        recheck: bool,
        render: R,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
        R: FnOnce(&Workspace, &CheckRequest, &CheckAnswer) -> Result<T, E> + Send + 'static,
    {
        let mut admitted = self
            .admission
            .admit(request.code.len())
            .await
            .map_err(ServiceError::from)?;
        let snapshot = if recheck {
            self.recheck().await?
        } else {
            self.snapshot()?
        };
        let this = Arc::clone(self);
        let Some(store) = &self.store else {
            return blocking("check", move || {
                let _admitted = admitted;
                let answer = crate::service::check::check_snippet(
                    &this.scanner,
                    &this.buffers,
                    &snapshot,
                    &request,
                )
                .map_err(ServiceError::from)?;
                render(&this, &request, &answer)
            })
            .await;
        };
        // With a store: this directory's part, then the store's lookup (on
        // the reactor, within the store's deadline), then the matching in
        // the files it gave back and the answer of both.
        let (request, local, snapshot) = blocking("check", move || {
            let local = crate::service::check::check_local(
                &this.scanner,
                &this.buffers,
                &snapshot,
                &request,
            )
            .map_err(ServiceError::from)?;
            Ok::<_, E>((request, local, snapshot))
        })
        .await?;
        let winnow = snapshot.index.winnow;
        let looked_up = match local {
            Some(local) => {
                let query = across::query(
                    &local.tokens,
                    &request,
                    self.registry(),
                    winnow,
                    store.settings_key,
                    &store.own,
                );
                let lookup = store.live.lookup(&query, self.registry());
                let (readmitted, files) = admitted.waiting_on(&self.admission, lookup).await;
                admitted = readmitted.map_err(ServiceError::from)?;
                Some((local, files))
            }
            None => None,
        };
        let this = Arc::clone(self);
        blocking("check", move || {
            let _admitted = admitted;
            let (config, registry) = (this.config(), this.registry());
            let here = |matches| check::found_in(&snapshot.index, matches);
            let (tokens, definitions, found, status) = match looked_up {
                None => (
                    Vec::new(),
                    SnippetDefinitions::default(),
                    Vec::new(),
                    StoreStatus::Ok { skipped: 0 },
                ),
                Some((local, Ok(files))) => {
                    let skipped = files.skipped;
                    let mut found =
                        across::matches(files, &local.tokens, &request, config, registry, winnow)
                            .map_err(ServiceError::from)?;
                    found.extend(here(local.matches));
                    let status = StoreStatus::Ok { skipped };
                    (local.tokens, local.definitions, found, status)
                }
                Some((local, Err(e))) => (
                    local.tokens,
                    local.definitions,
                    here(local.matches),
                    StoreStatus::Unavailable { kind: e.kind() },
                ),
            };
            let snippet = (&tokens[..], &definitions);
            let answer = check::answer(&request, snippet, found, Some(status), registry);
            render(&this, &request, &answer)
        })
        .await
    }

    /// One diff check with `options`: on the current snapshot, the check
    /// (which waits for admission by the new texts' size, once it knows
    /// them) and `render` on the blocking pool.
    pub(crate) async fn check_diff<T, E, R>(
        self: &Arc<Self>,
        diff: Bytes,
        options: DiffOptions,
        render: R,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
        R: FnOnce(&DiffAnswer) -> Result<T, E> + Send + 'static,
    {
        let runtime = tokio::runtime::Handle::current();
        self.on_snapshot("diff check", move |this, snapshot| {
            // The check's size is known once the diff is read: it waits for
            // its turn here, on the blocking pool, as checks wait on the
            // reactor.
            let admit = |len| runtime.block_on(this.admission.admit(len));
            // The store is reached the same way, within its deadline.
            let look_up = |query: Query| runtime.block_on(this.store_lookup(&query));
            let elsewhere = this
                .store
                .as_ref()
                .map(|store| (store, &look_up as &dyn Fn(Query) -> _));
            let answer = crate::service::diff_check::check_diff(
                this.config(),
                this.registry(),
                snapshot,
                &diff,
                options,
                admit,
                elsewhere,
            )
            .map_err(ServiceError::from)?;
            render(&answer)
        })
        .await
    }

    /// The project's statistics (clone detection on a snapshot's first
    /// use), given to `render` on the blocking pool.
    pub(crate) async fn stats<T, E, R>(self: &Arc<Self>, render: R) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
        R: FnOnce(&ProjectStats) -> Result<T, E> + Send + 'static,
    {
        self.on_clones("stats", move |this, snapshot| {
            render(&snapshot.stats(this.config(), this.registry()))
        })
        .await
    }

    /// One page of the clone list, given to `render` on the blocking pool.
    pub(crate) async fn clones<T, E, R>(
        self: &Arc<Self>,
        query: ClonesQuery,
        render: R,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
        R: FnOnce(&ClonesPage) -> Result<T, E> + Send + 'static,
    {
        self.on_clones("clone list", move |this, snapshot| {
            let page =
                crate::service::clones::list(snapshot, this.config(), this.registry(), &query);
            render(&page)
        })
        .await
    }

    /// One clone of the list by `id`, both places in full, given to
    /// `render` on the blocking pool; [`ServiceError::NoSuchClone`] when the
    /// current index has none of that id.
    pub(crate) async fn clone_detail<T, E, R>(
        self: &Arc<Self>,
        id: String,
        render: R,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
        R: FnOnce(&CloneDetail) -> Result<T, E> + Send + 'static,
    {
        self.on_clones(
            "clone detail",
            move |this, snapshot| match crate::service::clones::detail(
                snapshot,
                this.config(),
                this.registry(),
                &id,
            ) {
                Some(detail) => render(&detail),
                None => Err(ServiceError::NoSuchClone(id).into()),
            },
        )
        .await
    }

    /// One folder of the tree, given to `render` on the blocking pool;
    /// [`ServiceError::NoSuchFolder`] when no indexed file is inside it.
    pub(crate) async fn tree<T, E, R>(self: &Arc<Self>, query: TreeQuery, render: R) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
        R: FnOnce(&Folder) -> Result<T, E> + Send + 'static,
    {
        self.on_clones(
            "tree",
            move |this, snapshot| match crate::service::tree::folder(
                snapshot,
                this.config(),
                this.registry(),
                &query,
            ) {
                Some(folder) => render(&folder),
                None => Err(ServiceError::NoSuchFolder(query.path).into()),
            },
        )
        .await
    }

    /// The open buffers of an editor, indexed over `snapshot` (those that
    /// differ from disk shadow their files), reusing what `previous`
    /// tokenized. Blocking: for the language server's worker threads.
    pub(crate) fn open_buffers(
        &self,
        snapshot: &Snapshot,
        previous: Option<&OpenBuffers>,
        open: &[(String, Arc<str>)],
    ) -> OpenBuffers {
        OpenBuffers::build(self.config(), self.registry(), snapshot, previous, open)
    }

    /// An editor's buffer checked against `snapshot` shadowed by `open`, its
    /// parse kept for its next version. Blocking, as [`Workspace::open_buffers`].
    pub(crate) fn check_buffer(
        &self,
        snapshot: &Snapshot,
        open: &OpenBuffers,
        request: &CheckRequest,
    ) -> Result<BufferAnswer, Refusal> {
        crate::service::open_check::check_buffer(
            &self.scanner,
            &self.buffers,
            snapshot,
            open,
            request,
        )
    }

    /// [`Workspace::check_buffer`], then, with a store, the places of
    /// other repositories: the store's lookup runs on `runtime` while this
    /// thread waits (within the store's deadline). Blocking, as
    /// [`Workspace::open_buffers`].
    pub(crate) fn check_buffer_across(
        &self,
        runtime: &tokio::runtime::Handle,
        snapshot: &Snapshot,
        open: &OpenBuffers,
        request: &CheckRequest,
    ) -> Result<BufferAnswer, Refusal> {
        let mut answer = self.check_buffer(snapshot, open, request)?;
        let Some(store) = &self.store else {
            return Ok(answer);
        };
        let (config, registry) = (self.config(), self.registry());
        let winnow = snapshot.index.winnow;
        let query = across::query(
            answer.tokens(),
            request,
            registry,
            winnow,
            store.settings_key,
            &store.own,
        );
        let (found, status) = match runtime.block_on(store.live.lookup(&query, registry)) {
            Ok(files) => {
                let skipped = files.skipped;
                let found =
                    across::matches(files, answer.tokens(), request, config, registry, winnow)?;
                (found, StoreStatus::Ok { skipped })
            }
            Err(e) => (Vec::new(), StoreStatus::Unavailable { kind: e.kind() }),
        };
        answer.add_elsewhere(found, status, request, registry);
        Ok(answer)
    }

    /// The store's answer to `query`, within its deadline.
    async fn store_lookup(&self, query: &Query) -> Result<lookup::Found, StoreError> {
        match &self.store {
            Some(store) => store.live.lookup(query, self.registry()).await,
            None => Ok(lookup::Found::default()),
        }
    }

    /// Runs `work` with the current snapshot on the blocking pool.
    async fn on_snapshot<T, E>(
        self: &Arc<Self>,
        what: &str,
        work: impl FnOnce(&Workspace, &Arc<Snapshot>) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
    {
        let snapshot = self.snapshot()?;
        let this = Arc::clone(self);
        blocking(what, move || work(&this, &snapshot)).await
    }

    /// [`Workspace::on_snapshot`] once the snapshot's clones are known:
    /// after a detection running ends, within [`DETECTION_WAIT`]
    /// ([`ServiceError::Detecting`] after that); one not started yet is
    /// started in the background.
    async fn on_clones<T, E>(
        self: &Arc<Self>,
        what: &str,
        work: impl FnOnce(&Workspace, &Arc<Snapshot>) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<ServiceError> + Send + 'static,
    {
        self.on_snapshot(what, move |this, snapshot| {
            this.clones_known(snapshot, DETECTION_WAIT)?;
            work(this, snapshot)
        })
        .await
    }

    /// `Ok` once the clones of `snapshot` with the server's settings are
    /// known, waiting at most `budget` for them; starts their detection in
    /// the background if none runs.
    fn clones_known(&self, snapshot: &Arc<Snapshot>, budget: Duration) -> Result<(), ServiceError> {
        let config = self.config();
        if snapshot.has_clones(config) {
            return Ok(());
        }
        if snapshot.claim_detection() {
            self.scanner.detect_in_background(snapshot);
        }
        if snapshot.wait_for_clones(config, budget) {
            return Ok(());
        }
        let files = snapshot.index.files.len();
        match snapshot.detection() {
            DetectionState::Running { done, files, .. } => {
                Err(ServiceError::Detecting { done, files })
            }
            _ => Err(ServiceError::Detecting { done: 0, files }),
        }
    }

    /// A full rescan now (or the one running), and its snapshot.
    pub(crate) async fn recheck(&self) -> Result<Arc<Snapshot>, ServiceError> {
        self.scanner
            .rescan()
            .await
            .map_err(|e| ServiceError::Scan(e.to_string()))
    }
}

/// Runs `work` on the blocking pool; a panic there is logged and answered
/// [`ServiceError::Internal`].
async fn blocking<T, E>(
    what: &str,
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<ServiceError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|err| {
            tracing::error!("{what} failed: {err}");
            Err(ServiceError::Internal.into())
        })
}
