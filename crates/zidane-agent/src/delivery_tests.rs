//! Unit tests of the queues and the latch.

use std::time::Duration;

use chrono::Utc;
use zidane_context::{TaskEntry, TaskExitInfo, TaskId, TaskStatus};

use super::*;

fn id(n: u64) -> TaskId {
    TaskId::from_number(n)
}

fn exit(n: u64) -> TaskExitInfo {
    TaskExitInfo::new(
        id(n),
        format!("job {n}"),
        format!("/t/bash_{n}.log"),
        TaskStatus::Exited,
        0,
        Duration::from_millis(10),
    )
}

fn ended_entry(n: u64, ended_secs_ago: i64) -> TaskEntry {
    let ended = Utc::now() - chrono::Duration::seconds(ended_secs_ago);
    let started = ended - chrono::Duration::seconds(1);
    let entry = TaskEntry::running(
        id(n),
        1,
        format!("job {n}"),
        "/",
        format!("/t/bash_{n}.log"),
        started,
    );
    let exit = entry.exit_at(TaskStatus::Exited, 0, ended);
    entry.ended(exit)
}

#[test]
fn an_exit_is_queued_once_and_never_after_its_latch() {
    let mut delivery = Delivery::new(Vec::new());
    assert!(delivery.push_exit(exit(1)));
    assert!(!delivery.push_exit(exit(1)));
    let taken = delivery.take(&[]);
    assert_eq!(taken.exits, vec![exit(1)]);
    assert!(!delivery.push_exit(exit(1)), "latched by the drain");
    assert!(!delivery.has_pending());
}

#[test]
fn pushed_exits_keep_their_order_and_pulled_ones_follow_by_end_time() {
    let mut delivery = Delivery::new(Vec::new());
    delivery.push_exit(exit(3));
    delivery.push_exit(exit(1));
    let swept = [ended_entry(5, 1), ended_entry(4, 5), ended_entry(1, 9)];
    let ids: Vec<u64> = delivery
        .take(&swept)
        .exits
        .iter()
        .map(|e| e.task_id.number())
        .collect();
    assert_eq!(ids, [3, 1, 4, 5]);
    assert!(
        delivery.take(&swept).exits.is_empty(),
        "the sweep never re-notifies"
    );
}

#[test]
fn history_matches_by_path_or_by_id_of_an_older_task() {
    let old = ended_entry(1, 60);
    let history = vec![HistoricalAck {
        task_id: id(1),
        output_path: None,
    }];
    let delivery = Delivery::new(history);
    assert!(delivery.is_acknowledged(&old));
    let mut fresh = ended_entry(1, 0);
    fresh.started_at = Utc::now() + chrono::Duration::seconds(1);
    assert!(
        !delivery.is_acknowledged(&fresh),
        "a new context's bash_1 is news"
    );
    let by_path = Delivery::new(vec![HistoricalAck {
        task_id: id(1),
        output_path: Some("/t/bash_1.log".into()),
    }]);
    assert!(by_path.is_acknowledged(&fresh));
}

#[test]
fn a_read_suppresses_only_exits_that_arrived_before_it() {
    let mut delivery = Delivery::new(Vec::new());
    let before = Utc::now() - chrono::Duration::seconds(5);
    delivery.push_exit(exit(1));
    assert!(
        delivery
            .suppress_read("/t/bash_1.log".as_ref(), before)
            .is_empty()
    );
    assert_eq!(
        delivery.suppress_read("/t/bash_1.log".as_ref(), Utc::now()),
        vec![id(1)]
    );
    assert!(!delivery.has_pending());
}

#[test]
fn close_empties_and_refuses() {
    let mut delivery = Delivery::new(Vec::new());
    delivery.push_exit(exit(1));
    delivery.close();
    assert!(!delivery.has_pending());
    assert!(!delivery.push_exit(exit(2)));
}

#[test]
fn what_a_failed_save_restores_is_delivered_first_and_is_news_again() {
    let mut delivery = Delivery::new(Vec::new());
    delivery.push_exit(exit(1));
    let taken = delivery.take(&[ended_entry(2, 5)]);
    assert_eq!(taken.exits.len(), 2);
    // Another exit lands while the turn is being saved.
    delivery.push_exit(exit(3));
    delivery.restore(taken.exits, taken.stalls, taken.events);
    assert!(delivery.has_pending());
    let ids: Vec<TaskId> = delivery.pending_exits().iter().map(|e| e.task_id).collect();
    assert_eq!(
        ids,
        [id(1), id(2), id(3)],
        "restored exits keep their place"
    );
    assert!(!delivery.push_exit(exit(1)), "still queued once");
    let again = delivery.take(&[ended_entry(2, 5)]);
    assert_eq!(again.exits.len(), 3, "nothing twice, nothing lost");
}

#[test]
fn a_sweep_queues_only_what_is_news() {
    let mut delivery = Delivery::new(Vec::new());
    delivery.push_exit(exit(1));
    let taken = delivery.take(&[]);
    assert_eq!(taken.exits.len(), 1);
    let news = delivery.pull(&[ended_entry(1, 9), ended_entry(3, 1), ended_entry(2, 5)]);
    let ids: Vec<TaskId> = news.iter().map(|e| e.task_id).collect();
    assert_eq!(
        ids,
        [id(2), id(3)],
        "in end order, the latched one left out"
    );
    assert!(
        delivery.pull(&[ended_entry(2, 5)]).is_empty(),
        "queued already"
    );
}

#[test]
fn nothing_is_restored_after_teardown_began() {
    let mut delivery = Delivery::new(Vec::new());
    delivery.push_exit(exit(1));
    let taken = delivery.take(&[]);
    delivery.close();
    delivery.restore(taken.exits, taken.stalls, taken.events);
    assert!(!delivery.has_pending());
}

fn line(n: u64, line_number: u64) -> zidane_tools::TaskEvent {
    zidane_tools::TaskEvent {
        task_id: id(n),
        line_number,
        line: format!("error {line_number}"),
        pattern: "error".into(),
    }
}

#[test]
fn only_a_followed_task_with_patterns_holds_its_exit() {
    let mut delivery = Delivery::new(Vec::new());
    // bash_1 has patterns and its follower reads on; bash_2 was started without any.
    delivery.events.follow(id(1), &["error".into()]);
    delivery.push_exit(exit(1));
    delivery.push_exit(exit(2));
    let taken = delivery.take(&[]);
    assert_eq!(taken.exits, vec![exit(2)], "bash_2 is not held");
    assert!(!delivery.has_pending(), "bash_1 waits for its follower");
    assert!(delivery.events.drained(id(1)), "its follower held it");
    assert!(delivery.has_pending());
    assert_eq!(delivery.take(&[]).exits, vec![exit(1)]);
}

#[test]
fn clearing_a_task_s_patterns_releases_its_exit_before_its_follower_ends() {
    let mut delivery = Delivery::new(Vec::new());
    delivery.events.follow(id(1), &["error".into()]);
    assert!(delivery.push_event(line(1, 1)));
    // `shell_notify` with `[]`: the follower is told, but has not noticed yet.
    delivery.events.follow(id(1), &[]);
    assert!(delivery.push_exit(exit(1)));
    assert!(
        delivery.has_pending(),
        "nothing left to follow: the exit is deliverable at once"
    );
    let taken = delivery.take(&[]);
    assert_eq!(taken.exits, vec![exit(1)]);
    assert_eq!(
        taken.events.len(),
        1,
        "the line matched before the clear is told"
    );
    assert!(
        !delivery.push_event(line(1, 2)),
        "a line the follower matched after the clear is not queued"
    );
    assert!(!delivery.events.drained(id(1)), "the follower held nothing");
    assert!(!delivery.has_pending());
    assert!(
        delivery.events.ledger().is_empty(),
        "nothing is kept of a task with no patterns whose end was told"
    );
}

#[test]
fn a_sweep_never_queues_an_end_reported_to_another_session() {
    let mut delivery = Delivery::new(Vec::new());
    let reported = ended_entry(1, 1).reported(true);
    assert!(delivery.pull(std::slice::from_ref(&reported)).is_empty());
    assert!(delivery.take(&[reported]).exits.is_empty());
    assert!(delivery.take_told().is_empty());
}

#[test]
fn each_detached_task_latched_is_told_once_and_a_plain_one_never() {
    let detached = TaskId::detached(4).unwrap();
    let mut delivery = Delivery::new(Vec::new());
    delivery.push_exit(exit(1));
    delivery.push_exit(
        TaskExitInfo::new(
            detached,
            "serve",
            "/t/bash_d4.log",
            TaskStatus::Exited,
            0,
            Duration::from_millis(10),
        )
        .detached(true),
    );
    let taken = delivery.take(&[]);
    assert_eq!(taken.exits.len(), 2);
    assert_eq!(delivery.take_told(), vec![detached]);
    assert!(delivery.take_told().is_empty(), "told once");
    assert!(!delivery.claim(detached));
    assert!(delivery.take_told().is_empty(), "latched already");

    // A drain put back before its turn was saved is not told.
    let other = TaskId::detached(5).unwrap();
    assert!(delivery.claim(other));
    let mut restored = Delivery::new(Vec::new());
    restored.push_exit(TaskExitInfo::new(
        other,
        "x",
        "/t/bash_d5.log",
        TaskStatus::Exited,
        0,
        Duration::ZERO,
    ));
    let taken = restored.take(&[]);
    restored.restore(taken.exits, taken.stalls, taken.events);
    assert!(restored.take_told().is_empty());
    assert_eq!(delivery.take_told(), vec![other]);
    delivery.suppress_task(id(9));
    assert!(
        delivery.take_told().is_empty(),
        "a plain task is never told"
    );
}

#[test]
fn every_task_latched_is_told_when_the_context_shares_them_all() {
    let mut delivery = Delivery::new(Vec::new()).sharing_every_task();
    delivery.push_exit(exit(1));
    assert_eq!(delivery.take(&[]).exits.len(), 1);
    delivery.suppress_task(id(2));
    assert_eq!(delivery.take_told(), vec![id(1), id(2)]);
    assert!(delivery.take_told().is_empty(), "told once");
}
