//! Who owns what: handles, their tasks, task ids and the running-task cap.
//!
//! One short-held mutex guards it all; nothing waits or spawns while holding it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use zidane_context::{ContextError, ExecutionHandle, ExitCallback, Result, TaskEntry, TaskId};

use crate::task::Task;

#[derive(Debug, Default)]
pub(crate) struct Registry {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last_handle: u64,
    live: HashMap<ExecutionHandle, BTreeMap<TaskId, Arc<Task>>>,
    destroyed: HashSet<ExecutionHandle>,
    last_task: u64,
    /// The last provisional number given to a held task.
    last_held: u64,
    /// Tasks started and not yet settled (a reserved slot counts too).
    running: usize,
}

impl State {
    fn check(&self, handle: ExecutionHandle) -> Result<()> {
        if self.live.contains_key(&handle) {
            Ok(())
        } else if self.destroyed.contains(&handle) {
            Err(ContextError::Destroyed(handle))
        } else {
            Err(ContextError::UnknownHandle(handle))
        }
    }
}

/// What [`Registry::name`] found.
#[derive(Debug)]
pub(crate) enum Named {
    /// The task's id now.
    Named(TaskId),
    /// It had settled first.
    Ended(zidane_context::TaskExitInfo),
}

/// A running-task slot and the id that goes with it, held while a task starts.
#[derive(Debug)]
#[must_use = "a reservation holds a running-task slot until released or used"]
pub(crate) struct Reservation {
    pub(crate) task_id: TaskId,
}

impl Registry {
    fn state(&self) -> MutexGuard<'_, State> {
        // Every critical section is a handful of map operations that cannot leave the
        // state half-updated, so a poisoned lock is still safe to use.
        zidane_context::lock(&self.state)
    }

    pub(crate) fn create_handle(&self) -> ExecutionHandle {
        let mut state = self.state();
        state.last_handle += 1;
        let handle = ExecutionHandle::new(state.last_handle);
        state.live.insert(handle, BTreeMap::new());
        handle
    }

    /// Fails unless `handle` is live.
    pub(crate) fn check(&self, handle: ExecutionHandle) -> Result<()> {
        self.state().check(handle)
    }

    /// Takes a running-task slot and the next task id — a provisional one for a held
    /// task, which takes none of the sequence — or says why not.
    pub(crate) fn reserve(
        &self,
        handle: ExecutionHandle,
        limit: usize,
        held: bool,
    ) -> Result<Reservation> {
        let mut state = self.state();
        state.check(handle)?;
        if state.running >= limit {
            return Err(ContextError::TooManyTasks { limit });
        }
        state.running += 1;
        let task_id = if held {
            state.last_held += 1;
            TaskId::held(state.last_held)
        } else {
            state.last_task += 1;
            TaskId::from_number(state.last_task)
        };
        Ok(Reservation { task_id })
    }

    /// Names the held task `held` of `handle`: the next id of the sequence, its log
    /// renamed by `rename_to`, listed from now on. `Ok(None)` when the handle has no
    /// such held task; `Ended` when it settled first (it stays held).
    pub(crate) fn name(
        &self,
        handle: ExecutionHandle,
        held: TaskId,
        rename_to: impl FnOnce(TaskId) -> Vec<std::path::PathBuf>,
    ) -> Result<Option<Named>> {
        let mut state = self.state();
        state.check(handle)?;
        let task = match state.live.get(&handle).and_then(|tasks| tasks.get(&held)) {
            Some(task) if held.is_held() => Arc::clone(task),
            _ => return Ok(None),
        };
        // The id is taken only once the rename is done, so a failed one leaves no gap.
        let id = TaskId::from_number(state.last_task + 1);
        let paths = rename_to(id);
        let path = paths.first().cloned().unwrap_or_default();
        match task
            .rename(id, paths)
            .map_err(|cause| ContextError::OutputDir { path, cause })?
        {
            Err(exit) => Ok(Some(Named::Ended(exit))),
            Ok(()) => {
                state.last_task += 1;
                if let Some(tasks) = state.live.get_mut(&handle) {
                    tasks.remove(&held);
                    tasks.insert(id, task);
                }
                Ok(Some(Named::Named(id)))
            }
        }
    }

    /// The held task `held` of `handle`, once it has settled. It stays filed (unlisted)
    /// until the handle is destroyed, so that `destroy` still ends whatever left its
    /// group.
    pub(crate) fn settled_held(&self, handle: ExecutionHandle, held: TaskId) -> Option<Arc<Task>> {
        let state = self.state();
        let task = state.live.get(&handle)?.get(&held)?;
        (held.is_held() && !task.is_running()).then(|| Arc::clone(task))
    }

    /// Gives back the slot of a task that settled.
    pub(crate) fn release(&self) {
        let mut state = self.state();
        state.running = state.running.saturating_sub(1);
    }

    /// Gives back a reservation whose task never started: the slot, and the id too
    /// when no later start took one, so a refused start leaves no gap in the ids.
    pub(crate) fn cancel(&self, reservation: Reservation) {
        let mut state = self.state();
        state.running = state.running.saturating_sub(1);
        if state.last_task == reservation.task_id.number() {
            state.last_task -= 1;
        }
    }

    /// Files a started task under its handle. Fails if the handle was destroyed while
    /// the task was starting; the caller then ends the task itself.
    pub(crate) fn insert(&self, handle: ExecutionHandle, task: Arc<Task>) -> Result<()> {
        let mut state = self.state();
        state.check(handle)?;
        if let Some(tasks) = state.live.get_mut(&handle) {
            tasks.insert(task.id(), task);
        }
        Ok(())
    }

    /// The task `task_id` of `handle`: `Ok(None)` when the handle does not own it.
    pub(crate) fn task(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Arc<Task>>> {
        let state = self.state();
        state.check(handle)?;
        Ok(state
            .live
            .get(&handle)
            .and_then(|tasks| tasks.get(&task_id))
            .cloned())
    }

    /// Every listed task of `handle` (held ones are not), in id order.
    pub(crate) fn tasks(&self, handle: ExecutionHandle) -> Result<Vec<Arc<Task>>> {
        let state = self.state();
        state.check(handle)?;
        Ok(state
            .live
            .get(&handle)
            .map(|tasks| {
                tasks
                    .iter()
                    .filter(|(id, _)| !id.is_held())
                    .map(|(_, task)| Arc::clone(task))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Every task of every live handle (for a context being dropped).
    pub(crate) fn all_tasks(&self) -> Vec<Arc<Task>> {
        self.state()
            .live
            .values()
            .flat_map(|tasks| tasks.values().cloned())
            .collect()
    }

    /// Marks `handle` destroyed and hands back its tasks. `Ok(None)` if it already was
    /// (destroy is idempotent).
    pub(crate) fn destroy(&self, handle: ExecutionHandle) -> Result<Option<Vec<Arc<Task>>>> {
        let mut state = self.state();
        if state.destroyed.contains(&handle) {
            return Ok(None);
        }
        let tasks = state
            .live
            .remove(&handle)
            .ok_or(ContextError::UnknownHandle(handle))?;
        state.destroyed.insert(handle);
        Ok(Some(tasks.into_values().collect()))
    }

    /// Moves every running task of `from` to `to`, giving it `on_exit`.
    pub(crate) fn reassign(
        &self,
        from: ExecutionHandle,
        to: ExecutionHandle,
        on_exit: Option<&ExitCallback>,
    ) -> Result<Vec<TaskEntry>> {
        let mut state = self.state();
        state.check(from)?;
        state.check(to)?;
        if from == to {
            // Nothing moves, but the callbacks are still rewired as asked.
            let tasks = state.live.get(&from).map(|t| {
                t.iter()
                    .filter(|(id, _)| !id.is_held())
                    .map(|(_, task)| Arc::clone(task))
                    .collect::<Vec<_>>()
            });
            return Ok(tasks
                .unwrap_or_default()
                .iter()
                .filter_map(|task| task.reassign(on_exit.cloned()))
                .collect());
        }
        let source = state
            .live
            .get_mut(&from)
            .map(std::mem::take)
            .unwrap_or_default();
        let mut kept = BTreeMap::new();
        let mut moved = Vec::new();
        let mut entries = Vec::new();
        for (id, task) in source {
            // A held task belongs to the foreground call waiting on it, which keeps
            // its callbacks: it stays, and ends with its handle.
            if id.is_held() {
                kept.insert(id, task);
                continue;
            }
            // The task's own lock decides: a task that settles concurrently either
            // moved first (and fires the new callback) or settled first (and stays).
            match task.reassign(on_exit.cloned()) {
                Some(entry) => {
                    entries.push(entry);
                    moved.push((id, task));
                }
                None => {
                    kept.insert(id, task);
                }
            }
        }
        if let Some(tasks) = state.live.get_mut(&from) {
            *tasks = kept;
        }
        if let Some(tasks) = state.live.get_mut(&to) {
            tasks.extend(moved);
        }
        Ok(entries)
    }
}
