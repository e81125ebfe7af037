//! What the benchmark reports: the table, built line by line and printed
//! at the end on stdout (progress goes to stderr as it happens), and the
//! same figures as JSON in `target/bench.json`; with the CPU other
//! processes used during each part and the load average.

use std::fs;

use serde_json::{json, Map, Value};

use crate::env::{Env, Others};

/// Where the JSON report goes, relative to the repository.
const REPORT: &str = "target/bench.json";

/// The table being built and the JSON report.
pub(crate) struct Output {
    /// The table, printed at the end.
    lines: Vec<String>,
    /// The report, one key per part.
    pub(crate) json: Map<String, Value>,
    /// Where the report goes, relative to the repository.
    report: &'static str,
}

impl Output {
    /// A table that starts with `heading`, and an empty report for
    /// `target/bench.json`.
    pub(crate) fn new(heading: String) -> Output {
        Output::writing(heading, REPORT)
    }

    /// A table that starts with `heading`, and an empty report for
    /// `report` (the scale benchmark's is a file of its own).
    pub(crate) fn writing(heading: String, report: &'static str) -> Output {
        Output {
            lines: vec![heading],
            json: Map::new(),
            report,
        }
    }

    /// Adds a line to the table.
    pub(crate) fn line(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    /// Notes how busy other processes kept the machine during `part`.
    pub(crate) fn others(&mut self, part: &str, others: &Others) {
        let (cpu, wall) = others.since();
        let cores = cpu / wall.max(1e-9);
        self.line(format!(
            "  ({part}: other processes used {cpu:.1} CPU s in these {wall:.0} s, {cores:.2} cores on average)"
        ));
        let load = self
            .json
            .entry("otherProcesses")
            .or_insert_with(|| json!({}));
        load[part] = json!({"cpuS": cpu, "wallS": wall});
    }

    /// Notes a part that could not be measured, and goes on with the rest.
    pub(crate) fn failed(&mut self, part: &str, error: &str) {
        eprintln!("bench: {part} failed: {error}");
        self.line(format!("{part}: FAILED: {error}"));
        self.json.insert(part.to_owned(), json!({ "error": error }));
    }

    /// Prints the table with the load average at the end, and writes the
    /// report (`target/bench.json`, or where [`Output::writing`] said).
    pub(crate) fn finish(mut self, env: &Env) -> Result<(), String> {
        let load = load_average();
        self.line(format!("load average at the end: {load}"));
        self.json.insert("loadAverageAtEnd".into(), json!(load));
        println!();
        for line in &self.lines {
            println!("{line}");
        }
        let path = env.root.join(self.report);
        let text =
            serde_json::to_string_pretty(&Value::Object(self.json)).map_err(|e| e.to_string())?;
        fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("\nwritten: {}", path.display());
        Ok(())
    }
}

/// The 1, 5 and 15 minute load averages: other work on the machine skews
/// every figure.
pub(crate) fn load_average() -> String {
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A progress line on stderr.
pub(crate) fn progress(message: &str) {
    eprintln!("bench: {message}");
}

/// `value` with `decimals` decimals, or `-` if there is none.
pub(crate) fn or_dash(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// How a figure compares with its target: `ok` or `MISSED`.
pub(crate) fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}
