//! The benchmark's own PostgreSQL 15: a fresh cluster (`initdb` in a
//! temporary folder) running on a free loopback port, with one database,
//! `dupcheck`, for the store; `psql` to it; its log kept.
//!
//! The binaries are Debian's, in `/usr/lib/postgresql/15/bin` (`PG_BIN`
//! names another folder). `initdb` and `postgres` refuse to run as root:
//! as root they run as `nobody` through `setpriv`, in a folder given to
//! `nobody`, and `postgres` under `--pdeathsig KILL`, so that a benchmark
//! that dies takes its server with it; dropped, the server is stopped as
//! `pg_ctl stop -m immediate` stops it (SIGQUIT) and its folder removed.
//!
//! Settings: TCP on 127.0.0.1 only (no Unix socket: `nobody` may not
//! write Debian's socket folder), SCRAM passwords, `fsync=off` (said in
//! the report: commits still reach the kernel, not the disk), every other
//! setting its default (`shared_buffers` 128 MB), and `pg_stat_statements`
//! preloaded, so that the time the server spends in each of a check's
//! statements is read off it. `auto_explain` is loaded only for the
//! sessions [`Postgres::explaining`] turns it on for.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::env::proc_cpu_seconds;

/// The superuser's password.
const PASSWORD: &str = "bench-store";

/// The database the store lives in.
pub(crate) const DATABASE: &str = "dupcheck";

/// Settings given to `postgres` beside the port, as `-c` pairs.
pub(crate) const SETTINGS: [(&str, &str); 5] = [
    ("listen_addresses", "127.0.0.1"),
    ("unix_socket_directories", ""),
    ("fsync", "off"),
    ("shared_preload_libraries", "pg_stat_statements"),
    ("pg_stat_statements.track", "top"),
];

/// `nobody`'s uid and gid on Debian.
const NOBODY: u32 = 65534;

/// One PostgreSQL server, stopped and removed on drop.
pub(crate) struct Postgres {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub(crate) port: u16,
    /// What it wrote on stderr so far.
    log: Arc<Mutex<String>>,
    /// `SELECT version()`.
    pub(crate) version: String,
    _temp: tempfile::TempDir,
}

/// A PostgreSQL binary.
fn bin(name: &str) -> PathBuf {
    std::env::var_os("PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
        .join(name)
}

/// Whether this process runs as root (then PostgreSQL runs as `nobody`).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `program` as `nobody` when this process is root; killed with this
/// process when `pdeathsig`.
fn unprivileged(program: &Path, pdeathsig: bool) -> Command {
    let mut command = Command::new("setpriv");
    if is_root() {
        let id = NOBODY.to_string();
        command.args(["--reuid", &id, "--regid", &id, "--clear-groups"]);
    }
    if pdeathsig {
        command.args(["--pdeathsig", "KILL"]);
    }
    command.arg(program);
    command
}

/// Gives `path` to `nobody`, when this process is root.
fn give(path: &Path) -> Result<(), String> {
    if is_root() {
        std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY))
            .map_err(|e| format!("cannot give {} to nobody: {e}", path.display()))?;
    }
    Ok(())
}

impl Postgres {
    /// A fresh cluster on a free port with the database [`DATABASE`],
    /// once it accepts connections.
    pub(crate) fn start() -> Result<Postgres, String> {
        let temp = tempfile::Builder::new()
            .prefix("dupcheck-bench-store-pg.")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        give(temp.path())?;
        let data = temp.path().join("data");
        let pwfile = temp.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
        give(&pwfile)?;
        let out = unprivileged(&bin("initdb"), false)
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "scram-sha-256", "-E", "UTF8"])
            .args(["--locale=C", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .map_err(|e| format!("cannot run initdb (is postgresql-15 installed?): {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        for _attempt in 0..5 {
            let port = free_port()?;
            if let Some((child, log)) = run_postgres(&data, port)? {
                let mut pg = Postgres {
                    child: Some(child),
                    port,
                    log,
                    version: String::new(),
                    _temp: temp,
                };
                pg.psql_in("postgres", &format!("CREATE DATABASE {DATABASE}"))?;
                pg.psql("CREATE EXTENSION pg_stat_statements")?;
                pg.version = pg.psql("SELECT version()")?;
                return Ok(pg);
            }
        }
        Err("postgres did not start on 5 ports".into())
    }

    /// The store's URL, password included.
    pub(crate) fn url(&self) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{DATABASE}",
            self.port
        )
    }

    /// Runs `sql` in the store's database through `psql`; its output,
    /// unaligned, one row a line.
    pub(crate) fn psql(&self, sql: &str) -> Result<String, String> {
        self.psql_in(DATABASE, sql)
    }

    /// Runs `sql` in `database` (`postgres` for readings that must not
    /// count among the store's transactions).
    pub(crate) fn psql_in(&self, database: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(bin("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", database])
            .args(["-p", &self.port.to_string(), "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .map_err(|e| format!("cannot run psql: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "psql {sql:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
    }

    /// One number `sql` answers.
    pub(crate) fn number(&self, sql: &str) -> Result<f64, String> {
        let text = self.psql(sql)?;
        text.trim()
            .parse()
            .map_err(|_| format!("{sql:?} answered {text:?}, not a number"))
    }

    /// Committed transactions of the store's database so far, read from
    /// the database `postgres` (so that the reading is not one of them).
    pub(crate) fn commits(&self) -> Result<u64, String> {
        let sql = format!("SELECT xact_commit FROM pg_stat_database WHERE datname = '{DATABASE}'");
        let text = self.psql_in("postgres", &sql)?;
        text.trim()
            .parse()
            .map_err(|_| format!("xact_commit was {text:?}"))
    }

    /// CPU seconds (user and system) of the postmaster and every process
    /// it started that is alive now (the backends, the background workers).
    pub(crate) fn cpu_seconds(&self) -> f64 {
        let Some(postmaster) = self.child.as_ref().map(Child::id) else {
            return 0.0;
        };
        let mut total = 0.0;
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // Fields after the command name: ppid is 1 (field 4 of proc(5)).
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if pid == postmaster || ppid == Some(postmaster) {
                total += proc_cpu_seconds(pid).unwrap_or(0.0);
            }
        }
        total
    }

    /// How long the log is now: where [`Postgres::log_since`] starts.
    pub(crate) fn log_mark(&self) -> usize {
        self.log.lock().map_or(0, |log| log.len())
    }

    /// What the server logged since `mark`.
    pub(crate) fn log_since(&self, mark: usize) -> String {
        self.log
            .lock()
            .map(|log| log.get(mark..).unwrap_or("").to_owned())
            .unwrap_or_default()
    }

    /// Makes the sessions that connect to the store from now on log every
    /// statement with its parameters and duration, and its plan with its
    /// actual times and buffers (`auto_explain` with `log_analyze`), or
    /// no longer (`false`).
    pub(crate) fn explaining(&self, on: bool) -> Result<(), String> {
        let sql = if on {
            format!(
                "ALTER DATABASE {DATABASE} SET session_preload_libraries = 'auto_explain'; \
                 ALTER DATABASE {DATABASE} SET auto_explain.log_min_duration = 0; \
                 ALTER DATABASE {DATABASE} SET auto_explain.log_analyze = on; \
                 ALTER DATABASE {DATABASE} SET auto_explain.log_buffers = on; \
                 ALTER DATABASE {DATABASE} SET log_min_duration_statement = 0"
            )
        } else {
            format!("ALTER DATABASE {DATABASE} RESET ALL")
        };
        self.psql_in("postgres", &sql).map(drop)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: the pid is our child's, not yet waited for.
            unsafe { libc::kill(child.id() as i32, libc::SIGQUIT) };
            let _ = child.wait();
        }
    }
}

/// Runs `postgres` on `data` at `port`; the child and its log once it
/// accepts connections, `None` if it exited first (the port was taken).
type Started = Option<(Child, Arc<Mutex<String>>)>;

fn run_postgres(data: &Path, port: u16) -> Result<Started, String> {
    let mut command = unprivileged(&bin("postgres"), true);
    command.arg("-D").arg(data).args(["-p", &port.to_string()]);
    for (name, value) in SETTINGS {
        command.args(["-c", &format!("{name}={value}")]);
    }
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run postgres: {e}"))?;
    let stderr = child.stderr.take().ok_or("postgres has no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let log = Arc::new(Mutex::new(String::new()));
    let mut ready = false;
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        if let Ok(mut log) = log.lock() {
            log.push_str(&line);
            log.push('\n');
        }
        if line.contains("ready to accept connections") {
            ready = true;
            break;
        }
    }
    if !ready {
        let _ = child.wait();
        return Ok(None);
    }
    // The rest of its log is kept, so that the pipe never fills.
    let kept = Arc::clone(&log);
    thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let Ok(mut log) = kept.lock() {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
    Ok(Some((child, log)))
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}
