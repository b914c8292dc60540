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
fn a_command_outside_the_sandbox_waits_for_y_or_n() {
    let mut app = App::new("m", "s");
    typed(&mut app, "half");
    let request = ApprovalRequest::new("touch ~/x", "a cache in the home dir");
    app.apply(AppEvent::Approval(Some(request.clone())));
    let shown = app.entries.last().unwrap().lines.join("\n");
    assert!(
        shown.contains("touch ~/x") && shown.contains("a cache in the home dir"),
        "{shown}"
    );
    // Other keys wait; the input line keeps what was typed.
    assert_eq!(app.handle_key(key(KeyCode::Char('x'))), None);
    assert_eq!(app.approval, Some(request.clone()));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('y'))),
        Some(Action::Approve(true))
    );
    assert_eq!(app.approval, None);
    assert_eq!(app.input.text(), "half");
    app.apply(AppEvent::Approval(None));
    for refuse in [KeyCode::Char('n'), KeyCode::Esc, KeyCode::Enter] {
        app.apply(AppEvent::Approval(Some(request.clone())));
        assert_eq!(app.handle_key(key(refuse)), Some(Action::Approve(false)));
        assert!(!app.suppressed, "esc refuses, it does not abort the run");
    }
    // Unanswered: the question goes, and the transcript says the command did not run.
    app.apply(AppEvent::Approval(Some(request)));
    app.apply(AppEvent::Approval(None));
    assert_eq!(app.approval, None);
    assert!(
        app.entries
            .last()
            .unwrap()
            .lines
            .join(" ")
            .contains("did not run")
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
    assert_eq!(app.handle_key(ctrl('b')), Some(Action::MoveToBackground));
    assert_eq!(app.handle_key(ctrl('k')), Some(Action::OpenPicker));
    app.open_picker(super::super::view::tests::rows());
    assert_eq!(
        app.handle_key(ctrl('b')),
        None,
        "the picker takes keys while open"
    );
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

/// A picker row of a task in a terminal.
fn tty_row(id: &str) -> PickerRow {
    PickerRow {
        tty: Some(zidane::context::TtySize::new(24, 80)),
        ..super::super::view::tests::rows()[1].clone()
    }
    .with_id(id)
}

trait WithId {
    fn with_id(self, id: &str) -> Self;
}

impl WithId for PickerRow {
    fn with_id(mut self, id: &str) -> Self {
        self.id = id.to_owned();
        self
    }
}

fn screen(text: &str) -> Screen {
    Screen::new(
        zidane::context::TtySize::new(3, 20),
        text.lines().map(str::to_owned).collect(),
        (0, 0),
    )
}

/// Opens the picker on `rows` and attaches to the row `down` arrows below the first.
fn attach(app: &mut App, rows: Vec<PickerRow>, down: usize) -> Option<Action> {
    app.open_picker(rows);
    for _ in 0..down {
        app.handle_key(key(KeyCode::Down));
    }
    app.handle_key(key(KeyCode::Char('a')))
}

#[test]
fn a_attaches_to_a_tty_task_and_the_detach_key_comes_back() {
    let mut app = App::new("m", "s");
    typed(&mut app, "half a prompt");
    let mut rows = super::super::view::tests::rows();
    rows.push(tty_row("bash_3"));
    let Some(Action::Attach(row)) = attach(&mut app, rows, 3) else {
        panic!("a on a tty row attaches");
    };
    assert_eq!(row.id, "bash_3");
    assert!(app.picker.is_none());
    let attached = app.attached.clone().unwrap();
    assert_eq!(
        (attached.task_id.as_str(), attached.screen, attached.gone),
        ("bash_3", None, None)
    );

    // Every key is the task's: ctrl+c, ctrl+d, ctrl+k, esc and enter too.
    assert_eq!(app.handle_key(ctrl('c')), Some(Action::Input(vec![0x03])));
    assert_eq!(app.handle_key(ctrl('c')), Some(Action::Input(vec![0x03])));
    assert_eq!(app.handle_key(ctrl('d')), Some(Action::Input(vec![0x04])));
    assert_eq!(app.handle_key(ctrl('k')), Some(Action::Input(vec![0x0b])));
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        Some(Action::Input(vec![0x1b]))
    );
    assert_eq!(
        app.handle_key(key(KeyCode::Char('y'))),
        Some(Action::Input(b"y".to_vec()))
    );
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        Some(Action::Input(b"\r".to_vec()))
    );
    assert_eq!(app.paste("a\nb"), Some(Action::Input(b"a\rb".to_vec())));
    assert!(!app.quit_armed && !app.suppressed && app.picker.is_none());
    assert_eq!(app.input.text(), "half a prompt", "the input line waits");

    // Its screen, and not that of a task detached from since.
    app.apply(AppEvent::Screen {
        task_id: "bash_3".into(),
        screen: screen("name?"),
    });
    app.apply(AppEvent::Screen {
        task_id: "bash_9".into(),
        screen: screen("other"),
    });
    assert_eq!(app.attached.as_ref().unwrap().screen, Some(screen("name?")));

    assert_eq!(app.handle_key(ctrl(']')), Some(Action::Detach));
    assert!(app.attached.is_none());
    assert_eq!(
        app.handle_key(ctrl('k')),
        Some(Action::OpenPicker),
        "keys are the host's again"
    );
}

#[test]
fn a_gone_task_keeps_its_screen_and_any_key_returns() {
    let mut app = App::new("m", "s");
    assert!(matches!(
        attach(&mut app, vec![tty_row("bash_1")], 0),
        Some(Action::Attach(_))
    ));
    app.apply(AppEvent::Screen {
        task_id: "bash_1".into(),
        screen: screen("bye"),
    });
    app.apply(AppEvent::Gone {
        task_id: "bash_1".into(),
        reason: "ended".into(),
    });
    app.apply(AppEvent::Gone {
        task_id: "bash_1".into(),
        reason: "gone".into(),
    });
    let attached = app.attached.clone().unwrap();
    assert_eq!(
        attached.gone.as_deref(),
        Some("ended"),
        "the first reason stays"
    );
    assert_eq!(attached.screen, Some(screen("bye")));
    assert_eq!(app.paste("late"), None, "nothing more is sent");
    assert_eq!(
        app.handle_key(key(KeyCode::Char('x'))),
        Some(Action::Detach)
    );
    assert!(app.attached.is_none());
}

#[test]
fn a_on_a_row_without_a_terminal_says_why_and_stays() {
    let mut app = App::new("m", "s");
    let rows = super::super::view::tests::rows();
    assert_eq!(attach(&mut app, rows.clone(), 0), None);
    assert_eq!(attach(&mut app, rows, 1), None);
    assert!(app.attached.is_none() && app.picker.is_none());
    let notes: Vec<String> = app
        .entries
        .iter()
        .map(|entry| entry.lines.join("\n"))
        .collect();
    assert_eq!(
        notes,
        [
            "·· cannot attach to call_4: it is a tool call, not a task",
            "·· cannot attach to bash_1: it runs without a terminal",
        ]
    );
    app.open_picker(vec![]);
    assert_eq!(
        app.handle_key(key(KeyCode::Char('a'))),
        None,
        "nothing to attach to"
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    fn any_key() -> impl Strategy<Value = KeyEvent> {
        prop_oneof![
            any::<char>().prop_map(|c| key(KeyCode::Char(c))),
            prop::sample::select(vec!['b', 'c', 'd', 'k', 'u', ']']).prop_map(ctrl),
            Just(key(KeyCode::Char('a'))),
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
            rows in 0usize..5,
            ends in prop::option::of(0usize..200),
        ) {
            let mut app = App::new("m", "s");
            let mut previous_was_ctrl_c = false;
            for (at, key) in keys.into_iter().enumerate() {
                if ends == Some(at)
                    && let Some(attached) = &app.attached
                {
                    let task_id = attached.task_id.clone();
                    app.apply(AppEvent::Gone { task_id, reason: "ended".into() });
                }
                let picker_open = app.picker.is_some();
                let attached = app.attached.clone();
                let is_ctrl_c = key.code == KeyCode::Char('c') && key.modifiers == KeyModifiers::CONTROL;
                let action = app.handle_key(key);
                if let Some(attached) = attached {
                    // Attached: the task gets every key but the detach key, while it
                    // takes them; nothing else happens.
                    let detach = keys::is_detach(&key) || attached.gone.is_some();
                    prop_assert_eq!(app.attached.is_none(), detach);
                    match &action {
                        Some(Action::Detach) => prop_assert!(detach),
                        Some(Action::Input(bytes)) => {
                            prop_assert!(!detach);
                            prop_assert_eq!(Some(bytes.clone()), keys::key_bytes(&key));
                        }
                        None => prop_assert!(!detach && keys::key_bytes(&key).is_none()),
                        other => prop_assert!(false, "attached, {key:?} did {other:?}"),
                    }
                    prop_assert!(app.picker.is_none());
                    previous_was_ctrl_c = false;
                    continue;
                }
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
                        let mut all = crate::interactive::view::tests::rows();
                        all.push(tty_row("bash_3"));
                        app.open_picker(all.into_iter().take(rows).collect());
                    }
                    Some(Action::MoveToBackground) => prop_assert!(
                        !picker_open
                            && key.code == KeyCode::Char('b')
                            && key.modifiers == KeyModifiers::CONTROL
                    ),
                    Some(Action::Cancel(_)) => prop_assert!(picker_open && rows > 0),
                    Some(Action::Attach(row)) => {
                        prop_assert!(picker_open && row.tty.is_some());
                        prop_assert_eq!(app.attached.as_ref().map(|a| a.task_id.clone()), Some(row.id.clone()));
                    }
                    Some(Action::Input(_) | Action::Detach) => prop_assert!(false, "not attached"),
                    Some(Action::Approve(_)) => prop_assert!(false, "no command waits for approval"),
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
