//! The interfaces: thin adapters over the engine calls. The HTTP API
//! ([`http`]) and the dashboard it serves to browsers ([`dashboard`]), the MCP endpoint mounted in it ([`mcp`]), the language
//! server for editors ([`lsp`]), the command line's one run for CI
//! ([`report`]), and the renderings they share ([`answers`], [`sarif`]). An adapter decodes, validates and renders; it never
//! tokenizes or matches itself.

/// The JSON answers of the engine calls, shared by REST and MCP.
pub mod answers;
/// The command line: what `main` runs, and the one error of every command.
pub mod cli;
/// The dashboard: the page for browsers, embedded in the binary.
pub mod dashboard;
/// The HTTP API.
pub mod http;
/// `dupcheck lsp`: a language server on stdio for editors.
pub mod lsp;
/// The MCP endpoint (`POST /mcp`): tools over the same engine calls.
pub mod mcp;
/// `dupcheck report`: one scan, the clones reported, an exit status for CI.
pub mod report;
/// The one error of every command, and its exit status.
pub mod run_error;
/// Findings as SARIF 2.1.0 and reviewdog's rdjsonl, for CI and review bots.
pub mod sarif;
