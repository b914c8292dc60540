//! A full disk does not swallow a notification: the exit stays pending until the turn
//! that carries it is saved, and then opens the new turn.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use zidane_agent::{
    Agent, AgentError, HookEvent, ModelResponse, RunOptions, ScriptedModel, Session, SessionStore,
};
use zidane_process::ProcessContext;
use zidane_test_support::Tmpfs;
use zidane_wire::{ContentBlock, Role};

use crate::support::WAIT;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_leaves_the_notification_pending_until_a_turn_carrying_it_is_saved() {
    // Private: the store refuses a root others can write to.
    let Some(tmpfs) = Tmpfs::mount_private("2m") else {
        return;
    };
    let store = SessionStore::new(tmpfs.path());
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": "head -c 10000000 /dev/zero | tr '\\0' a; echo done", "run_in_background": true }),
        )
        .text("Writing in the background.")
        .react(|request| {
            let notifications = request.notifications();
            assert_eq!(notifications.len(), 1, "{request:?}");
            ModelResponse::text(format!("{} ended", notifications[0].task_id))
        });
    let context = Arc::new(ProcessContext::new());
    let agent = Agent::builder(Arc::new(model), context)
        .store(store.clone())
        .session(Session::new("full"))
        .build()
        .unwrap();
    let (ended_tx, ended_rx) = tokio::sync::oneshot::channel();
    let ended_tx = std::sync::Mutex::new(Some(ended_tx));
    agent.hooks().subscribe(move |event| {
        if let HookEvent::BackgroundExit(exit) = event
            && let Some(tx) = ended_tx.lock().unwrap().take()
        {
            let _ = tx.send(exit.output_path.clone());
        }
    });

    agent.run(RunOptions::new("fill the disk")).await.unwrap();
    let log: PathBuf = tokio::time::timeout(WAIT, ended_rx)
        .await
        .expect("the task ends")
        .unwrap();
    assert!(agent.has_pending_task_notifications());
    let turns_before = agent.session().turns.len();

    // The log took the whole disk: the turn that would carry the exit cannot be saved.
    let error = agent.run(RunOptions::drain()).await.unwrap_err();
    match &error {
        AgentError::SessionIo {
            path,
            cause: source,
        } => {
            assert!(
                path.starts_with(store.session_dir("full").unwrap()),
                "{path:?}"
            );
            assert_eq!(source.raw_os_error(), Some(libc_enospc()), "{source}");
        }
        other => panic!("expected SessionIo, got {other:?}"),
    }
    assert!(agent.has_pending_task_notifications(), "still pending");
    assert_eq!(
        agent.session().turns.len(),
        turns_before,
        "the turn was not kept"
    );
    assert_eq!(store.load("full").unwrap(), agent.session());

    // Space comes back: the next run delivers the exit at the head of its new turn.
    std::fs::remove_file(&log).unwrap();
    let outcome = agent.run(RunOptions::new("what happened?")).await.unwrap();
    assert_eq!(outcome.text, "bash_1 ended");
    assert_eq!(outcome.notified.len(), 1);
    let seeded = &agent.session().turns[turns_before];
    assert_eq!(seeded.role, Role::User);
    let ContentBlock::Text { text } = &seeded.content[0] else {
        panic!("{seeded:?}")
    };
    assert!(text.starts_with("<task-notification>"), "{text}");
    assert!(!agent.has_pending_task_notifications());
    assert_eq!(store.load("full").unwrap(), agent.session());
    agent.destroy().await.unwrap();
}

fn libc_enospc() -> i32 {
    nix::errno::Errno::ENOSPC as i32
}
