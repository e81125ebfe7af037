//! Scenario `bad_inputs`: a table of malformed, hostile and borderline
//! requests against a server started with `--max-body 64kb`, each sent on
//! its own connection, with the status and error name it must get.
//!
//! Every answer, errors included, must be JSON with the JSON Content-Type;
//! an error must be exactly `{"error", "message", "statusCode"}` with the
//! expected name and the status as `statusCode`, and a 405 must carry the
//! expected `Allow`. A case answered after more than 5 s fails too. After
//! the table, `/api/health` must still answer 200.

use std::time::{Duration, Instant};

use crate::fixture;
use crate::http::{self, Response};
use crate::report::{millis, Row};
use crate::server::{Server, READY_LIMIT};

/// The body limit the server runs with.
const MAX_BODY: usize = 64 << 10;
/// The slowest answer a case may get.
const CASE_LIMIT: Duration = Duration::from_secs(5);
/// How long a case is waited for.
const CASE_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest the whole table may take.
const TABLE_BUDGET: Duration = Duration::from_secs(120);

/// What a case must be answered.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// 200 with a JSON object.
    Ok,
    /// 200, or 422 `SnippetTooComplex`: a snippet the server may refuse.
    Checked,
    /// This status and error name.
    Error(u16, &'static str),
}

/// One row of the table.
struct Case {
    name: String,
    raw: Vec<u8>,
    want: Want,
    /// The `Allow` header a 405 must carry.
    allow: Option<&'static str>,
}

impl Case {
    fn new(name: impl Into<String>, raw: Vec<u8>, want: Want) -> Case {
        Case {
            name: name.into(),
            raw,
            want,
            allow: None,
        }
    }

    fn allow(mut self, methods: &'static str) -> Case {
        self.allow = Some(methods);
        self
    }
}

const VALIDATION: Want = Want::Error(400, "ValidationError");
const UNSUPPORTED: Want = Want::Error(400, "UnsupportedFormat");
const BAD_REQUEST: Want = Want::Error(400, "BadRequest");
const FORBIDDEN: Want = Want::Error(403, "Forbidden");
const NOT_FOUND: Want = Want::Error(404, "NotFound");
const NOT_ALLOWED: Want = Want::Error(405, "MethodNotAllowed");
const TOO_LARGE: Want = Want::Error(413, "PayloadTooLarge");
const MEDIA_TYPE: Want = Want::Error(415, "UnsupportedMediaType");
const URI_TOO_LONG: Want = Want::Error(414, "URITooLong");
const HEADERS_TOO_LARGE: Want = Want::Error(431, "RequestHeaderFieldsTooLarge");

/// A request with `Connection: close` and the given headers after `Host`.
fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut all = vec![("Connection", "close")];
    all.extend_from_slice(headers);
    http::request(method, path, &all, body)
}

/// POST /api/check with a JSON Content-Type.
fn check(body: impl AsRef<[u8]>) -> Vec<u8> {
    typed(Some("application/json"), body)
}

/// POST /api/check with this Content-Type (or none).
fn typed(content_type: Option<&str>, body: impl AsRef<[u8]>) -> Vec<u8> {
    let headers: Vec<(&str, &str)> = content_type
        .map(|t| ("Content-Type", t))
        .into_iter()
        .collect();
    request("POST", "/api/check", &headers, body.as_ref())
}

/// GET `path` with these extra headers.
fn get(path: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    request("GET", path, headers, b"")
}

/// `lines` (a request line, maybe headers after it) with `Host` after the
/// request line, and the end of the head.
fn head(lines: &str) -> Vec<u8> {
    let (first, rest) = lines.split_once("\r\n").unwrap_or((lines, ""));
    let rest = if rest.is_empty() {
        String::new()
    } else {
        format!("{rest}\r\n")
    };
    format!("{first}\r\nHost: 127.0.0.1\r\n{rest}\r\n").into_bytes()
}

/// POST /api/check with these framing headers and the body `{}`.
fn framed(headers: &str) -> Vec<u8> {
    format!("POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{headers}\r\n{{}}")
        .into_bytes()
}

/// GET `path` with this `Host` header value.
fn host(path: &str, host: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").into_bytes()
}

/// A chunked POST /api/check of `chunks` (already framed) after the head.
fn chunked(chunks: &[u8]) -> Vec<u8> {
    let mut raw = b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
        Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        .to_vec();
    raw.extend_from_slice(chunks);
    raw
}

/// `body` in chunks of `size` bytes, with the last chunk.
fn in_chunks(body: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in body.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// A small snippet worth checking.
const CODE: &str = r#"{"code": "function f(a) { return a + 1; }", "format": "js"}"#;

/// The whole table (formatted by hand, as a table).
#[rustfmt::skip]
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |name: &str, raw: Vec<u8>, want: Want| cases.push(Case::new(name, raw, want));

    // Check bodies: valid, malformed JSON, not an object, fields of the
    // wrong type, missing or empty, unknown formats.
    let bodies: &[(&str, &str, Want)] = &[
        ("valid check", CODE, Want::Ok),
        ("format alias in capitals", r#"{"code": "x = 1", "format": "PY"}"#, Want::Ok),
        ("JSON cut short", r#"{"code": "#, VALIDATION),
        ("JSON unquoted keys", r#"{code: "x", format: "js"}"#, VALIDATION),
        ("JSON single quotes", "{'code': 'x', 'format': 'js'}", VALIDATION),
        ("JSON trailing comma", r#"{"code": "x", "format": "js",}"#, VALIDATION),
        ("JSON trailing garbage", r#"{"code": "x", "format": "js"} x"#, VALIDATION),
        ("JSON two objects", r#"{"code": "x", "format": "js"}{"code": "y"}"#, VALIDATION),
        ("JSON empty body", "", VALIDATION),
        ("JSON whitespace body", " \n\t ", VALIDATION),
        ("JSON NaN", r#"{"code": "x", "format": "js", "recheck": NaN}"#, VALIDATION),
        ("JSON comment", r#"{"code": "x" /* c */, "format": "js"}"#, VALIDATION),
        ("JSON byte order mark", "\u{FEFF}{\"code\": \"x\", \"format\": \"js\"}", VALIDATION),
        ("JSON array", "[1, 2]", VALIDATION),
        ("JSON string", r#""code""#, VALIDATION),
        ("JSON number", "42", VALIDATION),
        ("JSON null", "null", VALIDATION),
        ("JSON boolean", "true", VALIDATION),
        ("no fields", "{}", VALIDATION),
        ("code a number", r#"{"code": 5, "format": "js"}"#, VALIDATION),
        ("code null", r#"{"code": null, "format": "js"}"#, VALIDATION),
        ("code an array", r#"{"code": ["x"], "format": "js"}"#, VALIDATION),
        ("code an object", r#"{"code": {"text": "x"}, "format": "js"}"#, VALIDATION),
        ("code a boolean", r#"{"code": true, "format": "js"}"#, VALIDATION),
        ("code empty", r#"{"code": "", "format": "js"}"#, VALIDATION),
        ("code blank", r#"{"code": "  \n\t ", "format": "js"}"#, VALIDATION),
        ("code Unicode spaces", r#"{"code": "\u00a0\u2003", "format": "js"}"#, VALIDATION),
        ("code twice, last 5", r#"{"code": "x", "code": 5, "format": "js"}"#, VALIDATION),
        ("format missing", r#"{"code": "x"}"#, VALIDATION),
        ("format a number", r#"{"code": "x", "format": 7}"#, VALIDATION),
        ("format an array", r#"{"code": "x", "format": ["js"]}"#, VALIDATION),
        ("format null", r#"{"code": "x", "format": null}"#, VALIDATION),
        ("format empty", r#"{"code": "x", "format": ""}"#, VALIDATION),
        ("format blank", r#"{"code": "x", "format": "   "}"#, VALIDATION),
        ("recheck a string", r#"{"code": "x", "format": "js", "recheck": "yes"}"#, VALIDATION),
        ("recheck a number", r#"{"code": "x", "format": "js", "recheck": 1}"#, VALIDATION),
        ("recheck null", r#"{"code": "x", "format": "js", "recheck": null}"#, VALIDATION),
        ("path a number", r#"{"code": "x", "format": "js", "path": 3}"#, VALIDATION),
        ("path an array", r#"{"code": "x", "path": ["a.js"]}"#, VALIDATION),
        ("format cobol", r#"{"code": "x", "format": "cobol"}"#, UNSUPPORTED),
        ("format with a NUL", r#"{"code": "x", "format": "js\u0000"}"#, UNSUPPORTED),
        ("path of an unknown type", r#"{"code": "x", "path": "notes.txt"}"#, UNSUPPORTED),
        ("path without extension", r#"{"code": "x", "path": "Makefile"}"#, UNSUPPORTED),
        // Escapes: a NUL and a surrogate pair are text; lone surrogates not.
        ("escaped NUL", r#"{"code": "a\u0000b = 1", "format": "js"}"#, Want::Checked),
        ("surrogate pair", r#"{"code": "s = '\ud83d\ude00'", "format": "js"}"#, Want::Checked),
        ("lone leading surrogate", r#"{"code": "\ud800", "format": "js"}"#, VALIDATION),
        ("lone trailing surrogate", r#"{"code": "x\udfff", "format": "js"}"#, VALIDATION),
        ("surrogates reversed", r#"{"code": "\udc00\ud800", "format": "js"}"#, VALIDATION),
        ("unknown escape", r#"{"code": "\x41", "format": "js"}"#, VALIDATION),
    ];
    for (name, body, want) in bodies {
        add(name, check(body), *want);
    }

    // Big bodies, within --max-body or over it (declared or not).
    let snippet =
        |code: &str, format: &str| format!(r#"{{"code": "{code}", "format": "{format}"}}"#);
    let over = snippet(&"x".repeat(MAX_BODY + 5_000), "js");
    let mut one_over = snippet(&"x".repeat(MAX_BODY), "js");
    one_over.truncate(MAX_BODY + 1);
    let tail = r#"", "format": "js"}"#;
    let mut at_limit = snippet(&"y".repeat(MAX_BODY), "js");
    at_limit.truncate(MAX_BODY - tail.len());
    at_limit.push_str(tail);
    let fields: Vec<String> = (0..3_000).map(|i| format!(r#""f{i}": {i}"#)).collect();
    let big: Vec<(&str, String, Want)> = vec![
        ("body over the limit", over.clone(), TOO_LARGE),
        ("body one byte over the limit", one_over, TOO_LARGE),
        ("100,000 [ (over the limit)", "[".repeat(100_000), TOO_LARGE),
        ("body exactly at the limit", at_limit, Want::Checked),
        ("60,000 [", "[".repeat(60_000), VALIDATION),
        ("10,000 nested objects", format!(r#"{{"a":{}"#, r#"{"a":"#.repeat(10_000)), VALIDATION),
        ("200 nested arrays, closed", "[".repeat(200) + &"]".repeat(200), VALIDATION),
        ("one 60 KB identifier", snippet(&"a".repeat(60_000), "js"), Want::Checked),
        ("30,000 escaped newlines", snippet(&r"\n".repeat(30_000), "js"), VALIDATION),
        ("10,000 \\u escapes", snippet(&r"\u0041".repeat(10_000), "js"), Want::Checked),
        ("20,000 quotes", snippet(&r#"\""#.repeat(20_000), "ts"), Want::Checked),
        ("format of 10 KB", snippet("x", &"j".repeat(10_000)), UNSUPPORTED),
        ("a 60 KB key, no code", format!(r#"{{"{}": 1}}"#, "k".repeat(60_000)), VALIDATION),
        ("3,000 fields, no code", format!("{{{}}}", fields.join(",")), VALIDATION),
    ];
    for (name, body, want) in big {
        add(name, check(body), want);
    }
    add(
        "10 MB declared, 2 bytes sent",
        framed("Content-Type: application/json\r\nContent-Length: 10485760\r\n"),
        TOO_LARGE,
    );
    add("chunked over the limit", chunked(&in_chunks(over.as_bytes(), 4096)), TOO_LARGE);

    // Bytes that are not JSON text inside strings.
    let bytes: &[(&str, &[u8])] = &[
        ("byte 0xFF in a string", b"\xFF"),
        ("byte 0x80 in a string", b"\x80"),
        ("overlong UTF-8 in a string", b"\xC0\xAF"),
        ("UTF-8 surrogate in a string", b"\xED\xA0\x80"),
        ("control byte in a string", b"\x01"),
        ("raw NUL in a string", b"\x00"),
        ("raw tab in a string", b"\t"),
    ];
    for (name, bytes) in bytes {
        let body = [&b"{\"code\": \"a"[..], bytes, b"b\", \"format\": \"js\"}"].concat();
        add(name, check(body), VALIDATION);
    }
    add("raw NUL between fields", check(b"{\"code\": \"x\",\x00 \"format\": \"js\"}"), VALIDATION);

    // Form bodies.
    let forms: &[(&str, &str, Want)] = &[
        ("form valid", "code=f(a)+%2B+g(b)%3B&format=js&recheck=false", Want::Ok),
        ("form holding JSON", CODE, Want::Ok),
        ("form with a lone %", "code=50%25+and+%&format=js", Want::Ok),
        ("form %FF value", "code=%FF&format=js", VALIDATION),
        ("form %FF key", "%FF=x&format=js", VALIDATION),
        ("form without code", "format=js", VALIDATION),
        ("form empty code", "code=&format=js", VALIDATION),
        ("form recheck=maybe", "code=x&format=js&recheck=maybe", VALIDATION),
        ("form unknown format", "code=x&format=cobol", UNSUPPORTED),
    ];
    for (name, body, want) in forms {
        add(name, typed(Some("application/x-www-form-urlencoded"), body), *want);
    }

    // Content types.
    let types: &[(&str, Want)] = &[
        ("application/json; charset=utf-8", Want::Ok),
        ("APPLICATION/JSON", Want::Ok),
        ("application/vnd.api+json", Want::Ok),
        ("text/plain", MEDIA_TYPE),
        ("text/html", MEDIA_TYPE),
        ("multipart/form-data; boundary=x", MEDIA_TYPE),
        ("application/xml", MEDIA_TYPE),
        ("application/octet-stream", MEDIA_TYPE),
        ("", MEDIA_TYPE),
    ];
    for (content_type, want) in types {
        add(&format!("Content-Type {content_type:?}"), typed(Some(content_type), CODE), *want);
    }
    add("no Content-Type", typed(None, CODE), Want::Ok);
    let mut raw = framed("Content-Type: text/\u{FF}\r\nContent-Length: 2\r\n");
    // The header's value as the bytes FF FE, not as UTF-8.
    let at = http::find(&raw, "\u{FF}".as_bytes()).expect("the marker");
    raw.splice(at..at + 2, [0xFF, 0xFE]);
    add("Content-Type with bytes over 0x7F", raw, MEDIA_TYPE);

    // Request heads hyper accepts in odd forms, or refuses.
    let heads: Vec<(&str, Vec<u8>, Want)> = vec![
        ("LF-only head", b"GET /api/health HTTP/1.1\nHost: 127.0.0.1\n\n".to_vec(), Want::Ok),
        ("HTTP/1.0 without Host", b"GET /api/stats HTTP/1.0\r\n\r\n".to_vec(), Want::Ok),
        ("absolute-form target", get("http://127.0.0.1/api/health", &[]), Want::Ok),
        ("query string", get("/api/health?verbose=1", &[]), Want::Ok),
        ("request line, extra word", head("GET / HTTP/1.1 extra"), BAD_REQUEST),
        ("request line of garbage", b"GARBAGE\r\n\r\n".to_vec(), BAD_REQUEST),
        ("request line, no target", b"GET\r\n\r\n".to_vec(), BAD_REQUEST),
        ("HTTP/1.2", head("GET / HTTP/1.2"), BAD_REQUEST),
        ("HTTP/3.0", head("GET / HTTP/3.0"), BAD_REQUEST),
        ("NUL in the method", head("G\0T / HTTP/1.1"), BAD_REQUEST),
        ("DEL in the target", head("GET /\x7F HTTP/1.1"), BAD_REQUEST),
        ("space in the target", head("GET /a b HTTP/1.1"), BAD_REQUEST),
        ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(), Want::Error(505, "HTTPVersionNotSupported")),
    ];
    for (name, raw, want) in heads {
        add(name, raw, want);
    }
    // Header lines hyper refuses, after `GET / HTTP/1.1`.
    let headers = [
        ("control byte in a name", "Bad\x01Name: 1"),
        ("header without a colon", "NoColon"),
        ("NUL in a header value", "X-A: a\0b"),
        ("bare CR in a header value", "X-A: a\rb"),
        ("space before a colon", "X-A : 1"),
        ("folded header line", "X-A: a\r\n b"),
        ("UTF-8 header name", "Ü: 1"),
    ];
    for (name, header) in headers {
        add(name, head(&format!("GET / HTTP/1.1\r\n{header}")), BAD_REQUEST);
    }
    // Framing headers it refuses, on a POST of `{}`.
    let framing = [
        ("two Content-Lengths", "Content-Length: 2\r\nContent-Length: 3\r\n"),
        ("Content-Length list", "Content-Length: 2, 3\r\n"),
        ("negative Content-Length", "Content-Length: -1\r\n"),
        ("Content-Length not a number", "Content-Length: abc\r\n"),
        ("Content-Length too big", "Content-Length: 99999999999999999999\r\n"),
        ("Transfer-Encoding gzip", "Transfer-Encoding: gzip\r\n"),
    ];
    for (name, headers) in framing {
        add(name, framed(headers), BAD_REQUEST);
    }
    // Heads over its limits.
    add("70 KB target", head(&format!("GET /{} HTTP/1.1", "a".repeat(70_000))), URI_TOO_LONG);
    let many: String = (0..101).map(|i| format!("X-H{i}: 1\r\n")).collect();
    add("101 headers", head(&format!("GET / HTTP/1.1\r\n{}", many.trim_end())), HEADERS_TOO_LARGE);
    // hyper checks its 400 KB limit before each read, not after, so a head
    // is refused every time only when it is over by a read more.
    let big_header = format!("GET / HTTP/1.1\r\nX-Big: {}", "v".repeat(1 << 20));
    add("one 1 MB header", head(&big_header), HEADERS_TOO_LARGE);

    // Routes: unknown paths, and known paths with the wrong method.
    let paths = [
        "/nope", "/api", "/api/", "/api/check/", "/API/HEALTH", "/%FF", "/api/health/..",
        "/../etc/passwd", "/api/check%00",
    ];
    for path in paths {
        add(&format!("GET {path}"), get(path, &[]), NOT_FOUND);
    }
    add("POST /api/nope", request("POST", "/api/nope", &[], CODE.as_bytes()), NOT_FOUND);
    add("OPTIONS *", request("OPTIONS", "*", &[], b""), NOT_FOUND);
    let methods = [
        ("GET", "/api/check", "POST"),
        ("PUT", "/api/check", "POST"),
        ("OPTIONS", "/api/check", "POST"),
        ("DELETE", "/api/stats", "GET"),
        ("POST", "/api/health", "GET"),
        ("GET", "/api/recheck", "POST"),
        ("PATCH", "/", "GET"),
        ("get", "/api/health", "GET"),
        ("BREW", "/api/stats", "GET"),
    ];
    for (method, path, allow) in methods {
        let raw = request(method, path, &[], b"");
        cases.push(Case::new(format!("{method} {path}"), raw, NOT_ALLOWED).allow(allow));
    }
    let mut add = |name: &str, raw: Vec<u8>, want: Want| cases.push(Case::new(name, raw, want));

    // Browser origins, and hosts (the server is bound to 127.0.0.1).
    let evil = ("Origin", "http://evil.example");
    let local = ("Origin", "http://localhost");
    let json = ("Content-Type", "application/json");
    let browsers: Vec<(&str, Vec<u8>, Want)> = vec![
        ("Origin on a check", request("POST", "/api/check", &[json, evil], b"{}"), FORBIDDEN),
        ("Origins local and evil", get("/api/stats", &[local, evil]), FORBIDDEN),
        ("Origin localhost", get("/api/stats", &[("Origin", "http://localhost:5173")]), Want::Ok),
        ("Origin evil on health", get("/api/health", &[evil]), Want::Ok),
        ("Hosts local and evil", host("/api/stats", "127.0.0.1\r\nHost: evil.example"), FORBIDDEN),
        ("Host localhost", host("/api/stats", "localhost"), Want::Ok),
        ("Host [::1]", host("/api/stats", "[::1]:3000"), Want::Ok),
        ("Host evil on health", host("/api/health", "evil.example"), Want::Ok),
    ];
    for (name, raw, want) in browsers {
        add(name, raw, want);
    }
    let evil_origins = [
        "http://evil.example", "https://evil.example:443", "null", "http://localhost.evil.example",
        "http://127.0.0.1.evil.example", "file://",
    ];
    for origin in evil_origins {
        add(&format!("Origin {origin:?}"), get("/api/stats", &[("Origin", origin)]), FORBIDDEN);
    }
    for name in ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "[::2]", ""] {
        add(&format!("Host {name:?}"), host("/api/stats", name), FORBIDDEN);
    }

    // Chunked bodies.
    let mut extended = in_chunks(CODE.as_bytes(), 100);
    let size_end = http::find(&extended, b"\r\n").expect("a chunk size line");
    extended.splice(size_end..size_end, *b";name=value");
    let mut trailed = in_chunks(CODE.as_bytes(), 100);
    trailed.truncate(trailed.len() - 2);
    trailed.extend_from_slice(b"X-Trailer: 1\r\n\r\n");
    let mut with_length = chunked(&in_chunks(CODE.as_bytes(), 9));
    let at = http::find(&with_length, b"\r\n\r\n").expect("a head");
    with_length.splice(at..at, *b"\r\nContent-Length: 5");
    let chunks: Vec<(&str, Vec<u8>, Want)> = vec![
        ("chunked", chunked(&in_chunks(CODE.as_bytes(), 7)), Want::Ok),
        ("chunked with an extension", chunked(&extended), Want::Ok),
        ("chunked with a trailer", chunked(&trailed), Want::Ok),
        ("chunked and Content-Length", with_length, Want::Ok),
        ("chunk size not hex", chunked(b"zz\r\n{}\r\n0\r\n\r\n"), VALIDATION),
        ("chunk size too big", chunked(b"fffffffffffffffffffff\r\n{}\r\n0\r\n\r\n"), VALIDATION),
        ("chunk longer than its size", chunked(b"1\r\n{}\r\n0\r\n\r\n"), VALIDATION),
    ];
    for (name, raw, want) in chunks {
        add(name, raw, want);
    }
    add(
        "Expect: 100-continue",
        request("POST", "/api/check", &[json, ("Expect", "100-continue")], CODE.as_bytes()),
        Want::Ok,
    );
    cases
}

/// Runs the scenario.
pub fn run() -> Row {
    let mut row = Row::new("bad_inputs");
    let dir = fixture::project_copy();
    let max_body = format!("{}kb", MAX_BODY >> 10);
    let args = ["--max-body", &max_body];
    let Some(mut server) =
        Server::start_ready("bad_inputs", dir.path(), &args, READY_LIMIT, &mut row)
    else {
        return row;
    };
    let cases = cases();
    let mut slowest = (Duration::ZERO, String::new());
    let table_started = Instant::now();
    for (i, case) in cases.iter().enumerate() {
        if row.over_budget(table_started, TABLE_BUDGET, format_args!("{i} cases")) {
            break;
        }
        row.requests += 1;
        let started = Instant::now();
        let answer = http::exchange(server.port, &case.raw, CASE_TIMEOUT);
        let took = started.elapsed();
        if took > slowest.0 {
            slowest = (took, case.name.clone());
        }
        let verdict = match answer {
            Ok(res) => judge(case, &res),
            Err(err) => Err(format!("no answer: {err}")),
        };
        let verdict = verdict.and_then(|()| {
            if took > CASE_LIMIT {
                Err(format!("answered after {}", millis(took)))
            } else {
                Ok(())
            }
        });
        if let Err(why) = verdict {
            row.fail(format!(
                "case {:?}: expected {}: {why}\n    request: {}",
                case.name,
                describe(case),
                shown(&case.raw)
            ));
        }
        if let Some(crash) = server.crash() {
            row.fail(format!("after case {:?}: {crash}", case.name));
            return row;
        }
    }
    row.figure(format!("{} cases", cases.len()));
    row.figure(format!("slowest {} ({})", millis(slowest.0), slowest.1));
    server.check_health(&mut row, "the table");
    row.stopped(server.stop());
    row
}

/// Whether `res` is what `case` wants.
fn judge(case: &Case, res: &Response) -> Result<(), String> {
    match case.want {
        Want::Ok if res.status == 200 => res.json_object().map(drop),
        Want::Checked if res.status == 200 => res.json_object().map(drop),
        Want::Checked if res.status == 422 => match res.error_name()? {
            name if name == "SnippetTooComplex" => Ok(()),
            name => Err(format!("error {name}: {}", res.summary())),
        },
        Want::Error(status, name) if res.status == status => {
            let got = res.error_name()?;
            if got != name {
                return Err(format!("error {got}: {}", res.summary()));
            }
            match (case.allow, res.header("allow")) {
                (Some(want), got) if got != Some(want) => {
                    Err(format!("Allow {got:?} instead of {want:?}"))
                }
                _ => Ok(()),
            }
        }
        _ => Err(res.summary()),
    }
}

/// What a case expects, in words.
fn describe(case: &Case) -> String {
    match case.want {
        Want::Ok => "200 JSON".to_owned(),
        Want::Checked => "200 JSON or 422 SnippetTooComplex".to_owned(),
        Want::Error(status, name) => match case.allow {
            Some(allow) => format!("{status} {name} with Allow: {allow}"),
            None => format!("{status} {name}"),
        },
    }
}

/// The start of a raw request, escaped.
fn shown(raw: &[u8]) -> String {
    let text: String = raw
        .iter()
        .take(160)
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    if raw.len() > 160 {
        format!("{text}... ({} bytes)", raw.len())
    } else {
        text
    }
}
