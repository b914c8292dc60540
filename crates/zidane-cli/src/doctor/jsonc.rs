//! JSON with comments and trailing commas, as VS Code and opencode write their config
//! files: made plain JSON for `serde_json`, strings left as they are.

/// `text` without `//` and `/* */` comments and without a comma before a closing `}` or
/// `]`. Line and column numbers stay where they were (a comment becomes spaces), so a
/// parse error still points into the file as written.
pub(crate) fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    // Where the last comma outside a string was written, with only blanks after it.
    let mut pending_comma: Option<usize> = None;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                out.push(' ');
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                    out.push(' ');
                }
                continue;
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut last = ' ';
                for c in chars.by_ref() {
                    out.push(if c == '\n' { '\n' } else { ' ' });
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                continue;
            }
            _ => {}
        }
        match c {
            '"' => {
                in_string = true;
                pending_comma = None;
            }
            ',' => pending_comma = Some(out.len()),
            '}' | ']' => {
                if let Some(at) = pending_comma.take() {
                    out.replace_range(at..=at, " ");
                }
            }
            c if c.is_whitespace() => {}
            _ => pending_comma = None,
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go_and_strings_stay() {
        let text = "{\n  // a comment\n  \"a\": \"x // not a comment\", /* block\n */\n  \
                    \"b\": [1, 2,],\n  \"c\": \"\\\"/*\",\n}\n";
        let value: serde_json::Value = serde_json::from_str(&strip(text)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({ "a": "x // not a comment", "b": [1, 2], "c": "\"/*" })
        );
        assert_eq!(strip(text).lines().count(), text.lines().count());
    }
}
