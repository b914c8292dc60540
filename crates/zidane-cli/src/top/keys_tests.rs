use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;

use super::super::fixtures;
use super::super::state::Task;
use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(top: &mut Top, code: KeyCode) -> Option<Action> {
    on_key(top, key(code))
}

fn typed(top: &mut Top, text: &str) {
    for c in text.chars() {
        assert_eq!(press(top, KeyCode::Char(c)), None);
    }
}

fn selected(top: &Top) -> &str {
    top.selected.as_deref().unwrap()
}

#[test]
fn arrows_and_vi_keys_move_the_selection_and_stop_at_the_ends() {
    let mut top = fixtures::top();
    assert_eq!(selected(&top), "bash_d1");
    press(&mut top, KeyCode::Up);
    assert_eq!(selected(&top), "bash_d1");
    press(&mut top, KeyCode::Char('j'));
    press(&mut top, KeyCode::Down);
    assert_eq!(selected(&top), "41523:bash_3");
    press(&mut top, KeyCode::Char('k'));
    assert_eq!(selected(&top), "bash_d2");
    press(&mut top, KeyCode::End);
    assert_eq!(selected(&top), "bash_d4");
    press(&mut top, KeyCode::PageDown);
    assert_eq!(selected(&top), "bash_d4");
    press(&mut top, KeyCode::Home);
    assert_eq!(selected(&top), "bash_d1");
    press(&mut top, KeyCode::Char('G'));
    press(&mut top, KeyCode::PageUp);
    assert_eq!(selected(&top), "bash_d1");
}

#[test]
fn stopping_asks_and_only_y_stops() {
    let mut top = fixtures::top();
    assert_eq!(press(&mut top, KeyCode::Char('x')), None);
    assert_eq!(
        top.mode,
        Mode::Confirm {
            id: "bash_d1".into()
        }
    );
    assert_eq!(
        press(&mut top, KeyCode::Char('y')),
        Some(Action::Stop("bash_d1".into()))
    );
    assert_eq!(top.mode, Mode::Browse);
    // Delete asks too; any other key keeps the task, and does nothing else.
    press(&mut top, KeyCode::Delete);
    assert_eq!(press(&mut top, KeyCode::Char('q')), None);
    assert_eq!(top.mode, Mode::Browse);
    assert_eq!(top.note.as_ref().unwrap().0, "bash_d1 left running");
}

#[test]
fn an_ended_task_is_not_asked_about() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::End);
    assert_eq!(press(&mut top, KeyCode::Char('x')), None);
    assert_eq!(top.mode, Mode::Browse);
    assert_eq!(top.note.as_ref().unwrap().0, "bash_d4 has ended already");
}

#[test]
fn attach_takes_only_a_running_detached_terminal_task() {
    let mut top = fixtures::top();
    assert_eq!(press(&mut top, KeyCode::Char('a')), None);
    assert!(top.note.as_ref().unwrap().0.contains("has no terminal"));
    press(&mut top, KeyCode::Down);
    assert_eq!(
        press(&mut top, KeyCode::Enter),
        Some(Action::Attach("bash_d2".into()))
    );
    press(&mut top, KeyCode::Down);
    assert_eq!(press(&mut top, KeyCode::Char('a')), None);
    assert!(top.note.as_ref().unwrap().0.contains("running host's task"));
}

#[test]
fn l_pages_the_selected_log() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Down);
    assert_eq!(
        press(&mut top, KeyCode::Char('l')),
        Some(Action::Page(PathBuf::from("/u/tasks/bash_d2.log")))
    );
}

#[test]
fn the_filter_applies_as_it_is_typed_enter_keeps_it_esc_clears_it() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Char('/'));
    typed(&mut top, "CARGO");
    assert_eq!(top.filter, "CARGO");
    // Text matches any field, whatever its case; the selection moves onto what shows.
    assert_eq!(top.shown().len(), 1);
    assert_eq!(selected(&top), "41523:bash_3");
    // Keys are text while the filter is typed: q is no quit, x no stop.
    typed(&mut top, "qx");
    press(&mut top, KeyCode::Backspace);
    press(&mut top, KeyCode::Backspace);
    assert_eq!(press(&mut top, KeyCode::Enter), None);
    assert_eq!(
        (top.mode.clone(), top.filter.as_str()),
        (Mode::Browse, "CARGO")
    );
    press(&mut top, KeyCode::Char('/'));
    assert_eq!(press(&mut top, KeyCode::Esc), None);
    assert_eq!((top.mode.clone(), top.filter.as_str()), (Mode::Browse, ""));
    assert_eq!(top.shown().len(), 5);
    assert_eq!(
        selected(&top),
        "41523:bash_3",
        "the selection stays on its task"
    );
}

#[test]
fn a_path_filter_is_a_workspace_prefix() {
    let mut top = fixtures::top();
    top.set_filter("/u/work/web".into());
    let ids: Vec<&str> = top
        .shown()
        .iter()
        .map(|task| task.row.id.as_str())
        .collect();
    assert_eq!(ids, ["bash_d1", "bash_d4"]);
    // By components: /u/work/we is no prefix of /u/work/web.
    top.set_filter("/u/work/we".into());
    assert!(top.shown().is_empty());
    assert_eq!(top.selected, None);
    // `.` is where top runs (/u/work/api), `..` its parent.
    top.set_filter(".".into());
    assert_eq!(top.shown().len(), 3);
    top.set_filter("./../web".into());
    assert_eq!(top.shown().len(), 2);
}

#[test]
fn pasted_text_goes_into_the_filter_only_while_it_is_typed() {
    let mut top = fixtures::top();
    on_paste(&mut top, "npm");
    assert_eq!(top.filter, "");
    press(&mut top, KeyCode::Char('/'));
    on_paste(&mut top, "npm\n");
    assert_eq!(top.filter, "npm");
}

#[test]
fn q_esc_and_ctrl_c_quit_from_the_list_and_ctrl_c_from_anywhere() {
    for code in [KeyCode::Char('q'), KeyCode::Esc] {
        assert_eq!(press(&mut fixtures::top(), code), Some(Action::Quit));
    }
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut top = fixtures::top();
    assert_eq!(on_key(&mut top, ctrl_c), Some(Action::Quit));
    press(&mut top, KeyCode::Char('/'));
    assert_eq!(on_key(&mut top, ctrl_c), Some(Action::Quit));
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Char('x'));
    assert_eq!(on_key(&mut top, ctrl_c), Some(Action::Quit));
}

#[test]
fn a_reading_keeps_the_selection_on_its_task_and_counts_cpu_between_readings() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Down);
    let mut rows: Vec<_> = top.tasks.iter().map(|task| task.row.clone()).collect();
    let start = Instant::now();
    // The first reading of a task has no CPU share yet; the second has.
    top.update(rows.clone(), start, fixtures::now());
    assert_eq!(selected(&top), "bash_d2");
    rows.reverse();
    let deploy = rows.iter_mut().find(|row| row.id == "bash_d2").unwrap();
    let usage = deploy.usage.as_mut().unwrap();
    usage.cpu += Duration::from_millis(500);
    top.update(
        rows.clone(),
        start + Duration::from_secs(2),
        fixtures::now(),
    );
    assert_eq!(selected(&top), "bash_d2", "reordered, still on its task");
    let task = top
        .tasks
        .iter()
        .find(|task| task.row.id == "bash_d2")
        .unwrap();
    assert_eq!(task.cpu_percent(), Some(25));
    // Gone: the selection moves to the task now where it was.
    rows.retain(|row| row.id != "bash_d2");
    top.update(rows, start + Duration::from_secs(3), fixtures::now());
    assert_eq!(top.selected_index(), Some(3));
}

#[test]
fn an_ended_told_task_is_listed_only_if_it_was_seen_running() {
    let mut top = Top::new("/u".into(), false, fixtures::now());
    let mut watched = fixtures::row("bash_d1", "detached", "running", "sleep 9", "/u", 5);
    let mut other = fixtures::row("bash_d2", "detached", "exited 0", "true", "/u", 5);
    other.told = Some(true);
    top.update(
        vec![watched.clone(), other.clone()],
        Instant::now(),
        fixtures::now(),
    );
    assert_eq!(top.tasks.len(), 1);
    watched.state = "killed".into();
    watched.told = Some(true);
    top.update(vec![watched, other], Instant::now(), fixtures::now());
    let states: Vec<&str> = top
        .tasks
        .iter()
        .map(|task| task.row.state.as_str())
        .collect();
    assert_eq!(states, ["killed"]);
}

/// The keys a person could press, in every mode.
fn any_key() -> impl Strategy<Value = KeyEvent> {
    prop_oneof![
        Just(key(KeyCode::Up)),
        Just(key(KeyCode::Down)),
        Just(key(KeyCode::PageUp)),
        Just(key(KeyCode::PageDown)),
        Just(key(KeyCode::Home)),
        Just(key(KeyCode::End)),
        Just(key(KeyCode::Enter)),
        Just(key(KeyCode::Esc)),
        Just(key(KeyCode::Backspace)),
        Just(key(KeyCode::Delete)),
        Just(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
        "[jkgGxyalq/ .~dbash_13]"
            .prop_map(|c: String| key(KeyCode::Char(c.chars().next().unwrap()))),
    ]
}

proptest! {
    /// Whatever is pressed: the selection is always a shown task (none only when none
    /// shows), a stop is only ever the confirmed running task after its `y`, attach only
    /// a terminal task, and the filter is what the keys typed.
    #[test]
    fn the_keys_keep_the_view_consistent(keys in proptest::collection::vec(any_key(), 0..60)) {
        let mut top = fixtures::top();
        for key in keys {
            let before = top.mode.clone();
            let selected_before: Option<Task> = top.selected_task().cloned();
            let action = on_key(&mut top, key);
            match &action {
                Some(Action::Quit) => break,
                Some(Action::Stop(id)) => {
                    prop_assert_eq!(&before, &Mode::Confirm { id: id.clone() });
                    prop_assert!(matches!(key.code, KeyCode::Char('y')));
                    prop_assert!(top.tasks.iter().any(|task| &task.row.id == id && task.running()));
                }
                Some(Action::Attach(id)) => {
                    let task = selected_before.unwrap();
                    prop_assert_eq!(&task.row.id, id);
                    prop_assert!(task.attachable());
                }
                Some(Action::Page(path)) => {
                    let task = selected_before.unwrap();
                    prop_assert_eq!(task.row.output_path.as_ref(), Some(path));
                }
                None => {}
            }
            let shown = top.shown();
            match &top.selected {
                Some(id) => prop_assert!(shown.iter().any(|task| &task.row.id == id)),
                None => prop_assert!(shown.is_empty()),
            }
            if let Mode::Confirm { id } = &top.mode {
                prop_assert_eq!(Some(id.as_str()), top.selected.as_deref());
            }
        }
    }
}
