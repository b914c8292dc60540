//! A task started with `notify_on` that ends before its start has returned: its exit
//! reaches the session only after its follower is announced, so the session holds it
//! for the task's events.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, Capabilities, ExecOptions, ExecOutput, ExecutionContext,
    ExecutionHandle, MockContext, OutputChunk, ReadRange, ReadResult, Result, TaskEntry,
    TaskExitInfo, TaskId,
};
use zidane_tools::{
    BackgroundSinks, TaskEvent, TaskEventSink, TaskEvents, ToolContext, ToolRegistry,
};

/// A mock whose tasks have ended by the time their start returns.
struct EndsAtStart(MockContext);

#[async_trait]
impl ExecutionContext for EndsAtStart {
    fn capabilities(&self) -> Capabilities {
        self.0.capabilities()
    }

    async fn create_handle(&self) -> Result<ExecutionHandle> {
        self.0.create_handle().await
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<()> {
        self.0.destroy(handle).await
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput> {
        self.0.exec(handle, command, options).await
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        self.0.read_file(handle, path, range).await
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        let started = self.0.exec_background(handle, command, options).await?;
        self.0.write_output(started.task_id, b"error: at once\n");
        self.0.finish(started.task_id, 1);
        Ok(started)
    }

    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        self.0.list_background(handle).await
    }

    async fn follow_output(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        offset: u64,
        max: usize,
    ) -> Result<Option<OutputChunk>> {
        self.0.follow_output(handle, task_id, offset, max).await
    }
}

/// What the session heard, in order.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn push(&self, what: String) {
        self.0.lock().unwrap().push(what);
    }

    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl TaskEventSink for Heard {
    fn follow(&self, task_id: TaskId, _patterns: &[String]) {
        self.push(format!("follow {task_id}"));
    }

    fn event(&self, event: TaskEvent) {
        self.push(format!(
            "event {} line {}",
            event.task_id, event.line_number
        ));
    }

    fn drained(&self, task_id: TaskId) {
        self.push(format!("drained {task_id}"));
    }
}

#[tokio::test]
async fn an_exit_before_the_start_returns_waits_for_the_follower() {
    let context = Arc::new(EndsAtStart(MockContext::new()));
    let handle = context.create_handle().await.unwrap();
    let heard = Heard::default();
    let exits = heard.clone();
    let sinks = BackgroundSinks {
        on_exit: Some(Arc::new(move |exit: TaskExitInfo| {
            exits.push(format!("exit {}", exit.task_id));
        })),
        on_event: Some(TaskEvents::new(Arc::new(heard.clone()))),
        ..BackgroundSinks::default()
    };
    let tools = ToolContext::new(context.clone(), handle)
        .with_tasks_dir("/session/tasks")
        .with_sinks(sinks);
    let registry = ToolRegistry::with_default_tools().unwrap();
    let output = registry
        .dispatch(
            &tools,
            "shell",
            json!({ "command": "make", "run_in_background": true, "notify_on": "error" }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !heard.all().contains(&"drained bash_1".to_owned()) {
        assert!(tokio::time::Instant::now() < deadline, "{:?}", heard.all());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let heard = heard.all();
    let at = |what: &str| heard.iter().position(|h| h == what).expect(what);
    assert!(at("follow bash_1") < at("exit bash_1"), "{heard:?}");
    assert_eq!(heard.iter().filter(|h| h.starts_with("exit")).count(), 1);
}
