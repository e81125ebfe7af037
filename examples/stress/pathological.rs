//! Scenario `pathological`: snippets that are hard to parse or to match.
//!
//! On a copy of the fixture: the two snippets that once hung tree-sitter,
//! and 500 random strings (a fixed seed) of 10 to 200 characters over
//! quotes, brackets, comment and operator characters, in TypeScript, TSX
//! and JavaScript. Then, in strict, mild and weak mode, on a folder holding
//! a Python file of `A = 'x'` 100,000 times and one of a two-line function
//! 5,000 times: checks of 80 KB and 70 KB of the same lines, and the
//! project statistics.
//!
//! Every answer must be a 200 JSON, or a 422 `SnippetTooComplex` JSON for a
//! check, within 5 s (target 1 s); the slowest answer and the largest body
//! are reported.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fixture::{self, Lcg};
use crate::http::Conn;
use crate::report::{bytes, millis, Row};
use crate::server::Server;

/// The snippets that once hung tree-sitter: (code, format).
const HUNG: [(&str, &str); 2] = [
    ("\"\n'</*'[[``}s>]@*/", "typescript"),
    (
        "\"\"``[``-}!#[\"\"[\"\"]-{[\"\"'$/*\\x]<;;>-[}\\[`[+.x:*/",
        "javascript",
    ),
];
/// How many random snippets are checked.
const RANDOM_SNIPPETS: usize = 500;
/// What random snippets are made of.
const ALPHABET: &[u8] = b"\"'`[]{}()<>/*-+!#$@:;.\\x \n";
/// The formats random snippets are checked in, in turn.
const FORMATS: [&str; 3] = ["typescript", "tsx", "javascript"];
/// The answer time the server aims at, reported.
const ANSWER_TARGET: Duration = Duration::from_secs(1);
/// The answer time over which the row fails.
const ANSWER_LIMIT: Duration = Duration::from_secs(5);
/// How long an answer is waited for.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest the random snippets may take in all.
const RANDOM_BUDGET: Duration = Duration::from_secs(120);
/// One line of the repetitive file, repeated 100,000 times.
const REPEATED_LINE: &str = "A = 'x'\n";
/// The unit of the other repetitive file, repeated 5,000 times.
const REPEATED_UNIT: &str = "def f(a):\n    return g(a, 1)\n";

/// The worst answers seen.
#[derive(Default)]
struct Worst {
    slowest: (Duration, String),
    largest: (usize, String),
    refused: usize,
}

/// Runs the scenario.
pub fn run() -> Row {
    let mut row = Row::new("pathological");
    let mut worst = Worst::default();
    random_snippets(&mut row, &mut worst);
    repetitive_code(&mut row, &mut worst);
    row.figure(format!(
        "slowest {} ({}; target {})",
        millis(worst.slowest.0),
        worst.slowest.1,
        millis(ANSWER_TARGET)
    ));
    row.figure(format!(
        "largest body {} ({})",
        bytes(worst.largest.0 as u64),
        worst.largest.1
    ));
    row.figure(format!("{} answered 422", worst.refused));
    row
}

/// The snippets that hung, and the random ones, on the fixture.
fn random_snippets(row: &mut Row, worst: &mut Worst) {
    let dir = fixture::project_copy();
    let Some(mut server) = start(row, "pathological", dir.path(), &[]) else {
        return;
    };
    let mut conn = None;
    for (i, (code, format)) in HUNG.iter().enumerate() {
        let body = json!({"code": code, "format": format}).to_string();
        ask(
            row,
            worst,
            &server,
            &mut conn,
            &format!("hung snippet {}", i + 1),
            Request::Check(&body),
        );
    }
    let mut rng = Lcg::new(42);
    let started = Instant::now();
    for i in 0..RANDOM_SNIPPETS {
        if started.elapsed() > RANDOM_BUDGET {
            row.fail(format!(
                "gave up after {i} random snippets: over the budget of {} s",
                RANDOM_BUDGET.as_secs()
            ));
            break;
        }
        let len = rng.between(10, 200);
        let code: String = (0..len).map(|_| char::from(*rng.pick(ALPHABET))).collect();
        let format = FORMATS[i % FORMATS.len()];
        let body = json!({"code": code, "format": format}).to_string();
        let label = format!("random {i} ({format}, {len} chars)");
        if !ask(
            row,
            worst,
            &server,
            &mut conn,
            &label,
            Request::Check(&body),
        ) {
            eprintln!("stress: pathological: the snippet was {code:?}");
        }
        if let Some(crash) = server.crash() {
            row.fail(format!("after {label}: {crash}"));
            return;
        }
    }
    row.stopped(server.stop());
}

/// Large checks of repeated code, in each mode.
fn repetitive_code(row: &mut Row, worst: &mut Worst) {
    let dir = fixture::temp_dir();
    fixture::write(dir.path(), "lines.py", REPEATED_LINE.repeat(100_000));
    fixture::write(dir.path(), "units.py", REPEATED_UNIT.repeat(5_000));
    let lines = json!({
        "code": REPEATED_LINE.repeat(80 * 1024 / REPEATED_LINE.len()),
        "format": "python",
    })
    .to_string();
    let units = json!({
        "code": REPEATED_UNIT.repeat(70 * 1024 / REPEATED_UNIT.len()),
        "format": "python",
    })
    .to_string();
    for mode in ["strict", "mild", "weak"] {
        let name = format!("pathological-{mode}");
        let Some(mut server) = start(row, &name, dir.path(), &["--mode", mode]) else {
            continue;
        };
        let mut conn = None;
        for round in 1..=2 {
            let label = format!("80 KB of one line, {mode}, round {round}");
            ask(
                row,
                worst,
                &server,
                &mut conn,
                &label,
                Request::Check(&lines),
            );
            let label = format!("70 KB of a two-line unit, {mode}, round {round}");
            ask(
                row,
                worst,
                &server,
                &mut conn,
                &label,
                Request::Check(&units),
            );
        }
        let label = format!("stats of repeated code, {mode}");
        ask(row, worst, &server, &mut conn, &label, Request::Stats);
        if let Some(crash) = server.crash() {
            row.fail(crash);
        }
        row.stopped(server.stop());
    }
}

/// Starts a server and waits for its first scan; failures go to `row`.
fn start(row: &mut Row, name: &str, dir: &std::path::Path, args: &[&str]) -> Option<Server> {
    let mut server = match Server::start(name, dir, args) {
        Ok(server) => server,
        Err(err) => {
            row.fail(err);
            return None;
        }
    };
    match server.wait_ready(Duration::from_secs(120)) {
        Ok(_) => Some(server),
        Err(err) => {
            row.fail(err);
            row.stopped(server.stop());
            None
        }
    }
}

/// What to ask.
#[derive(Clone, Copy)]
enum Request<'a> {
    /// POST /api/check with this body.
    Check(&'a str),
    /// GET /api/stats.
    Stats,
}

/// Sends one request on `conn` (opened as needed) and judges the answer;
/// returns whether it was good.
fn ask(
    row: &mut Row,
    worst: &mut Worst,
    server: &Server,
    conn: &mut Option<Conn>,
    label: &str,
    request: Request,
) -> bool {
    if conn.as_ref().is_none_or(Conn::is_closed) {
        match Conn::open_with(server.port, ANSWER_TIMEOUT) {
            Ok(opened) => *conn = Some(opened),
            Err(err) => {
                row.fail(format!("{label}: cannot connect: {err}"));
                return false;
            }
        }
    }
    let open = conn.as_mut().expect("connected above");
    row.requests += 1;
    let started = Instant::now();
    let answer = match request {
        Request::Check(body) => open.post_json("/api/check", body),
        Request::Stats => open.get("/api/stats"),
    };
    let took = started.elapsed();
    if took > worst.slowest.0 {
        worst.slowest = (took, label.to_owned());
    }
    let res = match answer {
        Ok(res) => res,
        Err(err) => {
            *conn = None;
            row.fail(format!("{label}: no answer after {}: {err}", millis(took)));
            return false;
        }
    };
    if res.body.len() > worst.largest.0 {
        worst.largest = (res.body.len(), label.to_owned());
    }
    let verdict = match (res.status, request) {
        (200, Request::Check(_)) => res.json_object().and_then(|body| {
            if body.get("duplications").is_some_and(Value::is_array) {
                Ok(())
            } else {
                Err(format!("no duplications: {}", res.summary()))
            }
        }),
        (200, Request::Stats) => res.json_object().map(drop),
        (422, Request::Check(_)) => res.error_name().and_then(|name| {
            worst.refused += 1;
            if name == "SnippetTooComplex" {
                Ok(())
            } else {
                Err(format!("error {name}: {}", res.summary()))
            }
        }),
        _ => Err(format!("expected 200 or 422: {}", res.summary())),
    };
    let verdict = verdict.and_then(|()| {
        if took > ANSWER_LIMIT {
            Err(format!(
                "answered after {} (limit {})",
                millis(took),
                millis(ANSWER_LIMIT)
            ))
        } else {
            Ok(())
        }
    });
    match verdict {
        Ok(()) => true,
        Err(why) => {
            row.fail(format!("{label}: {why}"));
            false
        }
    }
}
