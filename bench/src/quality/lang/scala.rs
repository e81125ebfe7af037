//! Scala.

use super::{block_after, lower_case, Layout, Part, Sampler, Syntax};

pub struct Scala;

const SYNTAX: Syntax = Syntax {
    formats: &["scala"],
    functions: &["function_definition"],
    parameter_lists: &["parameters", "bindings", "class_parameters"],
    declarations: &[
        ("val_definition", Part::Field("pattern")),
        ("var_definition", Part::Field("pattern")),
        ("case_clause", Part::Field("pattern")),
        ("enumerator", Part::First),
        ("generator", Part::Field("left")),
        // `x => …`; `(x, y) => …` is a `bindings` list.
        ("lambda_expression", Part::Field("parameters")),
    ],
    names: &["identifier"],
    opaque: &["stable_identifier", "field_expression", "type_identifier"],
    parts: &[
        ("parameter", Part::Field("name")),
        ("binding", Part::Field("name")),
        ("typed_pattern", Part::Field("pattern")),
        ("case_class_pattern", Part::Field("pattern")),
        ("infix_pattern", Part::All),
    ],
    skip_fields: &["type", "operator", "return_type", "default_value"],
    not_local: &[
        ("field_expression", Part::Field("field")),
        ("named_argument", Part::Field("name")),
        ("stable_identifier", Part::All),
    ],
    line_comment: "//",
    statement: "println(\"dupcheck\")",
    blocks: &["block", "template_body"],
    strings: &["string"],
    layout: Layout::Braces,
    verbatim: &[
        "string",
        "interpolated_string_expression",
        "interpolated_string",
    ],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Scala {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    /// A capitalized name in a pattern is a constant matched against.
    fn binds(&self, name: &str) -> bool {
        lower_case(name)
    }

    /// Not a named argument's name (`f(name = x)`).
    fn is_local(&self, node: tree_sitter::Node<'_>) -> bool {
        let named_argument = node.parent().is_some_and(|p| {
            p.kind() == "assignment_expression"
                && p.child_by_field_name("left") == Some(node)
                && p.parent().is_some_and(|a| a.kind() == "arguments")
        });
        !named_argument && !super::in_part(node, SYNTAX.not_local)
    }

    /// A `{` after a call is a block argument and one after `new X` a class
    /// body: only the braces of definitions and control structures move,
    /// and never after `match` (which tree-sitter-scala wants on its line).
    fn opens_block(&self, code: &str) -> bool {
        if code.ends_with("match {") || code.contains("new ") {
            return false;
        }
        let keywords = [
            "def",
            "if",
            "for",
            "while",
            "class",
            "object",
            "trait",
            "private def",
            "override def",
            "protected def",
            "final def",
            "implicit def",
        ];
        block_after(code, &keywords, &["else {", "try {", "finally {", "= {"])
    }
}
