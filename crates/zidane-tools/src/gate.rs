//! `BackgroundGate`: whether background mode can work, decided in one place.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use zidane_context::{Capabilities, DetachedTasks};

use crate::context::BackgroundPolicy;
use crate::exit_channel::ExitChannel;

/// Whether background mode can work for a session, and if not, why.
///
/// The builtin shell shows `run_in_background` only when the gate is open, and re-checks
/// it on every call; the agent can reuse it for its own decisions.
///
/// ```
/// use std::path::Path;
/// use zidane_context::{Capabilities, DetachedTasks};
/// use zidane_tools::{BackgroundGate, BackgroundPolicy, GateReason};
///
/// let local = Capabilities::new(DetachedTasks::ProcessLifetime);
/// let gate = BackgroundGate::evaluate(Some(Path::new("/tasks")), BackgroundPolicy::Enabled, local);
/// assert!(gate.allowed());
///
/// let gate = BackgroundGate::evaluate(None, BackgroundPolicy::Enabled, local);
/// assert_eq!(gate.reason(), Some(GateReason::NoTasksDir));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BackgroundGate {
    reason: Option<GateReason>,
    channel: ExitChannel,
    /// The context's tasks can take input (`stdin: pipe`, `shell_input`).
    task_input: bool,
    /// The context's tasks can run in a terminal (`tty`, `shell_screen`).
    terminals: bool,
    /// How long a foreground command runs before it moves to the background, when the
    /// session moves them.
    foreground_budget: Option<Duration>,
    /// The context's task logs can be followed (`notify_on`, `shell_notify`).
    task_events: bool,
    /// The context's tasks can be detached (`detach`).
    detach: bool,
    /// The context places tasks on a fleet by labels (`labels`).
    placement: bool,
}

impl BackgroundGate {
    /// Decides from the tasks directory, the policy and the context's capabilities.
    ///
    /// Closed when there is no tasks directory, when the policy is
    /// [`Disabled`](BackgroundPolicy::Disabled), when the context has no background tasks
    /// at all, or when the policy is [`NonDurable`](BackgroundPolicy::NonDurable) and the
    /// context's tasks are not durable. The first of these that holds is the reason.
    pub fn evaluate(
        tasks_dir: Option<&Path>,
        policy: BackgroundPolicy,
        capabilities: Capabilities,
    ) -> Self {
        let detached = capabilities.detached_tasks;
        let reason = if tasks_dir.is_none() {
            Some(GateReason::NoTasksDir)
        } else if policy == BackgroundPolicy::Disabled {
            Some(GateReason::Disabled)
        } else if !detached.supported() {
            Some(GateReason::Unsupported)
        } else if policy == BackgroundPolicy::NonDurable && detached != DetachedTasks::Durable {
            Some(GateReason::NotDurable)
        } else {
            None
        };
        let open = reason.is_none();
        Self {
            reason,
            channel: ExitChannel::NextTurn,
            task_input: open && (capabilities.task_input || capabilities.terminals),
            terminals: open && capabilities.terminals,
            foreground_budget: None,
            task_events: open && capabilities.follow_output,
            detach: open && capabilities.detach,
            placement: open && capabilities.placement,
        }
    }

    /// An open gate, with input, terminals and task events, without detached tasks (for
    /// tests and hosts that decide elsewhere; add them with
    /// [`with_detach`](Self::with_detach)).
    pub const fn open() -> Self {
        Self {
            reason: None,
            channel: ExitChannel::NextTurn,
            task_input: true,
            terminals: true,
            foreground_budget: None,
            task_events: true,
            detach: false,
            placement: false,
        }
    }

    /// An open gate for a context whose tasks take no input, have no terminal and whose
    /// logs cannot be followed.
    pub const fn open_without_input() -> Self {
        Self {
            reason: None,
            channel: ExitChannel::NextTurn,
            task_input: false,
            terminals: false,
            foreground_budget: None,
            task_events: false,
            detach: false,
            placement: false,
        }
    }

    /// A gate closed for `reason`.
    pub const fn closed(reason: GateReason) -> Self {
        Self {
            reason: Some(reason),
            channel: ExitChannel::NextTurn,
            task_input: false,
            terminals: false,
            foreground_budget: None,
            task_events: false,
            detach: false,
            placement: false,
        }
    }

    /// The same gate, for a session whose tasks can (`true`) or cannot be detached; an
    /// open gate only.
    #[must_use]
    pub const fn with_detach(mut self, detach: bool) -> Self {
        self.detach = detach && self.reason.is_none();
        self
    }

    /// The same gate, for a session whose tasks can (`true`) or cannot be placed by
    /// labels; an open gate only.
    #[must_use]
    pub const fn with_placement(mut self, placement: bool) -> Self {
        self.placement = placement && self.reason.is_none();
        self
    }

    /// The same gate, for a session whose background exits reach the model by `channel`
    /// (the tools' texts say what holds there).
    #[must_use]
    pub const fn with_exit_channel(mut self, channel: ExitChannel) -> Self {
        self.channel = channel;
        self
    }

    /// The same gate, for a session whose foreground commands move to the background
    /// after `budget` (`None`: they run to their end).
    #[must_use]
    pub const fn with_foreground_budget(mut self, budget: Option<Duration>) -> Self {
        self.foreground_budget = budget;
        self
    }

    /// How long a foreground command runs before it moves to the background: the
    /// session's budget while background tasks are allowed, else `None`.
    pub const fn foreground_budget(&self) -> Option<Duration> {
        if self.reason.is_none() {
            self.foreground_budget
        } else {
            None
        }
    }

    /// How a background task's end reaches the model in this session.
    pub const fn exit_channel(&self) -> ExitChannel {
        self.channel
    }

    /// Whether background tasks may be started to take input (`stdin: "pipe"`) and be
    /// written to (`shell_input`).
    pub const fn task_input(&self) -> bool {
        self.task_input
    }

    /// Whether background tasks may run in a terminal (`tty`) and have their screen
    /// read (`shell_screen`).
    pub const fn terminals(&self) -> bool {
        self.terminals
    }

    /// Whether background tasks may carry `notify_on` patterns and have them changed
    /// (`shell_notify`): the context can follow their logs.
    pub const fn task_events(&self) -> bool {
        self.task_events
    }

    /// Whether background tasks may be detached (`detach`): started to outlive the
    /// host, owned by the per-user supervisor.
    pub const fn detach(&self) -> bool {
        self.detach
    }

    /// Whether background tasks may name the labels of the worker that runs them
    /// (`labels`): the context places them on a fleet.
    pub const fn placement(&self) -> bool {
        self.placement
    }

    /// Whether background tasks may be started.
    pub const fn allowed(&self) -> bool {
        self.reason.is_none()
    }

    /// Why background tasks may not be started, or `None` when they may.
    pub const fn reason(&self) -> Option<GateReason> {
        self.reason
    }
}

/// Why background mode is not available. Its `Display` is the sentence shown to the
/// model after "background mode is not available: ".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GateReason {
    /// No tasks directory is configured, so task logs have nowhere to go.
    NoTasksDir,
    /// The agent's policy disables background tasks.
    Disabled,
    /// The execution context cannot run background tasks
    /// ([`DetachedTasks::None`]).
    Unsupported,
    /// The policy allows only durable background tasks and this context's tasks die
    /// with the host.
    NotDurable,
}

impl fmt::Display for GateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoTasksDir => "no tasks directory is configured",
            Self::Disabled => "background tasks are disabled for this agent",
            Self::Unsupported => "this execution context cannot run background tasks",
            Self::NotDurable => {
                "background tasks are allowed only on a durable execution context, and this one is not"
            }
        })
    }
}
