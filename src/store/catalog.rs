//! The store's repositories as `GET /api/repositories` lists them: each
//! with its current copy's publication time, files and lines
//! ([`repositories`]). Repositories never published whole are left out.

use std::time::SystemTime;

use tokio_postgres::Client;

use super::error::StoreError;

/// One repository of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// Its name.
    pub name: String,
    /// When its current copy was last published.
    pub published_at: SystemTime,
    /// Files in its current copy.
    pub files: u64,
    /// Their lines.
    pub lines: u64,
}

/// Every repository with a current copy, by name.
pub async fn repositories(client: &Client) -> Result<Vec<Repository>, StoreError> {
    let rows = client
        .query(
            "SELECT r.name, r.published_at, c.files, c.lines FROM repositories r \
             JOIN copies c ON c.id = r.current_copy ORDER BY r.name",
            &[],
        )
        .await
        .map_err(StoreError::query("list the repositories"))?;
    Ok(rows
        .iter()
        .map(|row| Repository {
            name: row.get(0),
            published_at: row.get(1),
            files: row.get::<_, i32>(2) as u64,
            lines: row.get::<_, i64>(3) as u64,
        })
        .collect())
}
