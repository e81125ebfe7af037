//! Checks across repositories: the part of a check that the store answers
//! (issue 30; docs/store.md, "Checks").
//!
//! In: a check's [`Local`] part (its tokens), the request and the
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

use crate::engine::fingerprint::Winnow;
use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::engine::index::{fingerprints, FileMeta, Index, SourceFile, SEED_TOKENS};
use crate::engine::matching::Exclusions;
use crate::project::config::Config;
use crate::service::check::{budget_for, request_matches, CheckRequest, Found, Local, Refusal};
use crate::store::lookup::{self, Query};

/// What the store is asked for the check `request`, whose local part is
/// `local`: the hashes of its fingerprints (winnowed as the index is) and,
/// when it asks for near-miss copies, of its seeds.
pub(crate) fn query(
    local: &Local,
    request: &CheckRequest,
    registry: &Registry,
    winnow: Winnow,
    settings_key: u64,
    own: &str,
) -> Query {
    let hashes = |winnow: Winnow| -> Vec<u64> {
        fingerprints(&local.tokens, winnow)
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
    }
}

/// The matches of the check `request` (tokenized as `local.tokens`) in the
/// store's files `found`, each with its repository. A file of a format
/// this dupcheck does not know is left out.
pub(crate) fn matches(
    found: lookup::Found,
    local: &Local,
    request: &CheckRequest,
    config: &Config,
    registry: &Registry,
    winnow: Winnow,
) -> Result<Vec<Found>, Refusal> {
    let mut repositories: Vec<Arc<str>> = Vec::new();
    let mut files = Vec::with_capacity(found.files.len());
    // Each file's repository, by the file's address: the index orders its
    // files by path, not by repository.
    let mut repository_of: HashMap<*const SourceFile, Arc<str>> = HashMap::default();
    for candidate in found.files {
        let Some(format) = registry.lookup(&candidate.format) else {
            continue;
        };
        if repositories.last().map(|r| &**r) != Some(candidate.repository.as_str()) {
            repositories.push(Arc::from(candidate.repository.as_str()));
        }
        let file = Arc::new(SourceFile::with_tokens(
            candidate.path.clone(),
            candidate.path,
            format,
            candidate.text,
            candidate.tokens,
            FileMeta::default(),
        ));
        let repository = repositories.last().expect("pushed above");
        repository_of.insert(Arc::as_ptr(&file), Arc::clone(repository));
        files.push(file);
    }
    let index = Index::build(files, registry, winnow);
    let exclude = Exclusions {
        capped_fingerprints: &found.capped_fingerprints,
        capped_seeds: &found.capped_seeds,
        ..Exclusions::default()
    };
    let format = registry.get(request.format);
    let budget = budget_for(request.code.len());
    let matches = request_matches(
        &index,
        format,
        request,
        &local.tokens,
        config,
        exclude,
        &budget,
    )?;
    Ok(matches
        .into_iter()
        .map(|m| {
            let file = Arc::clone(&index.files[m.file as usize]);
            let repository = repository_of.get(&Arc::as_ptr(&file)).cloned();
            Found {
                file,
                repository,
                m,
            }
        })
        .collect())
}
