//! `dupcheck publish`: makes the store's copy of one repository equal to
//! a scan of it ([`publish`]).
//!
//! In: a connection to the primary, the repository's name, the scan's
//! files and the settings key that made their tokens. Out: a [`Summary`]
//! (files and lines written, reused, removed).
//!
//! Steps: the repository's lock (a session advisory lock: a second publish
//! of it fails at once with [`StoreError::Busy`]) and a shared hold of the
//! collector's lock (so `store gc` never removes a content between its
//! insertion and the copy that uses it); the contents the store lacks,
//! inserted in batches, each batch with its postings in one transaction;
//! then one transaction that writes the new copy and its files and points
//! the repository at it. A tree equal to the current copy writes no copy.
//!
//! Invariant: a check sees the previous copy or the new one, whole, never
//! a mix: the copy becomes current in the transaction that writes it. A
//! publish killed at any moment leaves the previous copy current; the
//! contents it wrote are used by no copy, never read, and removed by the
//! next `gc`.

use std::sync::Arc;

use tokio_postgres::Client;

use super::codec;
use super::error::StoreError;
use crate::engine::fingerprint::Winnow;
use crate::engine::grammar::Registry;
use crate::engine::hash::HashMap;
use crate::engine::index::{fingerprints, SourceFile, SEED_TOKENS};

/// The lock `store gc` holds alone and every publish shares.
pub(crate) const GC_LOCK: i64 = 0x6475_7063_6865_636b; // "dupcheck"

/// At most this much text goes in one batch of contents.
const BATCH_BYTES: usize = 8 << 20;
/// At most this many files go in one batch of contents.
const BATCH_FILES: usize = 2000;
/// At most this many hashes are looked up in one statement.
const LOOKUP_HASHES: usize = 20_000;

/// What a publish did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files (and their lines) whose content the store did not have.
    pub written: Counts,
    /// Files whose content the store had.
    pub reused: Counts,
    /// Files of the previous copy that the new one does not hold.
    pub removed: Counts,
    /// Whether the tree equals the current copy (nothing was written).
    pub unchanged: bool,
}

/// A number of files and of their lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Files.
    pub files: u64,
    /// Their lines.
    pub lines: u64,
}

impl Counts {
    fn add(&mut self, lines: u64) {
        self.files += 1;
        self.lines += lines;
    }
}

/// Where a publish may be paused, for the tests that kill it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    /// After the first batch of contents is committed.
    Contents,
    /// In the last transaction, the new copy written but not yet current.
    Commit,
}

/// One file as a copy holds it.
struct Entry<'a> {
    file: &'a SourceFile,
    format: &'a str,
    lines: u64,
}

/// A content's identity in the store (with the settings key).
type ContentKey = (i64, String);

/// What one publish writes: a scan of one repository.
pub struct Publication<'a> {
    /// The repository's name (validated).
    pub repository: &'a str,
    /// The index cache's key of the scan's settings: what made its tokens.
    pub settings_key: u64,
    /// The scan's files.
    pub files: &'a [Arc<SourceFile>],
    /// The formats they are of.
    pub registry: &'a Registry,
    /// The winnowing of the scan's fingerprints.
    pub winnow: Winnow,
}

/// What a publish tells as it goes.
pub struct Hooks<'a> {
    /// Receives a progress line now and then.
    pub progress: &'a dyn Fn(String),
    /// When the tests ask, called at that point; returns when the publish
    /// may go on.
    pub pause: Option<(Pause, &'a dyn Fn(Pause))>,
}

/// Publishes `publication` as the current copy of its repository.
pub async fn publish(
    client: &mut Client,
    publication: &Publication<'_>,
    hooks: &Hooks<'_>,
) -> Result<Summary, StoreError> {
    super::schema::check(client).await?;
    let repository = publication.repository;
    let lock = repository_lock(repository);
    let locked: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&lock])
        .await
        .map_err(StoreError::query("lock the repository"))?
        .get(0);
    if !locked {
        return Err(StoreError::Busy(repository.to_owned()));
    }
    client
        .execute("SELECT pg_advisory_lock_shared($1)", &[&GC_LOCK])
        .await
        .map_err(StoreError::query("lock the repository"))?;
    let done = publish_locked(client, publication, hooks).await;
    // The locks go with the session too, if this fails.
    let _ = client.execute("SELECT pg_advisory_unlock_all()", &[]).await;
    done
}

/// [`publish`] once the locks are held.
async fn publish_locked(
    client: &mut Client,
    publication: &Publication<'_>,
    hooks: &Hooks<'_>,
) -> Result<Summary, StoreError> {
    let Publication {
        repository,
        files,
        registry,
        winnow,
        ..
    } = *publication;
    let key = publication.settings_key as i64;
    let (progress, pause) = (hooks.progress, hooks.pause);
    let what = "register the repository";
    client
        .execute(
            "INSERT INTO repositories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&repository],
        )
        .await
        .map_err(StoreError::query(what))?;
    let row = client
        .query_one(
            "SELECT r.id, r.current_copy, c.settings_key FROM repositories r \
             LEFT JOIN copies c ON c.id = r.current_copy WHERE r.name = $1",
            &[&repository],
        )
        .await
        .map_err(StoreError::query(what))?;
    let (repository_id, current, current_key): (i64, Option<i64>, Option<i64>) =
        (row.get(0), row.get(1), row.get(2));
    let entries: Vec<Entry> = files
        .iter()
        .map(|file| Entry {
            file,
            format: &registry.get(file.format).name,
            lines: u64::from(file.line_count()),
        })
        .collect();
    let mut ids = known_contents(client, key, &entries).await?;
    let mut summary = Summary::default();
    // The contents to write, once each.
    let mut missing: Vec<&Entry> = Vec::new();
    let mut seen: HashMap<ContentKey, ()> = HashMap::default();
    for entry in &entries {
        let content = content_key(entry);
        if ids.contains_key(&content) {
            summary.reused.add(entry.lines);
        } else {
            summary.written.add(entry.lines);
            if seen.insert(content, ()).is_none() {
                missing.push(entry);
            }
        }
    }
    let total = missing.len();
    let mut written = 0;
    for batch in batches(&missing) {
        insert_contents(client, key, batch, winnow, &mut ids).await?;
        written += batch.len();
        progress(format!(
            "publishing: {written}/{total} new contents written"
        ));
        if let Some((Pause::Contents, wait)) = pause {
            wait(Pause::Contents);
        }
    }
    // The new copy, current in the transaction that writes it.
    let paths: Vec<&str> = entries.iter().map(|e| e.file.rel.as_str()).collect();
    let contents: Vec<i64> = entries
        .iter()
        .map(|e| {
            ids.get(&content_key(e))
                .copied()
                .ok_or_else(|| StoreError::Query {
                    what: "write the copy".into(),
                    reason: format!("the content of {} was not written", e.file.rel),
                })
        })
        .collect::<Result<_, _>>()?;
    let what = "write the copy";
    let tx = client
        .transaction()
        .await
        .map_err(StoreError::query(what))?;
    let previous = match current {
        Some(copy) => tx
            .query(
                "SELECT f.path, f.content, c.lines FROM copy_files f \
                 JOIN contents c ON c.id = f.content WHERE f.copy = $1",
                &[&copy],
            )
            .await
            .map_err(StoreError::query(what))?
            .iter()
            .map(|row| {
                (
                    row.get::<_, String>(0),
                    (row.get::<_, i64>(1), row.get::<_, i32>(2)),
                )
            })
            .collect(),
        None => HashMap::default(),
    };
    let now: HashMap<&str, i64> = paths
        .iter()
        .copied()
        .zip(contents.iter().copied())
        .collect();
    for (path, (_, lines)) in &previous {
        if !now.contains_key(path.as_str()) {
            summary.removed.add(*lines as u64);
        }
    }
    summary.unchanged = current_key == Some(key)
        && previous.len() == now.len()
        && previous
            .iter()
            .all(|(path, (content, _))| now.get(path.as_str()) == Some(content));
    if summary.unchanged {
        tx.execute(
            "UPDATE repositories SET published_at = now() WHERE id = $1",
            &[&repository_id],
        )
        .await
        .map_err(StoreError::query(what))?;
    } else {
        let lines: i64 = entries.iter().map(|e| e.lines as i64).sum();
        let copy: i64 = tx
            .query_one(
                "INSERT INTO copies (repository, settings_key, files, lines) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
                &[&repository_id, &key, &(entries.len() as i32), &lines],
            )
            .await
            .map_err(StoreError::query(what))?
            .get(0);
        for (paths, contents) in paths.chunks(50_000).zip(contents.chunks(50_000)) {
            tx.execute(
                "INSERT INTO copy_files (copy, path, content) \
                 SELECT $1, * FROM unnest($2::text[], $3::bigint[])",
                &[&copy, &paths, &contents],
            )
            .await
            .map_err(StoreError::query(what))?;
        }
        tx.execute(
            "UPDATE repositories SET current_copy = $2, published_at = now() WHERE id = $1",
            &[&repository_id, &copy],
        )
        .await
        .map_err(StoreError::query(what))?;
        if let Some((Pause::Commit, wait)) = pause {
            wait(Pause::Commit);
        }
    }
    tx.commit().await.map_err(StoreError::query(what))?;
    Ok(summary)
}

/// The advisory lock of `repository`'s publishes.
fn repository_lock(repository: &str) -> i64 {
    xxhash_rust::xxh3::xxh3_64(format!("dupcheck publish\0{repository}").as_bytes()) as i64
}

/// The identity of an entry's content.
fn content_key(entry: &Entry) -> ContentKey {
    (entry.file.meta.content_hash as i64, entry.format.to_owned())
}

/// The ids of the contents of `entries` the store has.
async fn known_contents(
    client: &Client,
    key: i64,
    entries: &[Entry<'_>],
) -> Result<HashMap<ContentKey, i64>, StoreError> {
    let mut hashes: Vec<i64> = entries
        .iter()
        .map(|e| e.file.meta.content_hash as i64)
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    let mut ids = HashMap::default();
    for chunk in hashes.chunks(LOOKUP_HASHES) {
        let rows = client
            .query(
                "SELECT content_hash, format, id FROM contents \
                 WHERE settings_key = $1 AND content_hash = ANY($2)",
                &[&key, &chunk],
            )
            .await
            .map_err(StoreError::query("read the contents it has"))?;
        for row in rows {
            ids.insert((row.get(0), row.get(1)), row.get(2));
        }
    }
    Ok(ids)
}

/// `missing` cut into batches of at most [`BATCH_FILES`] files and
/// [`BATCH_BYTES`] of text (a larger file is a batch of its own).
fn batches<'e, 'a>(missing: &'e [&'e Entry<'a>]) -> Vec<&'e [&'e Entry<'a>]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, entry) in missing.iter().enumerate() {
        let size = entry.file.text.len();
        if i > start && (i - start >= BATCH_FILES || bytes + size > BATCH_BYTES) {
            out.push(&missing[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < missing.len() {
        out.push(&missing[start..]);
    }
    out
}

/// Inserts one batch of contents and their postings in one transaction,
/// and records their ids. A content another publish inserted meanwhile
/// is taken as it is.
async fn insert_contents(
    client: &mut Client,
    key: i64,
    batch: &[&Entry<'_>],
    winnow: Winnow,
    ids: &mut HashMap<ContentKey, i64>,
) -> Result<(), StoreError> {
    let what = "write the contents";
    let hashes: Vec<i64> = batch
        .iter()
        .map(|e| e.file.meta.content_hash as i64)
        .collect();
    let formats: Vec<&str> = batch.iter().map(|e| e.format).collect();
    let families: Vec<i16> = batch.iter().map(|e| e.file.family as i16).collect();
    let lines: Vec<i32> = batch.iter().map(|e| e.lines as i32).collect();
    let texts: Vec<&str> = batch.iter().map(|e| &*e.file.text).collect();
    let tokens: Vec<Vec<u8>> = batch
        .iter()
        .map(|e| codec::encode(&e.file.tokens))
        .collect();
    let tx = client
        .transaction()
        .await
        .map_err(StoreError::query(what))?;
    let rows = tx
        .query(
            "INSERT INTO contents (settings_key, content_hash, format, family, lines, text, tokens) \
             SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::smallint[], $5::integer[], $6::text[], $7::bytea[]) \
             ON CONFLICT (settings_key, content_hash, format) DO NOTHING \
             RETURNING content_hash, format, id",
            &[&key, &hashes, &formats, &families, &lines, &texts, &tokens],
        )
        .await
        .map_err(StoreError::query(what))?;
    let inserted: HashMap<ContentKey, i64> = rows
        .iter()
        .map(|row| ((row.get(0), row.get(1)), row.get(2)))
        .collect();
    let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
    let (mut p_hash, mut p_content, mut p_pos, mut p_family, mut p_kind) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for entry in batch {
        let Some(&id) = inserted.get(&content_key(entry)) else {
            continue;
        };
        for (kind, prints) in [
            (0i16, fingerprints(&entry.file.tokens, winnow)),
            (1i16, fingerprints(&entry.file.tokens, seed_winnow)),
        ] {
            for print in prints {
                p_hash.push(print.hash as i64);
                p_content.push(id);
                p_pos.push(print.pos as i32);
                p_family.push(entry.file.family as i16);
                p_kind.push(kind);
            }
        }
    }
    const POSTINGS: usize = 100_000;
    for start in (0..p_hash.len()).step_by(POSTINGS) {
        let end = (start + POSTINGS).min(p_hash.len());
        tx.execute(
            "INSERT INTO postings (hash, content, pos, family, kind) \
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::integer[], $4::smallint[], $5::smallint[])",
            &[
                &&p_hash[start..end],
                &&p_content[start..end],
                &&p_pos[start..end],
                &&p_family[start..end],
                &&p_kind[start..end],
            ],
        )
        .await
        .map_err(StoreError::query(what))?;
    }
    tx.commit().await.map_err(StoreError::query(what))?;
    ids.extend(inserted);
    // Contents another publish wrote first: their ids.
    let raced: Vec<i64> = batch
        .iter()
        .filter(|e| !ids.contains_key(&content_key(e)))
        .map(|e| e.file.meta.content_hash as i64)
        .collect();
    if !raced.is_empty() {
        let rows = client
            .query(
                "SELECT content_hash, format, id FROM contents \
                 WHERE settings_key = $1 AND content_hash = ANY($2)",
                &[&key, &raced],
            )
            .await
            .map_err(StoreError::query(what))?;
        for row in rows {
            ids.insert((row.get(0), row.get(1)), row.get(2));
        }
    }
    Ok(())
}
