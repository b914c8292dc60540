//! Unit and property tests of the events queue: coalescing and the exactly-once ledger.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

fn event(task: u64, line_number: u64) -> TaskEvent {
    TaskEvent {
        task_id: TaskId::from_number(task),
        line_number,
        line: format!("error {line_number}"),
        pattern: "error".into(),
    }
}

/// Every line number a block tells, shown or counted (every line of these logs
/// matches, so a count covers a whole range).
fn told_lines(block: &TaskEventBlock) -> Vec<u64> {
    let mut lines: Vec<u64> = block.lines.iter().map(|l| l.line_number).collect();
    if let Some(more) = block.more {
        assert_eq!(
            more.count,
            more.last_line - more.first_line + 1,
            "{block:?}"
        );
        lines.extend(more.first_line..=more.last_line);
    }
    lines
}

/// A child's queue handed to its parent: the lines the child told are not told again,
/// the ones it queued wait on the parent, and a follower there starts after them.
#[test]
fn a_handed_over_task_keeps_its_ledger_and_its_waiting_lines() {
    let task = TaskId::from_number(1);
    let mut child = EventQueue::default();
    child.follow(task, &["error".into()]);
    for n in 1..=2 {
        child.push(event(1, n));
    }
    assert_eq!(child.take(Instant::now()).len(), 1);
    child.push(event(1, 5));
    assert_eq!(child.followed(), [(task, vec!["error".to_owned()])]);

    let handed = child.hand_over();
    assert!(child.followed().is_empty() && child.take(Instant::now()).is_empty());
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].queued_through, 5);

    let mut parent = EventQueue::default();
    parent.follow(task, &["error".into()]);
    parent.adopt(handed.into_iter().next().unwrap());
    assert!(
        !parent.push(event(1, 2)) && !parent.push(event(1, 5)),
        "not news"
    );
    assert!(parent.push(event(1, 6)));
    let blocks = parent.take(Instant::now());
    assert_eq!(
        blocks.iter().flat_map(told_lines).collect::<Vec<_>>(),
        [5, 6]
    );
    assert_eq!(parent.ledger()[0].told_through, 6);
    assert!(parent.holds_exit(task), "the parent's follower runs");
}

#[test]
fn ten_thousand_lines_make_one_block_of_three_and_a_count() {
    let mut queue = EventQueue::default();
    queue.follow(TaskId::from_number(1), &["error".into()]);
    for n in 1..=10_000 {
        assert!(queue.push(event(1, n)));
    }
    let blocks = queue.take(Instant::now());
    assert_eq!(blocks.len(), 1);
    let block = &blocks[0];
    assert_eq!(
        block
            .lines
            .iter()
            .map(|l| l.line_number)
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        block.more,
        Some(MoreLines {
            count: 9_997,
            first_line: 4,
            last_line: 10_000
        })
    );
    assert!(!queue.push(event(1, 10_000)), "told lines are not news");
}

#[test]
fn a_task_is_not_due_again_within_its_cooldown() {
    let now = Instant::now();
    let mut queue = EventQueue::default();
    queue.push(event(1, 1));
    assert!(queue.has_due(now), "never told: due at once");
    queue.take(now);
    queue.push(event(1, 2));
    assert!(!queue.has_due(now));
    assert_eq!(queue.due_in(now), Some(EVENT_COOLDOWN));
    assert!(queue.has_due(now + EVENT_COOLDOWN));
    queue.push(event(2, 1));
    assert!(queue.has_due(now), "another task has its own cool-down");
}

/// What a session does, step by step.
#[derive(Debug, Clone)]
enum Op {
    /// The follower of a task reads this many more lines.
    Read { task: u64, lines: u64 },
    /// A delivery takes what waits.
    Take,
    /// A delivery's turn cannot be saved: what it took is put back.
    TakeAndFail,
    /// The host reloads from the session: the queue is rebuilt from the ledger, and
    /// followers read on from the line after the last one told.
    Reload,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..=3_u64, 1..=40_u64).prop_map(|(task, lines)| Op::Read { task, lines }),
        2 => Just(Op::Take),
        1 => Just(Op::TakeAndFail),
        1 => Just(Op::Reload),
    ]
}

proptest! {
    /// Through any interleaving of lines, deliveries, failed saves and reloads, then a
    /// final read to the end and delivery: every line of every log is told exactly once,
    /// in order, at most EVENT_LINES_SHOWN shown per block.
    #[test]
    fn every_line_is_told_exactly_once(ops in prop::collection::vec(op(), 0..60)) {
        let mut queue = EventQueue::default();
        // Per task: how far its follower has read.
        let mut read: BTreeMap<u64, u64> = BTreeMap::new();
        let mut told: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let deliver = |blocks: Vec<TaskEventBlock>, told: &mut BTreeMap<u64, Vec<u64>>| {
            for block in blocks {
                prop_assert!(block.lines.len() <= EVENT_LINES_SHOWN);
                prop_assert!(!block.lines.is_empty());
                told.entry(block.task_id.number()).or_default().extend(told_lines(&block));
            }
            Ok(())
        };
        for op in ops.iter().cloned().chain([Op::Take]) {
            match op {
                Op::Read { task, lines } => {
                    let at = read.entry(task).or_default();
                    for n in *at + 1..=*at + lines {
                        queue.push(event(task, n));
                    }
                    *at += lines;
                }
                Op::Take => deliver(queue.take(Instant::now()), &mut told)?,
                Op::TakeAndFail => {
                    let blocks = queue.take(Instant::now());
                    queue.restore(blocks);
                }
                Op::Reload => {
                    let ledger = queue.ledger();
                    queue = EventQueue::from_ledger(&ledger);
                    for entry in ledger {
                        read.insert(entry.task_id.number(), entry.told_through);
                    }
                }
            }
        }
        for (task, lines) in &told {
            let expected: Vec<u64> = (1..=*lines.last().unwrap_or(&0)).collect();
            prop_assert_eq!(lines, &expected, "task {}", task);
        }
        for (task, at) in &read {
            let count = told.get(task).map_or(0, Vec::len) as u64;
            prop_assert_eq!(count, *at, "task {}: every line read was told", task);
        }
    }
}
