//! Test material: temporary copies of `testdata/project`, the fixture's
//! source texts, and a deterministic random number generator, so that every
//! run sends the same requests and makes the same file operations.

use std::path::Path;

use crate::server::root;

/// The fixture's source files (relative to `testdata/project`) by format.
pub const SOURCES: [(&str, &str); 9] = [
    ("javascript", "src/util/merge.js"),
    ("javascript", "src/app/merge-copy.js"),
    ("javascript", "src/app/renamed.js"),
    ("javascript", "src/lib/literals.js"),
    ("typescript", "src/types/merge.ts"),
    ("python", "py/report.py"),
    ("python", "py/stats.py"),
    ("rust", "rs/lib.rs"),
    ("rust", "rs/other.rs"),
];

/// A new temporary directory, removed on drop.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dupcheck-stress-")
        .tempdir()
        .expect("create a temporary directory")
}

/// A temporary copy of `testdata/project`.
pub fn project_copy() -> tempfile::TempDir {
    let dir = temp_dir();
    copy_dir(&root().join("testdata/project"), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a fixture folder");
    for entry in std::fs::read_dir(from).expect("read the fixture") {
        let entry = entry.expect("read a fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("fixture file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

/// The text of `testdata/project/REL`.
pub fn source(rel: &str) -> String {
    let path = root().join("testdata/project").join(rel);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read fixture {}: {e}", path.display()))
}

/// Writes `text` to `dir/rel`, creating folders.
pub fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create a folder");
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// A linear congruential generator (Knuth's MMIX constants): the same seed
/// gives the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The next 32 random bits.
    pub fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 32) as u32
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u64::from(self.next()) * n as u64) >> 32) as usize
    }

    /// A number in `range`.
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}
