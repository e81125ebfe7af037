//! Snippet and file tokenizing in every format, with and without
//! case and ignore patterns: never a panic or a hang (parses have budgets),
//! tokens inside the text on character boundaries in order, and an
//! editor's buffer reparsed from its previous version tokenizes as parsed
//! afresh.
#![no_main]

use std::sync::OnceLock;

use dupcheck::engine::grammar::Registry;
use dupcheck::engine::parse::Budget;
use dupcheck::engine::patterns::IgnorePatterns;
use dupcheck::engine::snippet::{tokenize_snippet, tokenize_snippet_after};
use dupcheck::engine::tokens::{tokenize, Normalization, Token};
use libfuzzer_sys::fuzz_target;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<std::sync::Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

/// Ignore patterns for some inputs: words in pairs, block comments.
fn patterns() -> &'static IgnorePatterns {
    static PATTERNS: OnceLock<IgnorePatterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        IgnorePatterns::new(&[r"\w+\s+\w+", r"(?s)/\*.*?\*/"]).expect("valid patterns")
    })
}

fn assert_fits(tokens: &[Token], text: &str) {
    let mut end = 0;
    for t in tokens {
        // A wall (suppressed code) is the one zero-width token.
        assert!(end <= t.start && (t.start < t.end() || t.is_wall()) && t.end() as usize <= text.len());
        assert!(text.is_char_boundary(t.start as usize) && text.is_char_boundary(t.end() as usize));
        end = t.end();
    }
}

fuzz_target!(|data: &[u8]| {
    let [format, options, split, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let formats = registry().formats();
    let format = &formats[usize::from(*format) % formats.len()];
    let options = usize::from(*options);
    let normalization = Normalization {
        ignore_case: options % 2 == 1,
        ignore_patterns: match options / 2 % 2 {
            0 => IgnorePatterns::default(),
            _ => patterns().clone(),
        },
        keep_imports: options / 4 % 2 == 1,
    };
    if let Ok(tokens) = tokenize(format, text, &normalization) {
        assert_fits(&tokens, text);
    }
    let Ok(fresh) = tokenize_snippet(format, text, &normalization) else {
        return;
    };
    assert_fits(&fresh, text);
    // The buffer's previous version: the text cut at a character boundary.
    let mut cut = usize::from(*split) * text.len() / 255;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let earlier = &text[..cut];
    let Ok((_, previous)) = tokenize_snippet_after(
        format,
        earlier,
        &normalization,
        None,
        &Budget::for_snippet(earlier.len()),
    ) else {
        return;
    };
    let budget = Budget::for_snippet(text.len());
    if let Ok((incremental, _)) =
        tokenize_snippet_after(format, text, &normalization, Some(previous), &budget)
    {
        assert_eq!(incremental, fresh, "reparsed from {earlier:?}");
    }
});
