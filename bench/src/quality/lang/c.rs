//! C.

use super::{Layout, Part, Sampler, Syntax};

pub struct C;

/// Declarators, down to the name they declare: never an array's size, a
/// function declarator's parameters or an initializer's value.
pub(super) const DECLARATORS: [(&str, Part); 8] = [
    ("parameter_declaration", Part::Field("declarator")),
    ("optional_parameter_declaration", Part::Field("declarator")),
    ("init_declarator", Part::Field("declarator")),
    ("pointer_declarator", Part::Field("declarator")),
    ("array_declarator", Part::Field("declarator")),
    ("function_declarator", Part::Field("declarator")),
    ("attributed_declarator", Part::First),
    ("variadic_parameter_declaration", Part::Field("declarator")),
];

const SYNTAX: Syntax = Syntax {
    formats: &["c"],
    functions: &["function_definition"],
    parameter_lists: &["parameter_list"],
    declarations: &[("declaration", Part::Field("declarator"))],
    names: &["identifier"],
    opaque: &[],
    parts: &DECLARATORS,
    skip_fields: &["type"],
    // Fields (`field_identifier`) and labels (`statement_identifier`) have
    // kinds of their own.
    not_local: &[],
    line_comment: "//",
    statement: "puts(\"dupcheck\");",
    blocks: &["compound_statement"],
    strings: &["string_literal"],
    layout: Layout::Braces,
    verbatim: &["string_literal", "concatenated_string"],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for C {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }
}
