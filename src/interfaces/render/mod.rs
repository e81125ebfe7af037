//! Rendering: every output format, from the service's plain answers. The
//! JSON answers of the API and the MCP tools ([`answers`]), SARIF 2.1.0
//! and reviewdog's rdjsonl for CI and review bots ([`sarif`]), GitLab's
//! Code Quality report ([`codequality`]), and the reports of `dupcheck
//! report` for a console and a pull request ([`report`]). Nothing here
//! computes a duplication; each renderer reads an answer and writes it.

/// The JSON answers of the checks and of the project's statistics.
pub mod answers;
/// The JSON of the clone list and of one clone.
pub mod clones;
/// Findings as GitLab's Code Quality report.
pub mod codequality;
/// `dupcheck report`'s console table, Markdown and JSON report.
pub mod report;
/// Findings as SARIF 2.1.0 and reviewdog's rdjsonl.
pub mod sarif;
/// The JSON of statistics rows and percentages.
pub mod stats;
/// The JSON of the folder tree.
pub mod tree;
