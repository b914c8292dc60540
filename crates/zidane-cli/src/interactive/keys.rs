//! What a key sends to an attached task's terminal: the bytes xterm sends for it, so
//! that a shell, a REPL or a full-screen program reads the key it would read in a
//! terminal of its own. The detach key ([`is_detach`]) is the one key never sent.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The detach key as the footer names it. Telnet's escape key: a terminal program
/// almost never needs it, and it is one chord on every keyboard layout that has `]`.
pub const DETACH_KEY: &str = "ctrl+]";

/// The escape character: the start of every sequence, and the `alt` prefix.
const ESC: u8 = 0x1b;

/// Whether `key` is the detach key. A terminal sends ctrl+] as the byte 0x1d, which
/// crossterm reads as ctrl+5 (the legacy digit row); a terminal with the kitty
/// keyboard protocol reports it as ctrl+].
pub fn is_detach(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && matches!(key.code, KeyCode::Char(']' | '5'))
}

/// The bytes `key` sends to a terminal program, or `None` for a key that sends
/// nothing (a lone modifier, a media key, a function key past F12).
pub fn key_bytes(key: &KeyEvent) -> Option<Vec<u8>> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let modifier = modifier_parameter(key.modifiers);
    let mut bytes = match key.code {
        KeyCode::Char(c) => {
            let mut bytes = if ctrl {
                control_byte(c).map_or_else(|| utf8(c), |byte| vec![byte])
            } else {
                utf8(c)
            };
            if alt {
                bytes.insert(0, ESC);
            }
            return Some(bytes);
        }
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Tab if key.modifiers.contains(KeyModifiers::SHIFT) => csi(b"Z"),
        KeyCode::Tab => vec![b'\t'],
        KeyCode::BackTab => csi(b"Z"),
        // ctrl+backspace sends ^H, as xterm does; backspace alone is DEL.
        KeyCode::Backspace if ctrl => vec![0x08],
        KeyCode::Backspace => vec![0x7f],
        KeyCode::Esc => vec![ESC],
        KeyCode::Up => return Some(cursor_key(b'A', modifier)),
        KeyCode::Down => return Some(cursor_key(b'B', modifier)),
        KeyCode::Right => return Some(cursor_key(b'C', modifier)),
        KeyCode::Left => return Some(cursor_key(b'D', modifier)),
        KeyCode::Home => return Some(cursor_key(b'H', modifier)),
        KeyCode::End => return Some(cursor_key(b'F', modifier)),
        KeyCode::Insert => return Some(tilde_key(2, modifier)),
        KeyCode::Delete => return Some(tilde_key(3, modifier)),
        KeyCode::PageUp => return Some(tilde_key(5, modifier)),
        KeyCode::PageDown => return Some(tilde_key(6, modifier)),
        KeyCode::F(n @ 1..=4) => {
            let last = b'P' + (n - 1);
            return Some(match modifier {
                None => vec![ESC, b'O', last],
                Some(m) => csi(format!("1;{m}{}", char::from(last)).as_bytes()),
            });
        }
        KeyCode::F(n @ 5..=12) => {
            // xterm's numbering skips 16 and 22.
            let code = [15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)];
            return Some(tilde_key(code, modifier));
        }
        _ => return None,
    };
    // Enter, tab, backspace and escape take alt as a prefix, like characters.
    if alt {
        bytes.insert(0, ESC);
    }
    Some(bytes)
}

/// Pasted text as a terminal delivers it: line breaks become carriage returns (what
/// the Enter key sends), the rest as it is.
pub fn paste_bytes(text: &str) -> Vec<u8> {
    text.replace("\r\n", "\r").replace('\n', "\r").into_bytes()
}

/// The control character of ctrl+`c`, as a terminal maps it: letters to 0x01–0x1a,
/// and the punctuation (or the legacy digit row) for NUL, ESC and 0x1c–0x1f, DEL.
fn control_byte(c: char) -> Option<u8> {
    match c {
        'a'..='z' | 'A'..='Z' => Some(c.to_ascii_lowercase() as u8 - b'a' + 1),
        ' ' | '@' | '2' => Some(0x00),
        '[' | '3' => Some(ESC),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '/' | '-' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

fn utf8(c: char) -> Vec<u8> {
    c.encode_utf8(&mut [0; 4]).as_bytes().to_vec()
}

/// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl; `None` without modifiers.
fn modifier_parameter(modifiers: KeyModifiers) -> Option<u8> {
    let mut parameter = 1;
    if modifiers.contains(KeyModifiers::SHIFT) {
        parameter += 1;
    }
    if modifiers.contains(KeyModifiers::ALT) {
        parameter += 2;
    }
    if modifiers.contains(KeyModifiers::CONTROL) {
        parameter += 4;
    }
    (parameter > 1).then_some(parameter)
}

fn csi(rest: &[u8]) -> Vec<u8> {
    let mut bytes = vec![ESC, b'['];
    bytes.extend_from_slice(rest);
    bytes
}

/// An arrow, Home or End: `ESC [ A`, or `ESC [ 1 ; m A` with modifiers.
fn cursor_key(last: u8, modifier: Option<u8>) -> Vec<u8> {
    match modifier {
        None => csi(&[last]),
        Some(m) => csi(format!("1;{m}{}", char::from(last)).as_bytes()),
    }
}

/// An editing or function key: `ESC [ n ~`, or `ESC [ n ; m ~` with modifiers.
fn tilde_key(code: u8, modifier: Option<u8>) -> Vec<u8> {
    match modifier {
        None => csi(format!("{code}~").as_bytes()),
        Some(m) => csi(format!("{code};{m}~").as_bytes()),
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
