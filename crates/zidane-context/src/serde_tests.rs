//! Serde round-trips of every data type, and their pinned JSON shapes.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use proptest::prelude::*;

use crate::*;

fn exit() -> TaskExitInfo {
    TaskExitInfo::new(
        TaskId::from_number(1),
        "npm run dev",
        "/home/u/.zidane/sessions/s1/tasks/bash_1.20260523-024147-123.log",
        TaskStatus::Killed,
        143,
        Duration::from_millis(4200),
    )
    .signal(Signal::TERM)
}

fn running() -> TaskEntry {
    let started_at = Utc.with_ymd_and_hms(2026, 5, 23, 2, 41, 47).unwrap();
    TaskEntry::running(
        TaskId::from_number(2),
        4242,
        "cargo build",
        "/work",
        "/tasks/bash_2.20260523-024147-123.log",
        started_at,
    )
    .bytes_written(10_240)
}

fn entry() -> TaskEntry {
    let running = running();
    let exit = running.exit_after(TaskStatus::Exited, 0, Duration::from_millis(1500));
    running.ended(exit)
}

#[test]
fn json_shapes() {
    insta::assert_json_snapshot!("task_exit_info", exit());
    insta::assert_json_snapshot!("task_entry", entry());
    insta::assert_json_snapshot!(
        "background_started",
        BackgroundStarted::new(TaskId::from_number(3), "/t/bash_3.log", 99)
    );
    insta::assert_json_snapshot!(
        "stall_info",
        StallInfo {
            task_id: TaskId::from_number(1),
            command: "npm init".into(),
            output_path: "/t/bash_1.log".into(),
            stalled_for: Duration::from_secs(45),
            bytes_written: 128,
            diagnosis: None,
            takes_input: false,
            terminal: false,
        }
    );
    insta::assert_json_snapshot!(
        "capabilities",
        Capabilities::new(DetachedTasks::ProcessLifetime)
    );
    insta::assert_json_snapshot!(
        "exec_options",
        ExecOptions::new()
            .cwd("/work")
            .env("A", "1")
            .timeout(Duration::from_secs(30))
    );
    insta::assert_json_snapshot!(
        "exec_output",
        ExecOutput {
            output: "ok\n".into(),
            exit_code: 0,
            signal: None,
            timed_out: false,
            cancelled: false,
            truncated_bytes: 0,
            duration: Duration::from_millis(12),
        }
    );
    insta::assert_json_snapshot!("read_range", ReadRange::new(10, Some(20)));
    insta::assert_json_snapshot!(
        "read_result",
        ReadResult {
            path: "/t/x.log".into(),
            offset: 0,
            lines: vec!["a".into()],
            total_lines: 3,
            remaining: 2,
            stopped_after_bytes: None,
            bytes_before: None,
        }
    );
    insta::assert_json_snapshot!("execution_handle", ExecutionHandle::new(7));
}

#[test]
fn exits_with_what_a_kill_or_a_full_disk_left_out() {
    let mut killed = exit();
    killed.leader_exit_code = Some(0);
    killed.log_write_failure = Some(LogWriteFailure {
        bytes_dropped: 7_906_957,
        error: "No space left on device (os error 28)".into(),
    });
    insta::assert_json_snapshot!("task_exit_info_log_write_failure", killed);
    assert_eq!(
        killed.log_write_failure.as_ref().unwrap().to_string(),
        "7906957 bytes not written: No space left on device (os error 28)"
    );
    let running = running();
    let exit = running
        .exit_after(TaskStatus::Exited, 0, Duration::from_millis(1500))
        .leader_exit_code(0)
        .log_write_failure(killed.log_write_failure.clone());
    let entry = running.ended(exit);
    assert_eq!(entry.leader_exit_code(), Some(0));
    assert_eq!(entry.log_write_failure(), killed.log_write_failure.as_ref());
    let json = serde_json::to_value(&entry).unwrap();
    assert_eq!(json["leader_exit_code"], 0);
    assert_eq!(json["log_write_failure"]["bytes_dropped"], 7_906_957);
    let back: TaskEntry = serde_json::from_value(json).unwrap();
    assert_eq!(back, entry);
}

/// Data written before these fields existed still parses, as an exit without them.
#[test]
fn data_without_the_newer_fields_still_parses() {
    let old = r#"{"task_id":"bash_1","status":"exited","exit_code":0,"signal":null,
        "output_path":"/t/bash_1.log","duration_ms":5,"command":"true"}"#;
    let exit: TaskExitInfo = serde_json::from_str(old).unwrap();
    assert_eq!(
        (exit.leader_exit_code, exit.log_write_failure),
        (None, None)
    );
    let old = r#"{"path":"/t/x.log","offset":0,"lines":[],"total_lines":0,"remaining":0}"#;
    let read: ReadResult = serde_json::from_str(old).unwrap();
    assert_eq!(read.stopped_after_bytes, None);
    // Unset, they are left out: what older readers expect.
    let json = serde_json::to_string(&self::exit()).unwrap();
    assert!(!json.contains("leader_exit_code") && !json.contains("log_write_failure"));
}

#[test]
fn entry_exit_info_uses_ended_at() {
    let info = entry().exit_info().unwrap();
    assert_eq!(info.duration, Duration::from_millis(1500));
    let json = serde_json::to_value(entry()).unwrap();
    assert_eq!(json["ended_at"], "2026-05-23T02:41:48.500Z");
    let back: TaskEntry = serde_json::from_value(json).unwrap();
    assert_eq!(back.ended_at(), entry().ended_at());
    assert_eq!(back.exit_info(), Some(info));
}

#[test]
fn an_entry_ends_once_and_a_running_one_has_no_exit() {
    let mut entry = running();
    assert_eq!(
        (entry.status(), entry.exit_code(), entry.ended_at()),
        (TaskStatus::Running, None, None)
    );
    assert_eq!(entry.exit_info(), None);
    let first = entry
        .exit_after(TaskStatus::Killed, 143, Duration::from_secs(2))
        .signal(Signal::TERM);
    assert!(entry.end(first.clone()));
    let second = entry.exit_after(TaskStatus::Exited, 0, Duration::from_secs(9));
    assert!(!entry.end(second));
    assert_eq!(entry.exit(), Some(&first));
    assert_eq!(entry.runtime(Utc::now()), Duration::from_secs(2));
}

#[test]
fn an_ended_entry_without_its_exit_code_or_end_is_refused_by_name() {
    let mut json = serde_json::to_value(entry()).unwrap();
    json["exit_code"] = serde_json::Value::Null;
    let error = serde_json::from_value::<TaskEntry>(json)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bash_2") && error.contains("`exit_code`"),
        "{error}"
    );
    let mut json = serde_json::to_value(entry()).unwrap();
    json["ended_at"] = serde_json::Value::Null;
    let error = serde_json::from_value::<TaskEntry>(json)
        .unwrap_err()
        .to_string();
    assert!(error.contains("`ended_at`"), "{error}");
}

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
) {
    let json = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, value, "{json}");
}

fn status() -> impl Strategy<Value = TaskStatus> {
    prop_oneof![
        Just(TaskStatus::Running),
        Just(TaskStatus::Exited),
        Just(TaskStatus::Killed),
        Just(TaskStatus::Lost)
    ]
}

fn signal() -> impl Strategy<Value = Option<Signal>> {
    proptest::option::of((1i32..=64).prop_map(|n| Signal::from_number(n).unwrap()))
}

fn time() -> impl Strategy<Value = chrono::DateTime<Utc>> {
    (0i64..4_000_000_000_000).prop_map(|ms| Utc.timestamp_millis_opt(ms).unwrap())
}

fn kill_reason() -> impl Strategy<Value = Option<KillReason>> {
    proptest::option::of(prop_oneof![
        Just(KillReason::Requested),
        Just(KillReason::Destroyed),
        Just(KillReason::User),
        (0u64..u64::MAX / 2).prop_map(|ms| KillReason::WallTime {
            budget: Duration::from_millis(ms)
        }),
        (0u64..u64::MAX / 2).prop_map(|ms| KillReason::CpuTime {
            budget: Duration::from_millis(ms)
        }),
    ])
}

#[test]
fn a_kill_reason_reads_as_its_kind_and_budget() {
    let json = serde_json::to_value(KillReason::WallTime {
        budget: Duration::from_secs(600),
    })
    .unwrap();
    assert_eq!(
        json,
        serde_json::json!({ "kind": "wall_time", "budget_ms": 600000 })
    );
    let json = serde_json::to_value(KillReason::Destroyed).unwrap();
    assert_eq!(json, serde_json::json!({ "kind": "destroyed" }));
}

fn log_write_failure() -> impl Strategy<Value = Option<LogWriteFailure>> {
    proptest::option::of((any::<u64>(), "\\PC*").prop_map(|(bytes_dropped, error)| {
        LogWriteFailure {
            bytes_dropped,
            error,
        }
    }))
}

prop_compose! {
    fn arb_exit()(n in any::<u64>(), status in status(), exit_code in any::<i32>(), signal in signal(),
                  path in "\\PC*", ms in 0u64..u64::MAX / 2, command in "\\PC*",
                  leader_exit_code in proptest::option::of(any::<i32>()),
                  log_write_failure in log_write_failure(), kill_reason in kill_reason(),
                  detached in any::<bool>()) -> TaskExitInfo {
        TaskExitInfo::new(TaskId::from_number(n), command, path, status, exit_code, Duration::from_millis(ms))
            .signal(signal).leader_exit_code(leader_exit_code).log_write_failure(log_write_failure)
            .kill_reason(kill_reason).detached(detached)
    }
}

fn terminal_status() -> impl Strategy<Value = TaskStatus> {
    prop_oneof![
        Just(TaskStatus::Exited),
        Just(TaskStatus::Killed),
        Just(TaskStatus::Lost)
    ]
}

prop_compose! {
    fn arb_ending()(status in terminal_status(), exit_code in any::<i32>(), signal in signal(),
                    ms in 0u64..4_000_000_000_000,
                    leader_exit_code in proptest::option::of(any::<i32>()),
                    log_write_failure in log_write_failure(), kill_reason in kill_reason())
                    -> (TaskStatus, i32, Option<Signal>, Duration, Option<i32>, Option<LogWriteFailure>, Option<KillReason>) {
        (status, exit_code, signal, Duration::from_millis(ms), leader_exit_code, log_write_failure, kill_reason)
    }
}

prop_compose! {
    fn arb_entry()(n in any::<u64>(), pid in any::<u32>(), command in "\\PC*", cwd in "\\PC*",
                   started_at in time(), bytes in any::<u64>(),
                   detached in any::<bool>(), reported in any::<bool>(),
                   runs_on in proptest::option::of("[a-z0-9_]{1,8}"),
                   ending in proptest::option::of(arb_ending())) -> TaskEntry {
        let entry = TaskEntry::running(TaskId::from_number(n), pid, command, cwd.clone(),
                                       format!("{cwd}/log"), started_at).bytes_written(bytes)
            .detached(detached).reported(reported).runs_on(runs_on);
        match ending {
            None => entry,
            Some((status, exit_code, signal, duration, leader, failure, reason)) => {
                let exit = entry.exit_after(status, exit_code, duration).signal(signal)
                    .leader_exit_code(leader).log_write_failure(failure).kill_reason(reason);
                entry.ended(exit)
            }
        }
    }
}

proptest! {
    #[test]
    fn exit_info_round_trips(value in arb_exit()) { round_trip(&value); }

    #[test]
    fn entry_round_trips(value in arb_entry()) { round_trip(&value); }

    #[test]
    fn stall_round_trips(n in any::<u64>(), command in "\\PC*", ms in 0u64..u64::MAX / 2, bytes in any::<u64>()) {
        round_trip(&StallInfo { task_id: TaskId::from_number(n), command, output_path: "/x".into(),
                                stalled_for: Duration::from_millis(ms), bytes_written: bytes, diagnosis: None,
                                takes_input: false, terminal: false });
    }

    #[test]
    fn started_and_small_types_round_trip(n in any::<u64>(), pid in any::<u32>(), h in any::<u64>(), off in any::<usize>(), lim in proptest::option::of(any::<usize>())) {
        round_trip(&BackgroundStarted::new(TaskId::from_number(n), "/p", pid));
        round_trip(&ExecutionHandle::new(h));
        round_trip(&ReadRange::new(off, lim));
        round_trip(&TaskId::from_number(n));
    }

    #[test]
    fn exec_output_round_trips(output in "\\PC*", exit_code in any::<i32>(), signal in signal(), t in any::<bool>(), c in any::<bool>(), dropped in any::<u64>(), ms in 0u64..u64::MAX / 2) {
        round_trip(&ExecOutput { output, exit_code, signal, timed_out: t, cancelled: c, truncated_bytes: dropped, duration: Duration::from_millis(ms) });
    }

    #[test]
    fn read_result_round_trips(lines in proptest::collection::vec("\\PC*", 0..5), total in any::<usize>(), remaining in any::<usize>()) {
        round_trip(&ReadResult { path: "/p".into(), offset: 0, lines, total_lines: total, remaining, stopped_after_bytes: None, bytes_before: None });
        round_trip(&ReadResult { path: "/p".into(), offset: 0, lines: Vec::new(), total_lines: total, remaining, stopped_after_bytes: Some(remaining as u64), bytes_before: None });
    }

    #[test]
    fn capabilities_round_trip(d in prop_oneof![Just(DetachedTasks::None), Just(DetachedTasks::ProcessLifetime), Just(DetachedTasks::Durable)]) {
        round_trip(&Capabilities::new(d));
        round_trip(&Capabilities::new(d).with_detach());
    }
}

/// A detached task's entry and exit say so, and its entry says whether another
/// session was told its end; unset, neither field is written.
#[test]
fn detached_and_reported_are_written_only_when_set() {
    let id = TaskId::detached(3).unwrap();
    let running =
        TaskEntry::running(id, 7, "make", "/w", "/t/bash_d3.log", Utc::now()).detached(true);
    let exit = running.exit_after(TaskStatus::Exited, 0, Duration::from_secs(1));
    assert!(exit.detached, "the exit of a detached entry is detached");
    let entry = running.ended(exit.clone()).reported(true);
    let json = serde_json::to_value(&entry).unwrap();
    assert_eq!(json["task_id"], "bash_d3");
    assert_eq!(json["detached"], true);
    assert_eq!(json["reported"], true);
    assert_eq!(serde_json::from_value::<TaskEntry>(json).unwrap(), entry);
    let json = serde_json::to_value(&exit).unwrap();
    assert_eq!(json["detached"], true);
    assert_eq!(serde_json::from_value::<TaskExitInfo>(json).unwrap(), exit);

    let plain = serde_json::to_string(&self::entry()).unwrap();
    assert!(!plain.contains("detached") && !plain.contains("reported"));
    let plain = serde_json::to_string(&self::exit()).unwrap();
    assert!(!plain.contains("detached"));
    let capabilities = serde_json::to_value(Capabilities::new(DetachedTasks::Durable)).unwrap();
    assert!(capabilities.get("detach").is_none());
    let capabilities =
        serde_json::to_value(Capabilities::new(DetachedTasks::Durable).with_detach()).unwrap();
    assert_eq!(capabilities["detach"], true);
}
