//! The interfaces: thin adapters over the service. The command line
//! ([`cli`], whose failures are one [`run_error::RunError`]), the HTTP API
//! ([`http`]) with the dashboard it serves to browsers ([`dashboard`]) and
//! the MCP endpoint mounted in it ([`mcp`], also on stdio), the language server for
//! editors ([`lsp`]), the command line's one run for CI ([`report`]), the commands that
//! write the store ([`publish`]), and
//! the output formats they share ([`render`]). An adapter decodes,
//! validates, makes service calls and renders; it never tokenizes or
//! matches itself.

/// The command line: what `main` runs, and the one error of every command.
pub mod cli;
/// The dashboard: the page for browsers, embedded in the binary.
pub mod dashboard;
/// The HTTP API.
pub mod http;
/// `dupcheck lsp`: a language server on stdio for editors.
pub mod lsp;
/// The MCP tools over the same service calls: `POST /mcp` and `dupcheck mcp`.
pub mod mcp;
/// `dupcheck publish` and `dupcheck store init|gc`: the store written.
pub mod publish;
/// Every output format, from the service's plain answers.
pub mod render;
/// `dupcheck report`: one scan, the clones reported, an exit status for CI.
pub mod report;
/// The one error of every command, and its exit status.
pub mod run_error;
