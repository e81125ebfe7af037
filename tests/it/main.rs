//! The integration tests, one binary (so `cargo test` links the crate and
//! its dependencies once): a module per area, each starting the real
//! `dupcheck` binary on a temporary copy of a `testdata/` fixture and
//! talking to it as its real clients do (HTTP, MCP, LSP over stdio, the
//! command line, Neovim, Chromium). [`common`] holds the shared harness.

#[macro_use]
mod common;

mod actions;
mod check;
mod cli;
mod clones;
mod dashboard;
mod diff;
mod dist;
mod errors;
mod features;
mod freshness;
mod inconsistent;
mod languages;
mod lsp;
mod mcp;
mod mcp_stdio;
mod modes;
mod near_miss;
mod noise;
mod nothing_indexed;
mod openapi;
mod options;
mod pg;
mod precommit;
mod regressions;
mod reliability;
mod report;
mod schemathesis;
mod stats;
mod store;
mod store_checks;
mod store_replicas;
mod store_tls;
mod symbols;
mod tidy;
