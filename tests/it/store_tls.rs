//! The store over TLS: a PostgreSQL with `ssl=on` whose `pg_hba.conf`
//! takes TLS connections only, its certificate (for `localhost`) signed by
//! a CA the test makes with rcgen; `dupcheck store init`, `publish` and a
//! server with `--store` under each `sslmode` as libpq means it
//! (`require` encrypts without checking, `verify-ca` checks the chain,
//! `verify-full` the chain and the host name), and the errors of a
//! certificate not trusted, one line without the password.

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::pg::{percent, PgServer};
use crate::store::{last_error, run, stdout};

/// A CA and a server certificate it signed, in PEM.
struct Pki {
    ca: String,
    cert: String,
    key: String,
}

/// A fresh CA named `name` and a certificate for `localhost` signed by it.
fn pki(name: &str) -> Pki {
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, name);
    let ca_cert = ca.self_signed(&ca_key).expect("the CA's certificate");
    let key = KeyPair::generate().expect("a server key");
    let mut server = CertificateParams::new(vec!["localhost".to_owned()]).expect("server params");
    server
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = server
        .signed_by(&key, &Issuer::new(ca, ca_key))
        .expect("the server's certificate");
    Pki {
        ca: ca_cert.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// Connections over TLS only: a plain one finds no entry.
const HBA: &str = "hostssl all all 127.0.0.1/32 scram-sha-256\n";

/// A server with `ssl=on`, the certificate of `pki`, and [`HBA`].
fn tls_server(pki: &Pki) -> PgServer {
    PgServer::start_with(
        &[
            ("server.crt", pki.cert.as_bytes()),
            ("server.key", pki.key.as_bytes()),
            ("pg_hba_tls.conf", HBA.as_bytes()),
        ],
        &[
            "ssl=on",
            "ssl_cert_file=server.crt",
            "ssl_key_file=server.key",
            "hba_file=pg_hba_tls.conf",
        ],
    )
}

/// A connection string to `database` at `host` with `tls` options.
fn connection(pg: &PgServer, host: &str, database: &str, tls: &str) -> String {
    format!(
        "host={host} port={} user=postgres password='{}' dbname={database} {tls}",
        pg.port,
        PgServer::PASSWORD.replace('\'', "\\'")
    )
}

/// A small repository to publish.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    crate::common::write(
        dir.path(),
        "src/a.js",
        "export function a(items) {\n  let total = 0;\n  for (const item of items) {\n    total += item.price * item.count;\n  }\n  return total;\n}\n",
    );
    dir
}

/// `dupcheck ARGS --store STORE` in `dir`: exit code, and stdout when it
/// succeeded or else the last line of stderr; asserts that no output
/// holds the password.
fn dupcheck(dir: &Path, args: &[&str], store: &str) -> (Option<i32>, String) {
    let mut all = args.to_vec();
    all.extend(["--store", store]);
    let out = run(dir, &all, &[]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned() + &stdout(&out);
    assert!(!said.contains(PgServer::PASSWORD), "{said}");
    let line = if out.status.success() {
        stdout(&out)
    } else {
        last_error(&out)
    };
    (out.status.code(), line)
}

#[test]
fn require_publishes_over_tls_and_a_server_reads_over_it() {
    let pki = pki("dupcheck test CA");
    let pg = tls_server(&pki);
    let db = pg.database();
    let url = format!("{}?sslmode=require", pg.url(&db));
    let dir = repository();
    let (code, line) = dupcheck(dir.path(), &["store", "init"], &url);
    assert_eq!(code, Some(0), "{line}");
    let (code, line) = dupcheck(
        dir.path(),
        &["publish", ".", "--repository", "tls/shop"],
        &url,
    );
    assert_eq!(code, Some(0), "{line}");
    assert!(
        line.starts_with("published tls/shop: 1 file (7 lines) written"),
        "{line}"
    );
    // Plain connections are refused by the server: TLS was what let in.
    let (code, line) = dupcheck(
        dir.path(),
        &["store", "init"],
        &format!("{}?sslmode=disable", pg.url(&db)),
    );
    assert_eq!(code, Some(1), "{line}");
    assert_eq!(
        line,
        format!(
            "dupcheck: error: the store at postgres@127.0.0.1:{}/{db} refused the login: no pg_hba.conf entry for host \"127.0.0.1\", user \"postgres\", database \"{db}\", no encryption",
            pg.port
        )
    );
    let server = crate::common::Server::start("project", &["--store", &url]);
    let (_, health) = server.get("/api/health");
    assert_eq!(health["store"]["status"], "ok", "{health}");
    let (status, list) = server.get("/api/repositories");
    assert_eq!(status, 200);
    assert_eq!(list["repositories"][0]["name"], "tls/shop", "{list}");
    // The server's connection is encrypted, with TLS 1.3.
    assert_eq!(
        pg.psql(
            &db,
            "SELECT string_agg(DISTINCT s.ssl::text || ' ' || s.version, ',') FROM pg_stat_ssl s \
             JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'dupcheck'"
        ),
        "true TLSv1.3"
    );
}

#[test]
fn verify_full_and_verify_ca_check_the_certificate_as_libpq_does() {
    let pki = pki("dupcheck test CA");
    let pg = tls_server(&pki);
    let db = pg.database();
    let files = tempfile::tempdir().expect("temp dir");
    let ca = files.path().join("ca x.pem");
    std::fs::write(&ca, &pki.ca).expect("write the CA");
    let root = format!("sslrootcert='{}'", ca.display());
    let dir = repository();
    // The host name is the certificate's: verify-full trusts it.
    let full = connection(
        &pg,
        "localhost",
        &db,
        &format!("sslmode=verify-full {root}"),
    );
    let (code, line) = dupcheck(dir.path(), &["store", "init"], &full);
    assert_eq!(code, Some(0), "{line}");
    let (code, line) = dupcheck(dir.path(), &["publish", ".", "--repository", "full"], &full);
    assert_eq!(code, Some(0), "{line}");
    // By its address the name does not match: verify-ca still connects,
    // verify-full does not.
    let by_address =
        |mode: &str| connection(&pg, "127.0.0.1", &db, &format!("sslmode={mode} {root}"));
    let (code, line) = dupcheck(dir.path(), &["store", "gc"], &by_address("verify-ca"));
    assert_eq!(code, Some(0), "{line}");
    let (code, line) = dupcheck(dir.path(), &["store", "gc"], &by_address("verify-full"));
    assert_eq!(code, Some(1), "{line}");
    assert_eq!(
        line,
        format!("dupcheck: error: cannot reach the store at postgres@127.0.0.1:{}/{db}: the server's certificate is not trusted (invalid peer certificate: certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"localhost\")): check sslrootcert and the host's name, or use a weaker sslmode", pg.port)
    );
    // In a URL's query, percent-encoded.
    let url = format!(
        "postgres://postgres:{}@localhost:{}/{db}?sslmode=verify-full&sslrootcert={}",
        percent(PgServer::PASSWORD),
        pg.port,
        percent(&ca.display().to_string())
    );
    let (code, line) = dupcheck(dir.path(), &["store", "gc"], &url);
    assert_eq!(code, Some(0), "{line}");
}

#[test]
fn a_certificate_of_another_ca_is_refused_in_one_line() {
    let pki_used = pki("dupcheck test CA");
    let pg = tls_server(&pki_used);
    let db = pg.database();
    let files = tempfile::tempdir().expect("temp dir");
    let wrong = files.path().join("other-ca.pem");
    std::fs::write(&wrong, pki("another CA").ca).expect("write the other CA");
    let dir = repository();
    let mut cases = Vec::new();
    for mode in ["verify-full", "verify-ca", "require"] {
        let store = connection(
            &pg,
            "localhost",
            &db,
            &format!("sslmode={mode} sslrootcert={}", wrong.display()),
        );
        cases.push((store, format!("dupcheck: error: cannot reach the store at postgres@localhost:{}/{db}: the server's certificate is not trusted (invalid peer certificate: UnknownIssuer): check sslrootcert and the host's name, or use a weaker sslmode", pg.port)));
    }
    let missing = files.path().join("missing.pem");
    cases.push((
        connection(
            &pg,
            "localhost",
            &db,
            &format!("sslmode=verify-full sslrootcert={}", missing.display()),
        ),
        format!(
            "dupcheck: error: cannot reach the store at postgres@localhost:{}/{db}: cannot read sslrootcert {}: No such file or directory (os error 2)",
            pg.port,
            missing.display()
        ),
    ));
    for (store, want) in cases {
        let (code, line) = dupcheck(dir.path(), &["publish", ".", "--repository", "x"], &store);
        assert_eq!((code, line.as_str()), (Some(1), want.as_str()), "{store}");
    }
    // A mode libpq has and this client has not, and a misspelt one.
    for mode in ["allow", "verify_full"] {
        let store = connection(&pg, "localhost", &db, &format!("sslmode={mode}"));
        let (code, line) = dupcheck(dir.path(), &["publish"], &store);
        assert_eq!(code, Some(2), "{line}");
        assert_eq!(line, format!("dupcheck: error: invalid value for --store: not a PostgreSQL URL or connection string: sslmode \"{mode}\" is not one of disable, prefer, require, verify-ca, verify-full"));
    }
}
