use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::super::fixtures;
use super::super::keys::on_key;
use super::*;

/// The fixed view drawn on `width` by `height`, as plain text.
fn screen(top: &Top, width: u16, height: u16) -> String {
    frame_text(&render(top, width, height).unwrap(), false)
}

fn press(top: &mut Top, code: KeyCode) {
    on_key(top, KeyEvent::new(code, KeyModifiers::NONE));
}

#[test]
fn the_view_at_80_by_24() {
    let text = screen(&fixtures::top(), 80, 24);
    insta::assert_snapshot!("at_80x24", text);
    assert_eq!(text.lines().count(), 24);
    for line in text.lines() {
        assert!(
            wrap::columns(line) <= 80,
            "{line:?} is wider than the screen"
        );
    }
    // The selected task is marked; the session gave way, the rest stays.
    assert!(text.contains("› bash_d1"), "{text}");
    assert!(!text.contains("SESSION"), "{text}");
    assert!(
        text.contains("HISTORY") && text.contains("COMMAND"),
        "{text}"
    );
    // The log shows its newest lines, down to the last.
    assert!(text.contains("http://localhost:5173/"), "{text}");
    assert!(
        text.lines().last().unwrap().starts_with("↑↓ select"),
        "{text}"
    );
}

#[test]
fn the_view_at_120_by_40() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Down);
    press(&mut top, KeyCode::Down);
    let text = screen(&top, 120, 40);
    insta::assert_snapshot!("at_120x40", text);
    assert!(
        text.contains("SESSION") && text.contains("20261201-193000-ab12"),
        "{text}"
    );
    assert!(text.contains("› 41523:bash_3"), "{text}");
    // The busy build's history climbs to full bars; the log is the new selection's,
    // not read yet.
    assert!(text.contains('█'), "{text}");
    assert!(text.contains("reading its log…"), "{text}");
}

#[test]
fn a_small_terminal_drops_columns_and_shrinks_the_log() {
    let text = screen(&fixtures::top(), 50, 12);
    insta::assert_snapshot!("at_50x12", text);
    assert!(
        !text.contains("HOST") && !text.contains("HISTORY"),
        "{text}"
    );
    assert!(text.contains("COMMAND"), "{text}");
    // Every task keeps its row; the log keeps its title and two lines.
    for id in ["bash_d1", "bash_d2", "41523:bash_3", "bash_d3", "bash_d4"] {
        assert!(text.contains(id), "{id} is missing:\n{text}");
    }
    assert!(text.contains("http://localhost:5173/"), "{text}");
}

#[test]
fn a_long_list_scrolls_to_keep_the_selection_in_sight() {
    let mut top = fixtures::top();
    let template = top.tasks[0].clone();
    for n in 5..40 {
        let mut task = template.clone();
        task.row.id = format!("bash_d{n}");
        top.tasks.push(task);
    }
    press(&mut top, KeyCode::End);
    let text = screen(&top, 80, 24);
    assert!(text.contains("› bash_d39"), "{text}");
    assert!(!text.contains("bash_d1 "), "{text}");
    // The log keeps its least rows under a full table.
    let rule = text.lines().position(|line| line.starts_with('─')).unwrap();
    assert_eq!(rule, 20, "{text}");
}

#[test]
fn stopping_asks_first_in_the_footer() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Char('x'));
    let text = screen(&top, 80, 24);
    insta::assert_snapshot!("confirm_stop_footer", text.lines().last().unwrap());
}

#[test]
fn the_filter_shows_what_it_lets_through_and_where_it_is_typed() {
    let mut top = fixtures::top();
    press(&mut top, KeyCode::Char('/'));
    for c in "/u/work/web".chars() {
        press(&mut top, KeyCode::Char(c));
    }
    let text = screen(&top, 80, 12);
    insta::assert_snapshot!("filtered_by_path", text);
    assert!(text.contains("filter \"/u/work/web\": 2 shown"), "{text}");
    assert!(!text.contains("bash_d2"), "{text}");
    press(&mut top, KeyCode::Char('x'));
    let text = screen(&top, 80, 12);
    assert!(text.contains("no task matches"), "{text}");
    assert!(text.contains("0 shown"), "{text}");
}

#[test]
fn no_tasks_says_so() {
    let top = Top::new("/u".into(), false, fixtures::now());
    let text = screen(&top, 80, 8);
    insta::assert_snapshot!("no_tasks", text);
}

#[test]
fn on_a_terminal_the_frame_keeps_its_colours() {
    let buffer = render(&fixtures::top(), 80, 24).unwrap();
    let coloured = frame_text(&buffer, true);
    // The selected row is reversed, running is green; no style runs on past its line.
    assert!(coloured.contains("\x1b[7m"), "{coloured:?}");
    assert!(
        coloured.contains("\x1b[38;5;2m") || coloured.contains("\x1b[32m"),
        "{coloured:?}"
    );
    for line in coloured.lines() {
        if let Some((_, last)) = line.rsplit_once('\x1b') {
            assert!(last.starts_with("[0m"), "{line:?}");
        }
    }
    // Without the sequences, it is the plain frame (but for the highlight's blanks).
    let mut stripped = String::new();
    let mut chars = coloured.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            stripped.push(c);
        }
    }
    let stripped: Vec<&str> = stripped.lines().map(str::trim_end).collect();
    let plain = frame_text(&buffer, false);
    assert_eq!(stripped, plain.lines().collect::<Vec<_>>());
}
