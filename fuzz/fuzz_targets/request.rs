//! A check request's body as any client could send it, JSON or form, with
//! any Content-Type, and a diff check's the same way: decoded and
//! validated without a panic, and every refusal rendered as the JSON error
//! shape with a 4xx status.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use dupcheck::engine::grammar::Registry;
use dupcheck::engine::tokens::Mode;
use dupcheck::interfaces::http::error::ApiError;
use dupcheck::service::diff_check::DiffOptions;
use dupcheck::interfaces::http::body::{decode_object, BodyKind, DiffBodyKind};
use dupcheck::interfaces::http::request::{decode_diff, validate};
use libfuzzer_sys::fuzz_target;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<std::sync::Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

const CONTENT_TYPES: [Option<&str>; 6] = [
    None,
    Some("application/json"),
    Some("application/x-www-form-urlencoded"),
    Some("text/plain"),
    Some("application/problem+json; charset=utf-8"),
    Some("APPLICATION/JSON;x"),
];

fn assert_renders(err: &ApiError) {
    let body: serde_json::Value = serde_json::from_slice(&err.body()).expect("JSON error");
    let status = err.status().as_u16();
    assert!((400..500).contains(&status), "{err:?}");
    assert_eq!(body["statusCode"], status);
    assert!(body["error"].is_string() && body["message"].is_string());
}

fuzz_target!(|data: &[u8]| {
    let [choice, body @ ..] = data else {
        return;
    };
    let mut request = hyper::Request::builder();
    if let Some(content_type) = CONTENT_TYPES[usize::from(*choice) % CONTENT_TYPES.len()] {
        request = request.header("content-type", content_type);
    }
    let Ok(request) = request.body(()) else {
        return;
    };
    let defaults = DiffOptions {
        mode: Mode::Mild,
        near_miss: true,
    };
    match DiffBodyKind::of(&request).and_then(|kind| decode_diff(kind, body, defaults)) {
        // A diff taken as it is was sent as it is.
        Ok((diff, options)) if diff.as_ref() == body => assert_eq!(options, defaults),
        Ok(_) => {}
        Err(err) => assert_renders(&err),
    }
    let fields = BodyKind::of(&request).and_then(|kind| decode_object(kind, body));
    match fields.and_then(|fields| {
        validate(fields, registry(), Path::new("/work/proj"), Mode::Mild, true)
    }) {
        Ok((request, _)) => {
            assert!(!request.code.trim().is_empty());
            if let Some(path) = &request.path {
                assert!(
                    !path.split('/').any(|part| part == ".." || part == "."),
                    "{path}"
                );
            }
        }
        Err(err) => assert_renders(&err),
    }
});
