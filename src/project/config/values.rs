//! Values as flags and the config file spell them: sizes (`100kb`),
//! percentages, similarities, host names of an `Origin`, lists and
//! `--ignore-pattern`'s regular expressions split at their commas.

use std::net::{IpAddr, Ipv4Addr};

/// Whether `ratio` is a similarity: above 0, at most 1.
pub(crate) fn similarity_ok(ratio: f64) -> bool {
    ratio > 0.0 && ratio <= 1.0
}

/// `--similarity`: a number above 0, at most 1.
pub(crate) fn parse_similarity(arg: &str) -> Result<f64, String> {
    arg.parse::<f64>()
        .ok()
        .filter(|r| similarity_ok(*r))
        .ok_or_else(|| format!("{arg:?} is not a number above 0, at most 1"))
}

/// Splits `--ignore-pattern`'s value at its commas, as jscpd does, but for
/// the commas a regular expression holds: escaped (`\,`) or inside
/// parentheses, brackets or braces (`a{1,3}`, `[,;]`). Empty items are
/// dropped; nothing is trimmed (a space may be part of a pattern).
pub(crate) fn split_patterns(s: &str) -> Vec<String> {
    let mut patterns = Vec::new();
    let (mut depth, mut in_class, mut escaped) = (0usize, 0usize, false);
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' => in_class += 1,
            ']' if in_class > 0 => in_class -= 1,
            _ if in_class > 0 => {}
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                patterns.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    patterns.push(&s[start..]);
    patterns
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// Splits a comma-separated list, dropping empty items.
pub(crate) fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// An address to bind: an IP literal (brackets allowed) or `localhost`.
pub(crate) fn parse_host(s: &str) -> Option<IpAddr> {
    if s.eq_ignore_ascii_case("localhost") {
        return Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    s.trim_start_matches('[').trim_end_matches(']').parse().ok()
}

/// The host name of an Origin header value, a URL, `host:port` or a bare host,
/// lower case and without brackets or port; `None` if there is none.
pub(crate) fn origin_host(s: &str) -> Option<String> {
    let s = s.trim();
    let authority = s.split_once("://").map_or(s, |(_, rest)| rest);
    let authority = authority.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Parses a size: a plain number of bytes, or a number with `kb`, `mb` or
/// `gb` (powers of 1024), case-insensitive, e.g. `100kb`, `1.5mb`.
pub(crate) fn parse_size(s: &str) -> Option<u64> {
    let lower = s.trim().to_ascii_lowercase();
    let (number, unit) = [
        ("kb", 1u64 << 10),
        ("mb", 1 << 20),
        ("gb", 1 << 30),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suffix, unit)| lower.strip_suffix(suffix).map(|n| (n.trim(), *unit)))
    .unwrap_or((lower.as_str(), 1));
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    Some((value * unit as f64).round() as u64)
}

pub(crate) fn parse_size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).ok_or_else(|| {
        format!("{s:?} is not a size; use bytes or a number with kb or mb, e.g. 100kb, 1mb")
    })
}

/// `report --threshold`: a percentage from 0 to 100, `%` optional.
pub(crate) fn parse_percent(s: &str) -> Result<f64, String> {
    s.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| format!("{s:?} is not a percentage from 0 to 100"))
}

/// A PostgreSQL `--store` value. It may hold a password: its `Debug`
/// does not show it (a `Config` printed for debugging stays safe).
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl(pub String);

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreUrl(..)")
    }
}

/// Whether a `--store` value names a PostgreSQL store: a `postgres://` or
/// `postgresql://` URL, or a libpq connection string (`key=value` pairs).
/// Others (jscpd's `leveldb`, `redis`) are not.
pub fn is_postgres(value: &str) -> bool {
    let lower = value.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://") || value.contains('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        for (text, bytes) in [
            ("100kb", 102_400),
            ("1mb", 1_048_576),
            ("1MB", 1_048_576),
            ("2048", 2048),
            ("1.5kb", 1536),
            ("10b", 10),
        ] {
            assert_eq!(parse_size(text), Some(bytes), "{text}");
        }
        for bad in ["", "mb", "ten", "-1kb", "1tb"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn origin_hosts() {
        for (text, host) in [
            ("http://localhost:3000", "localhost"),
            ("https://Example.COM", "example.com"),
            ("http://[::1]:8080/x", "::1"),
            ("example.com:8080", "example.com"),
            ("tools.internal", "tools.internal"),
        ] {
            assert_eq!(origin_host(text).as_deref(), Some(host), "{text}");
        }
        assert_eq!(origin_host("http://"), None);
    }

    #[test]
    fn patterns_split_at_commas_but_those_a_pattern_holds() {
        for (value, patterns) in [
            ("a,b", &["a", "b"][..]),
            ("a{1,3},b", &["a{1,3}", "b"]),
            ("[,;]x,(a|b,c)", &["[,;]x", "(a|b,c)"]),
            (r"a\,b,c", &[r"a\,b", "c"]),
            (r"[\],]", &[r"[\],]"]),
            (",a,,b,", &["a", "b"]),
            (" a , b", &[" a ", " b"]),
        ] {
            assert_eq!(split_patterns(value), patterns, "{value}");
        }
    }
}
