//! The task table's rules, over random sequences of what can happen to it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::TimeZone;
use proptest::prelude::*;
use zidane_context::{Signal, TaskEntry};

use super::*;

#[derive(Debug, Clone)]
enum Event {
    /// Task `n` started by boot `b`.
    Start(u64, u8),
    /// Boot `b` reports task `n` exited with `code`.
    Exit(u64, u8, i32),
    /// A kill of task `n` returned.
    Kill(u64),
    /// Boot `b` handles a call: tasks of other boots are lost.
    Sweep(u8),
    /// A waiter parks on task `n`.
    Wait(u64),
    /// The handle is destroyed.
    Clear,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (1u64..5, 0u8..3).prop_map(|(n, b)| Event::Start(n, b)),
        (1u64..5, 0u8..3, 0i32..3).prop_map(|(n, b, c)| Event::Exit(n, b, c)),
        (1u64..5).prop_map(Event::Kill),
        (0u8..3).prop_map(Event::Sweep),
        (1u64..5).prop_map(Event::Wait),
        Just(Event::Clear),
    ]
}

fn at(t: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(1_700_000_000_000 + t).unwrap()
}

fn started(n: u64, boot: u8, t: i64) -> TaskRecord {
    TaskRecord {
        entry: TaskEntry::running(
            TaskId::from_number(n),
            100 + u32::try_from(n).unwrap(),
            format!("job {n}"),
            "/w",
            format!("/w/bash_{n}.log"),
            at(t),
        ),
        boot: format!("boot{boot}"),
        local_task: TaskId::from_number(n),
        waiters: Vec::new(),
        origin: "s0".to_owned(),
        ledger: zidane_context::ToldLedger::default(),
    }
}

proptest! {
    #[test]
    fn waiters_are_answered_once_and_ended_tasks_never_change(
        events in prop::collection::vec(event(), 0..40)
    ) {
        let mut table = Table::new();
        // Awakeable → the answer it got.
        let mut answered: BTreeMap<String, Option<TaskExitInfo>> = BTreeMap::new();
        let mut parked: BTreeSet<String> = BTreeSet::new();
        let mut ended: BTreeMap<String, TaskEntry> = BTreeMap::new();
        let mut next_awakeable = 0;
        for (t, event) in events.into_iter().enumerate() {
            let t = i64::try_from(t).unwrap();
            let wakes = match event {
                Event::Start(n, b) => {
                    // `start` never replaces a record (a retried start answers the same).
                    table.entry(TaskId::from_number(n).to_string()).or_insert_with(|| started(n, b, t));
                    Vec::new()
                }
                Event::Exit(n, b, code) => record_exit(&mut table, &ExitReport {
                    task_id: TaskId::from_number(n),
                    boot: format!("boot{b}"),
                    status: TaskStatus::Exited,
                    exit_code: code,
                    signal: None,
                    ended_at: at(t),
                    bytes_written: 7,
                    leader_exit_code: None,
                    log_write_failure: None,
                    kill_reason: None,
                }),
                Event::Kill(n) => {
                    let exit = record(&table, TaskId::from_number(n))
                        .filter(|r| r.entry.status() == TaskStatus::Running)
                        .map(|r| {
                            r.entry
                                .exit_after(TaskStatus::Killed, 143, std::time::Duration::ZERO)
                                .signal(Signal::TERM)
                        });
                    exit.map(|e| record_kill(&mut table, &e, at(t))).unwrap_or_default()
                }
                Event::Sweep(b) => {
                    let boot = format!("boot{b}");
                    let gone = lost(&table, &boot);
                    for task in &gone {
                        let r = record(&table, *task).unwrap();
                        prop_assert!(r.boot != boot && r.entry.status() == TaskStatus::Running);
                    }
                    let wakes = mark_lost(&mut table, &gone, at(t));
                    for task in &gone {
                        prop_assert_eq!(record(&table, *task).unwrap().entry.status(), TaskStatus::Lost);
                    }
                    wakes
                }
                Event::Wait(n) => {
                    next_awakeable += 1;
                    let awakeable = format!("a{next_awakeable}");
                    let wakes = add_waiter(&mut table, TaskId::from_number(n), awakeable.clone());
                    if wakes.is_empty() {
                        parked.insert(awakeable);
                    }
                    wakes
                }
                Event::Clear => {
                    ended.clear();
                    clear(&mut table)
                }
            };
            for (awakeable, answer) in wakes {
                prop_assert!(!answered.contains_key(&awakeable), "{} answered twice", awakeable);
                parked.remove(&awakeable);
                if let Some(exit) = &answer {
                    prop_assert!(exit.status.is_terminal());
                }
                answered.insert(awakeable, answer);
            }
            for (id, record) in &table {
                if let Some(before) = ended.get(id) {
                    prop_assert_eq!(&record.entry, before, "an ended task changed");
                }
                if record.entry.status().is_terminal() {
                    prop_assert!(record.waiters.is_empty());
                    prop_assert!(record.entry.exit_info().is_some());
                    ended.insert(id.clone(), record.entry.clone());
                } else {
                    for waiter in &record.waiters {
                        prop_assert!(parked.contains(waiter));
                    }
                }
            }
        }
        // Every waiter not answered is parked on a task that still runs.
        let still: usize = table.values().map(|r| r.waiters.len()).sum();
        prop_assert_eq!(still, parked.len());
    }
}

#[test]
fn a_lost_task_reads_lost_with_the_lost_exit_code() {
    let mut table = Table::new();
    table.insert("bash_1".into(), started(1, 0, 0));
    add_waiter(&mut table, TaskId::from_number(1), "w".into());
    assert_eq!(
        lost(&table, "boot0"),
        Vec::<TaskId>::new(),
        "same boot: alive"
    );
    let gone = lost(&table, "boot1");
    let wakes = mark_lost(&mut table, &gone, at(5));
    let exit = wakes[0].1.clone().unwrap();
    assert_eq!(
        (exit.status, exit.exit_code),
        (TaskStatus::Lost, LOST_EXIT_CODE)
    );
    assert_eq!(exit.duration, std::time::Duration::from_millis(5));
    // The late report of the dead boot changes nothing now.
    let late = ExitReport {
        task_id: TaskId::from_number(1),
        boot: "boot0".into(),
        status: TaskStatus::Exited,
        exit_code: 0,
        signal: None,
        ended_at: at(9),
        bytes_written: 1,
        leader_exit_code: None,
        log_write_failure: None,
        kill_reason: None,
    };
    assert!(record_exit(&mut table, &late).is_empty());
    assert_eq!(
        record(&table, TaskId::from_number(1))
            .unwrap()
            .entry
            .status(),
        TaskStatus::Lost
    );
}

/// Ends task `n` of `table` (boot 0) with code 0 at `t`.
fn end_task(table: &mut Table, n: u64, t: i64) {
    let report = ExitReport {
        task_id: TaskId::from_number(n),
        boot: "boot0".to_owned(),
        status: TaskStatus::Exited,
        exit_code: 0,
        signal: None,
        ended_at: at(t),
        bytes_written: 0,
        leader_exit_code: None,
        log_write_failure: None,
        kill_reason: None,
    };
    record_exit(table, &report);
}

fn reported(table: &Table, n: u64) -> bool {
    record(table, TaskId::from_number(n))
        .unwrap()
        .entry
        .reported
}

#[test]
fn an_end_is_offered_to_its_starter_while_it_visits_then_to_the_next_session() {
    let mut table = Table::new();
    table.insert(TaskId::from_number(1).to_string(), started(1, 0, 0));
    end_task(&mut table, 1, 5);
    let mut visits = Visits::new();
    // The starting session s0 visits: another session is not to tell it.
    assert!(visit(&mut visits, "s0", 0));
    assert!(visit(&mut visits, "s1", 0));
    offer_ends(&mut table, &visits, "s1", 1);
    assert!(reported(&table, 1), "s1 must leave it to s0");
    // s0 then dies: past the lease, s1 claims it and is to tell it.
    let later = VISIT_LEASE_MS + 1;
    assert!(visit(&mut visits, "s1", later));
    assert!(offer_ends(&mut table, &visits, "s1", later));
    assert!(!reported(&table, 1));
    // s1 told it: no session is to tell it again, nor does a list without one.
    assert!(told(&mut table, "s1", &[TaskId::from_number(1)]));
    assert!(!told(&mut table, "s1", &[TaskId::from_number(1)]));
    offer_ends(&mut table, &visits, "s2", later);
    assert!(reported(&table, 1));
    show_told(&mut table);
    assert!(reported(&table, 1));
}

#[test]
fn a_running_task_is_never_claimed_nor_told() {
    let mut table = Table::new();
    table.insert(TaskId::from_number(1).to_string(), started(1, 0, 0));
    let visits = Visits::new();
    assert!(!offer_ends(&mut table, &visits, "s1", 0));
    assert!(!told(&mut table, "s1", &[TaskId::from_number(1)]));
    assert!(!reported(&table, 1));
    assert_eq!(
        record(&table, TaskId::from_number(1)).unwrap().ledger.claim,
        None
    );
}

#[test]
fn a_recent_visit_is_not_written_again_and_old_ones_are_forgotten() {
    let mut visits = Visits::new();
    assert!(visit(&mut visits, "s0", 0));
    assert!(!visit(&mut visits, "s0", VISIT_LEASE_MS / 8));
    assert!(visit(&mut visits, "s0", VISIT_LEASE_MS));
    assert!(visit(&mut visits, "s1", VISIT_FORGET_MS + VISIT_LEASE_MS));
    assert_eq!(visits.keys().collect::<Vec<_>>(), ["s1"]);
}

#[test]
fn numbers_go_past_the_counter_the_table_and_the_asker() {
    let mut table = Table::new();
    assert_eq!(next_number(&table, 0, 0), 1);
    table.insert(TaskId::from_number(4).to_string(), started(4, 0, 0));
    assert_eq!(next_number(&table, 0, 0), 5);
    assert_eq!(next_number(&table, 9, 0), 9);
    assert_eq!(next_number(&table, 9, 12), 12);
}

#[test]
fn the_lease_in_milliseconds_is_the_public_one() {
    assert_eq!(
        u128::try_from(VISIT_LEASE_MS).unwrap(),
        crate::SESSION_LEASE.as_millis()
    );
}
