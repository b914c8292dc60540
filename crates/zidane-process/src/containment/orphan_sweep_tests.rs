use std::process::Child;
use std::time::Duration;

// The integration tests that make orphans take the same lock (maybe from another
// process, under nextest), so that one sweep does not report another test's orphans.
use zidane_test_support::sweep_lock;

use super::*;
use crate::containment::owner_marker::{MarkedWork, OWNER_MARKER_ENV, OwnerId, OwnerMarker};
use crate::test_children::sleep_1000;
use zidane_context::TaskId;

fn sleeper(marker: Option<OwnerMarker>) -> Child {
    match marker {
        Some(marker) => sleep_1000(&[(OWNER_MARKER_ENV, &marker.to_string())]),
        None => sleep_1000(&[]),
    }
}

/// An owner that existed and is gone: a real process, started, ended and reaped.
fn dead_owner() -> OwnerId {
    let mut host = sleeper(None);
    let pid = host.id();
    let start_time = procfs::start_time(pid).unwrap();
    host.kill().unwrap();
    host.wait().unwrap();
    let owner = OwnerId {
        pid,
        start_time,
        nonce: OwnerId::for_new_context().nonce,
    };
    assert!(!owner.is_alive());
    owner
}

#[test]
fn ends_and_reports_orphans_only() {
    let _lock = sweep_lock();
    let task = TaskId::from_number(4);
    let dead = dead_owner();
    let mut orphan = sleeper(Some(dead.marker(MarkedWork::Task(task))));
    let mut orphan_exec = sleeper(Some(dead.marker(MarkedWork::Exec(1))));
    let mut live_task = sleeper(Some(
        OwnerId::for_new_context().marker(MarkedWork::Task(task)),
    ));
    let mut unmarked = sleeper(None);

    let swept = sweep(Duration::from_secs(5)).unwrap();

    let mine: Vec<_> = swept
        .iter()
        .filter(|s| s.owner.pid == dead.pid && s.owner.start_time == dead.start_time)
        .collect();
    assert_eq!(mine.len(), 2, "{swept:?}");
    let task_orphan = mine.iter().find(|s| s.pid == orphan.id()).unwrap();
    assert_eq!(task_orphan.command_line, "sleep 1000");
    assert_eq!(task_orphan.task_id, Some(task));
    let exec_orphan = mine.iter().find(|s| s.pid == orphan_exec.id()).unwrap();
    assert_eq!(exec_orphan.task_id, None);
    assert!(orphan.wait().is_ok());
    assert!(orphan_exec.wait().is_ok());
    assert!(
        swept
            .iter()
            .all(|s| s.pid != live_task.id() && s.pid != unmarked.id())
    );
    assert_eq!(live_task.try_wait().unwrap(), None);
    assert_eq!(unmarked.try_wait().unwrap(), None);
    for child in [&mut live_task, &mut unmarked] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

#[test]
fn find_lists_the_orphans_a_sweep_would_end_and_ends_none() {
    let _lock = sweep_lock();
    let task = TaskId::from_number(7);
    let dead = dead_owner();
    let mut orphan = sleeper(Some(dead.marker(MarkedWork::Task(task))));
    let mut live_task = sleeper(Some(
        OwnerId::for_new_context().marker(MarkedWork::Task(task)),
    ));

    let found = find().unwrap();

    let mine: Vec<_> = found
        .iter()
        .filter(|s| s.owner.pid == dead.pid && s.owner.start_time == dead.start_time)
        .collect();
    assert_eq!(mine.len(), 1, "{found:?}");
    assert_eq!(mine[0].pid, orphan.id());
    assert_eq!(mine[0].task_id, Some(task));
    assert!(found.iter().all(|s| s.pid != live_task.id()));
    // Listed, not ended.
    assert_eq!(orphan.try_wait().unwrap(), None);
    assert_eq!(live_task.try_wait().unwrap(), None);
    for child in [&mut orphan, &mut live_task] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
