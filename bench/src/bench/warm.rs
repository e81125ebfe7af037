//! Warm start: seconds from spawning dupcheck on `.corpora/four` to
//! `/api/health` saying ready (polled every 2 ms), with the cache filled by
//! a previous start; how many files it parsed and reused, and its RSS.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::env::{Counts, Env};
use crate::measure::median;
use crate::output::{or_dash, progress, verdict, Output};
use crate::server::{parse_summary, wait_for_cache, wait_ready, Server, Summary, RUN_LIMIT};

/// Target of the issue for a warm start, in seconds.
const TARGET_WARM: f64 = 0.3;

/// One start of dupcheck with the cache (default flags) on `dir`: seconds
/// from spawn to ready, the summary, and VmRSS at the summary. With
/// `filling`, waits for the cache to be written before stopping it (a start
/// that reused every file of the cache leaves it as it is).
fn cached_start(
    env: &Env,
    dir: &Path,
    filling: bool,
) -> Result<(f64, Summary, Option<f64>), String> {
    let since = SystemTime::now();
    let mut server = Server::dupcheck(env, dir, &[])?;
    let ready = wait_ready(server.port, RUN_LIMIT, Duration::from_millis(2))?;
    let seconds = ready.duration_since(server.spawned).as_secs_f64();
    let (_, line) = server.summary(RUN_LIMIT)?;
    let summary = parse_summary(&line).ok_or(format!("unparsable summary {line:?}"))?;
    let rss = server.rss_mb();
    if filling && !wait_for_cache(dir, since, Duration::from_secs(60)) {
        return Err("the cache was not written within 60 s".into());
    }
    server.stop();
    Ok((seconds, summary, rss))
}

/// Fills the cache of `four` with one start, then times `warm_runs` starts
/// on it and adds their median to the table.
pub(crate) fn warm_start(env: &Env, counts: &Counts, out: &mut Output) -> Result<(), String> {
    let dir = env.corpus("four");
    progress("warm: filling the cache of four");
    // From nothing: a cache left by an earlier run, if current, would not
    // be written again.
    let cache = dir.join(".dupcheck-cache");
    if let Err(err) = std::fs::remove_dir_all(&cache) {
        if err.kind() != std::io::ErrorKind::NotFound {
            return Err(format!("cannot remove {}: {err}", cache.display()));
        }
    }
    let (fill_seconds, _, _) = cached_start(env, &dir, true)?;
    let mut runs = Vec::new();
    for run in 0..counts.warm_runs {
        progress(&format!("warm: start {}", run + 1));
        runs.push(cached_start(env, &dir, false)?);
    }
    let mut seconds: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let median_s = median(&mut seconds);
    let (_, summary, rss) = runs
        .iter()
        .min_by(|a, b| (a.0 - median_s).abs().total_cmp(&(b.0 - median_s).abs()))
        .ok_or("no warm start")?;
    out.line(format!(
        "WARM START (four, cache filled): {median_s:.3} s spawn -> ready (target <= {TARGET_WARM} s: {}); \
         {} parsed, {} reused of {} files; RSS {} MB; runs {:?} s; the filling start took {fill_seconds:.3} s",
        verdict(median_s <= TARGET_WARM),
        summary.parsed,
        summary.reused,
        summary.files,
        or_dash(*rss, 0),
        seconds.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
    ));
    out.json.insert(
        "warmStart".into(),
        json!({"seconds": median_s, "runsSeconds": seconds, "parsed": summary.parsed,
               "reused": summary.reused, "files": summary.files, "rssMb": rss,
               "fillSeconds": fill_seconds, "target": TARGET_WARM}),
    );
    Ok(())
}
