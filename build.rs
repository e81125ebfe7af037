//! Compiles `src/engine/visible_nodes.c` against the sources of the
//! tree-sitter this crate links (its `include` directory, which the
//! `tree-sitter` crate announces, and the `src` beside it), so the walk
//! reads the subtrees as the library lays them out.

use std::path::PathBuf;

fn main() {
    let include = PathBuf::from(
        std::env::var("DEP_TREE_SITTER_INCLUDE")
            .expect("the tree-sitter crate names its include directory"),
    );
    let sources = include.parent().expect("include's parent").join("src");
    println!("cargo:rerun-if-changed=src/engine/visible_nodes.c");
    cc::Build::new()
        .file("src/engine/visible_nodes.c")
        .include(&include)
        .include(&sources)
        .std("c11")
        .define("_POSIX_C_SOURCE", "200112L")
        .define("_DEFAULT_SOURCE", None)
        .warnings(false)
        .compile("dupcheck_visible_nodes");
}
