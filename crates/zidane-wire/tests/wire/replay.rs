//! Replay: structured events for blocks, never the raw XML as text, nothing lost.

use proptest::prelude::*;
use serde_json::json;
use zidane_context::Signal;
use zidane_wire::{
    ContentBlock, Role, StreamEvent, Turn, WireBlock, events_from_turn, events_from_turns, parse,
};

use crate::roundtrip::{any_block, lookalike_text, mutate};
use crate::support::{notification, stall};

fn user_text(text: &str) -> StreamEvent {
    StreamEvent::UserText {
        text: text.to_owned(),
    }
}

#[test]
fn maps_every_block_kind() {
    let n = notification(1, "npm run build", 4200, 0, None);
    let turns = [
        Turn::user_text("Build the app in the background."),
        Turn::assistant(vec![
            ContentBlock::text("Starting the build."),
            ContentBlock::tool_use(
                "call_1",
                "shell",
                json!({"command": "npm run build", "run_in_background": true}),
            ),
        ]),
        Turn::user(vec![ContentBlock::tool_result(
            "call_1",
            "Started bash_1 (pid 4242).",
            false,
        )]),
        Turn::user(vec![
            ContentBlock::text(n.render()),
            ContentBlock::text("  ok?  "),
        ]),
    ];
    assert_eq!(
        events_from_turns(&turns),
        vec![
            user_text("Build the app in the background."),
            StreamEvent::AssistantText {
                text: "Starting the build.".into()
            },
            StreamEvent::ToolCall {
                id: "call_1".into(),
                name: "shell".into(),
                input: json!({"command": "npm run build", "run_in_background": true}),
            },
            StreamEvent::ToolResult {
                tool_use_id: "call_1".into(),
                content: "Started bash_1 (pid 4242).".into(),
                is_error: false,
            },
            StreamEvent::TaskNotification(n),
            // A text block without blocks is kept exactly.
            user_text("  ok?  "),
        ]
    );
}

#[test]
fn text_around_blocks_is_kept_in_order_and_trimmed() {
    let a = notification(1, "make", 850, 2, None);
    let b = stall(2, "npm init", 45_000, 0);
    let text = format!(
        "Two things:\n{}\n\n{}\n  \nThanks.\n",
        a.render(),
        b.render()
    );
    assert_eq!(
        events_from_turn(&Turn::user_text(text)),
        vec![
            user_text("Two things:"),
            StreamEvent::TaskNotification(a),
            StreamEvent::TaskStall(b),
            user_text("Thanks."),
        ]
    );
}

#[test]
fn a_lookalike_stays_text_and_a_block_after_it_is_still_found() {
    let n = notification(3, "npm run dev", 1200, 0, Some(Signal::TERM));
    let text = format!("What is a <task-notification>?\n{}", n.render());
    assert_eq!(
        events_from_turn(&Turn::user_text(text)),
        vec![
            user_text("What is a <task-notification>?"),
            StreamEvent::TaskNotification(n)
        ]
    );
    let broken = notification(4, "x", 1, 0, None)
        .render()
        .replace("<status>", "<status>&bogus;");
    assert_eq!(
        events_from_turn(&Turn::user_text(broken.clone())),
        vec![user_text(&broken)]
    );
}

#[test]
fn assistant_text_is_never_turned_into_events() {
    let text = notification(1, "make", 850, 0, None).render();
    assert_eq!(
        events_from_turn(&Turn::assistant_text(text.clone())),
        vec![StreamEvent::AssistantText { text }]
    );
}

#[test]
fn stream_events_serialise_with_a_type_tag() {
    let events = events_from_turn(&Turn::user(vec![
        ContentBlock::text(stall(1, "npm init", 45_000, 128).render()),
        ContentBlock::tool_result("call_2", "ok", true),
    ]));
    let json = serde_json::to_value(&events).unwrap();
    assert_eq!(json[0]["type"], "task_stall");
    assert_eq!(json[0]["stalled_for_ms"], 45_000);
    assert_eq!(json[1]["type"], "tool_result");
    let back: Vec<StreamEvent> = serde_json::from_value(json).unwrap();
    assert_eq!(back, events);
}

/// Whether `text` holds a well-formed block anywhere: a valid block runs from an opening
/// tag to the first closing tag after it (no value can hold `<`).
fn holds_a_block(text: &str) -> bool {
    ["task-notification", "task-stall", "task-event"]
        .iter()
        .any(|tag| {
            let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
            text.match_indices(&open).any(|(at, _)| {
                text[at..].find(&close).is_some_and(|end| {
                    parse(&text[at..at + end + close.len()]).is_ok_and(|b| !b.is_empty())
                })
            })
        })
}

fn no_whitespace(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A piece of a user text: filler that holds no block, or a block (maybe mutated).
#[derive(Debug, Clone)]
enum Piece {
    Filler(String),
    Block(WireBlock),
    Mutated(String),
}

fn any_piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        lookalike_text().prop_map(Piece::Filler),
        any_block().prop_map(Piece::Block),
        (
            any_block(),
            any::<u8>(),
            any::<usize>(),
            0usize..16,
            "\\PC{0,3}"
        )
            .prop_map(|(block, op, at, len, insert)| Piece::Mutated(mutate(
                &block.render(),
                op,
                at,
                len,
                &insert
            ))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn never_emits_a_raw_block_as_text(
        texts in prop::collection::vec(prop::collection::vec(any_piece(), 0..5), 1..4),
    ) {
        let content = texts
            .iter()
            .map(|pieces| {
                ContentBlock::text(
                    pieces
                        .iter()
                        .map(|piece| match piece {
                            Piece::Filler(text) | Piece::Mutated(text) => text.clone(),
                            Piece::Block(block) => block.render(),
                        })
                        .collect::<String>(),
                )
            })
            .collect();
        let turns = [Turn::new(Role::User, content)];
        for event in events_from_turns(&turns) {
            if let StreamEvent::UserText { text } = event {
                prop_assert!(!holds_a_block(&text), "raw block emitted as text: {:?}", text);
            }
        }
    }

    #[test]
    fn blocks_are_recovered_and_no_text_is_lost(pieces in prop::collection::vec(any_piece(), 0..6)) {
        // Filler and mutations that happen to hold a whole valid block (alone or
        // joined to their neighbours) are recovered too; leave those cases out.
        let loose_runs = pieces.split(|piece| matches!(piece, Piece::Block(_)));
        for run in loose_runs {
            let run: String = run
                .iter()
                .map(|piece| match piece {
                    Piece::Filler(text) | Piece::Mutated(text) => text.as_str(),
                    Piece::Block(_) => "",
                })
                .collect();
            prop_assume!(!holds_a_block(&run));
        }
        let mut text = String::new();
        let mut blocks = Vec::new();
        let mut loose = String::new();
        for piece in &pieces {
            match piece {
                Piece::Filler(filler) | Piece::Mutated(filler) => {
                    text.push_str(filler);
                    loose.push_str(filler);
                }
                Piece::Block(block) => {
                    text.push_str(&block.render());
                    blocks.push(block.clone());
                }
            }
        }
        let events = events_from_turn(&Turn::user_text(text));
        let mut found = Vec::new();
        let mut kept = String::new();
        for event in events {
            match event {
                StreamEvent::TaskNotification(n) => found.push(WireBlock::Notification(n)),
                StreamEvent::TaskStall(s) => found.push(WireBlock::Stall(s)),
                StreamEvent::TaskEvent(e) => found.push(WireBlock::Event(e)),
                StreamEvent::UserText { text } => kept.push_str(&text),
                other => prop_assert!(false, "unexpected {:?}", other),
            }
        }
        prop_assert_eq!(found, blocks);
        prop_assert_eq!(no_whitespace(&kept), no_whitespace(&loose));
    }
}
