//! Checks across repositories: the part of a check that the store answers
//! (issue 30; docs/store.md, "Checks").
//!
//! In: a check's tokens, the request and the
//! configuration. Out: the [`Query`] the store is asked ([`query`]: the
//! snippet's fingerprints and, for near-miss copies, seeds), then, from
//! the files it gives back, the check's matches in them ([`matches`]),
//! each with its repository, ready to merge with the directory's own.
//!
//! The store's files are matched exactly as a directory's are: they are
//! indexed (a small index of just those files) and the same
//! [`request_matches`] runs on it, skipping the hashes the store found in
//! more places than a lookup takes. So a snippet gets from the store the
//! duplications, lines and fragments a server over those repositories'
//! files would give.
//!
//! Invariant: a check's lookup never reads the asking repository's own
//! copy in the store (its live index is newer).

use std::sync::Arc;
use std::time::Duration;

use crate::engine::fingerprint::Winnow;
use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::engine::index::{fingerprints, Index, SourceFile, Views, SEED_TOKENS};
use crate::engine::matching::Exclusions;
use crate::engine::parse::Budget;
use crate::engine::tokens::Tokens;
use crate::project::config::Config;
use crate::service::answer::{Duplication, Place};
use crate::service::check::budget_for_files;
use crate::service::check::{budget_for, request_matches, CheckRequest, Found, Refusal};
use crate::store::live::Live;
use crate::store::lookup::{self, Query};
use crate::store::StoreError;

/// The store as checks read it: the connection, and what a lookup says
/// of this directory.
pub(crate) struct Store {
    /// The connection (made on first use, again after it breaks).
    pub live: Arc<Live>,
    /// This repository's name: its own copy in the store is never read.
    pub own: String,
    /// The settings key this directory's tokens are made with.
    pub settings_key: u64,
}

impl Store {
    /// The store `live` as `config`'s directory reads it: its repository
    /// (`--repository`, else the default name) and settings key.
    pub(crate) fn of(live: Arc<Live>, config: &Config) -> Store {
        Store {
            live,
            own: config
                .repository
                .clone()
                .unwrap_or_else(|| crate::store::repository::default_name(&config.dir)),
            settings_key: crate::project::cache::key_of(config),
        }
    }
}

/// What the store is asked for the check `request`, tokenized as
/// `tokens`: the hashes of its fingerprints (winnowed as the index is) and,
/// when it asks for near-miss copies, of its seeds.
pub(crate) fn query(
    tokens: &(impl Tokens + ?Sized),
    request: &CheckRequest,
    registry: &Registry,
    winnow: Winnow,
    settings_key: u64,
    own: &str,
) -> Query {
    let hashes = |winnow: Winnow| -> Vec<u64> {
        fingerprints(tokens, winnow)
            .iter()
            .map(|f| f.hash)
            .collect()
    };
    Query {
        settings_key,
        family: registry.get(request.format).family_id,
        own: own.to_owned(),
        fingerprints: hashes(winnow),
        seeds: if request.near_miss {
            hashes(Winnow::for_min_tokens(SEED_TOKENS))
        } else {
            Vec::new()
        },
        max_files: lookup::MAX_CANDIDATES,
        winnow,
    }
}

/// The store's files `found`, indexed as a directory's are, with each
/// file's repository. A file of a format this dupcheck does not know is
/// left out.
pub(crate) struct StoreIndex {
    /// The files.
    pub index: Index,
    /// Each file's repository, by the file's address: the index orders
    /// its files by path, not by repository.
    repository_of: HashMap<*const SourceFile, Arc<str>>,
    /// The hashes the lookup found in more places than it takes.
    capped_fingerprints: Vec<u64>,
    capped_seeds: Vec<u64>,
}

impl StoreIndex {
    /// The index of `found`'s files.
    pub(crate) fn of(found: lookup::Found, registry: &Registry, winnow: Winnow) -> StoreIndex {
        let repository_of = found
            .files
            .iter()
            .map(|c| (Arc::as_ptr(&c.file), Arc::clone(&c.repository)))
            .collect();
        // Only the prints a match looks up: a candidate file is whole, the
        // snippet a few lines of it.
        let asked = &found.asked;
        let files = found
            .files
            .into_iter()
            .map(|c| (c.file, c.prints.only(asked)))
            .collect();
        StoreIndex {
            index: Index::with_prints(files, registry, winnow),
            repository_of,
            capped_fingerprints: found.capped_fingerprints,
            capped_seeds: found.capped_seeds,
        }
    }

    /// What a match in these files excludes: the hashes the lookup found
    /// in more places than it takes.
    pub(crate) fn exclusions(&self) -> Exclusions<'_> {
        Exclusions {
            capped_fingerprints: &self.capped_fingerprints,
            capped_seeds: &self.capped_seeds,
            ..Exclusions::default()
        }
    }

    /// The repository of `file`, one of these files.
    pub(crate) fn repository_of(&self, file: &Arc<SourceFile>) -> Option<Arc<str>> {
        self.repository_of.get(&Arc::as_ptr(file)).cloned()
    }

    /// The matches of `request` (tokenized as `tokens`) in these files,
    /// each with its repository, within `budget`.
    pub(crate) fn matches(
        &self,
        tokens: &(impl Tokens + ?Sized),
        request: &CheckRequest,
        config: &Config,
        registry: &Registry,
        budget: &Budget,
    ) -> Result<Vec<Found>, Refusal> {
        let format = registry.get(request.format);
        let exclude = self.exclusions();
        let matches = request_matches(
            &self.index,
            format,
            request,
            tokens,
            config,
            exclude,
            budget,
        )?;
        Ok(matches
            .into_iter()
            .map(|m| {
                let file = Arc::clone(&self.index.files[m.file as usize]);
                let repository = self.repository_of(&file);
                Found {
                    file,
                    repository,
                    m,
                }
            })
            .collect())
    }
}

/// The matches of the check `request` (tokenized as `tokens`) in the
/// store's files `found`, each with its repository.
pub(crate) fn matches(
    found: lookup::Found,
    tokens: &(impl Tokens + ?Sized),
    request: &CheckRequest,
    config: &Config,
    registry: &Registry,
    winnow: Winnow,
) -> Result<Vec<Found>, Refusal> {
    let budget = budget_for(request.code.len());
    StoreIndex::of(found, registry, winnow).matches(tokens, request, config, registry, &budget)
}

/// Hashes asked of the store in one of a report's lookups at most: a
/// report asks for its files in batches.
const REPORT_HASHES: usize = 50_000;
/// Files one of a report's lookups fetches at most.
const REPORT_FILES: usize = 20_000;
/// How long one of a report's lookups may take.
const REPORT_DEADLINE: Duration = Duration::from_secs(120);

/// What `dupcheck report --store` adds to a report.
#[derive(Debug, Default)]
pub(crate) struct Elsewhere {
    /// The clones between this directory's files and other repositories':
    /// this directory's place first, the other quoted.
    pub clones: Vec<Duplication>,
    /// Files of other repositories that share code with this directory's
    /// but were not compared (more than a lookup fetches).
    pub skipped_files: usize,
    /// This directory's files whose comparison ran out of time.
    pub unchecked: Vec<String>,
}

/// The clones between `index`'s files and the files of every other
/// repository in `store` (in `config`'s mode, with its thresholds), each
/// file compared as a check compares a snippet.
pub(crate) async fn clones_elsewhere(
    store: &Store,
    index: &Index,
    config: &Config,
    registry: &Registry,
) -> Result<Elsewhere, StoreError> {
    let winnow = index.winnow;
    let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
    let mut elsewhere = Elsewhere::default();
    // Batches of files of one family, each at most REPORT_HASHES hashes.
    let mut files: Vec<&Arc<SourceFile>> = index.files.iter().collect();
    files.sort_by_key(|f| f.family);
    let mut batch: Vec<(&Arc<SourceFile>, Vec<u64>, Vec<u64>)> = Vec::new();
    let mut hashes = 0;
    for (i, file) in files.iter().enumerate() {
        let prints: Vec<u64> = fingerprints(&file.tokens, winnow)
            .iter()
            .map(|f| f.hash)
            .collect();
        let seeds: Vec<u64> = if config.near_miss {
            fingerprints(&file.tokens, seed_winnow)
                .iter()
                .map(|f| f.hash)
                .collect()
        } else {
            Vec::new()
        };
        hashes += prints.len() + seeds.len();
        batch.push((file, prints, seeds));
        let last = i + 1 == files.len();
        if last || hashes >= REPORT_HASHES || files[i + 1].family != file.family {
            compare(store, &batch, config, registry, winnow, &mut elsewhere).await?;
            batch.clear();
            hashes = 0;
        }
    }
    Ok(elsewhere)
}

/// Compares one batch of files (of one family, each with its fingerprints
/// and seeds) with the store's, adding what it finds to `elsewhere`.
async fn compare(
    store: &Store,
    batch: &[(&Arc<SourceFile>, Vec<u64>, Vec<u64>)],
    config: &Config,
    registry: &Registry,
    winnow: Winnow,
    elsewhere: &mut Elsewhere,
) -> Result<(), StoreError> {
    let Some((first, _, _)) = batch.first() else {
        return Ok(());
    };
    let query = Query {
        settings_key: store.settings_key,
        family: first.family,
        own: store.own.clone(),
        fingerprints: batch.iter().flat_map(|b| b.1.iter().copied()).collect(),
        seeds: batch.iter().flat_map(|b| b.2.iter().copied()).collect(),
        max_files: REPORT_FILES,
        winnow,
    };
    let found = store
        .live
        .lookup_within(&query, registry, REPORT_DEADLINE)
        .await?;
    elsewhere.skipped_files += found.skipped;
    if found.files.is_empty() {
        return Ok(());
    }
    let others = StoreIndex::of(found, registry, winnow);
    for (file, _, _) in batch {
        let view = file.view();
        let text = view.text();
        let request = CheckRequest {
            code: text.to_string(),
            format: file.format,
            path: Some(file.rel.clone()),
            mode: config.mode,
            near_miss: config.near_miss,
        };
        let budget = budget_for_files(file.text.len());
        let Ok(found) = others.matches(&file.tokens, &request, config, registry, &budget) else {
            elsewhere.unchecked.push(file.rel.clone());
            continue;
        };
        // Each file's text is read back once for this file's places.
        let views = Views::default();
        for Found {
            file: other,
            repository,
            m,
        } in &found
        {
            let place = Place::unquoted(&view, registry, m.snippet);
            let snippet = (&file.tokens, text);
            let other = views.of(other);
            let m = m.clone();
            let mut d = Duplication::of_match(place, m, snippet, &other, registry, config.mode);
            d.other.repository = repository.as_ref().map(|r| r.to_string());
            elsewhere.clones.push(d);
        }
    }
    Ok(())
}

/// The store's files that the files `files` (of `winnow`'s index) may
/// match, one lookup per format family, each by `look_up` (which reaches
/// the store; a diff check blocks on it): per family, its index, and the
/// candidate files not fetched; or the store's failure.
pub(crate) fn store_indexes(
    files: &[&SourceFile],
    store: &Store,
    near_miss: bool,
    registry: &Registry,
    winnow: Winnow,
    look_up: &dyn Fn(Query) -> Result<lookup::Found, StoreError>,
) -> Result<(Vec<(usize, StoreIndex)>, usize), StoreError> {
    let mut families: Vec<usize> = files.iter().map(|f| f.family).collect();
    families.sort_unstable();
    families.dedup();
    let mut indexes = Vec::with_capacity(families.len());
    let mut skipped = 0;
    for family in families {
        let hashes = |winnow: Winnow| -> Vec<u64> {
            files
                .iter()
                .filter(|f| f.family == family)
                .flat_map(|f| fingerprints(&f.tokens, winnow))
                .map(|f| f.hash)
                .collect()
        };
        let query = Query {
            settings_key: store.settings_key,
            family,
            own: store.own.clone(),
            fingerprints: hashes(winnow),
            seeds: if near_miss {
                hashes(Winnow::for_min_tokens(SEED_TOKENS))
            } else {
                Vec::new()
            },
            max_files: lookup::MAX_CANDIDATES,
            winnow,
        };
        let found = look_up(query)?;
        skipped += found.skipped;
        indexes.push((family, StoreIndex::of(found, registry, winnow)));
    }
    Ok((indexes, skipped))
}
