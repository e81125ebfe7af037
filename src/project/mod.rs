//! The project: the one working directory dupcheck is bound to. Its
//! settings ([`config`]), which files are read ([`walk`]), the scan that
//! turns them into an immutable snapshot and swaps it in whole ([`scan`]),
//! the index kept on disk ([`cache`]), live updates ([`watch`]) and editors'
//! last buffers ([`buffers`]).

/// Editors' buffers: the last parse of each checked path, for reparsing.
pub mod buffers;
/// The persisted index for warm restarts.
pub mod cache;
/// The persisted clone list, for warm restarts with their statistics.
pub(crate) mod clone_cache;
/// Flags and the config file, merged into one validated `Config`.
pub mod config;
/// Every folder's figures and children, for the folder tree.
pub mod folders;
/// The generated-file rules.
pub mod generated;
/// What updates changed since the cache was written, appended.
pub(crate) mod journal;
/// Why a scan indexed nothing: the rule, glob or format that left DIR's
/// source files out.
pub(crate) mod left_out;
/// The clones in page order, by id and by place, for the clone list.
pub mod listing;
/// What a scan shows while it runs and says when done.
pub mod progress;
/// One scan of DIR: walk, read and tokenize on all cores, index.
pub mod scan;
/// The scanner: the current snapshot, rescans, updates, the cache.
pub mod scanner;
/// Everything one scan produced, and what is computed from it once.
pub mod snapshot;
/// Timestamps of scans and updates, as answers show them.
pub mod time;
/// Which files of DIR are scanned, and reading them.
pub mod walk;
/// Live updates from file-system events.
pub mod watch;
