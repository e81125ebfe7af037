//! `GET /api/openapi.json` against the `project` fixture: the document is
//! valid OpenAPI 3.1 (the OAI's schema with its base dialect, kept in
//! `testdata/openapi/`), every `$ref` resolves, every route of the router
//! is in it and every operation in it is routed, and the answers of a real
//! server, errors included, validate against the schemas it gives for
//! their status and media type, as do its examples.
//!
//! The schemas are checked closed: in these tests only, an object schema
//! of `components.schemas` admits no property it does not list, so a field
//! the server sends but the document forgets fails too.

use crate::common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;

use common::{Response, Server};
use dupcheck::interfaces::http::routes::ROUTES;
use serde_json::{json, Value};

/// The OAI's schemas kept in `testdata/openapi/`, by `$id`.
fn oas_schemas() -> Vec<(&'static str, Value)> {
    let read = |text: &str| -> Value { serde_json::from_str(text).expect("a vendored schema") };
    vec![
        (
            "https://spec.openapis.org/oas/3.1/schema/2022-10-07",
            read(include_str!(
                "../../testdata/openapi/schema-2022-10-07.json"
            )),
        ),
        (
            "https://spec.openapis.org/oas/3.1/dialect/base",
            read(include_str!("../../testdata/openapi/dialect-base.json")),
        ),
        (
            "https://spec.openapis.org/oas/3.1/meta/base",
            read(include_str!("../../testdata/openapi/meta-base.json")),
        ),
        (
            "https://spec.openapis.org/oas/3.1/schema-base/2022-10-07",
            read(include_str!(
                "../../testdata/openapi/schema-base-2022-10-07.json"
            )),
        ),
    ]
}

/// The complaints of the OAS 3.1 schema (with its base dialect) about
/// `doc`, each as `pointer: error`.
fn oas_errors(doc: &Value) -> Vec<String> {
    let schemas = oas_schemas();
    let registry = jsonschema::Registry::new()
        .extend(schemas.iter().map(|(id, schema)| (*id, schema.clone())))
        .expect("the schemas' ids are URIs")
        .prepare()
        .expect("the schemas form a registry");
    let base = &schemas[3].1;
    let validator = jsonschema::options()
        .with_registry(&registry)
        .should_validate_formats(true)
        .build(base)
        .expect("schema-base compiles");
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// A response's body as text.
fn text(res: &Response) -> String {
    String::from_utf8(res.body.clone()).expect("a UTF-8 body")
}

/// The served document.
struct Document(Value);

impl Document {
    fn get(server: &Server) -> Document {
        let res = server.request("GET", "/api/openapi.json", &[], b"");
        assert_eq!(res.status, 200, "{}", text(&res));
        assert_eq!(
            res.header("content-type"),
            Some("application/json; charset=utf-8")
        );
        Document(res.json())
    }

    /// `schema` with the document's component schemas beside it, closed.
    fn with_components(&self, schema: &Value) -> Value {
        let mut components = self.0["components"].clone();
        if let Some(schemas) = components["schemas"].as_object_mut() {
            for schema in schemas.values_mut() {
                let open = schema.get("properties").is_some()
                    && schema.get("additionalProperties").is_none();
                if open {
                    schema["additionalProperties"] = json!(false);
                }
            }
        }
        let mut root = schema.clone();
        if let Some(object) = root.as_object_mut() {
            object.insert("components".into(), components);
        } else {
            root = json!({"allOf": [schema], "components": components});
        }
        root
    }

    /// The complaints of `schema` (a Schema Object of the document) about
    /// `value`.
    fn errors(&self, schema: &Value, value: &Value) -> Vec<String> {
        let root = self.with_components(schema);
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("{schema} compiles: {e}"));
        validator
            .iter_errors(value)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    /// The response object of `method path` for `status`: the
    /// operation's, or, for the errors any request can get, the one of
    /// `components.responses` named `shared`.
    fn response(&self, method: &str, path: &str, status: u16) -> &Value {
        let operation = &self.0["paths"][path][method.to_ascii_lowercase()];
        assert!(operation.is_object(), "{method} {path} is not documented");
        let response = &operation["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "{method} {path} does not document {status}"
        );
        self.resolve(response)
    }

    /// `value`, or what its `$ref` points at.
    fn resolve<'a>(&'a self, value: &'a Value) -> &'a Value {
        match value["$ref"].as_str() {
            Some(target) => self
                .0
                .pointer(target.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("{target} resolves")),
            None => value,
        }
    }

    /// Asserts that `res`, the answer to `method path`, is documented: its
    /// status, its media type, and its body valid against the schema.
    fn assert_describes(&self, method: &str, path: &str, res: &Response) {
        let response = self.response(method, path, res.status);
        self.assert_body(response, res, &format!("{method} {path}"));
    }

    /// Asserts that `res` is an answer `response` describes.
    fn assert_body(&self, response: &Value, res: &Response, what: &str) {
        let content_type = res.header("content-type").expect("a Content-Type");
        let media = content_type.split(';').next().unwrap_or("").trim();
        let content = &response["content"][media];
        assert!(
            content.is_object(),
            "{what} {}: {media} is not documented in {response}",
            res.status
        );
        let body = if media == "application/json" || media.ends_with("+json") {
            res.json()
        } else {
            Value::String(text(res))
        };
        let errors = self.errors(&content["schema"], &body);
        assert!(
            errors.is_empty(),
            "{what} {}: {errors:#?}\n{body:#}",
            res.status
        );
    }
}

/// Every `$ref` of `value`, with where it is.
fn refs(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if let ("$ref", Value::String(target)) = (key.as_str(), child) {
                    out.push((at.clone(), target.clone()));
                }
                refs(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                refs(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_document_is_openapi_3_1_and_its_refs_resolve() {
    let server = Server::start("project", &[]);
    let doc = Document::get(&server);
    assert_eq!(doc.0["openapi"], "3.1.0");
    assert_eq!(doc.0["info"]["title"], "dupcheck");
    assert_eq!(doc.0["info"]["version"], env!("CARGO_PKG_VERSION"));
    let errors = oas_errors(&doc.0);
    assert!(errors.is_empty(), "{errors:#?}");

    let mut found = Vec::new();
    refs(&doc.0, String::new(), &mut found);
    assert!(found.len() > 20, "{found:?}");
    for (at, target) in found {
        assert!(
            target.starts_with("#/") && doc.0.pointer(&target[1..]).is_some(),
            "{at}: {target} does not resolve"
        );
    }
    // Built once: the same bytes again.
    let again = server.request("GET", "/api/openapi.json", &[], b"");
    assert_eq!(again.json(), doc.0);
}

#[test]
fn the_validator_refuses_a_broken_document() {
    let server = Server::start("project", &[]);
    let doc = Document::get(&server).0;
    // A Schema Object that is no JSON Schema (checked through schema-base's
    // dialect), a response without its description, an unknown field.
    let mut bad_schema = doc.clone();
    bad_schema["components"]["schemas"]["Error"]["type"] = json!("record");
    let mut no_description = doc.clone();
    no_description["paths"]["/api/health"]["get"]["responses"]["200"]
        .as_object_mut()
        .expect("a response")
        .remove("description");
    let mut unknown = doc;
    unknown["paths"]["/api/health"]["get"]["colour"] = json!("red");
    for (broken, pointer) in [
        (bad_schema, "/components/schemas/Error/type"),
        (no_description, "/paths/~1api~1health/get/responses/200"),
        (unknown, "/paths/~1api~1health/get"),
    ] {
        let errors = oas_errors(&broken);
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{pointer}: "))),
            "{pointer}: {errors:#?}"
        );
    }
}

#[test]
fn every_route_is_documented_and_every_operation_is_routed() {
    let server = Server::start("project", &[]);
    let doc = Document::get(&server);
    let methods = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    let mut documented = BTreeSet::new();
    for (path, item) in doc.0["paths"].as_object().expect("paths") {
        for method in methods {
            if item.get(method).is_some() {
                documented.insert((method.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    let routed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned()))
        .collect();
    assert_eq!(documented, routed);
    // And the server serves each: neither 404 nor 405 (but the 404 of
    // `/api/repositories` on a server without a store, whose route is
    // there).
    for (method, path) in &documented {
        let res = server.request(method, path, &[], b"");
        let no_route =
            res.status == 405 || (res.status == 404 && text(&res).contains("\"message\":\"Route "));
        assert!(!no_route, "{method} {path}: {} {}", res.status, text(&res));
    }
    // An operation id each, unique.
    let ids: BTreeSet<&str> = documented
        .iter()
        .map(|(m, p)| {
            doc.0["paths"][p][m.to_ascii_lowercase()]["operationId"]
                .as_str()
                .expect("an operationId")
        })
        .collect();
    assert_eq!(ids.len(), documented.len());
}

const MERGE: &str = "export function merge(target, source) {\n  const result = { ...target };\n  for (const key of Object.keys(source)) {\n    const value = source[key];\n    if (value && typeof value === \"object\" && !Array.isArray(value)) {\n      result[key] = merge(result[key] || {}, value);\n    } else if (value !== undefined) {\n      result[key] = value;\n    } else {\n      delete result[key];\n    }\n  }\n  return result;\n}\n";

/// A diff, as git writes it, that adds a copy of `merge` in a new file and
/// a binary file.
fn diff() -> String {
    let added: String = MERGE.lines().map(|l| format!("+{l}\n")).collect();
    format!(
        "diff --git a/src/app/deep.js b/src/app/deep.js\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/src/app/deep.js\n@@ -0,0 +1,{} @@\n{added}diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..2222222\nBinary files /dev/null and b/logo.png differ\n",
        MERGE.lines().count()
    )
}

#[test]
fn real_answers_are_described_by_the_document() {
    let server = Server::start("project", &[]);
    let doc = Document::get(&server);
    let json = [("Content-Type", "application/json")];

    for path in ["/", "/api/health", "/api/stats", "/api/openapi.json"] {
        let res = server.request("GET", path, &[], b"");
        assert_eq!(res.status, 200, "{path}");
        doc.assert_describes("GET", path, &res);
    }
    let res = server.request("POST", "/api/recheck", &[], b"");
    assert_eq!(res.status, 200);
    doc.assert_describes("POST", "/api/recheck", &res);

    // The clone list: a page with a next one, fragments, the last page.
    let res = server.request("GET", "/api/clones?limit=1&fragments=true", &[], b"");
    assert_eq!(res.status, 200, "{}", text(&res));
    doc.assert_describes("GET", "/api/clones", &res);
    let first = res.json();
    assert!(
        first["clones"][0]["first"]["fragment"].is_string(),
        "{first}"
    );
    let cursor = first["nextCursor"].as_str().expect("a next page");
    let last = format!("/api/clones?limit=1000&cursor={cursor}&minTokens=0&format=js&path=src");
    let res = server.request("GET", &last, &[], b"");
    assert_eq!(res.status, 200, "{}", text(&res));
    doc.assert_describes("GET", "/api/clones", &res);
    assert_eq!(res.json()["nextCursor"], Value::Null);

    // One clone in detail, the folder tree, the dashboard and its files.
    let path = format!(
        "/api/clone?id={}",
        first["clones"][0]["id"].as_str().unwrap()
    );
    let res = server.request("GET", &path, &[], b"");
    assert_eq!(res.status, 200, "{}", text(&res));
    doc.assert_describes("GET", "/api/clone", &res);
    for path in [
        "/api/tree",
        "/api/tree?path=src&limit=1",
        "/api/tree?path=src/app",
    ] {
        let res = server.request("GET", path, &[], b"");
        assert_eq!(res.status, 200, "{path}: {}", text(&res));
        doc.assert_describes("GET", "/api/tree", &res);
    }
    let res = server.request("GET", "/", &[("Accept", "text/html")], b"");
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    doc.assert_describes("GET", "/", &res);
    for path in ["/dashboard/app.js", "/dashboard/style.css"] {
        let res = server.request("GET", path, &[], b"");
        assert_eq!(res.status, 200, "{path}");
        doc.assert_describes("GET", path, &res);
    }

    // A check with duplications, in each of its forms.
    let check = json!({"code": MERGE, "format": "javascript"}).to_string();
    for output in ["json", "sarif", "rdjsonl"] {
        let path = format!("/api/check?output={output}");
        let res = server.request("POST", &path, &json, check.as_bytes());
        assert_eq!(res.status, 200, "{}", text(&res));
        doc.assert_describes("POST", "/api/check", &res);
        if output == "json" {
            assert!(res.json()["duplications"][0]["codebaseLocation"]["file"].is_string());
        }
    }
    let form = format!(
        "code={}&format=js&recheck=false",
        form_urlencoded::byte_serialize(MERGE.as_bytes()).collect::<String>()
    );
    let res = server.request(
        "POST",
        "/api/check",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form.as_bytes(),
    );
    assert_eq!(res.status, 200);
    doc.assert_describes("POST", "/api/check", &res);

    // A diff check with a duplication and a skipped file.
    for output in ["json", "sarif", "rdjsonl"] {
        let path = format!("/api/check-diff?output={output}");
        let res = server.request(
            "POST",
            &path,
            &[("Content-Type", "text/x-diff")],
            diff().as_bytes(),
        );
        assert_eq!(res.status, 200, "{}", text(&res));
        doc.assert_describes("POST", "/api/check-diff", &res);
        if output == "json" {
            let body = res.json();
            assert!(body["files"][0]["duplications"][0]["addedLines"].is_u64());
            assert_eq!(body["skipped"][0]["reason"], "binary");
        }
    }
    let res = server.request(
        "POST",
        "/api/check-diff",
        &json,
        json!({"diff": diff()}).to_string().as_bytes(),
    );
    assert_eq!(res.status, 200);
    doc.assert_describes("POST", "/api/check-diff", &res);
}

#[test]
fn real_errors_are_described_by_the_document() {
    let server = Server::start("project", &[]);
    let doc = Document::get(&server);
    let json = [("Content-Type", "application/json")];
    let mut seen = BTreeSet::new();
    let mut described = |method: &str, path: &str, res: Response| {
        doc.assert_describes(method, path, &res);
        seen.insert(res.json()["error"].as_str().expect("error").to_owned());
    };

    // Validation, format, output, media type, origin: what handlers refuse.
    for body in [
        json!({"format": "js"}),
        json!({"code": "let a = 1;", "format": "cobol"}),
    ] {
        let res = server.request("POST", "/api/check", &json, body.to_string().as_bytes());
        assert_eq!(res.status, 400);
        described("POST", "/api/check", res);
    }
    let res = server.request("POST", "/api/check?output=html", &json, b"{}");
    described("POST", "/api/check", res);
    for query in ["limit=0", "colour=red", "format=cobol", "limit=1&limit=2"] {
        let res = server.request("GET", &format!("/api/clones?{query}"), &[], b"");
        assert_eq!(res.status, 400, "{query}");
        described("GET", "/api/clones", res);
    }
    for (query, status) in [("depth=2", 400), ("limit=0", 400), ("path=nope", 404)] {
        let res = server.request("GET", &format!("/api/tree?{query}"), &[], b"");
        assert_eq!(res.status, status, "{query}");
        described("GET", "/api/tree", res);
    }
    for (query, status) in [("", 400), ("id=42", 400), ("id=0123456789abcdef", 404)] {
        let res = server.request("GET", &format!("/api/clone?{query}"), &[], b"");
        assert_eq!(res.status, status, "{query}");
        described("GET", "/api/clone", res);
    }
    let res = server.request(
        "POST",
        "/api/check",
        &[("Content-Type", "text/plain")],
        b"x",
    );
    assert_eq!(res.status, 415);
    described("POST", "/api/check", res);
    let res = server.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "text/x-diff")],
        b"fix the merge",
    );
    assert_eq!(res.status, 400);
    described("POST", "/api/check-diff", res);
    let res = server.request(
        "POST",
        "/api/check-diff",
        &[("Content-Type", "image/png")],
        b"x",
    );
    assert_eq!(res.status, 415);
    described("POST", "/api/check-diff", res);
    let res = server.request(
        "GET",
        "/api/stats",
        &[("Origin", "https://attacker.example")],
        b"",
    );
    assert_eq!(res.status, 403);
    described("GET", "/api/stats", res);
    let res = server.request("GET", "/api/repositories", &[], b"");
    assert_eq!(res.status, 404);
    described("GET", "/api/repositories", res);
    let res = server.raw(b"GET / HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n");
    assert_eq!(res.status, 403);
    described("GET", "/", res);

    // What hyper refuses before the router.
    let res = server.raw(
        b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(res.status, 413);
    described("POST", "/api/check", res);
    let res =
        server.raw(b"GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n");
    assert_eq!(res.status, 400);
    described("GET", "/api/stats", res);
    let long = format!("/api/health?q={}", "a".repeat(70_000));
    let res = server.request("GET", &long, &[], b"");
    assert_eq!(res.status, 414);
    described("GET", "/api/health", res);
    let many: Vec<(String, String)> = (0..120).map(|i| (format!("X-H{i}"), "1".into())).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let res = server.request("GET", "/api/health", &many, b"");
    assert_eq!(res.status, 431);
    described("GET", "/api/health", res);

    // Those of any path, in `components.responses`.
    let shared = |name: &str| doc.resolve(&doc.0["components"]["responses"][name]);
    let res = server.request("GET", "/api/nope", &[], b"");
    assert_eq!(res.status, 404);
    doc.assert_body(shared("NotFound"), &res, "GET /api/nope");
    let res = server.request("GET", "/api/check", &[], b"");
    assert_eq!((res.status, res.header("allow")), (405, Some("POST")));
    assert!(shared("MethodNotAllowed")["headers"]["Allow"].is_object());
    doc.assert_body(shared("MethodNotAllowed"), &res, "GET /api/check");
    let res = server.raw(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert_eq!(res.status, 505);
    doc.assert_body(shared("HttpVersionNotSupported"), &res, "HTTP/2");

    // A snippet over a check's memory (with a body limit above it), and
    // headers that do not arrive in time.
    let big = Server::start("project", &["--max-body", "20mb", "--header-timeout", "1"]);
    let code = json!({"code": "let a = 1;\n".repeat(1_400_000), "format": "js"}).to_string();
    let res = big.request("POST", "/api/check", &json, code.as_bytes());
    assert_eq!(res.status, 422, "{}", text(&res));
    described("POST", "/api/check", res);
    let mut stream = TcpStream::connect(("127.0.0.1", big.port)).expect("connect");
    stream
        .write_all(b"GET /api/health HTTP/1.1\r\nHo")
        .expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    let res = Response::parse(&answer);
    assert_eq!(res.status, 408);
    described("GET", "/api/health", res);

    // A rescan that fails.
    let temp = common::fixture("project");
    let gone = Server::start_in(temp, &["--no-watch", "--no-cache"]);
    std::fs::remove_dir_all(&gone.dir).expect("remove DIR");
    let res = gone.request("POST", "/api/recheck", &[], b"");
    assert_eq!(res.status, 500);
    described("POST", "/api/recheck", res);

    // A store that does not answer.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("postgres://dupcheck:pw@127.0.0.1:{port}/store");
    let storeless = Server::start("project", &["--store", &url]);
    let res = storeless.request("GET", "/api/repositories", &[], b"");
    assert_eq!(res.status, 503);
    described("GET", "/api/repositories", res);

    let want = [
        "BadRequest",
        "Forbidden",
        "NotFound",
        "PayloadTooLarge",
        "RequestHeaderFieldsTooLarge",
        "RequestTimeout",
        "ScanError",
        "SnippetTooComplex",
        "StoreUnavailable",
        "URITooLong",
        "UnsupportedFormat",
        "UnsupportedMediaType",
        "ValidationError",
    ];
    assert_eq!(seen, want.into_iter().map(String::from).collect());
}

/// Every example of `value` with the schema it exemplifies, and where.
fn examples<'a>(value: &'a Value, at: String, out: &mut Vec<(String, &'a Value, &'a Value)>) {
    match value {
        Value::Object(map) => {
            // A Media Type Object: its example(s) are of its schema.
            if let Some(schema) = map.get("schema") {
                if let Some(example) = map.get("example") {
                    out.push((format!("{at}/example"), schema, example));
                }
                for (name, example) in map
                    .get("examples")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    out.push((format!("{at}/examples/{name}"), schema, &example["value"]));
                }
            }
            // A Schema Object's own examples (JSON Schema's array).
            let is_schema = map.contains_key("type") || map.contains_key("$ref");
            if let (true, Some(Value::Array(list))) = (is_schema, map.get("examples")) {
                for (i, example) in list.iter().enumerate() {
                    out.push((format!("{at}/examples/{i}"), value, example));
                }
            }
            for (key, child) in map {
                examples(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                examples(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn examples_are_valid_against_their_schemas() {
    let server = Server::start("project", &[]);
    let doc = Document::get(&server);
    let mut found = Vec::new();
    examples(&doc.0, String::new(), &mut found);
    for (at, schema, example) in &found {
        let errors = doc.errors(schema, example);
        assert!(errors.is_empty(), "{at}: {errors:#?}\n{example:#}");
    }
    // Every operation's answer has one, and every error response one per
    // kind of error.
    for (path, item) in doc.0["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            for (status, response) in operation["responses"].as_object().expect("responses") {
                let json = &doc.resolve(response)["content"]["application/json"];
                let has = json.get("example").is_some() || json.get("examples").is_some();
                let documented = json.is_null() || has;
                assert!(documented, "{method} {path} {status} has no example");
            }
        }
    }
    // And the shared error responses show every error the API has.
    let names: BTreeSet<&str> = found
        .iter()
        .filter(|(at, _, _)| at.starts_with("/components/responses/"))
        .filter_map(|(_, _, example)| example["error"].as_str())
        .collect();
    let every = [
        "BadRequest",
        "Busy",
        "Forbidden",
        "HTTPVersionNotSupported",
        "InternalError",
        "MethodNotAllowed",
        "NotAcceptable",
        "NotFound",
        "NotReady",
        "PayloadTooLarge",
        "RequestHeaderFieldsTooLarge",
        "RequestTimeout",
        "ScanError",
        "ShuttingDown",
        "SnippetTooComplex",
        "StoreUnavailable",
        "URITooLong",
        "UnsupportedFormat",
        "UnsupportedMediaType",
        "ValidationError",
    ];
    assert_eq!(names, every.into_iter().collect());
}
