//! The engine: code in, duplications out. Formats and their grammars
//! ([`grammar`]), parsing within a budget ([`parse`]), normalization into
//! token streams ([`tokens`], [`embed`] for markup, [`snippet`] for code cut
//! out of its file, [`patterns`] for code blocks skipped), winnowing
//! ([`fingerprint`]), the index ([`index`]), verified matching
//! ([`matching`]) and whole-project clones ([`clones`]).
//!
//! The stages are pure: code in, tokens, fingerprints, index, runs and
//! clones out. Nothing here knows a directory, a request or an output
//! format, and nothing touches the file system, the network or the clock
//! beyond a parse's deadline.

/// Whole-project clones, and their update after a change.
pub mod clones;
/// Definitions of a parsed text (functions, classes...), kept compact.
pub mod definitions;
/// Unified diffs: changed files, hunks, new texts rebuilt from their base.
pub mod diff;
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
/// Snippet matches, from verified runs.
pub mod matching;
/// Near-miss copies: parts between edits, chained.
pub mod near_miss;
/// Parsing under a time and memory budget.
pub mod parse;
/// `--ignore-pattern`: code blocks whose tokens are dropped.
pub mod patterns;
/// Verified maximal runs through shared fingerprints, cut per mode.
pub mod runs;
/// Snippets cut out of their context, and editors' buffers reparsed.
pub mod snippet;
/// Statistics rows and snippet statistics.
pub mod stats;
/// The symbol a place lies in, read off its text's definitions.
pub mod symbols;
/// A scanned file's text, kept compressed.
pub mod text;
/// Parsing and normalization into token streams.
pub mod tokens;
/// The visible nodes of a syntax tree, walked in one pass.
pub mod visible_nodes;
