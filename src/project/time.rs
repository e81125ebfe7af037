//! Timestamps as the API shows them: ISO 8601, UTC, milliseconds
//! (`2026-11-22T10:30:00.000Z`), the format of JavaScript's `toISOString()`.

use std::time::SystemTime;

/// Formats `t` like JavaScript's `Date.prototype.toISOString()`.
pub(crate) fn iso8601(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn formats_with_milliseconds_in_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_343_400_007);
        assert_eq!(iso8601(t), "2026-11-22T10:30:00.007Z");
    }
}
