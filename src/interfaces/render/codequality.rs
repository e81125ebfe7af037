//! GitLab's Code Quality report (`gl-code-quality-report.json`): the
//! subset of the Code Climate issue format that GitLab reads from a job's
//! `artifacts: reports: codequality`.
//!
//! In: [`Finding`]s, one per place of duplicated code (a project's clones
//! give one for each of their two places; a diff's duplications one for
//! the added code). Out: a JSON array with one issue per finding:
//! `description`, `check_name` (the SARIF rule's id), `fingerprint`,
//! `severity`, `location.path` and `location.lines` (`begin`, `end`), plus
//! Code Climate's `type`, `categories` and `other_locations`, which
//! GitLab ignores.
//!
//! Invariants: deterministic (findings in the order given); a place in
//! another repository (`report --store`) is never an issue's location, as
//! it is no file of the repository GitLab shows; a fingerprint is 32 hex
//! digits, the finding's content hash (the JSON report's `fingerprint`)
//! then a fixed hash ([`fnv1a`]) of its path and of how many findings of
//! the same content and rule came before it in that file, and never of a
//! line number, so code moved within its file keeps its issue, and two
//! places never share one (GitLab keeps one issue per fingerprint).

use serde_json::{json, Value};

use crate::engine::hash::{fnv1a, HashMap};
use crate::interfaces::render::sarif::{plain_message, rule_id};
use crate::service::answer::Place;
use crate::service::findings::{Finding, Rule};

/// The Code Quality report of `findings`, as pretty JSON ending with a
/// newline.
pub(crate) fn code_quality(findings: &[Finding]) -> String {
    let mut occurrences: HashMap<(&str, u64, Rule), u32> = HashMap::new();
    let issues: Vec<Value> = findings
        .iter()
        .filter(|f| f.location.repository.is_none() && !f.location.rel.is_empty())
        .map(|f| {
            let n = occurrences
                .entry((f.location.rel.as_str(), f.content_hash, f.rule))
                .or_insert(0);
            *n += 1;
            issue(f, *n)
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&issues).unwrap_or_default();
    text.push('\n');
    text
}

/// The fingerprint of the `occurrence`th finding of its content and rule
/// in its file.
fn fingerprint(f: &Finding, occurrence: u32) -> String {
    let rule = rule_id(f.rule);
    let place = format!("{}\0{rule}\0{occurrence}", f.location.rel);
    format!("{:016x}{:016x}", f.content_hash, fnv1a(place.as_bytes()))
}

/// GitLab's severity of a finding: a copy left behind by a change is
/// likelier a bug than a copy.
fn severity(rule: Rule) -> &'static str {
    match rule {
        Rule::Duplicate => "minor",
        Rule::Inconsistent => "major",
    }
}

/// A place's `location`: its path and first and last lines.
fn location(place: &Place) -> Value {
    let begin = place.span.start.line.max(1);
    json!({
        "path": place.rel,
        "lines": { "begin": begin, "end": place.span.end.line.max(begin) },
    })
}

/// One issue.
fn issue(f: &Finding, occurrence: u32) -> Value {
    let others: Vec<Value> = f
        .related
        .iter()
        .filter(|r| r.repository.is_none())
        .map(location)
        .collect();
    json!({
        "type": "issue",
        "check_name": rule_id(f.rule),
        "description": plain_message(f),
        "categories": ["Duplication"],
        "fingerprint": fingerprint(f, occurrence),
        "severity": severity(f.rule),
        "location": location(&f.location),
        "other_locations": others,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::code_quality;
    use crate::engine::matching::Span;
    use crate::engine::tokens::Position;
    use crate::service::answer::Place;
    use crate::service::findings::{Finding, Rule};

    fn place(path: &str, line: u32, repository: Option<&str>) -> Place {
        Place {
            path: path.to_owned(),
            rel: path.to_owned(),
            repository: repository.map(str::to_owned),
            format: "rust".to_owned(),
            span: Span {
                start: Position { line, column: 1 },
                end: Position {
                    line: line + 9,
                    column: 2,
                },
            },
            fragment: None,
            symbol: None,
        }
    }

    fn finding(path: &str, line: u32, related: &[(&str, u32)], hash: u64) -> Finding {
        Finding {
            location: place(path, line, None),
            related: related.iter().map(|&(p, l)| place(p, l, None)).collect(),
            lines: 10,
            tokens: 70,
            content_hash: hash,
            rule: Rule::Duplicate,
            similarity: None,
            renamed: Vec::new(),
        }
    }

    fn check(findings: &[Finding]) -> Vec<Value> {
        let text = code_quality(findings);
        assert!(text.ends_with("]\n"), "{text}");
        serde_json::from_str::<Value>(&text)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    #[test]
    fn an_issue_in_full() {
        let issues = check(&[finding("src/a.rs", 3, &[("src/b.rs", 20)], 0xfeed)]);
        let fingerprint = issues[0]["fingerprint"].as_str().unwrap();
        assert_eq!(fingerprint.len(), 32, "{fingerprint}");
        assert!(fingerprint.starts_with("000000000000feed"), "{fingerprint}");
        assert_eq!(
            issues,
            [json!({
                "type": "issue",
                "check_name": "duplicate-code",
                "description": "Duplicated code: 10 lines (70 tokens), also at src/b.rs:20-29.",
                "categories": ["Duplication"],
                "fingerprint": fingerprint,
                "severity": "minor",
                "location": { "path": "src/a.rs", "lines": { "begin": 3, "end": 12 } },
                "other_locations": [
                    { "path": "src/b.rs", "lines": { "begin": 20, "end": 29 } },
                ],
            })]
        );
    }

    #[test]
    fn fingerprints_stay_when_lines_move_and_differ_between_places() {
        let findings = [
            finding("a.rs", 1, &[("b.rs", 1)], 7),
            finding("b.rs", 1, &[("a.rs", 1)], 7),
            finding("a.rs", 40, &[("b.rs", 1)], 7),
            finding("a.rs", 80, &[("b.rs", 1)], 8),
        ];
        let prints = |findings: &[Finding]| -> Vec<String> {
            check(findings)
                .iter()
                .map(|i| i["fingerprint"].as_str().unwrap().to_owned())
                .collect()
        };
        let before = prints(&findings);
        let mut unique = before.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{before:?}");
        let moved: Vec<Finding> = findings
            .iter()
            .cloned()
            .map(|mut f| {
                f.location.span.start.line += 5;
                f.location.span.end.line += 5;
                f
            })
            .collect();
        assert_eq!(prints(&moved), before);
    }

    #[test]
    fn places_in_other_repositories_are_no_issue_locations() {
        let mut elsewhere = finding("x.rs", 1, &[], 1);
        elsewhere.location.repository = Some("github.com/acme/shop".into());
        let mut here = finding("a.rs", 1, &[], 2);
        here.related
            .push(place("x.rs", 5, Some("github.com/acme/shop")));
        let issues = check(&[elsewhere, here]);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0]["location"]["path"], "a.rs");
        assert_eq!(
            issues[0]["description"],
            "Duplicated code: 10 lines (70 tokens), also at github.com/acme/shop/x.rs:5-14."
        );
        assert_eq!(issues[0]["other_locations"], json!([]));
        assert_eq!(code_quality(&[]), "[]\n");
    }
}
