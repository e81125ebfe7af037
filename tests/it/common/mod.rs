//! Test harness: runs the real `dupcheck` binary on a temporary copy of a
//! fixture and talks HTTP/1.1 to it over a plain TCP socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

#[path = "../../../src/interfaces/render/sarif_schema.rs"]
pub mod sarif_schema;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_dupcheck");

/// A temporary copy of `testdata/<fixture>`.
pub fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(name),
        dir.path(),
    );
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture file");
        }
    }
}

/// Writes `text` to `dir/rel`, creating folders.
pub fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create dir");
    std::fs::write(path, text).expect("write file");
}

/// A running server, killed on drop.
pub struct Server {
    child: Child,
    /// Its port.
    pub port: u16,
    /// The directory it serves (kept alive as long as the server).
    pub dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Server {
    /// Starts the server on a fresh copy of `testdata/<fixture>` with `args`,
    /// and waits until its first scan is complete.
    pub fn start(fixture_name: &str, args: &[&str]) -> Server {
        Server::start_in(fixture(fixture_name), args)
    }

    /// Starts the server on `temp` with `args`, waiting for its first scan.
    pub fn start_in(temp: tempfile::TempDir, args: &[&str]) -> Server {
        let mut server = Server::spawn(temp.path(), args);
        server._temp = Some(temp);
        server.wait_ready();
        server
    }

    /// Starts the server on `dir` and returns once it listens.
    pub fn spawn(dir: &Path, args: &[&str]) -> Server {
        Server::spawn_on(dir, 0, args)
    }

    /// Starts the server on `dir` at `port` of 127.0.0.1 (0: a free one)
    /// and returns once it listens.
    pub fn spawn_on(dir: &Path, port: u16, args: &[&str]) -> Server {
        let mut child = dupcheck_on(dir, port, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dupcheck");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let port = line
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server {
            child,
            port,
            dir: dir.to_owned(),
            _temp: None,
        }
    }

    /// Waits for the first scan: `/api/recheck` joins it and answers when done.
    pub fn wait_ready(&mut self) {
        let (status, body) = self.post("/api/recheck", "");
        assert_eq!(status, 200, "{body}");
    }

    /// Sends a request and returns status, lower-cased headers and body.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("send head");
        // The server may answer (413) before reading the whole body.
        let _ = stream.write_all(body);
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read response");
        Response::parse(&raw)
    }

    /// Sends `raw` bytes as they are and returns the response, read until
    /// the server closes the connection.
    pub fn raw(&self, raw: &[u8]) -> Response {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        // The server may answer and close before reading everything.
        let _ = stream.write_all(raw);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        Response::parse(&answer)
    }

    /// POSTs a JSON body; returns status and parsed body.
    pub fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let res = self.request(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        (res.status, res.json())
    }

    /// POSTs `value` to `/api/check`.
    pub fn check(&self, value: Value) -> (u16, Value) {
        self.post("/api/check", &value.to_string())
    }

    /// GETs `path`; returns status and parsed body.
    pub fn get(&self, path: &str) -> (u16, Value) {
        let res = self.request("GET", path, &[], b"");
        (res.status, res.json())
    }
}

impl Server {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and returns the exit code.
    #[cfg(unix)]
    pub fn terminate(&mut self) -> Option<i32> {
        sigterm(&self.child);
        self.child.wait().expect("wait").code()
    }
}

/// The command that runs dupcheck on `dir` on a free port of 127.0.0.1.
fn dupcheck(dir: &Path, args: &[&str]) -> Command {
    dupcheck_on(dir, 0, args)
}

/// The command that runs dupcheck on `dir` at `port` of 127.0.0.1.
fn dupcheck_on(dir: &Path, port: u16, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .arg(dir)
        .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
        .args(args);
    command
}

/// Starts dupcheck on `dir` (a free port, no stdout) with stderr piped, for
/// tests of what it prints there.
pub fn spawn_with_stderr(dir: &Path, args: &[&str]) -> Child {
    dupcheck(dir, args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dupcheck")
}

/// Reads `child`'s stderr up to the first line starting with `prefix` and
/// returns it without its newline. With `keep`, the pipe stays open.
pub fn stderr_line(child: &mut Child, prefix: &str, keep: bool) -> String {
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut line = String::new();
    while !line.starts_with(prefix) {
        line.clear();
        let read = stderr.read_line(&mut line).expect("stderr line");
        assert!(
            read > 0,
            "stderr ended before a line starting with {prefix:?}"
        );
    }
    if keep {
        child.stderr = Some(stderr.into_inner());
    }
    line.trim_end().to_owned()
}

/// Sends SIGTERM to `child`.
#[cfg(unix)]
pub fn sigterm(child: &Child) {
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("run kill");
    assert!(sent.success());
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn parse(raw: &[u8]) -> Response {
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("end of headers");
        let head = String::from_utf8_lossy(&raw[..split]);
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .expect("status");
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Response {
            status,
            headers,
            body: raw[split + 4..].to_vec(),
        }
    }

    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

/// Asserts two JSON values are equal, printing both in full when not.
#[macro_export]
macro_rules! assert_json {
    ($got:expr, $want:expr $(,)?) => {{
        let (got, want): (&serde_json::Value, &serde_json::Value) = (&$got, &$want);
        assert!(
            got == want,
            "\nexpected:\n{}\ngot:\n{}\n",
            serde_json::to_string_pretty(want).unwrap(),
            serde_json::to_string_pretty(got).unwrap()
        );
    }};
}

/// The JSON body of an API error (docs/api.md, "Errors").
pub fn error(name: &str, message: &str, status: u16) -> Value {
    serde_json::json!({"error": name, "message": message, "statusCode": status})
}

/// The program `name` of the tests' Python environment
/// (`target/test-venv/bin`, made by `tests/setup` from
/// `tests/requirements.txt`); panics saying so when it is missing.
pub fn venv_bin(name: &str) -> std::path::PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-venv/bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run `bash tests/setup` (make test does)",
        path.display()
    );
    path
}

/// The formats of the `project` fixture.
pub const PROJECT_FORMATS: &[&str] = &["javascript", "python", "rust", "typescript"];

/// The canonical names of the formats the binary under test reads, in
/// `grammars.toml`'s order: the `formats` of its `GET /`, asked once. A
/// slim build (`cargo test --no-default-features --features
/// lang-c,lang-go,...`) reads fewer.
pub fn compiled_formats() -> &'static [String] {
    static FORMATS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FORMATS.get_or_init(|| {
        let temp = tempfile::tempdir().expect("temp dir");
        let server = Server::start_in(temp, &["--no-watch", "--no-cache"]);
        let (status, root) = server.get("/");
        assert_eq!(status, 200, "{root}");
        let names = root["formats"].as_array().expect("formats");
        names
            .iter()
            .map(|n| n.as_str().expect("a name").to_owned())
            .collect()
    })
}

/// The formats of the binary under test as its messages list them: every
/// format of `grammars.toml` in a full build.
pub fn known_formats() -> String {
    let compiled = compiled_formats();
    if cfg!(feature = "all-languages") {
        assert_eq!(compiled, all_formats());
    }
    compiled.join(", ")
}

/// The canonical names of every format of `grammars.toml`.
pub fn all_formats() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars.toml");
    let file: toml::Value =
        toml::from_str(&std::fs::read_to_string(path).expect("grammars.toml")).expect("TOML");
    file["format"]
        .as_array()
        .expect("[[format]] tables")
        .iter()
        .map(|f| f["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// Whether the binary under test reads every format of `names`
/// (canonical names of `grammars.toml`); a test of formats a slim build
/// lacks skips itself (`needs_formats!`), and says so on stderr. A full
/// build (the default feature `all-languages`) reads every format: there,
/// one missing fails the test.
pub fn compiled(names: &[&str]) -> bool {
    let all = all_formats();
    let compiled = compiled_formats();
    let mut missing = Vec::new();
    for name in names {
        assert!(all.iter().any(|f| f == name), "{name:?} is no format");
        if !compiled.iter().any(|f| f == name) && !missing.contains(name) {
            missing.push(*name);
        }
    }
    if missing.is_empty() {
        return true;
    }
    if cfg!(feature = "all-languages") {
        panic!("a full build lacks {missing:?}");
    }
    eprintln!("skipped: this build lacks {}", missing.join(", "));
    false
}

/// Returns from the test unless the binary under test reads every format
/// named (see [`compiled`]).
macro_rules! needs_formats {
    (project) => {
        if !crate::common::compiled(crate::common::PROJECT_FORMATS) {
            return;
        }
    };
    ($($name:expr),+ $(,)?) => {
        if !crate::common::compiled(&[$($name),+]) {
            return;
        }
    };
}
