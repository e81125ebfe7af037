//! Java.

use super::{Layout, Part, Sampler, Syntax};

pub struct Java;

const SYNTAX: Syntax = Syntax {
    formats: &["java"],
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
    ],
    parameter_lists: &["formal_parameters", "inferred_parameters"],
    declarations: &[
        ("variable_declarator", Part::Field("name")),
        ("enhanced_for_statement", Part::Field("name")),
        ("catch_formal_parameter", Part::Field("name")),
        ("resource", Part::Field("name")),
        ("instanceof_expression", Part::Field("name")),
        ("record_pattern_component", Part::All),
        ("type_pattern", Part::All),
        // `x -> …`; `(x, y) -> …` is an `inferred_parameters` list.
        ("lambda_expression", Part::Field("parameters")),
    ],
    names: &["identifier"],
    opaque: &["modifiers", "dimensions"],
    parts: &[
        ("formal_parameter", Part::Field("name")),
        ("spread_parameter", Part::All),
        ("variable_declarator", Part::Field("name")),
    ],
    skip_fields: &["type"],
    not_local: &[
        ("field_access", Part::Field("field")),
        ("method_invocation", Part::Field("name")),
        ("method_reference", Part::All),
        ("labeled_statement", Part::All),
        ("break_statement", Part::All),
        ("continue_statement", Part::All),
        ("scoped_identifier", Part::Field("name")),
        ("element_value_pair", Part::Field("key")),
    ],
    line_comment: "//",
    statement: "System.out.println(\"dupcheck\");",
    blocks: &["block", "constructor_body", "switch_block_statement_group"],
    strings: &["string_literal"],
    layout: Layout::Braces,
    verbatim: &["string_literal"],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Java {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }
}
