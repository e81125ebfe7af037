//! Every error of the API (docs/api.md, "Errors"): exact status, name, message and headers,
//! and the server keeps answering after each.

use crate::common;

use common::{error, Server};
use serde_json::{json, Value};

#[test]
fn validation_errors_in_field_order() {
    let known = common::known_formats();
    let server = Server::start("project", &[]);
    let unsupported = format!("Unsupported format \"cobol\"; supported formats: {known} (aliases and extensions such as js, ts, py and rs work too)");
    let cases: Vec<(&str, Value)> = vec![
        ("{\"code\": ", error("ValidationError", "Request body is not valid JSON: EOF while parsing a value at line 1 column 9", 400)),
        ("[1, 2]", error("ValidationError", "Request body must be a JSON object", 400)),
        ("{}", error("ValidationError", "Missing required field: code", 400)),
        // null is a missing field, as in jscpd-server.
        (r#"{"code": null, "format": "js"}"#, error("ValidationError", "Missing required field: code", 400)),
        (r#"{"code": "x", "format": null}"#, error("ValidationError", "Missing required field: format", 400)),
        (r#"{"code": 5, "format": 7}"#, error("ValidationError", "Field \"code\" must be a string", 400)),
        (r#"{"code": "  \n ", "format": "js"}"#, error("ValidationError", "Field \"code\" cannot be empty", 400)),
        (r#"{"code": "x"}"#, error("ValidationError", "Missing required field: format", 400)),
        (r#"{"code": "x", "format": ["js"]}"#, error("ValidationError", "Field \"format\" must be a string", 400)),
        (r#"{"code": "x", "format": ""}"#, error("ValidationError", "Field \"format\" cannot be empty", 400)),
        (r#"{"code": "x", "format": "cobol", "recheck": 1}"#, error("UnsupportedFormat", &unsupported, 400)),
        (r#"{"code": "x", "format": "js", "recheck": "yes"}"#, error("ValidationError", "Field \"recheck\" must be a boolean", 400)),
        (r#"{"code": "x", "format": "js", "path": 3}"#, error("ValidationError", "Field \"path\" must be a string", 400)),
        (r#"{"code": "x", "format": "cobol", "path": null, "recheck": null}"#, error("UnsupportedFormat", &unsupported, 400)),
        (r#"{"code": "x", "path": 3}"#, error("ValidationError", "Field \"path\" must be a string", 400)),
        (
            r#"{"code": "x", "path": "notes.txt"}"#,
            error("UnsupportedFormat", &format!("Cannot tell the format of path \"notes.txt\": unknown extension \".txt\"; send \"format\" with one of: {known}"), 400),
        ),
        (
            r#"{"code": "x", "path": "Makefile"}"#,
            error("UnsupportedFormat", &format!("Cannot tell the format of path \"Makefile\": it has no extension; send \"format\" with one of: {known}"), 400),
        ),
    ];
    for (body, want) in cases {
        let (status, got) = server.post("/api/check", body);
        assert_eq!(status, want["statusCode"], "{body}");
        assert_json!(got, want);
    }
}

#[test]
fn routing_errors() {
    let server = Server::start("project", &[]);
    let res = server.request("GET", "/nope", &[], b"");
    assert_eq!(res.status, 404);
    assert_json!(
        res.json(),
        error("NotFound", "Route GET /nope not found", 404)
    );

    let res = server.request("GET", "/api/check", &[], b"");
    assert_eq!((res.status, res.header("allow")), (405, Some("POST")));
    assert_json!(
        res.json(),
        error(
            "MethodNotAllowed",
            "Method GET is not allowed on /api/check; use POST",
            405
        )
    );

    let res = server.request("DELETE", "/api/stats", &[], b"");
    assert_eq!((res.status, res.header("allow")), (405, Some("GET")));
}

#[test]
fn bodies_over_the_limit_are_refused() {
    let server = Server::start("project", &["--max-body", "1kb"]);
    let big = json!({"code": "x".repeat(2000), "format": "js"}).to_string();
    let res = server.request(
        "POST",
        "/api/check",
        &[("Content-Type", "application/json")],
        big.as_bytes(),
    );
    assert_eq!(res.status, 413);
    assert_json!(
        res.json(),
        error(
            "PayloadTooLarge",
            "Request body is larger than the 1kb limit; send a smaller snippet or raise --max-body",
            413
        )
    );
    // Still serving.
    assert_eq!(server.get("/api/health").0, 200);
}

#[test]
fn unsupported_media_type() {
    let server = Server::start("project", &[]);
    let res = server.request(
        "POST",
        "/api/check",
        &[("Content-Type", "text/plain")],
        b"{}",
    );
    assert_eq!(res.status, 415);
    assert_json!(
        res.json(),
        error(
            "UnsupportedMediaType",
            "Content-Type \"text/plain\" is not supported; send application/json or application/x-www-form-urlencoded",
            415
        )
    );
}

#[test]
fn browser_origins_must_be_local_or_allowed() {
    let server = Server::start(
        "project",
        &["--allowed-origin", "https://tools.example.com:8443"],
    );
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1",
        "http://[::1]:3000",
        "https://tools.example.com",
    ] {
        let res = server.request("GET", "/api/stats", &[("Origin", origin)], b"");
        assert_eq!(res.status, 200, "{origin}");
    }
    let res = server.request(
        "GET",
        "/api/stats",
        &[("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(res.status, 403);
    assert_json!(
        res.json(),
        error(
            "Forbidden",
            "Origin \"http://evil.example\" is not allowed; requests from browsers must come from localhost, or start dupcheck with --allowed-origin for that host",
            403
        )
    );
    // Health is never refused; requests without Origin are served.
    assert_eq!(
        server
            .request(
                "GET",
                "/api/health",
                &[("Origin", "http://evil.example")],
                b""
            )
            .status,
        200
    );
    assert_eq!(server.get("/api/stats").0, 200);
}

#[test]
fn a_failed_rescan_keeps_the_previous_index() {
    needs_formats!(project);
    let temp = common::fixture("project");
    // Not watched: the watcher would index the folder half-deleted. No
    // cache: its write after the first scan would race the removal.
    let server = Server::start_in(temp, &["--no-watch", "--no-cache"]);
    let gone = server.dir.clone();
    std::fs::remove_dir_all(&gone).expect("remove DIR");
    let (status, body) = server.post("/api/recheck", "");
    assert_eq!(status, 500);
    assert_eq!(body["error"], "ScanError");
    let message = body["message"].as_str().expect("message");
    assert!(
        message.starts_with("Rescan failed: cannot walk ")
            && message.ends_with("; the previous index keeps serving"),
        "{message}"
    );
    let (status, body) = server.get("/api/health");
    assert_eq!(
        (status, &body["status"], &body["files"]),
        (200, &json!("ready"), &json!(9))
    );
}
