//! The three queues (exits, stalls, events) and the `notified` latch: what the model has
//! not been told yet, and what it already knows.
//!
//! Invariants:
//! - an exit is queued at most once, and never once its task is latched;
//! - the drain latches every exit it takes *before* anything is rendered, so an exit
//!   callback or a kill racing the drain cannot queue the task again;
//! - an exit is held while its task's event follower still reads the log, so it is told
//!   after the task's last event;
//! - once the agent starts tearing down ([`Delivery::close`]) nothing is queued;
//! - an ended task listed `reported` (its end was told to another session) is never
//!   queued by a sweep;
//! - every shared task latched — a detached one, or any task of a context whose tasks
//!   are all shared across sessions (a durable one) — is collected once for the
//!   context's [`exits_told`](zidane_context::ExecutionContext::exits_told)
//!   ([`Delivery::take_told`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use std::time::Instant;

use chrono::{DateTime, Utc};
use zidane_context::{StallInfo, TaskEntry, TaskExitInfo, TaskId};
use zidane_wire::TaskEventBlock;

use crate::events::{EventLedger, EventQueue};

/// An exit the model was told about (or acknowledged) in an earlier life of the session,
/// rebuilt from its turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HistoricalAck {
    pub(crate) task_id: TaskId,
    /// The log the notification named, when the history says.
    pub(crate) output_path: Option<PathBuf>,
}

#[derive(Debug, Clone)]
struct QueuedExit {
    exit: TaskExitInfo,
    received_at: DateTime<Utc>,
}

/// What a drain takes: the exits to reconcile (already latched) and the stalls.
#[derive(Debug, Default)]
pub(crate) struct Taken {
    pub(crate) exits: Vec<TaskExitInfo>,
    pub(crate) stalls: Vec<StallInfo>,
    pub(crate) events: Vec<TaskEventBlock>,
}

#[derive(Debug)]
pub(crate) struct Delivery {
    exits: Vec<QueuedExit>,
    stalls: Vec<StallInfo>,
    /// Tasks of this agent's life the model knows ended.
    latch: HashSet<TaskId>,
    /// Shared tasks latched since the context was last told (see
    /// [`take_told`](Self::take_told)), in the order they were latched.
    told_detached: Vec<TaskId>,
    /// Every task is shared with the other sessions of its handle (a durable context),
    /// not only the detached ones.
    shares_every_task: bool,
    /// Acknowledgements from the loaded session. Task ids restart at `bash_1` in a new
    /// context, so an id alone only matches a task started before this agent was built.
    history: Vec<HistoricalAck>,
    built_at: DateTime<Utc>,
    /// Task logs seen (at start or in a sweep), for suppression by path.
    known_logs: HashMap<PathBuf, TaskId>,
    /// Matching lines of running tasks, and the ledger of what was told.
    pub(crate) events: EventQueue,
    closed: bool,
}

impl Delivery {
    #[cfg(test)]
    pub(crate) fn new(history: Vec<HistoricalAck>) -> Self {
        Self::with_ledger(history, &[])
    }

    /// A delivery that also remembers the task events an earlier life told.
    pub(crate) fn with_ledger(history: Vec<HistoricalAck>, ledger: &[EventLedger]) -> Self {
        Self {
            events: EventQueue::from_ledger(ledger),
            exits: Vec::new(),
            stalls: Vec::new(),
            latch: HashSet::new(),
            told_detached: Vec::new(),
            shares_every_task: false,
            history,
            built_at: Utc::now(),
            known_logs: HashMap::new(),
            closed: false,
        }
    }

    /// Every task latched is collected for [`take_told`](Self::take_told), not only the
    /// detached ones: the context shares all its tasks across sessions.
    pub(crate) fn sharing_every_task(mut self) -> Self {
        self.shares_every_task = true;
        self
    }

    /// Queues a pushed exit. False when it is not news (latched, already queued) or the
    /// agent is tearing down.
    pub(crate) fn push_exit(&mut self, exit: TaskExitInfo) -> bool {
        if self.closed
            || self.latch.contains(&exit.task_id)
            || self.exits.iter().any(|q| q.exit.task_id == exit.task_id)
        {
            return false;
        }
        self.known_logs
            .insert(exit.output_path.clone(), exit.task_id);
        // A stall of a task that has ended is stale: the exit says more.
        self.stalls.retain(|s| s.task_id != exit.task_id);
        self.exits.push(QueuedExit {
            exit,
            received_at: Utc::now(),
        });
        true
    }

    /// Queues the ended tasks of a sweep that are news (not queued, not acknowledged, not
    /// [`reported`](TaskEntry::reported) to another session), in the order they ended;
    /// returns them. For contexts that do not push every exit.
    pub(crate) fn pull(&mut self, swept: &[TaskEntry]) -> Vec<TaskExitInfo> {
        let mut ended: Vec<&TaskEntry> = swept
            .iter()
            .filter(|entry| entry.status().is_terminal() && !entry.reported)
            .filter(|entry| !self.exits.iter().any(|q| q.exit.task_id == entry.task_id))
            .filter(|entry| !self.is_acknowledged(entry))
            .collect();
        ended.sort_by_key(|entry| (entry.ended_at(), entry.task_id));
        let news: Vec<TaskExitInfo> = ended.into_iter().filter_map(TaskEntry::exit_info).collect();
        news.into_iter()
            .filter(|exit| self.push_exit(exit.clone()))
            .collect()
    }

    /// Queues a stall (one-shot). False when the task's exit is already known or queued,
    /// a stall of it is already queued, or the agent is tearing down.
    pub(crate) fn push_stall(&mut self, stall: StallInfo) -> bool {
        if self.closed
            || self.latch.contains(&stall.task_id)
            || self.exits.iter().any(|q| q.exit.task_id == stall.task_id)
            || self.stalls.iter().any(|s| s.task_id == stall.task_id)
        {
            return false;
        }
        self.stalls.push(stall);
        true
    }

    /// Remembers a started task's log, for suppression by path.
    pub(crate) fn remember_log(&mut self, path: PathBuf, task_id: TaskId) {
        self.known_logs.insert(path, task_id);
    }

    /// Whether an exit (not held for its events), a stall, or an event past its task's
    /// cool-down is waiting for the next run.
    pub(crate) fn has_pending(&self) -> bool {
        self.exits
            .iter()
            .any(|q| !self.events.holds_exit(q.exit.task_id))
            || !self.stalls.is_empty()
            || self.events.has_due(Instant::now())
    }

    /// Queues a matching line of a running task. False when it is not news or the agent
    /// is tearing down.
    pub(crate) fn push_event(&mut self, event: zidane_tools::TaskEvent) -> bool {
        !self.closed && self.events.push(event)
    }

    /// The exits waiting, in completion order.
    pub(crate) fn pending_exits(&self) -> Vec<TaskExitInfo> {
        self.exits.iter().map(|q| q.exit.clone()).collect()
    }

    /// Takes everything to deliver: the queued exits in completion order, then ended
    /// tasks from `swept` that are neither queued, acknowledged nor reported to another
    /// session (ordered by end time),
    /// and the queued stalls. Every exit taken is latched here, before rendering.
    pub(crate) fn take(&mut self, swept: &[TaskEntry]) -> Taken {
        for entry in swept {
            self.known_logs
                .insert(entry.output_path.clone(), entry.task_id);
        }
        // An exit whose task's follower still reads the log waits for its last events.
        let (held, ready): (Vec<QueuedExit>, Vec<QueuedExit>) = self
            .exits
            .drain(..)
            .partition(|q| self.events.holds_exit(q.exit.task_id));
        self.exits = held;
        let mut exits: Vec<TaskExitInfo> = ready.into_iter().map(|q| q.exit).collect();
        let mut pulled: Vec<&TaskEntry> = swept
            .iter()
            .filter(|entry| entry.status().is_terminal() && !entry.reported)
            .filter(|entry| !exits.iter().any(|e| e.task_id == entry.task_id))
            .filter(|entry| !self.exits.iter().any(|q| q.exit.task_id == entry.task_id))
            .filter(|entry| !self.is_acknowledged(entry))
            .collect();
        pulled.sort_by_key(|entry| (entry.ended_at(), entry.task_id));
        let pulled: Vec<TaskExitInfo> = pulled
            .into_iter()
            .filter_map(TaskEntry::exit_info)
            .collect();
        for exit in pulled {
            if self.events.holds_exit(exit.task_id) {
                self.exits.push(QueuedExit {
                    exit,
                    received_at: Utc::now(),
                });
            } else {
                exits.push(exit);
            }
        }
        for exit in &exits {
            self.mark(exit.task_id);
        }
        let stalls = self
            .stalls
            .drain(..)
            .filter(|s| !exits.iter().any(|e| e.task_id == s.task_id))
            .collect();
        let events = self.events.take(Instant::now());
        for exit in &exits {
            self.events.forget(exit.task_id);
        }
        Taken {
            exits,
            stalls,
            events,
        }
    }

    /// Puts back what a drain took when the turn carrying it could not be persisted: the
    /// exits return to the head of the queue, unlatched, and the stalls with them.
    pub(crate) fn restore(
        &mut self,
        exits: Vec<TaskExitInfo>,
        stalls: Vec<StallInfo>,
        events: Vec<TaskEventBlock>,
    ) {
        if self.closed {
            return;
        }
        self.events.restore(events);
        let received_at = Utc::now();
        let mut restored: Vec<QueuedExit> = Vec::with_capacity(exits.len());
        for exit in exits {
            self.latch.remove(&exit.task_id);
            self.told_detached.retain(|id| *id != exit.task_id);
            if !self.exits.iter().any(|q| q.exit.task_id == exit.task_id)
                && !restored.iter().any(|q| q.exit.task_id == exit.task_id)
            {
                self.known_logs
                    .insert(exit.output_path.clone(), exit.task_id);
                restored.push(QueuedExit { exit, received_at });
            }
        }
        restored.append(&mut self.exits);
        self.exits = restored;
        let mut stalls: Vec<StallInfo> = stalls
            .into_iter()
            .filter(|s| !self.exits.iter().any(|q| q.exit.task_id == s.task_id))
            .collect();
        stalls.append(&mut self.stalls);
        self.stalls = stalls;
    }

    /// Marks a task's exit as known to the model.
    pub(crate) fn latch(&mut self, task_id: TaskId) {
        self.mark(task_id);
    }

    /// Latches a task; a shared one newly latched is kept for
    /// [`take_told`](Self::take_told).
    fn mark(&mut self, task_id: TaskId) {
        if self.latch.insert(task_id) && (task_id.is_detached() || self.shares_every_task) {
            self.told_detached.push(task_id);
        }
    }

    /// The shared tasks latched since the last call: the context is to be told
    /// ([`exits_told`](zidane_context::ExecutionContext::exits_told)) that this session's
    /// model knows their ends. Each latched task is returned once.
    pub(crate) fn take_told(&mut self) -> Vec<TaskId> {
        std::mem::take(&mut self.told_detached)
    }

    /// The model learned a task's exit (a kill, a completed wait): drops its queued exit
    /// and latches it. True if a pending notification was dropped.
    pub(crate) fn suppress_task(&mut self, task_id: TaskId) -> bool {
        self.mark(task_id);
        let before = self.exits.len();
        self.exits.retain(|q| q.exit.task_id != task_id);
        self.stalls.retain(|s| s.task_id != task_id);
        self.exits.len() < before
    }

    /// A channel of the host's own is about to tell the model of this task's end: true
    /// unless the model was told already. Either way the task is latched and its queued
    /// exit and stall dropped, so no drain tells it again.
    pub(crate) fn claim(&mut self, task_id: TaskId) -> bool {
        let told = self.latch.contains(&task_id);
        self.suppress_task(task_id);
        !told
    }

    /// The model read `path` in a call that started at `read_started`: drops and latches
    /// every queued exit whose log it is and that had arrived before the read began.
    pub(crate) fn suppress_read(
        &mut self,
        path: &Path,
        read_started: DateTime<Utc>,
    ) -> Vec<TaskId> {
        let mut suppressed = Vec::new();
        self.exits.retain(|q| {
            let read_after_exit = q.exit.output_path == path && q.received_at <= read_started;
            if read_after_exit {
                suppressed.push(q.exit.task_id);
            }
            !read_after_exit
        });
        for task_id in &suppressed {
            self.mark(*task_id);
        }
        suppressed
    }

    /// The task whose log `path` is, if one is known.
    pub(crate) fn task_of_log(&self, path: &Path) -> Option<TaskId> {
        self.known_logs.get(path).copied()
    }

    /// Whether the model already knows this ended task's exit.
    pub(crate) fn is_acknowledged(&self, entry: &TaskEntry) -> bool {
        self.latch.contains(&entry.task_id)
            || self.history.iter().any(|ack| {
                ack.output_path.as_deref() == Some(entry.output_path.as_path())
                    || (ack.task_id == entry.task_id && entry.started_at < self.built_at)
            })
    }

    /// Empties the queues.
    pub(crate) fn clear(&mut self) {
        self.exits.clear();
        self.stalls.clear();
        self.events.clear();
    }

    /// Empties the queues and refuses everything from now on (teardown).
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.clear();
    }
}

#[cfg(test)]
#[path = "delivery_tests.rs"]
mod tests;
