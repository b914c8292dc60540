//! Named keys and what a terminal (or a pipe) gets for each: the small table
//! `shell_input` types from.

/// The bytes of the key `name` (`enter`, `up`, `ctrl-c`, …; any case, `ctrl+c`, `C-c`
/// and `^C` read as `ctrl-c`), for a task in a terminal (`terminal`) or on a pipe.
/// Errors say what is wrong, for the model.
pub(crate) fn key_bytes(name: &str, terminal: bool) -> Result<Vec<u8>, String> {
    let key = normalise(name);
    let plain: Option<&[u8]> = match key.as_str() {
        // A terminal's Enter is a carriage return (the line discipline turns it into
        // a newline for a program reading lines); a pipe has no line discipline.
        "enter" | "return" if terminal => Some(b"\r"),
        "enter" | "return" => Some(b"\n"),
        "tab" => Some(b"\t"),
        "escape" | "esc" => Some(b"\x1b"),
        "backspace" => Some(b"\x7f"),
        "space" => Some(b" "),
        "up" => Some(b"\x1b[A"),
        "down" => Some(b"\x1b[B"),
        "right" => Some(b"\x1b[C"),
        "left" => Some(b"\x1b[D"),
        "home" => Some(b"\x1b[H"),
        "end" => Some(b"\x1b[F"),
        "page-up" | "pageup" | "pgup" => Some(b"\x1b[5~"),
        "page-down" | "pagedown" | "pgdn" => Some(b"\x1b[6~"),
        "delete" | "del" => Some(b"\x1b[3~"),
        _ => None,
    };
    if let Some(bytes) = plain {
        return Ok(bytes.to_vec());
    }
    if let Some(letter) = key.strip_prefix("ctrl-")
        && let [byte @ b'a'..=b'z'] = letter.as_bytes()
    {
        if !terminal && matches!(byte, b'c' | b'd' | b'z' | b'\\') {
            return Err(format!(
                "key `{name}` means something only to a terminal, and this task has none: \
                 end its input with `eof: true`, or stop it with `shell_kill`"
            ));
        }
        return Ok(vec![byte - b'a' + 1]);
    }
    Err(format!(
        "unknown key `{name}`: use enter, tab, escape, backspace, delete, space, up, down, \
         left, right, home, end, page-up, page-down, or ctrl-a … ctrl-z"
    ))
}

/// `Ctrl+C`, `C-c`, `^C`, `ctrl_c` → `ctrl-c`; `PageUp` → `pageup`.
fn normalise(name: &str) -> String {
    let lower = name
        .trim()
        .to_ascii_lowercase()
        .replace(['+', '_', ' '], "-");
    if let Some(letter) = lower.strip_prefix('^').or_else(|| lower.strip_prefix("c-")) {
        return format!("ctrl-{letter}");
    }
    if let Some(letter) = lower.strip_prefix("control-") {
        return format!("ctrl-{letter}");
    }
    lower
}

/// The name of a key's bytes when they are one (for the result text), else `None`.
pub(crate) fn describe_key(name: &str) -> String {
    normalise(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_key_its_bytes() {
        let cases: &[(&str, &[u8])] = &[
            ("enter", b"\r"),
            ("Return", b"\r"),
            ("tab", b"\t"),
            ("escape", b"\x1b"),
            ("esc", b"\x1b"),
            ("backspace", b"\x7f"),
            ("space", b" "),
            ("up", b"\x1b[A"),
            ("down", b"\x1b[B"),
            ("right", b"\x1b[C"),
            ("left", b"\x1b[D"),
            ("home", b"\x1b[H"),
            ("end", b"\x1b[F"),
            ("page-up", b"\x1b[5~"),
            ("PageDown", b"\x1b[6~"),
            ("delete", b"\x1b[3~"),
            ("ctrl-c", b"\x03"),
            ("Ctrl+C", b"\x03"),
            ("C-c", b"\x03"),
            ("^D", b"\x04"),
            ("ctrl_z", b"\x1a"),
            ("ctrl-a", b"\x01"),
            ("control-l", b"\x0c"),
        ];
        for (name, bytes) in cases {
            assert_eq!(key_bytes(name, true).as_deref(), Ok(*bytes), "{name}");
        }
    }

    #[test]
    fn a_pipe_gets_a_newline_for_enter_and_refuses_terminal_only_keys() {
        assert_eq!(key_bytes("enter", false).unwrap(), b"\n");
        assert_eq!(key_bytes("ctrl-a", false).unwrap(), b"\x01");
        for key in ["ctrl-c", "ctrl-d", "ctrl-z"] {
            let error = key_bytes(key, false).unwrap_err();
            assert!(error.contains("has none"), "{error}");
        }
    }

    #[test]
    fn unknown_keys_are_refused_with_the_list() {
        for key in ["f1", "ctrl-1", "ctrl-", "", "enterr"] {
            let error = key_bytes(key, true).unwrap_err();
            assert!(error.contains("unknown key"), "{key}: {error}");
            assert!(error.contains("ctrl-a … ctrl-z"));
        }
    }
}
