//! Real PostgreSQL servers for the store's tests: [`PgServer::start`] makes
//! a fresh cluster (`initdb` in a temporary folder) and runs `postgres` on
//! a free loopback port; [`PgServer::shared`] is one such server every test
//! of the binary shares, each test in a database of its own
//! ([`PgServer::database`]). [`PgServer::start_with`] adds settings and
//! files (a certificate, a `pg_hba.conf`); [`PgServer::standby`] makes a
//! streaming standby of a server (`pg_basebackup -R`), which
//! [`PgServer::promote`] turns into a primary.
//!
//! The binaries are Debian's, in `/usr/lib/postgresql/15/bin` (`PG_BIN`
//! names another folder); `tests/setup` installs them. `initdb` and
//! `postgres` refuse to run as root: as root (CI, `make test`) they run as
//! `nobody` through `setpriv`, in folders given to `nobody`. `postgres`
//! runs under `setpriv --pdeathsig KILL`, so a test binary that dies
//! takes its servers with it; a server is stopped as `pg_ctl stop -m
//! immediate` stops it (SIGQUIT) when dropped. The superuser is `postgres`,
//! its password [`PgServer::PASSWORD`]; connections are TCP only, with
//! SCRAM passwords (no Unix socket: `nobody` may not write Debian's socket
//! folder). Durability is off (`fsync`, `full_page_writes`; commits still reach the
//! kernel, so a stopped server restarts with them): these
//! clusters live for one test run.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// One PostgreSQL server, stopped and removed on drop.
pub struct PgServer {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its data folder.
    data: PathBuf,
    /// What it wrote on stderr so far.
    log: Arc<Mutex<String>>,
    /// Its settings beyond the defaults (`-c name=value`).
    settings: Vec<String>,
    _temp: tempfile::TempDir,
}

/// The folder of Debian's PostgreSQL 15 binaries (or `PG_BIN`).
fn bin(name: &str) -> PathBuf {
    let dir = std::env::var_os("PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"));
    dir.join(name)
}

/// Whether this process runs as root (then PostgreSQL runs as `nobody`).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `nobody`'s uid and gid on Debian.
const NOBODY: u32 = 65534;

/// A command that runs `program` as the unprivileged user when this
/// process is root, and as this user otherwise; killed with its parent
/// thread when `pdeathsig`.
fn unprivileged(program: &Path, pdeathsig: bool) -> Command {
    let mut command = Command::new("setpriv");
    if is_root() {
        command.args([
            "--reuid",
            &NOBODY.to_string(),
            "--regid",
            &NOBODY.to_string(),
            "--clear-groups",
        ]);
    }
    if pdeathsig {
        command.args(["--pdeathsig", "KILL"]);
    }
    command.arg(program);
    command
}

/// Gives `path` to the unprivileged user, when this process is root.
fn give(path: &Path) {
    if is_root() {
        std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).expect("chown to nobody");
    }
}

/// Names of databases made by this process: one per test.
static DATABASES: AtomicU32 = AtomicU32::new(0);

impl PgServer {
    /// The superuser's password.
    pub const PASSWORD: &'static str = "s3cret-Pw'd;";

    /// A fresh cluster running on a free loopback port, once it accepts
    /// connections. A port taken between its choice and the bind is
    /// retried on another.
    pub fn start() -> PgServer {
        PgServer::start_in("dupcheck-pg-".into(), &[], &[])
    }

    /// [`PgServer::start`] with `files` (name, content) written in its
    /// data folder, readable by the server alone (certificates and keys),
    /// and `settings` (`name=value`, which may name those files by their
    /// names: relative paths are the data folder's).
    pub fn start_with(files: &[(&str, &[u8])], settings: &[&str]) -> PgServer {
        PgServer::start_in("dupcheck-pg-".into(), files, settings)
    }

    /// [`PgServer::start_with`] in a temporary folder named from `prefix`.
    fn start_in(prefix: String, files: &[(&str, &[u8])], settings: &[&str]) -> PgServer {
        let temp = temp_folder(&prefix);
        let data = temp.path().join("data");
        let pwfile = temp.path().join("pw");
        std::fs::write(&pwfile, PgServer::PASSWORD).expect("write the password file");
        give(&pwfile);
        let out = unprivileged(&bin("initdb"), false)
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "scram-sha-256", "-E", "UTF8"])
            .args(["--locale=C", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("run initdb (tests/setup installs PostgreSQL)");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (name, content) in files {
            let path = data.join(name);
            std::fs::write(&path, content).expect("write a server file");
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .expect("chmod a server file");
            give(&path);
        }
        let settings = settings.iter().map(|s| s.to_string()).collect();
        PgServer::run_on_a_free_port(temp, data, settings)
    }

    /// Runs `postgres` on the cluster in `data` (inside `temp`) on a free
    /// port, trying another if it was taken meanwhile.
    fn run_on_a_free_port(
        temp: tempfile::TempDir,
        data: PathBuf,
        settings: Vec<String>,
    ) -> PgServer {
        let mut said = String::new();
        for _attempt in 0..5 {
            let port = free_port();
            match run_postgres(&data, port, &settings) {
                Ok((child, log)) => {
                    return PgServer {
                        child: Some(child),
                        port,
                        data,
                        log,
                        settings,
                        _temp: temp,
                    }
                }
                Err(log) => said = log,
            }
        }
        panic!("postgres did not start on 5 ports; it said last:\n{said}");
    }

    /// A streaming standby of this server: `pg_basebackup -R` of its data
    /// (as the superuser, through the replication entry initdb writes for
    /// 127.0.0.1) into a new folder, run on another free port with the
    /// same settings. PostgreSQL 15's defaults (`wal_level=replica`, ten
    /// WAL senders) are all a primary needs. Returns once it accepts
    /// (read-only) connections.
    pub fn standby(&self) -> PgServer {
        let temp = temp_folder("dupcheck-pg-standby-");
        let data = temp.path().join("data");
        let out = unprivileged(&bin("pg_basebackup"), false)
            .arg("-D")
            .arg(&data)
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-R", "--checkpoint=fast", "--no-sync"])
            .env("PGPASSWORD", PgServer::PASSWORD)
            .output()
            .expect("run pg_basebackup");
        assert!(
            out.status.success(),
            "pg_basebackup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PgServer::run_on_a_free_port(temp, data, self.settings.clone())
    }

    /// Whether this server is a standby (in recovery).
    pub fn in_recovery(&self) -> bool {
        self.psql("postgres", "SELECT pg_is_in_recovery()") == "t"
    }

    /// Promotes this standby to a primary (`pg_ctl promote`, which waits
    /// until it is one).
    pub fn promote(&self) {
        let out = unprivileged(&bin("pg_ctl"), false)
            .args(["promote", "-w", "-t", "60", "-D"])
            .arg(&self.data)
            .output()
            .expect("run pg_ctl promote");
        assert!(
            out.status.success(),
            "pg_ctl promote failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!self.in_recovery(), "still a standby after promote");
    }

    /// Waits, 60 s at most, until this standby has replayed everything
    /// `primary` has written so far.
    pub fn wait_replayed(&self, primary: &PgServer) {
        let written = primary.psql("postgres", "SELECT pg_current_wal_lsn()");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let caught_up = self.psql(
                "postgres",
                &format!("SELECT pg_last_wal_replay_lsn() >= '{written}'::pg_lsn"),
            );
            if caught_up == "t" {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the standby did not replay up to {written} within 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// One server for the whole test binary, started on first use by a
    /// thread that lives as long as the process (its death kills the
    /// server: see the module's doc). Tests share it through databases of
    /// their own. Being static, it is never dropped: its folder is named
    /// for the process, and the next run removes the folders of processes
    /// that are gone.
    pub fn shared() -> &'static PgServer {
        static SHARED: OnceLock<PgServer> = OnceLock::new();
        SHARED.get_or_init(|| {
            remove_dead_shared_folders();
            let (sender, receiver) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let prefix = format!("{SHARED_PREFIX}{}-", std::process::id());
                sender
                    .send(PgServer::start_in(prefix, &[], &[]))
                    .expect("send the server");
                loop {
                    std::thread::park();
                }
            });
            receiver.recv().expect("the shared server")
        })
    }

    /// A new empty database on this server; its name.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::SeqCst)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }

    /// The URL of `database` as the superuser, password included.
    pub fn url(&self, database: &str) -> String {
        self.url_as("postgres", &percent(PgServer::PASSWORD), database)
    }

    /// The URL of `database` as `user` with `password` (given encoded).
    pub fn url_as(&self, user: &str, password: &str, database: &str) -> String {
        format!(
            "postgres://{user}:{password}@127.0.0.1:{}/{database}",
            self.port
        )
    }

    /// Runs `sql` in `database` as the superuser through `psql`; its
    /// output, unaligned, one row a line. Panics on an error.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(bin("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", database])
            .args(["-p", &self.port.to_string(), "-c", sql])
            .env("PGPASSWORD", PgServer::PASSWORD)
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("psql's output")
            .trim_end()
            .to_owned()
    }

    /// Makes a login role `name` with `password` that may read every table
    /// of `database`'s schema `public`, and nothing more.
    pub fn reader(&self, database: &str, name: &str, password: &str) {
        self.psql(
            database,
            &format!("CREATE ROLE {name} LOGIN PASSWORD '{password}'"),
        );
        self.psql(
            database,
            &format!(
                "GRANT CONNECT ON DATABASE {database} TO {name}; \
                 GRANT USAGE ON SCHEMA public TO {name}; \
                 GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name}"
            ),
        );
    }

    /// What the server wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`'s SIGQUIT) and
    /// waits for it; its data stays, for [`PgServer::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: the pid is our child's, not yet waited for.
            unsafe { libc::kill(child.id() as i32, libc::SIGQUIT) };
            child.wait().expect("wait for postgres");
        }
    }

    /// Starts the stopped server again on its port.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "the server runs");
        let (child, log) = run_postgres(&self.data, self.port, &self.settings)
            .unwrap_or_else(|said| panic!("postgres did not restart: {said}"));
        self.child = Some(child);
        self.log = log;
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A temporary folder named from `prefix`, given to the unprivileged user.
fn temp_folder(prefix: &str) -> tempfile::TempDir {
    let temp = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("temp dir");
    give(temp.path());
    temp
}

/// Runs `postgres` on `data` at `port` with `settings`; the child and its
/// stderr once it accepts connections, or what it said if it exited first
/// (the port was taken, or a setting is wrong).
fn run_postgres(
    data: &Path,
    port: u16,
    settings: &[String],
) -> Result<(Child, Arc<Mutex<String>>), String> {
    let mut command = unprivileged(&bin("postgres"), true);
    // Relative paths in settings (`hba_file` is read before postgres
    // enters its data folder) are the data folder's.
    command
        .current_dir(data)
        .arg("-D")
        .arg(data)
        .args(["-p", &port.to_string()])
        .args(["-c", "listen_addresses=127.0.0.1"])
        .args(["-c", "unix_socket_directories="])
        .args(["-c", "fsync=off", "-c", "full_page_writes=off"]);
    for setting in settings {
        command.args(["-c", setting]);
    }
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run postgres");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let log = Arc::new(Mutex::new(String::new()));
    let mut ready = false;
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        log.lock().expect("log").push_str(&format!("{line}\n"));
        // A standby says "ready to accept read-only connections".
        if line.contains("ready to accept") {
            ready = true;
            break;
        }
    }
    if !ready {
        child.wait().expect("wait for postgres");
        let said = log.lock().expect("log").clone();
        return Err(said);
    }
    // The rest of its log is kept, so that the pipe never fills.
    let kept = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            kept.lock().expect("log").push_str(&format!("{line}\n"));
        }
    });
    Ok((child, log))
}

/// How the folders of shared servers begin, before their process's id.
const SHARED_PREFIX: &str = "dupcheck-pg-shared-";

/// Removes the folders of the shared servers of test processes that ended.
fn remove_dead_shared_folders() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.map_while(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(SHARED_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok());
        // SAFETY: signal 0 only asks whether the process exists.
        if pid.is_some_and(|pid| unsafe { libc::kill(pid, 0) } != 0) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

/// `text` percent-encoded for a URL's user information.
pub fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_shared_server_gives_each_test_its_database() {
    let pg = PgServer::shared();
    let (a, b) = (pg.database(), pg.database());
    assert_ne!(a, b);
    pg.psql(&a, "CREATE TABLE only_in_a (x int)");
    assert_eq!(
        pg.psql(
            &b,
            "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'"
        ),
        "0"
    );
}

#[test]
fn a_cluster_starts_serves_sql_and_stops() {
    let started = std::time::Instant::now();
    let mut pg = PgServer::start();
    let database = pg.database();
    assert_eq!(pg.psql(&database, "SELECT 1 + 1"), "2");
    assert_eq!(
        pg.psql(
            &database,
            "SELECT current_setting('server_version_num')::int / 10000"
        ),
        "15"
    );
    pg.reader(&database, "reader", "pw");
    pg.psql(&database, "CREATE TABLE t (x int)");
    let port = pg.port;
    pg.stop();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    pg.restart();
    assert_eq!(pg.psql(&database, "SELECT count(*) FROM t"), "0");
    assert!(pg.log().contains("ready to accept connections"));
    eprintln!("a cluster: {:?}", started.elapsed());
}

#[test]
fn urls_carry_encoded_passwords() {
    let pg = PgServer::shared();
    let database = pg.database();
    pg.reader(&database, "url_reader", "p@ss w/rd");
    for url in [
        pg.url(&database),
        pg.url_as("url_reader", &percent("p@ss w/rd"), &database),
    ] {
        let out = Command::new(bin("psql"))
            .args([
                "-X",
                "-A",
                "-t",
                "-d",
                &url,
                "-c",
                "SELECT current_database()",
            ])
            .output()
            .expect("run psql");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            database,
            "{url}"
        );
    }
}

#[test]
fn a_standby_replays_its_primary_and_is_promoted() {
    let primary = PgServer::start();
    let database = primary.database();
    primary.psql(&database, "CREATE TABLE t AS SELECT 1 AS x");
    let standby = primary.standby();
    assert!(standby.in_recovery() && !primary.in_recovery());
    primary.psql(&database, "INSERT INTO t VALUES (2)");
    standby.wait_replayed(&primary);
    assert_eq!(standby.psql(&database, "SELECT sum(x) FROM t"), "3");
    standby.promote();
    standby.psql(&database, "INSERT INTO t VALUES (3)");
    assert_eq!(standby.psql(&database, "SELECT sum(x) FROM t"), "6");
}
