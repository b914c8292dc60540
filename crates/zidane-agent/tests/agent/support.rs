//! Shared test helpers: a MockContext-backed agent that records its events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use zidane_agent::{
    Agent, AgentBuilder, Behavior, HookEvent, ScriptedModel, Session, SessionStore,
};
#[cfg(unix)]
use zidane_agent::{WakeReport, WakeTrigger};
use zidane_context::{ExecutionHandle, MockContext, TaskId};
use zidane_wire::StreamEvent;

/// The tasks dir of the mock agents (MockContext never touches the disk).
pub const TASKS: &str = "/home/u/.zidane/sessions/s1/tasks";

/// Longest a test waits for something that should happen.
pub const WAIT: Duration = Duration::from_secs(5);

/// An agent running `model` on `handle` of `context`, from `session`, saved in `store`:
/// what a host builds at its first start and again after a restart.
pub fn stored_agent(
    model: ScriptedModel,
    context: &Arc<MockContext>,
    handle: ExecutionHandle,
    store: &SessionStore,
    session: Session,
) -> Agent {
    Agent::builder(Arc::new(model), context.clone())
        .handle(handle)
        .store(store.clone())
        .behavior(Behavior::new().tasks_dir(TASKS))
        .session(session)
        .build()
        .unwrap()
}

pub struct Harness {
    pub context: Arc<MockContext>,
    pub model: ScriptedModel,
    pub agent: Agent,
    pub events: Arc<Mutex<Vec<HookEvent>>>,
    pub stream: Arc<Mutex<Vec<StreamEvent>>>,
}

impl Harness {
    /// The names of the hook events so far.
    pub fn event_names(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.name().into_owned())
            .collect()
    }

    pub fn stream(&self) -> Vec<StreamEvent> {
        self.stream.lock().unwrap().clone()
    }
}

pub fn harness(model: ScriptedModel) -> Harness {
    harness_with(model, Arc::new(MockContext::new()), |b| b)
}

pub fn harness_with(
    model: ScriptedModel,
    context: Arc<MockContext>,
    configure: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> Harness {
    let builder = Agent::builder(Arc::new(model.clone()), context.clone())
        .behavior(Behavior::new().tasks_dir(TASKS))
        .session(Session::new("s1"));
    let agent = configure(builder).build().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    agent
        .hooks()
        .subscribe(move |event| sink.lock().unwrap().push(event.clone()));
    let stream = Arc::new(Mutex::new(Vec::new()));
    let sink = stream.clone();
    agent
        .hooks()
        .subscribe_stream(move |event| sink.lock().unwrap().push(event.clone()));
    Harness {
        context,
        model,
        agent,
        events,
        stream,
    }
}

/// A background shell call.
pub fn bg(command: &str) -> Value {
    json!({ "command": command, "run_in_background": true })
}

pub fn tid(n: u64) -> TaskId {
    TaskId::from_number(n)
}

/// The log path MockContext gives task `n`.
pub fn log(n: u64) -> String {
    format!("{TASKS}/bash_{n}.mock.log")
}

/// The task ids of the notifications a run delivered.
pub fn notified(outcome: &zidane_agent::RunOutcome) -> Vec<String> {
    outcome
        .notified
        .iter()
        .map(|e| e.task_id.to_string())
        .collect()
}

/// Polls `condition` until it holds, at most [`WAIT`].
pub async fn until(mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not met within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The next report of a run the wake loop started by itself (not a prompt's), within
/// `bound`. Only the real-process suites use it, and they run on Unix.
#[cfg(unix)]
pub async fn next_wake(
    reports: &mut tokio::sync::broadcast::Receiver<WakeReport>,
    bound: Duration,
) -> WakeReport {
    loop {
        let report = tokio::time::timeout(bound, reports.recv())
            .await
            .expect("woken in time")
            .unwrap();
        if report.trigger == WakeTrigger::Wake {
            return report;
        }
    }
}
