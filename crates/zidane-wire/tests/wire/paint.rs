//! The transcript painter: a stored session painted plain, and in colour with OSC 8
//! links (escape bytes shown as `␛` and `␇` so the snapshot reads as text).

use zidane_wire::{Painter, StreamEvent, Turn, events_from_turns};

const FIXTURE: &str = include_str!("../fixtures/session.json");

fn events() -> Vec<StreamEvent> {
    let turns: Vec<Turn> = serde_json::from_str(FIXTURE).unwrap();
    events_from_turns(&turns)
}

fn visible(painted: &str) -> String {
    painted.replace('\x1b', "␛").replace('\x07', "␇")
}

#[test]
fn a_stored_session_painted_plain() {
    let painted = Painter::plain().events(&events());
    assert!(!painted.contains('\x1b'));
    assert!(!painted.contains("<task-id>"), "never the raw XML");
    insta::assert_snapshot!("paint_session_plain", painted);
}

#[test]
fn a_stored_session_painted_in_colour_with_links() {
    let painted = Painter::coloured().events(&events());
    assert!(painted.contains("\x1b]8;;file:///home/u/.zidane/sessions/7f3a/tasks/bash_1."));
    insta::assert_snapshot!("paint_session_colour", visible(&painted));
}

#[test]
fn colour_without_links_keeps_the_tones_and_drops_osc_8() {
    let painted = Painter::coloured().with_links(false).events(&events());
    assert!(
        painted.contains("\x1b[33m⌁ bash_3 exited (1) 2h 03m /home/u/"),
        "{painted}"
    );
    assert!(!painted.contains("\x1b]8;"));
}

#[test]
fn notes_headings_and_the_raw_block_the_model_read() {
    let plain = Painter::plain();
    let colour = Painter::coloured();
    let block = "<task-notification>\n<task-id>bash_1</task-id>\n</task-notification>";
    let painted = [
        plain.heading("1. build"),
        plain.note("idle"),
        plain.wire_block(block),
        colour.heading("1. build"),
        colour.note("idle"),
        colour.wire_block(block),
    ]
    .concat();
    insta::assert_snapshot!("paint_host_lines", visible(&painted));
}

#[test]
fn a_commands_escape_sequences_never_reach_the_terminal() {
    let painted = Painter::coloured().event(&StreamEvent::ToolResult {
        tool_use_id: "call_1".into(),
        content: "\x1b]0;pwned\x07col1\tcol2\n\x1b[2Jcleared".into(),
        is_error: false,
    });
    assert_eq!(
        painted,
        "  tool ← \u{FFFD}]0;pwned\u{FFFD}col1\tcol2\n         \u{FFFD}[2Jcleared\n"
    );
}

#[test]
fn a_long_tool_result_is_cut_after_its_first_lines() {
    let content: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    let painted = Painter::plain().event(&StreamEvent::ToolResult {
        tool_use_id: "call_1".into(),
        content,
        is_error: true,
    });
    assert!(painted.starts_with(" error ← line 1\n"));
    assert!(
        painted.ends_with("         … (19 more lines)\n"),
        "{painted}"
    );
    assert_eq!(painted.lines().count(), zidane_wire::MAX_RESULT_LINES);
}
