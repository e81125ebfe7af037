//! Every language, as a user meets it: a function of a real-looking file,
//! copied verbatim, re-laid-out, renamed and with changed literals, is
//! found by `/api/check` in the mode meant to find it, at the exact lines
//! of the file and of the snippet.
//!
//! The cases are data, one folder per format under `testdata/languages`:
//! the format's source files (indexed), and `copies.txt`, whose cases each
//! start with a line `=== WHAT MODE FILE FIRST-LAST [FORMAT]` (the copy is
//! posted in MODE, as the folder's format unless FORMAT is given, and must
//! be reported in FILE, one of the folder's, from line FIRST to line LAST)
//! followed by the copy's code. So a `<script>` of a Vue component posted
//! as TypeScript finds the component, and C code finds a C++ file.

use crate::common;

use std::path::Path;

use common::{write, Server};
use serde_json::{json, Value};

/// One copy to post, and where it must be found.
struct Case {
    format: String,
    what: String,
    mode: String,
    file: String,
    lines: (u64, u64),
    code: String,
}

fn cases() -> (tempfile::TempDir, Vec<Case>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/languages");
    let temp = tempfile::tempdir().expect("temp dir");
    let mut cases = Vec::new();
    let mut formats: Vec<_> = std::fs::read_dir(&root)
        .expect("testdata/languages")
        .map(|e| e.expect("entry").path())
        .collect();
    formats.sort();
    for dir in formats {
        let format = dir.file_name().unwrap().to_string_lossy().into_owned();
        if !common::compiled(&[format.as_str()]) {
            continue;
        }
        for entry in std::fs::read_dir(&dir).expect("format folder") {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name != "copies.txt" {
                write(
                    temp.path(),
                    &format!("{format}/{name}"),
                    std::fs::read(&path).expect("source file"),
                );
            }
        }
        // A folder without cases is reported by the registry's tests
        // (grammar::tests::every_format_has_golden_tokens_and_planted_copies).
        let Ok(copies) = std::fs::read_to_string(dir.join("copies.txt")) else {
            continue;
        };
        for case in copies.split("\n=== ").map(|c| c.trim_start_matches("=== ")) {
            let (header, code) = case.split_once('\n').expect("a header line");
            let fields: Vec<&str> = header.split_whitespace().collect();
            let (what, mode, file, lines, posted_as) = match fields[..] {
                [what, mode, file, lines] => (what, mode, file, lines, format.as_str()),
                [what, mode, file, lines, posted_as] => (what, mode, file, lines, posted_as),
                _ => panic!("{format}/copies.txt: bad header {header:?}"),
            };
            let (first, last) = lines.split_once('-').expect("FIRST-LAST");
            if posted_as != format && !common::compiled(&[posted_as]) {
                continue;
            }
            cases.push(Case {
                format: posted_as.to_owned(),
                what: what.to_owned(),
                mode: mode.to_owned(),
                file: format!("{format}/{file}"),
                lines: (first.parse().unwrap(), last.parse().unwrap()),
                code: code.to_owned(),
            });
        }
    }
    (temp, cases)
}

/// First and last lines of `code` that hold more than blanks.
fn code_lines(code: &str) -> (u64, u64) {
    let filled: Vec<u64> = code
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, _)| i as u64 + 1)
        .collect();
    (filled[0], *filled.last().unwrap())
}

#[test]
fn copies_are_found_in_their_mode_at_exact_lines() {
    let (temp, cases) = cases();
    let mut failures = Vec::new();
    for mode in ["strict", "mild", "weak"] {
        let of_mode: Vec<&Case> = cases.iter().filter(|c| c.mode == mode).collect();
        if of_mode.is_empty() {
            continue;
        }
        let mut server = Server::spawn(temp.path(), &["--mode", mode, "--no-watch", "--no-cache"]);
        server.wait_ready();
        for case in of_mode {
            let label = format!("{} {} ({mode}, in {})", case.format, case.what, case.file);
            let (status, body) = server.check(json!({"code": case.code, "format": case.format}));
            if status != 200 {
                failures.push(format!("{label}: status {status}: {body}"));
                continue;
            }
            let (first, last) = code_lines(&case.code);
            let want = json!({
                "file": case.file,
                "startLine": case.lines.0,
                "endLine": case.lines.1,
                "snippetStartLine": first,
                "snippetEndLine": last,
            });
            let found: Vec<Value> = body["duplications"]
                .as_array()
                .expect("duplications")
                .iter()
                .filter(|d| d["codebaseLocation"]["file"] == case.file)
                .map(|d| {
                    json!({
                        "file": d["codebaseLocation"]["file"],
                        "startLine": d["codebaseLocation"]["startLine"],
                        "endLine": d["codebaseLocation"]["endLine"],
                        "snippetStartLine": d["snippetLocation"]["startLine"],
                        "snippetEndLine": d["snippetLocation"]["endLine"],
                    })
                })
                .collect();
            if found != [want.clone()] {
                failures.push(format!("{label}: want {want}, got {found:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A component's script, posted as the component, finds the `.ts` file it
/// was taken from, with the lines of the script inside the component.
#[test]
fn a_markup_snippet_finds_its_script_in_a_script_file() {
    needs_formats!("vue", "typescript");
    let temp = tempfile::tempdir().expect("temp dir");
    let vue = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/languages/vue/TodoList.vue"),
    )
    .expect("fixture");
    // The component's script, as a TypeScript module of its own.
    let script: String = vue
        .lines()
        .skip_while(|l| !l.starts_with("<script"))
        .skip(1)
        .take_while(|l| !l.starts_with("</script>"))
        .map(|l| format!("{l}\n"))
        .collect();
    write(temp.path(), "src/todos.ts", format!("// Todos.\n{script}"));
    write(
        temp.path(),
        "public/config.html",
        "<script type=\"application/json\">\n{\"todos\": []}\n</script>\n",
    );
    let server = Server::start_in(temp, &["--no-watch"]);
    let (status, body) = server.check(json!({"code": vue, "format": "vue"}));
    assert_eq!(status, 200, "{body}");
    let found: Vec<Value> = body["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            json!([
                d["codebaseLocation"]["file"],
                d["codebaseLocation"]["startLine"],
                d["codebaseLocation"]["endLine"],
                d["snippetLocation"]["startLine"],
                d["snippetLocation"]["endLine"],
                d["format"],
            ])
        })
        .collect();
    // Lines 10-36 of the component are lines 4-30 of the module (its
    // import, line 2, is no tokens).
    assert_eq!(
        found,
        [json!(["src/todos.ts", 4, 30, 10, 36, "typescript"])]
    );
}

/// C code posted as C finds its copy in a C++ file, and a script without
/// extension is indexed by its shebang line.
#[test]
fn c_finds_cpp_and_shebang_scripts_are_indexed() {
    needs_formats!("c", "cpp", "python");
    let temp = tempfile::tempdir().expect("temp dir");
    let c_function = "static int checksum(const unsigned char *data, size_t len, int seed)\n{\n    int sum = seed;\n    size_t i;\n    for (i = 0; i < len; i++) {\n        sum = (sum << 1) ^ data[i];\n        if (sum > 65521) {\n            sum -= 65521;\n        }\n    }\n    return sum;\n}\n";
    write(
        temp.path(),
        "native/codec.cpp",
        format!(
            "#include <cstddef>\n\nnamespace codec {{\n\n{c_function}\n}}  // namespace codec\n"
        ),
    );
    let script = "import os\nimport sys\n\n\ndef walk_sizes(root, limit=100):\n    sizes = {}\n    for folder, _, names in os.walk(root):\n        for name in names:\n            path = os.path.join(folder, name)\n            sizes[path] = os.path.getsize(path)\n            if len(sizes) >= limit:\n                return sizes\n    return sizes\n";
    write(
        temp.path(),
        "bin/sizes",
        format!("#!/usr/bin/env python3\n{script}"),
    );
    write(temp.path(), "bin/notes", format!("not a script\n{script}"));
    let server = Server::start_in(temp, &["--no-watch"]);
    let found = |format: &str, code: &str| -> Vec<Value> {
        let (status, body) = server.check(json!({"code": code, "format": format}));
        assert_eq!(status, 200, "{body}");
        body["duplications"]
            .as_array()
            .expect("duplications")
            .iter()
            .map(|d| {
                json!([
                    d["codebaseLocation"]["file"],
                    d["codebaseLocation"]["startLine"],
                    d["codebaseLocation"]["endLine"],
                    d["format"],
                ])
            })
            .collect()
    };
    assert_eq!(
        found("c", c_function),
        [json!(["native/codec.cpp", 5, 16, "cpp"])]
    );
    // From `def` (its imports are no tokens).
    assert_eq!(
        found("python", script),
        [json!(["bin/sizes", 6, 14, "python"])]
    );
}
