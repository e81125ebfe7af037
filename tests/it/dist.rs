//! The ways dupcheck is installed (docs/install.md), each taken as its user
//! takes it. `packaging/dist.sh`, the script `make dist` runs, packs a copy
//! of the debug binary without its debug sections, once per run, into
//! `target/tmp/dist/`: the wheel, the npm launcher and its linux-x64-gnu
//! package, the tarball. A local package index (pypiserver) and a local
//! npm registry (verdaccio, without uplink) on 127.0.0.1 serve them; pip,
//! uvx and npm install `dupcheck` by name from there into fresh folders,
//! and the installed command reports the `stats` fixture's one clone. No
//! registry outside this machine is asked: pip, uv and npm are given the
//! local one alone, without the machine's own settings.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use common::{fixture, sigterm, BIN};

/// What `dupcheck report --no-cache` prints for the `stats` fixture.
const REPORT: &str = "\
lines  tokens  format      first     second
    8      61  javascript  b.js:2-9  lib/a.js:1-8
                           in `area()` and `area()`

3 files, 20 lines, 154 tokens: 1 clone, 16 duplicated lines (80%), 122 duplicated tokens (79.22%)
";

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The packages of this run, made once.
struct Artifacts {
    wheel: PathBuf,
    launcher: PathBuf,
    platform: PathBuf,
    tarball: PathBuf,
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A tool that tests/setup installs: `target/test-venv/bin/NAME`.
fn venv_tool(name: &str) -> PathBuf {
    let tool = repo().join("target/test-venv/bin").join(name);
    assert!(
        tool.exists(),
        "{} is missing: run `bash tests/setup` (make test does)",
        tool.display()
    );
    tool
}

/// The packages, made by packaging/dist.sh on the first call.
fn artifacts() -> &'static Artifacts {
    static ARTIFACTS: OnceLock<Artifacts> = OnceLock::new();
    ARTIFACTS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dist");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create target/tmp/dist");
        // The debug binary is about 390 MB, 280 of them debug sections:
        // without them the packages compress in seconds.
        let binary = dir.join("dupcheck");
        run(Command::new("objcopy")
            .arg("--strip-debug")
            .arg(BIN)
            .arg(&binary));
        let out = dir.join("out");
        run(Command::new("bash")
            .arg(repo().join("packaging/dist.sh"))
            .arg(&binary)
            .arg(&out)
            .env("MATURIN", venv_tool("maturin")));
        // The wheel's tag is the newest glibc the binary needs: 2.34.
        let artifacts = Artifacts {
            wheel: out.join(format!(
                "dupcheck-{VERSION}-py3-none-manylinux_2_34_x86_64.whl"
            )),
            launcher: out.join(format!("dupcheck-{VERSION}.tgz")),
            platform: out.join(format!("dupcheck-linux-x64-gnu-{VERSION}.tgz")),
            tarball: out.join(format!(
                "dupcheck-{VERSION}-x86_64-unknown-linux-gnu.tar.gz"
            )),
        };
        let made: Vec<_> = std::fs::read_dir(&out)
            .expect("read the packages' folder")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        for path in [
            &artifacts.wheel,
            &artifacts.launcher,
            &artifacts.platform,
            &artifacts.tarball,
        ] {
            assert!(path.exists(), "no {path:?} among {made:?}");
        }
        artifacts
    })
}

/// Runs `command` and returns its output, failing the test if it fails.
fn run(command: &mut Command) -> Output {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs an installed `dupcheck report --no-cache` (`command`) on a copy of
/// the `stats` fixture and checks its one clone and exit status 0.
fn reports_the_clone(mut command: Command) {
    let dir = fixture("stats");
    let out = run(command.arg("report").arg(dir.path()).arg("--no-cache"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), REPORT);
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

/// A local service (pypiserver, verdaccio), killed on drop.
struct Service {
    child: Child,
    url: String,
    _temp: tempfile::TempDir,
}

impl Service {
    /// Starts `command` (given the port) on a free port of 127.0.0.1 and
    /// returns once a line of its output (stdout with `stdout`, else
    /// stderr) contains `ready`; tries another port if it ends before.
    fn start(
        temp: tempfile::TempDir,
        ready: &str,
        stdout: bool,
        command: impl Fn(u16) -> Command,
    ) -> Service {
        let mut said = String::new();
        for _attempt in 0..5 {
            let port = free_port();
            let mut child = command(port)
                .stdin(Stdio::null())
                .stdout(if stdout {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stderr(if stdout {
                    Stdio::null()
                } else {
                    Stdio::piped()
                })
                .spawn()
                .expect("start the local registry");
            let pipe: Box<dyn Read + Send> = if stdout {
                Box::new(child.stdout.take().expect("stdout"))
            } else {
                Box::new(child.stderr.take().expect("stderr"))
            };
            let mut lines = BufReader::new(pipe).lines();
            said.clear();
            let up = lines.by_ref().map_while(Result::ok).any(|line| {
                said.push_str(&line);
                said.push('\n');
                line.contains(ready)
            });
            if up {
                // Keep reading (and dropping) what it says, so that it never
                // blocks on a full pipe.
                std::thread::spawn(move || lines.for_each(drop));
                return Service {
                    child,
                    url: format!("http://127.0.0.1:{port}/"),
                    _temp: temp,
                };
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("the local registry did not start on 5 ports; it said last:\n{said}");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// pypiserver serving a folder holding the wheel alone.
fn package_index() -> Service {
    let temp = tempfile::tempdir().expect("temp dir");
    let packages = temp.path().join("packages");
    std::fs::create_dir(&packages).expect("create the index folder");
    let wheel = &artifacts().wheel;
    std::fs::copy(wheel, packages.join(wheel.file_name().expect("name"))).expect("copy the wheel");
    let server = venv_tool("pypi-server");
    Service::start(temp, "Listening on", false, |port| {
        let mut command = Command::new(&server);
        command
            .args(["run", "-i", "127.0.0.1", "-p", &port.to_string()])
            .arg(&packages);
        command
    })
}

/// `command` without the machine's pip and uv settings (its pip reads
/// wheels from a folder of its own), so that it asks the local index alone.
fn python_tool(program: impl AsRef<std::ffi::OsStr>, temp: &Path) -> Command {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("PIP_") || name.starts_with("UV_") {
            command.env_remove(&*name);
        }
    }
    command
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("UV_NO_CONFIG", "1")
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_CACHE_DIR", temp.join("uv-cache"))
        .env("UV_TOOL_DIR", temp.join("uv-tools"));
    command
}

#[test]
fn pip_installs_the_wheel_by_name_from_a_local_index() {
    let index = package_index();
    let temp = tempfile::tempdir().expect("temp dir");
    let venv = temp.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(python_tool(venv.join("bin/pip"), temp.path())
        .args(["install", "--no-cache-dir", "--index-url"])
        .arg(format!("{}simple/", index.url))
        .arg("dupcheck"));
    reports_the_clone(Command::new(venv.join("bin/dupcheck")));
}

#[test]
fn uvx_runs_the_wheel_by_name_from_a_local_index() {
    let index = package_index();
    let temp = tempfile::tempdir().expect("temp dir");
    let mut uvx = python_tool(venv_tool("uvx"), temp.path());
    uvx.arg("--index-url")
        .arg(format!("{}simple/", index.url))
        .arg("dupcheck");
    reports_the_clone(uvx);
}

/// verdaccio with storage in a temporary folder, no uplink (it answers
/// from what was published to it alone), anonymous publishing and bodies
/// up to 100 MB (the platform package is about 17).
fn npm_registry() -> Service {
    let verdaccio = repo().join("tests/registry/node_modules/.bin/verdaccio");
    assert!(
        verdaccio.exists(),
        "{} is missing: run `bash tests/setup` (make test does)",
        verdaccio.display()
    );
    let temp = tempfile::tempdir().expect("temp dir");
    let config = temp.path().join("config.yaml");
    std::fs::write(
        &config,
        "storage: ./storage\n\
         auth:\n  htpasswd:\n    file: ./htpasswd\n    max_users: -1\n\
         uplinks: {}\n\
         packages:\n  '**':\n    access: $all\n    publish: $anonymous\n\
         max_body_size: 100mb\n\
         log: { type: stdout, format: pretty, level: warn }\n",
    )
    .expect("write the verdaccio config");
    Service::start(temp, "http address", true, |port| {
        let mut command = Command::new(&verdaccio);
        command
            .arg("--config")
            .arg(&config)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"));
        command
    })
}

/// npm (or npx, node) with `registry` as its only registry: its own
/// settings file and cache in `temp`. npm will not publish without a
/// token; verdaccio takes one it does not know as anonymous.
fn npm(program: &str, registry: &str, temp: &Path) -> Command {
    let host = registry.trim_start_matches("http:");
    let npmrc = temp.join("npmrc");
    std::fs::write(
        &npmrc,
        format!("registry={registry}\n{host}:_authToken=anonymous\n"),
    )
    .expect("write npmrc");
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        if name
            .to_string_lossy()
            .to_ascii_lowercase()
            .starts_with("npm_config_")
        {
            command.env_remove(name);
        }
    }
    command
        .env("npm_config_userconfig", &npmrc)
        .env("npm_config_registry", registry)
        .env("npm_config_cache", temp.join("npm-cache"))
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false");
    command
}

/// An empty npm project in `temp` with `dupcheck` installed from
/// `registry` (npm install `flags`).
fn npm_project(registry: &str, temp: &Path, flags: &[&str]) -> PathBuf {
    let project = temp.join("project");
    std::fs::create_dir(&project).expect("create the project");
    std::fs::write(project.join("package.json"), "{}\n").expect("write package.json");
    run(npm("npm", registry, temp)
        .current_dir(&project)
        .args(["install", "--no-package-lock"])
        .args(flags)
        .arg("dupcheck"));
    project
}

#[test]
fn npm_installs_the_launcher_with_its_platform_package_and_npx_runs_it() {
    let registry = npm_registry();
    let temp = tempfile::tempdir().expect("temp dir");
    for package in [&artifacts().platform, &artifacts().launcher] {
        run(npm("npm", &registry.url, temp.path())
            .arg("publish")
            .arg(package));
    }

    let project = npm_project(&registry.url, temp.path(), &[]);
    let mut npx = npm("npx", &registry.url, temp.path());
    npx.current_dir(&project).arg("dupcheck");
    reports_the_clone(npx);

    // The binary's exit status comes through: 80% is above 10%.
    let dir = fixture("stats");
    let out = npm("npx", &registry.url, temp.path())
        .current_dir(&project)
        .args(["dupcheck", "report"])
        .arg(dir.path())
        .args(["--no-cache", "--threshold", "10"])
        .output()
        .expect("run npx dupcheck");
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // A signal to the launcher reaches the server it runs, which stops
    // gracefully; the launcher ends as it did.
    let mut launcher = Command::new(project.join("node_modules/.bin/dupcheck"))
        .arg(dir.path())
        .args(["--port", "0", "--host", "127.0.0.1", "--no-cache"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the launcher");
    let mut line = String::new();
    BufReader::new(launcher.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the listening line");
    let port = line
        .split("listening on http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no port in {line:?}"))
        .to_owned();
    sigterm(&launcher);
    assert_eq!(launcher.wait().expect("wait").code(), Some(0));
    assert!(
        std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err(),
        "the server still listens on {port}"
    );

    // Without its platform package, the launcher says where else to get
    // dupcheck.
    let other = tempfile::tempdir().expect("temp dir");
    let project = npm_project(&registry.url, other.path(), &["--omit=optional"]);
    assert!(!project.join("node_modules/@dupcheck").exists());
    let out = npm("npx", &registry.url, other.path())
        .current_dir(&project)
        .args(["dupcheck", "--version"])
        .output()
        .expect("run npx dupcheck");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        "dupcheck: the binary for this platform (linux-x64-gnu), the package \
         @dupcheck/linux-x64-gnu, is not installed: npm leaves it out with \
         --omit=optional (or --no-optional); install dupcheck again without that flag."
    );
    assert_eq!(lines[1], OTHER_WAYS);
    assert_eq!(lines.len(), 2, "{stderr}");

    // On a platform without a package (node told it runs on macOS on
    // ARM), it says which platforms have one.
    let preload = other.path().join("darwin-arm64.js");
    std::fs::write(
        &preload,
        "Object.defineProperty(process, 'platform', { value: 'darwin' });\n\
         Object.defineProperty(process, 'arch', { value: 'arm64' });\n",
    )
    .expect("write the preload");
    let out = Command::new("node")
        .arg("--require")
        .arg(&preload)
        .arg(project.join("node_modules/dupcheck/bin/dupcheck.js"))
        .arg("--version")
        .output()
        .expect("run the launcher");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "dupcheck: the npm package dupcheck {VERSION} has no binary for this \
             platform (darwin-arm64); it has one for: linux-x64-gnu."
        )
    );
    assert_eq!(lines[1], OTHER_WAYS);
    assert_eq!(lines.len(), 2, "{stderr}");
}

/// The launcher's last line without a binary.
const OTHER_WAYS: &str = "Other ways to install dupcheck: from source with a Rust toolchain \
    (cargo install --path . in a clone of its repository), or the Python wheel (pip install \
    dupcheck, pipx run dupcheck, uvx dupcheck) or the tarball, both for Linux x86-64 with \
    glibc; see docs/install.md in dupcheck's repository. DUPCHECK_BINARY=/path/to/dupcheck \
    makes this command run that binary.";

#[test]
fn the_tarball_holds_the_binary_and_the_readme() {
    let temp = tempfile::tempdir().expect("temp dir");
    let tarball = &artifacts().tarball;
    let name = format!("dupcheck-{VERSION}-x86_64-unknown-linux-gnu");
    let listing = run(Command::new("tar").arg("-tzf").arg(tarball));
    let mut expected = vec![
        format!("{name}/"),
        format!("{name}/LICENSE"),
        format!("{name}/README.md"),
        format!("{name}/dupcheck"),
    ];
    let mut listed: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected);
    run(Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(temp.path()));
    reports_the_clone(Command::new(temp.path().join(&name).join("dupcheck")));
}
