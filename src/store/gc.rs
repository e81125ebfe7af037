//! `dupcheck store gc` (and the end of every publish): removes the copies
//! no repository points at, their files, and the contents and postings no
//! copy uses ([`collect`]).
//!
//! Invariant: the collector runs alone, holding the lock every publish
//! shares ([`super::publish::GC_LOCK`]): a content written by a publish
//! still running is never taken for garbage. When a publish runs, the
//! collector does not wait: it skips, and the next one collects.

use tokio_postgres::Client;

use super::error::StoreError;
use super::publish::GC_LOCK;

/// What a collection removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Collected {
    /// Copies removed.
    pub copies: u64,
    /// Contents removed (with their postings).
    pub contents: u64,
    /// Whether it was skipped, a publish running.
    pub skipped: bool,
}

/// Removes what no repository's current copy uses.
pub async fn collect(client: &mut Client) -> Result<Collected, StoreError> {
    super::schema::check(client).await?;
    let what = "collect garbage";
    let locked: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&GC_LOCK])
        .await
        .map_err(StoreError::query(what))?
        .get(0);
    if !locked {
        return Ok(Collected {
            skipped: true,
            ..Collected::default()
        });
    }
    let done = collect_locked(client).await;
    let _ = client
        .execute("SELECT pg_advisory_unlock($1)", &[&GC_LOCK])
        .await;
    done
}

/// [`collect`] once the lock is held.
async fn collect_locked(client: &mut Client) -> Result<Collected, StoreError> {
    let what = "collect garbage";
    let tx = client
        .transaction()
        .await
        .map_err(StoreError::query(what))?;
    let copies = remove(
        &tx,
        "DELETE FROM copies c WHERE NOT EXISTS \
         (SELECT 1 FROM repositories r WHERE r.current_copy = c.id) RETURNING id",
        "DELETE FROM copy_files WHERE copy = ANY($1)",
    )
    .await?;
    let contents = remove(
        &tx,
        "DELETE FROM contents c WHERE NOT EXISTS \
         (SELECT 1 FROM copy_files f WHERE f.content = c.id) RETURNING id",
        "DELETE FROM postings WHERE content = ANY($1)",
    )
    .await?;
    tx.commit().await.map_err(StoreError::query(what))?;
    Ok(Collected {
        copies,
        contents,
        skipped: false,
    })
}

/// Runs `delete` (which returns the ids it removed), then `dependents`
/// with those ids as `$1`; how many `delete` removed.
async fn remove(
    tx: &tokio_postgres::Transaction<'_>,
    delete: &str,
    dependents: &str,
) -> Result<u64, StoreError> {
    let what = "collect garbage";
    let removed: Vec<i64> = tx
        .query(delete, &[])
        .await
        .map_err(StoreError::query(what))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    tx.execute(dependents, &[&removed])
        .await
        .map_err(StoreError::query(what))?;
    Ok(removed.len() as u64)
}
