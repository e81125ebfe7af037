//! The store as a server sees it ([`Live`]): up to [`CONNECTIONS`]
//! connections, each made on first use and again after it breaks, with a
//! check's statements prepared on it; every call within [`DEADLINE`]; the
//! files of other repositories already looked up ([`Kept`]); and how the
//! store last answered, for `/api/health` ([`Live::health`]).
//!
//! A store that does not answer is left alone by checks for [`BACK_OFF`]
//! (they answer from the directory at once); `/api/health` asks every
//! time, and its answer ends the pause.
//!
//! Invariants: nothing waits on the store past [`DEADLINE`]; the log
//! warns once when the store stops answering and says when it is back;
//! what the health shows of a failure is its kind, never its text.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio_postgres::Client;

use super::catalog::Repository;
use super::connect::Target;
use super::error::StoreError;
use super::kept::Kept;
use super::lookup::{Found, Prepared, Query};
use crate::engine::grammar::Registry;

/// The longest a call on the store may take, connecting included.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// How long checks leave a store alone after it did not answer: they
/// answer from the directory at once meanwhile, instead of each waiting
/// [`DEADLINE`] for a store that is down. `/api/health` still asks.
pub const BACK_OFF: Duration = Duration::from_secs(5);

/// Connections a server keeps to its store: checks run side by side, and
/// one connection is one server process, running one statement at a time.
pub const CONNECTIONS: usize = 4;

/// A server's store.
pub struct Live {
    target: Target,
    /// The files of other repositories seen by earlier lookups.
    kept: Kept,
    /// The connections, each made on first use and again after it broke.
    slots: Vec<tokio::sync::Mutex<Option<Arc<Connection>>>>,
    /// The slot of the next call.
    next: AtomicUsize,
    seen: Mutex<Seen>,
}

/// One connection and the statements prepared on it.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// A check's statements, prepared on first use.
    pub prepared: Prepared,
}

/// How the store answered.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// When it last answered.
    last_answer: Option<SystemTime>,
    /// The kind of the last call's error, if it failed.
    error: Option<&'static str>,
    /// Until when checks leave the store alone, after it did not answer.
    quiet_until: Option<Instant>,
}

/// The store's state as `/api/health` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// `None` when the last call answered; the kind of its error otherwise.
    pub error: Option<&'static str>,
    /// When the store last answered.
    pub last_answer: Option<SystemTime>,
}

impl Live {
    /// The store at `target`, not yet connected.
    pub fn new(target: Target) -> Live {
        Live {
            target,
            kept: Kept::default(),
            slots: (0..CONNECTIONS)
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            next: AtomicUsize::new(0),
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Every repository with a current copy.
    pub async fn repositories(&self) -> Result<Vec<Repository>, StoreError> {
        self.call(|conn| async move { super::catalog::repositories(&conn.client).await })
            .await
    }

    /// The files of other repositories that a check's `query` may match,
    /// within [`DEADLINE`].
    pub async fn lookup(&self, query: &Query, registry: &Registry) -> Result<Found, StoreError> {
        self.lookup_within(query, registry, DEADLINE).await
    }

    /// [`Live::lookup`] within `deadline`: a report's lookups, of a whole
    /// repository's hashes, take longer than a check's.
    pub async fn lookup_within(
        &self,
        query: &Query,
        registry: &Registry,
        deadline: Duration,
    ) -> Result<Found, StoreError> {
        if let Some(quiet) = self.backing_off() {
            return Err(quiet);
        }
        self.call_within(deadline, |conn| async move {
            super::lookup::lookup(&conn.client, &conn.prepared, query, &self.kept, registry).await
        })
        .await
    }

    /// Asks the store whether it answers, with the right schema; its state.
    pub async fn health(&self) -> Health {
        let _ = self
            .call(|conn| async move { super::schema::check(&conn.client).await })
            .await;
        let seen = *self.seen.lock().unwrap_or_else(|e| e.into_inner());
        Health {
            error: seen.error,
            last_answer: seen.last_answer,
        }
    }

    /// The error a check gets without asking, while the store is left
    /// alone after it did not answer ([`BACK_OFF`]).
    fn backing_off(&self) -> Option<StoreError> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.quiet_until.filter(|&until| Instant::now() < until)?;
        Some(StoreError::Unreachable {
            target: self.target.describe(),
            reason: format!(
                "it did not answer a moment ago; checks ask again within {} s",
                BACK_OFF.as_secs()
            ),
        })
    }

    /// Runs `f` on the connection within [`DEADLINE`], connecting first
    /// if need be; records how the store answered. A connection kept from
    /// an earlier call that turns out broken (its server stopped or
    /// restarted) is made again once, within the same deadline, and `f`
    /// run on the new one: with several hosts, another (a standby) may
    /// answer. A call past the deadline is not run again.
    async fn call<T, F, Fut>(&self, f: F) -> Result<T, StoreError>
    where
        F: Fn(Arc<Connection>) -> Fut,
        Fut: std::future::Future<Output = Result<T, StoreError>>,
    {
        self.call_within(DEADLINE, f).await
    }

    /// [`Live::call`] within `deadline`.
    async fn call_within<T, F, Fut>(&self, deadline: Duration, f: F) -> Result<T, StoreError>
    where
        F: Fn(Arc<Connection>) -> Fut,
        Fut: std::future::Future<Output = Result<T, StoreError>>,
    {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % CONNECTIONS];
        let answered = match tokio::time::timeout(deadline, async {
            let (conn, fresh) = self.connection(slot).await?;
            let result = f(Arc::clone(&conn)).await;
            let broke = forget_if_broken(slot, &conn, &result).await;
            if !broke || fresh {
                return result;
            }
            tracing::debug!("store connection broke; connecting again");
            let (conn, _) = self.connection(slot).await?;
            let result = f(Arc::clone(&conn)).await;
            forget_if_broken(slot, &conn, &result).await;
            result
        })
        .await
        {
            Ok(answered) => answered,
            Err(_) => {
                // A connection that hangs is not used again.
                if let Ok(mut held) = slot.try_lock() {
                    *held = None;
                }
                Err(StoreError::Unreachable {
                    target: self.target.describe(),
                    reason: format!("no answer within {} s", deadline.as_secs()),
                })
            }
        };
        self.record(answered.as_ref().err());
        answered
    }

    /// The connection of `slot`, made if there is none or it broke;
    /// whether it was made now.
    async fn connection(
        &self,
        slot: &tokio::sync::Mutex<Option<Arc<Connection>>>,
    ) -> Result<(Arc<Connection>, bool), StoreError> {
        let mut held = slot.lock().await;
        if let Some(conn) = held.as_ref().filter(|c| !c.client.is_closed()) {
            return Ok((Arc::clone(conn), false));
        }
        *held = None;
        let conn = Arc::new(Connection {
            client: self.target.connect(false).await?,
            prepared: Prepared::default(),
        });
        *held = Some(Arc::clone(&conn));
        Ok((conn, true))
    }

    /// Records a call's outcome; warns when the store stops answering and
    /// says when it is back.
    fn record(&self, error: Option<&StoreError>) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match error {
            // A refused statement is an answer too.
            Some(e) if matches!(e.kind(), "refused" | "busy") => {
                seen.last_answer = Some(SystemTime::now());
            }
            Some(e) => {
                if seen.error.is_none() {
                    tracing::warn!(
                        "store unavailable, checks answer from this directory alone: {e}"
                    );
                }
                seen.error = Some(e.kind());
                if e.kind() == "schema" || e.kind() == "query" {
                    seen.last_answer = Some(SystemTime::now());
                }
                if e.kind() == "unreachable" {
                    seen.quiet_until = Some(Instant::now() + BACK_OFF);
                }
            }
            None => {
                if seen.error.is_some() {
                    tracing::info!("store available again");
                }
                seen.error = None;
                seen.quiet_until = None;
                seen.last_answer = Some(SystemTime::now());
            }
        }
    }
}

/// Whether `conn` broke during a call that gave `result` (the connection
/// lost, or closed since: an immediate shutdown's FATAL arrives as the
/// server's error); if so it is not kept in `slot` for the next call,
/// unless another call has already replaced it.
async fn forget_if_broken<T>(
    slot: &tokio::sync::Mutex<Option<Arc<Connection>>>,
    conn: &Arc<Connection>,
    result: &Result<T, StoreError>,
) -> bool {
    let closed = conn.client.is_closed();
    let broke = match result {
        Err(StoreError::Lost { .. }) => true,
        Err(_) => closed,
        Ok(_) => false,
    };
    if broke || closed {
        let mut held = slot.lock().await;
        if held.as_ref().is_some_and(|kept| Arc::ptr_eq(kept, conn)) {
            *held = None;
        }
    }
    broke
}
