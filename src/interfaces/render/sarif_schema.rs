//! SARIF logs checked against the OASIS SARIF 2.1.0 JSON schema kept in
//! `testdata/sarif/`, formats (`uri`, `uri-reference`) included. Shared by
//! the unit tests of the SARIF renderer and the integration tests (which
//! include this file by `#[path]`); the library itself never builds it.
#![allow(dead_code)] // Each includer uses a part.

use serde_json::{json, Value};

/// The schema's complaints about `log`, each as `pointer: error`; empty
/// when it validates.
///
/// The schema's pattern for the `language` of a run and of a tool
/// component has a stray `]` that `jsonschema` refuses as a regex when it
/// checks the schema; the two are mended here, in memory (the logs have no
/// `language`).
pub(crate) fn schema_errors(log: &Value) -> Vec<String> {
    let mut schema: Value = serde_json::from_str(include_str!(
        "../../../testdata/sarif/sarif-schema-2.1.0.json"
    ))
    .expect("the schema is JSON");
    for definition in ["run", "toolComponent"] {
        let language = &mut schema["definitions"][definition]["properties"]["language"]["pattern"];
        assert_eq!(language, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$");
        *language = json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
    }
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the mended schema compiles");
    validator
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Asserts that `log` validates, printing the errors and the log if not.
pub(crate) fn assert_valid(log: &Value) {
    let errors = schema_errors(log);
    assert!(
        errors.is_empty(),
        "{errors:#?}\n{}",
        serde_json::to_string_pretty(log).expect("a Value serializes")
    );
}
