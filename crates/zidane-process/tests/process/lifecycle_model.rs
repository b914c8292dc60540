//! A property test over whole task lifecycles on real processes: random sequences of
//! starts on two handles (quick, released on cue, long, TERM-ignoring, or printing
//! under an optional output cap), releases, kills, short waits, listings,
//! reassignments from one handle to the other and asks through the wrong handle, then
//! `destroy`. Whatever the interleaving, every task's `on_exit` fires exactly once,
//! into the callback of the handle that owned it when it ended, with its whole (or
//! capped and marked) output in the log by then; every answer about a task agrees with
//! that one exit; a task answers only to its own handle; a task that cannot end on its
//! own ends `Killed`; and nothing of any task outlives `destroy`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use zidane_context::{
    BackgroundStarted, ExecutionContext, Signal, TaskExitInfo, TaskId, TaskLimits, TaskStatus,
};
use zidane_process::ProcessContext;

use crate::support::*;

/// What a started task does.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Exits at once with this code.
    Quick(i32),
    /// Exits with this code once the test releases it.
    Released(i32),
    /// Runs until killed.
    Long,
    /// Ignores SIGTERM: only SIGKILL ends it.
    Stubborn,
    /// Prints this many bytes and exits 0, under this output cap.
    Prints(usize, Option<u64>),
}

impl Kind {
    fn command(self, cue: &str) -> String {
        match self {
            Self::Quick(code) => format!("exit {code}"),
            Self::Released(code) => format!("{}; exit {code}", wait_for_file(cue)),
            Self::Long => "sleep 1000".to_owned(),
            // It says when the trap is set: a TERM before that would still end it.
            Self::Stubborn => "trap '' TERM; echo armed; while :; do sleep 1; done".to_owned(),
            Self::Prints(bytes, _) => format!("head -c {bytes} /dev/zero"),
        }
    }

    /// What its log holds once it exited by itself.
    fn expected_log(self) -> Option<Vec<u8>> {
        let Self::Prints(bytes, cap) = self else {
            return None;
        };
        let printed = bytes as u64;
        let mut log = vec![0u8; usize::try_from(printed.min(cap.unwrap_or(printed))).ok()?];
        if let Some(cap) = cap.filter(|cap| printed > *cap) {
            // The marker gets a line of its own; a kept NUL byte does not end a line.
            let separator = if cap > 0 { "\n" } else { "" };
            let dropped = printed - cap;
            let marker = format!("{separator}<output-truncated bytes-dropped=\"{dropped}\"/>\n");
            log.extend_from_slice(marker.as_bytes());
        }
        Some(log)
    }

    /// Whether it can end without a kill.
    fn ends_by_itself(self) -> bool {
        matches!(self, Self::Quick(_) | Self::Released(_) | Self::Prints(..))
    }
}

/// How many handles the tasks are spread over.
const HANDLES: usize = 2;

/// One step; task indices are taken modulo the number started so far, handle indices
/// modulo [`HANDLES`].
#[derive(Debug, Clone)]
enum Op {
    Start(Kind, usize),
    Release(usize),
    Kill(usize),
    Wait(usize),
    List,
    /// Moves every running task of one handle to another, with that handle's callback.
    Reassign(usize, usize),
    /// Kills and waits for a task through a handle that does not own it.
    AskElsewhere(usize),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => (0i32..3).prop_map(Kind::Quick),
        3 => (0i32..3).prop_map(Kind::Released),
        2 => Just(Kind::Long),
        1 => Just(Kind::Stubborn),
        2 => (0usize..200_000, prop::option::of(0u64..100_000))
            .prop_map(|(bytes, cap)| Kind::Prints(bytes, cap)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (kind(), any::<usize>()).prop_map(|(kind, h)| Op::Start(kind, h)),
        2 => any::<usize>().prop_map(Op::Release),
        2 => any::<usize>().prop_map(Op::Kill),
        2 => any::<usize>().prop_map(Op::Wait),
        1 => Just(Op::List),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Op::Reassign(from, to)),
        1 => any::<usize>().prop_map(Op::AskElsewhere),
    ]
}

/// What the test knows of one task.
struct Model {
    kind: Kind,
    started: BackgroundStarted,
    /// The handle that owns it (an index into the test's handles).
    handle: usize,
    cue: String,
    /// The exit, once any answer (kill, wait) gave it.
    exit: Option<TaskExitInfo>,
}

impl Model {
    fn id(&self) -> TaskId {
        self.started.task_id
    }

    /// Records an answer; every answer about a task must be the same exit.
    fn learn(&mut self, exit: TaskExitInfo) -> Result<(), TestCaseError> {
        prop_assert_eq!(exit.task_id, self.id());
        if let Some(known) = &self.exit {
            prop_assert_eq!(known, &exit, "two different exits for one task");
        }
        self.exit = Some(exit);
        Ok(())
    }
}

/// The exit of a task that did not end by itself: killed by our TERM, or by our KILL
/// when it ignores TERM.
fn check_killed(kind: Kind, exit: &TaskExitInfo) -> Result<(), TestCaseError> {
    if kind.ends_by_itself() {
        // It may have ended on its own first, or died of the kill.
        prop_assert!(matches!(
            exit.status,
            TaskStatus::Exited | TaskStatus::Killed
        ));
        return Ok(());
    }
    prop_assert_eq!(exit.status, TaskStatus::Killed);
    let signal = match kind {
        Kind::Stubborn => Signal::KILL,
        _ => Signal::TERM,
    };
    prop_assert_eq!(exit.signal, Some(signal));
    prop_assert_eq!(exit.exit_code, signal.exit_code());
    Ok(())
}

/// Every `on_exit` so far: at most one per task, into the callback of the handle that
/// owns it, and the one any answer gave.
fn check_exits(exits: &[Exits; HANDLES], tasks: &[Model]) -> Result<(), TestCaseError> {
    let mut fired: HashMap<TaskId, Vec<(usize, TaskExitInfo)>> = HashMap::new();
    let mut logs: HashMap<TaskId, Vec<u8>> = HashMap::new();
    for (handle, exits) in exits.iter().enumerate() {
        for (exit, log) in exits.with_logs() {
            logs.extend(log.map(|log| (exit.task_id, log)));
            fired.entry(exit.task_id).or_default().push((handle, exit));
        }
    }
    for task in tasks {
        let seen = fired.remove(&task.id()).unwrap_or_default();
        prop_assert!(seen.len() <= 1, "on_exit fired {} times", seen.len());
        if let Some((handle, exit)) = seen.first() {
            prop_assert_eq!(*handle, task.handle, "on_exit of another handle fired");
            // Only a task that finished printing has a known log; a kill may cut it short.
            if let Some(expected) = task.kind.expected_log()
                && exit.status == TaskStatus::Exited
            {
                let log = logs.get(&task.id()).expect("logs are read inside on_exit");
                prop_assert!(
                    log == &expected,
                    "log of {:?} is {} bytes",
                    task.kind,
                    log.len()
                );
            }
        }
        if let Some(known) = &task.exit {
            // kill and wait return only after on_exit ran.
            prop_assert_eq!(seen.first().map(|(_, exit)| exit), Some(known));
        }
    }
    prop_assert!(fired.is_empty(), "on_exit for tasks never started");
    Ok(())
}

async fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let f = Fixture::with(ProcessContext::builder().max_background_tasks(64)).await;
    let handles = [f.handle, f.context.create_handle().await.unwrap()];
    // Each log is read inside its task's `on_exit`, to see it complete by then.
    let exits: [Exits; HANDLES] = std::array::from_fn(|_| Exits::snapshotting_logs());
    let mut tasks: Vec<Model> = Vec::new();
    for op in ops {
        let at = |i: usize| (!tasks.is_empty()).then(|| i % tasks.len());
        match op {
            Op::Start(kind, handle) => {
                let handle = handle % HANDLES;
                let cue = format!("cue{}", tasks.len());
                let mut options = exits[handle].attach(f.options());
                if let Kind::Prints(_, Some(cap)) = kind {
                    options = options.limits(TaskLimits::new().max_output_bytes(cap));
                }
                let started = f
                    .context
                    .exec_background(handles[handle], &kind.command(&cue), options)
                    .await
                    .unwrap();
                if matches!(kind, Kind::Stubborn) {
                    log_lines(&started.output_path, 1).await;
                }
                tasks.push(Model {
                    kind,
                    started,
                    handle,
                    cue,
                    exit: None,
                });
            }
            Op::Release(i) => {
                if let Some(i) = at(i) {
                    f.release(&tasks[i].cue);
                }
            }
            Op::Kill(i) => {
                if let Some(i) = at(i) {
                    let handle = handles[tasks[i].handle];
                    let killed = f.context.kill_background(handle, tasks[i].id()).await;
                    let exit = killed.unwrap().expect("a started task is known");
                    if tasks[i].exit.is_none() {
                        check_killed(tasks[i].kind, &exit)?;
                    }
                    tasks[i].learn(exit)?;
                }
            }
            Op::Wait(i) => {
                if let Some(i) = at(i) {
                    let waited = f
                        .context
                        .wait_background(
                            handles[tasks[i].handle],
                            tasks[i].id(),
                            Duration::from_millis(30),
                            Default::default(),
                        )
                        .await
                        .unwrap();
                    match waited {
                        Some(exit) => {
                            if !tasks[i].kind.ends_by_itself() {
                                // Only a kill ends these, and the kill's answer came first.
                                prop_assert!(
                                    tasks[i].exit.is_some(),
                                    "{:?} ended alone",
                                    tasks[i].kind
                                );
                            }
                            tasks[i].learn(exit)?;
                        }
                        // A wait on a task that is known to have ended returns at once.
                        None => prop_assert!(tasks[i].exit.is_none(), "a wait missed an exit"),
                    }
                }
            }
            Op::List => {
                for (h, handle) in handles.iter().enumerate() {
                    let entries = f.context.list_background(*handle).await.unwrap();
                    let owned: Vec<&Model> = tasks.iter().filter(|t| t.handle == h).collect();
                    prop_assert_eq!(entries.len(), owned.len());
                    for task in owned {
                        let entry = entries.iter().find(|e| e.task_id == task.id());
                        let entry = entry.expect("every task is listed by its handle");
                        if let Some(exit) = &task.exit {
                            prop_assert_eq!(entry.status(), exit.status);
                            prop_assert_eq!(entry.exit_code(), Some(exit.exit_code));
                        }
                    }
                }
            }
            Op::Reassign(from, to) => {
                let (from, to) = (from % HANDLES, to % HANDLES);
                let callback = Arc::new(exits[to].callback());
                let moved = f
                    .context
                    .reassign_background_tasks(handles[from], handles[to], Some(callback))
                    .await
                    .unwrap();
                for entry in moved {
                    let task = tasks.iter_mut().find(|t| t.id() == entry.task_id);
                    let task = task.expect("only started tasks move");
                    prop_assert_eq!(task.handle, from, "a task of another handle moved");
                    // A task whose exit was answered has settled, and settled tasks stay.
                    prop_assert!(task.exit.is_none(), "an ended task moved");
                    task.handle = to;
                }
            }
            Op::AskElsewhere(i) => {
                if let Some(i) = at(i) {
                    let elsewhere = handles[(tasks[i].handle + 1) % HANDLES];
                    let id = tasks[i].id();
                    let killed = f.context.kill_background(elsewhere, id).await.unwrap();
                    prop_assert!(killed.is_none(), "killed through a handle not its own");
                    let waited = f
                        .context
                        .wait_background(elsewhere, id, Duration::ZERO, Default::default())
                        .await
                        .unwrap();
                    prop_assert!(waited.is_none(), "waited through a handle not its own");
                }
            }
        }
        check_exits(&exits, &tasks)?;
    }

    for handle in handles {
        f.context.destroy(handle).await.unwrap();
    }
    // destroy returns once every task settled: every on_exit has fired by now.
    let all: Vec<TaskExitInfo> = exits.iter().flat_map(Exits::all).collect();
    prop_assert_eq!(all.len(), tasks.len(), "one on_exit per task after destroy");
    for task in &mut tasks {
        let exit = all
            .iter()
            .find(|e| e.task_id == task.id())
            .cloned()
            .expect("an exit for every task");
        if task.exit.is_none() && !task.kind.ends_by_itself() {
            check_killed(task.kind, &exit)?;
        }
        task.learn(exit)?;
        prop_assert_eq!(group_members(task.started.pid), Vec::<u32>::new());
    }
    check_exits(&exits, &tasks)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_task_ends_once_and_every_answer_agrees(ops in prop::collection::vec(op(), 1..12)) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(run(ops))?;
    }
}
