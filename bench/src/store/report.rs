//! What the store benchmark reports: a compact table (publishes, the
//! republishes, the store's size, the checks compared, latency,
//! throughput, statements, the database's share, each target's verdict,
//! the first differences) and the same figures in
//! `target/bench-store.json`.

use std::process::Command;
use std::thread;

use serde_json::{json, Value};

use crate::checks::{per_repository, Comparison, Counted, Cpu, Sample};
use crate::env::Env;
use crate::measure::{percentile, Latency, Throughput};
use crate::output::{load_average, verdict, Output};
use crate::postgres::{Postgres, SETTINGS};
use crate::publish::Published;
use crate::size::Size;
use crate::Options;

/// What the two servers' scans said.
pub(crate) struct Servers {
    /// Files the local server indexed.
    pub(crate) local_files: u64,
    /// Its seconds from spawn to `scanned`.
    pub(crate) local_seconds: f64,
    /// Files the server through the store indexed (its empty folder: 0).
    pub(crate) store_files: u64,
}

/// The CPU the runs other than the counted one cost, per check.
pub(crate) struct Cpus {
    /// The local server at one connection.
    pub(crate) local: Cpu,
    /// The local server at 16 connections.
    pub(crate) local_load: Cpu,
    /// The server through the store at 16 connections.
    pub(crate) store_load: Cpu,
}

/// Everything measured.
pub(crate) struct Run<'a> {
    pub(crate) options: &'a Options,
    pub(crate) pg: &'a Postgres,
    /// `store init`'s line.
    pub(crate) init: String,
    pub(crate) published: Vec<Published>,
    /// The largest repository published again, unchanged.
    pub(crate) unchanged: Published,
    /// What was changed in a copy of it, and its publish.
    pub(crate) changed: (String, Published),
    pub(crate) size: Size,
    pub(crate) samples: &'a [Sample],
    pub(crate) servers: Servers,
    pub(crate) comparison: Comparison,
    pub(crate) local_latency: Latency,
    pub(crate) store_latency: Counted,
    pub(crate) local_load: Throughput,
    pub(crate) store_load: Throughput,
    pub(crate) cpu: Cpus,
    /// The plans (`explain`).
    pub(crate) explained: Value,
    /// Other processes' CPU seconds, and the run's wall seconds.
    pub(crate) others: (f64, f64),
}

/// The table's first line: the machine, the build, PostgreSQL.
pub(crate) fn heading(env: &Env, options: &Options, pg: &Postgres) -> String {
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let commit = git(env, &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "?".into());
    let version = pg.version.split(" on ").next().unwrap_or("PostgreSQL ?");
    format!(
        "dupcheck store benchmark at {commit}: {cores} cores, load average {}; {version} on \
         127.0.0.1 (fsync=off: commits reach the kernel, not the disk; shared_buffers {} \
         (default); pg_stat_statements loaded){}{}{}",
        load_average(),
        pg.psql("SHOW shared_buffers")
            .unwrap_or_else(|_| "?".into()),
        if options.quick { "; --quick" } else { "" },
        if options.kernel { "; --kernel" } else { "" },
        match &options.compression {
            Some(method) => format!("; contents compressed with {method} (--compression)"),
            None => String::new(),
        },
    )
}

/// `git ARGS` in the repository, trimmed.
fn git(env: &Env, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(&env.root)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// Megabytes.
fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Adds the table to `out` and the figures to its JSON.
pub(crate) fn write(out: &mut Output, run: &Run) {
    let mut targets: Vec<Value> = Vec::new();
    let mut target = |out: &mut Output, name: &str, figure: String, ok: bool| {
        out.line(format!("  {:<8} {name}: {figure}", verdict(ok)));
        targets.push(json!({"target": name, "figure": figure, "met": ok}));
    };

    // Publishes.
    out.line(String::new());
    out.line(run.init.clone());
    out.line(format!(
        "{:<15} {:>7} {:>10} {:>8} {:>10} {:>12} {:>8}",
        "repository", "files", "lines", "scan s", "publish s", "lines/s", "wall s"
    ));
    for p in &run.published {
        out.line(format!(
            "{:<15} {:>7} {:>10} {:>8.2} {:>10.2} {:>12.0} {:>8.2}",
            p.name,
            p.files(),
            p.lines(),
            p.scan_seconds,
            p.after_scan(),
            p.lines_per_second(),
            p.wall_seconds
        ));
    }
    let files: u64 = run.published.iter().map(Published::files).sum();
    let lines: u64 = run.published.iter().map(Published::lines).sum();
    let after: f64 = run.published.iter().map(Published::after_scan).sum();
    let scan: f64 = run.published.iter().map(|p| p.scan_seconds).sum();
    let rate = lines as f64 / after.max(1e-9);
    out.line(format!(
        "{:<15} {:>7} {:>10} {:>8.2} {:>10.2} {:>12.0}",
        "all", files, lines, scan, after, rate
    ));
    let u = &run.unchanged;
    out.line(format!(
        "unchanged republish of {}: {:.2} s ({:.2} s after the scan of {:.2} s): {}",
        u.name,
        u.seconds,
        u.after_scan(),
        u.scan_seconds,
        u.line
    ));
    let (change, c) = &run.changed;
    out.line(format!(
        "one file changed in a copy of {} ({change}): {:.2} s ({:.2} s after the scan): {}",
        c.name,
        c.seconds,
        c.after_scan(),
        c.line
    ));

    // Size.
    let size = &run.size;
    out.line(format!(
        "store size: {:.1} MB for {} lines indexed ({} distinct contents): {:.1} bytes a line",
        mb(size.total()),
        size.lines,
        size.contents,
        size.per_line()
    ));
    for t in &size.tables {
        out.line(format!(
            "  {:<16} {:>9} rows {:>9.2} MB (heap {:.2}, indexes {:.2}, toast {:.2}) {:>7.1} B/line",
            t.name,
            t.rows,
            mb(t.total),
            mb(t.heap),
            mb(t.indexes),
            mb(t.total.saturating_sub(t.heap + t.indexes)),
            t.total as f64 / size.lines.max(1) as f64
        ));
    }

    // Checks.
    let c = &run.comparison;
    let s = &run.servers;
    out.line(format!(
        "local server over the tree: {} files indexed ({} published), scanned in {:.2} s; \
         through the store: {} files of its own",
        s.local_files, files, s.local_seconds, s.store_files
    ));
    if s.local_files != files {
        out.line(format!(
            "WARNING: the local server indexed {} files, the publishes {}: the answers cannot \
             be the same",
            s.local_files, files
        ));
    }
    out.line(format!(
        "checks compared: {} of {} identical ({} of them with duplications); duplications \
         local {}, through the store {} ({} in another repository than the snippet's); \
         statistics differ in {}",
        c.identical,
        c.total,
        c.identical_found,
        c.local_duplications,
        c.store_duplications,
        c.elsewhere,
        c.statistics_differ
    ));
    let slowest: Vec<String> = c
        .slowest
        .iter()
        .map(|(ms, _, sample, local)| format!("{ms:.1} ms {sample} (local {local:.1} ms)"))
        .collect();
    out.line(format!(
        "slowest checks through the store when first compared: {}",
        slowest.join("; ")
    ));
    let (l, st) = (&run.local_latency, &run.store_latency);
    out.line(format!(
        "latency at 1 connection: local {}, through the store {}",
        l.cell(),
        st.latency.cell()
    ));
    let ratio = run.store_load.per_second() / run.local_load.per_second().max(1e-9);
    out.line(format!(
        "16 connections: local {}, through the store {}: {ratio:.2}x",
        run.local_load.cell(),
        run.store_load.cell()
    ));
    let cpu = |c: &Cpu| format!("{:.3} + {:.3}", c.server_ms, c.postgres_ms);
    out.line(format!(
        "CPU ms a check, dupcheck + PostgreSQL: 1 connection local {}, through the store {}; \
         16 connections local {}, through the store {}",
        cpu(&run.cpu.local),
        cpu(&st.cpu),
        cpu(&run.cpu.local_load),
        cpu(&run.cpu.store_load)
    ));
    out.line(format!(
        "statements a check: {:.3} (xact_commit +{} over {} checks; pg_stat_statements: {:.3} \
         calls a check)",
        st.per_check(),
        st.commits,
        st.sent,
        st.calls_per_check()
    ));
    for statement in st.statements.iter().take(3) {
        out.line(format!(
            "  {:>6} calls, {:.3} ms mean in the server, {} rows, {} blocks hit, {} read: {}",
            statement.calls,
            statement.mean_ms,
            statement.rows,
            statement.blocks_hit,
            statement.blocks_read,
            clip(&statement.query, 90)
        ));
    }
    for check in run.explained["checks"].as_array().into_iter().flatten() {
        // The second run: warm caches, a session that has planned before.
        let last = &check["runs"][1];
        let statements: Vec<String> = last["statements"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["phase"] == "plan")
            .map(|t| {
                format!(
                    "{} {:.2} ms, {} rows",
                    t["statement"].as_str().unwrap_or("?"),
                    t["ms"].as_f64().unwrap_or(f64::NAN),
                    t["rows"]
                )
            })
            .collect();
        out.line(format!(
            "  explained {}: check {:.2} ms, {} duplications; {}",
            check["sample"].as_str().unwrap_or("?"),
            last["checkMs"].as_f64().unwrap_or(f64::NAN),
            last["duplications"],
            statements.join("; ")
        ));
    }
    let timings = explain_medians(&run.explained);
    if !timings.is_empty() {
        out.line(format!(
            "explained (auto_explain, medians of the logged runs): {}",
            timings.join("; ")
        ));
    }

    // Targets.
    out.line("targets:".to_owned());
    target(
        out,
        "identical answers on every sampled check",
        format!("{} / {}", c.identical, c.total),
        c.identical == c.total && c.total > 0,
    );
    target(
        out,
        "p50 <= 3 ms and p99 <= 10 ms at 1 connection through the store",
        format!("{:.2} / {:.2} ms", st.latency.p50_ms, st.latency.p99_ms),
        st.latency.p50_ms <= 3.0 && st.latency.p99_ms <= 10.0,
    );
    target(
        out,
        "checks/s at 16 connections >= 0.5x local",
        format!(
            "{:.0} / {:.0} = {ratio:.2}x",
            run.store_load.per_second(),
            run.local_load.per_second()
        ),
        ratio >= 0.5,
    );
    target(
        out,
        "publish >= 200,000 lines/s after the scan",
        format!("{rate:.0} lines/s ({lines} lines in {after:.2} s)"),
        rate >= 200_000.0,
    );
    target(
        out,
        "unchanged republish <= 2 s",
        format!(
            "{:.2} s ({:.2} s after the scan)",
            u.seconds,
            u.after_scan()
        ),
        u.seconds <= 2.0,
    );
    target(
        out,
        "<= 200 bytes per indexed line",
        format!("{:.1}", size.per_line()),
        size.per_line() <= 200.0,
    );
    if !c.differences.is_empty() {
        out.line(format!("first {} differences:", c.differences.len()));
        for d in &c.differences {
            out.line(format!("  {}", clip(&d.to_string(), 600)));
        }
    }
    let (cpu, wall) = run.others;
    out.line(format!(
        "(other processes used {cpu:.0} CPU s in the run's {wall:.0} s, {:.2} cores on average)",
        cpu / wall.max(1e-9)
    ));

    let json = &mut out.json;
    json.insert(
        "run".into(),
        json!({
            "postgres": run.pg.version,
            "postgresSettings": SETTINGS.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            "quick": run.options.quick, "kernel": run.options.kernel,
            "compression": run.options.compression.as_deref().unwrap_or("pglz"),
            "samples": run.samples.len(), "seed": run.options.seed,
            "loadAverage": load_average(),
            "otherProcesses": {"cpuS": cpu, "wallS": wall},
        }),
    );
    json.insert(
        "sizes".into(),
        json!({
            "repositories": run.published.len(), "files": files, "lines": lines,
            "corpora": run.published.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        }),
    );
    json.insert(
        "publish".into(),
        json!({
            "repositories": run.published.iter().map(Published::json).collect::<Vec<_>>(),
            "afterScanSeconds": after, "scanSeconds": scan, "linesPerSecondAfterScan": rate,
            "unchangedRepublish": run.unchanged.json(),
            "oneFileChanged": {"change": change, "publish": run.changed.1.json()},
        }),
    );
    json.insert("storeSize".into(), size.json());
    json.insert(
        "checks".into(),
        json!({
            "samplesPerRepository": per_repository(run.samples),
            "localServer": {"files": s.local_files, "scanSeconds": s.local_seconds},
            "storeServerFiles": s.store_files,
            "comparison": c.json(),
            "latencyLocal": l.json(),
            "latencyStore": st.json(),
            "throughputLocal": run.local_load.json(),
            "throughputStore": run.store_load.json(),
            "throughputRatio": ratio,
            "cpuLocal": run.cpu.local.json(),
            "cpuLocalThroughput": run.cpu.local_load.json(),
            "cpuStoreThroughput": run.cpu.store_load.json(),
        }),
    );
    json.insert("explain".into(), run.explained.clone());
    json.insert("targets".into(), json!(targets));
}

/// At most `n` characters of `text`.
fn clip(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// `statement phase median ms (n)` of the explained timings.
fn explain_medians(explained: &Value) -> Vec<String> {
    let Some(timings) = explained["timings"].as_array() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for statement in ["postings", "contents"] {
        for phase in ["parse", "bind", "execute", "plan"] {
            let mut ms: Vec<f64> = timings
                .iter()
                .filter(|t| t["statement"] == statement && t["phase"] == phase)
                .filter_map(|t| t["ms"].as_f64())
                .collect();
            if ms.is_empty() {
                continue;
            }
            ms.sort_by(f64::total_cmp);
            out.push(format!(
                "{statement} {phase} {:.3} ms (n {})",
                percentile(&ms, 0.5),
                ms.len()
            ));
        }
    }
    out
}
