//! XML escaping of every string field, and its exact inverse.
//!
//! Escaping keeps one element on one line and makes a block impossible to forge: no
//! escaped value contains `<`, `>` or a line break, so `</task-notification>` inside a
//! command is just text.

use crate::error::WireError;

/// Escapes `s` for an element body: the five XML entities, and every control character
/// (C0, DEL, C1 — including `\n`, `\r`, `\t`) as a hexadecimal character reference.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => {
                // `is_control` is exactly C0, DEL and C1: all below U+00A0, two hex digits.
                out.push_str(&format!("&#x{:02X};", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// Appends `<name>ESCAPED</name>` and a line break.
pub(crate) fn push_element(out: &mut String, name: &str, value: &str) {
    push_raw_element(out, name, &escape(value));
}

/// Appends `<name>VALUE</name>` and a line break, `value` written as is (numbers, ids,
/// names: text that never needs escaping).
pub(crate) fn push_raw_element(out: &mut String, name: &str, value: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    out.push_str(value);
    out.push_str("</");
    out.push_str(name);
    out.push_str(">\n");
}

/// The most characters a reference may span, `&` and `;` included (`&#x10FFFF;` is 10).
const MAX_REFERENCE_CHARS: usize = 12;

/// Decodes an element body rendered by [`escape`].
///
/// Accepts the five named entities and any numeric reference (`&#xHH;`, `&#DDD;`) that
/// names a Unicode scalar value. Anything else — another entity, a bare `&`, a raw `<`
/// or `>`, a raw control character — is an error: [`escape`] never produces it.
/// `offset` is the byte offset of `s` in the text being parsed, for error positions.
pub(crate) fn unescape(s: &str, element: &'static str, offset: usize) -> Result<String, WireError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| matches!(c, '&' | '<' | '>') || c.is_control()) {
        out.push_str(&rest[..i]);
        let at = offset + (s.len() - rest.len()) + i;
        let tail = &rest[i..];
        let mut chars = tail.chars();
        match chars.next() {
            Some('&') => {}
            found => {
                return Err(WireError::Unescaped {
                    element,
                    found: found.unwrap_or_default(),
                    offset: at,
                });
            }
        }
        let end = tail
            .char_indices()
            .take(MAX_REFERENCE_CHARS)
            .find_map(|(j, c)| (c == ';').then_some(j));
        let Some((end, decoded)) =
            end.and_then(|end| decode_reference(&tail[1..end]).map(|c| (end, c)))
        else {
            let reference: String = tail.chars().take(MAX_REFERENCE_CHARS).collect();
            let reference = match reference.find(';') {
                Some(j) => reference[..=j].to_owned(),
                None => reference,
            };
            return Err(WireError::BadReference {
                element,
                reference,
                offset: at,
            });
        };
        out.push(decoded);
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The character named by a reference body (between `&` and `;`).
fn decode_reference(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let number = name.strip_prefix('#')?;
            let (digits, radix) = match number.strip_prefix('x') {
                Some(hex) => (hex, 16),
                None => (number, 10),
            };
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            u32::from_str_radix(digits, radix)
                .ok()
                .and_then(char::from_u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_markup_quotes_and_controls() {
        assert_eq!(
            escape("a<b>&\"'\n\r\t\u{7f}\u{85}\0é"),
            "a&lt;b&gt;&amp;&quot;&apos;&#x0A;&#x0D;&#x09;&#x7F;&#x85;&#x00;é"
        );
    }

    #[test]
    fn decodes_numeric_references() {
        assert_eq!(
            unescape("&#x41;&#66;&#x1F600;", "command", 0).unwrap(),
            "AB😀"
        );
    }

    #[test]
    fn refuses_what_escape_never_writes() {
        for bad in [
            "&nbsp;",
            "&",
            "a & b",
            "&#;",
            "&#x;",
            "&#xD800;",
            "&#x110000;",
            "&#-1;",
            "&#x+41;",
            "<",
            ">",
            "\n",
            "&#99999999999999999999;",
            "&amp",
        ] {
            assert!(unescape(bad, "command", 0).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn error_offsets_are_absolute() {
        let err = unescape("ab&zz;", "command", 10).unwrap_err();
        assert!(
            matches!(err, WireError::BadReference { offset: 12, .. }),
            "{err:?}"
        );
        let err = unescape("a&amp;\n", "command", 10).unwrap_err();
        assert!(
            matches!(
                err,
                WireError::Unescaped {
                    offset: 16,
                    found: '\n',
                    ..
                }
            ),
            "{err:?}"
        );
    }

    proptest! {
        #[test]
        fn round_trips(s in any::<String>()) {
            let escaped = escape(&s);
            prop_assert!(!escaped.contains(['<', '>', '\n', '\r']));
            prop_assert_eq!(unescape(&escaped, "command", 0).unwrap(), s);
        }

        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = unescape(&s, "command", 0);
        }
    }
}
