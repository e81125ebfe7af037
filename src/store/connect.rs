//! Where the store is and how to log in: a `--store` value parsed into a
//! [`Target`] (a `postgres://` or `postgresql://` URL, or a libpq
//! `key=value` connection string; several hosts allowed, as tokio-postgres
//! parses both), its password taken from the value, else `PGPASSWORD`,
//! else the passfile (`PGPASSFILE`, default `~/.pgpass`, in libpq's format
//! and ignored, as libpq ignores it, when others may read it), and a
//! connection made ([`Target::connect`]), over TLS as its `sslmode` and
//! `sslrootcert` say ([`super::tls`]).
//!
//! Invariant: a [`Target`] shows itself ([`Target::describe`]) as user,
//! hosts, ports and database, never with its password; so do the errors
//! of [`Target::connect`].

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode as TokioSslMode, TargetSessionAttrs};
use tokio_postgres::{Client, Config};

use super::error::{cause_text, StoreError};
pub use crate::project::config::is_postgres;
use crate::project::config::{split_tls, SslMode, TlsOptions};

/// The default port of PostgreSQL.
const DEFAULT_PORT: u16 = 5432;
/// How long a connection may take when the value does not say
/// (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A parsed `--store`, its password resolved.
#[derive(Clone)]
pub struct Target {
    config: Config,
    /// `sslmode` and `sslrootcert`, which tokio-postgres does not parse.
    tls: TlsOptions,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Target {
    /// Parses `value`; the password comes from it, else from `PGPASSWORD`,
    /// else from the passfile.
    pub fn parse(value: &str) -> Result<Target, StoreError> {
        Target::parse_with(value, |name| std::env::var_os(name))
    }

    /// [`Target::parse`] with the environment `env` (for tests).
    pub(crate) fn parse_with(
        value: &str,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Target, StoreError> {
        let (rest, tls) = split_tls(value).map_err(StoreError::Url)?;
        let mut config = Config::from_str(&rest).map_err(|e| {
            StoreError::Url(
                std::error::Error::source(&e)
                    .map_or_else(|| e.to_string(), |cause| cause.to_string()),
            )
        })?;
        if config.get_hosts().is_empty() {
            return Err(StoreError::Url("no host".into()));
        }
        if config.get_user().is_none() {
            let user = env("PGUSER")
                .or_else(|| env("USER"))
                .and_then(|u| u.into_string().ok())
                .ok_or_else(|| StoreError::Url("no user".into()))?;
            config.user(user);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("dupcheck");
        // tokio-postgres does TLS or not; what is checked is the connector's.
        config.ssl_mode(match tls.mode {
            SslMode::Disable => TokioSslMode::Disable,
            SslMode::Prefer => TokioSslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => TokioSslMode::Require,
        });
        let mut target = Target { config, tls };
        if target.config.get_password().is_none() {
            let password = match env("PGPASSWORD") {
                Some(p) => Some(
                    p.into_string()
                        .map_err(|_| StoreError::Url("PGPASSWORD is not UTF-8".into()))?,
                ),
                None => {
                    let passfile = env("PGPASSFILE")
                        .map(PathBuf::from)
                        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".pgpass")));
                    passfile.and_then(|path| target.passfile_password(&path))
                }
            };
            if let Some(password) = password {
                target.config.password(password);
            }
        }
        Ok(target)
    }

    /// The password of this target's first host, port, database and user
    /// in the passfile at `path`, if it is there and only its owner may
    /// read it.
    fn passfile_password(&self, path: &Path) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "password file {} ignored: others may read it (chmod 0600)",
                path.display()
            );
            return None;
        }
        let text = std::fs::read_to_string(path).ok()?;
        let host = match self.config.get_hosts().first()? {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        };
        let port = self.port(0).to_string();
        let user = self.config.get_user()?;
        let database = self.config.get_dbname().unwrap_or(user);
        passfile_lookup(&text, [&host, &port, database, user])
    }

    /// The port of host `i`.
    fn port(&self, i: usize) -> u16 {
        let ports = self.config.get_ports();
        match ports.len() {
            0 => DEFAULT_PORT,
            1 => ports[0],
            _ => ports.get(i).copied().unwrap_or(DEFAULT_PORT),
        }
    }

    /// `user@host:port,host:port/database`, without the password.
    pub fn describe(&self) -> String {
        let hosts: Vec<String> = self
            .config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| match host {
                Host::Tcp(name) => format!("{name}:{}", self.port(i)),
                Host::Unix(path) => format!("{}:{}", path.display(), self.port(i)),
            })
            .collect();
        let user = self.config.get_user().unwrap_or_default();
        format!(
            "{user}@{}/{}",
            hosts.join(","),
            self.config.get_dbname().unwrap_or(user)
        )
    }

    /// A connection to a server of the target; with `writable`, only to a
    /// primary (a publish), else to any that answers (a standby is fine).
    /// The connection's own task runs on the current Tokio runtime.
    pub async fn connect(&self, writable: bool) -> Result<Client, StoreError> {
        let mut config = self.config.clone();
        if writable {
            config.target_session_attrs(TargetSessionAttrs::ReadWrite);
        }
        let connector = super::tls::connector(self.tls.mode, self.tls.root_cert.as_deref())
            .map_err(|reason| StoreError::Unreachable {
                target: self.describe(),
                reason,
            })?;
        let failed = |e| match self.failed(e) {
            StoreError::Unreachable { target, reason } if writable => StoreError::Unreachable {
                target,
                reason: self.no_primary(reason),
            },
            other => other,
        };
        let (client, connection) = config.connect(connector).await.map_err(failed)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("store connection ended: {}", cause_text(&e));
            }
        });
        Ok(client)
    }

    /// Why no primary was found, from the `reason` the last host tried
    /// gave (tokio-postgres tries every host, and says why the last failed).
    fn no_primary(&self, reason: String) -> String {
        let standby = reason.ends_with("database does not allow writes");
        match (self.config.get_hosts().len() > 1, standby) {
            (true, true) => "no primary: the last host is a standby, which only reads (promote it, or start the primary)".into(),
            (true, false) => format!("no primary answered (the last host: {reason})"),
            (false, true) => "it is a standby, which only reads (give the primary, or promote it)".into(),
            (false, false) => reason,
        }
    }

    /// The error of a connection that failed, in one line.
    fn failed(&self, e: tokio_postgres::Error) -> StoreError {
        let target = self.describe();
        if let Some(db) = e.as_db_error() {
            let reason = db.message().to_owned();
            return if db.code().code().starts_with("28") {
                StoreError::Authentication { target, reason }
            } else {
                StoreError::Unreachable { target, reason }
            };
        }
        if let Some(certificate) = untrusted_certificate(&e) {
            return StoreError::Unreachable {
                target,
                reason: format!(
                    "the server's certificate is not trusted ({certificate}): check sslrootcert and the host's name, or use a weaker sslmode"
                ),
            };
        }
        let reason = cause_text(&e);
        if reason.contains("password missing") {
            StoreError::Authentication {
                target,
                reason: "no password: give it in the URL, PGPASSWORD or PGPASSFILE".into(),
            }
        } else if reason.starts_with("authentication error") {
            StoreError::Authentication { target, reason }
        } else {
            StoreError::Unreachable { target, reason }
        }
    }
}

/// rustls's words for a certificate it did not trust, if that is why
/// `e`'s handshake failed (the I/O error of the TLS stream holds it).
fn untrusted_certificate(e: &tokio_postgres::Error) -> Option<String> {
    let io = std::error::Error::source(e)?.downcast_ref::<std::io::Error>()?;
    match io.get_ref()?.downcast_ref::<rustls::Error>()? {
        rustls::Error::InvalidCertificate(_) => Some(io.to_string()),
        _ => None,
    }
}

/// The password of the first line of a passfile (`host:port:db:user:pw`,
/// `*` matching anything, `\:` and `\\` escaped) that matches `wanted`.
fn passfile_lookup(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#') && !line.trim().is_empty())
        .find_map(|line| {
            let fields = split_passfile_line(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = wanted
                .iter()
                .zip(&fields)
                .all(|(want, field)| field == "*" || field == want);
            matches.then(|| fields[4].clone())
        })
}

/// A passfile line's fields, split at unescaped colons (the password,
/// the last, keeps what follows).
fn split_passfile_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn urls_and_connection_strings_with_several_hosts() {
        for value in [
            "postgres://me:pw@db1:5433,db2/main",
            "postgresql://me:pw@db1:5433,db2/main",
            "host=db1,db2 port=5433,5432 user=me password=pw dbname=main",
        ] {
            let target = Target::parse_with(value, env(&[])).unwrap();
            assert_eq!(target.describe(), "me@db1:5433,db2:5432/main", "{value}");
            assert_eq!(target.config.get_password(), Some(&b"pw"[..]));
            assert!(!format!("{target:?}").contains("pw"));
        }
        assert!(is_postgres("postgres://x") && is_postgres("host=a"));
        assert!(!is_postgres("leveldb") && !is_postgres("redis"));
    }

    #[test]
    fn malformed_values_are_one_line_without_the_password() {
        let err = Target::parse_with("postgres://me:secret@db:notaport/x", env(&[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--store is not a PostgreSQL URL or connection string: invalid value for option `port`"
        );
        let err = Target::parse_with("host=db password='secret", env(&[])).unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
        let err = Target::parse_with("postgres://", env(&[("USER", "me")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--store is not a PostgreSQL URL or connection string: no host"
        );
    }

    #[test]
    fn password_from_the_value_then_pgpassword_then_the_passfile() {
        let dir = tempfile::tempdir().unwrap();
        let passfile = dir.path().join("pgpass");
        std::fs::write(
            &passfile,
            "# comment\nother:*:*:*:no\ndb:5432:main:me:from\\:file\n*:*:*:*:fallback\n",
        )
        .unwrap();
        std::fs::set_permissions(
            &passfile,
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        let pf = passfile.to_str().unwrap();
        let password = |value: &str, vars: &[(&str, &str)]| {
            let target = Target::parse_with(value, env(vars)).unwrap();
            target
                .config
                .get_password()
                .map(|p| String::from_utf8(p.to_vec()).unwrap())
        };
        assert_eq!(
            password("postgres://me:url@db/main", &[("PGPASSWORD", "env")]).as_deref(),
            Some("url")
        );
        assert_eq!(
            password(
                "postgres://me@db/main",
                &[("PGPASSWORD", "env"), ("PGPASSFILE", pf)]
            )
            .as_deref(),
            Some("env")
        );
        assert_eq!(
            password("postgres://me@db/main", &[("PGPASSFILE", pf)]).as_deref(),
            Some("from:file")
        );
        assert_eq!(
            password("postgres://you@db:7/x", &[("PGPASSFILE", pf)]).as_deref(),
            Some("fallback")
        );
        std::fs::set_permissions(
            &passfile,
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        assert_eq!(
            password("postgres://me@db/main", &[("PGPASSFILE", pf)]),
            None
        );
    }
}
