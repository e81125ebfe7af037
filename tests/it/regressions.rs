//! Regressions found by the clone-injection benchmark (issue 3), one test
//! per class of miss, on the `regressions` fixture.

use crate::common;

use common::Server;
use serde_json::{json, Value};

fn read(rel: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/testdata/regressions/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture")
}

/// `file:startLine-endLine (tokens)` of each duplication.
fn found(body: &Value) -> Vec<String> {
    body["duplications"]
        .as_array()
        .expect("duplications")
        .iter()
        .map(|d| {
            let c = &d["codebaseLocation"];
            format!(
                "{}:{}-{} ({})",
                c["file"].as_str().expect("file"),
                c["startLine"],
                c["endLine"],
                d["tokens"]
            )
        })
        .collect()
}

/// A TypeScript method pasted without its class parsed with errors: `number`
/// became an identifier, `=>` split in two, and the match fell short.
#[test]
fn issue_3_a_typescript_method_without_its_class_matches_whole() {
    let server = Server::start("regressions", &["--mode", "mild", "--min-tokens", "40"]);
    let file = read("ts/action.ts");
    let method: String = file.lines().skip(7).take(9).collect::<Vec<_>>().join("\n");
    assert!(
        method.trim_start().starts_with("public schedule") && method.ends_with("  }"),
        "{method}"
    );
    let (_, body) = server.check(json!({"code": method, "format": "ts"}));
    assert_eq!(found(&body), ["ts/action.ts:8-16 (60)"]);
    // Out of context, `protected` was an identifier and `=>` two tokens.
    let constructor: String = file.lines().skip(3).take(3).collect::<Vec<_>>().join("\n");
    let server = Server::start("regressions", &["--min-tokens", "30", "--min-lines", "3"]);
    let (_, body) = server.check(json!({"code": constructor, "format": "ts"}));
    assert_eq!(found(&body), ["ts/action.ts:4-6 (35)"]);
}

/// A constructor whose head spans lines, pasted without its class, from
/// the middle of its doc comment: the comment's tail was parsed as code and
/// `protected` became an identifier.
#[test]
fn issue_3_a_snippet_cut_inside_a_doc_comment_and_a_multiline_head_matches() {
    let server = Server::start("regressions", &["--min-tokens", "40"]);
    let file = read("ts/scheduler.ts");
    let snippet: String = file.lines().skip(5).take(12).collect::<Vec<_>>().join("\n");
    assert!(
        snippet.starts_with("   *\n") && snippet.ends_with("  }"),
        "{snippet}"
    );
    let (_, body) = server.check(json!({"code": snippet, "format": "typescript"}));
    assert_eq!(found(&body), ["ts/scheduler.ts:10-17 (58)"]);
    assert_eq!(body["duplications"][0]["snippetLocation"]["startLine"], 5);
}

/// A method whose generic head spans lines: tree-sitter's ERROR node covers
/// the whole head, so the wrapper probe must reach past its end.
#[test]
fn issue_3_a_method_with_a_multiline_generic_head_matches_whole() {
    let server = Server::start("regressions", &["--mode", "mild", "--min-tokens", "40"]);
    let file = read("ts/observer.ts");
    let method: String = file.lines().skip(3).take(14).collect::<Vec<_>>().join("\n");
    assert!(
        method.trim_start().starts_with("fetchOptimistic(") && method.ends_with("  }"),
        "{method}"
    );
    let (_, body) = server.check(json!({"code": method, "format": "ts"}));
    assert_eq!(found(&body), ["ts/observer.ts:4-17 (82)"]);
}

/// A renamed variable inside an f-string changed the whole string token.
#[test]
fn issue_3_renamed_names_inside_fstrings_still_match_in_mild_mode() {
    let server = Server::start("regressions", &["--mode", "mild"]);
    let renamed = read("py/report.py")
        .replace("table_name", "name")
        .replace("limit", "n")
        .replace("cursor", "cur");
    let (_, body) = server.check(json!({"code": renamed, "format": "python"}));
    assert_eq!(found(&body), ["py/report.py:1-10 (114)"]);
}

/// Lists of `self.x = x` matched any other such list, at every shift, as
/// false positives.
#[test]
fn issue_3_lists_of_trivial_assignments_are_not_duplications() {
    let server = Server::start("regressions", &["--mode", "mild"]);
    let other: String = (0..12)
        .map(|i| format!("        self.field{i} = field{i}\n"))
        .collect();
    let code = format!(
        "class Connection:\n    def __init__(self, *fields):\n        super().__init__()\n{other}"
    );
    let (_, body) = server.check(json!({"code": code, "format": "python"}));
    assert_eq!(found(&body), Vec::<String>::new());
    let (_, stats) = server.get("/api/stats");
    assert_eq!(stats["statistics"]["total"]["clones"], 0);
}
