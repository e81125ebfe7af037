//! C#.

use super::{Layout, Part, Sampler, Syntax};

pub struct CSharp;

const SYNTAX: Syntax = Syntax {
    formats: &["csharp"],
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "destructor_declaration",
        "operator_declaration",
        "conversion_operator_declaration",
        "local_function_statement",
    ],
    parameter_lists: &["parameter_list", "bracketed_parameter_list"],
    declarations: &[
        ("variable_declarator", Part::Field("name")),
        ("tuple_pattern", Part::Field("name")),
        ("foreach_statement", Part::Field("left")),
        ("catch_declaration", Part::Field("name")),
        ("declaration_pattern", Part::Field("name")),
        ("declaration_expression", Part::Field("name")),
        ("recursive_pattern", Part::Field("name")),
        ("var_pattern", Part::All),
        ("parenthesized_variable_designation", Part::All),
        // `x => …`; `(x, y) => …` is a `parameter_list`.
        ("lambda_expression", Part::Field("parameters")),
        ("from_clause", Part::Field("name")),
        ("let_clause", Part::First),
        ("join_clause", Part::Field("name")),
        ("query_continuation", Part::First),
    ],
    names: &["identifier", "implicit_parameter"],
    opaque: &["attribute_list", "modifier"],
    parts: &[("parameter", Part::Field("name"))],
    skip_fields: &["type"],
    not_local: &[
        ("member_access_expression", Part::Field("name")),
        ("member_binding_expression", Part::Field("name")),
        ("argument", Part::Field("name")),
        ("qualified_name", Part::All),
        ("generic_name", Part::All),
        ("labeled_statement", Part::All),
        ("goto_statement", Part::All),
        ("name_colon", Part::All),
        ("name_equals", Part::All),
        ("attribute", Part::Field("name")),
    ],
    line_comment: "//",
    statement: "Console.WriteLine(\"dupcheck\");",
    blocks: &["block", "switch_section"],
    strings: &[
        "string_literal",
        "verbatim_string_literal",
        "raw_string_literal",
    ],
    layout: Layout::Braces,
    verbatim: &[
        "string_literal",
        "verbatim_string_literal",
        "raw_string_literal",
        "interpolated_string_expression",
    ],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for CSharp {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    /// Nor the property an object initializer sets (`new P { X = x }`).
    fn is_local(&self, node: tree_sitter::Node<'_>) -> bool {
        let initializer = |n: tree_sitter::Node<'_>| {
            n.kind() == "assignment_expression"
                && n.child_by_field_name("left") == Some(node)
                && n.parent()
                    .is_some_and(|p| p.kind() == "initializer_expression")
        };
        !super::in_part(node, SYNTAX.not_local) && !node.parent().is_some_and(initializer)
    }
}
