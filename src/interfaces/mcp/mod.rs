//! MCP: dupcheck's tools for AI coding assistants, built with the official
//! SDK (`rmcp`), served over HTTP at `POST /mcp` ([`http`]) and over stdin
//! and stdout by `dupcheck mcp` ([`stdio`]).
//!
//! The tools are thin adapters over the service: the same
//! [`Workspace`] calls as the REST
//! handlers (admission, blocking pool, NotReady):
//! `check_code` is `POST /api/check`, `check_diff` is
//! `POST /api/check-diff`, `list_clones` is `GET /api/clones`,
//! `project_stats` is `GET /api/stats`. Each answers
//! the REST answer's JSON object as structured content and a short text
//! summary for the model; what REST refuses is a tool error whose text is
//! REST's error message. With `dupcheck mcp --server URL` each call is
//! passed to the running server's `/mcp` ([`remote`]) and its result
//! returned as it is.

pub(crate) mod http;
pub(crate) mod remote;
pub(crate) mod stdio;

use std::fmt::Write as _;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::schema_for_input;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use serde::Serialize;
use serde_json::Value;

use self::remote::Remote;
use super::http::error::ApiError;
use super::http::request;
use super::render::answers;
use super::render::clones::ClonesPageJson;
use crate::engine::matching::Thresholds;
use crate::engine::stats::{Percent, ProjectStats, Row};
use crate::service::answer::{renaming, Place};
use crate::service::check::{CheckAnswer, StoreStatus};
use crate::service::clones::ClonesPage;
use crate::service::diff_check::{DiffAnswer, DiffOptions};
use crate::service::workspace::Workspace;

/// How many duplications or files a text summary names.
const SUMMARY_ITEMS: usize = 10;

/// The arguments of `check_code`.
#[derive(JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[allow(dead_code)] // Only its schema is used: `request::validate` reads the arguments.
struct CheckCodeArgs {
    /// The code to look for: a function, a method, a class or a block, as
    /// it is or will be written.
    code: String,
    /// Its language: a name, alias or extension such as javascript, ts,
    /// python, rust, go, java, c, cpp, csharp, ruby, php, kotlin, swift.
    /// May be left out when `path` has a known extension.
    #[serde(default)]
    format: String,
    /// The file the code is or will be in, relative to the project root
    /// (e.g. src/util/merge.js): gives the format by its extension, and the
    /// file's own indexed version is not reported as a duplicate of it.
    #[serde(default)]
    path: String,
    /// How much two copies must agree: strict (same names and values),
    /// mild (names may differ), weak (names and values may differ).
    /// Defaults to the server's --mode.
    #[serde(default)]
    #[schemars(schema_with = "mode_schema")]
    mode: String,
    /// Whether a copy edited after it was made (a few statements inserted,
    /// deleted or changed) is found whole, with its similarity and gaps.
    /// Defaults to true unless the server runs with --no-near-miss.
    #[serde(default, rename = "nearMiss")]
    near_miss: bool,
}

/// The schema of a `mode` argument: one of the names REST takes.
fn mode_schema(_: &mut rmcp::schemars::SchemaGenerator) -> rmcp::schemars::Schema {
    rmcp::schemars::json_schema!({"type": "string", "enum": ["strict", "mild", "weak"]})
}

/// The arguments of `check_diff`.
#[derive(JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[allow(dead_code)] // Only its schema is used: `request::diff_field` and `diff_options` read the arguments.
struct CheckDiffArgs {
    /// A unified diff, as `git diff` prints it, of changes to the project's
    /// files (paths relative to the project root, a/ and b/ prefixes
    /// allowed).
    diff: String,
    /// How much two copies must agree: strict (same names and values),
    /// mild (names may differ), weak (names and values may differ).
    /// Defaults to the server's --mode.
    #[serde(default)]
    #[schemars(schema_with = "mode_schema")]
    mode: String,
    /// Whether added code that copies existing code with a few statements
    /// inserted, deleted or changed is found whole, with its similarity
    /// and gaps. Defaults to true unless the server runs with
    /// --no-near-miss.
    #[serde(default, rename = "nearMiss")]
    near_miss: bool,
}

/// The arguments of `list_clones`.
#[derive(JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Only its schema is used: `request::clones_query` reads the arguments.
struct ListClonesArgs {
    /// Only clones with a place in this file or folder, relative to the
    /// project root (e.g. src/util).
    #[serde(default)]
    path: String,
    /// Only clones with a place in this format (a name, alias or
    /// extension).
    #[serde(default)]
    format: String,
    /// Only clones of at least this many tokens.
    #[serde(default)]
    min_tokens: u32,
    /// Clones per page, 1 to 1000 (default 100).
    #[serde(default)]
    limit: u32,
    /// The `nextCursor` of the previous page, for the page after it.
    #[serde(default)]
    cursor: String,
    /// Whether each place carries its text (`fragment`).
    #[serde(default)]
    fragments: bool,
}

/// The MCP server: its tools, over a workspace in process or a running
/// server.
#[derive(Clone)]
pub(crate) struct Tools {
    backend: Backend,
}

/// Who answers the tools.
#[derive(Clone)]
enum Backend {
    /// The workspace in process (the server's own, or `dupcheck mcp`'s).
    Local(Arc<Workspace>),
    /// A running server (`dupcheck mcp --server URL`).
    Remote(Arc<Remote>),
}

impl Tools {
    /// The tools over `workspace`.
    pub(crate) fn local(workspace: Arc<Workspace>) -> Tools {
        Tools {
            backend: Backend::Local(workspace),
        }
    }

    /// The tools of the server `remote` asks.
    pub(crate) fn remote(remote: Arc<Remote>) -> Tools {
        Tools {
            backend: Backend::Remote(remote),
        }
    }

    /// The workspace in process, or the answer of the running server to
    /// `tool` with `args`.
    async fn workspace(
        &self,
        tool: &str,
        args: &JsonObject,
    ) -> Result<&Arc<Workspace>, CallToolResult> {
        match &self.backend {
            Backend::Local(workspace) => Ok(workspace),
            Backend::Remote(remote) => Err(remote.call(tool, args).await),
        }
    }
}

/// The tools, built once (their schemas are generated then).
static TOOLS: LazyLock<ToolRouter<Tools>> = LazyLock::new(Tools::tool_router);

#[tool_router]
impl Tools {
    #[tool(
        description = "Find where the project already has this code. Call it before writing a \
            function, method or block (to reuse the existing one instead of adding a copy) and \
            after writing one. Give the code and its format (language) or the path of its file. \
            Returns as structured content the answer of dupcheck's POST /api/check: \
            `duplications`, each with `codebaseLocation` (file, startLine, endLine, columns, \
            the duplicated `fragment`), `snippetLocation` (lines of your code), `linesCount`, \
            `tokens`, `format`; and `statistics`. The text names each place as file:lines; an \
            empty list means no duplication was found.",
        input_schema = input_schema::<CheckCodeArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn check_code(&self, mut args: JsonObject) -> CallToolResult {
        // A rescan before the check is the REST API's option alone.
        args.remove("recheck");
        let workspace = match self.workspace("check_code", &args).await {
            Ok(workspace) => workspace,
            Err(answered) => return answered,
        };
        let scanner = &workspace.scanner;
        let config = scanner.config();
        let request = match request::validate(
            args,
            scanner.registry(),
            &config.dir,
            config.mode,
            config.near_miss,
        ) {
            Ok((request, _)) => request,
            Err(err) => return failure(err),
        };
        let thresholds = scanner.config().thresholds;
        let answer = workspace
            .check(request, false, move |_, _, answer| {
                let body = answers::check(answer);
                Ok((value(&body)?, check_summary(answer, thresholds)))
            })
            .await;
        result(answer)
    }

    #[tool(
        description = "Find the duplicated code a change adds, before committing it. Give a \
            unified diff (the output of git diff) of changes to this project's files. Each \
            changed file is checked whole against the code the change leaves: moved code is \
            not reported, code pasted twice within the diff is. Returns as structured content \
            the answer of dupcheck's POST /api/check-diff: `files` (path, format, \
            `duplications` with `snippetLocation` in the file's new text, the \
            `codebaseLocation` it duplicates with its `fragment`, `addedLines`), `skipped` \
            files with the reason, `warnings`, `statistics`. The text names each added \
            duplication and what it copies as file:lines.",
        input_schema = input_schema::<CheckDiffArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn check_diff(&self, args: JsonObject) -> CallToolResult {
        let workspace = match self.workspace("check_diff", &args).await {
            Ok(workspace) => workspace,
            Err(answered) => return answered,
        };
        let fields = request::diff_field(&args).and_then(|diff| {
            let defaults = DiffOptions::of(workspace.scanner.config());
            let options = request::diff_options(&args, defaults)?;
            Ok((Bytes::copy_from_slice(diff.as_bytes()), options))
        });
        let (diff, options) = match fields {
            Ok(fields) => fields,
            Err(err) => return failure(err),
        };
        let answer = workspace
            .check_diff(diff, options, |answer| {
                Ok((value(&answers::diff(answer))?, diff_summary(answer)))
            })
            .await;
        result(answer)
    }

    #[tool(
        description = "List the project's clones (pairs of places with the same code), largest \
            first, a page at a time. Call it to find the duplicated code worth refactoring, in \
            the whole project or in one file or folder (`path`), of one format, or of at least \
            `minTokens` tokens. Returns as structured content the answer of dupcheck's \
            GET /api/clones: `clones`, each with a stable `id`, `format`, `tokens`, `lines` and \
            its two places `first` and `second` (file, startLine, endLine, columns, and \
            `fragment` when `fragments` is true); `total` (clones matching the filters) and \
            `nextCursor` (pass it as `cursor` for the next page). The text names each clone's \
            two places as file:lines.",
        input_schema = input_schema::<ListClonesArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_clones(&self, args: JsonObject) -> CallToolResult {
        let workspace = match self.workspace("list_clones", &args).await {
            Ok(workspace) => workspace,
            Err(answered) => return answered,
        };
        let scanner = &workspace.scanner;
        let query = match request::clones_query(&args, scanner.registry(), &scanner.config().dir) {
            Ok(query) => query,
            Err(err) => return failure(err),
        };
        let answer = workspace
            .clones(query, |page| {
                Ok((value(&ClonesPageJson::from(page))?, clones_summary(page)))
            })
            .await;
        result(answer)
    }

    #[tool(
        description = "Duplication statistics of the whole project: in total, per format and \
            per file, the lines, tokens, files, clones, and the lines and tokens inside clones \
            with their percentages. Call it for an overview of how much of the code is \
            duplicated and where. Returns as structured content the answer of dupcheck's \
            GET /api/stats (`statistics`, `timestamp`); the text gives the totals, each \
            format's share and the most duplicated files.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn project_stats(&self) -> CallToolResult {
        let workspace = match self.workspace("project_stats", &JsonObject::new()).await {
            Ok(workspace) => workspace,
            Err(answered) => return answered,
        };
        let answer = workspace
            .stats(|statistics| {
                let body = answers::stats(statistics, std::time::SystemTime::now());
                Ok((value(&body)?, stats_summary(statistics)))
            })
            .await;
        result(answer)
    }
}

#[tool_handler(
    router = TOOLS,
    name = "dupcheck",
    instructions = "dupcheck indexes the source files of one project and finds duplicated \
        code in them. Before writing a function, call check_code with it: if the project \
        already has it, reuse it. Call check_diff on a change before committing it, \
        list_clones for the duplicated code worth refactoring, and project_stats for an \
        overview."
)]
impl ServerHandler for Tools {}

/// The input schema of a tool whose arguments are `T`.
fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    // A derived schema of a struct is an object: rmcp accepts it.
    schema_for_input::<T>().expect("a struct's schema is an object")
}

/// `body` as a JSON value, for structured content.
fn value<T: Serialize>(body: &T) -> Result<Value, ApiError> {
    serde_json::to_value(body).map_err(|err| {
        tracing::error!("cannot serialize a tool's answer: {err}");
        ApiError::Internal
    })
}

/// A tool's answer: the REST answer as structured content with the
/// summary as text, or REST's refusal as a tool error.
fn result(answer: Result<(Value, String), ApiError>) -> CallToolResult {
    match answer {
        Ok((value, summary)) => {
            let mut result = CallToolResult::structured(value);
            result.content = vec![ContentBlock::text(summary)];
            result
        }
        Err(err) => failure(err),
    }
}

/// A tool error whose text is the message of REST's error body.
fn failure(err: ApiError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(err.to_string())])
}

/// `n` and `noun`, in the plural unless `n` is 1.
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A percentage as answers write it: `80`, `88.89`.
fn percent(p: Percent) -> String {
    format!("{}%", p.0)
}

/// The text of `check_code`: each duplication as file:lines.
fn check_summary(answer: &CheckAnswer, thresholds: Thresholds) -> String {
    // With a store, the other repositories are searched too.
    let (searched, unread) = match answer.store {
        None => ("the project", ""),
        Some(StoreStatus::Ok { .. }) => ("the project and the store's other repositories", ""),
        Some(StoreStatus::Unavailable { .. }) => (
            "the project",
            "\nThe store of other repositories did not answer: they were not searched.",
        ),
    };
    if answer.total == 0 {
        return format!(
            "No duplication found: {searched} {} no run of at least {} tokens and {} lines of this code.{unread}",
            if searched.contains(" and ") { "have" } else { "has" },
            thresholds.min_tokens, thresholds.min_lines
        );
    }
    let mut text = format!(
        "{} found in {searched}:",
        count(answer.total, "duplication")
    );
    for d in answer.duplications.iter().take(SUMMARY_ITEMS) {
        let (place, other) = (&d.place.span, &d.other.span);
        let file = d.other.named();
        let _ = write!(
            text,
            "\n- {}{}:{}-{}: {} ({} tokens{}), lines {}-{} of the code{}{}",
            symbol_in(&d.other),
            file,
            other.start.line,
            other.end.line,
            count(place.lines() as usize, "line"),
            d.tokens,
            d.near.as_ref().map_or(String::new(), |n| format!(
                ", near-miss: {:.0}% similar",
                100.0 * n.similarity
            )),
            place.start.line,
            place.end.line,
            d.place
                .symbol_said()
                .map_or(String::new(), |s| format!(" ({s})")),
            renaming(&d.renamed).map_or(String::new(), |r| format!(
                "; renaming {r}: call it instead"
            )),
        );
    }
    let named = answer.duplications.len().min(SUMMARY_ITEMS);
    if answer.total > named {
        let _ = write!(text, "\n- and {} more", answer.total - named);
    }
    text.push_str(unread);
    text
}

/// A place's symbol before its file: "`` `merge()` in ``", or nothing.
fn symbol_in(place: &Place) -> String {
    place
        .symbol_said()
        .map_or(String::new(), |s| format!("{s} in "))
}

/// The text of `check_diff`: each added duplication and what it copies,
/// as file:lines, and the files not checked.
fn diff_summary(answer: &DiffAnswer) -> String {
    let total = answer.statistics.total_duplications as usize;
    let mut text = if total == 0 {
        "No duplication added: the diff adds no code that duplicates the project or itself."
            .to_owned()
    } else {
        format!("{} added:", count(total, "duplication"))
    };
    let listed = answer
        .files
        .iter()
        .flat_map(|f| f.duplications.iter().map(move |d| (f.path.as_str(), d)));
    let mut named = 0;
    for (path, d) in listed.take(SUMMARY_ITEMS) {
        named += 1;
        let _ = write!(
            text,
            "\n- {}{path}:{}-{} duplicates {}{}:{}-{}: {} ({} tokens, {} added){}",
            symbol_in(&d.place),
            d.place.span.start.line,
            d.place.span.end.line,
            symbol_in(&d.other),
            d.other.named(),
            d.other.span.start.line,
            d.other.span.end.line,
            count(d.place.lines() as usize, "line"),
            d.tokens,
            d.added_lines.unwrap_or_default(),
            renaming(&d.renamed).map_or(String::new(), |r| format!(", renaming {r}")),
        );
    }
    if total > named {
        let _ = write!(text, "\n- and {} more", total - named);
    }
    if !answer.skipped.is_empty() {
        let skipped: Vec<String> = answer
            .skipped
            .iter()
            .map(|s| format!("{} ({})", s.path, s.reason.name()))
            .collect();
        let _ = write!(text, "\nNot checked: {}.", skipped.join(", "));
    }
    if !answer.inconsistent.is_empty() {
        text.push_str("\nChanged in one copy only (a fix may be missing in the others):");
        for change in &answer.inconsistent {
            let _ = write!(text, "\n- {}", change.message());
        }
    }
    text
}

/// The text of `list_clones`: each clone's places as file:lines, and how
/// to get the next page.
fn clones_summary(page: &ClonesPage) -> String {
    if page.total == 0 {
        return "No clone found with these filters.".to_owned();
    }
    let mut text = format!(
        "{} in the project with these filters, largest first; this page lists {}:",
        count(page.total, "clone"),
        page.clones.len()
    );
    for listed in page.clones.iter().take(SUMMARY_ITEMS) {
        let (first, second) = (&listed.clone.place, &listed.clone.other);
        let _ = write!(
            text,
            "\n- {}{}:{}-{} and {}{}:{}-{}: {} ({} tokens, {}){}",
            symbol_in(first),
            first.path,
            first.span.start.line,
            first.span.end.line,
            symbol_in(second),
            second.path,
            second.span.start.line,
            second.span.end.line,
            count(listed.clone.larger_lines() as usize, "line"),
            listed.clone.tokens,
            first.format,
            renaming(&listed.clone.renamed).map_or(String::new(), |r| format!(", renaming {r}")),
        );
    }
    let named = page.clones.len().min(SUMMARY_ITEMS);
    if page.clones.len() > named {
        let _ = write!(
            text,
            "\n- and {} more on this page",
            page.clones.len() - named
        );
    }
    if let Some(cursor) = &page.next_cursor {
        let _ = write!(text, "\nMore on the next page: cursor {cursor:?}.");
    }
    text
}

/// The text of `project_stats`: totals, each format's share, and the files
/// with the most duplicated lines.
fn stats_summary(statistics: &ProjectStats) -> String {
    let total = &statistics.total;
    let mut text = format!(
        "{}, {}: {}, {} duplicated ({}).",
        count(total.sources as usize, "file"),
        count(total.lines as usize, "line"),
        count(total.clones as usize, "clone"),
        count(total.duplicated_lines as usize, "line"),
        percent(total.percentage)
    );
    if !statistics.formats.is_empty() {
        let formats: Vec<String> = statistics
            .formats
            .iter()
            .map(|(name, rows)| {
                format!(
                    "{name} {} of {} ({})",
                    percent(rows.total.percentage),
                    count(rows.total.lines as usize, "line"),
                    count(rows.total.sources as usize, "file")
                )
            })
            .collect();
        let _ = write!(text, "\nPer format: {}.", formats.join(", "));
    }
    let mut files: Vec<(&str, &Row)> = statistics
        .formats
        .values()
        .flat_map(|rows| rows.sources.iter().map(|(path, row)| (path.as_str(), row)))
        .filter(|(_, row)| row.duplicated_lines > 0)
        .collect();
    files.sort_by(|a, b| {
        (b.1.duplicated_lines.cmp(&a.1.duplicated_lines))
            .then(b.1.percentage.0.total_cmp(&a.1.percentage.0))
            .then(a.0.cmp(b.0))
    });
    if !files.is_empty() {
        let most: Vec<String> = files
            .iter()
            .take(SUMMARY_ITEMS)
            .map(|(path, row)| {
                format!(
                    "{path} {} ({})",
                    count(row.duplicated_lines as usize, "line"),
                    percent(row.percentage)
                )
            })
            .collect();
        let _ = write!(text, "\nMost duplicated files: {}.", most.join(", "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interfaces::http::handlers::tests::initializing;

    #[tokio::test]
    async fn before_the_first_scan_every_tool_says_the_index_is_not_ready() {
        let (_dir, state) = initializing();
        let tools = Tools::local(Arc::clone(&state.workspace));
        let code: JsonObject =
            serde_json::from_value(serde_json::json!({"code": "let a = 1;", "format": "js"}))
                .unwrap();
        let diff: JsonObject = serde_json::from_value(serde_json::json!({"diff": ""})).unwrap();
        for result in [
            tools.check_code(code).await,
            tools.check_diff(diff).await,
            tools.project_stats().await,
            tools.list_clones(JsonObject::new()).await,
        ] {
            assert_eq!(result.is_error, Some(true));
            assert_eq!(result.structured_content, None);
            assert_eq!(
                result.content[0].as_text().unwrap().text,
                "The initial scan is still running; retry shortly"
            );
        }
    }
}
