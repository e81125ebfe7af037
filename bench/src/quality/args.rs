//! The command line.

use std::path::PathBuf;

use clap::Parser;
use dupcheck::engine::tokens::Mode;

#[derive(Parser)]
#[command(about = "Clone-injection quality benchmark of the dupcheck server")]
pub struct Args {
    /// Only these corpora (comma-separated): lodash, rxjs, django, tokio,
    /// client_golang, commons-lang, libgit2, imgui, newtonsoft,
    /// activesupport, dbal, react-native, expo-modules, scala.
    #[arg(long, value_delimiter = ',')]
    pub corpus: Vec<String>,
    /// Only this mode: strict, mild or weak.
    #[arg(long, value_parser = |s: &str| Mode::parse(s).ok_or(format!("use {}", Mode::NAMES)))]
    pub mode: Option<Mode>,
    /// Functions sampled per corpus, and as many negatives.
    #[arg(long, default_value_t = 250)]
    pub limit: usize,
    /// Seed of the sampling and of the variants.
    #[arg(long, default_value_t = 20_241_122)]
    pub seed: u64,
    /// Folder the corpora were fetched to.
    #[arg(long, default_value = ".corpora")]
    pub corpora: PathBuf,
    /// The server binary.
    #[arg(long, default_value = "target/release/dupcheck")]
    pub server: PathBuf,
    /// Where the JSON results go; the server logs go beside it.
    #[arg(long, default_value = "target/quality.json")]
    pub out: PathBuf,
    /// Also write every variant to DIR/CORPUS/NNN-VARIANT.EXT, to compare
    /// with `dupcheck --dump-tokens`.
    #[arg(long, value_name = "DIR")]
    pub dump: Option<PathBuf>,
    /// Skip the cold scans (scan / parse floor of each corpus).
    #[arg(long, conflicts_with = "scan_only")]
    pub no_scan: bool,
    /// Only the cold scans: no sampling, no checks.
    #[arg(long)]
    pub scan_only: bool,
    /// Timed cold scans per corpus and timed runs of its parse floor,
    /// alternating (the ratio is of their medians).
    #[arg(long, default_value_t = 5)]
    pub scan_runs: usize,
}
