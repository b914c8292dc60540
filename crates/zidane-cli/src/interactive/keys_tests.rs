use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;

use super::*;

fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn plain(code: KeyCode) -> Vec<u8> {
    key_bytes(&key(code, KeyModifiers::NONE)).unwrap()
}

/// The key crossterm reads from one byte a terminal sent, by its legacy (non-kitty)
/// rules: what the session receives when someone presses the key in a real terminal.
fn crossterm_reads(byte: u8) -> KeyEvent {
    let ctrl = KeyModifiers::CONTROL;
    match byte {
        b'\r' => key(KeyCode::Enter, KeyModifiers::NONE),
        b'\t' => key(KeyCode::Tab, KeyModifiers::NONE),
        0x7f => key(KeyCode::Backspace, KeyModifiers::NONE),
        0x1b => key(KeyCode::Esc, KeyModifiers::NONE),
        0x01..=0x1a => key(KeyCode::Char(char::from(byte - 1 + b'a')), ctrl),
        0x1c..=0x1f => key(KeyCode::Char(char::from(byte - 0x1c + b'4')), ctrl),
        0x00 => key(KeyCode::Char(' '), ctrl),
        b'A'..=b'Z' => key(KeyCode::Char(char::from(byte)), KeyModifiers::SHIFT),
        _ => key(KeyCode::Char(char::from(byte)), KeyModifiers::NONE),
    }
}

#[test]
fn every_ascii_byte_a_terminal_sends_goes_to_the_task_unchanged() {
    for byte in 0..=0x7fu8 {
        let read = crossterm_reads(byte);
        if is_detach(&read) {
            assert_eq!(byte, 0x1d, "only ctrl+] detaches");
            continue;
        }
        assert_eq!(
            key_bytes(&read),
            Some(vec![byte]),
            "{byte:#04x} read as {read:?}"
        );
    }
}

#[test]
fn the_detach_key_is_ctrl_right_bracket_in_both_encodings() {
    assert!(is_detach(&key(KeyCode::Char(']'), KeyModifiers::CONTROL)));
    assert!(is_detach(&key(KeyCode::Char('5'), KeyModifiers::CONTROL)));
    assert!(!is_detach(&key(KeyCode::Char(']'), KeyModifiers::NONE)));
    assert!(!is_detach(&key(KeyCode::Char('5'), KeyModifiers::NONE)));
    assert!(!is_detach(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)));
    assert_eq!(DETACH_KEY, "ctrl+]");
}

#[test]
fn special_keys_send_xterm_sequences() {
    assert_eq!(plain(KeyCode::Up), b"\x1b[A");
    assert_eq!(plain(KeyCode::Down), b"\x1b[B");
    assert_eq!(plain(KeyCode::Right), b"\x1b[C");
    assert_eq!(plain(KeyCode::Left), b"\x1b[D");
    assert_eq!(plain(KeyCode::Home), b"\x1b[H");
    assert_eq!(plain(KeyCode::End), b"\x1b[F");
    assert_eq!(plain(KeyCode::Insert), b"\x1b[2~");
    assert_eq!(plain(KeyCode::Delete), b"\x1b[3~");
    assert_eq!(plain(KeyCode::PageUp), b"\x1b[5~");
    assert_eq!(plain(KeyCode::PageDown), b"\x1b[6~");
    assert_eq!(plain(KeyCode::BackTab), b"\x1b[Z");
    assert_eq!(plain(KeyCode::F(1)), b"\x1bOP");
    assert_eq!(plain(KeyCode::F(4)), b"\x1bOS");
    assert_eq!(plain(KeyCode::F(5)), b"\x1b[15~");
    assert_eq!(plain(KeyCode::F(6)), b"\x1b[17~");
    assert_eq!(plain(KeyCode::F(11)), b"\x1b[23~");
    assert_eq!(plain(KeyCode::F(12)), b"\x1b[24~");
    assert_eq!(key_bytes(&key(KeyCode::F(13), KeyModifiers::NONE)), None);
    assert_eq!(key_bytes(&key(KeyCode::CapsLock, KeyModifiers::NONE)), None);
}

#[test]
fn modifiers_follow_xterm() {
    let ctrl = KeyModifiers::CONTROL;
    let shift = KeyModifiers::SHIFT;
    let alt = KeyModifiers::ALT;
    assert_eq!(key_bytes(&key(KeyCode::Right, ctrl)).unwrap(), b"\x1b[1;5C");
    assert_eq!(key_bytes(&key(KeyCode::Up, shift)).unwrap(), b"\x1b[1;2A");
    assert_eq!(
        key_bytes(&key(KeyCode::Delete, alt | ctrl)).unwrap(),
        b"\x1b[3;7~"
    );
    assert_eq!(key_bytes(&key(KeyCode::F(2), shift)).unwrap(), b"\x1b[1;2Q");
    assert_eq!(key_bytes(&key(KeyCode::Tab, shift)).unwrap(), b"\x1b[Z");
    assert_eq!(key_bytes(&key(KeyCode::Char('b'), alt)).unwrap(), b"\x1bb");
    assert_eq!(
        key_bytes(&key(KeyCode::Char('c'), alt | ctrl)).unwrap(),
        b"\x1b\x03"
    );
    assert_eq!(key_bytes(&key(KeyCode::Enter, alt)).unwrap(), b"\x1b\r");
    assert_eq!(key_bytes(&key(KeyCode::Backspace, ctrl)).unwrap(), [0x08]);
    assert_eq!(key_bytes(&key(KeyCode::Char('C'), ctrl)).unwrap(), [0x03]);
    assert_eq!(
        key_bytes(&key(KeyCode::Char('é'), ctrl)).unwrap(),
        "é".as_bytes(),
        "a character without a control code is sent as it is"
    );
}

#[test]
fn a_paste_is_typed_with_enter_for_each_line_break() {
    assert_eq!(paste_bytes("ls\n-la\r\nend"), b"ls\r-la\rend");
    assert_eq!(paste_bytes("日本"), "日本".as_bytes());
}

fn any_code() -> impl Strategy<Value = KeyCode> {
    prop_oneof![
        any::<char>().prop_map(KeyCode::Char),
        (0u8..=30).prop_map(KeyCode::F),
        prop::sample::select(vec![
            KeyCode::Enter,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Backspace,
            KeyCode::Esc,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Insert,
            KeyCode::Delete,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Null,
            KeyCode::CapsLock,
            KeyCode::Menu,
        ]),
    ]
}

proptest! {
    /// Any key with any modifiers: no panic; a plain character is its UTF-8; alt adds
    /// exactly one ESC in front of what the key sends without it.
    #[test]
    fn any_key_translates_consistently(code in any_code(), bits in 0u8..16) {
        let modifiers = KeyModifiers::from_bits_truncate(bits);
        let sent = key_bytes(&key(code, modifiers));
        if let (KeyCode::Char(c), KeyModifiers::NONE) = (code, modifiers) {
            let typed = c.to_string();
            prop_assert_eq!(sent.as_deref(), Some(typed.as_bytes()));
        }
        let is_char_like = matches!(
            code,
            KeyCode::Char(_) | KeyCode::Enter | KeyCode::Backspace | KeyCode::Esc
        ) || (code == KeyCode::Tab && !modifiers.contains(KeyModifiers::SHIFT));
        if modifiers.contains(KeyModifiers::ALT) && is_char_like {
            let without = key_bytes(&key(code, modifiers - KeyModifiers::ALT)).unwrap();
            let mut expected = vec![0x1b];
            expected.extend(without);
            prop_assert_eq!(sent, Some(expected));
        } else if let Some(bytes) = sent {
            prop_assert!(!bytes.is_empty());
        }
    }

    /// A paste never carries a line feed: each line break is one Enter.
    #[test]
    fn a_paste_has_no_line_feeds(text in ".*") {
        let bytes = paste_bytes(&text);
        prop_assert!(!bytes.contains(&b'\n'));
        let breaks = text.matches("\r\n").count()
            + text.replace("\r\n", "").matches(['\r', '\n']).count();
        prop_assert_eq!(bytes.iter().filter(|&&b| b == b'\r').count(), breaks);
    }
}
