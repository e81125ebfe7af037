//! The store against a real PostgreSQL ([`crate::pg`]): `dupcheck store
//! init`, `publish` and `store gc` run as CI runs them, their exact lines
//! and exit codes, and the tables read back with `psql`; the errors (a
//! malformed URL, nothing listening, a wrong password, a schema of
//! another version) each one line without the password; publishes killed
//! mid-way and run twice at once; names and paths that look like SQL.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::common::{write, BIN};
use crate::pg::{percent, PgServer};

/// Runs `dupcheck ARGS` in `dir` with the environment `env` (and neither
/// `DUPCHECK_STORE` nor `PGPASSWORD` from the test's own).
pub fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(dir, args, env).output().expect("run dupcheck")
}

/// The command of [`run`].
fn command(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(BIN);
    command
        .current_dir(dir)
        .args(args)
        .env_remove("DUPCHECK_STORE")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .envs(env.iter().copied());
    command
}

/// Its stdout.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// The last line of its stderr.
pub fn last_error(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
}

/// A fresh database of the shared server with the schema made; its URL.
pub fn store() -> String {
    let pg = PgServer::shared();
    let url = pg.url(&pg.database());
    let out = run(Path::new("."), &["store", "init", "--store", &url], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", last_error(&out));
    url
}

/// The database name of a URL of [`PgServer::url`].
fn database(url: &str) -> &str {
    url.rsplit('/').next().expect("a database")
}

/// `dupcheck publish DIR --store URL --repository NAME`; exit code, stdout.
pub fn publish(dir: &Path, url: &str, name: &str) -> (Option<i32>, String) {
    let out = run(
        dir,
        &["publish", ".", "--store", url, "--repository", name],
        &[],
    );
    let line = if out.status.success() {
        stdout(&out)
    } else {
        last_error(&out)
    };
    (out.status.code(), line)
}

/// The summary line of a publish without its timings.
fn summary(line: &str) -> &str {
    line.rsplit_once("; ").map_or(line, |(before, _)| before)
}

/// The current copy's files of `name`, as `path|lines` sorted.
fn current_files(url: &str, name: &str) -> String {
    PgServer::shared().psql(
        database(url),
        &format!(
            "SELECT f.path || '|' || c.lines FROM repositories r \
             JOIN copy_files f ON f.copy = r.current_copy \
             JOIN contents c ON c.id = f.content \
             WHERE r.name = {} ORDER BY f.path",
            literal(name)
        ),
    )
}

/// `text` as an SQL literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A small JavaScript repository: three files, two with one function.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let function = |name: &str| {
        format!(
            "function {name}(items, rate) {{\n  let total = 0;\n  for (const item of items) {{\n    if (item.price > 0) {{\n      total += item.price * item.count;\n    }}\n  }}\n  const tax = total * rate;\n  return {{ total, tax, sum: total + tax }};\n}}\n"
        )
    };
    write(dir.path(), "src/a.js", function("a"));
    write(dir.path(), "src/b.js", function("b"));
    write(dir.path(), "lib/c.js", "export const c = 1;\n");
    dir
}

#[test]
fn init_creates_the_schema_once_and_refuses_a_newer_one() {
    let pg = PgServer::shared();
    let db = pg.database();
    let url = pg.url(&db);
    let init = |url: &str| run(Path::new("."), &["store", "init", "--store", url], &[]);
    let described = format!("postgres@127.0.0.1:{}/{db}", pg.port);
    let out = init(&url);
    assert_eq!(
        stdout(&out),
        format!("store {described}: schema version 2 created")
    );
    let out = init(&url);
    assert_eq!(
        stdout(&out),
        format!("store {described}: schema already at version 2")
    );
    assert_eq!(
        pg.psql(&db, "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'"),
        "contents,copies,copy_files,dupcheck_schema,postings,repositories"
    );
    // A store of version 1 (no definitions) is migrated.
    pg.psql(
        &db,
        "ALTER TABLE contents DROP COLUMN definitions; UPDATE dupcheck_schema SET version = 1",
    );
    let out = init(&url);
    assert_eq!(
        stdout(&out),
        format!("store {described}: schema migrated from version 1 to 2")
    );
    assert_eq!(
        pg.psql(&db, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'contents' AND column_name = 'definitions'"),
        "1"
    );
    pg.psql(&db, "UPDATE dupcheck_schema SET version = 3");
    for args in [
        &["store", "init", "--store", &url][..],
        &["store", "gc", "--store", &url][..],
        &["publish", ".", "--store", &url][..],
    ] {
        let dir = repository();
        let out = run(dir.path(), args, &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            last_error(&out),
            "dupcheck: error: the store's schema is version 3, newer than this dupcheck's (2): upgrade dupcheck"
        );
    }
    let fresh = pg.url(&pg.database());
    let out = run(Path::new("."), &["store", "gc", "--store", &fresh], &[]);
    assert_eq!(
        (out.status.code(), last_error(&out)),
        (
            Some(1),
            "dupcheck: error: the store has no dupcheck schema: run `dupcheck store init --store URL`".into()
        )
    );
}

#[test]
fn publish_writes_each_content_once_and_republishes_what_changed() {
    let url = store();
    let dir = repository();
    let (code, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(code, Some(0), "{line}");
    assert_eq!(
        summary(&line),
        "published acme/shop: 3 files (21 lines) written, 0 files (0 lines) reused, 0 files (0 lines) removed; gc removed 0 copies and 0 contents"
    );
    assert_eq!(
        current_files(&url, "acme/shop"),
        "lib/c.js|1\nsrc/a.js|10\nsrc/b.js|10"
    );
    // Unchanged: no copy written.
    let (_, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(
        summary(&line),
        "published acme/shop: 0 files (0 lines) written, 3 files (21 lines) reused, 0 files (0 lines) removed, unchanged; gc removed 0 copies and 0 contents"
    );
    let pg = PgServer::shared();
    assert_eq!(pg.psql(database(&url), "SELECT count(*) FROM copies"), "1");
    // A rename reuses its content; a deleted file's content is collected.
    std::fs::rename(
        dir.path().join("src/b.js"),
        dir.path().join("src/renamed.js"),
    )
    .unwrap();
    std::fs::remove_file(dir.path().join("lib/c.js")).unwrap();
    write(dir.path(), "src/new.js", "export const fresh = 2;\n");
    let (_, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(
        summary(&line),
        "published acme/shop: 1 file (1 line) written, 2 files (20 lines) reused, 2 files (11 lines) removed; gc removed 1 copy and 1 content"
    );
    assert_eq!(
        current_files(&url, "acme/shop"),
        "src/a.js|10\nsrc/new.js|1\nsrc/renamed.js|10"
    );
    // Every content has its postings, fingerprints (0) and seeds (1);
    // the one-line files have none.
    assert_eq!(
        pg.psql(
            database(&url),
            "SELECT string_agg(DISTINCT kind::text, ',') FROM postings"
        ),
        "0,1"
    );
    assert_eq!(
        pg.psql(
            database(&url),
            "SELECT count(*) FROM postings p WHERE NOT EXISTS (SELECT 1 FROM contents c WHERE c.id = p.content)"
        ),
        "0"
    );
    // Another repository holding the same file shares its content.
    let (_, line) = publish(dir.path(), &url, "acme/fork");
    assert!(
        line.starts_with(
            "published acme/fork: 0 files (0 lines) written, 3 files (21 lines) reused"
        ),
        "{line}"
    );
    assert_eq!(
        pg.psql(database(&url), "SELECT count(*) FROM contents"),
        "3"
    );
}

#[test]
fn a_store_from_the_environment_the_config_file_and_passwords_from_elsewhere() {
    let pg = PgServer::shared();
    let db = pg.database();
    let dir = repository();
    let without_password = format!("postgres://postgres@127.0.0.1:{}/{db}", pg.port);
    let out = run(
        dir.path(),
        &["store", "init"],
        &[
            ("DUPCHECK_STORE", &without_password),
            ("PGPASSWORD", PgServer::PASSWORD),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", last_error(&out));
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!(
            "127.0.0.1:{}:{db}:postgres:{}\n",
            pg.port,
            PgServer::PASSWORD.replace(':', "\\:")
        ),
    )
    .unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&passfile).unwrap().permissions(),
        0o600,
    );
    std::fs::set_permissions(
        &passfile,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let connection_string = format!("host=127.0.0.1 port={} user=postgres dbname={db}", pg.port);
    write(
        dir.path(),
        ".dupcheck.json",
        serde_json::json!({"store": connection_string, "repository": "from/config"}).to_string(),
    );
    let out = run(
        dir.path(),
        &["publish"],
        &[("PGPASSFILE", passfile.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", last_error(&out));
    assert!(
        stdout(&out).starts_with("published from/config: 3 files"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn store_errors_are_one_line_without_the_password() {
    let pg = PgServer::shared();
    let db = pg.database();
    let dir = repository();
    let secret = "Wr0ng-Secret-9";
    let cases = [
        (
            format!("postgres://postgres:{secret}@127.0.0.1:notaport/{db}"),
            2,
            "dupcheck: error: invalid value for --store: not a PostgreSQL URL or connection string: invalid value for option `port`".to_owned(),
        ),
        (
            format!("postgres://postgres:{secret}@127.0.0.1:{}/{db}", pg.port),
            1,
            format!("dupcheck: error: the store at postgres@127.0.0.1:{}/{db} refused the login: password authentication failed for user \"postgres\"", pg.port),
        ),
        (
            format!("host=127.0.0.1 port={} user=postgres dbname={db}", pg.port),
            1,
            format!("dupcheck: error: the store at postgres@127.0.0.1:{}/{db} refused the login: no password: give it in the URL, PGPASSWORD or PGPASSFILE", pg.port),
        ),
    ];
    for (url, code, line) in cases {
        let out = run(dir.path(), &["publish", "--store", &url], &[]);
        assert_eq!(out.status.code(), Some(code), "{url}");
        assert_eq!(last_error(&out), line);
        let all = String::from_utf8_lossy(&out.stderr).into_owned() + &stdout(&out);
        assert!(!all.contains(secret), "{all}");
    }
    // Nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://postgres:{secret}@127.0.0.1:{port}/{db}");
    let out = run(dir.path(), &["store", "init", "--store", &url], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        last_error(&out),
        format!("dupcheck: error: cannot reach the store at postgres@127.0.0.1:{port}/{db}: error connecting to server: Connection refused (os error 111)")
    );
    // jscpd's stores are still ignored with a warning, and publish needs one.
    let out = run(dir.path(), &["publish", "--store", "leveldb"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        last_error(&out),
        "dupcheck: error: no store: give --store URL (a postgres:// URL or a libpq connection string), DUPCHECK_STORE or \"store\" in .dupcheck.json"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: --store leveldb is ignored"));
}

#[test]
fn names_and_paths_are_data_or_refused() {
    let url = store();
    let dir = repository();
    let sql = "x'; DROP TABLE repositories; --";
    write(
        dir.path(),
        "src/it's; DROP TABLE contents;--.js",
        "export const q = \"'\";\n",
    );
    let (code, line) = publish(dir.path(), &url, sql);
    assert_eq!(code, Some(0), "{line}");
    assert!(
        line.starts_with(&format!("published {sql}: 4 files")),
        "{line}"
    );
    assert!(current_files(&url, sql).contains("src/it's; DROP TABLE contents;--.js|1"));
    let long = "n".repeat(10_000);
    let (code, line) = publish(dir.path(), &url, &long);
    assert_eq!(
        (code, line.as_str()),
        (
            Some(2),
            "dupcheck: error: --repository: a repository's name is at most 512 bytes; this one has 10000"
        )
    );
    write(
        dir.path(),
        ".dupcheck.json",
        r#"{"repository": "a\u0000b"}"#,
    );
    let out = run(dir.path(), &["publish", "--store", &url], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        last_error(&out),
        "dupcheck: error: --repository: a repository's name cannot hold control characters (NUL, newlines, tabs)"
    );
    let out = command(
        dir.path(),
        &["publish", "--store", &url, "--repository"],
        &[],
    )
    .arg(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"bad\xff"))
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        PgServer::shared().psql(database(&url), "SELECT count(*) FROM repositories"),
        "1"
    );
}

/// Starts a publish that pauses at `point` and returns once it says so.
fn paused(
    dir: &Path,
    url: &str,
    name: &str,
    point: &str,
) -> (Child, BufReader<std::process::ChildStderr>) {
    let mut child = command(
        dir,
        &[
            "publish",
            ".",
            "--store",
            url,
            "--repository",
            name,
            "--pause-at",
            point,
        ],
        &[],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start a publish");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while !line.contains("publish paused at") {
        line.clear();
        assert!(stderr.read_line(&mut line).expect("stderr") > 0, "no pause");
    }
    (child, stderr)
}

#[test]
fn a_publish_killed_at_any_point_leaves_the_previous_copy_current() {
    let url = store();
    let dir = repository();
    publish(dir.path(), &url, "acme/shop");
    let before = current_files(&url, "acme/shop");
    write(
        dir.path(),
        "src/more.js",
        "export const more = [1, 2, 3];\n",
    );
    std::fs::remove_file(dir.path().join("src/b.js")).unwrap();
    for point in ["contents", "commit"] {
        let (mut child, _stderr) = paused(dir.path(), &url, "acme/shop", point);
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        assert_eq!(
            current_files(&url, "acme/shop"),
            before,
            "killed at {point}"
        );
    }
    // What the killed publishes wrote is never read and is collected.
    let (code, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(code, Some(0), "{line}");
    assert_eq!(
        current_files(&url, "acme/shop"),
        "lib/c.js|1\nsrc/a.js|10\nsrc/more.js|1"
    );
    let pg = PgServer::shared();
    assert_eq!(pg.psql(database(&url), "SELECT count(*) FROM copies"), "1");
    assert_eq!(
        pg.psql(
            database(&url),
            "SELECT count(*) FROM contents c WHERE NOT EXISTS (SELECT 1 FROM copy_files f WHERE f.content = c.id)"
        ),
        "0"
    );
}

#[test]
fn two_publishes_of_one_repository_at_once_one_fails_clearly() {
    let url = store();
    let dir = repository();
    let (mut first, _stderr) = paused(dir.path(), &url, "acme/shop", "contents");
    let (code, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(
        (code, line.as_str()),
        (
            Some(1),
            "dupcheck: error: another publish of \"acme/shop\" is running; try again when it has ended"
        )
    );
    // Another repository publishes meanwhile; its gc waits for no one.
    let (code, line) = publish(dir.path(), &url, "acme/other");
    assert_eq!(code, Some(0), "{line}");
    assert!(line.ends_with_gc_skipped(), "{line}");
    first
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"go on\n")
        .unwrap();
    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        current_files(&url, "acme/shop"),
        "lib/c.js|1\nsrc/a.js|10\nsrc/b.js|10"
    );
}

/// Whether a summary line says its gc was skipped.
trait GcSkipped {
    fn ends_with_gc_skipped(&self) -> bool;
}

impl GcSkipped for String {
    fn ends_with_gc_skipped(&self) -> bool {
        summary(self).ends_with("gc skipped: a publish is running")
    }
}

#[test]
fn a_select_only_role_cannot_publish() {
    let url = store();
    let pg = PgServer::shared();
    let db = database(&url).to_owned();
    pg.reader(&db, &format!("{db}_reader"), "read-only");
    let reader = pg.url_as(&format!("{db}_reader"), &percent("read-only"), &db);
    let dir = repository();
    let (code, line) = publish(dir.path(), &reader, "acme/shop");
    assert_eq!(code, Some(1));
    assert_eq!(
        line,
        "dupcheck: error: the store failed to register the repository: permission denied for table repositories (42501)"
    );
}

/// `value` with every `publishedAt` and `lastAnswer` that is an ISO 8601
/// UTC time replaced by `"TIME"`.
fn timeless(mut value: serde_json::Value) -> serde_json::Value {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    let time = field
                        .as_str()
                        .is_some_and(|t| t.len() == 24 && t.ends_with('Z'));
                    if (key == "publishedAt" || key == "lastAnswer") && time {
                        *field = serde_json::json!("TIME");
                    } else {
                        walk(field);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

#[test]
fn a_server_lists_the_repositories_to_a_select_only_role() {
    let url = store();
    let dir = repository();
    publish(dir.path(), &url, "github.com/acme/shop");
    write(dir.path(), "src/extra.js", "export const extra = [1, 2];\n");
    publish(dir.path(), &url, "github.com/acme/b'; --");
    let pg = PgServer::shared();
    let db = database(&url).to_owned();
    pg.reader(&db, &format!("{db}_server"), "server pw");
    let reader = pg.url_as(&format!("{db}_server"), &percent("server pw"), &db);
    let server = crate::common::Server::start("project", &["--store", &reader]);
    let (status, body) = server.get("/api/repositories");
    assert_eq!(status, 200);
    crate::assert_json!(
        timeless(body),
        serde_json::json!({"repositories": [
            {"name": "github.com/acme/b'; --", "publishedAt": "TIME", "files": 4, "lines": 22},
            {"name": "github.com/acme/shop", "publishedAt": "TIME", "files": 3, "lines": 21},
        ]})
    );
    let (_, health) = server.get("/api/health");
    crate::assert_json!(
        timeless(health["store"].clone()),
        serde_json::json!({"status": "ok", "error": null, "lastAnswer": "TIME"})
    );
    // Without --store: no store in the health, and the list says why.
    let plain = crate::common::Server::start("project", &[]);
    let (_, health) = plain.get("/api/health");
    assert!(health.get("store").is_none(), "{health}");
    let (status, body) = plain.get("/api/repositories");
    assert_eq!(status, 404);
    crate::assert_json!(
        body,
        crate::common::error(
            "NotFound",
            "This server has no store; start it with --store URL (a PostgreSQL URL or connection string) to list the store's repositories",
            404
        )
    );
}

#[test]
fn the_store_down_is_said_by_kind_and_the_server_reconnects_when_it_is_back() {
    let mut pg = PgServer::start();
    let db = pg.database();
    let url = pg.url(&db);
    let out = run(Path::new("."), &["store", "init", "--store", &url], &[]);
    assert_eq!(out.status.code(), Some(0));
    let server = crate::common::Server::start("project", &["--store", &url]);
    let (_, health) = server.get("/api/health");
    assert_eq!(health["store"]["status"], "ok", "{health}");
    let answered = health["store"]["lastAnswer"].clone();
    pg.stop();
    let (_, health) = server.get("/api/health");
    assert_eq!(
        (
            &health["status"],
            &health["store"]["status"],
            &health["store"]["error"]
        ),
        (
            &serde_json::json!("ready"),
            &serde_json::json!("unavailable"),
            &serde_json::json!("unreachable")
        ),
        "{health}"
    );
    assert_eq!(health["store"]["lastAnswer"], answered);
    let (status, body) = server.get("/api/repositories");
    assert_eq!(status, 503);
    crate::assert_json!(
        body,
        crate::common::error(
            "StoreUnavailable",
            "The store is unavailable (unreachable); retry shortly: the server reconnects by itself",
            503
        )
    );
    // The project is still served.
    assert_eq!(server.get("/api/stats").0, 200);
    pg.restart();
    let (_, health) = server.get("/api/health");
    assert_eq!(health["store"]["status"], "ok", "{health}");
    assert_eq!(
        server.get("/api/repositories").1,
        serde_json::json!({"repositories": []})
    );
    // A wrong password: its kind, and never the password.
    let wrong = pg.url_as("postgres", "Not-The-Password-77", &db);
    let refused = crate::common::Server::start("project", &["--store", &wrong]);
    let res = refused.request("GET", "/api/health", &[], b"");
    let text = String::from_utf8_lossy(&res.body).into_owned();
    assert!(!text.contains("Not-The-Password-77"), "{text}");
    let health = res.json();
    assert_eq!(health["store"]["error"], "authentication", "{health}");
    assert_eq!(health["store"]["lastAnswer"], serde_json::Value::Null);
}

#[test]
fn the_primary_stopped_inside_a_publish_leaves_the_previous_copy_current() {
    let mut pg = PgServer::start();
    let db = pg.database();
    let url = pg.url(&db);
    let out = run(Path::new("."), &["store", "init", "--store", &url], &[]);
    assert_eq!(out.status.code(), Some(0));
    let dir = repository();
    let (code, line) = publish(dir.path(), &url, "acme/shop");
    assert_eq!(code, Some(0), "{line}");
    std::fs::remove_file(dir.path().join("lib/c.js")).unwrap();
    let (mut child, mut stderr) = paused(dir.path(), &url, "acme/shop", "commit");
    pg.stop();
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"go on\n")
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let last = rest.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "dupcheck: error: the store's connection broke while trying to write the copy: "
        ),
        "{last}"
    );
    assert!(!rest.contains(PgServer::PASSWORD), "{rest}");
    pg.restart();
    assert_eq!(
        pg.psql(
            &db,
            "SELECT string_agg(f.path, ',' ORDER BY f.path) FROM repositories r \
             JOIN copy_files f ON f.copy = r.current_copy"
        ),
        "lib/c.js,src/a.js,src/b.js"
    );
}

#[test]
fn gc_on_its_own_and_a_publish_whose_gc_fails_is_still_published() {
    let url = store();
    let pg = PgServer::shared();
    let db = database(&url).to_owned();
    let dir = repository();
    publish(dir.path(), &url, "acme/shop");
    let out = run(Path::new("."), &["store", "gc", "--store", &url], &[]);
    assert_eq!(
        stdout(&out),
        format!(
            "store postgres@127.0.0.1:{}/{db}: gc removed 0 copies and 0 contents",
            pg.port
        )
    );
    // A role that may write but not delete.
    let role = format!("{db}_writer");
    pg.reader(&db, &role, "writer");
    pg.psql(
        &db,
        &format!("GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role}"),
    );
    let writer = pg.url_as(&role, "writer", &db);
    std::fs::remove_file(dir.path().join("lib/c.js")).unwrap();
    let out = run(
        dir.path(),
        &[
            "publish",
            ".",
            "--store",
            &writer,
            "--repository",
            "acme/shop",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", last_error(&out));
    assert_eq!(
        summary(&stdout(&out)),
        "published acme/shop: 0 files (0 lines) written, 2 files (20 lines) reused, 1 file (1 line) removed; gc failed"
    );
    assert_eq!(
        last_error(&out),
        "dupcheck: warning: the publish is done, but its gc failed: the store failed to collect garbage: permission denied for table copies (42501)"
    );
    assert_eq!(current_files(&url, "acme/shop"), "src/a.js|10\nsrc/b.js|10");
    let out = run(Path::new("."), &["store", "gc", "--store", &url], &[]);
    assert_eq!(
        stdout(&out),
        format!(
            "store postgres@127.0.0.1:{}/{db}: gc removed 1 copy and 1 content",
            pg.port
        )
    );
}
