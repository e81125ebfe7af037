//! The engine: code in, duplications out. Formats and their grammars
//! ([`grammar`]), parsing within a budget ([`parse`]), normalization into
//! token streams ([`tokens`], [`embed`] for markup, [`snippet`] for code cut
//! out of its file, [`patterns`] for code blocks skipped), winnowing
//! ([`fingerprint`]), the index ([`index`]) and verified matching
//! ([`matching`]).
//!
//! The engine calls every interface makes live here too: [`check::check`]
//! (a snippet), [`diff_check::check_diff`] (a diff), the clone list and
//! statistics of [`stats`], and the folder tree of [`tree`]. They read a [`crate::project::scan::Snapshot`];
//! nothing here touches the file system, the network or the clock beyond a
//! parse's deadline.

/// One snippet checked within its budgets.
pub mod check;
/// The project's clones, filtered and paged: `/api/clones`.
pub mod clones;
/// Unified diffs: changed files, hunks, new texts rebuilt from their base.
pub mod diff;
/// One diff checked: the duplications its added lines make.
pub mod diff_check;
/// The `<script>` code of markup formats (HTML, Vue, Svelte).
pub mod embed;
/// Winnowing of k-gram hashes into fingerprints.
pub mod fingerprint;
/// `grammars.toml`: formats, grammars, node-kind classes.
pub mod grammar;
/// The crate's hash maps and the fixed token hash.
pub mod hash;
/// Files and sorted fingerprint postings.
pub mod index;
/// Verified maximal runs: snippet matches and project clones.
pub mod matching;
/// Near-miss copies: parts between edits, chained.
pub mod near_miss;
/// An editor's buffer checked among its other open buffers.
pub mod open_check;
/// Parsing under a time and memory budget.
pub mod parse;
/// `--ignore-pattern`: code blocks whose tokens are dropped.
pub mod patterns;
/// Snippets cut out of their context, and editors' buffers reparsed.
pub mod snippet;
/// Statistics rows and snippet statistics.
pub mod stats;
/// Parsing and normalization into token streams.
pub mod tokens;
/// The folder tree: one folder's children with their duplication.
pub mod tree;
/// The visible nodes of a syntax tree, walked in one pass.
pub mod visible_nodes;
