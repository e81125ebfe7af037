//! Findings for CI and review bots: SARIF 2.1.0 (GitHub code scanning and
//! other viewers) and reviewdog's rdjsonl.
//!
//! In: [`Finding`]s, a neutral form of a duplication (a snippet's or a
//! diff's) or of a clone: where it is, the places it duplicates, its size
//! and a hash of its content. Out: a SARIF log with one rule,
//! `duplicate-code`, and one result per finding ([`sarif`]); or one reviewdog
//! diagnostic per line ([`rdjsonl`]).
//!
//! A snippet checked without a path is no file: its findings' `location`
//! has an empty `path`, and the log then carries the snippet as the run's
//! one artifact (its `contents`), which those locations name by index
//! ([`sarif_with`]). Notices (a diff's files skipped or checked from their
//! hunks alone) become the run's tool execution notifications.
//!
//! Invariants: the output is deterministic (findings in the order given);
//! every SARIF log validates against the OASIS 2.1.0 schema in
//! `testdata/sarif/` (tests here); a result's message links each related
//! location by its id (`[src/b.rs:10](1)`); `primaryLocationLineHash` comes
//! from the finding's content hash, not from its line numbers, so a clone
//! keeps its alert when code above it moves; SARIF columns count characters
//! (`columnKind` `unicodeCodePoints`), rdjsonl columns UTF-8 bytes, as
//! reviewdog wants.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use serde_json::{json, Map, Value};

pub(crate) use crate::service::answer::Place;
pub(crate) use crate::service::findings::{Finding, Notice, Rule};

use super::answers::rounded;
use crate::engine::hash::HashMap;
use crate::engine::text::Text;
use crate::service::answer::renaming;

/// The rule every duplication is reported under.
pub(crate) const RULE_ID: &str = "duplicate-code";

/// The rule of a change made to one copy of a clone and not to another.
pub(crate) const INCONSISTENT_RULE_ID: &str = "inconsistent-change";

/// Where SARIF logs say their schema is (the one GitHub's own tools use).
const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The links a message spells out; the rest are counted.
const MAX_LINKS: usize = 10;

/// Code that is no file: a snippet checked without a path. Locations with
/// an empty path are in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snippet<'a> {
    /// The snippet's text.
    pub text: &'a str,
    /// Its format's name (SARIF's `sourceLanguage`).
    pub language: &'a str,
}

/// What a SARIF log may carry besides its findings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras<'a> {
    /// The snippet that locations with an empty path are in.
    pub snippet: Option<Snippet<'a>>,
    /// Notices, in order.
    pub notices: &'a [Notice],
}

/// The URL of the project, if Cargo.toml names one.
fn homepage() -> Option<&'static str> {
    [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|u| !u.is_empty())
}

/// The SARIF 2.1.0 log of `findings`: one run of the tool `dupcheck`, one
/// result per finding.
#[cfg(test)]
pub(crate) fn sarif(findings: &[Finding]) -> Value {
    sarif_with(findings, &Extras::default())
}

/// Like [`sarif`], with the snippet that locations without a path are in,
/// and notices.
pub(crate) fn sarif_with(findings: &[Finding], extras: &Extras<'_>) -> Value {
    let mut occurrences: HashMap<(&str, u64, Rule), u32> = HashMap::new();
    // The second rule is listed only in a log that uses it.
    let inconsistent = findings.iter().any(|f| f.rule == Rule::Inconsistent);
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let n = occurrences
                .entry((f.location.rel.as_str(), f.content_hash, f.rule))
                .or_insert(0);
            *n += 1;
            result(f, *n)
        })
        .collect();
    let mut rules = vec![rule()];
    if inconsistent {
        rules.push(inconsistent_rule());
    }
    let mut driver = json!({
        "name": "dupcheck",
        "version": crate::VERSION,
        "semanticVersion": crate::VERSION,
        "rules": rules,
    });
    if let Some(uri) = homepage() {
        driver["informationUri"] = json!(uri);
    }
    let mut run = json!({
        "tool": { "driver": driver },
        "columnKind": "unicodeCodePoints",
        "results": results,
    });
    if let Some(snippet) = extras.snippet {
        run["artifacts"] = json!([{
            "description": { "text": "The snippet checked (sent without a path)" },
            "contents": { "text": snippet.text },
            "sourceLanguage": snippet.language,
        }]);
    }
    if !extras.notices.is_empty() {
        let notifications: Vec<Value> = extras.notices.iter().map(notification).collect();
        run["invocations"] = json!([{
            "executionSuccessful": true,
            "toolExecutionNotifications": notifications,
        }]);
    }
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [run],
    })
}

/// A notice as a SARIF notification.
fn notification(notice: &Notice) -> Value {
    let mut value = json!({
        "level": if notice.warning { "warning" } else { "note" },
        "message": { "text": notice.text },
    });
    if let Some(path) = &notice.path {
        value["locations"] =
            json!([{ "physicalLocation": { "artifactLocation": artifact(path) } }]);
    }
    value
}

/// The one rule.
fn rule() -> Value {
    json!({
        "id": RULE_ID,
        "name": "DuplicateCode",
        "shortDescription": { "text": "Duplicated code" },
        "fullDescription": {
            "text": "A block of code whose tokens equal those of code elsewhere in the codebase (identifiers and literals compared as the scan's mode says, comments and layout ignored)."
        },
        "help": {
            "text": "This code duplicates code elsewhere: the related locations are the other copies. A fix or change made in one copy is easily missed in the others. Move the shared code into one function, module or component and use it from each place; if the copies are meant to diverge, dismiss the alert.",
            "markdown": "**Duplicated code.** The related locations are the other copies of this code. A fix or change made in one copy is easily missed in the others.\n\nMove the shared code into one function, module or component and use it from each place. If the copies are meant to diverge, dismiss the alert."
        },
        "defaultConfiguration": { "level": "warning" },
        "properties": {
            "tags": ["maintainability", "duplicate-code"],
            "precision": "high",
            "problem.severity": "warning",
        },
    })
}

/// The rule of inconsistent changes.
fn inconsistent_rule() -> Value {
    json!({
        "id": INCONSISTENT_RULE_ID,
        "name": "InconsistentChange",
        "shortDescription": { "text": "A copy of duplicated code changed, and not its other copies" },
        "fullDescription": {
            "text": "The change makes this copy of duplicated code differ from its other copies, which it leaves as they were: a fix made in one copy is often needed in the others."
        },
        "help": {
            "text": "This change was made to one copy of duplicated code; the related locations are the copies it did not change the same way. If the change is a fix, make it in those copies too, or better, keep one copy and call it from each place; if the copies are meant to diverge, dismiss the alert.",
            "markdown": "**A copy changed, not its twins.** The related locations are copies of this code that the change left as they were. A fix made in one copy is often needed in the others.\n\nIf the change is a fix, make it in those copies too, or better, keep one copy and call it from each place. If the copies are meant to diverge, dismiss the alert."
        },
        "defaultConfiguration": { "level": "warning" },
        "properties": {
            "tags": ["maintainability", "duplicate-code", "correctness"],
            "precision": "medium",
            "problem.severity": "warning",
        },
    })
}

/// One finding as a SARIF result, the `occurrence`th of its content in its
/// file.
fn result(f: &Finding, occurrence: u32) -> Value {
    let links: Vec<String> = f
        .related
        .iter()
        .enumerate()
        .map(|(i, r)| format!("[{}]({})", escape_text(&place(r)), i + 1))
        .collect();
    let related: Vec<Value> = f
        .related
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "id": i + 1,
                "physicalLocation": physical(r),
                "message": { "text": escape_text(&place(r)) },
            })
        })
        .collect();
    let (rule_id, rule_index, text) = match f.rule {
        Rule::Duplicate => (RULE_ID, 0, message(f, &links)),
        Rule::Inconsistent => (INCONSISTENT_RULE_ID, 1, left_behind(&links)),
    };
    let mut result = Map::new();
    result.insert("ruleId".into(), json!(rule_id));
    result.insert("ruleIndex".into(), json!(rule_index));
    result.insert("level".into(), json!("warning"));
    result.insert("message".into(), json!({ "text": text }));
    result.insert(
        "locations".into(),
        json!([{ "physicalLocation": physical(&f.location) }]),
    );
    if !related.is_empty() {
        result.insert("relatedLocations".into(), Value::Array(related));
    }
    result.insert(
        "partialFingerprints".into(),
        json!({ "primaryLocationLineHash": format!("{:016x}:{occurrence}", f.content_hash) }),
    );
    let mut properties = json!({ "lines": f.lines, "tokens": f.tokens });
    if let Some(similarity) = f.similarity {
        properties["similarity"] = json!(rounded(similarity));
    }
    result.insert("properties".into(), properties);
    Value::Object(result)
}

/// "Duplicated code: 12 lines (87 tokens), also at A, B and C." with the
/// places as given (links, or plain places); past [`MAX_LINKS`] they are
/// counted. A near-miss copy says how similar it is: "Near-miss copy
/// (97.4 % similar): …". The definitions the code lies in are named:
/// "Duplicated code in `total()`: …. It duplicates `sum()`." (the second
/// sentence for one place duplicated).
fn message(f: &Finding, places: &[String]) -> String {
    let lines = plural(f.lines, "line");
    let tokens = plural(f.tokens, "token");
    let within = (f.location.symbol_said()).map_or(String::new(), |s| format!(" in {s}"));
    let mut text = match f.similarity {
        Some(similarity) => format!(
            "Near-miss copy{within} ({} similar): {lines} ({tokens} matched)",
            percent_similar(similarity)
        ),
        None => format!("Duplicated code{within}: {lines} ({tokens})"),
    };
    let shown = &places[..places.len().min(MAX_LINKS)];
    if let Some((last, first)) = shown.split_last() {
        text.push_str(", also at ");
        if first.is_empty() {
            text.push_str(last);
        } else {
            text.push_str(&first.join(", "));
            if places.len() > shown.len() {
                text.push_str(&format!(", {last} and {} more", places.len() - shown.len()));
            } else {
                text.push_str(&format!(" and {last}"));
            }
        }
    }
    text.push('.');
    if let [only] = &f.related[..] {
        if let Some(said) = only.symbol_said() {
            text.push_str(&format!(" It duplicates {said}."));
        }
    }
    if let Some(renaming) = renaming(&f.renamed) {
        text.push_str(&format!(" Renamed: {renaming}."));
    }
    text
}

/// A similarity as a percentage of one decimal, as JSON's three decimals
/// of it: "97.4%".
pub(crate) fn percent_similar(similarity: f64) -> String {
    format!("{:.1}%", rounded(similarity) * 100.0)
}

/// "Changed here, not in its copy at A." with the copies as given (links),
/// past [`MAX_LINKS`] counted.
fn left_behind(places: &[String]) -> String {
    let shown = &places[..places.len().min(MAX_LINKS)];
    let more = places.len() - shown.len();
    let listed = match shown.split_last() {
        Some((last, rest)) if !rest.is_empty() && more == 0 => {
            format!("{} and {last}", rest.join(", "))
        }
        _ if more > 0 => format!("{} and {more} more", shown.join(", ")),
        _ => shown.join(""),
    };
    let noun = if places.len() == 1 { "copy" } else { "copies" };
    format!(
        "This copy of duplicated code changed; its {noun} at {listed} did not change the same way."
    )
}

fn plural(n: u32, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `src/b.rs:10`; in another repository, `github.com/acme/shop/src/b.rs:10`.
fn place(r: &Place) -> String {
    format!("{}:{}", named(r), r.span.start.line.max(1))
}

/// A place's file as messages name it: its path, after its repository's
/// name when it is another repository's.
fn named(r: &Place) -> String {
    match &r.repository {
        Some(repository) => format!("{repository}/{}", r.rel),
        None => r.rel.clone(),
    }
}

/// Text of a SARIF message, or of a link in one: a literal `[` or `]` is
/// escaped with `\` (SARIF 2.1.0, messages with embedded links), so that
/// only our links are links.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// What a relative URI reference may not hold raw: besides controls,
/// spaces and non-ASCII, the delimiters and `:` (a first segment with `:`
/// would read as a scheme).
const URI_ESCAPED: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b':')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A file as a SARIF `artifactLocation`, relative to `%SRCROOT%`; the
/// run's one artifact (the snippet) for an empty path.
fn artifact(path: &str) -> Value {
    if path.is_empty() {
        return json!({ "index": 0 });
    }
    json!({
        "uri": utf8_percent_encode(path, URI_ESCAPED).to_string(),
        "uriBaseId": "%SRCROOT%",
    })
}

/// A place as a SARIF `physicalLocation`. A place in another repository
/// of the store is relative to that repository's root: its `uriBaseId` is
/// the repository's name, never `%SRCROOT%`, so no viewer takes it for a
/// file of the repository analysed.
fn physical(r: &Place) -> Value {
    let (start, end) = (r.span.start, r.span.end);
    let artifact = match &r.repository {
        Some(repository) => json!({
            "uri": utf8_percent_encode(&r.rel, URI_ESCAPED).to_string(),
            "uriBaseId": repository,
        }),
        None => artifact(&r.rel),
    };
    json!({
        "artifactLocation": artifact,
        "region": {
            "startLine": start.line.max(1),
            "startColumn": start.column.max(1),
            "endLine": end.line.max(1),
            "endColumn": end.column.max(1),
        },
    })
}

/// The findings as reviewdog diagnostics, one JSON object per line (each
/// line ends with `\n`). `file_text` gives a file's text by path, to turn
/// character columns into reviewdog's UTF-8 byte columns; where it gives
/// nothing, columns are kept (right for ASCII lines). Related places are
/// named in the message: reviewdog's format has no field for them. A
/// location with an empty path (a snippet's) has no `path`. Each path's
/// text is asked for once.
pub(crate) fn rdjsonl<'t>(
    findings: &[Finding],
    file_text: impl Fn(&str) -> Option<Text<'t>>,
) -> String {
    let mut out = String::new();
    let mut texts: HashMap<&str, Option<Text<'t>>> = HashMap::default();
    for f in findings {
        let at = &f.location;
        let text = texts
            .entry(&at.rel)
            .or_insert_with(|| file_text(&at.rel))
            .as_deref();
        let position = |line: u32, column: u32| {
            let column = text.map_or(column, |t| byte_column(t, line, column));
            json!({ "line": line.max(1), "column": column.max(1) })
        };
        let mut source = json!({ "name": "dupcheck" });
        if let Some(uri) = homepage() {
            source["url"] = json!(uri);
        }
        let mut location = json!({
            "range": {
                "start": position(at.span.start.line, at.span.start.column),
                "end": position(at.span.end.line, at.span.end.column),
            },
        });
        if !at.rel.is_empty() {
            location["path"] = json!(at.rel);
        }
        let diagnostic = json!({
            "message": plain_message(f),
            "location": location,
            "severity": "WARNING",
            "source": source,
            "code": { "value": rule_id(f.rule) },
        });
        out.push_str(&diagnostic.to_string());
        out.push('\n');
    }
    out
}

/// The id of a finding's rule.
pub(crate) fn rule_id(rule: Rule) -> &'static str {
    match rule {
        Rule::Duplicate => RULE_ID,
        Rule::Inconsistent => INCONSISTENT_RULE_ID,
    }
}

/// A finding's message without links, its related places named with
/// their lines (`src/b.rs:10-21`), for formats that cannot link them
/// (rdjsonl, GitLab's Code Quality).
pub(crate) fn plain_message(f: &Finding) -> String {
    let places: Vec<String> = f
        .related
        .iter()
        .map(|r| {
            let (start, end) = (r.span.start.line, r.span.end.line);
            if end > start {
                format!("{}:{start}-{end}", named(r))
            } else {
                place(r)
            }
        })
        .collect();
    match f.rule {
        Rule::Duplicate => message(f, &places),
        Rule::Inconsistent => left_behind(&places),
    }
}

/// The 1-based UTF-8 byte column of the 1-based character `column` of
/// `line` in `text`; columns past the line's end count one byte each.
fn byte_column(text: &str, line: u32, column: u32) -> u32 {
    let Some(content) = text.split('\n').nth(line.saturating_sub(1) as usize) else {
        return column;
    };
    let wanted = column.saturating_sub(1) as usize;
    let (mut taken, mut bytes) = (0, 0);
    for c in content.chars().take(wanted) {
        taken += 1;
        bytes += c.len_utf8();
    }
    u32::try_from(bytes + (wanted - taken) + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "sarif_schema.rs"]
mod schema;

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{rdjsonl, sarif, sarif_with, Extras, Finding, Notice, Place, Snippet, RULE_ID};
    use crate::engine::matching::Span;
    use crate::engine::tokens::Position;

    /// The place at `path` from `start` to `end` (line, column).
    fn at(path: &str, start: (u32, u32), end: (u32, u32)) -> Place {
        Place {
            path: path.to_owned(),
            rel: path.to_owned(),
            repository: None,
            format: "rust".to_owned(),
            span: Span {
                start: Position {
                    line: start.0,
                    column: start.1,
                },
                end: Position {
                    line: end.0,
                    column: end.1,
                },
            },
            fragment: None,
            symbol: None,
        }
    }

    fn region(path: &str, start_line: u32, end_line: u32) -> Place {
        at(path, (start_line, 5), (end_line, 2))
    }

    fn finding(path: &str, line: u32, related: &[(&str, u32)], hash: u64) -> Finding {
        Finding {
            location: region(path, line, line + 11),
            related: related.iter().map(|&(p, l)| region(p, l, l + 11)).collect(),
            lines: 12,
            tokens: 87,
            content_hash: hash,
            rule: super::Rule::Duplicate,
            similarity: None,
            renamed: Vec::new(),
        }
    }

    use super::schema::{assert_valid as validate, schema_errors};

    #[test]
    fn the_schema_check_catches_what_viewers_refuse() {
        let log = sarif(&[finding("a.rs", 1, &[("b.rs", 2)], 0)]);
        let physical = "/runs/0/results/0/locations/0/physicalLocation";
        let mut bad_line = log.clone();
        *bad_line
            .pointer_mut(&format!("{physical}/region/startLine"))
            .unwrap() = json!(0);
        let mut bad_uri = log.clone();
        *bad_uri
            .pointer_mut(&format!("{physical}/artifactLocation/uri"))
            .unwrap() = json!("a b.rs");
        let mut bad_level = log.clone();
        *bad_level.pointer_mut("/runs/0/results/0/level").unwrap() = json!("severe");
        for bad in [bad_line, bad_uri, bad_level] {
            assert_eq!(schema_errors(&bad).len(), 1, "{bad}");
        }
        assert_eq!(schema_errors(&log), Vec::<String>::new());
    }

    /// The SARIF log of `findings`, validated, and its results.
    fn check(findings: &[Finding]) -> (Value, Vec<Value>) {
        let log = sarif(findings);
        validate(&log);
        let results = log["runs"][0]["results"].as_array().unwrap().clone();
        assert_eq!(results.len(), findings.len());
        (log, results)
    }

    #[test]
    fn the_driver_and_its_rule_are_what_code_scanning_needs() {
        let (log, _) = check(&[]);
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(
            log["$schema"],
            "https://json.schemastore.org/sarif-2.1.0.json"
        );
        let driver = &log["runs"][0]["tool"]["driver"];
        assert_eq!(driver["name"], "dupcheck");
        assert_eq!(driver["version"], crate::VERSION);
        let homepage = [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
            .into_iter()
            .find(|u| !u.is_empty());
        assert_eq!(driver["informationUri"].as_str(), homepage);
        let rules = driver["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 1);
        let rule = &rules[0];
        assert_eq!(rule["id"], RULE_ID);
        assert_eq!(rule["name"], "DuplicateCode");
        for text in [
            &rule["shortDescription"]["text"],
            &rule["fullDescription"]["text"],
            &rule["help"]["text"],
            &rule["help"]["markdown"],
        ] {
            assert!(text.as_str().is_some_and(|t| t.len() > 10), "{rule}");
        }
        assert_eq!(rule["defaultConfiguration"]["level"], "warning");
        assert_eq!(log["runs"][0]["columnKind"], "unicodeCodePoints");
    }

    #[test]
    fn a_result_in_full() {
        let (_, results) = check(&[finding(
            "src/a.rs",
            3,
            &[("src/b.rs", 10), ("lib/c.rs", 40)],
            0xfeed,
        )]);
        let location = |path: &str, line: u32| {
            json!({
                "artifactLocation": { "uri": path, "uriBaseId": "%SRCROOT%" },
                "region": { "startLine": line, "startColumn": 5, "endLine": line + 11, "endColumn": 2 },
            })
        };
        assert_eq!(
            results[0],
            json!({
                "ruleId": "duplicate-code",
                "ruleIndex": 0,
                "level": "warning",
                "message": {
                    "text": "Duplicated code: 12 lines (87 tokens), also at [src/b.rs:10](1) and [lib/c.rs:40](2)."
                },
                "locations": [{ "physicalLocation": location("src/a.rs", 3) }],
                "relatedLocations": [
                    { "id": 1, "physicalLocation": location("src/b.rs", 10), "message": { "text": "src/b.rs:10" } },
                    { "id": 2, "physicalLocation": location("lib/c.rs", 40), "message": { "text": "lib/c.rs:40" } },
                ],
                "partialFingerprints": { "primaryLocationLineHash": "000000000000feed:1" },
                "properties": { "lines": 12, "tokens": 87 },
            })
        );
    }

    /// The ids that `text` links to, in order.
    fn linked_ids(text: &str) -> Vec<u64> {
        text.split("](")
            .skip(1)
            .map(|rest| rest[..rest.find(')').unwrap()].parse().unwrap())
            .collect()
    }

    #[test]
    fn every_message_link_names_a_related_location() {
        let many: Vec<(String, u32)> = (1..=14).map(|i| (format!("src/m{i}.rs"), i)).collect();
        let many: Vec<(&str, u32)> = many.iter().map(|(p, l)| (p.as_str(), *l)).collect();
        let (_, results) = check(&[
            finding("a.rs", 1, &[("b.rs", 2)], 1),
            finding("a.rs", 30, &many, 2),
            finding("a.rs", 60, &[], 3),
        ]);
        for r in &results {
            let text = r["message"]["text"].as_str().unwrap();
            let ids: Vec<u64> = r["relatedLocations"]
                .as_array()
                .map(|rs| rs.iter().map(|l| l["id"].as_u64().unwrap()).collect())
                .unwrap_or_default();
            for id in linked_ids(text) {
                assert!(ids.contains(&id), "{text} links {id}, not in {ids:?}");
            }
        }
        assert_eq!(
            results[0]["message"]["text"],
            "Duplicated code: 12 lines (87 tokens), also at [b.rs:2](1)."
        );
        let long = results[1]["message"]["text"].as_str().unwrap();
        assert_eq!(linked_ids(long), (1..=10).collect::<Vec<_>>());
        assert!(
            long.ends_with(", [src/m10.rs:10](10) and 4 more."),
            "{long}"
        );
        assert_eq!(results[1]["relatedLocations"].as_array().unwrap().len(), 14);
        assert_eq!(
            results[2]["message"]["text"],
            "Duplicated code: 12 lines (87 tokens)."
        );
        assert!(results[2].get("relatedLocations").is_none());
    }

    #[test]
    fn odd_paths_are_escaped_in_uris_and_messages() {
        let (_, results) = check(&[finding(
            "dir with space/c:[x]%#é.rs",
            1,
            &[("[odd].rs", 2)],
            7,
        )]);
        let r = &results[0];
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "dir%20with%20space/c%3A%5Bx%5D%25%23%C3%A9.rs"
        );
        assert_eq!(
            r["message"]["text"],
            "Duplicated code: 12 lines (87 tokens), also at [\\[odd\\].rs:2](1)."
        );
        assert_eq!(linked_ids(r["message"]["text"].as_str().unwrap()), [1]);
    }

    #[test]
    fn degenerate_regions_still_validate() {
        let mut f = finding("a.rs", 1, &[("b.rs", 1)], 0);
        f.location = at("a.rs", (0, 0), (0, 0));
        f.lines = 1;
        f.tokens = 1;
        let (_, results) = check(&[f]);
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["region"],
            json!({ "startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1 })
        );
        assert_eq!(
            results[0]["message"]["text"],
            "Duplicated code: 1 line (1 token), also at [b.rs:1](1)."
        );
    }

    #[test]
    fn line_hashes_come_from_content_and_count_repeats_per_file() {
        let findings = [
            finding("a.rs", 1, &[("b.rs", 1)], 0xabc),
            finding("a.rs", 50, &[("b.rs", 1)], 0xabc),
            finding("c.rs", 1, &[("b.rs", 1)], 0xabc),
            finding("a.rs", 80, &[("b.rs", 1)], 0xdef),
        ];
        let hashes = |findings: &[Finding]| -> Vec<String> {
            check(findings)
                .1
                .iter()
                .map(|r| {
                    r["partialFingerprints"]["primaryLocationLineHash"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        };
        let before = hashes(&findings);
        assert_eq!(
            before,
            [
                "0000000000000abc:1",
                "0000000000000abc:2",
                "0000000000000abc:1",
                "0000000000000def:1"
            ]
        );
        // Code inserted above every finding moves them, not their hashes.
        let moved: Vec<Finding> = findings
            .iter()
            .cloned()
            .map(|mut f| {
                f.location.span.start.line += 5;
                f.location.span.end.line += 5;
                f
            })
            .collect();
        assert_eq!(hashes(&moved), before);
    }

    #[test]
    fn rdjsonl_lines_are_reviewdog_diagnostics_with_byte_columns() {
        let mut f = finding("src/é.rs", 2, &[("src/b.rs", 10), ("src/c.rs", 7)], 1);
        f.location = at("src/é.rs", (2, 3), (3, 4));
        let text = "x\néé𐐀b\nab𐐀cd\n";
        let out = rdjsonl(&[f.clone(), finding("a.rs", 1, &[], 2)], |path| {
            (path == "src/é.rs").then_some(crate::engine::text::Text::Borrowed(text))
        });
        assert!(out.ends_with('\n'));
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            json!({
                "message": "Duplicated code: 12 lines (87 tokens), also at src/b.rs:10-21 and src/c.rs:7-18.",
                "location": {
                    "path": "src/é.rs",
                    // Character 3 of line 2 is 𐐀, after two 2-byte é; the
                    // end, just after 𐐀 on line 3, is byte 7.
                    "range": { "start": { "line": 2, "column": 5 }, "end": { "line": 3, "column": 7 } }
                },
                "severity": "WARNING",
                "source": { "name": "dupcheck" },
                "code": { "value": "duplicate-code" },
            })
        );
        // Without the file's text, columns stay as they are.
        assert_eq!(
            lines[1]["location"]["range"]["start"],
            json!({ "line": 1, "column": 5 })
        );
        assert_eq!(
            lines[1]["message"],
            "Duplicated code: 12 lines (87 tokens)."
        );
        assert_eq!(rdjsonl(&[], |_| None), "");
    }

    #[test]
    fn a_snippet_without_a_path_is_the_runs_artifact_and_notices_are_notifications() {
        let mut f = finding("", 1, &[("b.rs", 2)], 9);
        f.location.path = String::new();
        let notices = [
            Notice {
                path: Some("logo.png".into()),
                text: "logo.png was not checked: binary.".into(),
                warning: false,
            },
            Notice {
                path: None,
                text: "Only the first 1 of 2 duplications are listed.".into(),
                warning: true,
            },
        ];
        let extras = Extras {
            snippet: Some(Snippet {
                text: "fn a() {}\n",
                language: "rust",
            }),
            notices: &notices,
        };
        let log = sarif_with(&[f], &extras);
        validate(&log);
        let run = &log["runs"][0];
        assert_eq!(
            run["artifacts"],
            json!([{
                "description": { "text": "The snippet checked (sent without a path)" },
                "contents": { "text": "fn a() {}\n" },
                "sourceLanguage": "rust",
            }])
        );
        assert_eq!(
            run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"],
            json!({ "index": 0 })
        );
        assert_eq!(
            run["invocations"],
            json!([{
                "executionSuccessful": true,
                "toolExecutionNotifications": [
                    {
                        "level": "note",
                        "message": { "text": "logo.png was not checked: binary." },
                        "locations": [{ "physicalLocation": { "artifactLocation": {
                            "uri": "logo.png", "uriBaseId": "%SRCROOT%" } } }],
                    },
                    {
                        "level": "warning",
                        "message": { "text": "Only the first 1 of 2 duplications are listed." },
                    },
                ],
            }])
        );
        // reviewdog's lines have no path for it.
        let line: Value =
            serde_json::from_str(rdjsonl(&[finding("", 1, &[], 1)], |_| None).trim_end()).unwrap();
        assert!(line["location"].get("path").is_none(), "{line}");
    }
}
