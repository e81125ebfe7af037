//! Ruby.

use super::{Layout, Part, Sampler, Syntax};

pub struct Ruby;

const SYNTAX: Syntax = Syntax {
    formats: &["ruby"],
    functions: &["method", "singleton_method"],
    parameter_lists: &["method_parameters", "block_parameters", "lambda_parameters"],
    declarations: &[
        ("assignment", Part::Field("left")),
        ("operator_assignment", Part::Field("left")),
        ("for", Part::Field("pattern")),
        ("exception_variable", Part::All),
    ],
    names: &["identifier"],
    // A call's receiver, an element reference and a scoped constant are
    // assigned to, not declared.
    opaque: &["call", "element_reference", "scope_resolution"],
    parts: &[
        ("optional_parameter", Part::Field("name")),
        ("keyword_parameter", Part::Field("name")),
        ("splat_parameter", Part::Field("name")),
        ("hash_splat_parameter", Part::Field("name")),
        ("block_parameter", Part::Field("name")),
    ],
    skip_fields: &[],
    not_local: &[("call", Part::Field("method")), ("setter", Part::All)],
    line_comment: "#",
    statement: "puts \"dupcheck\"",
    blocks: &[
        "body_statement",
        "block_body",
        "then",
        "else",
        "do",
        "begin",
    ],
    strings: &["string"],
    layout: Layout::Lines,
    verbatim: &[
        "heredoc_body",
        "string",
        "string_array",
        "symbol_array",
        "regex",
        "subshell",
    ],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Ruby {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }
}
