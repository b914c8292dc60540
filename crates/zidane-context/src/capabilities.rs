//! What a context can do with background tasks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What an execution context can do, beyond foreground `exec` and `read_file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Capabilities {
    /// Whether, and how long, background tasks live.
    pub detached_tasks: DetachedTasks,
    /// How often a host's wake loop should sweep `list_background` while the agent is
    /// idle, for a context whose exits are not (or not always) pushed through `on_exit`
    /// — a durable context. `None` (the default): the host's own choice. For a
    /// [`Durable`](DetachedTasks::Durable) context a host sweeps all the same (the
    /// zidane-agent `WakeLoop` every `DEFAULT_DURABLE_SWEEP_INTERVAL`): a host that
    /// reloads a session adopts tasks whose exit callbacks died with the host that
    /// started them. Any other context pushes every exit, and needs no sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_interval: Option<Duration>,
    /// Whether background tasks can take input: started with `stdin: pipe` and
    /// written with [`write_input`](crate::ExecutionContext::write_input).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task_input: bool,
    /// Whether background tasks can run in a terminal (`tty`), whose screen
    /// [`read_screen`](crate::ExecutionContext::read_screen) reads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminals: bool,
    /// Whether a task's log can be followed as it grows
    /// ([`follow_output`](crate::ExecutionContext::follow_output)): readiness waits on a
    /// pattern and pushed task events read through it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub follow_output: bool,
    /// Whether background tasks can be detached
    /// ([`BackgroundOptions::detach`](crate::BackgroundOptions::detach)): started to
    /// outlive the host, owned by the per-user supervisor. Tools offer `detach` only
    /// when this is set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detach: bool,
    /// Background tasks run on a fleet of machines and can be placed by labels
    /// ([`BackgroundOptions::labels`](crate::BackgroundOptions::labels)). Tools offer
    /// `labels` only when this is set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub placement: bool,
}

impl Capabilities {
    /// Capabilities with the given background-task support.
    pub const fn new(detached_tasks: DetachedTasks) -> Self {
        Self {
            detached_tasks,
            sweep_interval: None,
            task_input: false,
            terminals: false,
            follow_output: false,
            detach: false,
            placement: false,
        }
    }

    /// Says that background tasks can take input.
    #[must_use]
    pub const fn with_task_input(mut self) -> Self {
        self.task_input = true;
        self
    }

    /// Says that background tasks can run in a terminal (which implies input).
    #[must_use]
    pub const fn with_terminals(mut self) -> Self {
        self.task_input = true;
        self.terminals = true;
        self
    }

    /// Says that task logs can be followed as they grow.
    #[must_use]
    pub const fn with_follow_output(mut self) -> Self {
        self.follow_output = true;
        self
    }

    /// Says that background tasks can be detached (see [`detach`](Self::detach)).
    #[must_use]
    pub const fn with_detach(mut self) -> Self {
        self.detach = true;
        self
    }

    /// Says that background tasks can be placed by labels (see
    /// [`placement`](Self::placement)).
    #[must_use]
    pub const fn with_placement(mut self) -> Self {
        self.placement = true;
        self
    }

    /// Asks hosts to sweep for exits this often while idle (see
    /// [`sweep_interval`](Self::sweep_interval)).
    #[must_use]
    pub const fn with_sweep_interval(mut self, every: Duration) -> Self {
        self.sweep_interval = Some(every);
        self
    }
}

/// How long background tasks of a context live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetachedTasks {
    /// No background tasks at all.
    #[default]
    None,
    /// Tasks die with the host process (the local `ProcessContext`).
    ProcessLifetime,
    /// Tasks survive the host process (a remote or durable runner).
    Durable,
}

impl DetachedTasks {
    /// Whether background tasks can be started at all.
    pub const fn supported(self) -> bool {
        !matches!(self, Self::None)
    }
}
