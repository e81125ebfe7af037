//! Repository hygiene: every source file opens with a `//!` doc comment that
//! says what it does, and README's table of languages is the registry's.

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
    for dir in ["src", "tests", "examples"] {
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

/// README's table of languages lists every format of `grammars.toml`, with
/// its aliases and extensions, and nothing else.
#[test]
fn readme_lists_every_format() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let registry = dupcheck::engine::grammar::Registry::builtin();
    let expected: Vec<String> = registry
        .formats()
        .iter()
        .map(|f| {
            let quoted = |v: &[String], prefix: &str| {
                v.iter()
                    .map(|x| format!("`{prefix}{x}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "| `{}` | {} | {} |",
                f.name,
                quoted(&f.aliases, ""),
                quoted(&f.extensions, ".")
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
