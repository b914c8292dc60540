//! A log that could not be written reaches the model: with a task's log on a full file
//! system (a real 2 MiB tmpfs, mounted for the test; it needs root, and says why it
//! skips elsewhere), the exit and the `<task-notification>` of the next run say how
//! much output was lost and why.

use std::sync::Arc;

use tokio::sync::mpsc;
use zidane::prelude::*;
use zidane_test_support::Tmpfs;

use super::support::{WAIT, bg, texts_of_last_user_turn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_reaches_the_model_in_the_notification() {
    let Some(tmpfs) = Tmpfs::mount("2m") else {
        return;
    };
    let user_dir = tempfile::tempdir().unwrap();
    let script = ScriptedModel::new()
        .tool_call("shell", bg("yes 0123456789abcdef | head -c 10000000"))
        .text("started")
        .text("seen");
    let agent = zidane::local_agent(Arc::new(script.clone()), user_dir.path())
        .session_id("full")
        .sweep_orphans(false)
        .behavior(Behavior::new().tasks_dir(tmpfs.path().join("tasks")))
        .build()
        .unwrap();
    let (exit_tx, mut exits) = mpsc::unbounded_channel();
    agent.hooks().subscribe(move |event| {
        if let HookEvent::BackgroundExit(exit) = event {
            let _ = exit_tx.send(exit.clone());
        }
    });
    agent.run(RunOptions::new("fill it")).await.unwrap();
    let exit = tokio::time::timeout(WAIT, exits.recv())
        .await
        .unwrap()
        .unwrap();
    let failure = exit
        .log_write_failure
        .clone()
        .expect("the exit says the log is incomplete");
    assert_eq!(failure.error, "No space left on device (os error 28)");
    assert!(failure.bytes_dropped > 5_000_000, "{failure:?}");

    let outcome = agent.run(RunOptions::new("done?")).await.unwrap();
    assert_eq!(outcome.notified, vec![exit]);
    let texts = texts_of_last_user_turn(&script.last_request().unwrap());
    let block = &texts[0];
    assert!(
        block.contains(&format!(
            "— log incomplete: {} bytes not written (No space left on device (os error 28))</summary>\n\
             <log-write-failed>{} bytes not written: No space left on device (os error 28)</log-write-failed>\n\
             </task-notification>",
            failure.bytes_dropped, failure.bytes_dropped
        )),
        "{block}"
    );
    agent.destroy().await.unwrap();
}
