//! Compiles `src/engine/visible_nodes.c` and (with the feature `lang-sql`)
//! `src/engine/sequel_scanner.c` against the sources of the tree-sitter
//! this crate links (its `include` directory, which the `tree-sitter`
//! crate announces, and the `src` beside it), so the walk reads the
//! subtrees, and the mended SQL grammar its language, as the library lays
//! them out; and writes
//! `grammars.toml` as JSON, which the binary reads at its start in a
//! tenth of the time TOML takes (every format, compiled in or not: a
//! build without a format still knows its names, to say so).

use std::path::PathBuf;

fn main() {
    grammars_as_json();
    c_sources();
}

fn grammars_as_json() {
    println!("cargo:rerun-if-changed=grammars.toml");
    let text = std::fs::read_to_string("grammars.toml").expect("grammars.toml is readable");
    let value: toml::Value =
        toml::from_str(&text).unwrap_or_else(|e| panic!("grammars.toml is invalid: {e}"));
    let json = serde_json::to_string(&value).expect("TOML values are JSON values");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("grammars.json"), json).expect("OUT_DIR is writable");
}

fn c_sources() {
    let include = PathBuf::from(
        std::env::var("DEP_TREE_SITTER_INCLUDE")
            .expect("the tree-sitter crate names its include directory"),
    );
    let sources = include.parent().expect("include's parent").join("src");
    let mut files = vec!["src/engine/visible_nodes.c"];
    // Cargo sets CARGO_FEATURE_<NAME> for each feature on.
    if std::env::var_os("CARGO_FEATURE_LANG_SQL").is_some() {
        files.push("src/engine/sequel_scanner.c");
    }
    for file in &files {
        println!("cargo:rerun-if-changed={file}");
    }
    cc::Build::new()
        .files(files)
        .include(&include)
        .include(&sources)
        .std("c11")
        .define("_POSIX_C_SOURCE", "200112L")
        .define("_DEFAULT_SOURCE", None)
        .warnings(false)
        .compile("dupcheck_c");
}
