//! `ToolContext`: what a tool call needs, and nothing more.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zidane_context::{
    BackgroundStarted, CancellationToken, ExecutionContext, ExecutionHandle, ExitCallback,
    SandboxPolicy, SandboxScope, StallCallback, TaskLimits,
};

use crate::approval::Approver;
use crate::exit_channel::ExitChannel;
use crate::gate::BackgroundGate;
use crate::task_events::TaskEvents;

/// Called once a background task has started, with what `exec_background` returned and
/// the command as given.
pub type StartCallback = Arc<dyn Fn(&BackgroundStarted, &str) + Send + Sync>;

/// What a tool call runs against: the execution context and handle, the background
/// settings, where background events go, and the call's cancellation token.
///
/// Built by the agent for each call (cheap: everything inside is shared or small).
///
/// ```
/// use std::sync::Arc;
/// use zidane_context::{ExecutionHandle, MockContext};
/// use zidane_tools::ToolContext;
///
/// let context = ToolContext::new(Arc::new(MockContext::new()), ExecutionHandle::new(1))
///     .with_tasks_dir("/tmp/session/tasks");
/// assert!(context.gate().allowed());
/// ```
#[derive(Clone)]
pub struct ToolContext {
    /// Where commands run.
    execution: Arc<dyn ExecutionContext>,
    /// The session's scope in `execution`.
    handle: ExecutionHandle,
    /// Whether and how background tasks may be started.
    background: BackgroundSettings,
    /// Where background start, exit, stall and line events go.
    sinks: BackgroundSinks,
    /// Cancelled when the call should stop.
    cancel: CancellationToken,
    /// Fired by the host to move the call's foreground command to the background.
    move_trigger: CancellationToken,
    /// Who is asked before a command runs outside the sandbox; `None`: nobody can be.
    approver: Option<Arc<dyn Approver>>,
    /// The host's own sandbox for this call (Codex's), which its commands never run
    /// wider than; `None`: the host sent none.
    host_sandbox: Option<SandboxPolicy>,
}

impl ToolContext {
    /// A context with default background settings (no tasks directory, so background
    /// mode is off), no sinks, and a fresh cancellation token and move trigger.
    pub fn new(execution: Arc<dyn ExecutionContext>, handle: ExecutionHandle) -> Self {
        Self {
            execution,
            handle,
            background: BackgroundSettings::default(),
            sinks: BackgroundSinks::default(),
            cancel: CancellationToken::new(),
            move_trigger: CancellationToken::new(),
            approver: None,
            host_sandbox: None,
        }
    }

    /// Sets the directory background task logs are written to.
    #[must_use]
    pub fn with_tasks_dir(mut self, tasks_dir: impl Into<PathBuf>) -> Self {
        self.background.tasks_dir = Some(tasks_dir.into());
        self
    }

    /// Replaces the background settings.
    #[must_use]
    pub fn with_background(mut self, background: BackgroundSettings) -> Self {
        self.background = background;
        self
    }

    /// Replaces the sinks.
    #[must_use]
    pub fn with_sinks(mut self, sinks: BackgroundSinks) -> Self {
        self.sinks = sinks;
        self
    }

    /// Replaces the cancellation token.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Replaces the move trigger (see [`move_trigger`](Self::move_trigger)).
    #[must_use]
    pub fn with_move_trigger(mut self, trigger: CancellationToken) -> Self {
        self.move_trigger = trigger;
        self
    }

    /// Sets who is asked before a command runs outside the sandbox (see
    /// [`approver`](Self::approver)).
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Who is asked before a command runs outside the sandbox (`shell`'s
    /// `outside_sandbox`); `None` when nobody can be, and such a command is refused.
    pub fn approver(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    /// Sets the host's own sandbox for this call (see [`host_sandbox`](Self::host_sandbox)).
    #[must_use]
    pub fn with_host_sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.host_sandbox = Some(policy);
        self
    }

    /// The host's own sandbox for this call, which every command it starts runs
    /// within: a host that sandboxes its own commands (Codex) tells it per call.
    pub fn host_sandbox(&self) -> Option<&SandboxPolicy> {
        self.host_sandbox.as_ref()
    }

    /// The scope a command of this call runs under, given the one the tool chose:
    /// never wider than the host's sandbox. Under a host's sandbox the context's own
    /// policy narrows further, and a command a person let out of zidane's sandbox stays
    /// in the host's.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zidane_context::{ExecutionHandle, MockContext, SandboxPolicy, SandboxScope};
    /// use zidane_tools::ToolContext;
    ///
    /// let context = ToolContext::new(Arc::new(MockContext::new()), ExecutionHandle::new(1))
    ///     .with_host_sandbox(SandboxPolicy::read_only());
    /// assert_eq!(
    ///     context.command_scope(SandboxScope::Outside),
    ///     SandboxScope::Within(SandboxPolicy::read_only())
    /// );
    /// ```
    pub fn command_scope(&self, chosen: SandboxScope) -> SandboxScope {
        let Some(host) = &self.host_sandbox else {
            return chosen;
        };
        match chosen {
            SandboxScope::Outside if !host.is_on() => SandboxScope::Outside,
            SandboxScope::Context | SandboxScope::Outside => SandboxScope::Within(host.clone()),
            SandboxScope::Within(own) => SandboxScope::Within(own.narrowed_by(host)),
        }
    }

    /// Where commands run.
    pub fn execution(&self) -> &Arc<dyn ExecutionContext> {
        &self.execution
    }

    /// The session's scope in [`execution`](Self::execution).
    pub fn handle(&self) -> ExecutionHandle {
        self.handle
    }

    /// Whether and how background tasks may be started.
    pub fn background(&self) -> &BackgroundSettings {
        &self.background
    }

    /// Where background start, exit, stall and line events go.
    pub fn sinks(&self) -> &BackgroundSinks {
        &self.sinks
    }

    /// Cancelled when the call should stop (a user abort): a foreground command's
    /// process group is killed, a `wait_task` returns at once.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Fired by the host to move the call's foreground command to the background now
    /// (a user's key), where the settings have a
    /// [`foreground_budget`](BackgroundSettings::foreground_budget); ignored elsewhere.
    pub fn move_trigger(&self) -> &CancellationToken {
        &self.move_trigger
    }

    /// Whether background mode can work here: the settings against the context's
    /// capabilities. The one place this is decided.
    pub fn gate(&self) -> BackgroundGate {
        BackgroundGate::evaluate(
            self.background.tasks_dir.as_deref(),
            self.background.policy,
            self.execution.capabilities(),
        )
        .with_exit_channel(self.background.exit_channel)
        .with_foreground_budget(self.background.foreground_budget)
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("capabilities", &self.execution.capabilities())
            .field("handle", &self.handle)
            .field("background", &self.background)
            .field("sinks", &self.sinks)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("moved", &self.move_trigger.is_cancelled())
            .field("approver", &self.approver)
            .field("host_sandbox", &self.host_sandbox)
            .finish()
    }
}

/// How background tasks are started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundSettings {
    /// Directory of the task logs (`<user_dir>/sessions/<id>/tasks/`). `None`: background
    /// mode is off.
    pub tasks_dir: Option<PathBuf>,
    /// Whether background tasks are allowed at all.
    pub policy: BackgroundPolicy,
    /// Whether `wait_task`'s `until.url` may probe hosts other than this machine's
    /// loopback addresses. Off by default: a model should not make the host reach out.
    #[serde(default)]
    pub remote_readiness: bool,
    /// The limits of every background task, where its call sets none of its own
    /// (a call sets no stall window: that one is always the host's).
    #[serde(flatten)]
    pub limits: TaskLimits,
    /// How a background task's end reaches the model, so the tools say what holds.
    #[serde(default)]
    pub exit_channel: ExitChannel,
    /// How long a foreground `shell` command runs before it moves to the background,
    /// where background mode is open: the call then returns with the task's id and log,
    /// and the task's end is told like any background task's. `None` (the default): a
    /// foreground command runs to its end.
    #[serde(
        default,
        rename = "foreground_budget_ms",
        with = "zidane_context::duration_ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub foreground_budget: Option<std::time::Duration>,
}

/// Whether an agent lets the model start background tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundPolicy {
    /// Allowed wherever the context supports them.
    #[default]
    Enabled,
    /// Never: the model is not offered `run_in_background`.
    Disabled,
    /// Only on a context whose tasks survive the host
    /// ([`DetachedTasks::Durable`](zidane_context::DetachedTasks::Durable)).
    NonDurable,
}

/// Where background events go. Each sink is optional.
#[derive(Clone, Default)]
pub struct BackgroundSinks {
    /// Called after a task started.
    pub on_start: Option<StartCallback>,
    /// Passed to the context as the task's exit callback (fires exactly once).
    pub on_exit: Option<ExitCallback>,
    /// Passed to the context as the task's stall callback.
    pub on_stall: Option<StallCallback>,
    /// The session's task event followers: a task started with `notify_on` (or given
    /// patterns by `shell_notify`) tells its matching lines here. `None`: `notify_on`
    /// is refused.
    pub on_event: Option<TaskEvents>,
}

impl fmt::Debug for BackgroundSinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundSinks")
            .field("on_start", &self.on_start.as_ref().map(|_| "Fn"))
            .field("on_exit", &self.on_exit.as_ref().map(|_| "Fn"))
            .field("on_stall", &self.on_stall.as_ref().map(|_| "Fn"))
            .field("on_event", &self.on_event)
            .finish()
    }
}
