//! Issue 8: no input hangs the server, exhausts its memory or gets an
//! answer that is not JSON; a stop ends in bounded time.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{error, Server};
use serde_json::{json, Value};

#[test]
fn issue_8_the_snippets_that_hung_tree_sitter_are_answered() {
    let server = Server::start("project", &[]);
    for (code, format) in [
        ("\"\n'</*'[[``}s>]@*/", "typescript"),
        (
            "\"\"``[``-}!#[\"\"[\"\"]-{[\"\"'$/*\\x]<;;>-[}\\[`[+.x:*/",
            "javascript",
        ),
    ] {
        let (status, body) = server.check(json!({"code": code, "format": format}));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["duplications"], json!([]));
    }
}

#[test]
fn issue_8_files_that_hung_tree_sitter_are_scanned_and_rescanned() {
    needs_formats!(project);
    let temp = common::fixture("project");
    let odd = "\"\"``[``-}!#[\"\"[\"\"]-{[\"\"'$/*\\x]<;;>-[}\\[`[+.x:*/";
    common::write(temp.path(), "gen/odd.js", odd);
    let server = Server::start_in(temp, &[]);
    let (_, health) = server.get("/api/health");
    assert_eq!(
        (&health["status"], &health["files"]),
        (&json!("ready"), &json!(10))
    );
    common::write(&server.dir, "gen/odd.ts", "\"\n'</*'[[``}s>]@*/");
    let (status, body) = server.post("/api/recheck", "");
    assert_eq!((status, &body["files"]), (200, &json!(11)), "{body}");
}

#[test]
fn issue_8_a_snippet_larger_than_a_check_may_hold_is_refused_unparsed() {
    let server = Server::start("project", &["--max-body", "20mb"]);
    let len = dupcheck::service::check::max_snippet_len() + 1;
    let (status, body) = server.check(json!({"code": "a".repeat(len), "format": "js"}));
    assert_eq!(status, 422);
    assert_json!(
        body,
        error(
            "SnippetTooComplex",
            &format!(
                "The snippet is too large to check: {len} bytes would need more than the 256 MB a check may use; send at most {} bytes",
                len - 1
            ),
            422
        )
    );
    assert_eq!(server.get("/api/health").0, 200);
}

#[test]
fn issue_8_errors_hyper_answers_itself_are_json() {
    let server = Server::start("project", &[]);
    let long_uri = format!(
        "GET /{} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "a".repeat(70_000)
    );
    let many_headers = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n{}\r\n",
        (0..101)
            .map(|i| format!("x-h{i}: 1\r\n"))
            .collect::<String>()
    );
    let cases: Vec<(Vec<u8>, Value)> = vec![
        (
            b"GET / HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
            error("BadRequest", "Malformed HTTP request: the request line, a header or the Content-Length could not be read", 400),
        ),
        (
            b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}".to_vec(),
            error("BadRequest", "Malformed HTTP request: the request line, a header or the Content-Length could not be read", 400),
        ),
        (
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad\x01Name: 1\r\n\r\n".to_vec(),
            error("BadRequest", "Malformed HTTP request: the request line, a header or the Content-Length could not be read", 400),
        ),
        (
            long_uri.into_bytes(),
            error("URITooLong", "The request target is too long; send at most 65,534 bytes", 414),
        ),
        (
            many_headers.into_bytes(),
            error("RequestHeaderFieldsTooLarge", "The request headers are too large or too many; send at most 100 headers and 400 KB", 431),
        ),
    ];
    for (raw, want) in cases {
        let res = server.raw(&raw);
        assert_eq!(res.status, want["statusCode"]);
        assert_eq!(
            res.header("content-type"),
            Some("application/json; charset=utf-8")
        );
        assert_json!(res.json(), want);
    }
    // hyper closes an HTTP/2 connection preface without a word.
    let res = server.raw(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert_eq!(res.status, 505);
    assert_json!(
        res.json(),
        error(
            "HTTPVersionNotSupported",
            "HTTP/2 is not served; send HTTP/1.1 requests",
            505
        )
    );
    assert_eq!(server.get("/api/health").0, 200);
}

#[test]
fn issue_8_headers_that_do_not_arrive_in_time_get_a_408() {
    let server = Server::start("project", &["--header-timeout", "1"]);
    let want = error(
        "RequestTimeout",
        "The request headers were not received in time; send them within 1 seconds",
        408,
    );
    // Part of a head, then nothing; and a new connection that sends nothing.
    for sent in [&b"GET /api/health HTTP/1.1\r\nHo"[..], b""] {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
        stream.write_all(sent).expect("send");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("read");
        let res = common::Response::parse(&answer);
        assert_eq!(res.status, 408);
        assert_json!(res.json(), want);
    }
}

#[test]
fn issue_8_browsers_on_other_hosts_are_refused_by_host_and_by_every_origin() {
    let server = Server::start("project", &["--allowed-host", "dev.internal"]);
    let get = |host: &str, origins: &[&str]| {
        let origins: String = origins.iter().map(|o| format!("Origin: {o}\r\n")).collect();
        server.raw(
            format!(
                "GET /api/stats HTTP/1.1\r\nHost: {host}\r\n{origins}Connection: close\r\n\r\n"
            )
            .as_bytes(),
        )
    };
    let port = server.port;
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "dev.internal".to_owned(),
    ] {
        assert_eq!(get(&host, &[]).status, 200, "{host}");
    }
    let res = get(&format!("evil.example:{port}"), &[]);
    assert_eq!(res.status, 403);
    assert_json!(
        res.json(),
        error(
            "Forbidden",
            &format!("Host \"evil.example:{port}\" is not served; use localhost or the address dupcheck is bound to, or start it with --allowed-host for that name"),
            403
        )
    );
    let res = get("localhost", &["http://localhost", "http://evil.example"]);
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["message"], "Origin \"http://evil.example\" is not allowed; requests from browsers must come from localhost, or start dupcheck with --allowed-origin for that host");
    let health =
        server.raw(b"GET /api/health HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    assert_eq!(health.status, 200);
}

#[cfg(unix)]
#[test]
fn issue_8_a_stop_answers_requests_still_running_after_the_grace_period_and_exits() {
    let mut server = Server::start("project", &[]);
    // A check whose body never completes stays in flight.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    stream
        .write_all(b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\": ")
        .expect("send");
    // The server answers a request sent after this one: the slow one is in flight.
    assert_eq!(server.get("/api/health").0, 200);
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    assert_eq!(server.terminate(), Some(0));
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let res = common::Response::parse(&answer);
    assert_eq!(res.status, 503);
    assert_json!(
        res.json(),
        error(
            "ShuttingDown",
            "The server is stopping; send the request to its next run",
            503
        )
    );
}

/// Issue 8: a stop while the server starts (its watcher walking DIR, its
/// first scan running) ends it with status 0 at once, not by the signal.
#[cfg(unix)]
#[test]
fn issue_8_a_stop_as_soon_as_it_listens_exits_with_status_0() {
    let temp = common::fixture("project");
    for i in 0..40 {
        common::write(
            temp.path(),
            &format!("more/f{i}.js"),
            "let a = [1, 2, 3];\n".repeat(500),
        );
    }
    let mut server = Server::spawn(temp.path(), &[]);
    assert_eq!(server.terminate(), Some(0));
}
