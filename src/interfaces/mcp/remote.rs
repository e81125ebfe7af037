//! Remote: the tools of `dupcheck mcp --server URL`, answered by a running
//! dupcheck server's `POST /mcp` instead of the engine in process.
//!
//! In: the server's URL (`http://HOST:PORT`), and a tool's name and
//! arguments. Out: the server's `CallToolResult`, as it is: the same
//! structured content and text as the server's own MCP clients get. Each
//! call is one stateless JSON-RPC `tools/call` (protocol revision
//! [`REVISION`], which needs no handshake on the server's stateless
//! transport); a server that cannot be reached, or answers with anything
//! but a result, gives a tool error saying so, and the next call tries
//! again.
//!
//! Invariants: as `lsp --server`'s exchanges (one [`send`] each), every
//! exchange ends within its answer time and reads a bounded answer.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ACCEPT, CONTENT_TYPE};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{json, Value};

use crate::interfaces::lsp::remote::{client, send, server_base};

/// The protocol revision of the calls: stateless requests need no
/// `initialize` first.
const REVISION: &str = "2025-11-25";

/// A running dupcheck server and the way to its `/mcp`.
pub(crate) struct Remote {
    /// `http://HOST:PORT`, as given, without a trailing slash.
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
    /// The id of the next JSON-RPC request.
    next_id: AtomicU64,
}

impl Remote {
    /// The server at `url` (`http://HOST:PORT`); an error naming `--server`
    /// when `url` is not such a URL.
    pub(crate) fn new(url: &str) -> Result<Remote, String> {
        Ok(Remote {
            base: server_base(url)?,
            client: client(),
            next_id: AtomicU64::new(1),
        })
    }

    /// The server's URL.
    pub(crate) fn url(&self) -> &str {
        &self.base
    }

    /// The server's result of `tool` with `args`, or a tool error saying
    /// why there is none.
    pub(crate) async fn call(&self, tool: &str, args: &JsonObject) -> CallToolResult {
        match self.exchange(tool, args).await {
            Ok(result) => result,
            Err(message) => {
                tracing::warn!("{tool}: {message}");
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
        }
    }

    async fn exchange(&self, tool: &str, args: &JsonObject) -> Result<CallToolResult, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        });
        let unanswered = |why: String| {
            format!(
                "Cannot ask the dupcheck server at {} (--server): {why}",
                self.base
            )
        };
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("{}/mcp", self.base))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", REVISION)
            .body(Full::new(Bytes::from(message.to_string())))
            .map_err(|e| unanswered(e.to_string()))?;
        let (status, _, body) = send(&self.client, request).await.map_err(unanswered)?;
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status != StatusCode::OK {
            // dupcheck's error body, or rmcp's refusal.
            let said = answer["message"]
                .as_str()
                .or(answer["error"]["message"].as_str())
                .unwrap_or("");
            return Err(unanswered(format!("it answered {status}: {said}")));
        }
        if let Some(error) = answer.get("error") {
            let said = error["message"].as_str().unwrap_or("");
            return Err(unanswered(format!("it answered an error: {said}")));
        }
        serde_json::from_value(answer["result"].clone()).map_err(|_| {
            unanswered(
                "its answer is not the result of a tool call (is it a dupcheck server?)".into(),
            )
        })
    }
}
