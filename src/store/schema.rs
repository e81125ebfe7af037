//! The store's schema, versioned: `dupcheck store init` creates it or
//! migrates it to [`VERSION`] ([`init`]); every other command first
//! checks that the store is at that version ([`check`]) and refuses, in one
//! line, a store without the schema or of another version.
//!
//! The tables (docs/store.md says why each is so): `repositories` (one
//! row per repository, pointing at its current copy), `copies` (one per
//! publish), `copy_files` (a copy's paths, each naming a content),
//! `contents` (a file's text and tokens, stored once and shared by every
//! copy holding it; its id is a hash of the settings that made its tokens,
//! its text's hash and its format, [`super::publish::content_id`]) and
//! `postings` (each content's fingerprints and seeds, by hash). Laid out
//! for Citus: `contents` and `copy_files` distributed by content id,
//! `postings` by hash, the rest reference tables; every unique key holds
//! its table's distribution column.
//!
//! Invariant: a store is created and migrated in one transaction that
//! holds `dupcheck_schema` locked: two `init`s at once never interleave,
//! and a failed one leaves the store as it was.

use tokio_postgres::Client;

use super::error::StoreError;

/// The version of the schema this dupcheck reads and writes (2: each
/// content's definitions).
pub const VERSION: i32 = 2;

/// The statements that make version 1 from nothing.
const CREATE_V1: &str = "
CREATE TABLE repositories (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE,
    current_copy bigint,
    published_at timestamptz
);
CREATE TABLE copies (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repository bigint NOT NULL,
    settings_key bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    files integer NOT NULL,
    lines bigint NOT NULL
);
CREATE TABLE contents (
    id bigint PRIMARY KEY,
    settings_key bigint NOT NULL,
    content_hash bigint NOT NULL,
    format text NOT NULL,
    family smallint NOT NULL,
    lines integer NOT NULL,
    text text NOT NULL,
    tokens bytea NOT NULL
);
CREATE TABLE copy_files (
    content bigint NOT NULL,
    copy bigint NOT NULL,
    path text NOT NULL,
    PRIMARY KEY (content, copy, path)
);
CREATE INDEX copy_files_copy ON copy_files (copy);
CREATE TABLE postings (
    hash bigint NOT NULL,
    content bigint NOT NULL,
    pos integer NOT NULL,
    family smallint NOT NULL,
    kind smallint NOT NULL
);
CREATE INDEX postings_hash ON postings (hash);
CREATE INDEX postings_content ON postings USING brin (content);
";

/// The statements that make version 2 from version 1: each content's
/// definitions (functions, classes...), for the symbols of its places;
/// `NULL` for contents written before, whose places name none.
const MIGRATE_V2: &str = "ALTER TABLE contents ADD COLUMN definitions bytea;";

/// What [`init`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initialized {
    /// The schema was made.
    Created,
    /// The schema was migrated from this version.
    Migrated(i32),
    /// The schema was already at [`VERSION`].
    Current,
}

/// Creates the schema, or migrates it to [`VERSION`]; refuses a newer one.
pub async fn init(client: &mut Client) -> Result<Initialized, StoreError> {
    let what = "create the schema";
    let tx = client
        .transaction()
        .await
        .map_err(StoreError::query(what))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS dupcheck_schema (version integer NOT NULL);
         LOCK TABLE dupcheck_schema IN EXCLUSIVE MODE",
    )
    .await
    .map_err(StoreError::query(what))?;
    let found: Option<i32> = tx
        .query_one("SELECT max(version) FROM dupcheck_schema", &[])
        .await
        .map_err(StoreError::query(what))?
        .get(0);
    let done = match found {
        None => {
            tx.batch_execute(CREATE_V1)
                .await
                .map_err(StoreError::query(what))?;
            tx.batch_execute(MIGRATE_V2)
                .await
                .map_err(StoreError::query(what))?;
            Initialized::Created
        }
        Some(VERSION) => Initialized::Current,
        Some(version) if version > VERSION => return Err(newer(version)),
        Some(1) => {
            tx.batch_execute(MIGRATE_V2)
                .await
                .map_err(StoreError::query(what))?;
            Initialized::Migrated(1)
        }
        // Versions before 1 never existed; later ones migrate here, one
        // step at a time.
        Some(version) => return Err(unknown(version)),
    };
    if done != Initialized::Current {
        tx.execute("DELETE FROM dupcheck_schema", &[])
            .await
            .map_err(StoreError::query(what))?;
        tx.execute(
            "INSERT INTO dupcheck_schema (version) VALUES ($1)",
            &[&VERSION],
        )
        .await
        .map_err(StoreError::query(what))?;
    }
    tx.commit().await.map_err(StoreError::query(what))?;
    Ok(done)
}

/// Checks that the store's schema is at [`VERSION`].
pub async fn check(client: &Client) -> Result<(), StoreError> {
    let rows = client
        .query("SELECT max(version) FROM dupcheck_schema", &[])
        .await
        .map_err(|e| match e.code() {
            Some(code) if *code == tokio_postgres::error::SqlState::UNDEFINED_TABLE => {
                StoreError::Schema(
                    "the store has no dupcheck schema: run `dupcheck store init --store URL`"
                        .into(),
                )
            }
            _ => StoreError::query("read the schema's version")(e),
        })?;
    match rows.first().and_then(|row| row.get::<_, Option<i32>>(0)) {
        Some(VERSION) => Ok(()),
        Some(version) if version > VERSION => Err(newer(version)),
        Some(version) => Err(StoreError::Schema(format!(
            "the store's schema is version {version}, older than this dupcheck's ({VERSION}): run `dupcheck store init --store URL` to migrate it"
        ))),
        None => Err(StoreError::Schema(
            "the store has no dupcheck schema: run `dupcheck store init --store URL`".into(),
        )),
    }
}

/// The error of a store made by a newer dupcheck.
fn newer(version: i32) -> StoreError {
    StoreError::Schema(format!(
        "the store's schema is version {version}, newer than this dupcheck's ({VERSION}): upgrade dupcheck"
    ))
}

/// The error of a version that never existed.
fn unknown(version: i32) -> StoreError {
    StoreError::Schema(format!(
        "the store's schema has version {version}, which no dupcheck made"
    ))
}
