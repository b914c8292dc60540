//! A state-machine property test of delivery: the queue, the latch and suppression.
//!
//! Random sequences of operations run against an agent on a `MockContext` with a
//! `ScriptedModel` that reacts to its requests: runs (with a prompt, or drain-only) in
//! which the model starts background tasks, kills them, waits for them (timing out, or
//! returning the exit) and reads their logs (before or after the exit); tasks ending
//! between runs or while the model thinks; and rebuilds of the agent from its stored
//! session, on the same handle (a durable host restarting: the latch comes from the
//! history, exits of the old life only reach the new one through the pull sweep) or on a
//! fresh one.
//!
//! A reference model tracks what the model should know. After every operation:
//! - every run notifies exactly the tasks that ended and that the model neither was told
//!   about nor learned itself (a `shell_kill` result, a `wait_task` that returned the
//!   exit, a `read_file` of the log after the exit), in completion order: so a task is
//!   never reported before it ended, never after the model learned it, and never lost;
//! - over every turn the model ever received, each task has at most one
//!   `<task-notification>` block, and none after a kill or a completed wait of it;
//! - `pending_exits` / `has_pending_task_notifications` are exactly the exits of this
//!   agent's life that the model does not know yet; a drain-only run is legal exactly
//!   when something is deliverable;
//! - the stored session equals the live one.
//!
//! At the end every task still running ends and a last drain runs: every task not
//! forfeited (see [`Op::Rebuild`]) is then known to the model, exactly once.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;
use tempfile::TempDir;
use zidane_agent::{
    Agent, AgentError, ModelRequest, ModelResponse, RunOptions, RunOutcome, ScriptStep,
    ScriptedModel, Session, SessionStore,
};
use zidane_context::{ExecutionContext, ExecutionHandle, MockCall, MockContext, Signal, TaskId};
use zidane_wire::{ContentBlock, Role, Turn, WireBlock};

use crate::support::{bg, log, stored_agent};

const SESSION: &str = "s1";

/// Task indexes, resolved modulo the tasks started so far.
const INDEX: Range<usize> = 0..8;

#[derive(Debug, Clone, Copy)]
enum End {
    Finish(i32),
    Terminate,
}

#[derive(Debug, Clone, Copy)]
enum Call {
    /// `shell` with `run_in_background: true`.
    Start,
    Kill(usize),
    /// `wait_task` with a 1 ms timeout: times out on a running task.
    WaitTimeout(usize),
    /// `wait_task` with a long timeout; a running task ends during the wait.
    WaitExit(usize),
    Read(usize),
}

/// One model response: optionally a task ends while the model thinks (after the run's
/// drain), then the model calls a tool.
#[derive(Debug, Clone, Copy)]
struct Step {
    end_first: Option<(Target, End)>,
    call: Call,
}

/// The task a step ends first.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// The one the step's call is about (an exit landing just before the model asks).
    Same,
    Index(usize),
}

#[derive(Debug, Clone)]
enum Op {
    /// A task ends between runs.
    End(usize, End),
    /// A run with a prompt, or drain-only; the model makes `steps`, then stops.
    Run { prompt: bool, steps: Vec<Step> },
    /// The agent is rebuilt from its stored session. On the same handle, the old agent
    /// is dropped (a crash): its tasks live on and are found by the pull sweep. On a
    /// fresh handle, the old agent is destroyed and so is its handle: its tasks die, and
    /// the exits it had not delivered are forfeited (a new context life starts empty).
    Rebuild { same_handle: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    Notified,
    Killed,
    Waited,
    Read,
}

#[derive(Debug)]
struct Task {
    id: TaskId,
    /// The agent life that started it (its exits are pushed to that agent only).
    life: usize,
    handle: ExecutionHandle,
    /// Completion order.
    ended: Option<u64>,
    /// How the model first knew the exit.
    known: Option<How>,
    /// Whether the session shows the model knows the exit: a notification block, a
    /// kill, or a completed wait (not a read), at any time.
    in_history: bool,
    forfeited: bool,
}

/// What a tool call of the model should answer, and what the model learns from it.
#[derive(Debug)]
enum Outcome {
    Started(TaskId),
    Learned(usize, How),
    TimedOut,
    ReadRunning,
    Error,
}

#[derive(Debug)]
struct Expected {
    call_id: String,
    outcome: Outcome,
}

#[derive(Debug)]
struct Reference {
    tasks: Vec<Task>,
    life: usize,
    handle: ExecutionHandle,
    ends: u64,
    /// The calls of the run in flight.
    calls: Vec<Expected>,
}

impl Reference {
    fn resolve(&self, index: usize) -> Option<usize> {
        (!self.tasks.is_empty()).then(|| index % self.tasks.len())
    }

    fn is_running(&self, i: usize) -> bool {
        self.tasks[i].ended.is_none()
    }

    fn mark_ended(&mut self, i: usize) {
        assert!(
            self.tasks[i].ended.is_none(),
            "{} ended twice",
            self.tasks[i].id
        );
        self.ends += 1;
        self.tasks[i].ended = Some(self.ends);
    }

    /// Ends task `i` in the context (if it still runs) and here.
    fn end(&mut self, context: &MockContext, i: usize, end: End) {
        let id = self.tasks[i].id;
        let running = self.is_running(i);
        if running {
            context.write_output(id, format!("{id} output\n").as_bytes());
        }
        let ended = match end {
            End::Finish(code) => context.finish(id, code),
            End::Terminate => context.terminate(id, Signal::TERM),
        };
        assert_eq!(
            ended, running,
            "{id}: the context and the reference disagree"
        );
        if running {
            self.mark_ended(i);
        }
    }

    /// Tasks whose exit the next run must deliver, in completion order: the exits pushed
    /// to this agent, then the ones only the sweep finds, by end time.
    fn deliverable(&self, context: &MockContext) -> Vec<TaskId> {
        let unknown = |t: &&Task| {
            t.handle == self.handle && t.ended.is_some() && t.known.is_none() && !t.forfeited
        };
        let mut pushed: Vec<&Task> = self
            .tasks
            .iter()
            .filter(unknown)
            .filter(|t| t.life == self.life)
            .collect();
        pushed.sort_by_key(|t| t.ended);
        let mut pulled: Vec<(chrono::DateTime<chrono::Utc>, TaskId)> = self
            .tasks
            .iter()
            .filter(unknown)
            .filter(|t| t.life != self.life)
            .map(|t| (context.task(t.id).unwrap().ended_at().unwrap(), t.id))
            .collect();
        pulled.sort();
        pushed
            .into_iter()
            .map(|t| t.id)
            .chain(pulled.into_iter().map(|(_, id)| id))
            .collect()
    }

    /// The exits queued in this agent: pushed to it and not known.
    fn pending(&self) -> Vec<TaskId> {
        let mut pending: Vec<&Task> = self
            .tasks
            .iter()
            .filter(|t| t.life == self.life && t.ended.is_some() && t.known.is_none())
            .collect();
        pending.sort_by_key(|t| t.ended);
        pending.into_iter().map(|t| t.id).collect()
    }

    fn index_of(&self, id: TaskId) -> usize {
        self.tasks.iter().position(|t| t.id == id).unwrap()
    }
}

struct World {
    runtime: tokio::runtime::Runtime,
    _dir: TempDir,
    store: SessionStore,
    context: Arc<MockContext>,
    model: ScriptedModel,
    agent: Agent,
    reference: Arc<Mutex<Reference>>,
    runs: usize,
}

impl World {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let context = Arc::new(MockContext::new());
        let handle = runtime.block_on(context.create_handle()).unwrap();
        let model = ScriptedModel::new();
        let agent = stored_agent(
            model.clone(),
            &context,
            handle,
            &store,
            Session::new(SESSION),
        );
        Self {
            runtime,
            _dir: dir,
            store,
            context,
            model,
            agent,
            reference: Arc::new(Mutex::new(Reference {
                tasks: Vec::new(),
                life: 0,
                handle,
                ends: 0,
                calls: Vec::new(),
            })),
            runs: 0,
        }
    }

    fn reference(&self) -> MutexGuard<'_, Reference> {
        self.reference.lock().unwrap()
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::End(index, end) => {
                let mut reference = self.reference();
                if let Some(i) = reference.resolve(*index) {
                    reference.end(&self.context, i, *end);
                }
            }
            Op::Run { prompt, steps } => self.run(*prompt, steps),
            Op::Rebuild { same_handle } => self.rebuild(*same_handle),
        }
        self.check();
    }

    fn run(&mut self, prompt: bool, steps: &[Step]) {
        self.runs += 1;
        let expected = self.reference().deliverable(&self.context);
        let options = if prompt {
            RunOptions::new(format!("prompt {}", self.runs))
        } else {
            RunOptions::drain()
        };
        if !prompt && expected.is_empty() {
            let result = self.runtime.block_on(self.agent.run(options));
            assert!(
                matches!(result, Err(AgentError::NothingPending)),
                "a drain-only run with nothing to deliver: {result:?}"
            );
            return;
        }
        for (n, step) in steps.iter().enumerate() {
            let call_id = format!("r{}s{n}", self.runs);
            self.model.push(ScriptStep::React(Arc::new(reaction(
                Arc::clone(&self.reference),
                Arc::clone(&self.context),
                *step,
                call_id,
            ))));
        }
        self.model
            .push(ScriptStep::Respond(ModelResponse::text("ok")));
        let outcome = self.runtime.block_on(self.agent.run(options)).unwrap();
        assert_eq!(self.model.remaining(), 0, "the run played the whole script");

        let notified: Vec<TaskId> = outcome.notified.iter().map(|e| e.task_id).collect();
        assert_eq!(notified, expected, "run {}: notified", self.runs);
        assert_eq!(
            seeded_notifications(&outcome),
            expected,
            "run {}: the seeded turn's blocks",
            self.runs
        );
        let mut reference = self.reference();
        for id in expected {
            let i = reference.index_of(id);
            reference.tasks[i].known = Some(How::Notified);
            reference.tasks[i].in_history = true;
        }
        let results = tool_results(&outcome.turns);
        let calls = std::mem::take(&mut reference.calls);
        assert_eq!(calls.len(), steps.len());
        for call in calls {
            let (text, is_error) = results
                .get(call.call_id.as_str())
                .unwrap_or_else(|| panic!("no result for {}", call.call_id));
            let what = format!("{} → {text:?} (error: {is_error})", call.call_id);
            match call.outcome {
                Outcome::Started(id) => {
                    assert!(
                        !is_error && text.starts_with(&format!("Started {id} ")),
                        "{what}"
                    );
                }
                Outcome::Learned(i, how) => {
                    assert!(!is_error, "{what}");
                    let id = reference.tasks[i].id;
                    match how {
                        How::Killed => {
                            assert!(text.starts_with(&format!("Killed {id}:")), "{what}");
                        }
                        How::Waited => assert!(!text.starts_with("wait_task: timed out"), "{what}"),
                        How::Read | How::Notified => {}
                    }
                    if reference.tasks[i].known.is_none() {
                        reference.tasks[i].known = Some(how);
                    }
                    if how != How::Read {
                        reference.tasks[i].in_history = true;
                    }
                }
                Outcome::TimedOut => {
                    assert!(
                        !is_error && text.starts_with("wait_task: timed out"),
                        "{what}"
                    );
                }
                Outcome::ReadRunning => assert!(!is_error, "{what}"),
                Outcome::Error => assert!(is_error, "{what}"),
            }
        }
    }

    fn rebuild(&mut self, same_handle: bool) {
        let session = self.store.load(SESSION).unwrap();
        assert_eq!(
            session,
            self.agent.session(),
            "the stored session is the live one"
        );
        let mut reference = self.reference.lock().unwrap();
        let handle = if same_handle {
            reference.handle
        } else {
            let old = reference.handle;
            self.runtime.block_on(self.agent.destroy()).unwrap();
            // The injected handle is the host's: it goes with the old context life.
            self.runtime.block_on(self.context.destroy(old)).unwrap();
            for i in 0..reference.tasks.len() {
                if reference.tasks[i].handle != old {
                    continue;
                }
                if reference.is_running(i) {
                    reference.mark_ended(i);
                }
                if reference.tasks[i].known.is_none() {
                    reference.tasks[i].forfeited = true;
                }
            }
            self.runtime.block_on(self.context.create_handle()).unwrap()
        };
        reference.life += 1;
        reference.handle = handle;
        drop(reference);
        // The old host is gone (crashed, or destroyed above): its session lock with it.
        let placeholder = Agent::builder(Arc::new(self.model.clone()), self.context.clone())
            .build()
            .unwrap();
        drop(std::mem::replace(&mut self.agent, placeholder));
        self.agent = stored_agent(
            self.model.clone(),
            &self.context,
            handle,
            &self.store,
            session,
        );
    }

    /// The invariants that hold after every operation.
    fn check(&self) {
        let session = self.agent.session();
        assert_eq!(self.store.load(SESSION).unwrap(), session, "stored = live");
        // Everything the model ever received is a prefix of the session.
        for request in self.model.requests() {
            assert!(
                session.turns.starts_with(&request.turns),
                "the session was rewritten"
            );
        }
        let reference = self.reference();
        let mut blocks: HashMap<TaskId, usize> = HashMap::new();
        let mut acknowledged: HashMap<TaskId, usize> = HashMap::new();
        let mut calls: HashMap<&str, (&str, &serde_json::Value)> = HashMap::new();
        for (at, turn) in session.turns.iter().enumerate() {
            for block in &turn.content {
                match block {
                    ContentBlock::Text { text } if turn.role == Role::User => {
                        for wire in zidane_wire::parse(text).unwrap() {
                            let WireBlock::Notification(n) = wire else {
                                continue;
                            };
                            *blocks.entry(n.task_id).or_default() += 1;
                            assert!(
                                !acknowledged.contains_key(&n.task_id),
                                "{} notified after the model killed or waited for it",
                                n.task_id
                            );
                            let i = reference.index_of(n.task_id);
                            assert!(reference.tasks[i].ended.is_some(), "notified, not ended");
                        }
                    }
                    ContentBlock::ToolUse { id, name, input } => {
                        calls.insert(id, (name, input));
                    }
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error: false,
                    } => {
                        let (name, input) = calls[tool_use_id.as_str()];
                        let learned = (name == "shell_kill")
                            || (name == "wait_task"
                                && !content.starts_with("wait_task: timed out"));
                        if learned {
                            let id = TaskId::parse(input["task_id"].as_str().unwrap()).unwrap();
                            acknowledged.entry(id).or_insert(at);
                        }
                    }
                    _ => {}
                }
            }
        }
        for (id, count) in &blocks {
            assert_eq!(*count, 1, "{id} notified {count} times");
            let i = reference.index_of(*id);
            assert_eq!(reference.tasks[i].known, Some(How::Notified), "{id}");
        }
        for task in &reference.tasks {
            if task.known == Some(How::Notified) {
                assert!(blocks.contains_key(&task.id), "{} has no block", task.id);
            }
        }
        let pending: Vec<TaskId> = self
            .agent
            .pending_exits()
            .iter()
            .map(|e| e.task_id)
            .collect();
        assert_eq!(pending, reference.pending(), "pending exits");
        assert_eq!(
            self.agent.has_pending_task_notifications(),
            !pending.is_empty()
        );
    }

    /// Every task still running ends; a last drain delivers what is left; then the model
    /// knows every task that was not forfeited.
    fn finish(&mut self) {
        {
            let mut reference = self.reference();
            for i in 0..reference.tasks.len() {
                if reference.tasks[i].handle == reference.handle && reference.is_running(i) {
                    reference.end(&self.context, i, End::Finish(0));
                }
            }
        }
        self.apply(&Op::Run {
            prompt: false,
            steps: Vec::new(),
        });
        let reference = self.reference();
        for task in &reference.tasks {
            assert!(
                task.forfeited || task.known.is_some(),
                "{} ended and the model was never told",
                task.id
            );
        }
    }
}

/// The model's response for `step`: it ends a task first if the step says so, then
/// calls its tool, and tells the reference what the call should answer.
fn reaction(
    reference: Arc<Mutex<Reference>>,
    context: Arc<MockContext>,
    step: Step,
    call_id: String,
) -> impl Fn(&ModelRequest) -> ModelResponse + Send + Sync + 'static {
    move |_| {
        let mut r = reference.lock().unwrap();
        if let Some((target, end)) = step.end_first {
            let index = match (target, step.call) {
                (Target::Index(index), _)
                | (
                    Target::Same,
                    Call::Kill(index)
                    | Call::WaitTimeout(index)
                    | Call::WaitExit(index)
                    | Call::Read(index),
                ) => Some(index),
                (Target::Same, Call::Start) => None,
            };
            if let Some(i) = index.and_then(|index| r.resolve(index)) {
                r.end(&context, i, end);
            }
        }
        let target = match step.call {
            Call::Start => None,
            Call::Kill(index)
            | Call::WaitTimeout(index)
            | Call::WaitExit(index)
            | Call::Read(index) => r.resolve(index),
        };
        let (name, input, outcome) = match (step.call, target) {
            (Call::Start, _) | (_, None) => {
                let id = TaskId::from_number(r.tasks.len() as u64 + 1);
                let (life, handle) = (r.life, r.handle);
                r.tasks.push(Task {
                    id,
                    life,
                    handle,
                    ended: None,
                    known: None,
                    in_history: false,
                    forfeited: false,
                });
                ("shell", bg(&format!("job {id}")), Outcome::Started(id))
            }
            (Call::Read(_), Some(i)) => {
                let path = log(r.tasks[i].id.number());
                let outcome = if r.tasks[i].ended.is_some() && r.tasks[i].handle == r.handle {
                    Outcome::Learned(i, How::Read)
                } else {
                    Outcome::ReadRunning
                };
                ("read_file", json!({ "path": path }), outcome)
            }
            (call, Some(i)) => {
                let task = &r.tasks[i];
                let id = task.id;
                let ours = task.handle == r.handle;
                let running = task.ended.is_none();
                match call {
                    Call::Kill(_) => {
                        let outcome = if ours {
                            if running {
                                r.mark_ended(i);
                            }
                            Outcome::Learned(i, How::Killed)
                        } else {
                            Outcome::Error
                        };
                        ("shell_kill", json!({ "task_id": id.to_string() }), outcome)
                    }
                    Call::WaitTimeout(_) => {
                        let outcome = match (ours, running) {
                            (false, _) => Outcome::Error,
                            (true, true) => Outcome::TimedOut,
                            (true, false) => Outcome::Learned(i, How::Waited),
                        };
                        let input = json!({ "task_id": id.to_string(), "timeout_ms": 1 });
                        ("wait_task", input, outcome)
                    }
                    _ => {
                        let outcome = if ours {
                            if running {
                                end_during_wait(Arc::clone(&context), id);
                                r.mark_ended(i);
                            }
                            Outcome::Learned(i, How::Waited)
                        } else {
                            Outcome::Error
                        };
                        let input = json!({ "task_id": id.to_string(), "timeout_ms": 5_000 });
                        ("wait_task", input, outcome)
                    }
                }
            }
        };
        r.calls.push(Expected {
            call_id: call_id.clone(),
            outcome,
        });
        ModelResponse::tool_use(call_id.clone(), name, input)
    }
}

/// Ends `id` once a `wait_background` of it is in flight (bounded: after 5 s it gives
/// up, and the wait times out, which the test reports).
fn end_during_wait(context: Arc<MockContext>, id: TaskId) {
    let waits = move |context: &MockContext| {
        context
            .calls()
            .iter()
            .filter(|call| matches!(call, MockCall::WaitBackground(_, t) if *t == id))
            .count()
    };
    let before = waits(&context);
    tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(5);
        while waits(&context) == before && Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        context.write_output(id, b"done\n");
        context.finish(id, 0);
    });
}

/// The task ids of the notification blocks at the head of the run's seeded turn.
fn seeded_notifications(outcome: &RunOutcome) -> Vec<TaskId> {
    let seeded = &outcome.turns[0];
    assert_eq!(seeded.role, Role::User);
    seeded
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .flat_map(|text| zidane_wire::parse(text).unwrap())
        .map(|block| match block {
            WireBlock::Notification(n) => n.task_id,
            WireBlock::Stall(s) => panic!("unexpected stall of {}", s.task_id),
            WireBlock::Event(e) => panic!("unexpected event of {}", e.task_id),
        })
        .collect()
}

/// `call id → (text, is_error)` of the tool results in `turns`.
fn tool_results(turns: &[Turn]) -> HashMap<&str, (&str, bool)> {
    turns
        .iter()
        .flat_map(|turn| &turn.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((tool_use_id.as_str(), (content.as_str(), *is_error))),
            _ => None,
        })
        .collect()
}

fn end_strategy() -> impl Strategy<Value = End> {
    prop_oneof![
        3 => (0..3i32).prop_map(End::Finish),
        1 => Just(End::Terminate),
    ]
}

fn step_strategy() -> impl Strategy<Value = Step> {
    let call = prop_oneof![
        3 => Just(Call::Start),
        2 => INDEX.prop_map(Call::Kill),
        2 => INDEX.prop_map(Call::WaitTimeout),
        2 => INDEX.prop_map(Call::WaitExit),
        3 => INDEX.prop_map(Call::Read),
    ];
    let target = prop_oneof![Just(Target::Same), INDEX.prop_map(Target::Index),];
    (
        proptest::option::weighted(0.5, (target, end_strategy())),
        call,
    )
        .prop_map(|(end_first, call)| Step { end_first, call })
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (INDEX, end_strategy()).prop_map(|(i, end)| Op::End(i, end)),
        5 => (any::<bool>(), proptest::collection::vec(step_strategy(), 0..=3))
            .prop_map(|(prompt, steps)| Op::Run { prompt, steps }),
        1 => any::<bool>().prop_map(|same_handle| Op::Rebuild { same_handle }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_ended_task_is_reported_exactly_once(
        ops in proptest::collection::vec(op_strategy(), 1..=12)
    ) {
        let mut world = World::new();
        // Two tasks to begin with, so most sequences have something to end.
        let start = Step { end_first: None, call: Call::Start };
        world.apply(&Op::Run { prompt: true, steps: vec![start, start] });
        for op in &ops {
            world.apply(op);
        }
        world.finish();
    }
}
