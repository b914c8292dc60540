use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(app.handle_key(key(KeyCode::Char(c))), None);
    }
}

#[test]
fn enter_sends_the_prompt_and_remembers_it() {
    let mut app = App::new("m", "s");
    typed(&mut app, "build it");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        Some(Action::Prompt("build it".into()))
    );
    assert_eq!(app.input.text(), "");
    typed(&mut app, "then");
    assert_eq!(app.handle_key(key(KeyCode::Up)), None);
    assert_eq!(app.input.text(), "build it");
    assert_eq!(app.handle_key(key(KeyCode::Down)), None);
    assert_eq!(app.input.text(), "");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        None,
        "an empty line sends nothing"
    );
}

#[test]
fn ctrl_c_twice_quits_and_anything_between_disarms_it() {
    let mut app = App::new("m", "s");
    assert_eq!(app.handle_key(ctrl('c')), None);
    assert!(app.quit_armed);
    typed(&mut app, "x");
    assert!(!app.quit_armed);
    assert_eq!(app.handle_key(ctrl('c')), None);
    assert_eq!(app.handle_key(ctrl('c')), Some(Action::Quit));
    assert_eq!(App::new("m", "s").handle_key(ctrl('d')), Some(Action::Quit));
}

#[test]
fn esc_aborts_and_pauses_wakes_until_the_next_prompt() {
    let mut app = App::new("m", "s");
    assert_eq!(app.handle_key(key(KeyCode::Esc)), Some(Action::Abort));
    assert!(app.suppressed);
    typed(&mut app, "go");
    assert!(matches!(
        app.handle_key(key(KeyCode::Enter)),
        Some(Action::Prompt(_))
    ));
    assert!(!app.suppressed);
}

#[test]
fn the_picker_opens_chooses_and_closes() {
    let mut app = App::new("m", "s");
    assert_eq!(app.handle_key(ctrl('k')), Some(Action::OpenPicker));
    app.open_picker(super::super::view::tests::rows());
    assert_eq!(app.handle_key(key(KeyCode::Down)), None);
    assert_eq!(app.handle_key(key(KeyCode::Down)), None);
    assert_eq!(
        app.handle_key(key(KeyCode::Down)),
        None,
        "stays on the last row"
    );
    let Some(Action::Cancel(row)) = app.handle_key(key(KeyCode::Enter)) else {
        panic!("enter on a row cancels it");
    };
    assert_eq!(row.id, "bash_2");
    assert!(app.picker.is_none());
    app.open_picker(vec![]);
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        None,
        "nothing to cancel"
    );
    app.open_picker(vec![]);
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        None,
        "esc closes, it does not abort"
    );
    assert!(app.picker.is_none());
    assert!(!app.suppressed);
}

#[test]
fn a_whole_turn_replaces_its_streamed_text() {
    let mut app = App::new("m", "s");
    app.apply(AppEvent::Delta("Buil".into()));
    app.apply(AppEvent::Delta("ding".into()));
    assert_eq!(app.streaming.as_deref(), Some("Building"));
    app.apply(AppEvent::Stream(StreamEvent::AssistantText {
        text: "Building.".into(),
    }));
    assert_eq!(app.streaming, None);
    assert_eq!(
        app.entries.last().map(|e| e.lines.clone()),
        Some(vec![" model › Building.".to_owned()])
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    fn any_key() -> impl Strategy<Value = KeyEvent> {
        prop_oneof![
            any::<char>().prop_map(|c| key(KeyCode::Char(c))),
            prop::sample::select(vec!['c', 'd', 'k', 'u']).prop_map(ctrl),
            prop::sample::select(vec![
                KeyCode::Enter,
                KeyCode::Esc,
                KeyCode::Up,
                KeyCode::Down,
                KeyCode::Backspace,
                KeyCode::PageUp,
                KeyCode::PageDown,
            ])
            .prop_map(key),
        ]
    }

    proptest! {
        /// Whatever is typed: no panic; the picker's selection stays on a row; quitting
        /// takes ctrl+d or two ctrl+c in a row; a prompt is never empty; esc outside the
        /// picker always aborts and pauses wake-ups, a prompt always lifts the pause.
        #[test]
        fn any_key_sequence_keeps_the_state_consistent(
            keys in prop::collection::vec(any_key(), 0..200),
            rows in 0usize..4,
        ) {
            let mut app = App::new("m", "s");
            let mut previous_was_ctrl_c = false;
            for key in keys {
                let picker_open = app.picker.is_some();
                let is_ctrl_c = key.code == KeyCode::Char('c') && key.modifiers == KeyModifiers::CONTROL;
                let action = app.handle_key(key);
                match &action {
                    Some(Action::Quit) => prop_assert!(
                        (is_ctrl_c && previous_was_ctrl_c)
                            || (key.code == KeyCode::Char('d') && key.modifiers == KeyModifiers::CONTROL)
                    ),
                    Some(Action::Prompt(prompt)) => {
                        prop_assert!(!prompt.trim().is_empty());
                        prop_assert!(!app.suppressed);
                    }
                    Some(Action::Abort) => {
                        prop_assert!(!picker_open);
                        prop_assert!(app.suppressed);
                    }
                    Some(Action::OpenPicker) => {
                        let all = crate::interactive::view::tests::rows();
                        app.open_picker(all.into_iter().take(rows).collect());
                    }
                    Some(Action::Cancel(_)) => prop_assert!(picker_open && rows > 0),
                    None => {}
                }
                if let Some(picker) = &app.picker {
                    prop_assert!(picker.rows.is_empty() || picker.selected < picker.rows.len());
                }
                if action == Some(Action::Quit) {
                    break; // the loop leaves here
                }
                previous_was_ctrl_c = is_ctrl_c && action.is_none();
            }
        }
    }
}

#[test]
fn the_cursor_edits_inside_the_line_and_a_paste_does_not_send() {
    let mut app = App::new("m", "s");
    typed(&mut app, "buld");
    app.handle_key(key(KeyCode::Left));
    app.handle_key(key(KeyCode::Left));
    typed(&mut app, "i");
    app.paste("  it\nnow");
    assert_eq!(app.input.text(), "bui  it nowld");
    app.handle_key(ctrl('a'));
    app.handle_key(key(KeyCode::Delete));
    app.handle_key(ctrl('e'));
    app.handle_key(key(KeyCode::Backspace));
    assert_eq!(app.input.text(), "ui  it nowl");
}
