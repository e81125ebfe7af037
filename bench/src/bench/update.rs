//! Update: in a watched copy of lodash, milliseconds from writing a new
//! file of fresh code to the first check of that code that reports a
//! duplication in the new file (checks sent back to back, 1 ms apart).

use std::fs;
use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::env::{Counts, Env};
use crate::measure::median;
use crate::output::{progress, verdict, Output};
use crate::server::{check_request, wait_for_cache, Conn, Server, RUN_LIMIT};

/// Longest one update trial may take.
const UPDATE_LIMIT: Duration = Duration::from_secs(10);

/// Target of the issue for a write to be seen, in milliseconds.
const TARGET_UPDATE_MS: f64 = 100.0;

/// A unique ~30-line JavaScript function; `tag` makes it unique.
fn fresh_function(tag: &str, number: usize) -> String {
    const TEMPLATE: &str = "\
function benchFresh@(records@, options@) {
  const limit@ = (options@ && options@.limit) || #;
  const seen@ = new Set();
  const result@ = [];
  for (let index@ = 0; index@ < records@.length; index@ += 1) {
    const record@ = records@[index@];
    if (record@ == null || seen@.has(record@.id)) {
      continue;
    }
    seen@.add(record@.id);
    const weight@ = record@.weight * # + index@;
    if (weight@ > limit@) {
      result@.push({ id: record@.id, weight: weight@, tag: 'fresh-@' });
    } else {
      result@.unshift({ id: record@.id, weight: -weight@, tag: 'stale-@' });
    }
    if (result@.length >= limit@) {
      break;
    }
  }
  result@.sort(function (left@, right@) {
    return left@.weight - right@.weight;
  });
  return {
    total: result@.length,
    items: result@,
    label: 'bench-update-@',
    limit: limit@
  };
}
";
    TEMPLATE
        .replace('@', tag)
        .replace('#', &(number + 7).to_string())
}

/// Whether a check answer reports a duplication in `file`.
fn names_file(body: &[u8], file: &str) -> bool {
    let Ok(answer) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    answer["duplications"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["codebaseLocation"]["file"] == file))
}

/// Copies a tree of regular files and folders, skipping hidden entries.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else if kind.is_file() {
            fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// Milliseconds from writing `file` (holding `code`) to the first check of
/// `code` that reports a duplication in it; `None` after [`UPDATE_LIMIT`].
fn update_trial(port: u16, dir: &Path, file: &str, code: &str) -> Result<Option<f64>, String> {
    let check = check_request(port, code, "javascript");
    let mut conn = Conn::open(port).map_err(|e| e.to_string())?;
    let written = Instant::now();
    fs::write(dir.join(file), code).map_err(|e| e.to_string())?;
    while written.elapsed() < UPDATE_LIMIT {
        let answer = conn.exchange(&check).map_err(|e| e.to_string())?;
        if answer.status == 200 && names_file(&answer.body, file) {
            return Ok(Some(written.elapsed().as_secs_f64() * 1e3));
        }
        thread::sleep(Duration::from_millis(1));
    }
    Ok(None)
}

/// Serves a watched copy of lodash, writes `update_trials` new files of
/// fresh code into it one after the other, and adds the median time to
/// see one to the table.
pub(crate) fn update(env: &Env, counts: &Counts, out: &mut Output) -> Result<(), String> {
    let dir = env.tmp.path().join("update/lodash");
    progress("update: copying lodash");
    copy_tree(&env.corpus("lodash"), &dir).map_err(|e| format!("cannot copy lodash: {e}"))?;
    let since = SystemTime::now();
    let mut server = Server::dupcheck(env, &dir, &[])?;
    server.summary(RUN_LIMIT)?;
    // Let the first cache write finish so it does not compete with trials.
    wait_for_cache(&dir, since, Duration::from_secs(60));
    thread::sleep(Duration::from_millis(300));
    let nonce = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() % 1_000_000);
    let mut trials = Vec::new();
    for trial in 0..counts.update_trials {
        progress(&format!("update: trial {}", trial + 1));
        let file = format!("bench_update_{trial}.js");
        let code = fresh_function(&format!("T{trial}N{nonce}"), trial);
        trials.push(update_trial(server.port, &dir, &file, &code)?);
        thread::sleep(Duration::from_millis(300));
    }
    server.stop();
    let mut seen: Vec<f64> = trials.iter().flatten().copied().collect();
    let missed = trials.len() - seen.len();
    let median_ms = median(&mut seen);
    let ok = missed == 0 && median_ms <= TARGET_UPDATE_MS;
    out.line(format!(
        "UPDATE (watched copy of lodash): {median_ms:.1} ms write -> first check that sees it, median of {} \
         (target <= {TARGET_UPDATE_MS} ms: {}); trials {:?} ms{}",
        trials.len(),
        verdict(ok),
        trials
            .iter()
            .map(|t| t.map_or(-1.0, |ms| (ms * 10.0).round() / 10.0))
            .collect::<Vec<_>>(),
        if missed > 0 {
            format!(", {missed} not seen within {UPDATE_LIMIT:?} (-1)")
        } else {
            String::new()
        }
    ));
    out.json.insert(
        "update".into(),
        json!({"medianMs": median_ms, "trialsMs": trials, "missed": missed, "target": TARGET_UPDATE_MS}),
    );
    Ok(())
}
