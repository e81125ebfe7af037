//! POST /mcp driven by rmcp's own client over HTTP, as an AI assistant's
//! MCP client would, on both protocol revisions: 2026-07-28 (stateless,
//! `server/discover`) and 2025-11-25 (`initialize`,
//! `notifications/initialized`, `ping`). The four tools are listed with
//! descriptions and input schemas; each answers the REST endpoint's JSON
//! for the same input as structured content, with a text summary naming
//! file and lines; bad input is a tool error with REST's message; the
//! router's guards and limits hold for /mcp as for the rest of the API.

use crate::common;

use common::{error, Server};
use hyper::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ClientRequest, PingRequest,
    ProtocolVersion, ServerResult,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};

/// A protocol revision an MCP client may speak.
#[derive(Debug, Clone, Copy)]
pub enum Revision {
    /// 2026-07-28: `server/discover`, metadata on every request, no
    /// handshake.
    Current,
    /// 2025-11-25: the `initialize` handshake.
    Previous,
}

pub const REVISIONS: [Revision; 2] = [Revision::Current, Revision::Previous];

impl Revision {
    fn version(self) -> ProtocolVersion {
        match self {
            Revision::Current => ProtocolVersion::V_2026_07_28,
            Revision::Previous => ProtocolVersion::V_2025_11_25,
        }
    }
}

pub type Client = RunningService<RoleClient, ClientConfig>;

/// An rmcp client of `server`'s `/mcp` speaking `revision`.
pub async fn connect(server: &Server, revision: Revision) -> Client {
    connect_with(server, revision, &[])
        .await
        .unwrap_or_else(|err| panic!("{revision:?}: {err}"))
}

/// Like [`connect`], sending `headers` with every request.
async fn connect_with(
    server: &Server,
    revision: Revision,
    headers: &[(&'static str, &str)],
) -> Result<Client, rmcp::service::ClientInitializeError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://127.0.0.1:{}/mcp",
        server.port
    ));
    config.custom_headers = headers
        .iter()
        .map(|(name, value)| {
            (
                HeaderName::from_static(name),
                HeaderValue::from_str(value).expect("header value"),
            )
        })
        .collect();
    let lifecycle = match revision {
        Revision::Current => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Revision::Previous => ClientLifecycleMode::Initialize,
    };
    let client = ClientConfig::default()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await?;
    let info = client.peer_info().expect("the server described itself");
    assert_eq!(info.protocol_version, revision.version());
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("dupcheck")
    );
    Ok(client)
}

/// Calls `tool` with `arguments` (an object).
pub async fn call(client: &Client, tool: &'static str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .unwrap_or_else(|err| panic!("{tool}: {err}"))
}

/// The text of a result's one content block.
fn text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    &result.content[0].as_text().expect("text content").text
}

/// Asserts `result` is a success whose structured content is `rest` and
/// whose text is `summary`.
pub fn assert_answer(result: &CallToolResult, rest: &Value, summary: &str) {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_json!(result.structured_content.clone().expect("structured"), rest);
    assert_eq!(text(result), summary);
}

/// Asserts `result` is a tool error saying `message`.
fn assert_tool_error(result: &CallToolResult, message: &str) {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(result.structured_content, None);
    assert_eq!(text(result), message);
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/testdata/project/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture")
}

/// A diff that adds `src/app/deep.js`: `merge` of `src/util/merge.js`
/// and a line of its own.
fn new_file_diff() -> String {
    let merge = read("src/util/merge.js");
    let body = merge
        .strip_prefix("// Deep merge of plain objects.\n")
        .and_then(|m| m.split("\n\nexport const").next())
        .expect("merge's body");
    let lines: Vec<String> = format!("{body}\n\nconsole.log(\"deep\");\n")
        .lines()
        .map(|l| format!("+{l}\n"))
        .collect();
    format!(
        "diff --git a/src/app/deep.js b/src/app/deep.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/app/deep.js\n@@ -0,0 +1,{} @@\n{}",
        lines.len(),
        lines.concat()
    )
}

/// POSTs `diff` to `/api/check-diff`: the status and JSON answer.
fn rest_diff(server: &Server, diff: &str) -> (u16, Value) {
    let res = server.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "text/x-diff")],
        diff.as_bytes(),
    );
    (res.status, res.json())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_are_listed_with_descriptions_and_input_schemas() {
    let server = Server::start("project", &[]);
    for revision in REVISIONS {
        let client = connect(&server, revision).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["check_code", "check_diff", "list_clones", "project_stats"]
        );
        for tool in &tools {
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(
                description.len() > 200 && description.contains("Returns as structured content"),
                "{revision:?} {}: {description:?}",
                tool.name
            );
            let schema = Value::Object((*tool.input_schema).clone());
            let (properties, required) = match tool.name.as_ref() {
                "check_code" => (
                    vec![
                        ("code", "string"),
                        ("format", "string"),
                        ("mode", "string"),
                        ("nearMiss", "boolean"),
                        ("path", "string"),
                    ],
                    json!(["code"]),
                ),
                "check_diff" => (
                    vec![
                        ("diff", "string"),
                        ("mode", "string"),
                        ("nearMiss", "boolean"),
                    ],
                    json!(["diff"]),
                ),
                "list_clones" => (
                    vec![
                        ("cursor", "string"),
                        ("format", "string"),
                        ("fragments", "boolean"),
                        ("limit", "integer"),
                        ("minTokens", "integer"),
                        ("path", "string"),
                    ],
                    Value::Null,
                ),
                _ => (vec![], Value::Null),
            };
            assert_eq!(schema["type"], "object", "{schema}");
            assert_eq!(schema["required"], required, "{schema}");
            let mut listed: Vec<(&str, &str)> = schema["properties"]
                .as_object()
                .expect("properties")
                .iter()
                .map(|(name, property)| {
                    assert!(property["description"].is_string(), "{schema}");
                    (name.as_str(), property["type"].as_str().unwrap_or_default())
                })
                .collect();
            listed.sort_unstable();
            assert_eq!(listed, properties, "{schema}");
            if properties.contains(&("mode", "string")) {
                let modes = json!(["strict", "mild", "weak"]);
                assert_eq!(schema["properties"]["mode"]["enum"], modes, "{schema}");
            }
            let annotations = tool.annotations.as_ref().expect("annotations");
            assert_eq!(annotations.read_only_hint, Some(true));
        }
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_previous_revision_initializes_and_pings() {
    let server = Server::start("project", &[]);
    // The client sends `initialize`, then `notifications/initialized`.
    let client = connect(&server, Revision::Previous).await;
    let pong = client
        .send_request(ClientRequest::PingRequest(PingRequest::default()))
        .await
        .expect("ping");
    assert!(matches!(pong, ServerResult::EmptyResult(_)), "{pong:?}");
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_code_answers_what_post_api_check_answers() {
    let server = Server::start("project", &[]);
    let input = json!({"code": read("src/util/merge.js"), "format": "javascript", "path": "src/util/merge.js"});
    let (status, rest) = server.check(input.clone());
    assert_eq!(status, 200);
    assert_eq!(rest["duplications"].as_array().map(Vec::len), Some(2));
    let unique = json!({"code": "const answer = 42;\nconsole.log(answer);\n", "path": "src/x.js"});
    let (status, rest_unique) = server.check(unique.clone());
    assert_eq!(status, 200);
    assert_eq!(rest_unique["duplications"], json!([]));
    for revision in REVISIONS {
        let client = connect(&server, revision).await;
        assert_answer(
            &call(&client, "check_code", input.clone()).await,
            &rest,
            "2 duplications found in the project:\n\
             - `merge()` in src/app/merge-copy.js:4-18: 14 lines (105 tokens), lines 2-15 of the code (`merge()`)\n\
             - `merge()` in src/types/merge.ts:4-17: 14 lines (105 tokens), lines 2-15 of the code (`merge()`)",
        );
        assert_answer(
            &call(&client, "check_code", unique.clone()).await,
            &rest_unique,
            "No duplication found: the project has no run of at least 50 tokens and 5 lines of this code.",
        );
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_diff_answers_what_post_api_check_diff_answers() {
    let server = Server::start("project", &[]);
    let diff = new_file_diff();
    let (status, rest) = rest_diff(&server, &diff);
    assert_eq!(status, 200, "{rest}");
    assert_eq!(
        rest["files"][0]["duplications"].as_array().map(Vec::len),
        Some(3)
    );
    for revision in REVISIONS {
        let client = connect(&server, revision).await;
        assert_answer(
            &call(&client, "check_diff", json!({"diff": diff})).await,
            &rest,
            "3 duplications added:\n\
             - `merge()` in src/app/deep.js:1-14 duplicates `merge()` in src/app/merge-copy.js:4-18: 14 lines (105 tokens, 14 added)\n\
             - `merge()` in src/app/deep.js:1-14 duplicates `merge()` in src/types/merge.ts:4-17: 14 lines (105 tokens, 14 added)\n\
             - `merge()` in src/app/deep.js:1-14 duplicates `merge()` in src/util/merge.js:2-15: 14 lines (105 tokens, 14 added)",
        );
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_argument_answers_as_the_rest_field() {
    // A strict server; `renamed.js` is a renamed copy of `merge`.
    let server = Server::start("project", &[]);
    let code = read("src/app/renamed.js");
    let lines: Vec<String> = code.lines().map(|l| format!("+{l}\n")).collect();
    let diff = format!(
        "diff --git a/src/app/again.js b/src/app/again.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/app/again.js\n@@ -0,0 +1,{} @@\n{}",
        lines.len(),
        lines.concat()
    );
    let client = connect(&server, Revision::Current).await;
    let mut found = Vec::new();
    for mode in ["strict", "mild", "weak"] {
        let input = json!({"code": code, "path": "src/app/renamed.js", "mode": mode});
        let (status, rest) = server.check(input.clone());
        assert_eq!(status, 200, "{rest}");
        let result = call(&client, "check_code", input).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_json!(result.structured_content.clone().expect("structured"), rest);
        found.push(rest["duplications"].as_array().map_or(0, Vec::len));

        let input = json!({"diff": diff, "mode": mode});
        let (status, rest) = server.post("/api/check-diff", &input.to_string());
        assert_eq!(status, 200, "{rest}");
        let result = call(&client, "check_diff", input).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_json!(result.structured_content.clone().expect("structured"), rest);
    }
    // Strict finds no renamed copy; mild and weak find `merge`'s four
    // (`literals.js` among them).
    assert_eq!(found, [0, 4, 4]);
    let refused = "Unknown mode \"loose\"; use \"strict\", \"mild\" or \"weak\"";
    let bad = json!({"code": code, "format": "js", "mode": "loose"});
    assert_tool_error(&call(&client, "check_code", bad).await, refused);
    let bad = json!({"diff": diff, "mode": "loose"});
    assert_tool_error(&call(&client, "check_diff", bad).await, refused);
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_stats_answers_what_get_api_stats_answers() {
    needs_formats!(project);
    let server = Server::start("project", &[]);
    let (status, rest) = server.get("/api/stats");
    assert_eq!(status, 200);
    for revision in REVISIONS {
        let client = connect(&server, revision).await;
        let result = call(&client, "project_stats", json!({})).await;
        let mut answer = result.structured_content.clone().expect("structured");
        // Each answer is stamped when it is made; the statistics are the
        // snapshot's.
        let stamp = answer["timestamp"].as_str().expect("timestamp");
        assert!(stamp.len() == 24 && stamp.ends_with('Z'), "{stamp}");
        answer["timestamp"] = rest["timestamp"].clone();
        let mut stamped = result.clone();
        stamped.structured_content = Some(answer);
        assert_answer(
            &stamped,
            &rest,
            "9 files, 152 lines: 3 clones, 43 lines duplicated (28.29%).\n\
             Per format: javascript 42.03% of 69 lines (4 files), python 0% of 38 lines (2 files), \
             rust 0% of 28 lines (2 files), typescript 82.35% of 17 lines (1 file).\n\
             Most duplicated files: src/app/merge-copy.js 15 lines (75%), \
             src/types/merge.ts 14 lines (82.35%), src/util/merge.js 14 lines (82.35%).",
        );
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_clones_answers_what_get_api_clones_answers() {
    let server = Server::start("project", &[]);
    let (status, first) = server.get("/api/clones?limit=2&path=src");
    assert_eq!(status, 200);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let (status, second) = server.get(&format!(
        "/api/clones?limit=2&path=src&cursor={cursor}&fragments=true"
    ));
    assert_eq!(status, 200);
    for revision in REVISIONS {
        let client = connect(&server, revision).await;
        assert_answer(
            &call(&client, "list_clones", json!({"limit": 2, "path": "src"})).await,
            &first,
            &format!(
                "3 clones in the project with these filters, largest first; this page lists 2:\n\
                 - `merge()` in src/app/merge-copy.js:4-18 and `merge()` in src/types/merge.ts:4-17: 15 lines (105 tokens, javascript)\n\
                 - `merge()` in src/app/merge-copy.js:4-18 and `merge()` in src/util/merge.js:2-15: 15 lines (105 tokens, javascript)\n\
                 More on the next page: cursor {cursor:?}."
            ),
        );
        assert_answer(
            &call(
                &client,
                "list_clones",
                json!({"limit": 2, "path": "src", "cursor": cursor, "fragments": true}),
            )
            .await,
            &second,
            "3 clones in the project with these filters, largest first; this page lists 1:\n\
             - `merge()` in src/types/merge.ts:4-17 and `merge()` in src/util/merge.js:2-15: 14 lines (105 tokens, typescript)",
        );
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_tool_error_with_the_message_of_rest() {
    let server = Server::start("project", &[]);
    let known = common::known_formats();
    let unknown_format =
        format!("Unsupported format \"cobol\"; supported formats: {known} (aliases and extensions such as js, ts, py and rs work too)");
    let unknown_path = format!("Cannot tell the format of path \"notes.txt\": unknown extension \".txt\"; send \"format\" with one of: {known}");
    let not_a_diff = "The diff cannot be read: not a unified diff: no file header (a `diff --git` line, or `---` and `+++` lines); send what `git diff` prints";
    let cases = [
        (
            "check_code",
            json!({"code": "let a = 1;", "format": "cobol"}),
            unknown_format.as_str(),
        ),
        (
            "check_code",
            json!({"format": "js"}),
            "Missing required field: code",
        ),
        (
            "check_code",
            json!({"code": "let a = 1;", "path": "notes.txt"}),
            unknown_path.as_str(),
        ),
        (
            "check_diff",
            json!({"diff": "Fix the tests, please.\n"}),
            not_a_diff,
        ),
        (
            "check_diff",
            json!({"patch": ""}),
            "Missing required field: diff",
        ),
        (
            "check_diff",
            json!({"diff": "", "nearMiss": "yes"}),
            "Field \"nearMiss\" must be a boolean",
        ),
        (
            "list_clones",
            json!({"limit": 0}),
            "Field \"limit\" must be a whole number from 1 to 1000",
        ),
    ];
    // REST refuses the same input with the same message.
    for (tool, input, message) in &cases {
        let (status, body) = match *tool {
            "check_code" => server.post("/api/check", &input.to_string()),
            "check_diff" => server.post("/api/check-diff", &input.to_string()),
            _ => server.get("/api/clones?limit=0"),
        };
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["message"], *message);
    }
    for revision in REVISIONS {
        let client = connect(&server, revision).await;
        for (tool, input, message) in &cases {
            assert_tool_error(&call(&client, tool, input.clone()).await, message);
        }
        client.cancel().await.expect("close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_are_guarded_as_for_the_rest_of_the_api() {
    let server = Server::start("project", &["--allowed-origin", "tools.internal"]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let post = |origin: &str| {
        server.request(
            "POST",
            "/mcp",
            &[
                ("Origin", origin),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            body.as_bytes(),
        )
    };
    let res = post("http://evil.example");
    assert_eq!(res.status, 403);
    assert_json!(
        res.json(),
        error(
            "Forbidden",
            "Origin \"http://evil.example\" is not allowed; requests from browsers must come from localhost, or start dupcheck with --allowed-origin for that host",
            403
        )
    );
    for allowed in ["http://localhost:5173", "https://tools.internal"] {
        let res = post(allowed);
        assert_eq!(res.status, 200, "{allowed}");
        assert_json!(res.json(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    }
    // rmcp's client, sent from a page of an allowed origin and of another.
    for revision in REVISIONS {
        let client = connect_with(&server, revision, &[("origin", "http://127.0.0.1:8080")])
            .await
            .expect("an allowed origin connects");
        let tools = client.list_all_tools().await.expect("tools/list");
        assert_eq!(tools.len(), 4);
        client.cancel().await.expect("close");
        let refused = connect_with(&server, revision, &[("origin", "http://evil.example")]).await;
        assert!(refused.is_err(), "{revision:?}");
    }
}

#[test]
fn other_methods_and_transport_refusals_are_json_errors() {
    let server = Server::start("project", &["--max-body", "1kb"]);
    for method in ["GET", "DELETE", "PUT"] {
        let res = server.request(method, "/mcp", &[("Accept", "text/event-stream")], b"");
        assert_eq!(res.status, 405, "{method}");
        assert_eq!(res.header("allow"), Some("POST"));
        assert_json!(
            res.json(),
            error(
                "MethodNotAllowed",
                &format!("Method {method} is not allowed on /mcp; use POST"),
                405
            )
        );
    }
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let res = server.request(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        ping.as_bytes(),
    );
    assert_eq!(res.status, 406);
    assert_json!(
        res.json(),
        error(
            "NotAcceptable",
            "Not Acceptable: Client must accept both application/json and text/event-stream",
            406
        )
    );
    let accept = ("Accept", "application/json, text/event-stream");
    let res = server.request("POST", "/mcp", &[accept], ping.as_bytes());
    assert_eq!(res.status, 415);
    assert_json!(
        res.json(),
        error(
            "UnsupportedMediaType",
            "Unsupported Media Type: Content-Type must be application/json",
            415
        )
    );
    let json_body = ("Content-Type", "application/json");
    let res = server.request(
        "POST",
        "/mcp",
        &[accept, json_body, ("MCP-Protocol-Version", "1999-01-01")],
        ping.as_bytes(),
    );
    assert_eq!(res.status, 400);
    assert_json!(
        res.json(),
        error(
            "BadRequest",
            "Bad Request: Unsupported MCP-Protocol-Version: 1999-01-01",
            400
        )
    );
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "check_code", "arguments": {"code": "x".repeat(2000)}}});
    let res = server.request(
        "POST",
        "/mcp",
        &[accept, json_body],
        big.to_string().as_bytes(),
    );
    assert_eq!(res.status, 413);
    assert_json!(
        res.json(),
        error(
            "PayloadTooLarge",
            "Request body is larger than the 1kb limit; send a smaller snippet or raise --max-body",
            413
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_near_miss_argument_answers_as_the_rest_field() {
    // `orders.js` copied, two variables renamed, a line inserted and one
    // dropped: one near-miss duplication unless "nearMiss" is false.
    let server = Server::start("near_miss", &["--mode", "mild"]);
    let original = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/near_miss/src/orders.js"),
    )
    .expect("fixture");
    let code = original
        .replace("summarizeOrders(orders, taxRate)", "summarize(list, rate)")
        .replace("of orders)", "of list)")
        .replace("net * taxRate", "net * rate")
        .replace(
            "    const net",
            "    console.log(\"order\", order.id);\n    const net",
        )
        .replace(
            "  totals.average = totals.count ? totals.net / totals.count : 0;\n",
            "",
        );
    let client = connect(&server, Revision::Current).await;
    let mut similarities = Vec::new();
    for near_miss in [json!(null), json!(true), json!(false)] {
        let input = json!({"code": code, "format": "js", "nearMiss": near_miss});
        let (status, rest) = server.check(input.clone());
        assert_eq!(status, 200, "{rest}");
        let result = call(&client, "check_code", input).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_json!(result.structured_content.clone().expect("structured"), rest);
        let dups = rest["duplications"].as_array().expect("duplications");
        similarities.push(
            dups.iter()
                .map(|d| d["similarity"].clone())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(
        similarities,
        [vec![json!(0.871)], vec![json!(0.871)], vec![]]
    );
    let bad = json!({"code": code, "format": "js", "nearMiss": "no"});
    assert_tool_error(
        &call(&client, "check_code", bad).await,
        "Field \"nearMiss\" must be a boolean",
    );
    client.cancel().await.expect("close");
}
