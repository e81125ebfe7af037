//! Formats and grammars: what `grammars.toml` declares, compiled for parsing.
//!
//! In: the text of `grammars.toml` (embedded at build time). Out: a
//! [`Registry`] of [`Format`]s, each with its tree-sitter [`Language`], its
//! family, and a table from node-kind id to token [`Class`].
//!
//! Invariants: every node kind named in `grammars.toml` exists in its grammar,
//! and no alias or extension is claimed by two formats ([`Registry::load`]
//! refuses both; tests check the built-in file). Lookup by name, alias or
//! extension is case-insensitive.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use tree_sitter::Language;

use crate::hash::HashMap;

/// The grammars file, embedded so the binary needs nothing beside it.
pub const GRAMMARS_TOML: &str = include_str!("../grammars.toml");

/// The tree-sitter grammar registered under `name` in `grammars.toml`.
///
/// Adding a language takes one line here (and its crate in Cargo.toml).
fn language_for(name: &str) -> Option<Language> {
    Some(match name {
        "javascript" => tree_sitter_javascript::LANGUAGE.into(),
        "typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "python" => tree_sitter_python::LANGUAGE.into(),
        "rust" => tree_sitter_rust::LANGUAGE.into(),
        _ => return None,
    })
}

/// The class of a token: decides what of it survives normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Names: abstracted in `mild` and `weak` modes.
    Identifier,
    /// String literals (template strings, regexes, f-strings included).
    String,
    /// Number literals.
    Number,
    /// Other literals: booleans, null, None.
    Literal,
    /// Comments: always dropped.
    Comment,
    /// Keywords, operators, punctuation and every undeclared leaf.
    Other,
}

impl Class {
    /// The lower-case name used by `--dump-tokens`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Identifier => "identifier",
            Class::String => "string",
            Class::Number => "number",
            Class::Literal => "literal",
            Class::Comment => "comment",
            Class::Other => "other",
        }
    }
}

/// Index of a format inside its [`Registry`].
pub type FormatId = usize;

/// One format of `grammars.toml`, ready to parse.
pub struct Format {
    /// Position in the registry.
    pub id: FormatId,
    /// Canonical name, as responses and statistics show it.
    pub name: String,
    /// Other accepted names.
    pub aliases: Vec<String>,
    /// Extensions without the dot, lower case.
    pub extensions: Vec<String>,
    /// Formats of one family are matched against each other.
    pub family: String,
    /// Position of the family in [`Registry::families`].
    pub family_id: usize,
    /// The grammar that parses it.
    pub language: Language,
    /// Declared class of each node-kind id; `None` for undeclared kinds,
    /// which are descended into (or are `Other` when they are leaves).
    classes: Vec<Option<Class>>,
    /// Whether each node-kind id is an interpolation inside a string
    /// (`${...}`, `{...}` of an f-string), whose code is tokenized.
    interpolations: Vec<bool>,
    /// Whether any kind is an interpolation.
    has_interpolations: bool,
    /// Identifier texts that keep their text in every mode (`self`).
    pub keep_identifiers: Vec<String>,
    /// Contexts (prefix, suffix) a snippet that parses with errors is also
    /// tried in, such as a class body around a method.
    pub snippet_wrappers: Vec<(String, String)>,
    /// Delimiters of block comments, to recognize snippets cut inside one.
    pub block_comment: Option<(String, String)>,
}

impl Format {
    /// The declared class of a node-kind id, if any.
    pub fn class_of(&self, kind_id: u16) -> Option<Class> {
        self.classes.get(usize::from(kind_id)).copied().flatten()
    }

    /// Whether strings of this format can hold interpolations at all.
    pub fn has_interpolations(&self) -> bool {
        self.has_interpolations
    }

    /// Whether a node-kind id is an interpolation inside strings.
    pub fn is_interpolation(&self, kind_id: u16) -> bool {
        self.interpolations
            .get(usize::from(kind_id))
            .copied()
            .unwrap_or(false)
    }
}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Format").field("name", &self.name).finish()
    }
}

/// A problem in `grammars.toml`.
#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    /// The file is not valid TOML of the expected shape.
    #[error("grammars.toml is invalid: {0}")]
    Syntax(#[from] toml::de::Error),
    /// A format names a grammar that `language_for` does not register.
    #[error(
        "format {format:?} names grammar {grammar:?}, which is not registered in src/grammar.rs"
    )]
    UnknownGrammar { format: String, grammar: String },
    /// The grammar was generated for an ABI this tree-sitter cannot load.
    #[error("grammar {grammar:?} has ABI version {abi}, which this tree-sitter cannot load")]
    Incompatible { grammar: String, abi: usize },
    /// A node kind does not exist in the format's grammar.
    #[error("format {format:?}: node kind {kind:?} does not exist in grammar {grammar:?}")]
    UnknownNodeKind {
        format: String,
        grammar: String,
        kind: String,
    },
    /// Two formats claim the same name, alias or extension.
    #[error("{what} {name:?} is claimed by both {first:?} and {second:?}")]
    Duplicate {
        what: &'static str,
        name: String,
        first: String,
        second: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    format: Vec<FormatSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormatSpec {
    name: String,
    aliases: Vec<String>,
    extensions: Vec<String>,
    grammar: String,
    family: String,
    identifiers: Vec<String>,
    strings: Vec<String>,
    numbers: Vec<String>,
    literals: Vec<String>,
    comments: Vec<String>,
    interpolations: Vec<String>,
    keep_identifiers: Vec<String>,
    snippet_wrappers: Vec<(String, String)>,
    #[serde(default)]
    block_comment: Option<(String, String)>,
}

/// All known formats, with lookup by name, alias and extension.
#[derive(Debug)]
pub struct Registry {
    formats: Vec<Format>,
    families: Vec<String>,
    /// Lower-case name, alias or extension → format.
    by_name: HashMap<String, FormatId>,
    /// Lower-case extension → format.
    by_extension: HashMap<String, FormatId>,
}

impl Registry {
    /// The registry of the embedded `grammars.toml`, built once per process.
    pub fn builtin() -> Arc<Registry> {
        static BUILTIN: OnceLock<Arc<Registry>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                Arc::new(
                    Registry::load(GRAMMARS_TOML)
                        .expect("the embedded grammars.toml is valid (checked by tests)"),
                )
            })
            .clone()
    }

    /// Parses and checks a grammars file.
    pub fn load(text: &str) -> Result<Registry, GrammarError> {
        let spec: FileSpec = toml::from_str(text)?;
        let mut registry = Registry {
            formats: Vec::new(),
            families: Vec::new(),
            by_name: HashMap::new(),
            by_extension: HashMap::new(),
        };
        for (id, f) in spec.format.into_iter().enumerate() {
            let language =
                language_for(&f.grammar).ok_or_else(|| GrammarError::UnknownGrammar {
                    format: f.name.clone(),
                    grammar: f.grammar.clone(),
                })?;
            let abi = language.abi_version();
            if !(tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION..=tree_sitter::LANGUAGE_VERSION)
                .contains(&abi)
            {
                return Err(GrammarError::Incompatible {
                    grammar: f.grammar.clone(),
                    abi,
                });
            }
            let mut classes = vec![None; language.node_kind_count()];
            let declared = [
                (&f.identifiers, Class::Identifier),
                (&f.strings, Class::String),
                (&f.numbers, Class::Number),
                (&f.literals, Class::Literal),
                (&f.comments, Class::Comment),
            ];
            for (kinds, class) in declared {
                for kind in kinds {
                    for id in kind_ids(&language, &f, kind)? {
                        classes[usize::from(id)] = Some(class);
                    }
                }
            }
            let mut interpolations = vec![false; language.node_kind_count()];
            for kind in &f.interpolations {
                for id in kind_ids(&language, &f, kind)? {
                    interpolations[usize::from(id)] = true;
                }
            }
            let family_id = match registry.families.iter().position(|x| *x == f.family) {
                Some(i) => i,
                None => {
                    registry.families.push(f.family.clone());
                    registry.families.len() - 1
                }
            };
            let lower = |v: &[String]| v.iter().map(|s| s.to_lowercase()).collect::<Vec<_>>();
            let format = Format {
                id,
                name: f.name.clone(),
                aliases: lower(&f.aliases),
                extensions: lower(&f.extensions),
                family: f.family,
                family_id,
                language,
                classes,
                has_interpolations: interpolations.contains(&true),
                interpolations,
                keep_identifiers: f.keep_identifiers,
                snippet_wrappers: f.snippet_wrappers,
                block_comment: f.block_comment,
            };
            registry.claim(&format)?;
            registry.formats.push(format);
        }
        Ok(registry)
    }

    /// Records the names of `format`, refusing any already claimed.
    fn claim(&mut self, format: &Format) -> Result<(), GrammarError> {
        let names = std::iter::once(format.name.to_lowercase())
            .chain(format.aliases.iter().cloned())
            .map(|n| ("name or alias", n))
            .chain(format.extensions.iter().map(|e| ("extension", e.clone())));
        for (what, name) in names {
            let map = if what == "extension" {
                &mut self.by_extension
            } else {
                &mut self.by_name
            };
            if let Some(&other) = map.get(&name) {
                return Err(GrammarError::Duplicate {
                    what,
                    name,
                    first: self.formats[other].name.clone(),
                    second: format.name.clone(),
                });
            }
            map.insert(name, format.id);
        }
        Ok(())
    }

    /// All formats, in file order.
    pub fn formats(&self) -> &[Format] {
        &self.formats
    }

    /// The format with this id.
    pub fn get(&self, id: FormatId) -> &Format {
        &self.formats[id]
    }

    /// The families, indexed by [`Format::family_id`].
    pub fn families(&self) -> &[String] {
        &self.families
    }

    /// Canonical names of all formats, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.formats.iter().map(|f| f.name.as_str()).collect()
    }

    /// The format a request or `--format` names: canonical name, alias or
    /// extension without the dot, case-insensitive.
    pub fn lookup(&self, name: &str) -> Option<&Format> {
        let key = name.trim().trim_start_matches('.').to_lowercase();
        self.by_name
            .get(&key)
            .or_else(|| self.by_extension.get(&key))
            .map(|&id| &self.formats[id])
    }

    /// The format of a file, by its extension.
    pub fn for_path(&self, path: &std::path::Path) -> Option<&Format> {
        let ext = path.extension()?.to_str()?.to_lowercase();
        self.by_extension.get(&ext).map(|&id| &self.formats[id])
    }
}

/// Every named node-kind id of `language` whose name is `kind` (one name
/// can have several ids, through grammar aliases); an error if none, since
/// a misspelled kind would silently weaken detection.
fn kind_ids(
    language: &Language,
    format: &FormatSpec,
    kind: &str,
) -> Result<Vec<u16>, GrammarError> {
    let ids: Vec<u16> = (0..language.node_kind_count())
        .filter_map(|id| u16::try_from(id).ok())
        .filter(|&id| {
            language.node_kind_is_named(id) && language.node_kind_for_id(id) == Some(kind)
        })
        .collect();
    if ids.is_empty() {
        return Err(GrammarError::UnknownNodeKind {
            format: format.name.clone(),
            grammar: format.grammar.clone(),
            kind: kind.to_owned(),
        });
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_kind_exists() {
        // `load` refuses unknown kinds; this keeps the shipped file honest.
        let registry = Registry::load(GRAMMARS_TOML).unwrap();
        assert_eq!(
            registry.names(),
            ["javascript", "typescript", "tsx", "python", "rust"]
        );
    }

    #[test]
    fn a_misspelled_kind_is_refused() {
        let text = GRAMMARS_TOML.replacen("\"identifier\"", "\"identifer\"", 1);
        let err = Registry::load(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "format \"javascript\": node kind \"identifer\" does not exist in grammar \"javascript\""
        );
    }

    #[test]
    fn a_doubly_claimed_extension_is_refused() {
        let text =
            GRAMMARS_TOML.replacen("extensions = [\"ts\"", "extensions = [\"js\", \"ts\"", 1);
        let err = Registry::load(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "extension \"js\" is claimed by both \"javascript\" and \"typescript\""
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        let text = GRAMMARS_TOML.replacen("keep_identifiers = []", "keep_identifier = []", 1);
        assert!(matches!(
            Registry::load(&text),
            Err(GrammarError::Syntax(_))
        ));
    }

    #[test]
    fn lookup_accepts_names_aliases_and_extensions_in_any_case() {
        let r = Registry::builtin();
        for (query, want) in [
            ("JavaScript", "javascript"),
            ("node", "javascript"),
            ("mjs", "javascript"),
            (".jsx", "javascript"),
            ("TS", "typescript"),
            ("cts", "typescript"),
            ("tsx", "tsx"),
            ("py", "python"),
            ("pyi", "python"),
            ("rs", "rust"),
        ] {
            assert_eq!(
                r.lookup(query).map(|f| f.name.as_str()),
                Some(want),
                "{query}"
            );
        }
        assert!(r.lookup("cobol").is_none());
    }

    #[test]
    fn ecmascript_formats_share_a_family() {
        let r = Registry::builtin();
        let family = |n: &str| r.lookup(n).unwrap().family_id;
        assert_eq!(family("js"), family("ts"));
        assert_eq!(family("ts"), family("tsx"));
        assert_ne!(family("js"), family("py"));
    }
}
