//! PHP: a local is a `variable_name` (`$x`), whose `name` leaf is renamed.

use tree_sitter::Node;

use super::{in_part, Layout, Part, Sampler, Syntax};

pub struct Php;

const SYNTAX: Syntax = Syntax {
    formats: &["php"],
    functions: &["function_definition", "method_declaration"],
    parameter_lists: &["formal_parameters"],
    // Every variable of a function is a local but `$this` and the
    // superglobals.
    declarations: &[("variable_name", Part::All)],
    names: &["name"],
    opaque: &["attribute_list"],
    parts: &[
        ("simple_parameter", Part::Field("name")),
        ("variadic_parameter", Part::Field("name")),
        ("property_promotion_parameter", Part::Field("name")),
    ],
    skip_fields: &["type", "default_value"],
    not_local: &[],
    line_comment: "//",
    statement: "echo \"dupcheck\";",
    blocks: &["compound_statement", "switch_block", "case_statement"],
    strings: &["string", "encapsed_string"],
    layout: Layout::Braces,
    verbatim: &["heredoc", "nowdoc", "encapsed_string", "string"],
    trim_comments: true,
    code_prefix: "<?php\n",
};

impl Sampler for Php {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    fn binds(&self, name: &str) -> bool {
        let superglobal = name.starts_with('_') && name[1..].starts_with(char::is_uppercase);
        name != "GLOBALS" && !superglobal
    }

    /// Only the `name` of a `$variable` (not a function's, a class's or a
    /// member's), and not a static property (`self::$x`).
    fn is_local(&self, node: Node<'_>) -> bool {
        let static_property = [("scoped_property_access_expression", Part::Field("name"))];
        node.parent()
            .is_some_and(|p| p.kind() == "variable_name" && !in_part(p, &static_property))
    }
}
