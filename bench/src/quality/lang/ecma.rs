//! JavaScript and TypeScript (and TSX).

use tree_sitter::Node;

use super::{Layout, Part, Sampler, Syntax};

pub struct Ecma;

/// Kinds of function expressions.
const FUNCTION_EXPRESSIONS: [&str; 3] = [
    "arrow_function",
    "function_expression",
    "generator_function",
];

const SYNTAX: Syntax = Syntax {
    formats: &["javascript", "typescript", "tsx"],
    functions: &[
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
    ],
    parameter_lists: &["formal_parameters"],
    declarations: &[
        ("arrow_function", Part::Field("parameter")),
        ("catch_clause", Part::Field("parameter")),
        ("variable_declarator", Part::Field("name")),
    ],
    names: &["identifier"],
    opaque: &["type_annotation", "type", "decorator", "member_expression"],
    parts: &[
        ("required_parameter", Part::Field("pattern")),
        ("optional_parameter", Part::Field("pattern")),
        ("assignment_pattern", Part::Field("left")),
        ("object_assignment_pattern", Part::Field("left")),
        ("pair_pattern", Part::Field("value")),
    ],
    skip_fields: &["type", "condition"],
    not_local: &[],
    line_comment: "//",
    statement: "console.log(\"dupcheck\");",
    blocks: &["statement_block"],
    strings: &["string", "template_string"],
    layout: Layout::Braces,
    verbatim: &[],
    trim_comments: false,
    code_prefix: "",
};

impl Sampler for Ecma {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    fn is_function(&self, node: Node<'_>) -> bool {
        match node.kind() {
            kind if SYNTAX.functions.contains(&kind) => true,
            // Function expressions with a block body; one assigned to a
            // variable is sampled as its declaration instead.
            kind if FUNCTION_EXPRESSIONS.contains(&kind) => {
                let body = node.child_by_field_name("body").map(|b| b.kind());
                let parent = node.parent().map(|p| p.kind());
                body == Some("statement_block") && parent != Some("variable_declarator")
            }
            "lexical_declaration" | "variable_declaration" => {
                let value = node
                    .named_child(0)
                    .and_then(|d| d.child_by_field_name("value"));
                let is_function = value.is_some_and(|v| FUNCTION_EXPRESSIONS.contains(&v.kind()));
                node.named_child_count() == 1 && is_function
            }
            _ => false,
        }
    }

    /// Also `for (const x of …)`, but not `for (x of …)`, which assigns.
    fn declaration(&self, node: Node<'_>) -> Option<Part> {
        match node.kind() {
            "for_in_statement" if node.child_by_field_name("kind").is_some() => {
                Some(Part::Field("left"))
            }
            kind => SYNTAX
                .declarations
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|&(_, part)| part),
        }
    }

    /// JavaScript's automatic semicolons make `return\n{` mean something
    /// else, so only the braces after these move.
    fn opens_block(&self, code: &str) -> bool {
        let after = [") {", "else {", "=> {", "try {", "finally {", "do {"];
        code.ends_with(" {") && after.iter().any(|e| code.ends_with(e))
    }
}
