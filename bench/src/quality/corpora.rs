//! The corpora: which positive corpus of `.corpora/all` goes with which
//! format and which negative corpus, and preparing each (its sampled
//! functions with their variants, and its negatives).

use std::path::Path;

use dupcheck::engine::grammar::{Format, Registry};

use crate::args::Args;
use crate::lang;
use crate::sample::{sample, Function};
use crate::variants::{dump, make_case, Case};

/// A positive corpus (a folder of `.corpora/all`), its format, and the
/// folder of `.corpora` its negatives come from.
pub struct Corpus {
    pub name: &'static str,
    pub format: &'static str,
    pub negative: &'static str,
}

const fn corpus(name: &'static str, format: &'static str, negative: &'static str) -> Corpus {
    Corpus {
        name,
        format,
        negative,
    }
}

/// The corpora of `bench/fetch-corpora.sh`, in table order.
pub const CORPORA: [Corpus; 14] = [
    corpus("lodash", "javascript", "neg-js"),
    corpus("rxjs", "typescript", "neg-ts"),
    corpus("django", "python", "neg-py"),
    corpus("tokio", "rust", "neg-rs"),
    corpus("client_golang", "go", "neg-go"),
    corpus("commons-lang", "java", "neg-java"),
    corpus("libgit2", "c", "neg-c"),
    corpus("imgui", "cpp", "neg-cpp"),
    corpus("newtonsoft", "csharp", "neg-cs"),
    corpus("activesupport", "ruby", "neg-rb"),
    corpus("dbal", "php", "neg-php"),
    corpus("react-native", "kotlin", "neg-kt"),
    corpus("expo-modules", "swift", "neg-swift"),
    corpus("scala", "scala", "neg-scala"),
];

/// A corpus ready to post.
pub struct Prepared<'a> {
    pub name: &'static str,
    pub format: &'a Format,
    pub cases: Vec<Case>,
    pub negatives: Vec<Function>,
}

/// Samples the functions of `corpus`, with variants, and its negatives.
pub fn prepare<'a>(
    corpus: &Corpus,
    registry: &'a Registry,
    args: &Args,
) -> Result<Prepared<'a>, String> {
    let format = registry
        .lookup(corpus.format)
        .ok_or(format!("no format {}", corpus.format))?;
    let lang = lang::for_format(&format.name).ok_or(format!("no sampler for {}", format.name))?;
    let all = args.corpora.join("all");
    require(&all.join(corpus.name), "run bench/fetch-corpora.sh")?;
    require(
        &args.corpora.join(corpus.negative),
        "run bench/fetch-corpora.sh",
    )?;
    let mut cases = Vec::new();
    for function in sample(format, lang, &all, corpus.name, args) {
        let Some(case) = make_case(format, lang, function, args.seed) else {
            continue;
        };
        if let Some(dir) = &args.dump {
            dump(&dir.join(corpus.name), cases.len(), format, &case.variants)?;
        }
        cases.push(case);
    }
    let negatives = sample(format, lang, &args.corpora, corpus.negative, args);
    let (name, functions, negative) = (corpus.name, cases.len(), negatives.len());
    eprintln!("{name}: {functions} functions, {negative} negatives");
    Ok(Prepared {
        name: corpus.name,
        format,
        cases,
        negatives,
    })
}

/// An error naming a missing input and the command that makes it.
pub fn require(path: &Path, how: &str) -> Result<(), String> {
    match path.exists() {
        true => Ok(()),
        false => Err(format!("{} is missing: {how}", path.display())),
    }
}
