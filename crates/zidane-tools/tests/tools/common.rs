//! Shared set-up: a mock-backed `ToolContext`, and one way to show a `ToolOutput`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use zidane_context::TaskId;
use zidane_context::{
    BackgroundStarted, DetachedTasks, ExecutionContext, MockCall, MockContext, StallInfo,
    TaskExitInfo,
};
use zidane_tools::{
    BackgroundSinks, TaskEvent, TaskEventSink, TaskEvents, ToolContext, ToolOutput, ToolRegistry,
};

/// The tasks dir every mock test uses.
pub const TASKS_DIR: &str = "/session/tasks";

/// What the sinks of a [`Harness`] received.
#[derive(Default)]
pub struct Events {
    pub starts: Vec<(BackgroundStarted, String)>,
    pub exits: Vec<TaskExitInfo>,
    pub stalls: Vec<StallInfo>,
    /// What the task event sink heard, in order: `follow …`, `event …`, `drained …`.
    pub task_events: Vec<String>,
    pub lines: Vec<TaskEvent>,
}

/// A task event sink that records into [`Events`].
struct Recorder(Arc<Mutex<Events>>);

impl TaskEventSink for Recorder {
    fn follow(&self, task_id: TaskId, patterns: &[String]) {
        let mut events = self.0.lock().unwrap();
        events
            .task_events
            .push(format!("follow {task_id} {patterns:?}"));
    }

    fn event(&self, event: TaskEvent) {
        let mut events = self.0.lock().unwrap();
        events.task_events.push(format!(
            "event {} line {}",
            event.task_id, event.line_number
        ));
        events.lines.push(event);
    }

    fn drained(&self, task_id: TaskId) {
        let mut events = self.0.lock().unwrap();
        events.task_events.push(format!("drained {task_id}"));
    }
}

/// A mock context, a handle on it, the default tools, and sinks that record events.
pub struct Harness {
    pub mock: Arc<MockContext>,
    pub context: ToolContext,
    pub registry: ToolRegistry,
    pub events: Arc<Mutex<Events>>,
}

impl Harness {
    /// Background tasks that die with the host, a tasks dir, stable 1.2 s durations.
    pub async fn new() -> Self {
        Self::with(MockContext::new(), Some(TASKS_DIR)).await
    }

    pub async fn with(mock: MockContext, tasks_dir: Option<&str>) -> Self {
        let mock = Arc::new(mock);
        mock.set_task_duration(Some(Duration::from_millis(1200)));
        let handle = mock.create_handle().await.unwrap();
        let events = Arc::new(Mutex::new(Events::default()));
        let (on_start, on_exit, on_stall) = (events.clone(), events.clone(), events.clone());
        let sinks = BackgroundSinks {
            on_start: Some(Arc::new(
                move |started: &BackgroundStarted, command: &str| {
                    on_start
                        .lock()
                        .unwrap()
                        .starts
                        .push((started.clone(), command.to_owned()));
                },
            )),
            on_exit: Some(Arc::new(move |exit| {
                on_exit.lock().unwrap().exits.push(exit);
            })),
            on_stall: Some(Arc::new(move |stall| {
                on_stall.lock().unwrap().stalls.push(stall);
            })),
            on_event: Some(TaskEvents::new(Arc::new(Recorder(events.clone())))),
        };
        let mut context = ToolContext::new(mock.clone(), handle).with_sinks(sinks);
        if let Some(tasks_dir) = tasks_dir {
            context = context.with_tasks_dir(tasks_dir);
        }
        Self {
            mock,
            context,
            registry: ToolRegistry::with_default_tools().unwrap(),
            events,
        }
    }

    pub async fn detached(detached: DetachedTasks) -> Self {
        Self::with(
            MockContext::new().with_detached_tasks(detached),
            Some(TASKS_DIR),
        )
        .await
    }

    pub async fn call(&self, tool: &str, input: Value) -> ToolOutput {
        self.registry.dispatch(&self.context, tool, input).await
    }

    /// Starts a background task through the shell tool and returns its id.
    pub async fn start(&self, command: &str) -> zidane_context::TaskId {
        let output = self
            .call(
                "shell",
                serde_json::json!({ "command": command, "run_in_background": true }),
            )
            .await;
        assert!(!output.is_error, "{}", output.text);
        output.data["task_id"].as_str().unwrap().parse().unwrap()
    }

    /// Whether anything ran: a foreground or background command.
    pub fn ran_anything(&self) -> bool {
        self.mock
            .calls()
            .iter()
            .any(|call| matches!(call, MockCall::Exec(..) | MockCall::ExecBackground(..)))
    }
}

/// The default shell tool's spec under `gate`.
pub fn shell_spec(gate: zidane_tools::BackgroundGate) -> zidane_tools::ToolSpec {
    ToolRegistry::with_default_tools()
        .unwrap()
        .specs(&zidane_tools::SpecView::new(gate))
        .remove(0)
}

/// One text for a whole output: the error flag, the text the model reads, the data.
pub fn show(output: &ToolOutput) -> String {
    format!(
        "is_error: {}\n--- text\n{}\n--- data\n{}",
        output.is_error,
        output.text,
        serde_json::to_string_pretty(&output.data).unwrap()
    )
}
