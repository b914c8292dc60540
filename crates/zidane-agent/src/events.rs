//! The events queue: matching lines of running tasks (`notify_on`), coalesced per task,
//! and the per-task ledger of what the model was told.
//!
//! Invariants:
//! - a line is queued at most once: a task's lines are queued in increasing line order,
//!   and a line at or before the last one queued (or told, in an earlier life of the
//!   session) is dropped;
//! - a delivery shows at most [`EVENT_LINES_SHOWN`] lines of a task and counts the rest
//!   ("and N more matching lines (lines a–b)"), so a task printing thousands of matching
//!   lines costs the model a few lines per delivery, and every line is told exactly once
//!   (shown or counted);
//! - while a task with patterns is followed, its exit is held (see
//!   [`Delivery`](crate::delivery::Delivery)): the exit is told after the task's last
//!   event. A task without patterns is never held: one started without them has no
//!   follower, and one whose patterns were cleared is released when they are, without
//!   waiting for its follower to notice; the lines that follower still finds are not
//!   queued, since the model asked for no more;
//! - a task whose events were told is not due again for [`EVENT_COOLDOWN`]: events never
//!   wake the model more often than that per task (a run that starts anyway, for a
//!   prompt or an exit, takes them all).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use zidane_context::TaskId;
use zidane_tools::TaskEvent;
use zidane_wire::{EventLine, MoreLines, TaskEventBlock};

/// The most matching lines of one task a delivery shows in full; the rest are counted.
pub const EVENT_LINES_SHOWN: usize = 3;

/// The least time between two deliveries of one task's events that wake the model.
pub const EVENT_COOLDOWN: Duration = Duration::from_secs(2);

/// What the session keeps of a task with `notify_on` patterns, so an agent rebuilt from
/// it follows the task on, from the line after the last one told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLedger {
    /// The task.
    pub task_id: TaskId,
    /// Its patterns now (empty once cleared).
    pub notify_on: Vec<String>,
    /// The last line number the model was told of (0: none).
    pub told_through: u64,
}

/// One task's lines waiting for a delivery.
#[derive(Debug, Clone)]
struct Pending {
    task_id: TaskId,
    shown: Vec<EventLine>,
    more: Option<MoreLines>,
}

impl Pending {
    fn push(&mut self, line: EventLine) {
        if self.shown.len() < EVENT_LINES_SHOWN && self.more.is_none() {
            self.shown.push(line);
            return;
        }
        match &mut self.more {
            Some(more) => {
                more.count += 1;
                more.last_line = line.line_number;
            }
            None => {
                self.more = Some(MoreLines {
                    count: 1,
                    first_line: line.line_number,
                    last_line: line.line_number,
                });
            }
        }
    }

    fn into_block(self) -> TaskEventBlock {
        TaskEventBlock {
            task_id: self.task_id,
            lines: self.shown,
            more: self.more,
        }
    }
}

/// One task's events as a queue hands them to another ([`EventQueue::hand_over`]).
#[derive(Debug, Clone)]
pub(crate) struct HandedEvents {
    pub(crate) task_id: TaskId,
    pub(crate) notify_on: Vec<String>,
    /// The last line queued: a follower that takes over starts after it.
    pub(crate) queued_through: u64,
    told_through: u64,
    /// The lines queued and not told yet.
    pending: Option<Pending>,
}

/// One task's standing: its patterns, follower and ledger.
#[derive(Debug, Clone, Default)]
struct TaskState {
    notify_on: Vec<String>,
    /// A follower runs (until it tells it drained the log). Its task's exit is held
    /// only while the task also has patterns.
    following: bool,
    /// The last line queued (or told in an earlier life).
    queued_through: u64,
    /// The last line told.
    told_through: u64,
    /// When its events were last taken.
    last_told: Option<Instant>,
}

impl TaskState {
    /// Whether the task's exit waits for its follower: only while there is something
    /// to follow.
    fn holds_exit(&self) -> bool {
        self.following && !self.notify_on.is_empty()
    }

    /// Whether the task's patterns were cleared while its follower still runs.
    fn cleared(&self) -> bool {
        self.following && self.notify_on.is_empty()
    }
}

/// The events queue (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    /// In order of each task's first waiting line.
    pending: Vec<Pending>,
    tasks: HashMap<TaskId, TaskState>,
}

impl EventQueue {
    /// A queue that remembers what an earlier life of the session told.
    pub(crate) fn from_ledger(ledger: &[EventLedger]) -> Self {
        let tasks = ledger
            .iter()
            .map(|entry| {
                (
                    entry.task_id,
                    TaskState {
                        notify_on: entry.notify_on.clone(),
                        queued_through: entry.told_through,
                        told_through: entry.told_through,
                        ..TaskState::default()
                    },
                )
            })
            .collect();
        Self {
            pending: Vec::new(),
            tasks,
        }
    }

    /// What the session keeps, in task order.
    pub(crate) fn ledger(&self) -> Vec<EventLedger> {
        let mut ledger: Vec<EventLedger> = self
            .tasks
            .iter()
            .map(|(task_id, state)| EventLedger {
                task_id: *task_id,
                notify_on: state.notify_on.clone(),
                told_through: state.told_through,
            })
            .collect();
        ledger.sort_by_key(|entry| entry.task_id);
        ledger
    }

    /// A follower of `task_id` starts, or its patterns changed.
    pub(crate) fn follow(&mut self, task_id: TaskId, notify_on: &[String]) {
        let state = self.tasks.entry(task_id).or_default();
        state.notify_on = notify_on.to_vec();
        if !notify_on.is_empty() {
            state.following = true;
        }
    }

    /// The follower of `task_id` ended. True if it held the task's exit.
    pub(crate) fn drained(&mut self, task_id: TaskId) -> bool {
        let Some(state) = self.tasks.get_mut(&task_id) else {
            return false;
        };
        let held = state.holds_exit();
        state.following = false;
        // A task whose patterns were cleared has nothing left for a ledger to resume;
        // its exit may have been told before its follower noticed, so nothing else
        // would forget it.
        if state.notify_on.is_empty() && !self.pending.iter().any(|p| p.task_id == task_id) {
            self.tasks.remove(&task_id);
        }
        held
    }

    /// Whether `task_id`'s exit waits for its follower: the task has patterns and its
    /// follower still reads its log. False for every task without patterns.
    pub(crate) fn holds_exit(&self, task_id: TaskId) -> bool {
        self.tasks.get(&task_id).is_some_and(TaskState::holds_exit)
    }

    /// Whether the exit of a task not in `besides` waits for its follower.
    pub(crate) fn holds_exit_besides(&self, besides: &[TaskId]) -> bool {
        self.tasks
            .iter()
            .any(|(task_id, state)| state.holds_exit() && !besides.contains(task_id))
    }

    /// Queues a matching line. False when it is not news (queued or told already), or
    /// when its task's patterns were cleared after its follower matched it.
    pub(crate) fn push(&mut self, event: TaskEvent) -> bool {
        let state = self.tasks.entry(event.task_id).or_default();
        if event.line_number <= state.queued_through || state.cleared() {
            return false;
        }
        state.queued_through = event.line_number;
        let line = EventLine {
            line_number: event.line_number,
            pattern: event.pattern,
            line: event.line,
        };
        match self.pending.iter_mut().find(|p| p.task_id == event.task_id) {
            Some(pending) => pending.push(line),
            None => self.pending.push(Pending {
                task_id: event.task_id,
                shown: vec![line],
                more: None,
            }),
        }
        true
    }

    /// Whether a waiting line may wake the model now (its task's cool-down is over).
    pub(crate) fn has_due(&self, now: Instant) -> bool {
        self.due_in(now) == Some(Duration::ZERO)
    }

    /// How long until a waiting line may wake the model: zero when one may now, `None`
    /// when none waits.
    pub(crate) fn due_in(&self, now: Instant) -> Option<Duration> {
        self.pending
            .iter()
            .map(|pending| {
                self.tasks
                    .get(&pending.task_id)
                    .and_then(|state| state.last_told)
                    .map_or(Duration::ZERO, |told| {
                        (told + EVENT_COOLDOWN).saturating_duration_since(now)
                    })
            })
            .min()
    }

    /// Takes every waiting line, one block per task, and records them as told.
    pub(crate) fn take(&mut self, now: Instant) -> Vec<TaskEventBlock> {
        let blocks: Vec<TaskEventBlock> = self.pending.drain(..).map(Pending::into_block).collect();
        for block in &blocks {
            if let Some(state) = self.tasks.get_mut(&block.task_id) {
                state.told_through = state.told_through.max(block.last_line().unwrap_or(0));
                state.last_told = Some(now);
            }
        }
        blocks
    }

    /// Takes one task's waiting lines (a channel of the host's own tells its end, and
    /// its events go first), and records them as told.
    pub(crate) fn take_task(&mut self, task_id: TaskId, now: Instant) -> Option<TaskEventBlock> {
        let index = self.pending.iter().position(|p| p.task_id == task_id)?;
        let block = self.pending.remove(index).into_block();
        if let Some(state) = self.tasks.get_mut(&task_id) {
            state.told_through = state.told_through.max(block.last_line().unwrap_or(0));
            state.last_told = Some(now);
        }
        Some(block)
    }

    /// Forgets a task whose end the model was told: its follower has drained, and an
    /// agent rebuilt from the session need not follow it again. A task whose patterns
    /// were cleared is kept while its follower still runs, so what that follower finds
    /// is still known to be unwanted.
    pub(crate) fn forget(&mut self, task_id: TaskId) {
        if !self
            .tasks
            .get(&task_id)
            .is_some_and(|state| state.following)
        {
            self.tasks.remove(&task_id);
        }
    }

    /// Puts back blocks a delivery took but could not persist: they wait again, ahead of
    /// lines queued since, and count as not told.
    pub(crate) fn restore(&mut self, blocks: Vec<TaskEventBlock>) {
        let mut restored: Vec<Pending> = Vec::with_capacity(blocks.len());
        for block in blocks {
            let first = block.lines.first().map(|line| line.line_number);
            if let (Some(state), Some(first)) = (self.tasks.get_mut(&block.task_id), first) {
                state.told_through = state.told_through.min(first.saturating_sub(1));
                state.last_told = None;
            }
            let mut pending = Pending {
                task_id: block.task_id,
                shown: block.lines,
                more: block.more,
            };
            if let Some(index) = self.pending.iter().position(|p| p.task_id == block.task_id) {
                let later = self.pending.remove(index);
                for line in later.shown {
                    pending.push(line);
                }
                if let Some(more) = later.more {
                    let merged = pending.more.get_or_insert(MoreLines {
                        count: 0,
                        first_line: more.first_line,
                        last_line: more.last_line,
                    });
                    merged.count += more.count;
                    merged.last_line = more.last_line;
                }
            }
            restored.push(pending);
        }
        restored.append(&mut self.pending);
        self.pending = restored;
    }

    /// The tasks with patterns, and their patterns.
    pub(crate) fn followed(&self) -> Vec<(TaskId, Vec<String>)> {
        self.ledger()
            .into_iter()
            .filter(|entry| !entry.notify_on.is_empty())
            .map(|entry| (entry.task_id, entry.notify_on))
            .collect()
    }

    /// Takes out every task of the queue with its lines not told yet, for the agent that
    /// takes the tasks over (a child agent's parent). The queue is empty afterwards.
    pub(crate) fn hand_over(&mut self) -> Vec<HandedEvents> {
        let mut pending = std::mem::take(&mut self.pending);
        let mut handed: Vec<HandedEvents> = self
            .tasks
            .drain()
            .map(|(task_id, state)| HandedEvents {
                task_id,
                notify_on: state.notify_on,
                queued_through: state.queued_through,
                told_through: state.told_through,
                pending: pending
                    .iter()
                    .position(|p| p.task_id == task_id)
                    .map(|index| pending.remove(index)),
            })
            .collect();
        handed.sort_by_key(|h| h.task_id);
        handed
    }

    /// Takes in a task another queue handed over: its lines not told wait here, first
    /// among its lines, and the lines it queued are not queued again. Whether a
    /// follower runs is left as it is here ([`follow`](Self::follow) sets it).
    pub(crate) fn adopt(&mut self, handed: HandedEvents) {
        let state = self.tasks.entry(handed.task_id).or_default();
        state.notify_on = handed.notify_on;
        state.queued_through = state.queued_through.max(handed.queued_through);
        state.told_through = state.told_through.max(handed.told_through);
        if let Some(pending) = handed.pending {
            self.restore(vec![pending.into_block()]);
        }
    }

    /// Tasks of the ledger to follow again: patterns set, and not followed in this life.
    pub(crate) fn to_resume(&self) -> Vec<EventLedger> {
        self.ledger()
            .into_iter()
            .filter(|entry| !entry.notify_on.is_empty() && !self.holds_exit(entry.task_id))
            .collect()
    }

    /// Empties the queue.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
