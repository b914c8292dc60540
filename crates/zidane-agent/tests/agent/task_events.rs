//! Pushed task events with real processes: `notify_on` lines are told coalesced and
//! exactly once, a pattern set by `shell_notify` fires for later lines, and events then
//! the exit are told in order, once, across a reload from the session store.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use zidane_agent::{
    Agent, Behavior, EVENT_LINES_SHOWN, ModelResponse, Notifications, RunOptions, ScriptedModel,
    Session, SessionStore, ToolCall,
};
use zidane_context::{ExecutionContext, TaskStatus};
use zidane_process::ProcessContext;
use zidane_wire::TaskEventBlock;

use crate::support::until;

/// Every line number a block tells (every line of these tasks matches, so a count covers
/// a whole range).
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

/// Drains until the task's exit is told; returns every drain that told something.
async fn drain_until_exit(agent: &Agent) -> Vec<Notifications> {
    let mut drains = Vec::new();
    let mut ended = false;
    let deadline = tokio::time::Instant::now() + crate::support::WAIT * 4;
    while !ended {
        assert!(tokio::time::Instant::now() < deadline, "no exit told");
        let told = agent.drain_notifications().await.unwrap();
        if told.is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            continue;
        }
        ended = !told.exits.is_empty();
        drains.push(told);
    }
    drains
}

fn host_agent(dir: &std::path::Path) -> Agent {
    Agent::host_driven(Arc::new(ProcessContext::new()))
        .behavior(Behavior::new().tasks_dir(dir.join("tasks")))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_matching_lines_are_told_coalesced_each_once_then_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let agent = host_agent(dir.path());
    let started = agent
        .call_tool(ToolCall::new(
            "1",
            "shell",
            json!({
                "command": "i=1; while [ $i -le 10000 ]; do echo \"hit $i\"; i=$((i+1)); done",
                "run_in_background": true,
                "notify_on": "^hit \\d+$",
            }),
        ))
        .await
        .unwrap();
    assert!(!started.is_error, "{}", started.text);

    let drains = drain_until_exit(&agent).await;
    let mut told = Vec::new();
    for (i, drain) in drains.iter().enumerate() {
        for block in &drain.events {
            assert!(block.lines.len() <= EVENT_LINES_SHOWN, "{block:?}");
            assert_eq!(block.lines[0].pattern, "^hit \\d+$");
            assert_eq!(
                block.lines[0].line,
                format!("hit {}", block.lines[0].line_number)
            );
            told.extend(told_lines(block));
        }
        if i + 1 < drains.len() {
            assert!(drain.exits.is_empty(), "the exit comes last");
        }
    }
    let last = drains.last().unwrap();
    assert_eq!(last.exits.len(), 1);
    assert_eq!(last.exits[0].status, TaskStatus::Exited);
    assert_eq!(told.len(), 10_000, "every line told");
    assert_eq!(
        told.iter().copied().collect::<BTreeSet<u64>>().len(),
        10_000,
        "no line told twice"
    );
    assert_eq!(told, (1..=10_000).collect::<Vec<u64>>(), "in log order");
    // Coalesced: however fast the lines come, one drain tells one block for the task,
    // whatever number of lines arrived since the last (a count of blocks would measure
    // only how fast this machine ran the loop).
    for drain in &drains {
        assert!(
            drain.events.len() <= 1,
            "{} blocks in one drain",
            drain.events.len()
        );
    }
    let blocks: usize = drains.iter().map(|d| d.events.len()).sum();
    assert!(
        blocks < told.len() / 10,
        "coalesced: {blocks} blocks for 10,000 lines"
    );
    let rendered = drains[0].blocks()[0].clone();
    assert!(
        rendered.starts_with("<task-event>\n<task-id>bash_1</task-id>"),
        "{rendered}"
    );
    assert!(
        agent.drain_notifications().await.unwrap().is_empty(),
        "told once"
    );
    agent.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_set_on_a_running_task_fires_for_later_lines() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("go");
    let agent = host_agent(dir.path());
    let command = format!(
        "echo 'hit early'; while [ ! -e '{}' ]; do sleep 0.02; done; echo quiet; echo 'hit late'",
        flag.display()
    );
    let started = agent
        .call_tool(ToolCall::new(
            "1",
            "shell",
            json!({ "command": command, "run_in_background": true }),
        ))
        .await
        .unwrap();
    // The pattern is set once the first line is in the log: it must not be told.
    let log = started.data["output_path"].as_str().unwrap().to_owned();
    until(|| std::fs::read_to_string(&log).is_ok_and(|text| text.contains("hit early"))).await;
    let set = agent
        .call_tool(ToolCall::new(
            "2",
            "shell_notify",
            json!({ "task_id": "bash_1", "notify_on": ["^hit"] }),
        ))
        .await
        .unwrap();
    assert!(!set.is_error, "{}", set.text);
    assert_eq!(set.data["notify_on"], json!(["^hit"]));
    std::fs::write(&flag, b"").unwrap();

    let drains = drain_until_exit(&agent).await;
    let events: Vec<_> = drains.iter().flat_map(|d| d.events.clone()).collect();
    let lines: Vec<(u64, String)> = events
        .iter()
        .flat_map(|b| b.lines.iter().map(|l| (l.line_number, l.line.clone())))
        .collect();
    assert_eq!(
        lines,
        [(3, "hit late".to_owned())],
        "only lines after the call"
    );

    let ended = agent
        .call_tool(ToolCall::new(
            "3",
            "shell_notify",
            json!({ "task_id": "bash_1", "notify_on": "x" }),
        ))
        .await
        .unwrap();
    assert!(
        ended.is_error && ended.text.contains("has ended"),
        "{}",
        ended.text
    );
    let bad = agent
        .call_tool(ToolCall::new(
            "4",
            "shell",
            json!({ "command": "true", "run_in_background": true, "notify_on": "(" }),
        ))
        .await
        .unwrap();
    assert!(
        bad.is_error && bad.text.contains("\"(\" is not a valid regular expression"),
        "{}",
        bad.text
    );
    let foreground = agent
        .call_tool(ToolCall::new(
            "5",
            "shell",
            json!({ "command": "true", "notify_on": "x" }),
        ))
        .await
        .unwrap();
    assert!(
        foreground.is_error && foreground.text.contains("foreground"),
        "{}",
        foreground.text
    );
    agent.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_then_the_exit_are_told_in_order_once_across_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path().join("user"));
    let context = Arc::new(ProcessContext::new());
    let handle = context.create_handle().await.unwrap();
    let (first_flag, second_flag) = (dir.path().join("one"), dir.path().join("two"));
    let wait_for = |flag: &std::path::Path| {
        format!("while [ ! -e '{}' ]; do sleep 0.02; done", flag.display())
    };
    let command = format!(
        "echo 'hit 1'; echo 'hit 2'; {}; echo 'hit 3'; {}; echo 'hit 4'",
        wait_for(&first_flag),
        wait_for(&second_flag)
    );
    let build = |model: ScriptedModel, session: Session| {
        Agent::builder(Arc::new(model), context.clone())
            .handle(handle)
            .store(store.clone())
            .session(session)
            .build()
            .unwrap()
    };
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": command, "run_in_background": true, "notify_on": "^hit" }),
        )
        .text("started")
        .react(|request| {
            let events = request.task_events();
            assert_eq!(events.len(), 1, "{request:?}");
            ModelResponse::text("two hits")
        });
    let first = build(model, Session::new("s1"));
    let queued = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&queued);
    first.hooks().subscribe(move |event| {
        if event.name() == "background:event" {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    first.run(RunOptions::new("start it")).await.unwrap();
    until(|| queued.load(Ordering::SeqCst) == 2).await;
    let told = first.run(RunOptions::drain()).await.unwrap();
    let lines: Vec<u64> = told.events.iter().flat_map(told_lines).collect();
    assert_eq!(lines, [1, 2]);
    drop(first);

    std::fs::write(&first_flag, b"").unwrap();
    let model = ScriptedModel::new()
        .text("hit 3 seen")
        .text("hit 4 seen, and the end");
    let second = build(model, store.load("s1").unwrap());
    // The first sweep starts the follower again, from the line after the last told.
    second.sweep_exits().await.unwrap();
    until(|| second.has_pending_task_notifications()).await;
    let told = second.run(RunOptions::drain()).await.unwrap();
    let lines: Vec<u64> = told.events.iter().flat_map(told_lines).collect();
    assert_eq!(lines, [3], "lines 1 and 2 were told before the reload");
    assert!(told.notified.is_empty(), "the task still runs");

    std::fs::write(&second_flag, b"").unwrap();
    // A context pushes exits to the host that started the task: this one sweeps.
    let deadline = tokio::time::Instant::now() + crate::support::WAIT;
    while !second.has_pending_task_notifications() {
        assert!(tokio::time::Instant::now() < deadline, "no exit");
        second.sweep_exits().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let told = second.run(RunOptions::drain()).await.unwrap();
    let lines: Vec<u64> = told.events.iter().flat_map(told_lines).collect();
    assert_eq!(lines, [4], "the last event, before its exit");
    assert_eq!(told.notified.len(), 1);
    let blocks = told.notification_blocks();
    assert!(blocks[0].starts_with("<task-event>"), "{blocks:?}");
    assert!(blocks[1].starts_with("<task-notification>"), "{blocks:?}");
    assert!(matches!(
        second.run(RunOptions::drain()).await,
        Err(zidane_agent::AgentError::NothingPending)
    ));
    second.destroy().await.unwrap();
}
