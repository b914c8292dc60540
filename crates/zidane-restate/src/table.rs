//! A handle's task table on one worker, and every change made to it: pure functions the
//! worker's handlers apply to the object's durable state, so the rules can be tested
//! without a server.
//!
//! Each change returns the awakeables it settles, with the answer each gets: a waiter
//! is answered exactly once, when its task ends (or at once if it already had).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use zidane_context::{LOST_EXIT_CODE, TaskExitInfo, TaskId, TaskStatus};

use crate::protocol::{ExitReport, TaskRecord};

/// Records by task id.
pub(crate) type Table = BTreeMap<String, TaskRecord>;

/// When each session of the handle last listed its tasks, in Unix milliseconds.
pub(crate) type Visits = BTreeMap<String, i64>;

/// [`SESSION_LEASE`](crate::SESSION_LEASE) in milliseconds.
pub(crate) const VISIT_LEASE_MS: i64 = 10_000;

/// Visits older than this are forgotten.
const VISIT_FORGET_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Notes `session`'s visit at `now`; whether the visits changed (a visit within a
/// quarter of the lease of the last one is not written again).
pub(crate) fn visit(visits: &mut Visits, session: &str, now: i64) -> bool {
    let before = visits.len();
    visits.retain(|_, last| now - *last < VISIT_FORGET_MS);
    let fresh = visits
        .get(session)
        .is_some_and(|last| now - *last < VISIT_LEASE_MS / 4);
    if !fresh {
        visits.insert(session.to_owned(), now);
    }
    !fresh || visits.len() != before
}

/// Marks each ended task `reported` unless `asker` is the session to tell it (see
/// [`ToldLedger`](zidane_context::ToldLedger)): a session is alive while its last visit
/// is within the lease. Whether a claim changed.
pub(crate) fn offer_ends(table: &mut Table, visits: &Visits, asker: &str, now: i64) -> bool {
    let alive = |session: &String| {
        visits
            .get(session)
            .is_some_and(|last| now - *last < VISIT_LEASE_MS)
    };
    let mut changed = false;
    for record in table.values_mut() {
        if record.entry.is_running() {
            continue;
        }
        let before = record.ledger.claim.clone();
        let offer = record
            .ledger
            .offer(&asker.to_owned(), &record.origin, alive);
        changed |= record.ledger.claim != before;
        record.entry.reported = offer == zidane_context::TellOffer::Leave;
    }
    changed
}

/// Marks each ended task as nobody's to tell but the ones already told: what a list
/// without a session shows.
pub(crate) fn show_told(table: &mut Table) {
    for record in table.values_mut() {
        record.entry.reported = record.ledger.is_told();
    }
}

/// `session` told these ends; whether anything changed.
pub(crate) fn told(table: &mut Table, session: &str, task_ids: &[TaskId]) -> bool {
    let mut changed = false;
    for task_id in task_ids {
        if let Some(record) = table.get_mut(&task_id.to_string())
            && !record.entry.is_running()
            && record.ledger.told.as_deref() != Some(session)
        {
            changed |= record.ledger.told(session);
        }
    }
    changed
}

/// The next task number after `counter`, every number in the table and `at_least`.
pub(crate) fn next_number(table: &Table, counter: u64, at_least: u64) -> u64 {
    let highest = table
        .values()
        .map(|record| record.entry.task_id.number() + 1)
        .max()
        .unwrap_or(1);
    counter.max(highest).max(at_least).max(1)
}

/// An awakeable and the answer it is resolved with.
pub(crate) type Wake = (String, Option<TaskExitInfo>);

/// The record of `task_id`.
pub(crate) fn record(table: &Table, task_id: TaskId) -> Option<&TaskRecord> {
    table.get(&task_id.to_string())
}

/// The tasks still `running` under another boot than `boot`: their worker died.
pub(crate) fn lost(table: &Table, boot: &str) -> Vec<TaskId> {
    table
        .values()
        .filter(|r| r.entry.is_running() && r.boot != boot)
        .map(|r| r.entry.task_id)
        .collect()
}

/// Marks `tasks` lost at `at`.
pub(crate) fn mark_lost(table: &mut Table, tasks: &[TaskId], at: DateTime<Utc>) -> Vec<Wake> {
    let mut wakes = Vec::new();
    for task in tasks {
        wakes.extend(end(table, *task, TaskStatus::Lost, at, |exit| {
            exit.exit_code = LOST_EXIT_CODE;
        }));
    }
    wakes
}

/// Records an exit reported by the boot that ran the task; a report of another boot,
/// or for a task that already ended, changes nothing.
pub(crate) fn record_exit(table: &mut Table, report: &ExitReport) -> Vec<Wake> {
    let Some(record) = table.get_mut(&report.task_id.to_string()) else {
        return Vec::new();
    };
    if record.boot != report.boot {
        return Vec::new();
    }
    if record.entry.is_running() {
        record.entry.bytes_written = report.bytes_written;
    }
    end(
        table,
        report.task_id,
        report.status,
        report.ended_at,
        |exit| {
            exit.signal = report.signal;
            exit.exit_code = report.exit_code;
            exit.leader_exit_code = report.leader_exit_code;
            exit.log_write_failure.clone_from(&report.log_write_failure);
            exit.kill_reason = report.kill_reason;
        },
    )
}

/// Records the exit a kill returned.
pub(crate) fn record_kill(table: &mut Table, exit: &TaskExitInfo, at: DateTime<Utc>) -> Vec<Wake> {
    end(table, exit.task_id, exit.status, at, |ended| {
        ended.exit_code = exit.exit_code;
        ended.signal = exit.signal;
        ended.leader_exit_code = exit.leader_exit_code;
        ended.log_write_failure.clone_from(&exit.log_write_failure);
        ended.kill_reason = exit.kill_reason;
    })
}

/// Parks `awakeable` on the task, or answers it at once: with the exit of an ended
/// task, `None` for an unknown one.
pub(crate) fn add_waiter(table: &mut Table, task_id: TaskId, awakeable: String) -> Vec<Wake> {
    match table.get_mut(&task_id.to_string()) {
        Some(record) if record.entry.is_running() => {
            record.waiters.push(awakeable);
            Vec::new()
        }
        Some(record) => vec![(awakeable, record.entry.exit_info())],
        None => vec![(awakeable, None)],
    }
}

/// Forgets every task; parked waiters are answered with what their task is now.
pub(crate) fn clear(table: &mut Table) -> Vec<Wake> {
    let mut wakes = Vec::new();
    for record in table.values_mut() {
        let exit = record.entry.exit_info();
        for awakeable in std::mem::take(&mut record.waiters) {
            wakes.push((awakeable, exit.clone()));
        }
    }
    table.clear();
    wakes
}

/// Ends a running task with `status` at `at` (no earlier than its start), the rest of
/// its exit filled in by `fill`: the one place a record turns terminal. An ended task
/// never changes again.
fn end(
    table: &mut Table,
    task_id: TaskId,
    status: TaskStatus,
    at: DateTime<Utc>,
    fill: impl FnOnce(&mut TaskExitInfo),
) -> Vec<Wake> {
    let Some(record) = table.get_mut(&task_id.to_string()) else {
        return Vec::new();
    };
    if !record.entry.is_running() || !status.is_terminal() {
        return Vec::new();
    }
    let mut ended = record.entry.exit_at(status, 0, at);
    fill(&mut ended);
    record.entry.end(ended);
    let exit = record.entry.exit_info();
    std::mem::take(&mut record.waiters)
        .into_iter()
        .map(|awakeable| (awakeable, exit.clone()))
        .collect()
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
