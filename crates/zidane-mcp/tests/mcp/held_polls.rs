//! `tasks/get` held open for a client that polls MCP tasks in a loop (Claude Code): a
//! poll of a working MCP task is answered the moment the task ends, is cancelled or the
//! session closes, and otherwise after a hold well inside the client's request timeout;
//! each answer tells the client to poll again soon.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::model::{CancelTaskParams, DetailedTask, GetTaskParams, TaskPayload};
use rmcp::service::{Peer, RoleClient};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::task::JoinHandle;

use crate::support::{Harness, WAIT, start_as_mcp_task, start_with_tasks, text, until_dead};

/// Claude Code's timeout on one `tasks/get`: a held poll must be answered within it.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// The poll interval a held client is told: Claude Code's floor.
const HELD_POLL_INTERVAL_MS: u64 = 250;

/// Sends `tasks/get` for `mcp_task` and leaves it in flight.
fn poll(harness: &Harness, mcp_task: &str) -> JoinHandle<DetailedTask> {
    let peer: Peer<RoleClient> = harness.client.peer().clone();
    let params = GetTaskParams::new(mcp_task.to_owned());
    tokio::spawn(async move { peer.get_task(params).await.unwrap().task })
}

/// Asserts the poll is held: after a later request's whole round trip (which the
/// server received after the poll), it is still unanswered while the task runs.
async fn assert_held(harness: &Harness, held: &JoinHandle<DetailedTask>, task_id: &str) {
    let listed = harness.call("list_tasks", json!({})).await;
    assert!(
        text(&listed).contains(&format!("{task_id}  running")),
        "{}",
        text(&listed)
    );
    assert!(
        !held.is_finished(),
        "tasks/get of a working MCP task was answered at once"
    );
}

/// A background command that runs until [`release`] lets it end.
fn gated(dir: &Path) -> (PathBuf, String) {
    let fifo = dir.join("go");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let command = format!("cat {} > /dev/null; echo released", fifo.display());
    (fifo, command)
}

/// Ends the command of [`gated`]: opens the FIFO's write end once the command reads it,
/// writes and closes it.
async fn release(fifo: &Path) {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut sender = loop {
        match tokio::net::unix::pipe::OpenOptions::new().open_sender(fifo) {
            Ok(sender) => break sender,
            Err(error) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "nothing reads the FIFO: {error}"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    sender.write_all(b"go\n").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_poll_is_answered_when_the_task_ends() {
    let harness = start_with_tasks().await;
    let (fifo, command) = gated(harness.dir.path());
    let (id, _, mcp_task) = start_as_mcp_task(&harness, &command).await;
    let held = poll(&harness, &mcp_task);
    assert_held(&harness, &held, &id).await;

    release(&fifo).await;
    // Well inside the hold: the end, not the hold's limit, answered it.
    let answered = tokio::time::timeout(WAIT, held)
        .await
        .expect("the held poll was not answered when the task ended")
        .unwrap();
    let TaskPayload::Completed { result } = &answered.payload else {
        panic!("expected the completed MCP task, got {answered:?}")
    };
    let told = result["content"][0]["text"].as_str().unwrap();
    assert!(told.starts_with("<task-notification>"), "{told}");
    assert!(told.contains(&format!("<task-id>{id}</task-id>")), "{told}");
    assert_eq!(answered.task.poll_interval_ms, Some(HELD_POLL_INTERVAL_MS));

    // The state the held poll told is the one the server keeps.
    let again = harness
        .client
        .get_task(GetTaskParams::new(mcp_task))
        .await
        .unwrap()
        .task;
    assert_eq!(again.payload, answered.payload);
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_poll_is_answered_when_the_mcp_task_is_cancelled() {
    let harness = start_with_tasks().await;
    let (id, pid, mcp_task) = start_as_mcp_task(&harness, "sleep 30").await;
    let held = poll(&harness, &mcp_task);
    assert_held(&harness, &held, &id).await;

    harness
        .client
        .cancel_task(CancelTaskParams::new(mcp_task))
        .await
        .unwrap();
    let answered = tokio::time::timeout(WAIT, held)
        .await
        .expect("the held poll was not answered when the MCP task was cancelled")
        .unwrap();
    assert!(
        matches!(answered.payload, TaskPayload::Cancelled),
        "{answered:?}"
    );
    until_dead(pid).await;
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_poll_of_a_task_still_running_is_answered_before_the_client_gives_up() {
    let harness = start_with_tasks().await;
    let (id, _, mcp_task) = start_as_mcp_task(&harness, "sleep 300").await;
    let began = Instant::now();
    let held = poll(&harness, &mcp_task);
    assert_held(&harness, &held, &id).await;

    let answered = tokio::time::timeout(CLIENT_TIMEOUT, held)
        .await
        .expect("the held poll outlasted the client's request timeout")
        .unwrap();
    let took = began.elapsed();
    assert!(
        matches!(answered.payload, TaskPayload::Working),
        "{answered:?}"
    );
    assert_eq!(answered.task.poll_interval_ms, Some(HELD_POLL_INTERVAL_MS));
    // Held for a while, and well inside the client's timeout, with room for a slow
    // machine and transport.
    assert!(
        took > WAIT && took < CLIENT_TIMEOUT / 2,
        "held for {took:?}"
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shutdown_signal_ends_a_held_poll_at_once() {
    // Claude Code stops its stdio server with SIGTERM as it closes stdin: the held
    // poll is cancelled with the session, not waited for.
    let harness = start_with_tasks().await;
    let (id, pid, mcp_task) = start_as_mcp_task(&harness, "sleep 300").await;
    let held = poll(&harness, &mcp_task);
    assert_held(&harness, &held, &id).await;
    harness.stop.notify_one();
    // Under rmcp's two-second grace for requests in flight at a cancel.
    tokio::time::timeout(Duration::from_millis(1500), harness.server)
        .await
        .expect("the server waited for the held poll before stopping")
        .unwrap()
        .unwrap();
    until_dead(pid).await;
    held.abort();
}
