//! [`StoreError`]: every way the store can fail, each one line that says
//! what and how to fix it, never the password (a URL is never echoed;
//! errors name host, port, user and database), and a short [`kind`]
//! (`StoreError::kind`) for `/api/health`.

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL or connection string does not parse.
    #[error("--store is not a PostgreSQL URL or connection string: {0}")]
    Url(String),
    /// No server of the target answered.
    #[error("cannot reach the store at {target}: {reason}")]
    Unreachable { target: String, reason: String },
    /// The server refused the user or its password.
    #[error("the store at {target} refused the login: {reason}")]
    Authentication { target: String, reason: String },
    /// The store's schema is missing or of another version.
    #[error("{0}")]
    Schema(String),
    /// Another publish of this repository holds its lock.
    #[error("another publish of {0:?} is running; try again when it has ended")]
    Busy(String),
    /// A repository name or path the store does not take.
    #[error("{0}")]
    Refused(String),
    /// A statement failed.
    #[error("the store failed to {what}: {reason}")]
    Query { what: String, reason: String },
    /// The connection broke during a statement.
    #[error("the store's connection broke while trying to {what}: {reason}")]
    Lost { what: String, reason: String },
}

impl StoreError {
    /// The error's kind, safe to show anyone: `url`, `unreachable`,
    /// `authentication`, `schema`, `busy`, `refused` or `query`.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreError::Url(_) => "url",
            StoreError::Unreachable { .. } | StoreError::Lost { .. } => "unreachable",
            StoreError::Authentication { .. } => "authentication",
            StoreError::Schema(_) => "schema",
            StoreError::Busy(_) => "busy",
            StoreError::Refused(_) => "refused",
            StoreError::Query { .. } => "query",
        }
    }

    /// The error of a statement that failed while doing `what`: the
    /// server's own message (it holds no password: statements carry none).
    pub(crate) fn query(what: &str) -> impl FnOnce(tokio_postgres::Error) -> StoreError + '_ {
        move |e| match e.as_db_error() {
            Some(db) => StoreError::Query {
                what: what.to_owned(),
                reason: format!("{} ({})", db.message(), db.code().code()),
            },
            None if e.is_closed() => StoreError::Lost {
                what: what.to_owned(),
                reason: "the connection was closed".into(),
            },
            None => StoreError::Lost {
                what: what.to_owned(),
                reason: cause_text(&e),
            },
        }
    }
}

/// The text of a client error and its cause (an I/O error's, say),
/// as `error connecting to server: Connection refused (os error 111)`.
pub(crate) fn cause_text(e: &tokio_postgres::Error) -> String {
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
