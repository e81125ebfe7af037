//! The TLS options of a `--store` value, split off before tokio-postgres
//! parses the rest ([`split_tls`]): it knows `sslmode` only up to
//! `require` and has no `sslrootcert`, while libpq's `verify-ca`,
//! `verify-full` and `sslrootcert` are what a store behind TLS needs. In a
//! URL they are query parameters (`?sslmode=verify-full&sslrootcert=...`,
//! percent-encoded); in a connection string, `key=value` pairs (quoted or
//! escaped as libpq quotes them).
//!
//! Invariant: the value given back is the value less those two options,
//! every other option kept byte for byte as it was written, so that the
//! password and the hosts are parsed by tokio-postgres alone.

use std::borrow::Cow;
use std::ops::Range;

/// libpq's `sslmode`, without `allow` (which tokio-postgres cannot do:
/// plain first, then TLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// TLS when the server offers it, else plain; libpq's default.
    #[default]
    Prefer,
    /// TLS or nothing; the certificate is checked only against a given
    /// `sslrootcert`, as libpq checks it.
    Require,
    /// TLS, the certificate's chain checked against the roots, not its
    /// host name.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

impl SslMode {
    /// A value of `sslmode`.
    pub fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => {
                return Err(format!(
                "sslmode {text:?} is not one of disable, prefer, require, verify-ca, verify-full"
            ))
            }
        })
    }
}

/// The TLS options a `--store` value gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// `sslmode`, [`SslMode::Prefer`] when not given.
    pub mode: SslMode,
    /// `sslrootcert`: a PEM file of root certificates, or `system`.
    pub root_cert: Option<String>,
}

/// `value` without its `sslmode` and `sslrootcert`, and those options; an
/// error (without the value, which may hold a password) when one of them
/// is malformed. A value whose other options do not parse is given back
/// whole, for tokio-postgres to say what is wrong with it.
pub fn split_tls(value: &str) -> Result<(String, TlsOptions), String> {
    let params = match url_query(value) {
        Some(query) => url_params(value, query),
        None => match connection_params(value) {
            Some(params) => params,
            None => return Ok((value.to_owned(), TlsOptions::default())),
        },
    };
    let mut options = TlsOptions::default();
    let mut rest = String::with_capacity(value.len());
    let mut at = 0;
    let mut dropped_query = false;
    for param in params {
        match param.key.as_ref() {
            "sslmode" => options.mode = SslMode::parse(&param.value?)?,
            "sslrootcert" => options.root_cert = Some(param.value?),
            _ => continue,
        }
        rest.push_str(&value[at..param.span.start]);
        at = param.span.end;
        dropped_query |= param.in_url;
    }
    rest.push_str(&value[at..]);
    if dropped_query {
        // Dropping parameters may leave `?&a=b`, `?a=b&` or a bare `?`.
        rest = tidy_query(&rest);
    }
    Ok((rest, options))
}

/// One `key=value` of a value, where it is written.
struct Param<'a> {
    key: Cow<'a, str>,
    /// The value decoded, or why it does not decode.
    value: Result<String, String>,
    /// The bytes it spans (in a URL, its `&` separator included).
    span: Range<usize>,
    in_url: bool,
}

/// The byte where a URL's query starts (after its `?`), if `value` is a
/// URL with one. The query is looked for after the user information (as
/// tokio-postgres reads it, up to the first `@`), whose password may hold a
/// `?`.
fn url_query(value: &str) -> Option<usize> {
    let body = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|prefix| value.strip_prefix(prefix).map(|_| prefix.len()))?;
    let after_user = value[body..].find('@').map_or(body, |at| body + at + 1);
    value[after_user..]
        .find('?')
        .map(|question| after_user + question + 1)
}

/// The `&`-separated parameters of a URL's query starting at `query`.
fn url_params(value: &str, query: usize) -> Vec<Param<'_>> {
    let decode = |text: &str| {
        percent_encoding::percent_decode_str(text)
            .decode_utf8()
            .map(Cow::into_owned)
            .map_err(|_| "a TLS option of --store is not UTF-8 once decoded".to_owned())
    };
    let mut params = Vec::new();
    let mut start = query;
    for pair in value[query..].split('&') {
        let end = start + pair.len();
        let (key, text) = pair.split_once('=').unwrap_or((pair, ""));
        params.push(Param {
            key: decode(key).map_or(Cow::Borrowed(""), Cow::Owned),
            value: decode(text),
            // The separator that follows goes with it.
            span: start..(end + 1).min(value.len()),
            in_url: true,
        });
        start = end + 1;
    }
    params
}

/// A URL's query cleaned of the empty parameters dropping left.
fn tidy_query(url: &str) -> String {
    match url_query(url) {
        Some(query) => {
            let kept: Vec<&str> = url[query..].split('&').filter(|p| !p.is_empty()).collect();
            let head = &url[..query - 1];
            if kept.is_empty() {
                head.to_owned()
            } else {
                format!("{head}?{}", kept.join("&"))
            }
        }
        None => url.to_owned(),
    }
}

/// The parameters of a libpq connection string (`key = value`, a value
/// plain with `\` escapes or in single quotes), as tokio-postgres reads
/// them; `None` when it does not parse.
fn connection_params(value: &str) -> Option<Vec<Param<'_>>> {
    let skip_ws = |at: usize| {
        value[at..]
            .find(|c: char| !c.is_whitespace())
            .map_or(value.len(), |i| at + i)
    };
    let mut params = Vec::new();
    let mut at = skip_ws(0);
    while at < value.len() {
        let start = at;
        let key_end = value[at..]
            .find(|c: char| c.is_whitespace() || c == '=')
            .map_or(value.len(), |i| at + i);
        let key = &value[at..key_end];
        at = skip_ws(key_end);
        if key.is_empty() || !value[at..].starts_with('=') {
            return None;
        }
        at = skip_ws(at + 1);
        let quoted = value[at..].starts_with('\'');
        if quoted {
            at += 1;
        }
        let mut text = String::new();
        let mut chars = value[at..].char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => text.extend(chars.next().map(|(_, escaped)| escaped)),
                '\'' if quoted => {
                    end = Some(at + i + 1);
                    break;
                }
                c if c.is_whitespace() && !quoted => {
                    end = Some(at + i);
                    break;
                }
                c => text.push(c),
            }
        }
        let end = match end {
            Some(end) => end,
            None if !quoted => value.len(),
            None => return None,
        };
        if text.is_empty() && !quoted {
            return None;
        }
        params.push(Param {
            key: Cow::Borrowed(key),
            value: Ok(text),
            // The blanks that follow go with it.
            span: start..skip_ws(end),
            in_url: false,
        });
        at = skip_ws(end);
    }
    Some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: &str, rest: &str, mode: SslMode, root_cert: Option<&str>) {
        let (got, options) = split_tls(value).unwrap();
        assert_eq!(got, rest, "{value}");
        assert_eq!(
            options,
            TlsOptions {
                mode,
                root_cert: root_cert.map(str::to_owned)
            },
            "{value}"
        );
    }

    #[test]
    fn tls_options_leave_urls_and_connection_strings_as_written() {
        check(
            "postgres://me:p%3Fw@db1,db2/main",
            "postgres://me:p%3Fw@db1,db2/main",
            SslMode::Prefer,
            None,
        );
        check(
            "postgres://me:pw@db/main?sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20x.pem",
            "postgres://me:pw@db/main",
            SslMode::VerifyFull,
            Some("/etc/ca x.pem"),
        );
        check(
            "postgresql://me@db/main?connect_timeout=3&sslmode=require&application_name=x",
            "postgresql://me@db/main?connect_timeout=3&application_name=x",
            SslMode::Require,
            None,
        );
        // A `?` in the password is not the query's.
        check(
            "postgres://me:a?b@db/main?sslmode=disable",
            "postgres://me:a?b@db/main",
            SslMode::Disable,
            None,
        );
        check(
            "host=db1,db2 password='a b\\'c' sslmode=verify-ca  sslrootcert = '/x/my ca.pem' dbname=main",
            "host=db1,db2 password='a b\\'c' dbname=main",
            SslMode::VerifyCa,
            Some("/x/my ca.pem"),
        );
        check(
            "sslrootcert=system host=db",
            "host=db",
            SslMode::Prefer,
            Some("system"),
        );
        // Malformed: given back for tokio-postgres to refuse.
        check(
            "host=db password='open",
            "host=db password='open",
            SslMode::Prefer,
            None,
        );
    }

    #[test]
    fn unknown_modes_are_refused_without_the_value() {
        for value in [
            "postgres://me:secret@db/x?sslmode=allow",
            "host=db password=secret sslmode=verify",
        ] {
            let err = split_tls(value).unwrap_err();
            assert!(err.starts_with("sslmode \""), "{err}");
            assert!(!err.contains("secret"), "{err}");
        }
    }
}
