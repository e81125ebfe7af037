//! Go.

use tree_sitter::Node;

use super::{in_part, Layout, Part, Sampler, Syntax};

pub struct Go;

const SYNTAX: Syntax = Syntax {
    formats: &["go"],
    functions: &["function_declaration", "method_declaration"],
    // Receiver, parameters and named results.
    parameter_lists: &["parameter_list"],
    declarations: &[
        ("short_var_declaration", Part::Field("left")),
        ("var_spec", Part::Field("name")),
        ("const_spec", Part::Field("name")),
        ("range_clause", Part::Field("left")),
        ("type_switch_statement", Part::Field("alias")),
        ("receive_statement", Part::Field("left")),
    ],
    names: &["identifier"],
    opaque: &[],
    parts: &[
        ("parameter_declaration", Part::Field("name")),
        ("variadic_parameter_declaration", Part::Field("name")),
    ],
    skip_fields: &["type"],
    // Fields, methods, packages and labels have kinds of their own
    // (`field_identifier`, `package_identifier`, `label_name`).
    not_local: &[],
    line_comment: "//",
    statement: "println(\"dupcheck\")",
    blocks: &["statement_list"],
    strings: &["interpreted_string_literal", "raw_string_literal"],
    layout: Layout::Joins,
    verbatim: &["interpreted_string_literal", "raw_string_literal"],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Go {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    /// Not the key of a keyed element (`Point{X: x}`), which names a field.
    fn is_local(&self, node: Node<'_>) -> bool {
        let key = |n: Node<'_>| in_part(n, &[("keyed_element", Part::Field("key"))]);
        !node
            .parent()
            .is_some_and(|p| p.kind() == "literal_element" && key(p))
    }
}
