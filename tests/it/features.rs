//! A slim build, of a few formats' grammars (`cargo test
//! --no-default-features --features lang-c,lang-go,...`): a format it left
//! out is unknown to it everywhere, said to be not compiled in where a
//! request or option names it, and not scanned. The test runs in a build
//! without Rust's grammar and with JavaScript's; a full build has nothing
//! here to run (the registry's unit tests read `grammars.toml` as a slim
//! build does, in every build).

#[cfg(all(not(feature = "lang-rust"), feature = "lang-javascript"))]
#[test]
fn a_slim_build_reads_and_lists_only_its_formats() {
    use crate::common::{self, error, write, Server, BIN};
    use serde_json::json;

    let temp = tempfile::tempdir().expect("temp dir");
    let js = "function total(items) {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.count;\n  }\n  return sum;\n}\n";
    write(temp.path(), "src/a.js", js);
    write(
        temp.path(),
        "src/lib.rs",
        "fn main() {\n    let a = 1;\n}\n",
    );
    let dir = temp.path().to_str().expect("utf-8").to_owned();
    let server = Server::start_in(temp, &["--no-watch", "--no-cache"]);
    let (_, root) = server.get("/");
    let formats: Vec<String> = serde_json::from_value(root["formats"].clone()).expect("names");
    assert!(formats.iter().any(|f| f == "javascript"), "{formats:?}");
    assert!(!formats.iter().any(|f| f == "rust"), "{formats:?}");
    // A part of grammars.toml, in its order.
    let all = common::all_formats();
    let in_order: Vec<&String> = all.iter().filter(|f| formats.contains(f)).collect();
    assert_eq!(in_order, formats.iter().collect::<Vec<_>>());
    // The Rust file is not scanned.
    let (_, health) = server.get("/api/health");
    assert_eq!(health["files"], 1);

    let known = formats.join(", ");
    let lacking = "format \"rust\" is not compiled into this build (Cargo feature lang-rust)";
    let (status, body) = server.check(json!({"code": "fn a() {}", "format": "rs"}));
    assert_eq!(status, 400);
    assert_json!(
        body,
        error(
            "UnsupportedFormat",
            &format!("Unsupported format \"rs\": {lacking}; supported formats: {known}"),
            400
        )
    );
    let (status, body) = server.check(json!({"code": "fn a() {}", "path": "src/lib.rs"}));
    assert_eq!(status, 400);
    assert_json!(
        body,
        error(
            "UnsupportedFormat",
            &format!("Cannot tell the format of path \"src/lib.rs\": {lacking}; send \"format\" with one of: {known}"),
            400
        )
    );
    let (status, body) = server.get("/api/clones?format=rust");
    assert_eq!(status, 400);
    assert_json!(
        body,
        error(
            "UnsupportedFormat",
            &format!("Unsupported format \"rust\": {lacking}; supported formats: {known}"),
            400
        )
    );

    // The command line: exit 2 and one line naming the feature.
    let out = std::process::Command::new(BIN)
        .args(["report", &dir, "--format", "rust"])
        .output()
        .expect("run dupcheck");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("dupcheck: error: invalid value for --format: {lacking}; formats of this build: {known}\n")
    );
}
