//! The server under stress: starts `target/release/dupcheck` on a
//! directory, waits for its first scan, reads its memory from /proc, and
//! stops it with SIGTERM, timing the stop.
//!
//! Each server's stderr goes to `target/stress/NAME.log`; its last lines
//! are printed when it crashes or fails to stop.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::http::Conn;
use crate::report::Row;

/// The longest a stop may take before its row fails.
pub const STOP_LIMIT: Duration = Duration::from_secs(6);

/// How long a stop is waited for before the server is killed.
const KILL_AFTER: Duration = Duration::from_secs(15);

/// How long a server may take to print its `listening on` line.
const LISTEN_LIMIT: Duration = Duration::from_secs(20);

/// How long a server may take to finish its first scan, unless its
/// scenario says otherwise.
pub const READY_LIMIT: Duration = Duration::from_secs(60);

/// The repository root (where `target/` and `testdata/` are).
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The release binary under test.
pub fn binary() -> PathBuf {
    root().join("target/release/dupcheck")
}

/// A running server, killed (SIGKILL) on drop unless stopped.
pub struct Server {
    child: Child,
    /// A name for reports and the log file.
    pub name: String,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    /// The health answer that said it was ready (null until then).
    pub ready: Value,
    log: PathBuf,
}

/// Memory of a process, in KB.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// VmRSS: resident now.
    pub rss_kb: u64,
    /// VmHWM: the most it was ever resident.
    pub peak_kb: u64,
}

/// How a stop went.
pub struct Stopped {
    /// From SIGTERM to exit (zero when it had already exited).
    pub took: Duration,
    /// What went wrong: an earlier crash, a bad exit status, a slow stop.
    pub problems: Vec<String>,
}

impl Server {
    /// Starts `dupcheck DIR --port 0 --host 127.0.0.1 ARGS` and returns
    /// once it listens.
    pub fn start(name: &str, dir: &Path, args: &[&str]) -> Result<Server, String> {
        let binary = binary();
        if !binary.is_file() {
            return Err(format!(
                "{} is missing; build it with `cargo build --release --workspace --bins`",
                binary.display()
            ));
        }
        let logs = root().join("target/stress");
        std::fs::create_dir_all(&logs).map_err(|e| format!("create {}: {e}", logs.display()))?;
        let log = logs.join(format!("{name}.log"));
        let stderr = File::create(&log).map_err(|e| format!("create {}: {e}", log.display()))?;
        let mut child = Command::new(&binary)
            .arg(dir)
            .args(["--port", "0", "--host", "127.0.0.1"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        // The first line, read on a thread so that a silent server cannot
        // block the run.
        let (send, receive) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let mut server = Server {
            child,
            name: name.to_owned(),
            port: 0,
            ready: Value::Null,
            log,
        };
        let line = receive.recv_timeout(LISTEN_LIMIT).unwrap_or_default();
        server.port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok())
            .ok_or_else(|| {
                format!(
                    "server {name} printed no port ({line:?}); its stderr ends with:\n{}",
                    server.log_tail()
                )
            })?;
        Ok(server)
    }

    /// Starts a server as [`Server::start`] does and waits, for at most
    /// `limit`, until it is ready. A failure goes to `row`, with the stop of
    /// a server that did start, and gives `None`.
    pub fn start_ready(
        name: &str,
        dir: &Path,
        args: &[&str],
        limit: Duration,
        row: &mut Row,
    ) -> Option<Server> {
        let mut server = match Server::start(name, dir, args) {
            Ok(server) => server,
            Err(err) => {
                row.fail(err);
                return None;
            }
        };
        match server.wait_ready(limit) {
            Ok(()) => Some(server),
            Err(err) => {
                row.fail(err);
                row.stopped(server.stop());
                None
            }
        }
    }

    /// Polls `/api/health` until it says `ready`, for at most `limit`, and
    /// keeps that answer in [`Server::ready`].
    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let started = Instant::now();
        let mut last = String::from("no answer");
        while started.elapsed() < limit {
            if let Some(status) = self.exited() {
                return Err(format!(
                    "server {} exited with {status} while starting; its stderr ends with:\n{}",
                    self.name,
                    self.log_tail()
                ));
            }
            match Conn::open(self.port).and_then(|mut conn| conn.get("/api/health")) {
                Ok(res) => match res.json() {
                    Some(health) if res.status == 200 && health["status"] == "ready" => {
                        self.ready = health;
                        return Ok(());
                    }
                    _ => last = res.summary(),
                },
                Err(err) => last = err.to_string(),
            }
            thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "server {} was not ready after {limit:?}: {last}",
            self.name
        ))
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its memory now, from /proc/PID/status.
    pub fn memory(&self) -> Option<Memory> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kb| kb.parse().ok())
        };
        Some(Memory {
            rss_kb: field("VmRSS:")?,
            peak_kb: field("VmHWM:")?,
        })
    }

    /// Its exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// A failure description if it has exited, which it never should on
    /// its own.
    pub fn crash(&mut self) -> Option<String> {
        self.exited().map(|status| {
            format!(
                "server {} exited unexpectedly ({status}); its stderr ends with:\n{}",
                self.name,
                self.log_tail()
            )
        })
    }

    /// Asks `/api/health` once more, counting the request in `row`: it must
    /// be a 200 JSON object. A failure is described as `health after WHEN`.
    pub fn check_health(&self, row: &mut Row, when: &str) {
        row.requests += 1;
        match Conn::open(self.port).and_then(|mut conn| conn.get("/api/health")) {
            Ok(res) if res.status == 200 && res.json_object().is_ok() => {}
            Ok(res) => row.fail(format!("health after {when}: {}", res.summary())),
            Err(err) => row.fail(format!("health after {when}: {err}")),
        }
    }

    /// Ends a scenario's use of the server: a crash fails `row`, then the
    /// server is stopped and its stop recorded.
    pub fn finish(mut self, row: &mut Row) {
        if let Some(crash) = self.crash() {
            row.fail(crash);
        }
        row.stopped(self.stop());
    }

    /// Sends SIGTERM and waits for the exit: it must be status 0 within
    /// [`STOP_LIMIT`]. A server still running after [`KILL_AFTER`] is
    /// killed.
    pub fn stop(mut self) -> Stopped {
        let mut problems = Vec::new();
        if let Some(crash) = self.crash() {
            problems.push(crash);
            return Stopped {
                took: Duration::ZERO,
                problems,
            };
        }
        let pid = libc::pid_t::try_from(self.pid()).expect("a pid fits pid_t");
        let started = Instant::now();
        // SAFETY: kill(2) with a valid signal on our own child's pid.
        if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
            problems.push(format!(
                "server {}: SIGTERM failed: {}",
                self.name,
                std::io::Error::last_os_error()
            ));
        }
        let status = loop {
            if let Some(status) = self.exited() {
                break Some(status);
            }
            if started.elapsed() > KILL_AFTER {
                break None;
            }
            thread::sleep(Duration::from_millis(2));
        };
        let took = started.elapsed();
        match status {
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                problems.push(format!(
                    "server {} did not exit within {KILL_AFTER:?} of SIGTERM (killed); its stderr ends with:\n{}",
                    self.name,
                    self.log_tail()
                ));
            }
            Some(status) if !status.success() => problems.push(format!(
                "server {} exited with {status} on SIGTERM, not 0; its stderr ends with:\n{}",
                self.name,
                self.log_tail()
            )),
            Some(_) if took > STOP_LIMIT => problems.push(format!(
                "server {} took {:.1} s to stop (limit {} s)",
                self.name,
                took.as_secs_f64(),
                STOP_LIMIT.as_secs()
            )),
            Some(_) => {}
        }
        Stopped { took, problems }
    }

    /// The last lines of its stderr.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read(&self.log).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(15)..].join("\n    ");
        format!("    {tail}  [{}]", self.log.display())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
