//! jscpd 5 on a fraction's C files, run to completion or stopped: at a
//! time limit, when its RSS passes two thirds of the machine's memory, or
//! when the machine runs low; its wall and CPU seconds and peak RSS from
//! wait4. The machine is shared: a peer that grows without bound must not
//! bring the kernel's OOM killer onto other people's processes.

use std::io;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::env::{proc_status_mb, Env};
use crate::fractions::Fraction;
use crate::output::progress;
use crate::{mem_total_mb, meminfo_mb};

/// jscpd's names of the kernel's C: dupcheck reads `.h` as C too.
pub(crate) const FORMATS: &str = "c,c-header";

/// The machine's MemAvailable under which the peer is stopped, in MB.
const LOW_MEMORY_MB: f64 = 1024.0;

/// How often the peer's memory is looked at.
const POLL: Duration = Duration::from_millis(20);

/// A run of the peer.
pub(crate) struct PeerRun {
    /// Wall seconds.
    pub(crate) wall: f64,
    /// User+system seconds.
    pub(crate) cpu: f64,
    /// Peak RSS (wait4's ru_maxrss), in MB.
    pub(crate) peak_mb: f64,
    /// Whether it ended by itself with status 0.
    pub(crate) finished: bool,
    /// How it ended: `exit 0`, `killed: ...`, `signal N`.
    pub(crate) outcome: String,
}

/// Runs jscpd 5 (`bench/fetch-peers.sh`) on `fraction` with dupcheck's
/// thresholds, the C formats, no report and no `.gitignore` (it would
/// read the repository's, which lists `/.corpora`, as `bench` notes).
pub(crate) fn jscpd5(env: &Env, fraction: &Fraction, limit: Duration) -> Result<PeerRun, String> {
    let program = env
        .tools
        .join("jscpd5/node_modules/jscpd-linux-x64-gnu/bin/jscpd");
    if !program.is_file() {
        return Err("jscpd 5 is not installed: bash bench/fetch-peers.sh".into());
    }
    progress(&format!(
        "scale {}: jscpd 5 (at most {limit:?})",
        fraction.name
    ));
    let mut cmd = Command::new(program);
    cmd.arg(&fraction.dir)
        .args(["--min-tokens", "50", "--min-lines", "5"])
        .args(["--format", FORMATS, "--no-gitignore", "--silent"])
        .args(["--reporters", "silent", "--no-tips"])
        .arg("--output")
        .arg(env.tmp.path().join("reports"))
        .current_dir(env.tmp.path())
        .env("NO_COLOR", "1")
        .env("JSCPD_NO_TIPS", "1");
    let cap_mb = mem_total_mb().unwrap_or(0.0) * 2.0 / 3.0;
    run_capped(&mut cmd, limit, cap_mb).map_err(|e| format!("cannot run jscpd 5: {e}"))
}

/// Runs `cmd` (output discarded) until it ends, reaping it with wait4 for
/// its rusage; kills it at `limit`, when its RSS passes `cap_mb` (if
/// positive) or when the machine's MemAvailable falls under
/// [`LOW_MEMORY_MB`].
fn run_capped(cmd: &mut Command, limit: Duration, cap_mb: f64) -> io::Result<PeerRun> {
    let started = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    // From here on the child is reaped by wait4, never through `child`.
    drop(child);
    let mut killed: Option<String> = None;
    // Bounded by `limit`: past it the child is killed and the wait blocks.
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if killed.is_some() { 0 } else { libc::WNOHANG };
        // SAFETY: waits for our own child with valid out-pointers.
        let reaped = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if reaped == pid {
            let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let exited = libc::WIFEXITED(status);
            let outcome = match &killed {
                Some(why) => format!("killed: {why}"),
                None if exited => format!("exit {}", libc::WEXITSTATUS(status)),
                None => format!("signal {} (the OOM killer's is 9)", libc::WTERMSIG(status)),
            };
            return Ok(PeerRun {
                wall: started.elapsed().as_secs_f64(),
                cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                peak_mb: usage.ru_maxrss as f64 / 1024.0,
                finished: killed.is_none() && exited && libc::WEXITSTATUS(status) == 0,
                outcome,
            });
        }
        if reaped < 0 {
            return Err(io::Error::last_os_error());
        }
        let rss = proc_status_mb(pid as u32, "VmRSS").unwrap_or(0.0);
        let available = meminfo_mb("MemAvailable").unwrap_or(f64::INFINITY);
        killed = if started.elapsed() > limit {
            Some(format!("time limit of {} s", limit.as_secs()))
        } else if cap_mb > 0.0 && rss > cap_mb {
            Some(format!("RSS {rss:.0} MB over the cap of {cap_mb:.0} MB"))
        } else if available < LOW_MEMORY_MB {
            Some(format!(
                "the machine had {available:.0} MB available (RSS {rss:.0} MB)"
            ))
        } else {
            None
        };
        if killed.is_some() {
            // SAFETY: the child is not reaped yet, so the pid is still ours.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            continue;
        }
        thread::sleep(POLL);
    }
}
