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
use crate::http::{self, Conn};
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
/// How long a server may take to finish its first scan.
const READY_LIMIT: Duration = Duration::from_secs(120);
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
    let Some(mut server) = Server::start_ready("pathological", dir.path(), &[], READY_LIMIT, row)
    else {
        return;
    };
    let mut client = Client::new(&server);
    for (i, (code, format)) in HUNG.iter().enumerate() {
        let body = json!({"code": code, "format": format}).to_string();
        let label = format!("hung snippet {}", i + 1);
        client.ask(row, worst, &label, Request::Check(&body));
    }
    let mut rng = Lcg::new(42);
    let started = Instant::now();
    for i in 0..RANDOM_SNIPPETS {
        if row.over_budget(started, RANDOM_BUDGET, format_args!("{i} random snippets")) {
            break;
        }
        let len = rng.between(10, 200);
        let code: String = (0..len).map(|_| char::from(*rng.pick(ALPHABET))).collect();
        let format = FORMATS[i % FORMATS.len()];
        let body = json!({"code": code, "format": format}).to_string();
        let label = format!("random {i} ({format}, {len} chars)");
        if !client.ask(row, worst, &label, Request::Check(&body)) {
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
    let checks = [
        ("80 KB of one line", lines),
        ("70 KB of a two-line unit", units),
    ];
    for mode in ["strict", "mild", "weak"] {
        let name = format!("pathological-{mode}");
        let args = ["--mode", mode];
        let Some(server) = Server::start_ready(&name, dir.path(), &args, READY_LIMIT, row) else {
            continue;
        };
        let mut client = Client::new(&server);
        for round in 1..=2 {
            for (what, body) in &checks {
                let label = format!("{what}, {mode}, round {round}");
                client.ask(row, worst, &label, Request::Check(body));
            }
        }
        let label = format!("stats of repeated code, {mode}");
        client.ask(row, worst, &label, Request::Stats);
        server.finish(row);
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

/// A keep-alive client of one server, reconnecting as needed.
struct Client {
    port: u16,
    conn: Option<Conn>,
}

impl Client {
    /// A client of `server`, not yet connected.
    fn new(server: &Server) -> Client {
        Client {
            port: server.port,
            conn: None,
        }
    }

    /// Sends one request and judges the answer into `row` and `worst`;
    /// returns whether it was good.
    fn ask(&mut self, row: &mut Row, worst: &mut Worst, label: &str, request: Request) -> bool {
        let open = match http::reuse(&mut self.conn, self.port, ANSWER_TIMEOUT) {
            Ok(open) => open,
            Err(err) => {
                row.fail(format!("{label}: cannot connect: {err}"));
                return false;
            }
        };
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
                self.conn = None;
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
}
