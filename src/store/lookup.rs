//! A check's lookup in the store ([`lookup`]): the files of other
//! repositories that share a snippet's fingerprints or seeds, with their
//! text and tokens, so that the check matches them as it matches its own
//! directory's index.
//!
//! In: a [`Query`] (the snippet's hashes, its format family, the settings
//! key its tokens were made with, and the repository asking, whose own
//! copy is never read: its live index is newer). Out: [`Found`], the
//! candidate files (one per repository and path) and the hashes that occur
//! in more places than a local index would look up ([`POSTING_CAP`],
//! [`SEED_CAP`]): a check skips those, as it does locally.
//!
//! At most two round trips, each one statement prepared once per
//! connection ([`Prepared`]): the postings of the hashes, counted by content and current
//! copy; then, for what the server has not [`Kept`], those contents'
//! places, texts and tokens in the copies the first saw. A server that
//! has seen the candidates makes one.
//!
//! Invariants: a lookup reads one complete copy of each repository: the
//! second statement reads only the copies the first saw current (a copy's
//! files never change), and when a copy was collected between the two
//! (a publish and its `gc` ran meanwhile) the lookup starts again once,
//! then fails ([`StoreError::Query`]) rather than answer from half a
//! copy. At most [`Query::max_files`] contents are fetched: those sharing
//! the most hashes with the snippet; the rest are counted in
//! [`Found::skipped`].

use tokio_postgres::types::Type;
use tokio_postgres::{Client, Statement};

use std::sync::Arc;

use super::codec;
use super::error::StoreError;
use super::kept::{Content, Kept};
use crate::engine::definitions::Definitions;
use crate::engine::fingerprint::Winnow;
use crate::engine::grammar::Registry;
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::index::{FileMeta, FilePrints, SourceFile};
use crate::engine::runs::{POSTING_CAP, SEED_CAP};
use crate::engine::tokens::Token;

/// Contents fetched for one check at most (its [`Query::max_files`]).
pub const MAX_CANDIDATES: usize = 2000;

/// What a check asks the store.
#[derive(Debug, Clone)]
pub struct Query {
    /// The settings key its tokens were made with
    /// (`project::cache::key_of`): only copies made with it are read.
    pub settings_key: u64,
    /// Its format family.
    pub family: usize,
    /// The repository asking: its own copy is not read.
    pub own: String,
    /// Its fingerprints' hashes.
    pub fingerprints: Vec<u64>,
    /// Its seeds' hashes (near-miss detection), or none.
    pub seeds: Vec<u64>,
    /// Contents fetched at most: [`MAX_CANDIDATES`] for a check.
    pub max_files: usize,
    /// The winnowing of its fingerprints (the settings key's), which the
    /// prints of the files found are made with.
    pub winnow: Winnow,
}

/// What the store holds for a [`Query`].
#[derive(Debug, Default)]
pub struct Found {
    /// The candidate files, by repository and path.
    pub files: Vec<Candidate>,
    /// Fingerprint hashes with more than [`POSTING_CAP`] places, sorted.
    pub capped_fingerprints: Vec<u64>,
    /// Seed hashes with more than [`SEED_CAP`] places, sorted.
    pub capped_seeds: Vec<u64>,
    /// Candidate contents not fetched ([`Query::max_files`]).
    pub skipped: usize,
    /// The query's hashes (fingerprints and seeds): all a match in the
    /// files looks up.
    pub asked: HashSet<u64>,
}

/// One file of another repository.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its repository's name.
    pub repository: Arc<str>,
    /// The file, at its path in that repository.
    pub file: Arc<SourceFile>,
    /// Its fingerprints and seeds.
    pub prints: Arc<FilePrints>,
}

/// What the postings say of one content.
#[derive(Debug, Default)]
struct Holder {
    /// The current copies holding it.
    copies: HashSet<i64>,
    /// The query's hashes it holds, by kind (0 a fingerprint, 1 a seed).
    hashes: Vec<(i16, u64)>,
}

/// The postings of a query's hashes in the current copies of every other
/// repository made with its settings: per hash, kind, content and copy,
/// how many places (postings times the content's paths in the copy). The
/// postings are counted first, then each distinct content's copies are
/// looked up once (not once a posting: a candidate file shares most of
/// its hashes with the snippet).
const POSTINGS: &str = "\
WITH p AS MATERIALIZED ( \
    SELECT hash, kind, content, count(*) AS n FROM postings \
    WHERE family = $1 AND hash = ANY($2) GROUP BY hash, kind, content), \
placed AS ( \
    SELECT f.content, f.copy, count(*) AS paths FROM copy_files f \
    JOIN repositories r ON r.current_copy = f.copy \
    JOIN copies c ON c.id = f.copy \
    WHERE f.content IN (SELECT DISTINCT content FROM p) \
    AND c.settings_key = $3 AND r.name <> $4 \
    GROUP BY f.content, f.copy) \
SELECT p.hash, p.kind, p.content, placed.copy, p.n * placed.paths \
FROM p JOIN placed ON placed.content = p.content";

/// The places of contents in the copies given, with the texts and tokens
/// of those asked for (others' are not read from their TOAST tables).
const CONTENTS: &str = "\
SELECT f.content, f.copy, r.name, f.path, \
CASE WHEN f.content = ANY($3) THEN c.format END, \
CASE WHEN f.content = ANY($3) THEN c.text END, \
CASE WHEN f.content = ANY($3) THEN c.tokens END, \
CASE WHEN f.content = ANY($3) THEN c.definitions END \
FROM copy_files f \
JOIN contents c ON c.id = f.content \
JOIN copies k ON k.id = f.copy \
JOIN repositories r ON r.id = k.repository \
WHERE f.content = ANY($1) AND f.copy = ANY($2)";

/// A check's two statements, prepared once per connection: a check then
/// costs the server no parsing, and after a few runs, no planning.
#[derive(Default)]
pub struct Prepared {
    postings: tokio::sync::OnceCell<Statement>,
    contents: tokio::sync::OnceCell<Statement>,
}

impl Prepared {
    /// The postings statement, prepared on `client` if need be.
    async fn postings(&self, client: &Client) -> Result<&Statement, StoreError> {
        self.postings
            .get_or_try_init(|| {
                client.prepare_typed(
                    POSTINGS,
                    &[Type::INT2, Type::INT8_ARRAY, Type::INT8, Type::TEXT],
                )
            })
            .await
            .map_err(StoreError::query("prepare the lookup of fingerprints"))
    }

    /// The contents statement, prepared on `client` if need be.
    async fn contents(&self, client: &Client) -> Result<&Statement, StoreError> {
        self.contents
            .get_or_try_init(|| {
                client.prepare_typed(
                    CONTENTS,
                    &[Type::INT8_ARRAY, Type::INT8_ARRAY, Type::INT8_ARRAY],
                )
            })
            .await
            .map_err(StoreError::query("prepare the lookup of files"))
    }
}

/// The files of other repositories that `query` may match, those `kept`
/// from earlier lookups not read again; their formats from `registry`.
pub async fn lookup(
    client: &Client,
    prepared: &Prepared,
    query: &Query,
    kept: &Kept,
    registry: &Registry,
) -> Result<Found, StoreError> {
    match lookup_once(client, prepared, query, kept, registry).await? {
        Some(found) => Ok(found),
        // A copy was collected between the two statements: the next
        // attempt sees the copy that replaced it.
        None => lookup_once(client, prepared, query, kept, registry)
            .await?
            .ok_or_else(|| StoreError::Query {
                what: "read the candidate files".into(),
                reason: "their copies were replaced twice during the check".into(),
            }),
    }
}

/// One attempt of [`lookup`]: `None` when a copy the postings named was
/// gone when its files were read.
async fn lookup_once(
    client: &Client,
    prepared: &Prepared,
    query: &Query,
    kept: &Kept,
    registry: &Registry,
) -> Result<Option<Found>, StoreError> {
    if query.fingerprints.is_empty() && query.seeds.is_empty() {
        return Ok(Some(Found::default()));
    }
    let fingerprints: HashSet<u64> = query.fingerprints.iter().copied().collect();
    let seeds: HashSet<u64> = query.seeds.iter().copied().collect();
    let hashes: Vec<i64> = fingerprints
        .iter()
        .chain(&seeds)
        .map(|&h| h as i64)
        .collect::<HashSet<i64>>()
        .into_iter()
        .collect();
    let what = "look up the snippet's fingerprints";
    let rows = client
        .query(
            prepared.postings(client).await?,
            &[
                &(query.family as i16),
                &hashes,
                &(query.settings_key as i64),
                &query.own,
            ],
        )
        .await
        .map_err(StoreError::query(what))?;
    // Places per (kind, hash); per content, the copies holding it and the
    // query's hashes it holds.
    let mut places: HashMap<(i16, u64), i64> = HashMap::default();
    let mut holders: HashMap<i64, Holder> = HashMap::default();
    for row in &rows {
        let (hash, kind, content, copy, count): (i64, i16, i64, i64, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        let hash = hash as u64;
        let asked = match kind {
            0 => fingerprints.contains(&hash),
            1 => seeds.contains(&hash),
            _ => false,
        };
        if !asked {
            continue;
        }
        *places.entry((kind, hash)).or_default() += count;
        let holder = holders.entry(content).or_default();
        holder.copies.insert(copy);
        holder.hashes.push((kind, hash));
    }
    let capped = |kind: i16, cap: usize| {
        let mut hashes: Vec<u64> = places
            .iter()
            .filter(|(&(k, _), &n)| k == kind && n > cap as i64)
            .map(|(&(_, hash), _)| hash)
            .collect();
        hashes.sort_unstable();
        hashes
    };
    let capped_fingerprints = capped(0, POSTING_CAP);
    let capped_seeds = capped(1, SEED_CAP);
    let is_capped = |&(kind, hash): &(i16, u64)| match kind {
        0 => capped_fingerprints.binary_search(&hash).is_ok(),
        _ => capped_seeds.binary_search(&hash).is_ok(),
    };
    // Contents reached through a hash the check looks up, those sharing
    // the most first.
    let mut candidates: Vec<(usize, i64)> = holders
        .iter()
        .map(|(&content, holder)| {
            let useful = holder.hashes.iter().filter(|h| !is_capped(h)).count();
            (useful, content)
        })
        .filter(|&(useful, _)| useful > 0)
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    let skipped = candidates.len().saturating_sub(query.max_files);
    candidates.truncate(query.max_files);
    let contents: Vec<i64> = candidates.iter().map(|&(_, content)| content).collect();
    let mut expected: HashSet<(i64, i64)> = HashSet::default();
    for content in &contents {
        for &copy in &holders[content].copies {
            expected.insert((*content, copy));
        }
    }
    let mut found = Found {
        files: Vec::new(),
        capped_fingerprints,
        capped_seeds,
        skipped,
        asked: fingerprints.union(&seeds).copied().collect(),
    };
    if contents.is_empty() {
        return Ok(Some(found));
    }
    // What is kept answers; the rest is asked for: the texts of contents
    // not kept, the paths of pairs not kept.
    let missing: Vec<i64> = contents
        .iter()
        .copied()
        .filter(|&id| kept.content(id).is_none())
        .collect();
    let not_kept: HashSet<i64> = missing.iter().copied().collect();
    let asked: HashSet<(i64, i64)> = expected
        .iter()
        .copied()
        .filter(|&(id, copy)| not_kept.contains(&id) || kept.places(id, copy).is_none())
        .collect();
    let mut fetched: HashMap<i64, Arc<Content>> = HashMap::default();
    let mut placed: HashMap<(i64, i64), (Vec<String>, Arc<str>)> = HashMap::default();
    if !asked.is_empty() {
        let ids: Vec<i64> = asked
            .iter()
            .map(|&(id, _)| id)
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let copies: Vec<i64> = asked
            .iter()
            .map(|&(_, copy)| copy)
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let what = "read the candidate files";
        let rows = client
            .query(prepared.contents(client).await?, &[&ids, &copies, &missing])
            .await
            .map_err(StoreError::query(what))?;
        for row in &rows {
            let (id, copy): (i64, i64) = (row.get(0), row.get(1));
            let (repository, path): (String, String) = (row.get(2), row.get(3));
            let entry = placed
                .entry((id, copy))
                .or_insert_with(|| (Vec::new(), Arc::from(repository.as_str())));
            entry.0.push(path.clone());
            let (Some(format), Some(text), Some(bytes)) = (
                row.get::<_, Option<String>>(4),
                row.get::<_, Option<String>>(5),
                row.get::<_, Option<&[u8]>>(6),
            ) else {
                continue;
            };
            if fetched.contains_key(&id) {
                continue;
            }
            let tokens = codec::decode(bytes)
                .filter(|tokens| within(tokens, &text))
                .ok_or_else(|| StoreError::Query {
                    what: what.into(),
                    reason: format!("the tokens of content {id} do not decode to its text"),
                })?;
            // Contents written before the store kept definitions name none.
            let definitions = match row.get::<_, Option<&[u8]>>(7) {
                None => Definitions::default(),
                Some(bytes) => {
                    codec::decode_definitions(bytes, text.len() as u64).ok_or_else(|| {
                        StoreError::Query {
                            what: what.into(),
                            reason: format!("the definitions of content {id} do not fit its text"),
                        }
                    })?
                }
            };
            // A format this dupcheck does not know is no candidate.
            let Some(format) = registry.lookup(&format) else {
                continue;
            };
            let file = SourceFile::with_tokens(
                path.clone(),
                path,
                format,
                text,
                tokens,
                FileMeta::default(),
            )
            .with_definitions(definitions);
            let prints = FilePrints::of(&file.tokens, query.winnow);
            let content = Arc::new(Content {
                file: Arc::new(file),
                prints: Arc::new(prints),
            });
            kept.keep_content(id, Arc::clone(&content));
            fetched.insert(id, content);
        }
        if !asked.iter().all(|pair| placed.contains_key(pair)) {
            return Ok(None);
        }
        for (&(id, copy), (paths, repository)) in &placed {
            kept.keep_places(id, copy, Arc::from(paths.clone()), Arc::clone(repository));
        }
    }
    for &(id, copy) in &expected {
        let content = fetched.get(&id).cloned().or_else(|| kept.content(id));
        let Some(content) = content else {
            // Of a format this dupcheck does not know.
            continue;
        };
        let (paths, repository): (Vec<String>, Arc<str>) = match placed.get(&(id, copy)) {
            Some((paths, repository)) => (paths.clone(), Arc::clone(repository)),
            None => match kept.places(id, copy) {
                Some((paths, repository)) => (paths.to_vec(), repository),
                None => return Ok(None),
            },
        };
        for path in paths {
            let file = if content.file.path == path {
                Arc::clone(&content.file)
            } else {
                // The same content at another path: its own file.
                let same = &content.file;
                Arc::new(SourceFile {
                    path: path.clone(),
                    rel: path,
                    format: same.format,
                    family: same.family,
                    text: same.text.clone(),
                    lines: same.lines.clone(),
                    tokens: same.tokens.clone(),
                    meta: same.meta,
                    definitions: same.definitions.clone(),
                })
            };
            found.files.push(Candidate {
                repository: Arc::clone(&repository),
                file,
                prints: Arc::clone(&content.prints),
            });
        }
    }
    found
        .files
        .sort_unstable_by(|a, b| (&a.repository, &a.file.path).cmp(&(&b.repository, &b.file.path)));
    Ok(Some(found))
}

/// Whether every token of `tokens` lies on character boundaries of `text`
/// (a store is not trusted more than the cache is).
fn within(tokens: &[Token], text: &str) -> bool {
    tokens.iter().all(|t| {
        let (start, end) = (t.start as usize, t.end() as usize);
        start <= end && text.is_char_boundary(start) && text.is_char_boundary(end)
    })
}
