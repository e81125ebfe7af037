//! Checks and memory, on one `dupcheck --no-watch --no-cache` serving
//! `.corpora/four`: latency p50/p99 of 20-, 100- and 1,000-line checks over
//! one keep-alive connection, checks/s of 100-line checks at 1, 16 and 64
//! connections, the editing sessions' checks (reparsed from the last
//! version of their path, then parsed afresh), and the same latencies and
//! throughput at 16 connections against jscpd-rs's `jscpd-server`; then
//! VmRSS after the scan and after many checks of 20 lines over 16
//! connections.

use std::path::Path;
use std::thread;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::env::{Counts, Env};
use crate::measure::{latency, percentile, throughput, Latency, Throughput};
use crate::output::{or_dash, progress, verdict, Output};
use crate::server::{request, wait_ready, Server, RUN_LIMIT};
use crate::workload::{EditSession, Workload};
use crate::{Options, Part};

/// Targets of the issue, printed beside the figures: p50 and p99 of
/// 100-line checks in ms, checks/s at 16 connections, RSS after the scan
/// of `four` in MB.
const TARGET_P50_100: f64 = 0.3;
const TARGET_P99_100: f64 = 2.0;
const TARGET_CHECKS_16: f64 = 5000.0;
const TARGET_RSS_MB: f64 = 150.0;

/// Latency of the editing sessions' checks sent one session after the
/// other (each check reparses from the last of its path), then of the same
/// checks interleaved across sessions (each parsed afresh, the server
/// keeping fewer parses than there are sessions).
fn typing(port: u16, sessions: &[EditSession]) -> Result<(Latency, Latency), String> {
    let request = |s: &EditSession, v: &str| {
        let body = json!({ "code": v, "format": s.format, "path": s.path }).to_string();
        request("POST", "/api/check", port, &body)
    };
    let in_order: Vec<Vec<u8>> = sessions
        .iter()
        .flat_map(|s| s.versions.iter().map(move |v| request(s, v)))
        .collect();
    let rounds = sessions.iter().map(|s| s.versions.len()).max().unwrap_or(0);
    let interleaved: Vec<Vec<u8>> = (0..rounds)
        .flat_map(|i| {
            sessions
                .iter()
                .filter_map(move |s| Some(request(s, s.versions.get(i)?)))
        })
        .collect();
    progress("checks dupcheck: editor typing, one file after the other");
    let kept = latency(port, &in_order, 0, in_order.len())?;
    progress("checks dupcheck: editor typing, interleaved");
    let afresh = latency(port, &interleaved, 0, interleaved.len())?;
    Ok((kept, afresh))
}

/// Latencies per size, and throughputs per connection count, of one server.
#[derive(Default)]
struct CheckFigures {
    latency: Vec<(usize, Latency)>,
    throughput: Vec<Throughput>,
}

impl CheckFigures {
    /// The figures for `target/bench.json`.
    fn json(&self) -> Value {
        let latency: Map<String, Value> = self
            .latency
            .iter()
            .map(|(lines, l)| (format!("{lines}Lines"), l.json()))
            .collect();
        let throughput: Vec<Value> = self.throughput.iter().map(Throughput::json).collect();
        json!({"latency": latency, "throughput": throughput})
    }

    fn latency_cell(&self, lines: usize) -> String {
        self.latency
            .iter()
            .find(|(n, _)| *n == lines)
            .map_or("-".into(), |(_, l)| l.cell())
    }

    fn throughput_cell(&self, connections: usize) -> String {
        self.throughput
            .iter()
            .find(|t| t.connections == connections)
            .map_or("-".into(), Throughput::cell)
    }
}

/// Latency for each size, then throughput at `connections` with 100 lines.
fn measure_checks(
    port: u16,
    workload: &Workload,
    counts: &Counts,
    connections: &[usize],
    who: &str,
) -> Result<CheckFigures, String> {
    let mut figures = CheckFigures::default();
    for (lines, _) in &workload.sizes {
        let requests = workload.requests(*lines, port);
        if requests.is_empty() {
            continue;
        }
        let (warmup, count) = if *lines >= 1000 {
            (counts.warmup / 10, counts.latency_large)
        } else {
            (counts.warmup, counts.latency)
        };
        progress(&format!("checks {who}: latency of {lines}-line snippets"));
        figures
            .latency
            .push((*lines, latency(port, &requests, warmup, count)?));
    }
    let requests = workload.requests(100, port);
    for &n in connections {
        progress(&format!("checks {who}: throughput at {n} connections"));
        figures
            .throughput
            .push(throughput(port, &requests, n, counts.throughput, u64::MAX));
    }
    Ok(figures)
}

/// Memory figures of the checks server.
struct Memory {
    after_scan_mb: Option<f64>,
    after_checks_mb: Option<f64>,
    run: Throughput,
}

/// Serves `four` without watcher and cache, measures its checks (and the
/// same against jscpd-server) and its memory, as `--only` asks, and adds
/// them to the table.
pub(crate) fn checks_and_memory(
    env: &Env,
    options: &Options,
    counts: &Counts,
    out: &mut Output,
) -> Result<(), String> {
    let four = env.corpus("four");
    let workload = Workload::new(env);
    progress("checks: starting dupcheck on four");
    let mut server = Server::dupcheck(env, &four, &["--no-watch", "--no-cache"])?;
    let (scanned, _) = server.summary(RUN_LIMIT)?;
    let after_scan_mb = server.rss_mb();
    let scan_s = scanned.duration_since(server.spawned).as_secs_f64();
    let dupcheck = if options.wants(Part::Checks) {
        Some(measure_checks(
            server.port,
            &workload,
            counts,
            &[1, 16, 64],
            "dupcheck",
        )?)
    } else {
        None
    };
    let typing = dupcheck
        .is_some()
        .then(|| typing(server.port, &workload.editing));
    let memory = if options.wants(Part::Memory) {
        progress(&format!(
            "memory: {} checks of 20 lines",
            counts.memory_checks
        ));
        let requests = workload.requests(20, server.port);
        let run = throughput(
            server.port,
            &requests,
            16,
            RUN_LIMIT,
            counts.memory_checks / 16,
        );
        Some(Memory {
            after_scan_mb,
            after_checks_mb: server.rss_mb(),
            run,
        })
    } else {
        None
    };
    server.stop();
    let peer = dupcheck
        .is_some()
        .then(|| jscpd_checks(env, &four, &workload, counts));
    if let Some(dupcheck) = &dupcheck {
        print_checks(out, dupcheck, peer.as_ref(), scan_s, &workload);
        print_typing(out, typing, &workload);
    }
    if let Some(memory) = memory {
        print_memory(out, &memory);
    }
    Ok(())
}

/// The check figures of jscpd-server, its start time and RSS.
struct PeerChecks {
    figures: CheckFigures,
    ready_s: f64,
    rss_mb: Option<f64>,
}

/// The same checks against jscpd-rs's jscpd-server, with its start time and
/// RSS.
fn jscpd_checks(
    env: &Env,
    dir: &Path,
    workload: &Workload,
    counts: &Counts,
) -> Result<PeerChecks, String> {
    progress("checks: starting jscpd-server on four");
    let mut server = Server::jscpd(env, dir)?;
    let ready = wait_ready(server.port, RUN_LIMIT, Duration::from_millis(10))?;
    let ready_s = ready.duration_since(server.spawned).as_secs_f64();
    let rss = server.rss_mb();
    let figures = measure_checks(server.port, workload, counts, &[16], "jscpd-server")?;
    server.stop();
    Ok(PeerChecks {
        figures,
        ready_s,
        rss_mb: rss,
    })
}

/// Renders one figure of a latency measurement.
type ShowLatency = fn(&Latency) -> String;

/// The table of check latencies and throughputs, dupcheck beside
/// jscpd-server.
fn print_checks(
    out: &mut Output,
    dupcheck: &CheckFigures,
    peer: Option<&Result<PeerChecks, String>>,
    scan_s: f64,
    workload: &Workload,
) {
    let (peer_figures, peer_note) = match peer {
        Some(Ok(p)) => (
            Some(&p.figures),
            format!(
                "jscpd-server ready {:.2} s after spawn, RSS {} MB",
                p.ready_s,
                or_dash(p.rss_mb, 0)
            ),
        ),
        Some(Err(e)) => (None, format!("jscpd-server FAILED: {e}")),
        None => (None, String::new()),
    };
    let cell = |f: Option<&CheckFigures>, pick: &dyn Fn(&CheckFigures) -> String| {
        f.map_or("-".into(), pick)
    };
    out.line(format!(
        "CHECKS on four (dupcheck --no-watch --no-cache, ready {scan_s:.2} s after spawn; {peer_note})"
    ));
    out.line(format!(
        "  {:<22} {:<40} {:<40} target",
        "", "dupcheck", "jscpd-server (jscpd-rs)"
    ));
    for (lines, snippets) in &workload.sizes {
        let target = if *lines == 100 {
            let ok = dupcheck
                .latency
                .iter()
                .find(|(n, _)| *n == 100)
                .is_some_and(|(_, l)| l.p50_ms <= TARGET_P50_100 && l.p99_ms <= TARGET_P99_100);
            format!(
                "<= {TARGET_P50_100} / <= {TARGET_P99_100} ms: {}",
                verdict(ok)
            )
        } else {
            String::new()
        };
        out.line(format!(
            "  {:<22} {:<40} {:<40} {target}",
            format!("p50/p99 {lines} lines ({})", snippets.len()),
            dupcheck.latency_cell(*lines),
            cell(peer_figures, &|f| f.latency_cell(*lines)),
        ));
    }
    for connections in [1, 16, 64] {
        let target = if connections == 16 {
            let ok = dupcheck
                .throughput
                .iter()
                .any(|t| t.connections == 16 && t.per_second() >= TARGET_CHECKS_16);
            format!(">= {TARGET_CHECKS_16}/s: {}", verdict(ok))
        } else {
            String::new()
        };
        out.line(format!(
            "  {:<22} {:<40} {:<40} {target}",
            format!("100 lines, {connections} conn"),
            dupcheck.throughput_cell(connections),
            cell(peer_figures, &|f| f.throughput_cell(connections)),
        ));
    }
    let per_size = |f: &CheckFigures, show: ShowLatency| {
        let cells: Vec<String> = f
            .latency
            .iter()
            .map(|(n, l)| format!("{n}: {}", show(l)))
            .collect();
        cells.join(", ")
    };
    let rows: [(&str, ShowLatency); 2] = [
        ("answers with dups", |l| {
            format!("{}/{}", l.with_duplications, l.requests)
        }),
        ("mean answer KB", |l| {
            format!("{:.1}", l.mean_bytes / 1024.0)
        }),
    ];
    for (name, show) in rows {
        out.line(format!(
            "  {name:<22} {:<40} {:<40}",
            per_size(dupcheck, show),
            cell(peer_figures, &|f| per_size(f, show))
        ));
    }
    out.line(
        "  reference (measured elsewhere): jscpd 4 engine behind the same API \
         2.8-4 ms / 11-17 ms, 160-230 checks/s",
    );
    let json = checks_json(dupcheck, peer, scan_s, workload);
    out.json.insert("checks".into(), json);
}

/// The tree-sitter floor under 100-line checks, and the editing sessions.
fn print_typing(
    out: &mut Output,
    typing: Option<Result<(Latency, Latency), String>>,
    workload: &Workload,
) {
    let parse = &workload.parse_100_ms;
    let mean = parse.iter().sum::<f64>() / parse.len().max(1) as f64;
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let ceiling = cores as f64 * 1e3 / mean;
    out.line(format!(
        "  {:<22} {:.3} / {:.3} ms, mean {mean:.3} ms: at most {ceiling:.0} parses/s on {cores} cores \
         (the {} 100-line snippets parsed in-process: the floor under their checks)",
        "tree-sitter alone",
        percentile(parse, 0.50),
        percentile(parse, 0.99),
        parse.len()
    ));
    let sessions = &workload.editing;
    let lines: usize = sessions
        .iter()
        .filter_map(|s| s.versions.first())
        .map(|v| v.lines().count())
        .sum();
    let mean_lines = lines / sessions.len().max(1);
    let mut json = json!({
        "parse100Ms": {"p50": percentile(parse, 0.50), "p99": percentile(parse, 0.99),
                       "mean": mean, "parsesPerSecondCeiling": ceiling},
        "sessions": sessions.iter().map(|s| &s.path).collect::<Vec<_>>(),
    });
    match typing {
        Some(Ok((kept, afresh))) => {
            out.line(format!(
                "  {:<22} {:<40} parsed afresh: {}",
                "editor typing, path",
                kept.cell(),
                afresh.cell()
            ));
            out.line(format!(
                "  {:<22} {} files of {mean_lines} lines on average, a keystroke per check; \
                 afresh = the same checks interleaved over more files than the {} parses kept",
                "",
                sessions.len(),
                dupcheck::project::buffers::KEPT
            ));
            json["kept"] = kept.json();
            json["afresh"] = afresh.json();
        }
        Some(Err(e)) => out.line(format!("  editor typing: FAILED: {e}")),
        None => {}
    }
    out.json.insert("editing".into(), json);
}

/// The check figures of both servers and the snippets, for `target/bench.json`.
fn checks_json(
    dupcheck: &CheckFigures,
    peer: Option<&Result<PeerChecks, String>>,
    scan_s: f64,
    workload: &Workload,
) -> Value {
    let peer = match peer {
        Some(Ok(p)) => json!({"figures": p.figures.json(), "readyS": p.ready_s, "rssMb": p.rss_mb}),
        Some(Err(e)) => json!({ "error": e }),
        None => Value::Null,
    };
    json!({"dupcheck": dupcheck.json(), "dupcheckReadyS": scan_s, "jscpdServer": peer,
           "snippets": workload.json()})
}

/// The RSS after the scan and after the memory run.
fn print_memory(out: &mut Output, memory: &Memory) {
    let ok = memory.after_scan_mb.is_some_and(|mb| mb <= TARGET_RSS_MB);
    out.line(format!(
        "MEMORY (four): RSS after scan {} MB (target <= {TARGET_RSS_MB} MB: {}); after {} more checks \
         of 20 lines on 16 connections ({}) {} MB",
        or_dash(memory.after_scan_mb, 1),
        verdict(ok),
        memory.run.checks,
        memory.run.cell(),
        or_dash(memory.after_checks_mb, 1),
    ));
    out.json.insert(
        "memory".into(),
        json!({"afterScanMb": memory.after_scan_mb, "afterChecksMb": memory.after_checks_mb,
               "checks": memory.run.json(), "target": TARGET_RSS_MB}),
    );
}
