//! A `read_file` that started before a task's exit does not acknowledge it: the read may
//! have seen a log the task was still writing. The exit lands while the read is in flight
//! (deterministically: a context whose `read_file` reads the log, then ends the task),
//! and the next run notifies it — unless a later read, after the exit, saw the whole log.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use zidane_agent::{Agent, Behavior, HookEvent, ModelResponse, RunOptions, ScriptedModel, Session};
use zidane_context::{
    BackgroundOptions, BackgroundStarted, Capabilities, ExecOptions, ExecOutput, ExecutionContext,
    ExecutionHandle, ExitCallback, MockContext, ReadRange, ReadResult, Result, TaskEntry,
    TaskExitInfo, TaskId,
};

use crate::support::{TASKS, bg, log, notified, tid};

/// A `MockContext` whose next `read_file` ends a task once it has read the file: the
/// exit lands after the read began and before it returns.
struct ExitDuringRead {
    inner: Arc<MockContext>,
    end_on_read: Mutex<Option<TaskId>>,
}

#[async_trait]
impl ExecutionContext for ExitDuringRead {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn create_handle(&self) -> Result<ExecutionHandle> {
        self.inner.create_handle().await
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<()> {
        self.inner.destroy(handle).await
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput> {
        self.inner.exec(handle, command, options).await
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        let read = self.inner.read_file(handle, path, range).await;
        let ending = self.end_on_read.lock().unwrap().take();
        if let Some(task_id) = ending {
            assert!(self.inner.write_output(task_id, b"the last line\n"));
            assert!(self.inner.finish(task_id, 0));
        }
        read
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        self.inner.exec_background(handle, command, options).await
    }

    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        self.inner.kill_background(handle, task_id).await
    }

    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        self.inner.list_background(handle).await
    }

    async fn wait_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Option<TaskExitInfo>> {
        self.inner
            .wait_background(handle, task_id, timeout, cancel)
            .await
    }

    async fn reassign_background_tasks(
        &self,
        from: ExecutionHandle,
        to: ExecutionHandle,
        on_exit: Option<ExitCallback>,
    ) -> Result<Vec<TaskEntry>> {
        self.inner
            .reassign_background_tasks(from, to, on_exit)
            .await
    }
}

struct Race {
    model: ScriptedModel,
    agent: Agent,
    events: Arc<Mutex<Vec<HookEvent>>>,
}

/// Run 1: the model starts `make`, then reads its log while it runs; `make` ends during
/// that read. Then the model makes the `after` calls and stops.
async fn read_racing_the_exit(after: Vec<(&'static str, serde_json::Value)>) -> Race {
    let mock = Arc::new(MockContext::new());
    let context = Arc::new(ExitDuringRead {
        inner: mock.clone(),
        end_on_read: Mutex::new(None),
    });
    let arming = context.clone();
    let mut model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .react(move |_| {
            assert!(is_running(&arming.inner, tid(1)));
            *arming.end_on_read.lock().unwrap() = Some(tid(1));
            ModelResponse::tool_use("early", "read_file", json!({ "path": log(1) }))
        });
    for (n, (name, input)) in after.into_iter().enumerate() {
        model = model.respond(ModelResponse::tool_use(format!("after{n}"), name, input));
    }
    let model = model.text("done for now").text("noted");
    let agent = Agent::builder(Arc::new(model.clone()), context)
        .behavior(Behavior::new().tasks_dir(TASKS))
        .session(Session::new("s1"))
        .build()
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    agent
        .hooks()
        .subscribe(move |event| sink.lock().unwrap().push(event.clone()));

    let first = agent.run(RunOptions::new("build")).await.unwrap();
    assert!(first.notified.is_empty());
    assert!(
        !is_running(&mock, tid(1)),
        "the exit landed during the read"
    );
    let early = &model.requests()[2];
    let (_, text, is_error) = early.tool_results()[0];
    assert!(!is_error);
    assert!(
        !text.contains("the last line"),
        "the early read saw the log before the exit: {text}"
    );
    Race {
        model,
        agent,
        events,
    }
}

fn is_running(mock: &MockContext, task_id: TaskId) -> bool {
    mock.task(task_id)
        .is_some_and(|entry| !entry.status().is_terminal())
}

/// What each `read_file` call suppressed, in call order.
fn read_suppressions(h: &Race) -> Vec<Vec<TaskId>> {
    h.events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            HookEvent::ToolAfter(after) if after.name == "read_file" => {
                Some(after.suppressed.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_read_that_started_before_the_exit_does_not_suppress_it() {
    let h = read_racing_the_exit(vec![]).await;
    assert_eq!(read_suppressions(&h), [Vec::<TaskId>::new()]);
    let pending: Vec<TaskId> = h.agent.pending_exits().iter().map(|e| e.task_id).collect();
    assert_eq!(pending, [tid(1)], "the exit is still news");

    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(notified(&woken), ["bash_1"]);
    assert!(!h.agent.has_pending_task_notifications());
}

#[tokio::test]
async fn a_second_read_after_the_exit_does_suppress_it() {
    let h = read_racing_the_exit(vec![("read_file", json!({ "path": log(1) }))]).await;
    assert_eq!(read_suppressions(&h), [vec![], vec![tid(1)]]);
    let late = &h.model.requests()[3];
    assert!(
        late.tool_results()[0].1.contains("the last line"),
        "the late read saw the whole log"
    );
    assert!(!h.agent.has_pending_task_notifications());
    let next = h.agent.run(RunOptions::new("anything new?")).await.unwrap();
    assert!(next.notified.is_empty());
}
