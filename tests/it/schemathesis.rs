//! The OpenAPI document and the server agree, as an API fuzzer reads them:
//! schemathesis (pinned in tests/requirements.txt) runs as a user would,
//! `schemathesis run URL/api/openapi.json --checks all --max-examples 50`
//! with `/mcp` excluded, against the real binary on a fixture, and must
//! find nothing. Its settings (tests/schemathesis.toml) allow one thing the
//! document cannot say: that a diff which does not parse is answered 400.
//! A fixed seed makes the run the same every time.

use std::process::Command;

use crate::common::{venv_bin, Server};

#[test]
fn schemathesis_finds_no_disagreement_between_the_document_and_the_server() {
    let server = Server::start("project", &[]);
    let work = tempfile::tempdir().expect("temp dir");
    let out = Command::new(venv_bin("schemathesis"))
        .arg("--config-file")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/schemathesis.toml"
        ))
        .arg("run")
        .arg(format!("http://127.0.0.1:{}/api/openapi.json", server.port))
        .args(["--checks", "all", "--max-examples", "50"])
        .args(["--exclude-path", "/mcp", "--seed", "1", "--no-color"])
        .current_dir(work.path())
        .output()
        .expect("run schemathesis");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("Tested: 12"), "{report}");
    assert!(!report.contains("FAILURES"), "{report}");
}
