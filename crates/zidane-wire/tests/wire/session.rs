//! The persisted session format, a stored session's replay, and the `testing` filters.

use proptest::prelude::*;
use serde_json::json;
use zidane_wire::{ContentBlock, Role, StreamEvent, Turn, events_from_turns, testing};

use crate::support::{notification, stall};

const FIXTURE: &str = include_str!("../fixtures/session.json");

fn fixture() -> Vec<Turn> {
    serde_json::from_str(FIXTURE).unwrap()
}

#[test]
fn stored_session_replays_as_pinned() {
    let events = events_from_turns(&fixture());
    let _guard = testing::settings().bind_to_scope();
    insta::assert_json_snapshot!("session_fixture_replay", events);
}

#[test]
fn stored_session_reads_and_writes_back_unchanged() {
    let turns = fixture();
    let written = serde_json::to_value(&turns).unwrap();
    let stored: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    assert_eq!(written, stored);
}

#[test]
fn stored_session_has_no_raw_block_in_its_replay() {
    let events = events_from_turns(&fixture());
    let structured = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                StreamEvent::TaskNotification(_) | StreamEvent::TaskStall(_)
            )
        })
        .count();
    assert_eq!(structured, 3);
    for event in &events {
        if let StreamEvent::UserText { text } = event {
            assert!(!text.contains("<task-id>"), "raw block painted: {text}");
        }
    }
}

#[test]
fn turn_json_shape() {
    let turns = vec![
        Turn::user_text("hi"),
        Turn::assistant(vec![
            ContentBlock::text("Running it."),
            ContentBlock::tool_use("call_1", "shell", json!({"command": "ls"})),
        ]),
        Turn::user(vec![ContentBlock::tool_result("call_1", "a\nb", false)]),
    ];
    insta::assert_json_snapshot!("turn_json_shape", turns);
}

#[test]
fn is_error_defaults_to_false() {
    let block: ContentBlock =
        serde_json::from_str(r#"{"type":"tool_result","tool_use_id":"c","content":"x"}"#).unwrap();
    assert_eq!(block, ContentBlock::tool_result("c", "x", false));
}

#[test]
fn unknown_block_types_are_refused() {
    let err = serde_json::from_str::<ContentBlock>(r#"{"type":"image","data":""}"#).unwrap_err();
    assert!(err.to_string().contains("image"), "{err}");
}

/// A host's view: real temp-dir paths, pids and timings, made stable by the filters.
#[test]
fn host_transcript_with_testing_filters() {
    let dir = std::env::temp_dir().join(".tmpQx81Zk").join("tasks");
    let mut done = notification(1, "npm run build", 4317, 0, None);
    done.output_file = dir
        .join("bash_1.20260611-101502-007.log")
        .to_string_lossy()
        .into_owned();
    let mut quiet = stall(2, "npm init", 45_123, 64);
    quiet.output_file = dir
        .join("bash_2.20260611-101502-007.log")
        .to_string_lossy()
        .into_owned();
    let transcript = [
        format!("Started bash_1 (pid 81234). Output: {}", done.output_file),
        format!("cwd: {}", dir.parent().unwrap().join("work").display()),
        "started_at: 2026-06-11T10:15:02.007Z".to_owned(),
        done.render(),
        zidane_wire::Banner::for_notification(&done).text,
        quiet.render(),
    ]
    .join("\n");
    let _guard = testing::settings().bind_to_scope();
    insta::assert_snapshot!("host_transcript_filtered", transcript);
}

fn any_turn() -> impl Strategy<Value = Turn> {
    let json_leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<String>().prop_map(serde_json::Value::from),
    ];
    let input = prop::collection::btree_map("[a-z_]{1,8}", json_leaf, 0..4)
        .prop_map(|map| serde_json::Value::Object(map.into_iter().collect()));
    let block = prop_oneof![
        any::<String>().prop_map(ContentBlock::text),
        (any::<String>(), any::<String>(), input)
            .prop_map(|(id, name, input)| ContentBlock::tool_use(id, name, input)),
        (any::<String>(), any::<String>(), any::<bool>())
            .prop_map(|(id, content, is_error)| ContentBlock::tool_result(id, content, is_error)),
    ];
    (
        prop_oneof![Just(Role::User), Just(Role::Assistant)],
        prop::collection::vec(block, 0..4),
    )
        .prop_map(|(role, content)| Turn::new(role, content))
}

proptest! {
    #[test]
    fn turns_round_trip_through_json(turns in prop::collection::vec(any_turn(), 0..4)) {
        let json = serde_json::to_string(&turns).unwrap();
        let back: Vec<Turn> = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, turns);
    }
}
