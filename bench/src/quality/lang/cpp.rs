//! C++.

use super::c::DECLARATORS;
use super::{Layout, Part, Sampler, Syntax};

pub struct Cpp;

const PARTS: [(&str, Part); 11] = [
    DECLARATORS[0],
    DECLARATORS[1],
    DECLARATORS[2],
    DECLARATORS[3],
    DECLARATORS[4],
    DECLARATORS[5],
    DECLARATORS[6],
    DECLARATORS[7],
    ("reference_declarator", Part::All),
    ("structured_binding_declarator", Part::All),
    ("optional_type_parameter_declaration", Part::Field("name")),
];

const SYNTAX: Syntax = Syntax {
    formats: &["cpp"],
    functions: &["function_definition"],
    parameter_lists: &["parameter_list"],
    declarations: &[
        ("declaration", Part::Field("declarator")),
        ("for_range_loop", Part::Field("declarator")),
    ],
    names: &["identifier"],
    opaque: &["qualified_identifier", "template_function"],
    parts: &PARTS,
    skip_fields: &["type", "value", "default_value", "size"],
    not_local: &[
        ("qualified_identifier", Part::Field("name")),
        ("template_function", Part::Field("name")),
        ("template_method", Part::Field("name")),
        ("destructor_name", Part::All),
    ],
    line_comment: "//",
    statement: "std::puts(\"dupcheck\");",
    blocks: &["compound_statement"],
    strings: &["string_literal", "raw_string_literal"],
    layout: Layout::Braces,
    verbatim: &[
        "string_literal",
        "raw_string_literal",
        "concatenated_string",
    ],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Cpp {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }
}
