//! Embedded code: the `<script>` blocks of markup formats (HTML, Vue,
//! Svelte), parsed with the grammar of their code at their place in the
//! file.
//!
//! In: a markup format's [`Embedded`] table, the parse of a file or snippet
//! of it and its text. Out: each script element's code range and the
//! format it is in (JavaScript unless `lang="ts"` or `type` says otherwise).
//!
//! Invariants: ranges are in source order, disjoint and never empty; an
//! element whose selecting attribute names a language we do not parse
//! (`type="application/json"`, `lang="coffee"`, or one this build lacks)
//! gives nothing, as does one without such an attribute when this build
//! lacks the default format; the markup's
//! own nodes give no tokens.

use tree_sitter::{Node, Range, Tree};

use crate::engine::grammar::{Embedded, Format};

/// One script element's code.
pub(crate) struct Script<'f> {
    /// The format its code is in.
    pub format: &'f Format,
    /// Where its code is in the file.
    pub range: Range,
}

/// The script elements of a parse of `text`, in order.
pub(crate) fn scripts<'f>(embedded: &'f Embedded, tree: &Tree, text: &str) -> Vec<Script<'f>> {
    let mut found = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        let is_element = embedded.element.contains(&node.kind_id());
        if is_element {
            found.extend(script(embedded, node, text));
        }
        if !is_element && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return found;
            }
        }
    }
}

/// The code of one script element, if it is in a format of ours.
fn script<'f>(embedded: &'f Embedded, element: Node<'_>, text: &str) -> Option<Script<'f>> {
    let mut cursor = element.walk();
    let code = element
        .children(&mut cursor)
        .find(|c| embedded.code.contains(&c.kind_id()))
        .filter(|c| c.start_byte() < c.end_byte())?;
    let mut chosen = embedded.default;
    for (name, value) in attributes(embedded, element, text) {
        if let Some((_, values)) = embedded.select.iter().find(|(n, _)| *n == name) {
            chosen = Some(values.iter().find(|(v, _)| *v == value)?.1);
        }
    }
    Some(Script {
        format: &embedded.formats[chosen?],
        range: code.range(),
    })
}

/// The attributes of an element's start tag, names and values lower-cased
/// (a value is empty when absent: `<script setup>`).
fn attributes(embedded: &Embedded, element: Node<'_>, text: &str) -> Vec<(String, String)> {
    let of_kind = |node: Node<'_>, kinds: &[u16]| {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if kinds.contains(&n.kind_id()) {
                return Some(text[n.byte_range()].trim().to_lowercase());
            }
            let mut cursor = n.walk();
            stack.extend(n.children(&mut cursor));
        }
        None
    };
    let mut found = Vec::new();
    let mut stack = vec![element];
    while let Some(node) = stack.pop() {
        if embedded.attribute.contains(&node.kind_id()) {
            if let Some(name) = of_kind(node, &embedded.attribute_name) {
                let value = of_kind(node, &embedded.attribute_value).unwrap_or_default();
                found.push((name, value));
            }
        } else if !embedded.code.contains(&node.kind_id()) {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use crate::engine::grammar::Registry;
    use crate::engine::parse::{parse, Budget};

    /// The format and text of each script of `text`, a file of `host`.
    #[cfg_attr(not(feature = "all-languages"), allow(dead_code))]
    fn scripts_of(host: &str, text: &str) -> Vec<(String, String)> {
        scripts_in(&Registry::builtin(), host, text)
    }

    /// [`scripts_of`] with the formats of `registry`.
    #[cfg_attr(not(feature = "all-languages"), allow(dead_code))]
    fn scripts_in(registry: &Registry, host: &str, text: &str) -> Vec<(String, String)> {
        let format = registry.lookup(host).unwrap();
        let tree = parse(format, text, None, &Budget::for_file(text.len())).unwrap();
        super::scripts(format.embedded.as_ref().unwrap(), &tree, text)
            .iter()
            .map(|s| {
                let code = &text[s.range.start_byte..s.range.end_byte];
                (s.format.name.clone(), code.trim().to_owned())
            })
            .collect()
    }

    #[cfg(all(
        feature = "lang-vue",
        feature = "lang-javascript",
        feature = "lang-typescript",
        feature = "lang-tsx"
    ))]
    #[test]
    fn attributes_select_the_format_in_any_case_and_quoting() {
        let text = "<script setup LANG=TS>let a: T;</script>\n<script lang='tsx'>x</script>\n<script>y</script>\n<script lang=\"coffee\">z</script>\n<script></script>";
        let want = [
            ("typescript", "let a: T;"),
            ("tsx", "x"),
            ("javascript", "y"),
        ];
        let got = scripts_of("vue", text);
        assert_eq!(
            got.iter()
                .map(|(f, c)| (f.as_str(), c.as_str()))
                .collect::<Vec<_>>(),
            want
        );
    }

    #[cfg(all(feature = "lang-vue", feature = "lang-typescript"))]
    #[test]
    fn scripts_in_a_format_the_build_lacks_are_skipped() {
        // A build without JavaScript: `<script>` and `lang="js"` give
        // nothing, `lang="ts"` is TypeScript still.
        let registry = Registry::load_without(
            crate::engine::grammar::GRAMMARS_TOML,
            &["lang-javascript", "lang-tsx"],
        )
        .unwrap();
        let text = "<script>a()</script>\n<script lang=\"ts\">let b: T;</script>\n<script lang=\"js\">c()</script>\n<script lang=\"tsx\">d</script>";
        assert_eq!(
            scripts_in(&registry, "vue", text),
            [("typescript".to_owned(), "let b: T;".to_owned())]
        );
    }

    #[cfg(all(feature = "lang-html", feature = "lang-javascript"))]
    #[test]
    fn nested_scripts_are_found_and_data_is_skipped() {
        let text = "<html><body><div>\n<script type=\"text/javascript\">a()</script>\n<script type=\"importmap\">{}</script>\n</div></body></html>";
        assert_eq!(
            scripts_of("html", text),
            [("javascript".to_owned(), "a()".to_owned())]
        );
    }
}
