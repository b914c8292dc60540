//! A `read_file` acknowledgement survives a reload: the session records that the model
//! read an ended task's log, so the pull sweep of an agent rebuilt from it does not
//! notify that exit again (found by the delivery property test).

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{ModelResponse, RunOptions, ScriptedModel, Session, SessionStore};
use zidane_context::{ExecutionContext, MockContext};

use crate::support::{bg, log, notified, stored_agent, tid};

#[tokio::test]
async fn a_read_acknowledgement_survives_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let context = Arc::new(MockContext::new());
    let handle = context.create_handle().await.unwrap();
    let ender = context.clone();
    let model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .react(move |_| {
            // The task ends while the model thinks; the model then reads its log.
            ender.finish(tid(1), 0);
            ModelResponse::tool_use("r", "read_file", json!({ "path": log(1) }))
        })
        .text("make is done, I read its log");
    let first = stored_agent(model, &context, handle, &store, Session::new("s1"));
    first.run(RunOptions::new("build")).await.unwrap();
    assert!(
        !first.has_pending_task_notifications(),
        "the read after the exit acknowledged it"
    );
    // The host restarts: same durable context and handle, the stored session.
    drop(first);

    let model = ScriptedModel::new().text("nothing new");
    let second = stored_agent(model, &context, handle, &store, store.load("s1").unwrap());
    let run = second.run(RunOptions::new("anything new?")).await.unwrap();
    assert_eq!(
        notified(&run),
        Vec::<String>::new(),
        "the model read bash_1's log after it ended: it must not be told again"
    );
}

/// A readiness wait returns while the task runs: it tells the model nothing about the
/// exit, before or after a reload.
#[tokio::test]
async fn a_ready_wait_is_not_an_acknowledgement_after_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let context = Arc::new(MockContext::new());
    let handle = context.create_handle().await.unwrap();
    let writer = context.clone();
    let model = ScriptedModel::new()
        .tool_call("shell", bg("npm run dev"))
        .react(move |_| {
            writer.write_output(tid(1), b"compiling\nready on :3000\n");
            ModelResponse::tool_use(
                "w",
                "wait_task",
                json!({ "task_id": "bash_1", "until": { "pattern": "ready on :(\\d+)" } }),
            )
        })
        .react(|request| {
            let (_, text, is_error) = request.tool_results()[0];
            assert!(
                !is_error && text.starts_with("wait_task: bash_1 is ready"),
                "{text}"
            );
            ModelResponse::text("the server is up")
        });
    let first = stored_agent(model, &context, handle, &store, Session::new("s1"));
    first
        .run(RunOptions::new("start the dev server"))
        .await
        .unwrap();
    drop(first);
    context.finish(tid(1), 1);

    let model = ScriptedModel::new().text("it crashed");
    let second = stored_agent(model, &context, handle, &store, store.load("s1").unwrap());
    let run = second.run(RunOptions::new("anything new?")).await.unwrap();
    assert_eq!(notified(&run), ["bash_1"], "the exit is still news");
}
