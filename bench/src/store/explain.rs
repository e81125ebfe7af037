//! Where a check's time goes in the database: the plans of the two
//! statements of `src/store/lookup.rs` as PostgreSQL ran them for real
//! snippets, with their actual times and buffers.
//!
//! The store's database is set so that new sessions load `auto_explain`
//! (`log_analyze`, `log_buffers`, every statement) and log every statement
//! with its parameters and the time of its parse, bind and execute
//! (`log_min_duration_statement = 0`); a server through the store started
//! then checks a few samples, each twice (the second on warm caches and
//! a session that has planned the statement before), and the settings are
//! reset. What the server logged meanwhile is written whole to
//! `target/bench-store-explain.log`; the report keeps each statement's
//! times (parse, bind, execute, and the plan's execution) and the plan of
//! each statement's last run.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use crate::checks::{say, Sample};
use crate::env::Env;
use crate::postgres::Postgres;
use crate::server::{request, Conn, Server};

/// Where the log goes, relative to the repository.
pub(crate) const LOG: &str = "target/bench-store-explain.log";

/// Samples explained.
const EXPLAINED: usize = 3;

/// Which of the two statements a log line is of.
fn statement_of(text: &str) -> Option<&'static str> {
    if text.contains("FROM postings p") {
        Some("postings")
    } else if text.contains("FROM copy_files f") {
        Some("contents")
    } else {
        None
    }
}

/// Checks the first [`EXPLAINED`] samples of `samples` through a new
/// server with the plans logged; the figures and plans, and each
/// statement's rows (from its plan's top line) beside its time.
pub(crate) fn explain(
    env: &Env,
    pg: &Postgres,
    empty: &Path,
    own: &str,
    samples: &[&Sample],
) -> Result<Value, String> {
    pg.explaining(true)?;
    let result = run(env, pg, empty, own, samples);
    pg.explaining(false)?;
    result
}

/// [`explain`] once the settings are made.
fn run(
    env: &Env,
    pg: &Postgres,
    empty: &Path,
    own: &str,
    samples: &[&Sample],
) -> Result<Value, String> {
    let url = pg.url();
    let flags = [
        "--no-cache",
        "--no-watch",
        "--store",
        &url,
        "--repository",
        own,
    ];
    let mut server = Server::dupcheck(env, empty, &flags)?;
    server.summary(std::time::Duration::from_secs(60))?;
    let mark = pg.log_mark();
    let mut conn = Conn::open(server.port).map_err(|e| e.to_string())?;
    let mut explained = Vec::new();
    for sample in samples.iter().take(EXPLAINED) {
        say(&format!("explaining {}/{}", sample.repository, sample.rel));
        let mut runs = Vec::new();
        for _ in 0..2 {
            let at = pg.log_mark();
            let started = std::time::Instant::now();
            let body = sample.body();
            let response = conn
                .exchange(&request("POST", "/api/check", server.port, &body))
                .map_err(|e| e.to_string())?;
            let ms = started.elapsed().as_secs_f64() * 1e3;
            let answer: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
            let found = answer["duplications"].as_array().map_or(0, Vec::len);
            // The log is read from the server's stderr by another thread.
            std::thread::sleep(std::time::Duration::from_millis(200));
            let statements = timings(&pg.log_since(at));
            runs.push(json!({"checkMs": ms, "duplications": found, "statements": statements}));
        }
        explained.push(json!({
            "sample": format!("{}/{}:{}+{} ({})", sample.repository, sample.rel,
                              sample.line, sample.lines, sample.mode),
            "runs": runs,
        }));
    }
    server.stop();
    let log = pg.log_since(mark);
    let path = env.root.join(LOG);
    fs::write(&path, &log).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(json!({
        "checks": explained,
        "timings": timings(&log),
        "lastPlans": last_plans(&log),
        "log": LOG,
    }))
}

/// Every logged duration of the two statements, in order:
/// `{statement, phase, ms}`, phase `parse`, `bind`, `execute` (the
/// statement log) or `plan` (auto_explain's, the execution alone).
fn timings(log: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let lines: Vec<&str> = log.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.split("duration: ").nth(1) else {
            continue;
        };
        let Some(ms) = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        else {
            continue;
        };
        let (phase, text) = if rest.contains("plan:") {
            // auto_explain: the query text is on the next line.
            ("plan", lines.get(i + 1).copied().unwrap_or(""))
        } else if rest.contains(" parse ") {
            ("parse", *line)
        } else if rest.contains(" bind ") {
            ("bind", *line)
        } else if rest.contains(" execute ") {
            ("execute", *line)
        } else {
            continue;
        };
        let Some(statement) = statement_of(text) else {
            continue;
        };
        let mut timing = json!({"statement": statement, "phase": phase, "ms": ms});
        if phase == "plan" {
            // The plan's top node, after the query text: its actual rows.
            let rows = lines
                .get(i + 2)
                .and_then(|top| top.split("actual time=").nth(1))
                .and_then(|actual| actual.split("rows=").nth(1))
                .and_then(|r| r.split_whitespace().next())
                .and_then(|r| r.parse::<u64>().ok());
            timing["rows"] = json!(rows);
        }
        out.push(timing);
    }
    out
}

/// The last auto_explain plan of each statement, its lines.
fn last_plans(log: &str) -> Value {
    let mut plans = serde_json::Map::new();
    let mut current: Option<(&'static str, Vec<String>)> = None;
    let mut lines = log.lines().peekable();
    while let Some(line) = lines.next() {
        if line.contains("plan:") && line.contains("duration: ") {
            if let Some((name, plan)) = current.take() {
                plans.insert(name.into(), json!(plan));
            }
            let query = lines.peek().copied().unwrap_or("");
            current = statement_of(query).map(|name| (name, vec![line.to_owned()]));
            continue;
        }
        if let Some((_, plan)) = current.as_mut() {
            // A plan's lines are indented; the next log line is not.
            if line.starts_with(char::is_whitespace) {
                plan.push(line.to_owned());
                continue;
            }
            if let Some((name, plan)) = current.take() {
                plans.insert(name.into(), json!(plan));
            }
        }
    }
    if let Some((name, plan)) = current {
        plans.insert(name.into(), json!(plan));
    }
    Value::Object(plans)
}
