//! Repository hygiene: every source file opens with a `//!` doc comment that
//! says what it does; the layers' arrows point down and no files name each
//! other in a circle; the languages page's table is the registry's.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            // npm's packages (tests/browser) are not ours.
            if !path.ends_with("node_modules") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_starts_with_a_doc_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "bench/src"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).expect("read").starts_with("//!"))
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    assert!(files.len() > 10, "found only {files:?}");
    assert!(
        missing.is_empty(),
        "files without a //! first line: {missing:?}"
    );
}

/// The table of docs/languages.md lists every format of `grammars.toml`,
/// with its aliases and extensions, and nothing else.
#[test]
fn the_languages_page_lists_every_format() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("docs/languages.md")).expect("languages.md");
    // The file itself, not the registry: a slim build's registry lacks
    // the formats it left out.
    let file: toml::Value = toml::from_str(
        &std::fs::read_to_string(root.join("grammars.toml")).expect("grammars.toml"),
    )
    .expect("TOML");
    let expected: Vec<String> = file["format"]
        .as_array()
        .expect("[[format]] tables")
        .iter()
        .map(|f| {
            let quoted = |key: &str, prefix: &str| {
                f[key]
                    .as_array()
                    .expect(key)
                    .iter()
                    .map(|x| format!("`{prefix}{}`", x.as_str().expect("a string").to_lowercase()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "| `{}` | {} | {} |",
                f["name"].as_str().expect("a name"),
                quoted("aliases", ""),
                quoted("extensions", ".")
            )
        })
        .collect();
    let listed: Vec<String> = readme
        .lines()
        .skip_while(|l| *l != "## Languages")
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.splitn(5, " | ").take(3).collect::<Vec<_>>().join(" | ") + " |")
        .collect();
    assert_eq!(listed, expected);
}

/// The layers' arrows point down: `engine` names no `project`, `store`,
/// `service` or `interfaces`; `project` no `store`, `service` or
/// `interfaces`; `store` (beside `project`, using it) no `service` or
/// `interfaces`; `service` no `interfaces` (in code and in doc links
/// alike).
#[test]
fn layers_only_call_the_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rules = [
        ("engine", &["project", "store", "service", "interfaces"][..]),
        ("project", &["store", "service", "interfaces"][..]),
        ("store", &["service", "interfaces"][..]),
        ("service", &["interfaces"][..]),
    ];
    let mut wrong = Vec::new();
    for (layer, above) in rules {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no files under src/{layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read");
            let rel = file.strip_prefix(&src).unwrap_or(&file).display();
            // The whole text: a use tree may span lines.
            for path in paths_at_all(&text) {
                let up = |name: &&str| path == *name || path.starts_with(&format!("{name}::"));
                if above.iter().any(up) {
                    wrong.push(format!("src/{rel}: crate::{path}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows pointing up:\n{}",
        wrong.join("\n")
    );
}

/// The paths a text names after `crate::`, use trees expanded.
fn paths_at_all(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .flat_map(|(at, _)| paths_at(&text[at + "crate::".len()..]))
        .collect()
}

/// The modules `file` names by `crate::…` and `super::…` paths in its
/// code (not its comments, nor its unit tests), as files of `src/`.
fn named_modules(src: &Path, file: &Path) -> Vec<std::path::PathBuf> {
    let text = std::fs::read_to_string(file).expect("read");
    // Code only: what comments and docs mention is no dependency.
    let text: String = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    // The file's module path: `src/a/b.rs` is `a::b`, `src/a/mod.rs` is `a`.
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut module: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if module
        .last()
        .is_some_and(|m| m == "mod" || m == "lib" || m == "main")
    {
        module.pop();
    }
    let mut paths = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        paths.extend(paths_at(&text[at + "crate::".len()..]));
    }
    for (at, _) in text.match_indices("super::") {
        // Each `super::` of a chain is counted once, from its first.
        if text[..at].ends_with("super::") {
            continue;
        }
        let mut rest = &text[at..];
        let mut base = module.clone();
        while let Some(after) = rest.strip_prefix("super::") {
            base.pop();
            rest = after;
        }
        let base = base.join("::");
        paths.extend(paths_at(rest).into_iter().map(|p| format!("{base}::{p}")));
    }
    let mut named = Vec::new();
    for path in paths {
        // The longest prefix of the path that is a file: `a::b::Item` is
        // `src/a/b.rs` (or `src/a/b/mod.rs`).
        let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        for len in (1..=parts.len()).rev() {
            let base = src.join(parts[..len].join("/"));
            let candidates = [base.with_extension("rs"), base.join("mod.rs")];
            if let Some(found) = candidates.into_iter().find(|c| c.is_file()) {
                if found != file {
                    named.push(found);
                }
                break;
            }
        }
    }
    named.sort();
    named.dedup();
    named
}

/// The paths that start `text`, a use tree expanded: `a::{b, c::D}` is
/// `a::b` and `a::c::D`.
fn paths_at(text: &str) -> Vec<String> {
    fn tree(text: &[u8], at: &mut usize, prefix: &str, out: &mut Vec<String>) {
        let mut path = prefix.to_owned();
        loop {
            while *at < text.len() && text[*at].is_ascii_whitespace() {
                *at += 1;
            }
            let start = *at;
            while *at < text.len() && (text[*at].is_ascii_alphanumeric() || text[*at] == b'_') {
                *at += 1;
            }
            let segment = String::from_utf8_lossy(&text[start..*at]).into_owned();
            if !segment.is_empty() {
                path = if path.is_empty() {
                    segment
                } else {
                    format!("{path}::{segment}")
                };
            }
            if text[*at..].starts_with(b"::{") {
                *at += 3;
                loop {
                    tree(text, at, &path, out);
                    while *at < text.len() && text[*at].is_ascii_whitespace() {
                        *at += 1;
                    }
                    match text.get(*at) {
                        Some(b',') => *at += 1,
                        Some(b'}') => {
                            *at += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *at < text.len() && text[*at].is_ascii_whitespace() {
                        *at += 1;
                    }
                    if text.get(*at) == Some(&b'}') {
                        *at += 1;
                        return;
                    }
                }
            } else if text[*at..].starts_with(b"::") {
                *at += 2;
            } else {
                out.push(path);
                return;
            }
        }
    }
    let mut out = Vec::new();
    // `crate::{a, b}` is a group with no path before it.
    let text = match text.strip_prefix('{') {
        Some(group) => format!("::{{{group}"),
        None => text.to_owned(),
    };
    tree(text.as_bytes(), &mut 0, "", &mut out);
    out
}

/// No circles between files: no file names (by a `crate::` path) a file
/// that names it back, directly or through others. Folders' `mod.rs`,
/// which declare their children, count only for what they name themselves.
#[test]
fn no_circles_between_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let edges: Vec<Vec<usize>> = files
        .iter()
        .map(|f| {
            named_modules(&src, f)
                .iter()
                .filter_map(|n| files.iter().position(|g| g == n))
                .collect()
        })
        .collect();
    // Depth-first search, keeping the path: a back edge is a circle.
    fn visit(
        node: usize,
        edges: &[Vec<usize>],
        state: &mut [u8],
        path: &mut Vec<usize>,
        circles: &mut Vec<Vec<usize>>,
    ) {
        state[node] = 1;
        path.push(node);
        for &next in &edges[node] {
            match state[next] {
                0 => visit(next, edges, state, path, circles),
                1 => {
                    let from = path.iter().position(|&p| p == next).unwrap_or(0);
                    circles.push(path[from..].to_vec());
                }
                _ => {}
            }
        }
        path.pop();
        state[node] = 2;
    }
    let mut state = vec![0u8; files.len()];
    let mut circles = Vec::new();
    for node in 0..files.len() {
        if state[node] == 0 {
            visit(node, &edges, &mut state, &mut Vec::new(), &mut circles);
        }
    }
    let named: Vec<String> = circles
        .iter()
        .map(|c| {
            c.iter()
                .map(|&i| {
                    files[i]
                        .strip_prefix(&src)
                        .unwrap_or(&files[i])
                        .display()
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(" → ")
        })
        .collect();
    assert!(
        named.is_empty(),
        "circles between files:\n{}",
        named.join("\n")
    );
}
