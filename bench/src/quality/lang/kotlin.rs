//! Kotlin (the kotlin-ng grammar, whose nodes have few fields: a name is
//! often a node's first `identifier`).

use tree_sitter::Node;

use super::{block_after, in_part, Layout, Part, Sampler, Syntax};

pub struct Kotlin;

const SYNTAX: Syntax = Syntax {
    formats: &["kotlin"],
    functions: &[
        "function_declaration",
        "secondary_constructor",
        "anonymous_initializer",
    ],
    parameter_lists: &["function_value_parameters", "lambda_parameters"],
    declarations: &[
        ("variable_declaration", Part::First),
        ("catch_block", Part::First),
    ],
    names: &["identifier"],
    opaque: &["user_type", "nullable_type", "function_type", "modifiers"],
    // A list's default values are its children too.
    parts: &[
        ("function_value_parameters", Part::Kind("parameter")),
        ("parameter", Part::First),
        ("variable_declaration", Part::First),
    ],
    skip_fields: &[],
    not_local: &[("label", Part::All)],
    line_comment: "//",
    statement: "println(\"dupcheck\")",
    blocks: &["block", "statements", "control_structure_body"],
    strings: &["string_literal"],
    layout: Layout::Braces,
    verbatim: &["string_literal", "multiline_string_literal"],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Kotlin {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    /// Not `it`, a lambda's implicit parameter, which the format keeps as a
    /// keyword even where a variable is named so.
    fn binds(&self, name: &str) -> bool {
        name != "it"
    }

    /// Not a member after `.` or `?.` (`a.b`: `b`), a named argument's name
    /// (`f(name = x)`), a type's name or a label (`break@loop`).
    fn is_local(&self, node: Node<'_>) -> bool {
        let Some(parent) = node.parent() else {
            return true;
        };
        let first = parent.named_child(0) == Some(node);
        let named_argument = parent.kind() == "value_argument"
            && first
            && parent.named_child_count() >= 2
            && (0..parent.child_count()).any(|i| parent.child(i).is_some_and(|c| c.kind() == "="));
        let member = parent.kind() == "navigation_expression" && !first;
        let label = node
            .prev_sibling()
            .is_some_and(|p| p.kind() == "label" || p.kind().ends_with('@'));
        !(named_argument || member || label || in_part(node, SYNTAX.not_local))
    }

    /// A `{` after a call's arguments is a trailing lambda: only the braces
    /// of declarations and control structures move.
    fn opens_block(&self, code: &str) -> bool {
        let keywords = [
            "fun",
            "if",
            "for",
            "while",
            "when",
            "catch",
            "init",
            "class",
            "object",
            "interface",
            "constructor",
            "private fun",
            "override fun",
            "public fun",
            "internal fun",
            "protected fun",
        ];
        block_after(code, &keywords, &["else {", "try {", "finally {", "do {"])
    }
}
