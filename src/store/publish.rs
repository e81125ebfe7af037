//! `dupcheck publish`: makes the store's copy of one repository equal to
//! a scan of it ([`publish`]).
//!
//! In: a connection to the primary, the repository's name, the scan's
//! files and the settings key that made their tokens. Out: a [`Summary`]
//! (files and lines written, reused, removed).
//!
//! Contents are content-addressed ([`content_id`]): the same file in two
//! repositories, or in two publishes, is one row.
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
use crate::engine::hash::{HashMap, HashSet};
use crate::engine::index::{fingerprints, SourceFile, SEED_TOKENS};

/// The lock `store gc` holds alone and every publish shares.
pub(crate) const GC_LOCK: i64 = 0x6475_7063_6865_636b; // "dupcheck"

/// At most this much text goes in one batch of contents.
const BATCH_BYTES: usize = 8 << 20;
/// At most this many files go in one batch of contents.
const BATCH_FILES: usize = 2000;
/// At most this many content ids are looked up in one statement.
const LOOKUP_IDS: usize = 20_000;

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
    /// Its content's id ([`content_id`]).
    content: i64,
}

/// A content's id: a hash of the settings key that made its tokens, its
/// text's hash and its format. Content-addressed, so that a publish knows
/// the ids of its contents before asking the store, and the id is the
/// unique key a sharded table can hold (a unique key must contain the
/// distribution column).
pub fn content_id(settings_key: u64, content_hash: u64, format: &str) -> i64 {
    let mut material = Vec::with_capacity(32 + format.len());
    material.extend_from_slice(b"dupcheck content\0");
    material.extend_from_slice(&settings_key.to_le_bytes());
    material.extend_from_slice(&content_hash.to_le_bytes());
    material.extend_from_slice(format.as_bytes());
    xxhash_rust::xxh3::xxh3_64(&material) as i64
}

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
        .map(|file| {
            let format = registry.get(file.format).name.as_str();
            Entry {
                file,
                format,
                lines: u64::from(file.line_count()),
                content: content_id(publication.settings_key, file.meta.content_hash, format),
            }
        })
        .collect();
    let known = known_contents(client, &entries).await?;
    let mut summary = Summary::default();
    // The contents to write, once each.
    let mut missing: Vec<&Entry> = Vec::new();
    let mut seen: HashSet<i64> = HashSet::default();
    for entry in &entries {
        if known.contains(&entry.content) {
            summary.reused.add(entry.lines);
        } else {
            summary.written.add(entry.lines);
            if seen.insert(entry.content) {
                missing.push(entry);
            }
        }
    }
    let total = missing.len();
    let mut written = 0;
    for batch in batches(&missing) {
        insert_contents(client, key, batch, winnow).await?;
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
    let contents: Vec<i64> = entries.iter().map(|e| e.content).collect();
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

/// The ids, among those of `entries`, of the contents the store has.
async fn known_contents(
    client: &Client,
    entries: &[Entry<'_>],
) -> Result<HashSet<i64>, StoreError> {
    let mut ids: Vec<i64> = entries.iter().map(|e| e.content).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut known = HashSet::default();
    for chunk in ids.chunks(LOOKUP_IDS) {
        let rows = client
            .query("SELECT id FROM contents WHERE id = ANY($1)", &[&chunk])
            .await
            .map_err(StoreError::query("read the contents it has"))?;
        known.extend(rows.iter().map(|row| row.get::<_, i64>(0)));
    }
    Ok(known)
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

/// Inserts one batch of contents and their postings in one transaction.
/// A content another publish inserted meanwhile is left as it is, and its
/// postings are not written twice.
async fn insert_contents(
    client: &mut Client,
    key: i64,
    batch: &[&Entry<'_>],
    winnow: Winnow,
) -> Result<(), StoreError> {
    let what = "write the contents";
    let ids: Vec<i64> = batch.iter().map(|e| e.content).collect();
    let hashes: Vec<i64> = batch
        .iter()
        .map(|e| e.file.meta.content_hash as i64)
        .collect();
    let formats: Vec<&str> = batch.iter().map(|e| e.format).collect();
    let families: Vec<i16> = batch.iter().map(|e| e.file.family as i16).collect();
    let lines: Vec<i32> = batch.iter().map(|e| e.lines as i32).collect();
    let texts: Vec<String> = batch
        .iter()
        .map(|e| e.file.text.get().into_owned())
        .collect();
    let tokens: Vec<Vec<u8>> = batch
        .iter()
        .map(|e| codec::encode(&e.file.tokens))
        .collect();
    let definitions: Vec<Vec<u8>> = batch
        .iter()
        .map(|e| codec::encode_definitions(&e.file.definitions))
        .collect();
    let tx = client
        .transaction()
        .await
        .map_err(StoreError::query(what))?;
    let inserted: HashSet<i64> = tx
        .query(
            "INSERT INTO contents (id, settings_key, content_hash, format, family, lines, text, tokens, definitions) \
             SELECT id, $2, content_hash, format, family, lines, text, tokens, definitions \
             FROM unnest($1::bigint[], $3::bigint[], $4::text[], $5::smallint[], $6::integer[], $7::text[], $8::bytea[], $9::bytea[]) \
             AS t(id, content_hash, format, family, lines, text, tokens, definitions) \
             ON CONFLICT (id) DO NOTHING RETURNING id",
            &[&ids, &key, &hashes, &formats, &families, &lines, &texts, &tokens, &definitions],
        )
        .await
        .map_err(StoreError::query(what))?
        .iter()
        .map(|row| row.get::<_, i64>(0))
        .collect();
    let seed_winnow = Winnow::for_min_tokens(SEED_TOKENS);
    let (mut p_hash, mut p_content, mut p_pos, mut p_family, mut p_kind) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for entry in batch.iter().filter(|e| inserted.contains(&e.content)) {
        for (kind, prints) in [
            (0i16, fingerprints(&entry.file.tokens, winnow)),
            (1i16, fingerprints(&entry.file.tokens, seed_winnow)),
        ] {
            for print in prints {
                p_hash.push(print.hash as i64);
                p_content.push(entry.content);
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
    tx.commit().await.map_err(StoreError::query(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_id_depends_on_the_settings_the_text_and_the_format() {
        let id = content_id(1, 2, "javascript");
        assert_eq!(id, content_id(1, 2, "javascript"));
        for other in [
            content_id(9, 2, "javascript"),
            content_id(1, 9, "javascript"),
            content_id(1, 2, "typescript"),
        ] {
            assert_ne!(id, other);
        }
    }

    #[test]
    fn batches_hold_at_most_their_files_and_bytes() {
        let registry = Registry::builtin();
        let big = "x".repeat(BATCH_BYTES / 2 + 1);
        let texts: Vec<(String, String)> = (0..5)
            .map(|i| {
                (
                    format!("f{i}.js"),
                    if i < 3 { big.clone() } else { "a".into() },
                )
            })
            .collect();
        let pairs: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let files = crate::engine::index::js_files(&registry, &pairs);
        let entries: Vec<Entry> = files
            .iter()
            .map(|file| Entry {
                file,
                format: "javascript",
                lines: 1,
                content: 0,
            })
            .collect();
        let refs: Vec<&Entry> = entries.iter().collect();
        let sizes: Vec<usize> = batches(&refs).iter().map(|b| b.len()).collect();
        // Two halves and a bit do not fit one batch; small files join.
        assert_eq!(sizes, [1, 1, 3]);
        let many: Vec<&Entry> = (0..BATCH_FILES + 1).map(|_| &entries[4]).collect();
        let sizes: Vec<usize> = batches(&many).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, [BATCH_FILES, 1]);
    }
}
