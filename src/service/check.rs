//! Checks: one snippet against the current snapshot, within its budgets.
//!
//! In: a [`CheckRequest`] (code, format, the snippet's own path), the
//! [`Scanner`]'s configuration, the kept [`Buffers`] and a [`Snapshot`].
//! Out: a [`CheckAnswer`], the duplications in the answer's order (docs/api.md) with their
//! statistics, or the [`Refusal`] that says which budget the snippet
//! exceeds. Every interface answers checks through [`check_snippet`], after
//! [`Admission`] has let the check in.
//!
//! Invariants: a check holds at most [`Admission`]'s share of memory, and
//! all of its parses and its matching end by one deadline
//! ([`Budget::for_snippet`]); an answer lists at most [`MAX_DUPLICATIONS`]
//! duplications and [`MAX_FRAGMENT_BYTES`] of fragments, the first ones in
//! order, while its statistics count them all.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::engine::definitions::Definitions;
use crate::engine::grammar::{Format, FormatId, Registry};
use crate::engine::index::{folder_of, Index, SourceFile, Views};
use crate::engine::matching::{snippet_matches, Exclusions, SnippetMatch};
use crate::engine::parse::{self, Budget, ParseError};
use crate::engine::snippet::{
    tokenize_snippet_after, tokenize_snippet_defined, SnippetDefinitions,
};
use crate::engine::stats::SnippetStats;
use crate::engine::tokens::{Mode, Token, Tokens};
use crate::project::buffers::Buffers;
use crate::project::config::Config;
use crate::project::scanner::Scanner;
use crate::project::snapshot::Snapshot;
use crate::service::answer::{Checked, Duplication};
use crate::service::findings::{findings, Finding};

/// Duplications listed in one answer at most; the rest are counted.
pub(crate) const MAX_DUPLICATIONS: usize = 1000;
/// Bytes of codebase fragments in one answer at most (the first duplication
/// is always listed).
pub(crate) const MAX_FRAGMENT_BYTES: usize = 16 << 20;

/// A validated check.
#[derive(Debug)]
pub struct CheckRequest {
    /// The snippet.
    pub code: String,
    /// Its format.
    pub format: FormatId,
    /// The snippet's own file, relative to DIR with `/`.
    pub path: Option<String>,
    /// The mode its duplications are equal in (the request's, or `--mode`).
    pub mode: Mode,
    /// Whether near-miss copies are found (the request's, or not
    /// `--no-near-miss`), with the server's `--similarity`.
    pub near_miss: bool,
}

/// The duplications of a snippet.
#[derive(Debug)]
pub(crate) struct CheckAnswer {
    /// The first duplications in the answer's order (docs/api.md), within
    /// the answer's caps: each the snippet's place (at the request's
    /// `path`, or at an empty one) and the codebase place it duplicates.
    pub duplications: Vec<Duplication>,
    /// How many duplications there are in all.
    pub total: usize,
    /// Statistics of all of them.
    pub statistics: SnippetStats,
    /// How the store answered, when there is one.
    pub store: Option<StoreStatus>,
}

/// How the store answered a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreStatus {
    /// It answered: the duplications include other repositories' places;
    /// `skipped` candidate files were not compared (a snippet sharing
    /// code with more files than a check fetches).
    Ok { skipped: usize },
    /// It did not answer within its deadline, or failed (the error's
    /// kind): the duplications are this directory's alone.
    Unavailable { kind: &'static str },
}

impl CheckAnswer {
    /// Whether some duplications were left out of `duplications`.
    pub(crate) fn truncated(&self) -> bool {
        self.duplications.len() < self.total
    }

    /// The listed duplications as findings (SARIF, rdjsonl): one per place
    /// of the snippet, whose related locations are the codebase places it
    /// duplicates.
    pub(crate) fn findings(&self) -> Vec<Finding> {
        findings(&self.duplications)
    }
}

/// Why a check was not answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// The snippet would need more memory than one check may hold.
    #[error(
        "The snippet is too large to check: {len} bytes would need more than the {} MB a check may use; send at most {} bytes",
        mb(MAX_CHECK_MEMORY),
        max_snippet_len()
    )]
    TooLarge { len: usize },
    /// Parsing the snippet ran out of its time or memory budget.
    #[error("The snippet is too complex to check: {0}; send a smaller or more regular snippet")]
    Parse(ParseError),
    /// Matching the snippet ran out of time (it matches too many places).
    #[error("The snippet is too complex to check: it matches too many places to compare in time; send a smaller or less repetitive snippet")]
    MatchTimeout,
    /// Too many checks are running or waiting.
    #[error("Too many checks are running; retry shortly")]
    Busy,
}

/// The matches of `request` (tokenized as `tokens`, of `format`) in
/// `index` but for `exclude`, in its mode, with the configuration's
/// thresholds and, when it asks for near-miss copies, similarity; by the
/// budget's deadline.
pub(crate) fn request_matches(
    index: &Index,
    format: &Format,
    request: &CheckRequest,
    tokens: &(impl Tokens + ?Sized),
    config: &Config,
    exclude: Exclusions<'_>,
    budget: &Budget,
) -> Result<Vec<SnippetMatch>, Refusal> {
    snippet_matches(
        index,
        format.family_id,
        &request.code,
        tokens,
        request.mode,
        config.thresholds,
        exclude,
        request.near_miss.then_some(config.similarity),
        budget.deadline,
    )
    .map_err(|_| Refusal::MatchTimeout)
}

/// A check's part in this directory: the snippet's tokens and its matches
/// in the snapshot's index. All that a check without a store needs, and
/// what a check with one asks the store from.
#[derive(Debug)]
pub(crate) struct Local {
    /// The snippet's tokens.
    pub tokens: Vec<Token>,
    /// The snippet's definitions (walked for when an answer lists a place).
    pub definitions: SnippetDefinitions,
    /// Its matches in the snapshot's index, in the answer's order.
    pub matches: Vec<SnippetMatch>,
}

/// Tokenizes `request` and matches it in `snapshot` (blocking: run it off
/// the reactor); `None` when its format is not scanned.
pub(crate) fn check_local(
    scanner: &Scanner,
    buffers: &Buffers,
    snapshot: &Snapshot,
    request: &CheckRequest,
) -> Result<Option<Local>, Refusal> {
    let started = Instant::now();
    let config = scanner.config();
    let format = scanner.registry().get(request.format);
    if !config.formats.contains(&format.id) {
        return Ok(None);
    }
    let budget = budget_for(request.code.len());
    let path = request.path.as_deref();
    let (tokens, definitions) = tokenize_request(scanner, buffers, request, &budget)?;
    let tokenized = started.elapsed();
    let exclude = Exclusions {
        own_file: path,
        local_folder: path.filter(|_| config.skip_local).map(folder_of),
        ..Exclusions::default()
    };
    let matches = request_matches(
        &snapshot.index,
        format,
        request,
        &tokens,
        config,
        exclude,
        &budget,
    )?;
    tracing::debug!(
        "check of {} bytes: tokenize {tokenized:?}, match {:?}",
        request.code.len(),
        started.elapsed() - tokenized,
    );
    Ok(Some(Local {
        tokens,
        definitions,
        matches,
    }))
}

/// Checks `request` against `snapshot` alone (blocking: run it off the
/// reactor).
pub(crate) fn check_snippet(
    scanner: &Scanner,
    buffers: &Buffers,
    snapshot: &Snapshot,
    request: &CheckRequest,
) -> Result<CheckAnswer, Refusal> {
    let Some(Local {
        tokens,
        definitions,
        matches,
    }) = check_local(scanner, buffers, snapshot, request)?
    else {
        let none = SnippetDefinitions::default();
        return Ok(answer(
            request,
            (&[], &none),
            Vec::new(),
            None,
            scanner.registry(),
        ));
    };
    let found = found_in(&snapshot.index, matches);
    Ok(answer(
        request,
        (&tokens, &definitions),
        found,
        None,
        scanner.registry(),
    ))
}

/// A match with the file it was found in and, when that file is another
/// repository's, the repository's name.
#[derive(Debug)]
pub(crate) struct Found {
    /// The file.
    pub file: Arc<SourceFile>,
    /// Its repository in the store; `None` for this directory's files.
    pub repository: Option<Arc<str>>,
    /// The match.
    pub m: SnippetMatch,
}

/// `matches` found in `index`, with their files.
pub(crate) fn found_in(index: &Index, matches: Vec<SnippetMatch>) -> Vec<Found> {
    matches
        .into_iter()
        .map(|m| Found {
            file: Arc::clone(&index.files[m.file as usize]),
            repository: None,
            m,
        })
        .collect()
}

/// The tokens of `request`'s snippet within `budget`: an editor's buffer
/// (a request with a `path`) reparsed from the parse kept for that path,
/// which is kept again for its next version; a snippet without a path
/// parsed once.
pub(crate) fn tokenize_request(
    scanner: &Scanner,
    buffers: &Buffers,
    request: &CheckRequest,
    budget: &Budget,
) -> Result<(Vec<Token>, SnippetDefinitions), Refusal> {
    let normalization = &scanner.config().normalization;
    let format = scanner.registry().get(request.format);
    match request.path.as_deref() {
        Some(path) => {
            let previous = buffers.take(path);
            let (tokens, parse) =
                tokenize_snippet_after(format, &request.code, normalization, previous, budget)
                    .map_err(Refusal::Parse)?;
            let definitions = parse.definitions(format, request.code.len());
            buffers.keep(path, parse);
            Ok((tokens, definitions))
        }
        None => tokenize_snippet_defined(format, &request.code, normalization, budget)
            .map(|(tokens, definitions)| (tokens, SnippetDefinitions::gathered(definitions)))
            .map_err(Refusal::Parse),
    }
}

/// The answer to `request` listing the first of `found` (matches in this
/// directory and, with a store, in other repositories) within the caps, in
/// the answer's order (docs/api.md): snippet line, longer first, this
/// directory's files before other repositories', file, codebase line.
/// `snippet` is the snippet's tokens, which the matches index, and its
/// definitions.
pub(crate) fn answer(
    request: &CheckRequest,
    (tokens, definitions): (&[Token], &SnippetDefinitions),
    mut found: Vec<Found>,
    store: Option<StoreStatus>,
    registry: &Registry,
) -> CheckAnswer {
    found.sort_by(|x, y| order(x).cmp(&order(y)));
    let statistics = SnippetStats::compute(&request.code, found.iter().map(|f| &f.m));
    let total = found.len();
    let fragment_lens = found
        .iter()
        .map(|f| f.file.fragment_len(f.m.run.b, f.m.run.b + f.m.run.len - 1));
    let listed = listed(fragment_lens);
    found.truncate(listed);
    let path = request.path.as_deref().unwrap_or_default();
    let format = &registry.get(request.format).name;
    // The snippet's definitions are needed only for the places listed.
    let none = Definitions::default();
    let definitions = if found.is_empty() {
        &none
    } else {
        definitions.get(registry.get(request.format))
    };
    let checked = Checked::new(&request.code, tokens, definitions);
    // Each file's text is read back once for the answer.
    let views = Views::default();
    let duplications = found
        .iter()
        .map(
            |Found {
                 file,
                 repository,
                 m,
             }| {
                let place = checked.place(path, format, m.snippet);
                let snippet = (tokens, request.code.as_str());
                let view = views.of(file);
                let m = m.clone();
                let mut d = Duplication::of_match(place, m, snippet, &view, registry, request.mode);
                d.other.repository = repository.as_ref().map(|r| r.to_string());
                d
            },
        )
        .collect();
    CheckAnswer {
        duplications,
        total,
        statistics,
        store,
    }
}

/// A match's place in the answer's order.
fn order(f: &Found) -> impl Ord + '_ {
    (
        f.m.snippet.start.line,
        std::cmp::Reverse(f.m.run.len),
        f.repository.as_deref(),
        f.file.path.as_str(),
        f.m.codebase.start.line,
        f.m.run.a,
        f.m.run.b,
    )
}

/// How many duplications, whose fragments have these lengths in order, an
/// answer lists: at most [`MAX_DUPLICATIONS`], while their fragments fit
/// [`MAX_FRAGMENT_BYTES`], and always the first.
pub(crate) fn listed(fragment_lens: impl Iterator<Item = usize>) -> usize {
    let mut bytes = 0;
    let mut count = 0;
    for len in fragment_lens.take(MAX_DUPLICATIONS) {
        bytes += len;
        if bytes > MAX_FRAGMENT_BYTES && count > 0 {
            break;
        }
        count += 1;
    }
    count
}

/// Memory one check may hold at most.
pub(crate) const MAX_CHECK_MEMORY: usize = 256 << 20;
/// Memory all running checks may hold together: one of the largest and
/// small ones beside it (bodies read while waiting come on top).
const CHECKS_MEMORY: usize = MAX_CHECK_MEMORY + MAX_CHECK_MEMORY / 2;
/// Bytes a check holds per byte of snippet besides its tree: the code, its
/// copy as parsed, leaves and tokens.
const CHECK_BYTES_PER_BYTE: usize = 10;
/// The least tree-sitter holds per byte of real code (12 on the benchmark
/// corpora): a snippet that leaves less room than this is refused unparsed.
const LEAST_TREE_PER_BYTE: usize = 8;
/// Checks that may wait for a turn before more are refused as busy.
const MAX_WAITING: usize = 256;
/// How long a check may wait for its turn before it is refused as busy.
const MAX_WAIT: Duration = Duration::from_secs(10);

/// What a check of `len` bytes takes from the memory pool: its parse's
/// budget and the rest, up to [`MAX_CHECK_MEMORY`].
pub(crate) fn estimate(len: usize) -> usize {
    parse::memory_for(len)
        .saturating_add(len.saturating_mul(CHECK_BYTES_PER_BYTE))
        .min(MAX_CHECK_MEMORY)
}

/// The budget of checking a snippet of `len` bytes: its parse may hold
/// what the check took from the pool, less what the rest of it holds.
pub(crate) fn budget_for(len: usize) -> Budget {
    let mut budget = Budget::for_snippet(len);
    budget.memory = estimate(len).saturating_sub(len.saturating_mul(CHECK_BYTES_PER_BYTE));
    budget
}

/// The budget of parsing texts of `len` bytes in all, one after another
/// (a diff's changed files): a file's time, plus its time per byte of them
/// all, and for each parse what the check took from the pool less what the
/// rest of it holds.
pub(crate) fn budget_for_files(len: usize) -> Budget {
    let mut budget = Budget::for_file(len);
    budget.memory = estimate(len).saturating_sub(len.saturating_mul(CHECK_BYTES_PER_BYTE));
    budget
}

/// The longest snippet a check has room for.
pub fn max_snippet_len() -> usize {
    (MAX_CHECK_MEMORY - parse::BASE_MEMORY) / (CHECK_BYTES_PER_BYTE + LEAST_TREE_PER_BYTE)
}

fn mb(bytes: usize) -> usize {
    bytes.div_ceil(1 << 20)
}

/// Decides when a check may run: a few at a time per core, within a memory
/// pool that each check takes its [`estimate`] of, a bounded queue for the
/// rest.
pub(crate) struct Admission {
    slots: Arc<Semaphore>,
    /// The pool, in MB.
    memory: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// A check's place; dropping it lets the next one in.
pub(crate) struct Admitted {
    slot: OwnedSemaphorePermit,
    memory: OwnedSemaphorePermit,
}

impl Admitted {
    /// Runs `io` (a wait on the network: the store's lookup) without the
    /// check's slot, which the next check may take meanwhile; the memory
    /// stays taken, as the check's tokens stay held. Afterwards the check
    /// waits for a slot again (as long as a check waits to be admitted);
    /// `Err(Refusal::Busy)` if none came, with what `io` gave.
    pub(crate) async fn waiting_on<T>(
        self,
        admission: &Admission,
        io: impl std::future::Future<Output = T>,
    ) -> (Result<Admitted, Refusal>, T) {
        let Admitted { slot, memory } = self;
        drop(slot);
        let out = io.await;
        let slot = tokio::time::timeout(MAX_WAIT, Arc::clone(&admission.slots).acquire_owned());
        let admitted = match slot.await {
            Ok(Ok(slot)) => Ok(Admitted { slot, memory }),
            _ => Err(Refusal::Busy),
        };
        (admitted, out)
    }
}

impl Admission {
    /// Room for two checks per core at a time.
    pub(crate) fn new(cores: usize) -> Admission {
        Admission {
            slots: Arc::new(Semaphore::new(2 * cores.max(1))),
            memory: Arc::new(Semaphore::new(mb(CHECKS_MEMORY))),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Waits for the turn of a check of `len` bytes; refuses it when it
    /// can never fit, or when too many wait or it waited too long.
    pub(crate) async fn admit(&self, len: usize) -> Result<Admitted, Refusal> {
        if len > max_snippet_len() {
            return Err(Refusal::TooLarge { len });
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Refusal::Busy);
        }
        let units = u32::try_from(mb(estimate(len))).unwrap_or(u32::MAX);
        let turn = async {
            let slot = Arc::clone(&self.slots).acquire_owned().await;
            let memory = Arc::clone(&self.memory).acquire_many_owned(units).await;
            match (slot, memory) {
                (Ok(slot), Ok(memory)) => Ok(Admitted { slot, memory }),
                _ => Err(Refusal::Busy),
            }
        };
        let admitted = tokio::time::timeout(MAX_WAIT, turn).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        admitted.unwrap_or(Err(Refusal::Busy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_list_the_first_duplications_within_the_caps() {
        assert_eq!(listed([10; 3].into_iter()), 3);
        assert_eq!(listed(std::iter::repeat_n(10, 5000)), MAX_DUPLICATIONS);
        let half = MAX_FRAGMENT_BYTES / 2;
        assert_eq!(listed([half, half, 1].into_iter()), 2);
        // The first is listed whatever its size.
        assert_eq!(listed([MAX_FRAGMENT_BYTES + 1, 1].into_iter()), 1);
        assert_eq!(listed(std::iter::empty()), 0);
    }

    #[test]
    fn a_check_never_takes_more_than_its_share_and_its_parse_gets_the_rest() {
        for len in [0, 1 << 10, 1 << 20, max_snippet_len()] {
            let budget = budget_for(len);
            assert!(estimate(len) <= MAX_CHECK_MEMORY, "{len}");
            assert!(budget.memory >= len * LEAST_TREE_PER_BYTE, "{len}");
            assert_eq!(budget.memory + len * CHECK_BYTES_PER_BYTE, estimate(len));
        }
    }

    #[tokio::test]
    async fn checks_over_the_memory_of_one_are_refused_and_the_pool_is_shared() {
        // Slots for eight: only memory holds the third back.
        let admission = Admission::new(4);
        assert_eq!(
            admission.admit(max_snippet_len() + 1).await.err(),
            Some(Refusal::TooLarge {
                len: max_snippet_len() + 1
            })
        );
        let big = admission.admit(max_snippet_len()).await.unwrap();
        let small = admission.admit(1 << 10).await.unwrap();
        // The pool is full: a second big check waits until the first ends.
        let second = admission.admit(max_snippet_len());
        tokio::pin!(second);
        assert!(poll_once(&mut second).await.is_none());
        drop(big);
        assert!(second.await.is_ok());
        drop(small);
    }

    #[tokio::test]
    async fn a_check_waiting_on_the_store_leaves_its_slot_to_the_next_and_keeps_its_memory() {
        // Slots for two, both taken.
        let admission = Admission::new(1);
        let first = admission.admit(1 << 10).await.unwrap();
        let big = admission.admit(max_snippet_len()).await.unwrap();
        let third = admission.admit(1 << 10);
        tokio::pin!(third);
        assert!(poll_once(&mut third).await.is_none());
        // While the big one waits on the network, the third check runs; the
        // big one's memory is still taken, so no other big check fits.
        let lookup = async {
            let third = third.await.unwrap();
            let other = admission.admit(max_snippet_len());
            tokio::pin!(other);
            assert!(poll_once(&mut other).await.is_none());
            drop(third);
            "rows"
        };
        let (big, rows) = big.waiting_on(&admission, lookup).await;
        assert_eq!(rows, "rows");
        // The slot the third check left is the big one's again.
        let big = big.unwrap();
        assert_eq!(admission.slots.available_permits(), 0);
        drop((first, big));
        assert_eq!(admission.slots.available_permits(), 2);
    }

    /// Polls `future` once: `None` while it is pending.
    async fn poll_once<F: std::future::Future + Unpin>(future: &mut F) -> Option<F::Output> {
        tokio::select! {
            biased;
            out = future => Some(out),
            () = std::future::ready(()) => None,
        }
    }
}
