//! Settings: what an editor may set, in `initializationOptions` or in
//! `workspace/didChangeConfiguration`.
//!
//! In: a JSON object (`{"mode": "mild", "minTokens": 40, "minLines": 4,
//! "severity": "warning"}`; under `settings.dupcheck` or `settings` for a
//! configuration change). Out: validated [`Settings`], or an error naming
//! the key and the values it takes.
//!
//! Invariants: a bad value refuses the whole object (nothing changes);
//! unknown keys are ignored, as editors send settings of other servers
//! alongside; an absent (or null) key keeps the value it had, so an empty
//! configuration change (Neovim sends one after `initialized`) changes
//! nothing; keys never set keep the flags' and `.dupcheck.json`'s values.

use lsp_types::DiagnosticSeverity;
use serde_json::Value;

use crate::engine::tokens::Mode;

/// The settings an editor gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `mode`: strict, mild or weak.
    pub mode: Option<Mode>,
    /// `minTokens`.
    pub min_tokens: Option<u32>,
    /// `minLines`.
    pub min_lines: Option<u32>,
    /// `severity` of the diagnostics: error, warning, information or hint.
    pub severity: DiagnosticSeverity,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            mode: None,
            min_tokens: None,
            min_lines: None,
            severity: DiagnosticSeverity::INFORMATION,
        }
    }
}

impl Settings {
    /// The settings of `value` over `self` (`null` or absent: `self`).
    pub(crate) fn parse(&self, value: Option<&Value>) -> Result<Settings, String> {
        let mut settings = self.clone();
        let map = match value {
            None | Some(Value::Null) => return Ok(settings),
            Some(Value::Object(map)) => map,
            Some(_) => return Err("the settings must be a JSON object".into()),
        };
        let positive = |key: &str| -> Result<Option<u32>, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .filter(|&n| n >= 1)
                    .and_then(|n| u32::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| format!("setting \"{key}\" must be an integer >= 1")),
            }
        };
        settings.min_tokens = positive("minTokens")?.or(self.min_tokens);
        settings.min_lines = positive("minLines")?.or(self.min_lines);
        if let Some(v) = map.get("mode").filter(|v| !v.is_null()) {
            settings.mode = Some(
                v.as_str()
                    .and_then(Mode::parse)
                    .ok_or_else(|| format!("setting \"mode\" must be one of: {}", Mode::NAMES))?,
            );
        }
        if let Some(v) = map.get("severity").filter(|v| !v.is_null()) {
            settings.severity =
                match v.as_str() {
                    Some("error") => DiagnosticSeverity::ERROR,
                    Some("warning") => DiagnosticSeverity::WARNING,
                    Some("information") => DiagnosticSeverity::INFORMATION,
                    Some("hint") => DiagnosticSeverity::HINT,
                    _ => return Err(
                        "setting \"severity\" must be one of: error, warning, information, hint"
                            .into(),
                    ),
                };
        }
        Ok(settings)
    }

    /// The settings of a `workspace/didChangeConfiguration`'s `settings`
    /// over `self`: those under `dupcheck` when there is such a key, else
    /// the object.
    pub(crate) fn changed_by(&self, settings: &Value) -> Result<Settings, String> {
        self.parse(Some(settings.get("dupcheck").unwrap_or(settings)))
    }

    /// Whether the index must be rebuilt to apply `other` after `self`.
    pub(crate) fn changes_the_index(&self, other: &Settings) -> bool {
        (self.mode, self.min_tokens, self.min_lines)
            != (other.mode, other.min_tokens, other.min_lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_are_validated_whole() {
        let none = Settings::default();
        let parsed = none
            .parse(Some(&json!({
                "mode": "mild", "minTokens": 30, "minLines": 3, "severity": "hint", "other": 1
            })))
            .unwrap();
        assert_eq!(
            parsed,
            Settings {
                mode: Some(Mode::Mild),
                min_tokens: Some(30),
                min_lines: Some(3),
                severity: DiagnosticSeverity::HINT,
            }
        );
        assert_eq!(none.parse(None).unwrap(), none);
        // Absent keys keep their values.
        assert_eq!(parsed.parse(Some(&json!({}))).unwrap(), parsed);
        assert_eq!(
            parsed
                .changed_by(&json!({"dupcheck": {"minLines": 2}}))
                .unwrap(),
            Settings {
                min_lines: Some(2),
                ..parsed.clone()
            }
        );
        assert_eq!(
            none.parse(Some(&json!({"minTokens": 0}))).unwrap_err(),
            "setting \"minTokens\" must be an integer >= 1"
        );
        assert_eq!(
            none.parse(Some(&json!({"mode": "loose"}))).unwrap_err(),
            format!("setting \"mode\" must be one of: {}", Mode::NAMES)
        );
        assert_eq!(
            none.parse(Some(&json!({"severity": "info"}))).unwrap_err(),
            "setting \"severity\" must be one of: error, warning, information, hint"
        );
    }
}
