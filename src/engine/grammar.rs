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
use tree_sitter::{Language, Node};

use crate::engine::hash::{HashMap, HashSet};

/// The grammars file, embedded so the binary needs nothing beside it.
pub(crate) const GRAMMARS_TOML: &str = include_str!("../../grammars.toml");

/// `grammars.toml` as JSON (written by `build.rs`), which a process reads
/// at its start in a tenth of the time its TOML takes.
const GRAMMARS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/grammars.json"));

/// The grammars `grammars.toml` may name, each with the Cargo feature that
/// compiles it in (`lang-<format>`, all on by default): `language_for`
/// gives a grammar's [`Language`], or the feature a build left out.
///
/// Adding a language takes one line here (and its crate and feature in
/// Cargo.toml).
macro_rules! grammars {
    ($($grammar:literal, $feature:literal => $language:expr,)*) => {
        /// The grammar registered under `name`: its feature, and its
        /// language unless this build lacks the feature; `None` for a name
        /// not registered.
        fn language_for(name: &str) -> Option<(&'static str, Option<Language>)> {
            match name {
                $($grammar => Some(($feature, {
                    #[cfg(feature = $feature)]
                    let language = Some($language);
                    #[cfg(not(feature = $feature))]
                    let language = None;
                    language
                })),)*
                _ => None,
            }
        }

        /// Every feature of a grammar, in the table's order.
        #[cfg(test)]
        const FEATURES: &[&str] = &[$($feature),*];
    };
}

grammars! {
    "javascript", "lang-javascript" => tree_sitter_javascript::LANGUAGE.into(),
    "typescript", "lang-typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    "tsx", "lang-tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
    "python", "lang-python" => tree_sitter_python::LANGUAGE.into(),
    "rust", "lang-rust" => tree_sitter_rust::LANGUAGE.into(),
    "go", "lang-go" => tree_sitter_go::LANGUAGE.into(),
    "java", "lang-java" => tree_sitter_java::LANGUAGE.into(),
    "c", "lang-c" => tree_sitter_c::LANGUAGE.into(),
    "cpp", "lang-cpp" => tree_sitter_cpp::LANGUAGE.into(),
    "objc", "lang-objective-c" => tree_sitter_objc::LANGUAGE.into(),
    "c_sharp", "lang-csharp" => tree_sitter_c_sharp::LANGUAGE.into(),
    "ruby", "lang-ruby" => tree_sitter_ruby::LANGUAGE.into(),
    "php", "lang-php" => tree_sitter_php::LANGUAGE_PHP.into(),
    "kotlin", "lang-kotlin" => tree_sitter_kotlin_ng::LANGUAGE.into(),
    "swift", "lang-swift" => tree_sitter_swift::LANGUAGE.into(),
    "scala", "lang-scala" => tree_sitter_scala::LANGUAGE.into(),
    "bash", "lang-bash" => tree_sitter_bash::LANGUAGE.into(),
    "lua", "lang-lua" => tree_sitter_lua::LANGUAGE.into(),
    "elixir", "lang-elixir" => tree_sitter_elixir::LANGUAGE.into(),
    "haskell", "lang-haskell" => tree_sitter_haskell::LANGUAGE.into(),
    "zig", "lang-zig" => tree_sitter_zig::LANGUAGE.into(),
    "dart", "lang-dart" => tree_sitter_dart::LANGUAGE.into(),
    "ocaml", "lang-ocaml" => tree_sitter_ocaml::LANGUAGE_OCAML.into(),
    "ocaml_interface", "lang-ocaml-interface" => tree_sitter_ocaml::LANGUAGE_OCAML_INTERFACE.into(),
    "julia", "lang-julia" => tree_sitter_julia::LANGUAGE.into(),
    "r", "lang-r" => tree_sitter_r::LANGUAGE.into(),
    "sql", "lang-sql" => mended_sql(),
    "solidity", "lang-solidity" => tree_sitter_solidity::LANGUAGE.into(),
    "html", "lang-html" => tree_sitter_html::LANGUAGE.into(),
    "vue", "lang-vue" => tree_sitter_vue_next::LANGUAGE.into(),
    "svelte", "lang-svelte" => tree_sitter_svelte_ng::LANGUAGE.into(),
}

#[cfg(feature = "lang-sql")]
extern "C" {
    fn dupcheck_mended_sql(
        sql: *const tree_sitter::ffi::TSLanguage,
    ) -> *const tree_sitter::ffi::TSLanguage;
}

/// tree-sitter-sequel's SQL grammar with the leaks of its external scanner
/// mended (`sequel_scanner.c`): made once, then shared.
#[cfg(feature = "lang-sql")]
fn mended_sql() -> Language {
    static MENDED: OnceLock<usize> = OnceLock::new();
    let mended = *MENDED.get_or_init(|| {
        let sql = Language::from(tree_sitter_sequel::LANGUAGE).into_raw();
        // SAFETY: `sql` is the grammar's static language, which the C side
        // copies once (this initializer runs once).
        unsafe { dupcheck_mended_sql(sql) as usize }
    });
    // SAFETY: the mended copy is static and never freed (tree-sitter frees
    // only the languages of wasm grammars).
    unsafe { Language::from_raw(mended as *const tree_sitter::ffi::TSLanguage) }
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
    pub(crate) fn name(self) -> &'static str {
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

/// What a definition is: the small fixed vocabulary answers use
/// (docs/matching.md, "Symbols").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum DefKind {
    /// A function (a method when a class-like definition other than a
    /// module holds it directly).
    Function = 1,
    /// A method, declared as such by its grammar.
    Method = 2,
    /// A class (and a record, an object, a contract).
    Class = 3,
    /// A struct or union.
    Struct = 4,
    /// An enum.
    Enum = 5,
    /// An interface or protocol.
    Interface = 6,
    /// A trait.
    Trait = 7,
    /// An `impl` block, named by its type.
    Impl = 8,
    /// A module or namespace.
    Module = 9,
}

impl DefKind {
    /// Every kind, by its byte minus one.
    const ALL: [DefKind; 9] = [
        DefKind::Function,
        DefKind::Method,
        DefKind::Class,
        DefKind::Struct,
        DefKind::Enum,
        DefKind::Interface,
        DefKind::Trait,
        DefKind::Impl,
        DefKind::Module,
    ];

    /// Its name in answers.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Method => "method",
            DefKind::Class => "class",
            DefKind::Struct => "struct",
            DefKind::Enum => "enum",
            DefKind::Interface => "interface",
            DefKind::Trait => "trait",
            DefKind::Impl => "impl",
            DefKind::Module => "module",
        }
    }

    /// The kind named `name` in answers.
    pub(crate) fn from_name(name: &str) -> Option<DefKind> {
        DefKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind stored as `byte`.
    pub(crate) fn from_byte(byte: u8) -> Option<DefKind> {
        DefKind::ALL.get(usize::from(byte).checked_sub(1)?).copied()
    }

    /// Whether it holds other definitions as members (and is named as a
    /// place's `container`): every kind but functions and methods.
    pub(crate) fn is_container(self) -> bool {
        !matches!(self, DefKind::Function | DefKind::Method)
    }

    /// Whether a function it holds directly is a method: every container
    /// but a module or namespace.
    pub(crate) fn has_methods(self) -> bool {
        self.is_container() && self != DefKind::Module
    }

    /// Whether it is callable: a function or a method.
    pub(crate) fn is_callable(self) -> bool {
        !self.is_container()
    }
}

/// How one kind of definition is named, from `grammars.toml`.
#[derive(Debug, Clone)]
pub(crate) struct DefinitionRule {
    /// What it is.
    pub kind: DefKind,
    /// The field path from the definition's node to its name: each step a
    /// field id, and whether it is followed as long as it leads somewhere
    /// (`declarator*`: C's declarators nest).
    pub name: Vec<(std::num::NonZeroU16, bool)>,
}

impl DefinitionRule {
    /// The node naming `node`, if its path leads to one.
    pub(crate) fn name_of<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut at = node;
        for &(field, repeat) in &self.name {
            at = at.child_by_field_id(field.get())?;
            if repeat {
                while let Some(next) = at.child_by_field_id(field.get()) {
                    at = next;
                }
            }
        }
        Some(at)
    }
}

/// Index of a format inside its [`Registry`].
pub type FormatId = usize;

/// One format of `grammars.toml`, ready to parse.
#[derive(Clone)]
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
    /// What its node kinds are, by id: the kinds `grammars.toml` names,
    /// resolved in the grammar on first use (shared by clones), so a
    /// process reads only the grammars it parses with.
    kinds: Arc<OnceLock<Kinds>>,
    /// Its entry in `grammars.toml`, whose node kinds those are.
    spec: Arc<FormatSpec>,
    /// Identifier texts that keep their text in every mode (`self`): a
    /// set, since every identifier of a scan is looked up.
    pub keep_identifiers: HashSet<String>,
    /// Identifier texts that are literals (Kotlin's `true`, which its
    /// grammar parses as an identifier): `$lit` in weak mode, kept in the
    /// others.
    pub literal_identifiers: HashSet<String>,
    /// Contexts (prefix, suffix) a snippet that parses with errors is also
    /// tried in, such as a class body around a method.
    pub snippet_wrappers: Vec<(String, String)>,
    /// Delimiters of block comments, to recognize snippets cut inside one.
    pub block_comment: Option<(String, String)>,
    /// For a markup format (HTML, Vue, Svelte): where its code is, and in
    /// which formats. Its own nodes give no tokens.
    pub embedded: Option<Box<Embedded>>,
    /// Interpreters whose shebang line names this format (`python3`).
    pub interpreters: Vec<String>,
    /// Whole file names of this format, without extension (`Rakefile`).
    pub filenames: Vec<String>,
}

/// The code elements of a markup format: `<script>` blocks whose text is
/// parsed with another format's grammar at its place in the file.
#[derive(Clone, Debug)]
pub struct Embedded {
    /// Node kinds of the elements that hold code (`script_element`).
    pub element: Vec<u16>,
    /// Node kinds of an element's code (`raw_text`).
    pub code: Vec<u16>,
    /// Node kinds of an element's attributes, and of their names and values.
    pub attribute: Vec<u16>,
    pub attribute_name: Vec<u16>,
    pub attribute_value: Vec<u16>,
    /// The formats code can be in: `formats[default]` unless an attribute
    /// of `select` says otherwise.
    pub formats: Vec<Format>,
    /// Index in `formats` of an element that no attribute selects; `None`
    /// when this build lacks that format (such elements are skipped).
    pub default: Option<usize>,
    /// Attribute name → (lower-case value → index in `formats`). An element
    /// with such an attribute whose value is not listed holds no code of
    /// ours (`type="application/json"`, `lang="coffee"`, or a format this
    /// build lacks).
    pub select: Vec<(String, Vec<(String, usize)>)>,
}

impl Format {
    /// What its node kinds are. The shipped `grammars.toml` names only
    /// kinds that exist (its tests load it with [`Registry::load`], which
    /// checks every format).
    pub(crate) fn kinds(&self) -> &Kinds {
        self.resolve_kinds()
            .expect("grammars.toml names only node kinds of its grammars (checked by tests)")
    }

    /// Its node kinds, resolved now if not yet; an error for a kind its
    /// grammar lacks.
    fn resolve_kinds(&self) -> Result<&Kinds, GrammarError> {
        if let Some(kinds) = self.kinds.get() {
            return Ok(kinds);
        }
        let kinds = Kinds::resolve(&self.language, &self.spec)?;
        Ok(self.kinds.get_or_init(|| kinds))
    }

    /// The declared class of a node-kind id, if any.
    pub fn class_of(&self, kind_id: u16) -> Option<Class> {
        self.kinds().class_of(kind_id)
    }

    /// Whether a node-kind id is text outside the code (`outside_code`).
    pub(crate) fn is_outside_code(&self, kind_id: u16) -> bool {
        flag(&self.kinds().outside_code, kind_id)
    }

    /// Whether a node-kind id is an interpolation inside strings.
    pub(crate) fn is_interpolation(&self, kind_id: u16) -> bool {
        self.kinds().is_interpolation(kind_id)
    }
}

/// What each node-kind id of a format's grammar is, as `grammars.toml`
/// says.
#[derive(Debug)]
pub(crate) struct Kinds {
    /// Declared class of each node-kind id; `None` for undeclared kinds,
    /// which are descended into (or are `Other` when they are leaves).
    classes: Vec<Option<Class>>,
    /// Whether each node-kind id is an interpolation inside a string
    /// (`${...}`, `{...}` of an f-string), whose code is tokenized.
    interpolations: Vec<bool>,
    /// Whether any kind is an interpolation.
    has_interpolations: bool,
    /// Whether each node-kind id is an import declaration (`import`,
    /// `use`, `#include`, `package`...), whose leaves are dropped unless
    /// imports are kept.
    imports: Vec<bool>,
    /// Whether each node-kind id is text outside the code (PHP's inline
    /// HTML before `<?php`): a snippet starting with it is code cut from
    /// after the tag, and is tried in the wrappers.
    outside_code: Vec<bool>,
    /// Of each node-kind id: 0, 1 + its rule in `definition_rules` when
    /// it is a definition (`definitions`), or [`WRAPPER`] when it wraps a
    /// definition that starts inside it (`definition_wrappers`: a
    /// decorated definition, an export): one lookup per node of a walk.
    definitions: Vec<u8>,
    /// How each declared definition is named and what kind it is.
    definition_rules: Vec<DefinitionRule>,
}

/// The tag of a definition wrapper in [`Kinds`]'s `definitions`.
const WRAPPER: u8 = u8::MAX;

/// What a node kind is to the definitions of a text.
pub(crate) enum Defines<'k> {
    /// Nothing.
    Nothing,
    /// A definition, named and of a kind as its rule says.
    Definition(&'k DefinitionRule),
    /// A wrapper of a definition (a decorated definition, an export).
    Wrapper,
}

impl Kinds {
    /// The node kinds `spec` names, by id in `language`; an error for a
    /// name it lacks.
    fn resolve(language: &Language, spec: &FormatSpec) -> Result<Kinds, GrammarError> {
        let named = NamedKinds::of(language, &spec.name, &spec.grammar);
        let count = language.node_kind_count();
        let mut classes = vec![None; count];
        let declared = [
            (&spec.identifiers, Class::Identifier),
            (&spec.strings, Class::String),
            (&spec.numbers, Class::Number),
            (&spec.literals, Class::Literal),
            (&spec.comments, Class::Comment),
        ];
        for (kinds, class) in declared {
            for kind in kinds {
                for id in named.ids(kind)? {
                    classes[usize::from(id)] = Some(class);
                }
            }
        }
        let flags = |kinds: &[String]| -> Result<Vec<bool>, GrammarError> {
            let mut flags = vec![false; count];
            for kind in kinds {
                for id in named.ids(kind)? {
                    flags[usize::from(id)] = true;
                }
            }
            Ok(flags)
        };
        let interpolations = flags(&spec.interpolations)?;
        let mut definitions = vec![0u8; count];
        for kind in &spec.definition_wrappers {
            for id in named.ids(kind)? {
                definitions[usize::from(id)] = WRAPPER;
            }
        }
        let mut definition_rules = Vec::new();
        for rule in &spec.definitions {
            let mut name = Vec::new();
            for step in rule.name.split('.') {
                let (field, repeat) = match step.strip_suffix('*') {
                    Some(field) => (field, true),
                    None => (step, false),
                };
                let id = language.field_id_for_name(field).ok_or_else(|| {
                    GrammarError::UnknownField {
                        format: spec.name.clone(),
                        grammar: spec.grammar.clone(),
                        field: field.to_owned(),
                    }
                })?;
                name.push((id, repeat));
            }
            definition_rules.push(DefinitionRule {
                kind: rule.kind,
                name,
            });
            // Fewer than 255 rules per format (a format declares a handful).
            let tag = u8::try_from(definition_rules.len()).unwrap_or(WRAPPER - 1);
            for kind in &rule.nodes {
                for id in named.ids(kind)? {
                    definitions[usize::from(id)] = tag;
                }
            }
        }
        Ok(Kinds {
            classes,
            has_interpolations: interpolations.contains(&true),
            interpolations,
            imports: flags(&spec.import_kinds)?,
            outside_code: flags(&spec.outside_code)?,
            definitions,
            definition_rules,
        })
    }

    /// What a node-kind id is to definitions.
    #[inline]
    pub(crate) fn defines(&self, kind_id: u16) -> Defines<'_> {
        match self.definitions.get(usize::from(kind_id)).copied() {
            None | Some(0) => Defines::Nothing,
            Some(WRAPPER) => Defines::Wrapper,
            Some(tag) => match self.definition_rules.get(usize::from(tag) - 1) {
                Some(rule) => Defines::Definition(rule),
                None => Defines::Nothing,
            },
        }
    }

    /// Whether the format declares any definition.
    pub(crate) fn has_definitions(&self) -> bool {
        !self.definition_rules.is_empty()
    }

    /// The declared class of a node-kind id, if any.
    pub(crate) fn class_of(&self, kind_id: u16) -> Option<Class> {
        self.classes.get(usize::from(kind_id)).copied().flatten()
    }

    /// Whether strings of this format can hold interpolations at all.
    pub(crate) fn has_interpolations(&self) -> bool {
        self.has_interpolations
    }

    /// Whether a node-kind id is an import declaration (`import_kinds`).
    pub(crate) fn is_import(&self, kind_id: u16) -> bool {
        flag(&self.imports, kind_id)
    }

    /// Whether a node-kind id is an interpolation inside strings.
    pub(crate) fn is_interpolation(&self, kind_id: u16) -> bool {
        flag(&self.interpolations, kind_id)
    }
}

/// The flag of a node-kind id; `false` for ids the grammar lacks.
fn flag(flags: &[bool], kind_id: u16) -> bool {
    flags.get(usize::from(kind_id)).copied().unwrap_or(false)
}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Format").field("name", &self.name).finish()
    }
}

/// A problem in `grammars.toml`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GrammarError {
    /// The file is not valid TOML of the expected shape.
    #[error("grammars.toml is invalid: {0}")]
    Syntax(#[from] toml::de::Error),
    /// A format names a grammar that `language_for` does not register.
    #[error(
        "format {format:?} names grammar {grammar:?}, which is not registered in src/engine/grammar.rs"
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
    /// A definition's name path names a field its grammar lacks.
    #[error("format {format:?}: field {field:?} does not exist in grammar {grammar:?}")]
    UnknownField {
        format: String,
        grammar: String,
        field: String,
    },
    /// A markup format's code is in a format not defined before it.
    #[error("format {format:?} embeds {name:?}, which is not a format defined before it")]
    UnknownEmbedded { format: String, name: String },
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
    #[serde(default)]
    import_kinds: Vec<String>,
    keep_identifiers: Vec<String>,
    #[serde(default)]
    literal_identifiers: Vec<String>,
    snippet_wrappers: Vec<(String, String)>,
    #[serde(default)]
    block_comment: Option<(String, String)>,
    #[serde(default)]
    outside_code: Vec<String>,
    #[serde(default)]
    interpreters: Vec<String>,
    #[serde(default)]
    filenames: Vec<String>,
    #[serde(default)]
    embedded: Option<EmbeddedSpec>,
    #[serde(default)]
    definitions: Vec<DefinitionSpec>,
    #[serde(default)]
    definition_wrappers: Vec<String>,
}

/// One entry of a format's `definitions`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefinitionSpec {
    kind: DefKind,
    nodes: Vec<String>,
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmbeddedSpec {
    element: String,
    code: String,
    attribute: String,
    attribute_name: String,
    attribute_value: String,
    default: String,
    #[serde(default)]
    select: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
}

/// All known formats, with lookup by name, alias and extension.
///
/// A format of `grammars.toml` whose grammar this build left out (its
/// feature `lang-<format>` off) is no format of the registry: lookups miss
/// it as they miss an unknown one, and [`Registry::absent`] says why. A
/// markup format none of whose script formats is compiled in is left out
/// likewise; one that lacks some of them skips their scripts.
#[derive(Debug)]
pub struct Registry {
    formats: Vec<Format>,
    /// Every family of `grammars.toml`, those of formats left out too, so
    /// that a family's id is the same in every build (the store keeps it).
    families: Vec<String>,
    /// Formats of `grammars.toml` this build lacks.
    absent: Vec<Absent>,
    /// Lower-case name, alias or extension → format.
    by_name: HashMap<String, Claim>,
    /// Lower-case extension → format.
    by_extension: HashMap<String, Claim>,
    /// Interpreter of a shebang line → format.
    by_interpreter: HashMap<String, Claim>,
    /// Whole file name → format.
    by_filename: HashMap<String, Claim>,
    /// Markup formats whose scripts lack a format, each with those it
    /// lacks (`vue-typescript,tsx`): what makes this build's tokens differ
    /// from a full build's ([`Registry::tokens_key`]).
    partial: Vec<String>,
}

/// What a name, alias, extension, interpreter or file name is claimed by.
#[derive(Debug, Clone, Copy)]
enum Claim {
    /// A format of the registry.
    Format(FormatId),
    /// A format this build lacks, by its index in `absent`.
    Absent(usize),
}

/// A format of `grammars.toml` that this build does not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    /// Its canonical name.
    pub name: String,
    /// The Cargo features that would compile it in (its own; for a markup
    /// format whose grammar is in, those of its script formats).
    pub features: Vec<String>,
    /// For a markup format: the formats its scripts are in, none of which
    /// is compiled in.
    pub needs: Vec<String>,
}

impl fmt::Display for Absent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "format {:?} is not compiled into this build", self.name)?;
        if !self.needs.is_empty() {
            write!(
                f,
                ": its scripts are in {}, none of which is",
                self.needs.join(", ")
            )?;
        }
        write!(
            f,
            " (Cargo feature{} {})",
            if self.features.len() > 1 { "s" } else { "" },
            self.features.join(", ")
        )
    }
}

impl Registry {
    /// The registry of the embedded `grammars.toml`, built once per process
    /// from its JSON, its node kinds resolved as formats are first used.
    pub fn builtin() -> Arc<Registry> {
        static BUILTIN: OnceLock<Arc<Registry>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                let spec = serde_json::from_str(GRAMMARS_JSON)
                    .expect("build.rs writes grammars.toml as JSON of its shape");
                Arc::new(
                    Registry::read(spec, &[])
                        .expect("the embedded grammars.toml is valid (checked by tests)"),
                )
            })
            .clone()
    }

    /// Parses and checks a grammars file: every node kind it names must
    /// exist in its format's grammar.
    #[cfg(test)]
    pub(crate) fn load(text: &str) -> Result<Registry, GrammarError> {
        Registry::load_without(text, &[])
    }

    /// [`Registry::load`] as a build without the features `without` reads
    /// the file.
    #[cfg(test)]
    pub(crate) fn load_without(text: &str, without: &[&str]) -> Result<Registry, GrammarError> {
        let registry = Registry::read(toml::from_str(text)?, without)?;
        for format in &registry.formats {
            format.resolve_kinds()?;
        }
        Ok(registry)
    }

    /// The registry of a parsed grammars file, whose node kinds are
    /// resolved on first use ([`Format::kinds`]): a process reads only the
    /// grammars it parses with, where resolving all of them was most of its
    /// start.
    ///
    /// `without` names features to take as off (for tests: what a slim
    /// build does, in any build).
    fn read(spec: FileSpec, without: &[&str]) -> Result<Registry, GrammarError> {
        let mut registry = Registry {
            formats: Vec::new(),
            families: Vec::new(),
            absent: Vec::new(),
            by_name: HashMap::new(),
            by_extension: HashMap::new(),
            by_interpreter: HashMap::new(),
            by_filename: HashMap::new(),
            partial: Vec::new(),
        };
        for f in spec.format {
            let family_id = match registry.families.iter().position(|x| *x == f.family) {
                Some(i) => i,
                None => {
                    registry.families.push(f.family.clone());
                    registry.families.len() - 1
                }
            };
            let lower = |v: &[String]| v.iter().map(|s| s.to_lowercase()).collect::<Vec<_>>();
            let names = Names {
                name: f.name.clone(),
                aliases: lower(&f.aliases),
                extensions: lower(&f.extensions),
                interpreters: lower(&f.interpreters),
                filenames: f.filenames.clone(),
            };
            let (feature, language) =
                language_for(&f.grammar).ok_or_else(|| GrammarError::UnknownGrammar {
                    format: f.name.clone(),
                    grammar: f.grammar.clone(),
                })?;
            let Some(language) = language.filter(|_| !without.contains(&feature)) else {
                registry.leave_out(&names, vec![feature.to_owned()], Vec::new())?;
                continue;
            };
            let abi = language.abi_version();
            if !(tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION..=tree_sitter::LANGUAGE_VERSION)
                .contains(&abi)
            {
                return Err(GrammarError::Incompatible {
                    grammar: f.grammar.clone(),
                    abi,
                });
            }
            let embedded = match &f.embedded {
                Some(spec) => {
                    let named = NamedKinds::of(&language, &f.name, &f.grammar);
                    match registry.embedded(&named, &f, spec)? {
                        Ok(embedded) => Some(Box::new(embedded)),
                        Err(absent) => {
                            registry.leave_out(&names, absent.features, absent.needs)?;
                            continue;
                        }
                    }
                }
                None => None,
            };
            let mut keep_identifiers: HashSet<String> =
                f.keep_identifiers.iter().cloned().collect();
            for inner in embedded.iter().flat_map(|e| &e.formats) {
                keep_identifiers.extend(inner.keep_identifiers.iter().cloned());
            }
            let id = registry.formats.len();
            registry.claim(&names, Claim::Format(id))?;
            registry.formats.push(Format {
                id,
                name: names.name,
                aliases: names.aliases,
                extensions: names.extensions,
                family: f.family.clone(),
                family_id,
                language,
                kinds: Arc::new(OnceLock::new()),
                keep_identifiers,
                literal_identifiers: f.literal_identifiers.iter().cloned().collect(),
                snippet_wrappers: f.snippet_wrappers.clone(),
                block_comment: f.block_comment.clone(),
                embedded,
                interpreters: names.interpreters,
                filenames: names.filenames,
                spec: Arc::new(f),
            });
        }
        Ok(registry)
    }

    /// Records a format this build lacks, claiming its names.
    fn leave_out(
        &mut self,
        names: &Names,
        features: Vec<String>,
        needs: Vec<String>,
    ) -> Result<(), GrammarError> {
        self.claim(names, Claim::Absent(self.absent.len()))?;
        self.absent.push(Absent {
            name: names.name.clone(),
            features,
            needs,
        });
        Ok(())
    }

    /// The canonical name of what `claim` points at.
    fn claimant(&self, claim: Claim) -> &str {
        match claim {
            Claim::Format(id) => &self.formats[id].name,
            Claim::Absent(i) => &self.absent[i].name,
        }
    }

    /// Records the names of a format, refusing any already claimed (by a
    /// format compiled in or not, so every build checks the whole file).
    fn claim(&mut self, format: &Names, claim: Claim) -> Result<(), GrammarError> {
        let names = std::iter::once(format.name.to_lowercase())
            .chain(format.aliases.iter().cloned())
            .map(|n| ("name or alias", n))
            .chain(format.extensions.iter().map(|e| ("extension", e.clone())))
            .chain(
                format
                    .interpreters
                    .iter()
                    .map(|i| ("interpreter", i.clone())),
            )
            .chain(format.filenames.iter().map(|n| ("file name", n.clone())));
        for (what, name) in names {
            let map = match what {
                "extension" => &self.by_extension,
                "interpreter" => &self.by_interpreter,
                "file name" => &self.by_filename,
                _ => &self.by_name,
            };
            if let Some(&other) = map.get(&name) {
                return Err(GrammarError::Duplicate {
                    what,
                    name,
                    first: self.claimant(other).to_owned(),
                    second: format.name.clone(),
                });
            }
            let map = match what {
                "extension" => &mut self.by_extension,
                "interpreter" => &mut self.by_interpreter,
                "file name" => &mut self.by_filename,
                _ => &mut self.by_name,
            };
            map.insert(name, claim);
        }
        Ok(())
    }

    /// The code elements of a markup format, whose formats must come
    /// earlier in the file. Scripts in a format this build lacks are
    /// skipped, as those of a language dupcheck does not read; when it
    /// lacks them all, the markup format is left out (the inner `Err`).
    fn embedded(
        &mut self,
        kinds: &NamedKinds<'_>,
        f: &FormatSpec,
        spec: &EmbeddedSpec,
    ) -> Result<Result<Embedded, Absent>, GrammarError> {
        let mut formats: Vec<Format> = Vec::new();
        let mut lacking: Vec<&Absent> = Vec::new();
        let mut index_of = |name: &str| -> Result<Option<usize>, GrammarError> {
            let key = name.to_lowercase();
            let format = match self.by_name.get(&key) {
                Some(&Claim::Format(id)) if self.formats[id].embedded.is_none() => {
                    &self.formats[id]
                }
                Some(&Claim::Absent(i)) if self.absent[i].needs.is_empty() => {
                    if !lacking.contains(&&self.absent[i]) {
                        lacking.push(&self.absent[i]);
                    }
                    return Ok(None);
                }
                _ => {
                    return Err(GrammarError::UnknownEmbedded {
                        format: f.name.clone(),
                        name: name.to_owned(),
                    })
                }
            };
            Ok(Some(match formats.iter().position(|x| x.id == format.id) {
                Some(i) => i,
                None => {
                    formats.push(format.clone());
                    formats.len() - 1
                }
            }))
        };
        let default = index_of(&spec.default)?;
        let mut select = Vec::new();
        for (attribute, values) in &spec.select {
            let mut by_value = Vec::new();
            for (value, name) in values {
                if let Some(index) = index_of(name)? {
                    by_value.push((value.to_lowercase(), index));
                }
            }
            select.push((attribute.to_lowercase(), by_value));
        }
        let lacking: Vec<Absent> = lacking.into_iter().cloned().collect();
        if formats.is_empty() {
            return Ok(Err(Absent {
                name: f.name.clone(),
                features: lacking.iter().flat_map(|a| a.features.clone()).collect(),
                needs: lacking.iter().map(|a| a.name.clone()).collect(),
            }));
        }
        if !lacking.is_empty() {
            let names: Vec<&str> = lacking.iter().map(|a| a.name.as_str()).collect();
            self.partial.push(format!("{}-{}", f.name, names.join(",")));
        }
        Ok(Ok(Embedded {
            element: kinds.ids(&spec.element)?,
            code: kinds.ids(&spec.code)?,
            attribute: kinds.ids(&spec.attribute)?,
            attribute_name: kinds.ids(&spec.attribute_name)?,
            attribute_value: kinds.ids(&spec.attribute_value)?,
            formats,
            default,
            select,
        }))
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
    pub(crate) fn families(&self) -> &[String] {
        &self.families
    }

    /// Canonical names of all formats, in file order.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.formats.iter().map(|f| f.name.as_str()).collect()
    }

    /// Every name [`Registry::lookup`] finds (names, aliases and
    /// extensions, in lower case), sorted.
    pub(crate) fn spellings(&self) -> Vec<&str> {
        let mut all = compiled_keys(&self.by_name);
        all.extend(compiled_keys(&self.by_extension));
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The extensions (lower case) and whole file names [`Registry::for_path`]
    /// finds a format by, each sorted.
    pub(crate) fn path_names(&self) -> (Vec<&str>, Vec<&str>) {
        let mut extensions = compiled_keys(&self.by_extension);
        let mut names = compiled_keys(&self.by_filename);
        extensions.sort_unstable();
        names.sort_unstable();
        (extensions, names)
    }

    /// What of this build changes tokens that `grammars.toml` does not
    /// say: the markup formats whose scripts lack a format, and which.
    /// Empty in a full build and in any build whose markup formats have all
    /// their script formats, so that builds that tokenize alike share
    /// caches and the store's contents.
    pub(crate) fn tokens_key(&self) -> String {
        self.partial.join(";")
    }

    /// The claim of a name, alias or extension, as [`Registry::lookup`]
    /// reads it.
    fn claim_of(&self, name: &str) -> Option<Claim> {
        let key = name.trim().trim_start_matches('.').to_lowercase();
        self.by_name
            .get(&key)
            .or_else(|| self.by_extension.get(&key))
            .copied()
    }

    /// The format a request or `--format` names: canonical name, alias or
    /// extension without the dot, case-insensitive.
    pub fn lookup(&self, name: &str) -> Option<&Format> {
        match self.claim_of(name)? {
            Claim::Format(id) => Some(&self.formats[id]),
            Claim::Absent(_) => None,
        }
    }

    /// The format of `grammars.toml` that `name` names (as
    /// [`Registry::lookup`] reads it), if this build lacks it: why a lookup
    /// found nothing.
    pub(crate) fn absent(&self, name: &str) -> Option<&Absent> {
        match self.claim_of(name)? {
            Claim::Absent(i) => Some(&self.absent[i]),
            Claim::Format(_) => None,
        }
    }

    /// For tests: the format `name` names, or `None` when this build
    /// lacks it (a slim build: the test skips that case). A name
    /// `grammars.toml` does not know fails the test; a full build skips
    /// nothing.
    #[cfg(test)]
    pub(crate) fn compiled(&self, name: &str) -> Option<&Format> {
        match self.claim_of(name) {
            Some(Claim::Format(id)) => Some(&self.formats[id]),
            Some(Claim::Absent(_)) => None,
            None => panic!("{name:?} is no format of grammars.toml"),
        }
    }

    /// The claim of a file by its name: its extension, or for a file
    /// without one, its whole name (`Rakefile`).
    fn claim_of_path(&self, path: &std::path::Path) -> Option<Claim> {
        match path.extension() {
            Some(ext) => self.by_extension.get(&ext.to_str()?.to_lowercase()),
            None => self.by_filename.get(path.file_name()?.to_str()?),
        }
        .copied()
    }

    /// The format of a file by its name: its extension, or for a file
    /// without one, its whole name (`Rakefile`).
    pub(crate) fn for_path(&self, path: &std::path::Path) -> Option<&Format> {
        match self.claim_of_path(path)? {
            Claim::Format(id) => Some(&self.formats[id]),
            Claim::Absent(_) => None,
        }
    }

    /// The format of `grammars.toml` a file's name says it is in, if this
    /// build lacks it.
    pub(crate) fn absent_for_path(&self, path: &std::path::Path) -> Option<&Absent> {
        match self.claim_of_path(path)? {
            Claim::Absent(i) => Some(&self.absent[i]),
            Claim::Format(_) => None,
        }
    }

    /// The format a script's shebang line names, from the script's first
    /// bytes: `#!/usr/bin/python3`, `#!/usr/bin/env -S node --flag`. The
    /// interpreter's version is ignored (`python3.12` is `python`).
    pub(crate) fn for_shebang(&self, head: &[u8]) -> Option<&Format> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split_whitespace();
        let mut program = basename(words.next()?);
        if program == "env" {
            // Options of env (`-S`, `-i`) and variables it sets come first.
            program = basename(words.find(|w| !w.starts_with('-') && !w.contains('='))?);
        }
        let name = program
            .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
            .to_lowercase();
        match self.by_interpreter.get(&name)? {
            &Claim::Format(id) => Some(&self.formats[id]),
            Claim::Absent(_) => None,
        }
    }
}

/// The names a format claims, lower-cased but its canonical name and file
/// names.
struct Names {
    name: String,
    aliases: Vec<String>,
    extensions: Vec<String>,
    interpreters: Vec<String>,
    filenames: Vec<String>,
}

/// The last part of a `/`-separated path.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The named node kinds of one format's grammar, by name (one name can
/// have several ids, through grammar aliases), read in one pass over its
/// symbols: a table names dozens of kinds, and a grammar has hundreds.
struct NamedKinds<'f> {
    ids: HashMap<&'f str, Vec<u16>>,
    /// The format and its grammar, for errors.
    format: &'f str,
    grammar: &'f str,
}

impl<'f> NamedKinds<'f> {
    fn of(language: &'f Language, format: &'f str, grammar: &'f str) -> NamedKinds<'f> {
        let mut ids: HashMap<&'f str, Vec<u16>> = HashMap::new();
        for id in (0..language.node_kind_count()).filter_map(|id| u16::try_from(id).ok()) {
            if let Some(name) = language
                .node_kind_for_id(id)
                .filter(|_| language.node_kind_is_named(id))
            {
                ids.entry(name).or_default().push(id);
            }
        }
        NamedKinds {
            ids,
            format,
            grammar,
        }
    }

    /// Every id named `kind`; an error if none, since a misspelled kind
    /// would silently weaken detection.
    fn ids(&self, kind: &str) -> Result<Vec<u16>, GrammarError> {
        self.ids
            .get(kind)
            .cloned()
            .ok_or_else(|| GrammarError::UnknownNodeKind {
                format: self.format.to_owned(),
                grammar: self.grammar.to_owned(),
                kind: kind.to_owned(),
            })
    }
}

/// The names of `claims` that name a format this build has.
fn compiled_keys(claims: &HashMap<String, Claim>) -> Vec<&str> {
    (claims.iter())
        .filter(|(_, claim)| matches!(claim, Claim::Format(_)))
        .map(|(name, _)| name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node of the parse of `text` in `language`: kind, byte range,
    /// and whether it is an error or missing.
    #[cfg(feature = "lang-sql")]
    fn nodes(language: &Language, text: &str) -> Vec<(String, usize, usize, bool)> {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(language).unwrap();
        let tree = parser.parse(text, None).unwrap();
        let mut out = Vec::new();
        let mut cursor = tree.walk();
        loop {
            let node = cursor.node();
            out.push((
                node.kind().to_owned(),
                node.start_byte(),
                node.end_byte(),
                node.is_error() || node.is_missing(),
            ));
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return out;
                }
            }
        }
    }

    #[cfg(feature = "lang-sql")]
    #[test]
    fn issue_9_sql_dollar_quotes_parse_as_the_grammar_parses_them() {
        // The mended scanner (sequel_scanner.c) answers as the grammar's
        // own, where that leaks too: a body's own tag where a string may
        // start, tags of every length, unclosed ones, the fuzz input that
        // found the leak of `deserialize`.
        let grammar = Language::from(tree_sitter_sequel::LANGUAGE);
        let mended = mended_sql();
        let long = "x".repeat(3_000);
        let texts = [
            "SELECT $$a$$;".to_owned(),
            "\u{83}$$$$J2".to_owned(),
            "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;".to_owned(),
            "CREATE FUNCTION f() RETURNS text AS $body$ SELECT $$x$$ || $q$y$q$; $body$ LANGUAGE sql;"
                .to_owned(),
            "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 + $$ $$; $$ LANGUAGE sql;".to_owned(),
            "CREATE FUNCTION f() AS $a$ SELECT $a$, $b$ x $b$ FROM t WHERE $a$ $a$".to_owned(),
            "CREATE FUNCTION f() AS $$ SELECT 'a' || $$ || $t$ $$ $t$; $$;".to_owned(),
            format!("SELECT ${long}$ body ${long}$, $é$ x $é$, $$ open"),
            "SELECT $$ a $ b $$, $x y$ $$ z".to_owned(),
        ];
        for text in &texts {
            assert_eq!(nodes(&mended, text), nodes(&grammar, text), "{text}");
        }
        assert!(std::ptr::eq(
            mended.clone().into_raw(),
            mended_sql().into_raw()
        ));
    }

    #[test]
    fn every_node_kind_exists() {
        // `load` refuses unknown kinds; this keeps the shipped file honest.
        let registry = Registry::load(GRAMMARS_TOML).unwrap();
        let file: FileSpec = toml::from_str(GRAMMARS_TOML).unwrap();
        assert_eq!(
            registry.formats().len() + registry.absent.len(),
            file.format.len()
        );
        if cfg!(feature = "all-languages") {
            assert!(registry.absent.is_empty());
            assert_eq!(
                registry.names()[..5],
                ["javascript", "typescript", "tsx", "python", "rust"]
            );
        }
    }

    #[test]
    fn every_format_has_its_feature_in_cargo_toml() {
        // `lang-<format>` compiles a format's grammar in; `all-languages`
        // (the default) lists them all.
        let file: FileSpec = toml::from_str(GRAMMARS_TOML).unwrap();
        let wanted: Vec<String> = file
            .format
            .iter()
            .map(|f| format!("lang-{}", f.name))
            .collect();
        let registered: Vec<&str> = file
            .format
            .iter()
            .map(|f| language_for(&f.grammar).unwrap().0)
            .collect();
        assert_eq!(registered, wanted);
        assert_eq!(FEATURES, wanted);
        let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let manifest: toml::Value =
            toml::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
        let features = manifest["features"].as_table().unwrap();
        assert_eq!(
            features["default"],
            toml::Value::from(vec!["all-languages"])
        );
        let all: Vec<&str> = features["all-languages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(all, wanted);
        let declared: Vec<&String> = features.keys().filter(|k| k.starts_with("lang-")).collect();
        assert_eq!(declared.len(), wanted.len(), "{declared:?}");
    }

    #[test]
    fn a_build_without_a_grammar_knows_its_format_only_to_say_so() {
        let full = Registry::builtin();
        let r = Registry::load_without(GRAMMARS_TOML, &["lang-go", "lang-javascript"]).unwrap();
        assert!(r.lookup("go").is_none());
        assert_eq!(
            r.absent("golang").unwrap().to_string(),
            "format \"go\" is not compiled into this build (Cargo feature lang-go)"
        );
        assert!(r.absent("py").is_none() && r.absent("cobol").is_none());
        assert!(r.for_path(std::path::Path::new("cmd/main.go")).is_none());
        assert_eq!(
            r.absent_for_path(std::path::Path::new("cmd/main.go"))
                .map(|a| a.name.as_str()),
            Some("go")
        );
        assert!(r.for_shebang(b"#!/usr/bin/env node\n").is_none());
        assert!(!r.names().contains(&"go") && !r.names().contains(&"javascript"));
        // Families keep the ids of a full build: the store keeps them.
        assert_eq!(r.families(), full.families());
        if let (Some(py), Some(ours)) = (full.compiled("py"), r.compiled("py")) {
            assert_eq!(py.family_id, ours.family_id);
            assert_eq!(r.get(ours.id).name, "python");
        }
    }

    #[cfg(all(
        feature = "lang-vue",
        feature = "lang-html",
        feature = "lang-svelte",
        feature = "lang-typescript",
        feature = "lang-tsx"
    ))]
    #[test]
    fn markup_formats_skip_the_scripts_of_formats_a_build_lacks() {
        let r = Registry::load_without(GRAMMARS_TOML, &["lang-javascript"]).unwrap();
        let vue = r.lookup("vue").unwrap().embedded.as_ref().unwrap();
        let names: Vec<&str> = vue.formats.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["typescript", "tsx"]);
        assert_eq!(vue.default, None);
        let values: Vec<&str> = vue.select[0].1.iter().map(|(v, _)| v.as_str()).collect();
        assert_eq!(values, ["ts", "tsx", "typescript"]);
        assert_eq!(
            r.tokens_key(),
            "html-javascript;vue-javascript;svelte-javascript"
        );
        assert_eq!(Registry::builtin().tokens_key(), "");
        // Without any of its script formats, a markup format is left out.
        let without = ["lang-javascript", "lang-typescript", "lang-tsx"];
        let r = Registry::load_without(GRAMMARS_TOML, &without).unwrap();
        assert!(r.lookup("vue").is_none());
        assert_eq!(
            r.absent("vue").unwrap().to_string(),
            "format \"vue\" is not compiled into this build: its scripts are in javascript, \
             typescript, tsx, none of which is (Cargo features lang-javascript, lang-typescript, \
             lang-tsx)"
        );
        assert_eq!(
            r.absent("html").unwrap().to_string(),
            "format \"html\" is not compiled into this build: its scripts are in javascript, \
             typescript, none of which is (Cargo features lang-javascript, lang-typescript)"
        );
    }

    #[test]
    fn every_format_has_golden_tokens_and_planted_copies() {
        // testdata/tokens/<name>.txt (tokens::tests::golden_token_streams)
        // and testdata/languages/<name>/ (tests/it/languages.rs) per format.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let missing: Vec<String> = Registry::builtin()
            .formats()
            .iter()
            .flat_map(|f| {
                [
                    root.join("tokens").join(format!("{}.txt", f.name)),
                    root.join("languages").join(&f.name).join("copies.txt"),
                ]
            })
            .filter(|p| !p.exists())
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert!(missing.is_empty(), "missing: {missing:?}");
    }

    #[cfg(feature = "lang-javascript")]
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
            if r.compiled(want).is_none() {
                continue;
            }
            assert_eq!(
                r.lookup(query).map(|f| f.name.as_str()),
                Some(want),
                "{query}"
            );
        }
        assert!(r.lookup("cobol").is_none());
    }

    #[test]
    fn shebang_lines_name_formats() {
        let r = Registry::builtin();
        for (head, want) in [
            ("#!/usr/bin/env python3\nimport os\n", Some("python")),
            ("#!/usr/bin/python3.12", Some("python")),
            ("#! /bin/bash -e\n", Some("bash")),
            ("#!/bin/sh\n", Some("bash")),
            (
                "#!/usr/bin/env -S node --experimental-vm-modules\n",
                Some("javascript"),
            ),
            (
                "#!/usr/bin/env -S deno run --allow-read\n",
                Some("typescript"),
            ),
            ("#!/usr/bin/env RUBYOPT=-w ruby\n", Some("ruby")),
            ("#!/usr/local/bin/php8.2\n<?php\n", Some("php")),
            ("#!/usr/bin/env Rscript\n", Some("r")),
            ("#!/usr/bin/env perl\n", None),
            ("#!/usr/bin/env\n", None),
            ("# not a shebang\n", None),
            ("\u{feff}#!/bin/sh\n", None),
            ("", None),
        ] {
            if want.is_some_and(|w| r.compiled(w).is_none()) {
                continue;
            }
            assert_eq!(
                r.for_shebang(head.as_bytes()).map(|f| f.name.as_str()),
                want,
                "{head:?}"
            );
        }
        assert!(r.for_shebang(b"#!/bin/\xff\xfe\n").is_none());
    }

    #[test]
    fn files_without_extension_are_known_by_name_only() {
        let r = Registry::builtin();
        let name = |p: &str| r.for_path(std::path::Path::new(p)).map(|f| f.name.as_str());
        for (path, want) in [
            ("lib/tasks/Rakefile", Some("ruby")),
            ("Gemfile", Some("ruby")),
            ("Gemfile.lock", None),
            ("rakefile", None),
            ("include/list.h", Some("c")),
            ("src/List.HPP", Some("cpp")),
        ] {
            if want.is_none_or(|w| r.compiled(w).is_some()) {
                assert_eq!(name(path), want, "{path}");
            }
        }
    }

    #[cfg(all(
        feature = "lang-html",
        feature = "lang-vue",
        feature = "lang-javascript",
        feature = "lang-typescript",
        feature = "lang-tsx"
    ))]
    #[test]
    fn markup_formats_embed_earlier_formats_only() {
        let text = GRAMMARS_TOML.replacen("default = \"javascript\"", "default = \"svelte\"", 1);
        assert_eq!(
            Registry::load(&text).unwrap_err().to_string(),
            "format \"html\" embeds \"svelte\", which is not a format defined before it"
        );
        let r = Registry::builtin();
        let vue = r.lookup("vue").unwrap();
        assert_eq!(vue.family, "ecmascript");
        let embedded = vue.embedded.as_ref().unwrap();
        let names: Vec<&str> = embedded.formats.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["javascript", "typescript", "tsx"]);
    }

    #[test]
    fn c_cpp_and_objective_c_share_a_family() {
        let r = Registry::builtin();
        let family = |n: &str| r.compiled(n).map(|f| f.family_id);
        let pairs = [("c", "cpp"), ("c++", "objc"), ("h", "c")];
        for (a, b) in pairs {
            if let (Some(a), Some(b)) = (family(a), family(b)) {
                assert_eq!(a, b);
            }
        }
        if let (Some(c), Some(cs)) = (family("c"), family("csharp")) {
            assert_ne!(c, cs);
        }
    }

    #[test]
    fn ecmascript_formats_share_a_family() {
        let r = Registry::builtin();
        let family = |n: &str| r.compiled(n).map(|f| f.family_id);
        for (a, b) in [("js", "ts"), ("ts", "tsx")] {
            if let (Some(a), Some(b)) = (family(a), family(b)) {
                assert_eq!(a, b);
            }
        }
        if let (Some(js), Some(py)) = (family("js"), family("py")) {
            assert_ne!(js, py);
        }
    }
}
