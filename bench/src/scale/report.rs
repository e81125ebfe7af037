//! The report: one table per group of figures, a row per figure and a
//! column per fraction (Markdown, so that it can be pasted), then what
//! does not fit in a cell (the units of each fraction, the server's memory
//! breakdowns, lines about the cache verbatim, the reference and mild
//! mode); and the same figures in the JSON report.

use serde_json::{json, Map, Value};

use crate::fractions::{Fraction, Units};
use crate::measure::{Latency, Throughput};
use crate::output::{or_dash, verdict, Output};
use crate::peer::{PeerRun, FORMATS};
use crate::serve::{
    Checks, Cold, Endpoint, Figures, Floor, Reference, Startup, Warm, CONNECTIONS, SNIPPET_LINES,
};

/// Target of the kernel's checks/s at 16 connections, as a share of
/// libgit2's.
const TARGET_CHECKS_RATIO: f64 = 0.8;

/// Everything measured on one fraction.
pub(crate) struct Measured {
    /// The fraction.
    pub(crate) fraction: Fraction,
    /// dupcheck's figures.
    pub(crate) figures: Figures,
    /// jscpd 5's run, unless `--no-peer`.
    pub(crate) peer: Option<Result<PeerRun, String>>,
    /// The cold start in mild mode, with `--mild` on the largest fraction.
    pub(crate) mild: Option<Result<Startup, String>>,
    /// Other processes' CPU seconds and the wall seconds meanwhile.
    pub(crate) others: (f64, f64),
}

impl Measured {
    /// The cold start, if it was measured.
    fn cold(&self) -> Option<&Cold> {
        self.figures.cold.as_ref().ok()
    }

    /// The cold start's figures, if it was measured.
    fn startup(&self) -> Option<&Startup> {
        self.cold().map(|c| &c.startup)
    }

    /// The cold server's checks, if they were measured.
    fn checks(&self) -> Option<&Checks> {
        self.cold().and_then(|c| c.checks.as_ref().ok())
    }

    /// The warm restart, if it was measured.
    fn warm(&self) -> Option<&Warm> {
        self.figures.warm.as_ref().ok()
    }

    /// Lines of the cold start's `scanned` line (the denominator of every
    /// bytes-per-line figure).
    fn lines(&self) -> Option<u64> {
        self.startup().and_then(|s| s.lines)
    }

    /// `N MB (X B/line)` of a reading in MB.
    fn per_line(&self, mb: Option<f64>) -> String {
        match (mb, self.lines()) {
            (Some(mb), Some(lines)) if lines > 0 => {
                format!("{mb:.0} MB ({:.0} B/line)", mb * 1048576.0 / lines as f64)
            }
            (mb, _) => format!("{} MB", or_dash(mb, 0)),
        }
    }
}

/// A Markdown table: a row per figure, a column per fraction.
struct Table {
    /// The line above it.
    title: String,
    /// The header: the figure's column, then one per fraction.
    header: Vec<String>,
    /// Each row's cells, its label first.
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with a column per fraction of `measured`.
    fn new(title: &str, measured: &[Measured]) -> Table {
        let mut header = vec!["figure".to_owned()];
        header.extend(measured.iter().map(|m| m.fraction.name.clone()));
        Table {
            title: title.to_owned(),
            header,
            rows: Vec::new(),
        }
    }

    /// Adds the row `label`, a cell per fraction.
    fn row(&mut self, label: &str, measured: &[Measured], cell: impl Fn(&Measured) -> String) {
        let mut row = vec![label.to_owned()];
        row.extend(measured.iter().map(cell));
        self.rows.push(row);
    }

    /// Its lines, columns padded: the label's to the left, the others to
    /// the right.
    fn lines(&self) -> Vec<String> {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|i| {
                let cells = self.rows.iter().map(|r| r[i].chars().count());
                cells.chain([self.header[i].len(), 3]).max().unwrap_or(3)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| match i {
                    0 => format!("{c:<w$}"),
                    _ => format!("{c:>w$}"),
                })
                .collect();
            format!("| {} |", padded.join(" | "))
        };
        // Each cell's dashes span its padding too; the figures' columns
        // are right-aligned.
        let rule: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| match i {
                0 => "-".repeat(w + 2),
                _ => format!("{}:", "-".repeat(w + 1)),
            })
            .collect();
        let mut lines = vec![String::new(), self.title.clone(), String::new()];
        lines.push(line(&self.header));
        lines.push(format!("|{}|", rule.join("|")));
        lines.extend(self.rows.iter().map(|r| line(r)));
        lines
    }
}

/// jscpd 5's run on a fraction, if it ran.
fn run(m: &Measured) -> Option<&PeerRun> {
    m.peer.as_ref().and_then(|p| p.as_ref().ok())
}

/// A count, or `-`.
fn count(n: Option<u64>) -> String {
    n.map_or("-".into(), |n| n.to_string())
}

/// Seconds with 2 decimals, or `-`.
fn secs(s: Option<f64>) -> String {
    or_dash(s, 2)
}

/// An endpoint's cell: `12.3 ms, 45.6 KB`.
fn endpoint_cell(m: &Measured, path: &str) -> String {
    let found = m
        .cold()
        .and_then(|c| c.endpoints.as_ref().ok())
        .and_then(|e| e.iter().find(|e| e.path == path));
    match found {
        Some(e) if e.status == 200 => {
            format!("{:.1} ms, {:.1} KB", e.median_ms, e.bytes as f64 / 1024.0)
        }
        Some(e) => format!("status {}", e.status),
        None => "-".into(),
    }
}

/// The head of a memory breakdown: `N MB (X B/line)`.
fn memory_head(line: Option<&String>) -> String {
    line.and_then(|l| l.strip_prefix("memory: "))
        .and_then(|l| l.split(':').next())
        .map_or("-".into(), str::to_owned)
}

/// The tables and the notes, added to `out`, and the JSON report.
pub(crate) fn write(
    out: &mut Output,
    units: &Units,
    measured: &[Measured],
    reference: Option<&Result<Reference, String>>,
) {
    let formats: Vec<String> = units
        .formats
        .iter()
        .take(6)
        .map(|(f, n)| format!("{f} {:.1}%", 100.0 * *n as f64 / units.lines.max(1) as f64))
        .collect();
    out.line(format!(
        "The tree: {} files, {} lines dupcheck scans ({}); cut into {} units",
        units.files,
        units.lines,
        formats.join(", "),
        units.units.len()
    ));
    let reference_rate = reference
        .and_then(|r| r.as_ref().ok())
        .map(|r| r.checks.load.per_second());
    for table in tables(units, measured, reference_rate) {
        for line in table.lines() {
            out.line(line);
        }
    }
    notes(out, measured, reference);
    let fractions: Map<String, Value> = measured
        .iter()
        .map(|m| (m.fraction.name.clone(), fraction_json(m)))
        .collect();
    out.json.insert(
        "tree".into(),
        json!({"files": units.files, "lines": units.lines, "formats": units.formats,
               "units": units.units.iter().map(|u| json!({"name": u.name, "lines": u.lines}))
                   .collect::<Vec<_>>()}),
    );
    out.json
        .insert("fractions".into(), Value::Object(fractions));
    out.json.insert(
        "reference".into(),
        match reference {
            Some(Ok(r)) => json!({"corpus": "libgit2", "startup": startup_json(&r.startup),
                                  "checks": checks_json(&r.checks)}),
            Some(Err(e)) => json!({ "error": e }),
            None => json!({"error": ".corpora/libgit2 is missing: bash bench/fetch-corpora.sh"}),
        },
    );
}

/// The tables of figures.
fn tables(units: &Units, measured: &[Measured], reference_rate: Option<f64>) -> Vec<Table> {
    let mut size = Table::new("SIZE", measured);
    size.row("share of the tree's lines", measured, |m| {
        format!(
            "{:.1}%",
            100.0 * m.fraction.lines as f64 / units.lines.max(1) as f64
        )
    });
    size.row("units (folders) linked", measured, |m| {
        m.fraction.units.len().to_string()
    });
    size.row("files", measured, |m| {
        count(m.startup().and_then(|s| s.files))
    });
    size.row("lines", measured, |m| count(m.lines()));
    size.row("tokens", measured, |m| {
        count(m.startup().and_then(|s| s.tokens))
    });
    size.row("skipped", measured, |m| {
        m.startup()
            .and_then(|s| s.skipped.clone())
            .unwrap_or_else(|| "-".into())
    });

    let mut scan = Table::new("SCAN (cold, --no-cache, watcher on)", measured);
    scan.row(
        "parse floor s, before / after (files)",
        measured,
        |m| match &m.figures.floor {
            Ok(f) => format!("{:.2} / {:.2} ({})", f.runs[0], f.runs[1], f.files),
            Err(_) => "-".into(),
        },
    );
    scan.row("scan alone between them s", measured, |m| {
        match &m.figures.floor {
            Ok(Floor {
                scan_alone: Ok(s),
                seconds,
                ..
            }) => format!("{s:.2} ({:.2}x their mean)", s / seconds),
            _ => "-".into(),
        }
    });
    scan.row("spawn -> scanned s (checks served)", measured, |m| {
        secs(m.startup().map(|s| s.scanned_s))
    });
    scan.row("scanned / the floors' mean", measured, |m| {
        match (m.startup(), &m.figures.floor) {
            (Some(s), Ok(f)) => format!("{:.2}x", s.scanned_s / f.seconds),
            _ => "-".into(),
        }
    });
    scan.row("clone detection s", measured, |m| {
        secs(m.startup().and_then(|s| s.detect_s))
    });
    scan.row("spawn -> clones line s", measured, |m| {
        secs(m.startup().and_then(|s| s.clones_s))
    });
    scan.row("clones", measured, |m| {
        count(m.startup().and_then(|s| s.clones))
    });
    scan.row("duplicated lines", measured, |m| {
        m.startup()
            .and_then(|s| s.duplicated.clone())
            .unwrap_or_else(|| "-".into())
    });

    let mut memory = Table::new(
        "MEMORY (VmRSS, VmHWM; per line of the scanned line)",
        measured,
    );
    memory.row("RSS after scanned line", measured, |m| {
        m.per_line(m.startup().and_then(|s| s.rss_scanned_mb))
    });
    memory.row("RSS after clones line", measured, |m| {
        m.per_line(m.startup().and_then(|s| s.rss_clones_mb))
    });
    memory.row("HWM after clones line", measured, |m| {
        m.per_line(m.startup().and_then(|s| s.hwm_clones_mb))
    });
    memory.row("RSS after the load", measured, |m| {
        m.per_line(m.checks().and_then(|c| c.rss_mb))
    });
    memory.row("HWM after the load", measured, |m| {
        m.per_line(m.checks().and_then(|c| c.hwm_mb))
    });
    memory.row("server's own count after the scan", measured, |m| {
        memory_head(m.startup().and_then(|s| s.memory_scan.as_ref()))
    });
    memory.row("server's own count after clones", measured, |m| {
        memory_head(m.startup().and_then(|s| s.memory_clones.as_ref()))
    });

    let mut checks = Table::new(
        &format!("CHECKS ({SNIPPET_LINES}-line snippets cut from the fraction's C files)"),
        measured,
    );
    checks.row("snippets", measured, |m| {
        m.checks().map_or("-".into(), |c| c.snippets.to_string())
    });
    checks.row("p50 / p99, one connection", measured, |m| {
        m.checks()
            .and_then(|c| c.latency.as_ref().ok())
            .map_or("-".into(), Latency::cell)
    });
    checks.row(
        &format!("checks/s at {CONNECTIONS} connections"),
        measured,
        |m| m.checks().map_or("-".into(), |c| c.load.cell()),
    );
    checks.row(
        &format!("vs libgit2 (target >= {TARGET_CHECKS_RATIO}x)"),
        measured,
        |m| match (m.checks(), reference_rate) {
            (
                Some(Checks {
                    load,
                    beside: Some([before, after]),
                    ..
                }),
                _,
            ) => {
                let (b, a) = (before.per_second(), after.per_second());
                let ratio = load.per_second() / ((b + a) / 2.0);
                format!(
                    "{ratio:.2}x of {b:.0}/s, {a:.0}/s: {}",
                    verdict(ratio >= TARGET_CHECKS_RATIO)
                )
            }
            (Some(c), Some(r)) => {
                let ratio = c.load.per_second() / r;
                format!("{ratio:.2}x: {}", verdict(ratio >= TARGET_CHECKS_RATIO))
            }
            _ => "-".into(),
        },
    );

    checks.row(
        &format!("the same at {CONNECTIONS} on their own folders alone"),
        measured,
        |m| match m.cold().map(|c| &c.own) {
            Some(Ok(own)) => format!(
                "{} ({} folders, {} lines)",
                own.load.cell(),
                own.folders,
                count(own.startup.lines)
            ),
            Some(Err(e)) => format!("FAILED: {e}"),
            None => "-".into(),
        },
    );
    checks.row("vs their own folders (growth)", measured, |m| {
        match (m.checks(), m.cold().map(|c| &c.own)) {
            (Some(c), Some(Ok(own))) => {
                format!("{:.2}x", c.load.per_second() / own.load.per_second())
            }
            _ => "-".into(),
        }
    });

    let mut api = Table::new("OTHER ENDPOINTS (GET, median of 5; body)", measured);
    for path in [
        "/api/clones?limit=100",
        "/api/clone?id=",
        "/api/stats",
        "/api/tree",
    ] {
        let label = match path {
            "/api/clone?id=" => "/api/clone?id=<first of the page>",
            other => other,
        };
        api.row(label, measured, |m| endpoint_cell(m, path));
    }

    let mut warm = Table::new(
        "WARM RESTART (--cache-dir in the fraction; SIGTERM once the cache settled)",
        measured,
    );
    warm.row("filling start: spawn -> clones line s", measured, |m| {
        secs(m.warm().and_then(|w| w.fill.clones_s))
    });
    warm.row(
        "cache file MB (settled, s after clones line)",
        measured,
        |m| {
            m.warm().map_or("-".into(), |w| {
                format!("{:.0} ({:.1})", w.cache_mb, w.cache_s)
            })
        },
    );
    warm.row("spawn -> /api/health ready s", measured, |m| {
        secs(m.warm().map(|w| w.ready_s))
    });
    warm.row("spawn -> clones line s", measured, |m| {
        secs(m.warm().and_then(|w| w.restart.clones_s))
    });
    warm.row("files parsed / reused", measured, |m| {
        m.warm().map_or("-".into(), |w| {
            format!("{} / {}", count(w.restart.parsed), count(w.restart.reused))
        })
    });
    warm.row("RSS after clones line", measured, |m| {
        m.per_line(m.warm().and_then(|w| w.restart.rss_clones_mb))
    });

    let mut peer = Table::new(
        &format!("JSCPD 5 (--format {FORMATS}, -k 50 -l 5, no .gitignore)"),
        measured,
    );
    peer.row("wall s", measured, |m| secs(run(m).map(|r| r.wall)));
    peer.row("CPU s", measured, |m| secs(run(m).map(|r| r.cpu)));
    peer.row("peak RSS", measured, |m| {
        m.per_line(run(m).map(|r| r.peak_mb))
    });
    peer.row("outcome", measured, |m| match &m.peer {
        Some(Ok(r)) => r.outcome.clone(),
        Some(Err(_)) => "FAILED".into(),
        None => "not run (--no-peer)".into(),
    });

    let mut machine = Table::new("THE MACHINE MEANWHILE", measured);
    machine.row("other processes' cores on average", measured, |m| {
        let (cpu, wall) = m.others;
        format!(
            "{:.2} ({cpu:.0} CPU s in {wall:.0} s)",
            cpu / wall.max(1e-9)
        )
    });

    vec![size, scan, memory, checks, api, warm, peer, machine]
}

/// What does not fit in a cell: units, breakdowns, cache lines, failures,
/// the reference and mild mode.
fn notes(out: &mut Output, measured: &[Measured], reference: Option<&Result<Reference, String>>) {
    out.line("");
    out.line("UNITS of each fraction (whole folders; `F/*` = the files of F's own):");
    for m in measured {
        // The whole tree's list is every unit: 196 of them.
        let units = match m.fraction.share {
            1 => format!("the whole tree ({} units)", m.fraction.units.len()),
            _ => m.fraction.units.join(" "),
        };
        out.line(format!(
            "  {}: {units} ({})",
            m.fraction.name, m.fraction.shown
        ));
    }
    out.line("");
    out.line("MEMORY BREAKDOWN (the server's debug lines):");
    for m in measured {
        let Some(s) = m.startup() else { continue };
        for (when, line) in [
            ("after the scan", &s.memory_scan),
            ("after clones", &s.memory_clones),
        ] {
            out.line(format!(
                "  {} {when}: {}",
                m.fraction.name,
                line.as_deref().unwrap_or("(not printed)")
            ));
        }
    }
    out.line("");
    out.line("WARM RESTART: what the two starts said about the cache, verbatim:");
    for m in measured {
        match &m.figures.warm {
            Ok(w) if w.notes.is_empty() => out.line(format!("  {}: (nothing)", m.fraction.name)),
            Ok(w) => {
                for note in &w.notes {
                    out.line(format!("  {}: {note}", m.fraction.name));
                }
            }
            Err(_) => {}
        }
    }
    let mut failures = Vec::new();
    for m in measured {
        let name = &m.fraction.name;
        let mut failed = |part: &str, e: &String| failures.push(format!("  {name} {part}: {e}"));
        match &m.figures.floor {
            Err(e) => failed("parse floor", e),
            Ok(Floor {
                scan_alone: Err(e), ..
            }) => failed("scan alone", e),
            Ok(_) => {}
        }
        match &m.figures.cold {
            Err(e) => failed("cold start", e),
            Ok(c) => {
                if let Err(e) = &c.endpoints {
                    failed("endpoints", e);
                }
                match &c.checks {
                    Err(e) => failed("checks", e),
                    Ok(Checks {
                        latency: Err(e), ..
                    }) => failed("latency", e),
                    Ok(_) => {}
                }
                for note in &c.startup.notes {
                    failed("cold start said", note);
                }
            }
        }
        if let Err(e) = &m.figures.warm {
            failed("warm restart", e);
        }
        if let Some(Err(e)) = &m.peer {
            failed("jscpd 5", e);
        }
    }
    if !failures.is_empty() {
        out.line("");
        out.line("FAILED or WARNED:");
        for f in failures {
            out.line(f);
        }
    }
    out.line("");
    match reference {
        Some(Ok(r)) => {
            let latency = r.checks.latency.as_ref().map_or("-".into(), Latency::cell);
            out.line(format!(
                "REFERENCE libgit2 (--no-cache, watcher on): {} files, {} lines, scanned in {:.2} s; \
                 {} snippets of {SNIPPET_LINES} lines from its C files: p50/p99 {latency}; \
                 {CONNECTIONS} connections {}; RSS after the load {}",
                count(r.startup.files),
                count(r.startup.lines),
                r.startup.scanned_s,
                r.checks.snippets,
                r.checks.load.cell(),
                format_args!("{} MB", or_dash(r.checks.rss_mb, 0)),
            ));
        }
        Some(Err(e)) => out.line(format!("REFERENCE libgit2: FAILED: {e}")),
        None => out.line(
            "REFERENCE libgit2: not run, .corpora/libgit2 is missing (bash bench/fetch-corpora.sh)",
        ),
    }
    for m in measured {
        if let Some(mild) = &m.mild {
            mild_note(out, m, mild);
        }
    }
}

/// Mild mode beside strict on one fraction.
fn mild_note(out: &mut Output, m: &Measured, mild: &Result<Startup, String>) {
    let mild = match mild {
        Ok(mild) => mild,
        Err(e) => {
            out.line(format!("MILD on {}: FAILED: {e}", m.fraction.name));
            return;
        }
    };
    let strict = m.startup();
    let row = |label: &str, pick: &dyn Fn(&Startup) -> String| {
        format!(
            "| {label:<28} | {:>24} | {:>24} |",
            strict.map_or("-".into(), pick),
            pick(mild)
        )
    };
    out.line("");
    out.line(format!(
        "MILD beside STRICT on {} (cold, --no-cache)",
        m.fraction.name
    ));
    out.line("");
    out.line(format!(
        "| {:<28} | {:>24} | {:>24} |",
        "figure", "strict", "mild"
    ));
    out.line(format!(
        "|{}|{}:|{}:|",
        "-".repeat(30),
        "-".repeat(25),
        "-".repeat(25)
    ));
    out.line(row("RSS after scanned line", &|s| {
        m.per_line(s.rss_scanned_mb)
    }));
    out.line(row("RSS after clones line", &|s| {
        m.per_line(s.rss_clones_mb)
    }));
    out.line(row("HWM after clones line", &|s| {
        m.per_line(s.hwm_clones_mb)
    }));
    out.line(row("spawn -> scanned s", &|s| {
        format!("{:.2}", s.scanned_s)
    }));
    out.line(row("clone detection s", &|s| secs(s.detect_s)));
    out.line(row("clones", &|s| count(s.clones)));
    out.line(row("duplicated lines", &|s| {
        s.duplicated.clone().unwrap_or_else(|| "-".into())
    }));
    out.line(format!(
        "  mild after clones: {}",
        mild.memory_clones.as_deref().unwrap_or("(not printed)")
    ));
}

/// A start's figures for the JSON report.
fn startup_json(s: &Startup) -> Value {
    json!({
        "scannedS": s.scanned_s, "clonesS": s.clones_s, "files": s.files, "lines": s.lines,
        "tokens": s.tokens, "parsed": s.parsed, "reused": s.reused, "skipped": s.skipped,
        "clones": s.clones, "duplicated": s.duplicated, "detectS": s.detect_s,
        "rssScannedMb": s.rss_scanned_mb, "rssClonesMb": s.rss_clones_mb,
        "hwmClonesMb": s.hwm_clones_mb, "memoryAfterScan": s.memory_scan,
        "memoryAfterClones": s.memory_clones, "notes": s.notes,
    })
}

/// Checks' figures for the JSON report.
fn checks_json(c: &Checks) -> Value {
    json!({
        "snippets": c.snippets, "snippetLines": SNIPPET_LINES,
        "latency": c.latency.as_ref().map_or_else(|e| json!({ "error": e }), Latency::json),
        "load": c.load.json(), "rssAfterLoadMb": c.rss_mb, "hwmAfterLoadMb": c.hwm_mb,
        "referenceLoadsBeside": c.beside.as_ref().map(|loads| loads.iter().map(Throughput::json)
            .collect::<Vec<_>>()),
    })
}

/// An endpoint's figures for the JSON report.
fn endpoint_json(e: &Endpoint) -> Value {
    json!({"path": e.path, "medianMs": e.median_ms, "bytes": e.bytes, "status": e.status})
}

/// `{"error": e}` of a failed part, or its figures.
fn or_error<T>(result: &Result<T, String>, figures: impl Fn(&T) -> Value) -> Value {
    result
        .as_ref()
        .map_or_else(|e| json!({ "error": e }), figures)
}

/// One fraction's figures for the JSON report.
fn fraction_json(m: &Measured) -> Value {
    let f = &m.fraction;
    json!({
        "share": f.share, "dir": f.shown, "units": f.units,
        "unitLines": f.lines,
        "parseFloor": or_error(&m.figures.floor, |fl| json!({
            "seconds": fl.seconds, "runs": fl.runs, "files": fl.files,
            "scanAlone": or_error(&fl.scan_alone, |s| json!({"seconds": s, "ratio": s / fl.seconds})),
        })),
        "cold": or_error(&m.figures.cold, |c| json!({
            "startup": startup_json(&c.startup),
            "endpoints": or_error(&c.endpoints, |e| e.iter().map(endpoint_json).collect()),
            "checks": or_error(&c.checks, checks_json),
            "ownFolders": or_error(&c.own, |o| json!({
                "folders": o.folders, "startup": startup_json(&o.startup), "load": o.load.json(),
            })),
        })),
        "warm": or_error(&m.figures.warm, |w| json!({
            "fill": startup_json(&w.fill), "cacheMb": w.cache_mb, "cacheSettledS": w.cache_s,
            "readyS": w.ready_s, "restart": startup_json(&w.restart), "notes": w.notes,
        })),
        "jscpd5": m.peer.as_ref().map(|p| or_error(p, |r| json!({
            "formats": FORMATS, "wallS": r.wall, "cpuS": r.cpu, "peakMb": r.peak_mb,
            "finished": r.finished, "outcome": r.outcome,
        }))),
        "mild": m.mild.as_ref().map(|r| or_error(r, startup_json)),
        "otherProcesses": {"cpuS": m.others.0, "wallS": m.others.1},
    })
}
