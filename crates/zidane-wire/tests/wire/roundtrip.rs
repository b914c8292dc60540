//! Property tests: rendering and parsing are exact inverses, and parsing is total.

use proptest::prelude::*;
use zidane_context::{LogWriteFailure, Signal, TaskId, TaskStatus};
use zidane_wire::{
    EventLine, MoreLines, TaskEventBlock, TaskNotification, TaskStall, WireBlock, parse,
};

pub fn any_status() -> impl Strategy<Value = TaskStatus> {
    prop_oneof![
        Just(TaskStatus::Exited),
        Just(TaskStatus::Killed),
        Just(TaskStatus::Lost),
        Just(TaskStatus::Running),
    ]
}

/// Strings heavy in what escaping must handle, mixed with arbitrary Unicode.
pub fn tricky_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        Just("</task-notification>".to_owned()),
        Just("<task-stall>".to_owned()),
        Just("&amp;".to_owned()),
        Just("&#x0A;".to_owned()),
        "[<>&\"'\n\r\t\u{0}\u{7f}\u{85}\u{2028};#x]{0,8}",
    ];
    prop::collection::vec(piece, 0..4).prop_map(|pieces| pieces.concat())
}

pub fn any_notification() -> impl Strategy<Value = TaskNotification> {
    (
        any::<u64>(),
        any_status(),
        any::<i32>(),
        prop::option::of(1i32..=64),
        tricky_string(),
        tricky_string(),
        any::<u64>(),
        tricky_string(),
        prop::option::of((any::<u64>(), tricky_string())),
        prop::option::of(tricky_string()),
        any::<bool>(),
    )
        .prop_map(
            |(
                n,
                status,
                exit_code,
                signal,
                command,
                output_file,
                duration_ms,
                summary,
                failure,
                reason,
                detached,
            )| {
                TaskNotification {
                    task_id: if detached {
                        TaskId::detached(n % (1 << 62)).unwrap_or(TaskId::from_number(n))
                    } else {
                        TaskId::from_number(n)
                    },
                    status,
                    detached,
                    exit_code,
                    signal: signal.and_then(Signal::from_number),
                    command,
                    output_file,
                    duration_ms,
                    summary,
                    log_write_failure: failure.map(|(bytes_dropped, error)| LogWriteFailure {
                        bytes_dropped,
                        error,
                    }),
                    reason,
                }
            },
        )
}

pub fn any_stall() -> impl Strategy<Value = TaskStall> {
    (
        any::<u64>(),
        tricky_string(),
        tricky_string(),
        any::<u64>(),
        any::<u64>(),
        tricky_string(),
        proptest::option::of(tricky_string()),
    )
        .prop_map(
            |(n, command, output_file, stalled_for_ms, bytes_written, hint, diagnosis)| TaskStall {
                task_id: TaskId::from_number(n),
                command,
                output_file,
                stalled_for_ms,
                bytes_written,
                hint,
                diagnosis,
            },
        )
}

pub fn any_event() -> impl Strategy<Value = TaskEventBlock> {
    let line = (any::<u64>(), tricky_string(), tricky_string()).prop_map(
        |(line_number, pattern, line)| EventLine {
            line_number,
            pattern,
            line,
        },
    );
    let more =
        (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(count, first_line, last_line)| {
            MoreLines {
                count,
                first_line,
                // One line is told by its number alone.
                last_line: if count == 1 { first_line } else { last_line },
            }
        });
    (
        any::<u64>(),
        prop::collection::vec(line, 1..4),
        proptest::option::of(more),
    )
        .prop_map(|(n, lines, more)| TaskEventBlock {
            task_id: TaskId::from_number(n),
            lines,
            more,
        })
}

pub fn any_block() -> impl Strategy<Value = WireBlock> {
    prop_oneof![
        any_notification().prop_map(WireBlock::Notification),
        any_stall().prop_map(WireBlock::Stall),
        any_event().prop_map(WireBlock::Event),
    ]
}

/// Text that tends to look like blocks: tags, entities, line breaks, junk.
pub fn lookalike_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("<task-notification>".to_owned()),
        Just("</task-notification>".to_owned()),
        Just("<task-stall>".to_owned()),
        Just("</task-stall>".to_owned()),
        Just("<task-event>".to_owned()),
        Just("</task-event>".to_owned()),
        Just("<match>\n".to_owned()),
        Just("<task-id>bash_1</task-id>".to_owned()),
        Just("<status>exited</status>".to_owned()),
        Just("<exit-code>0</exit-code>".to_owned()),
        Just("<command>".to_owned()),
        Just("</command>".to_owned()),
        Just("\n".to_owned()),
        Just("&amp;".to_owned()),
        Just("&#x".to_owned()),
        "\\PC{0,6}",
    ];
    prop::collection::vec(token, 0..12).prop_map(|tokens| tokens.concat())
}

/// A random edit of `text`, always on character boundaries.
pub fn mutate(text: &str, op: u8, at: usize, len: usize, insert: &str) -> String {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let start = boundaries[at % boundaries.len()];
    let end = boundaries[(at + len).min(boundaries.len() - 1)].max(start);
    match op % 5 {
        0 => format!("{}{}", &text[..start], &text[end..]),
        1 => format!("{}{insert}{}", &text[..start], &text[start..]),
        2 => format!("{}{insert}{}", &text[..start], &text[end..]),
        3 => text[..start].to_owned(),
        _ => format!("{}{}{}", &text[..end], &text[start..end], &text[end..]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn notifications_round_trip(notification in any_notification()) {
        let text = notification.render();
        prop_assert_eq!(text.matches("<task-notification>").count(), 1);
        prop_assert_eq!(parse(&text).unwrap(), vec![WireBlock::Notification(notification)]);
    }

    #[test]
    fn stalls_round_trip(stall in any_stall()) {
        let text = stall.render();
        prop_assert_eq!(text.matches("<task-stall>").count(), 1);
        prop_assert_eq!(parse(&text).unwrap(), vec![WireBlock::Stall(stall)]);
    }

    #[test]
    fn blocks_in_text_are_found_in_order(
        blocks in prop::collection::vec(any_block(), 0..4),
        filler in "[a-z \n]{0,10}",
    ) {
        let text = blocks.iter().map(WireBlock::render).fold(filler.clone(), |text, block| {
            format!("{text}{block}{filler}")
        });
        prop_assert_eq!(parse(&text).unwrap(), blocks);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_lookalikes(text in lookalike_text()) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_mutated_blocks(
        block in any_block(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), 0usize..24, "\\PC{0,4}|[<>&;\n/]"), 1..4),
    ) {
        let mut text = block.render();
        for (op, at, len, insert) in edits {
            text = mutate(&text, op, at, len, &insert);
        }
        if let Ok(blocks) = parse(&text) {
            // Whatever parses must render back to text that parses to the same.
            let rendered: String = blocks.iter().map(WireBlock::render).collect();
            prop_assert_eq!(parse(&rendered).unwrap(), blocks);
        }
    }
}
