//! How deep a YAML text nests its flow collections (`[...]`, `{...}`), found before the text
//! reaches serde_yaml.
//!
//! libyaml, under serde_yaml, keeps a pending key for every open flow collection and looks
//! through all of them at each token, so its time grows with depth times length: `[` 10,000
//! deep followed by as many `]` (20 KB) took half a second to refuse on the development
//! machine, 100,000 deep (200 KB) 26 seconds, and a few megabytes would hold a configuration
//! reload for hours. Block nesting (indentation) does not have this cost. No configuration
//! nests flow collections more than two or three deep, so a text deeper than
//! [`MAX_FLOW_DEPTH`] is refused before it is parsed.
//!
//! The scan is not a YAML parser. It steps over comments and quoted scalars, so that brackets
//! in them are not counted, over anchors and tags, and over block scalars (`|` or `>` where a
//! value can begin, then every line indented past the node that holds it, as YAML reads
//! them); outside any flow collection it counts a bracket only where a value can begin (at a
//! line's start, after `: `, `- `, `? `, `,` or another bracket), so that one inside a plain
//! scalar such as `a[1` is not counted. Inside one every bracket counts, and a quote opens a
//! quoted scalar only where libyaml begins a token: after a bracket, a `,`, a quoted scalar,
//! `: ` or `? `, or a `:` or `?` that follows one of those (`{"k":"v"}`); in `[b:'x']` or
//! `[-'x']` the quote is text in a plain scalar, and the brackets after it nest. Two kinds of
//! text it still reads otherwise than YAML does, scanning their lines as YAML: the later
//! lines of a plain scalar that runs over several lines outside any flow collection, and the
//! lines of a top-level block scalar that are not indented (which YAML allows; the scan ends
//! such a scalar at once). There a bracket at a line's start counts, so the scan may count
//! too many, which would take more than [`MAX_FLOW_DEPTH`] unclosed brackets: text that no
//! setting takes; and a quote or a `#` may hide what follows, so it may count too few, which
//! lets a deep text through to be parsed at libyaml's cost.

/// The deepest flow nesting accepted.
pub(crate) const MAX_FLOW_DEPTH: usize = 64;

/// The line and column (both from 1, the column in characters) of the bracket that opens a
/// flow collection more than `limit` deep, if one does.
pub(crate) fn flow_deeper_than(text: &str, limit: usize) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    let mut at = Position { line: 1, column: 0 };
    // The last character on this line that was not blank, and whether a blank (or the line's
    // start) came after it.
    let mut previous: Option<char> = None;
    let mut blank_before = true;
    // Whether the last character that was not blank ended a token (a quoted scalar's closing
    // quote, or a flow indicator), and whether the one before it did: inside a collection, a
    // `:` or `?` there is an indicator, and one inside a plain scalar is text.
    let mut ended_token = false;
    let mut previous_after_token = false;
    // The column of the node that began last on this line (a key, or a sequence entry): a
    // block scalar after it runs while its lines are indented past it.
    let mut node_column = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        at.column += 1;
        if ends_line(c, &mut chars, &mut at) {
            // A `:` or `?` at a line's end had a blank after it: an indicator.
            ended_token |= matches!(previous, Some(':' | '?'));
            (previous, blank_before) = (None, true);
            continue;
        }
        if matches!(c, ' ' | '\t') {
            blank_before = true;
            continue;
        }
        // libyaml skips a byte-order mark at a line's start (not only the text's).
        if c == '\u{feff}' && previous.is_none() {
            continue;
        }
        // Where a value (a quoted scalar, a flow collection) can begin. `:`, `-` and `?` are
        // indicators when a blank follows them; inside a collection `:` and `?` are also
        // where a token begins, after another token (`{"k":"v"}`, `[?'x']`), and `-` never
        // is (`[-'x']` and `[b:'x']` are plain text to libyaml). Inside a collection every
        // bracket counts anyway, and a line begins with a value only after a token ended.
        let value_may_begin = match previous {
            None => depth == 0 || ended_token,
            Some(':' | '-' | '?') if blank_before => true,
            Some(':' | '?') => depth > 0 && previous_after_token,
            Some(',' | '[' | '{') => depth > 0,
            Some(_) => false,
        };
        if value_may_begin && depth == 0 {
            if matches!(c, '|' | '>') {
                skip_block_scalar(node_column, &mut chars, &mut at);
                (previous, blank_before) = (None, true);
                continue;
            }
            // An anchor or a tag stands before its node, and a comment is none.
            if !matches!(c, '&' | '!' | '#') {
                node_column = at.column;
            }
        }
        let ends_a_token = match c {
            '#' if blank_before => {
                // A comment runs to the end of the line.
                skip_line(&mut chars, &mut at);
                (previous, blank_before) = (None, true);
                continue;
            }
            '&' | '!' if value_may_begin => {
                // An anchor or a tag stands before the value it names: the value may still
                // begin after it.
                while chars.next_if(|&next| !is_blank_or_flow(next)).is_some() {
                    at.column += 1;
                }
                blank_before = true;
                continue;
            }
            '\'' | '"' if value_may_begin => {
                skip_quoted(c, &mut chars, &mut at);
                true
            }
            '[' | '{' if depth > 0 || value_may_begin => {
                depth += 1;
                if depth > limit {
                    return Some((at.line, at.column));
                }
                true
            }
            ']' | '}' if depth > 0 => {
                depth -= 1;
                true
            }
            ',' => depth > 0,
            _ => false,
        };
        previous_after_token = ended_token;
        ended_token = ends_a_token;
        (previous, blank_before) = (Some(c), false);
    }
    None
}

/// Whether `c` ends an anchor's or a tag's name.
fn is_blank_or_flow(c: char) -> bool {
    matches!(c, ' ' | '\t' | '[' | ']' | '{' | '}' | ',') || is_line_break(c)
}

/// The characters libyaml ends a line at: line feed, carriage return (alone, or before a line
/// feed, which then belongs to the same break), next line, line and paragraph separators.
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// If `c`, just read, is a line break: moves past the rest of it (the line feed after a
/// carriage return), to the next line.
fn ends_line(c: char, chars: &mut Chars<'_>, at: &mut Position) -> bool {
    if !is_line_break(c) {
        return false;
    }
    if c == '\r' {
        chars.next_if_eq(&'\n');
    }
    at.next_line();
    true
}

type Chars<'t> = std::iter::Peekable<std::str::Chars<'t>>;

/// Where the scan is: line and column from 1, the column counting characters.
struct Position {
    line: usize,
    column: usize,
}

impl Position {
    fn next_line(&mut self) {
        self.line += 1;
        self.column = 0;
    }
}

/// Moves past a block scalar (`|` or `>`, just read) of the node at `node_column`: the rest
/// of its header line, then every line that is blank or indented past that column, as YAML
/// reads the scalar's lines (its own lines are more indented than the node that holds it).
/// Stops at the start of the first line that is not, having consumed only its indentation.
fn skip_block_scalar(node_column: usize, chars: &mut Chars<'_>, at: &mut Position) {
    // The header's indicators and any comment: to the end of the line.
    if !skip_line(chars, at) {
        return;
    }
    loop {
        while chars.next_if_eq(&' ').is_some() {
            at.column += 1;
        }
        match chars.peek() {
            None => return,
            Some(&c) if is_line_break(c) => {}
            // The first character past the indentation, at `at.column + 1`.
            Some(_) if at.column + 1 > node_column => {}
            Some(_) => return,
        }
        // A line of the scalar (or a blank one): to its end.
        if !skip_line(chars, at) {
            return;
        }
    }
}

/// Moves past the rest of the line, its line break included; `false` if the text ended first.
fn skip_line(chars: &mut Chars<'_>, at: &mut Position) -> bool {
    while let Some(c) = chars.next() {
        if ends_line(c, chars, at) {
            return true;
        }
        at.column += 1;
    }
    false
}

/// Moves past a quoted scalar whose opening `quote` was just read: `\` escapes the next
/// character in double quotes, and `''` is a quote in single quotes. An unclosed quote runs to
/// the end of the text.
fn skip_quoted(quote: char, chars: &mut Chars<'_>, at: &mut Position) {
    while let Some(c) = chars.next() {
        at.column += 1;
        if ends_line(c, chars, at) {
            continue;
        }
        match c {
            '\\' if quote == '"' => {
                if let Some(escaped) = chars.next() {
                    at.column += 1;
                    ends_line(escaped, chars, at);
                }
            }
            '\'' if quote == '\'' && chars.peek() == Some(&'\'') => {
                chars.next();
                at.column += 1;
            }
            _ if c == quote => return,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::flow_deeper_than;

    fn nested(open: &str, close: &str, depth: usize) -> String {
        format!("{}{}", open.repeat(depth), close.repeat(depth))
    }

    #[test]
    fn the_bracket_one_past_the_limit_is_named() {
        let text = format!("a: 1\nfailure_rate: {}\n", nested("[", "]", 5));
        assert_eq!(flow_deeper_than(&text, 4), Some((2, 19)));
        assert_eq!(flow_deeper_than(&text, 5), None);
        let text = format!("failure_rate: {}", nested("{a: ", "}", 5));
        assert_eq!(flow_deeper_than(&text, 4), Some((1, 31)));
    }

    #[test]
    fn closed_collections_do_not_add_up() {
        let text = format!("- [{}]\n", vec!["[[a], {b: [c]}]"; 1000].join(", "));
        assert_eq!(flow_deeper_than(&text, 4), None);
        assert_eq!(flow_deeper_than(&text, 3), Some((1, 14)));
    }

    #[test]
    fn a_collection_spread_over_lines_with_comments_is_followed() {
        let text = "a: [ # [[[[\n  [b, # ]]]]\n    [c]],\n  [d]\n]\n";
        assert_eq!(flow_deeper_than(text, 3), None);
        assert_eq!(flow_deeper_than(text, 2), Some((3, 5)));
    }

    #[test]
    fn brackets_in_comments_quotes_and_plain_scalars_are_not_counted() {
        let deep = "[".repeat(100);
        for text in [
            format!("# {deep}\na: 1"),
            format!("a: 1 # {deep}"),
            format!("a: \"{deep}\""),
            format!("a: \"\\\" {deep}\""),
            format!("a: '{deep}'"),
            format!("a: 'it''s {deep}'"),
            format!("a: '\n{deep}\n'"),
            format!("a: b{deep}"),
            format!("a: b#{deep}"),
            format!("{deep}: 1").replacen('[', "x", 1),
            format!("a: [\"{deep}\", '{deep}']"),
        ] {
            assert_eq!(flow_deeper_than(&text, 2), None, "{text:?}");
        }
    }

    #[test]
    fn anchors_and_tags_do_not_hide_a_collection() {
        let text = format!("a: {}", nested("&x !!seq [", "]", 10));
        assert_eq!(flow_deeper_than(&text, 9), Some((1, 103)));
        let text = format!("a: !t{}", nested("[", "]", 10));
        assert!(flow_deeper_than(&text, 9).is_some());
    }

    #[test]
    fn a_block_scalar_hides_nothing_after_it() {
        // A quote or a comment sign in a block scalar's lines is text: read as YAML, the quote
        // would run to the quote two lines on and hide the deep collection between them.
        let deep = nested("[", "]", 10);
        for text in [
            format!("a: |\n  \"\nb: {deep}\nc: \"x\"\n"),
            format!("a: >-\n  '\nb: {deep}\nc: 'x'\n"),
            format!("- |\n \"\n- {deep}\n- \"\n"),
            format!("top:\n  a: |2 # header comment \"\n    \"\n\n  b: {deep}\n  c: \"\n"),
            format!("- a: |\n   \"\n  b: {deep}\n  c: \"\n"),
        ] {
            assert!(flow_deeper_than(&text, 9).is_some(), "{text:?}");
        }
    }

    #[test]
    fn brackets_in_a_block_scalar_are_text() {
        let deep = "[".repeat(100);
        for text in [
            format!("a: |\n  {deep}\n  {deep}\nb: 1\n"),
            format!("a: >+\n\n  x\n\n  {deep}\n"),
            format!("- a: |\n    {deep}\n  b: 2\n"),
            format!("a: &anchor !!str |\n  {deep}\n"),
        ] {
            assert_eq!(flow_deeper_than(&text, 2), None, "{text:?}");
        }
        // A bar inside a plain scalar, or inside a flow collection, begins no block scalar.
        let brackets = nested("[", "]", 10);
        assert!(flow_deeper_than(&format!("a: x |\n{brackets}"), 9).is_some());
        assert!(flow_deeper_than(&format!("a: [|, {brackets}]"), 9).is_some());
    }

    #[test]
    fn every_line_break_libyaml_knows_ends_a_comment_and_a_byte_order_mark_hides_nothing() {
        let deep = nested("[", "]", 10);
        for line_break in ["\n", "\r\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"] {
            let text = format!("a: 1 #{line_break}b: {deep}");
            assert_eq!(flow_deeper_than(&text, 9), Some((2, 13)), "{text:?}");
            let text = format!("a: |{line_break}  x{line_break}b: {deep}");
            assert_eq!(flow_deeper_than(&text, 9), Some((3, 13)), "{text:?}");
            let text = format!("a: 'x{line_break}'{line_break}b: {deep}");
            assert_eq!(flow_deeper_than(&text, 9), Some((3, 13)), "{text:?}");
        }
        assert_eq!(
            flow_deeper_than(&format!("\u{feff}{deep}"), 9),
            Some((1, 11))
        );
        assert_eq!(
            flow_deeper_than(&format!("a: 1\n\u{feff}{deep}"), 9),
            Some((2, 11))
        );
    }

    #[test]
    fn a_quote_or_a_comment_sign_inside_a_word_opens_nothing() {
        // `don't` and `a#b` hold no quote and no comment: the brackets after them count.
        let deep = nested("[", "]", 10);
        assert!(flow_deeper_than(&format!("a: [don't, {deep}]"), 9).is_some());
        assert!(flow_deeper_than(&format!("a: [a#b, {deep}]"), 9).is_some());
        assert!(flow_deeper_than(&format!("a:  \"x\"\nb: {deep}"), 9).is_some());
    }

    #[test]
    fn a_closing_bracket_outside_any_collection_is_text() {
        // `x]]` is a plain scalar: its brackets close nothing, and the collection after it is
        // as deep as it is written (counting them would take the depth below zero).
        let text = "a: x]]\nb: [[1]]\n";
        assert_eq!(flow_deeper_than(text, 2), None);
        assert_eq!(flow_deeper_than(text, 1), Some((2, 5)));
    }

    #[test]
    fn a_byte_order_mark_inside_a_line_is_text() {
        // libyaml skips a byte-order mark only at a line's start; after `a: ` it begins a
        // plain scalar, and the brackets after it are part of that scalar.
        let deep = "[".repeat(100);
        assert_eq!(flow_deeper_than(&format!("a: \u{feff}{deep}"), 2), None);
    }

    #[test]
    fn an_indicator_without_a_blank_after_it_begins_no_collection_outside_one() {
        // Outside a collection, `x-[`, `x:[`, `x?[` and `x,[` are plain scalars (libyaml
        // reads `a: x-[1]` as the text "x-[1]"): their brackets are not counted.
        let deep = "[".repeat(100);
        for indicator in ['-', ':', '?', ','] {
            let text = format!("a: x{indicator}{deep}");
            assert_eq!(flow_deeper_than(&text, 2), None, "{text:?}");
        }
    }

    #[test]
    fn inside_a_collection_every_bracket_counts() {
        // Inside a flow collection a bracket is a flow indicator even right after a word
        // (libyaml ends the plain scalar `x` at it): `[x[x[...` nests as deep as it has
        // brackets.
        let text = format!("a: {}", nested("[x", "]", 10));
        assert_eq!(flow_deeper_than(&text, 9), Some((1, 22)));
        assert_eq!(flow_deeper_than(&text, 10), None);
    }

    #[test]
    fn a_quoted_value_right_after_a_colon_in_a_collection_is_skipped() {
        // JSON style: after a quoted key, `:` needs no blank after it inside a collection, and
        // the quoted value that follows it is text.
        let deep = "[".repeat(100);
        let text = format!("a: {{\"k\":\"{deep}\"}}");
        assert_eq!(flow_deeper_than(&text, 2), None);
    }

    /// How deep libyaml (through serde_yaml) nests the value of `a` in `text`.
    fn libyaml_depth(text: &str) -> usize {
        fn depth(value: &serde_yaml::Value) -> usize {
            match value {
                serde_yaml::Value::Sequence(items) => {
                    1 + items.iter().map(depth).max().unwrap_or(0)
                }
                serde_yaml::Value::Mapping(entries) => {
                    1 + entries
                        .iter()
                        .map(|(k, v)| depth(k).max(depth(v)))
                        .max()
                        .unwrap_or(0)
                }
                _ => 0,
            }
        }
        let value: serde_yaml::Value = serde_yaml::from_str(text).expect("valid YAML");
        depth(&value["a"])
    }

    /// Inside a collection a quote opens a quoted scalar only where a token begins. Where
    /// libyaml reads one as part of a plain scalar, the brackets after it nest, and the scan
    /// counts them; where it opens a quoted scalar, they are text, and the scan skips them.
    #[test]
    fn inside_a_collection_a_quote_opens_text_only_where_a_token_begins() {
        let deep = "[[[x]]]";
        for plain in [
            format!("a: [b:', {deep}, c']"),
            format!("a: [-', {deep}, c']"),
            format!("a: [b :', {deep}, c']"),
            format!("a: [b\n  ', {deep}, c']"),
        ] {
            assert_eq!(libyaml_depth(&plain), 4, "{plain:?}");
            assert!(flow_deeper_than(&plain, 3).is_some(), "{plain:?}");
        }
        let hidden = "[[[[";
        for quoted in [
            format!("a: {{\"k\":\"{hidden}\"}}"),
            format!("a: [?'{hidden}']"),
            format!("a: [\"b\" :'{hidden}']"),
            format!("a: [[x]:'{hidden}']"),
            format!("a: [b: '{hidden}']"),
            format!("a: {{b:\n  '{hidden}'}}"),
            format!("a: [\n  '{hidden}']"),
            format!("a: [x,\n  '{hidden}']"),
        ] {
            assert!(libyaml_depth(&quoted) <= 3, "{quoted:?}");
            assert_eq!(flow_deeper_than(&quoted, 3), None, "{quoted:?}");
        }
    }
}
