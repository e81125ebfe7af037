//! Python.

use super::{Layout, Part, Sampler, Syntax};

pub struct Python;

const SYNTAX: Syntax = Syntax {
    formats: &["python"],
    functions: &["function_definition"],
    parameter_lists: &["parameters", "lambda_parameters"],
    declarations: &[
        ("assignment", Part::Field("left")),
        ("augmented_assignment", Part::Field("left")),
        ("for_statement", Part::Field("left")),
        ("for_in_clause", Part::Field("left")),
        ("as_pattern", Part::Field("alias")),
    ],
    names: &["identifier"],
    opaque: &["type", "decorator", "attribute", "subscript"],
    parts: &[
        ("default_parameter", Part::Field("name")),
        ("typed_default_parameter", Part::Field("name")),
    ],
    skip_fields: &["type", "condition"],
    not_local: &[
        ("attribute", Part::Field("attribute")),
        ("keyword_argument", Part::Field("name")),
    ],
    line_comment: "#",
    statement: "print(\"dupcheck\")",
    blocks: &["block"],
    strings: &["string"],
    layout: Layout::Lines,
    verbatim: &[],
    trim_comments: false,
    code_prefix: "",
};

impl Sampler for Python {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }
}
