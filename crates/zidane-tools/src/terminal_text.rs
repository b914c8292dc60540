//! What a terminal task printed, as text a model can read: escape sequences
//! (colours, cursor moves, titles) removed, carriage returns dropped.

/// `bytes` (lossily decoded) without terminal control sequences: CSI (`ESC [ … final`),
/// OSC (`ESC ] … BEL` or `ESC ] … ESC \`), other two-byte escapes, and the control
/// characters other than newline and tab.
///
/// ```
/// assert_eq!(zidane_tools::strip_terminal_controls(b"\x1b[1;32mok\x1b[0m\r\n"), "ok\n");
/// ```
pub fn strip_terminal_controls(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, up to the final byte.
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']' | 'P' | '_' | '^') => {
                    // A string, ended by BEL or ST (`ESC \`).
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some('(' | ')' | '*' | '+' | '#' | '%') => {
                    chars.next();
                }
                _ => {}
            },
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_carriage_returns_go_text_stays() {
        let raw = b"\x1b]0;title\x07\x1b[1;32mok\x1b[0m done\r\n\x1b(Bnext\x1b[?1049h\x1b]2;t\x1b\\!\x08\n";
        assert_eq!(strip_terminal_controls(raw), "ok done\nnext!\n");
        assert_eq!(strip_terminal_controls("é\tx".as_bytes()), "é\tx");
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_leaves_no_escape(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let text = strip_terminal_controls(&bytes);
            proptest::prop_assert!(!text.contains('\x1b'));
            proptest::prop_assert!(!text.contains('\r'));
        }
    }
}
