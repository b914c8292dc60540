//! `notify_on` and `shell_notify` over the mock: a follower per task tells each matching
//! line once, with its line number, holds a partial line until it ends, takes new
//! patterns for lines not matched yet, and says when it drained the log.

use std::time::Duration;

use serde_json::json;
use zidane_context::{Capabilities, DetachedTasks, MockContext, TaskId};
use zidane_tools::{BackgroundGate, SHELL, SHELL_NOTIFY, ToolRegistry};

use crate::common::{Harness, TASKS_DIR};

/// Waits (bounded) until the recorder heard `count` lines or the follower drained.
async fn until_heard(harness: &Harness, what: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let heard = harness.events.lock().unwrap().task_events.clone();
        if what(&heard) {
            return heard;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "heard only {heard:?}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn matching_lines_are_told_once_with_their_numbers_then_the_follower_drains() {
    let harness = Harness::new().await;
    let started = harness
        .call(
            SHELL,
            json!({ "command": "make", "run_in_background": true, "notify_on": ["^error", "warn"] }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    let task = TaskId::from_number(1);
    harness
        .mock
        .write_output(task, b"ok\nerror: one\nfine\nwarning: two\nerr");
    until_heard(&harness, |h| h.len() >= 3).await;
    // The partial last line is held until it ends.
    harness
        .mock
        .write_output(task, b"or: three\n\x1b[31merror\x1b[0m: four");
    harness.mock.finish(task, 1);
    let heard = until_heard(&harness, |h| h.iter().any(|l| l.starts_with("drained"))).await;
    assert_eq!(
        heard,
        [
            "follow bash_1 [\"^error\", \"warn\"]",
            "event bash_1 line 2",
            "event bash_1 line 4",
            "event bash_1 line 5",
            "event bash_1 line 6",
            "drained bash_1",
        ]
    );
    let lines = harness.events.lock().unwrap().lines.clone();
    assert_eq!(lines[1].pattern, "warn");
    assert_eq!(lines[2].line, "error: three");
    assert_eq!(lines[3].line, "error: four", "escape sequences stripped");
}

#[tokio::test]
async fn new_patterns_apply_to_later_lines_and_none_stop_the_follower() {
    let harness = Harness::new().await;
    let task = harness.start("server").await;
    harness.mock.write_output(task, b"ready\n");
    let set = harness
        .call(
            SHELL_NOTIFY,
            json!({ "task_id": "bash_1", "notify_on": "ready|done" }),
        )
        .await;
    assert!(!set.is_error, "{}", set.text);
    assert!(set.text.contains("from now on"), "{}", set.text);
    harness.mock.write_output(task, b"ready again\n");
    until_heard(&harness, |h| h.iter().any(|l| l.starts_with("event"))).await;
    let cleared = harness
        .call(
            SHELL_NOTIFY,
            json!({ "task_id": "bash_1", "notify_on": [] }),
        )
        .await;
    assert!(
        cleared.text.contains("patterns cleared"),
        "{}",
        cleared.text
    );
    let heard = until_heard(&harness, |h| h.iter().any(|l| l.starts_with("drained"))).await;
    assert_eq!(
        heard,
        [
            "follow bash_1 [\"ready|done\"]",
            "event bash_1 line 2",
            "follow bash_1 []",
            "drained bash_1",
        ]
    );
    let unknown = harness
        .call(
            SHELL_NOTIFY,
            json!({ "task_id": "bash_9", "notify_on": "x" }),
        )
        .await;
    assert!(unknown.is_error && unknown.text.contains("no background task bash_9"));
    harness.mock.finish(task, 0);
}

#[tokio::test]
async fn notify_on_is_refused_where_it_cannot_work_and_says_why() {
    let harness = Harness::new().await;
    let cases = [
        (
            json!({ "command": "make", "notify_on": "x" }),
            "a foreground command's output comes back whole",
        ),
        (
            json!({ "command": "make", "run_in_background": true, "notify_on": "(" }),
            "\"(\" is not a valid regular expression",
        ),
        (
            json!({ "command": "make", "run_in_background": true, "notify_on": {"a": 1} }),
            "`notify_on` must be a regular expression or a list",
        ),
    ];
    for (input, expected) in cases {
        let output = harness.call(SHELL, input.clone()).await;
        assert!(
            output.is_error && output.text.contains(expected),
            "{input}: {}",
            output.text
        );
    }
    assert!(!harness.ran_anything(), "nothing ran on bad input");

    // A context that cannot follow logs: refused, and neither field nor tool is offered.
    let blind = Harness::with(
        MockContext::new().with_capabilities(Capabilities::new(DetachedTasks::ProcessLifetime)),
        Some(TASKS_DIR),
    )
    .await;
    let output = blind
        .call(
            SHELL,
            json!({ "command": "make", "run_in_background": true, "notify_on": "x" }),
        )
        .await;
    assert!(
        output.is_error && output.text.contains("cannot follow a task's log"),
        "{}",
        output.text
    );
    let gate = blind.context.gate();
    assert!(gate.allowed() && !gate.task_events());
    let registry = ToolRegistry::with_default_tools().unwrap();
    let offered: Vec<String> = registry
        .specs(&zidane_tools::SpecView::new(gate))
        .into_iter()
        .map(|spec| spec.name)
        .collect();
    assert!(!offered.contains(&SHELL_NOTIFY.to_owned()), "{offered:?}");
    let shell = registry
        .resolve(SHELL)
        .unwrap()
        .spec(&zidane_tools::SpecView::new(gate));
    assert!(shell.input_schema["properties"].get("notify_on").is_none());
    assert!(!shell.description.contains("notify_on"));

    let open = registry
        .resolve(SHELL)
        .unwrap()
        .spec(&zidane_tools::SpecView::new(BackgroundGate::open()));
    assert!(open.input_schema["properties"].get("notify_on").is_some());
    assert!(open.description.contains("<task-event>"));
}

/// Lines nothing can match are skipped a chunk at a time without losing count; a line
/// that matches only without its escapes, or before its `\r\n`, is still found.
#[tokio::test]
async fn skipped_lines_keep_their_numbers_and_no_match_is_missed() {
    let harness = Harness::new().await;
    harness
        .call(
            SHELL,
            json!({ "command": "make", "run_in_background": true, "notify_on": ["^error: \\w+$", "^warn$"] }),
        )
        .await;
    let task = TaskId::from_number(1);
    let lines = |range: std::ops::RangeInclusive<u32>| {
        range
            .map(|n| match n {
                500 => "error: mid\n".to_owned(),
                777 => "\x1b[1merror\x1b[0m: bold\n".to_owned(),
                900 => "warn\r\n".to_owned(),
                _ => format!("compiling crate {n}\n"),
            })
            .collect::<String>()
    };
    // Written apart, so a chunk of lines none can match (1–499) is likely one step.
    for range in [1..=499, 500..=776, 777..=1000] {
        harness.mock.write_output(task, lines(range).as_bytes());
        tokio::task::yield_now().await;
    }
    harness
        .mock
        .write_output(task, b"quiet\nquiet\nerror: last\n");
    harness.mock.finish(task, 0);
    let heard = until_heard(&harness, |h| h.iter().any(|l| l.starts_with("drained"))).await;
    assert_eq!(
        heard[1..],
        [
            "event bash_1 line 500",
            "event bash_1 line 777",
            "event bash_1 line 900",
            "event bash_1 line 1003",
            "drained bash_1",
        ]
    );
}
