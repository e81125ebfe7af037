//! Swift.

use super::{block_after, Layout, Part, Sampler, Syntax};

pub struct Swift;

const SYNTAX: Syntax = Syntax {
    formats: &["swift"],
    functions: &["function_declaration", "init_declaration"],
    parameter_lists: &["lambda_function_type_parameters"],
    declarations: &[
        ("parameter", Part::Field("name")),
        ("lambda_parameter", Part::Field("name")),
        ("property_declaration", Part::Field("name")),
        ("for_statement", Part::Field("item")),
        ("catch_block", Part::Field("error")),
        // `if let x`, `guard let x`, `case let x`.
        ("*", Part::Field("bound_identifier")),
    ],
    names: &["simple_identifier"],
    opaque: &[
        "user_type",
        "type_annotation",
        "array_type",
        "optional_type",
    ],
    parts: &[],
    skip_fields: &["external_name", "type"],
    not_local: &[
        ("navigation_suffix", Part::Field("suffix")),
        ("value_argument_label", Part::All),
        ("parameter", Part::Field("external_name")),
    ],
    line_comment: "//",
    statement: "print(\"dupcheck\")",
    blocks: &["statements"],
    strings: &["line_string_literal"],
    layout: Layout::Braces,
    verbatim: &[
        "multi_line_string_literal",
        "line_string_literal",
        "raw_string_literal",
    ],
    trim_comments: true,
    code_prefix: "",
};

impl Sampler for Swift {
    fn syntax(&self) -> &'static Syntax {
        &SYNTAX
    }

    /// A `{` after a call is a trailing closure: only the braces of
    /// declarations and control structures move.
    fn opens_block(&self, code: &str) -> bool {
        let keywords = [
            "func",
            "if",
            "for",
            "while",
            "switch",
            "catch",
            "init",
            "class",
            "struct",
            "enum",
            "extension",
            "private func",
            "public func",
            "override func",
            "fileprivate func",
            "internal func",
            "static func",
            "@objc func",
        ];
        block_after(code, &keywords, &["else {", "do {"])
    }
}
