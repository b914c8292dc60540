//! Pull delivery: the sweep at run start finds exits nobody pushed, never twice, and the
//! latch survives a reload.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use zidane_agent::{
    Agent, Behavior, ReconcileJournal, RunOptions, ScriptedModel, Session, SessionStore,
};
use zidane_context::{
    BackgroundOptions, ContextError, ExecutionContext, ExecutionHandle, MockContext, TaskEntry,
};

use crate::support::{TASKS, bg, harness, harness_with, notified, tid};

#[tokio::test]
async fn the_sweep_delivers_an_exit_that_was_never_pushed() {
    let model = ScriptedModel::new().text("seen").text("again");
    let h = harness(model);
    let handle = h.agent.handle().await.unwrap();
    // Started with no on_exit, as a durable context that cannot push would record it.
    let started = h
        .context
        .exec_background(handle, "train.py", BackgroundOptions::new(TASKS))
        .await
        .unwrap();
    h.context.finish(started.task_id, 0);
    assert!(
        !h.agent.has_pending_task_notifications(),
        "nothing was pushed"
    );
    let run = h.agent.run(RunOptions::new("status?")).await.unwrap();
    assert_eq!(notified(&run), ["bash_1"]);
    let again = h.agent.run(RunOptions::new("again?")).await.unwrap();
    assert!(again.notified.is_empty(), "the latch stops a second sweep");
}

#[tokio::test]
async fn a_pushed_exit_that_the_sweep_also_sees_is_notified_once() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .text("started")
        .text("seen");
    let h = harness(model);
    h.agent.run(RunOptions::new("go")).await.unwrap();
    h.context.finish(tid(1), 0);
    let run = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(notified(&run), ["bash_1"]);
}

struct CountingJournal(AtomicUsize);

#[async_trait]
impl ReconcileJournal for CountingJournal {
    async fn list_background(
        &self,
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
    ) -> Result<Vec<TaskEntry>, ContextError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        context.list_background(handle).await
    }
}

#[tokio::test]
async fn the_sweep_goes_through_the_journal_seam() {
    let journal = Arc::new(CountingJournal(AtomicUsize::new(0)));
    let model = ScriptedModel::new().text("one").text("two");
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.journal(journal.clone())
    });
    h.agent.run(RunOptions::new("a")).await.unwrap();
    h.agent.run(RunOptions::new("b")).await.unwrap();
    assert_eq!(
        journal.0.load(Ordering::SeqCst),
        2,
        "one poll per run start"
    );
}

#[tokio::test]
async fn the_latch_is_rebuilt_from_a_reloaded_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let context = Arc::new(MockContext::new());
    let handle = context.create_handle().await.unwrap();
    let model = ScriptedModel::new()
        .respond(
            zidane_agent::ModelResponse::tool_use("a", "shell", bg("one"))
                .with_tool_use("b", "shell", bg("two"))
                .with_tool_use("c", "shell", bg("three")),
        )
        .text("started three")
        .react(|_| {
            zidane_agent::ModelResponse::tool_use(
                "k",
                "shell_kill",
                serde_json::json!({ "task_id": "bash_2" }),
            )
        })
        .text("bash_1 noted, bash_2 killed");
    let first = Agent::builder(Arc::new(model), context.clone())
        .handle(handle)
        .store(store.clone())
        .session(Session::new("s1"))
        .build()
        .unwrap();
    first.run(RunOptions::new("go")).await.unwrap();
    context.finish(tid(1), 0);
    let told = first.run(RunOptions::new("kill two")).await.unwrap();
    assert_eq!(notified(&told), ["bash_1"]);
    context.finish(tid(3), 0);
    // The host restarts: same context and handle (a durable context), stored session.
    drop(first);

    let model = ScriptedModel::new().text("only three is news");
    let second = Agent::builder(Arc::new(model), context.clone())
        .handle(handle)
        .store(store.clone())
        .session(store.load("s1").unwrap())
        .behavior(Behavior::new())
        .build()
        .unwrap();
    assert!(!second.has_pending_task_notifications());
    let run = second.run(RunOptions::new("what is new?")).await.unwrap();
    assert_eq!(
        notified(&run),
        ["bash_3"],
        "bash_1 was notified and bash_2 killed in the stored history"
    );
}
