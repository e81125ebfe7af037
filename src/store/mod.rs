//! The store: every repository of an organisation in one PostgreSQL
//! database, beside the one directory [`crate::project`] scans (issue 30;
//! [docs/store.md](../../docs/store.md) has the schema and why).
//!
//! In: a `--store` URL or libpq connection string (already validated by
//! the configuration), a repository's name and a scan's
//! [`Snapshot`](crate::project::snapshot::Snapshot). Out: `dupcheck store
//! init` ([`schema`]), `dupcheck publish` ([`publish`]), `dupcheck store
//! gc` ([`gc`]), the list of repositories ([`catalog`]) and how the store
//! answers, for `/api/health` ([`live`]).
//!
//! Invariants: every statement is parameterised; the password never
//! appears in a [`StoreError`], a log line or an answer (errors name the
//! host, port, user and database, never the URL); a check reads only each
//! repository's current copy, which a publish replaces in the one
//! transaction that ends it.

pub mod catalog;
pub mod codec;
pub mod connect;
pub mod error;
pub mod gc;
pub mod kept;
pub mod live;
pub mod lookup;
pub mod publish;
pub mod repository;
pub mod schema;
pub mod tls;

pub use error::StoreError;
