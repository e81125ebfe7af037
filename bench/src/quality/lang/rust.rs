//! Rust.

use super::{lower_case, Layout, Part, Sampler, Syntax};

pub struct Rust;

const SYNTAX: Syntax = Syntax {
    formats: &["rust"],
    functions: &["function_item"],
    parameter_lists: &["parameters", "closure_parameters"],
    declarations: &[
        ("let_declaration", Part::Field("pattern")),
        ("for_expression", Part::Field("pattern")),
        ("let_condition", Part::Field("pattern")),
        ("match_arm", Part::Field("pattern")),
    ],
    names: &["identifier"],
    opaque: &["type", "attribute"],
    parts: &[
        ("parameter", Part::Field("pattern")),
        ("field_pattern", Part::Field("pattern")),
    ],
    // Neither the path of a tuple-struct pattern (`Some` of `Some(x)`) nor
    // a match guard binds anything.
    skip_fields: &["type", "condition"],
    not_local: &[
        ("scoped_identifier", Part::Field("name")),
        ("scoped_type_identifier", Part::Field("name")),
        ("macro_invocation", Part::Field("macro")),
        ("lifetime", Part::All),
        ("label", Part::All),
    ],
    line_comment: "//",
    statement: "let _ = \"dupcheck\";",
    blocks: &["block"],
    strings: &["string_literal", "raw_string_literal"],
    layout: Layout::Braces,
    verbatim: &[],
    trim_comments: false,
    code_prefix: "",
};

impl Sampler for Rust {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    /// Enum variants and constants are capitalized.
    fn binds(&self, name: &str) -> bool {
        lower_case(name)
    }
}
