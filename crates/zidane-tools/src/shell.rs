//! The `shell` tool: a command in the foreground, or a background task.

use crate::data::{self, ShellData};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use zidane_context::{
    BackgroundOptions, ContextError, ExecOptions, ExecOutput, SandboxPolicy, SandboxReport,
    SandboxScope, SandboxStatus, StdinMode, TaskLimits, TtySize,
};

use crate::context::ToolContext;
use crate::follow_gate::FollowGate;
use crate::foreground_move::run_movable;
use crate::gate::{BackgroundGate, GateReason};
use crate::input::{ShellArgs, StdinChoice, input_schema, parse};
use crate::output_schema::output_schema;
use crate::shell_notify as notify;
use crate::shell_sandbox;
use crate::task_events::NotifyPatterns;
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the shell tool.
pub const SHELL: &str = "shell";

/// The first paragraph of the description, after "Runs a … command" (see
/// [`describe_shell`]).
const DESCRIPTION: &str = "\
to completion and returns its output (stdout and stderr interleaved) and its exit code. \
Very long output keeps its tail. Set `timeout_ms` to bound how long the command may run: \
on timeout the command and every process it started are killed. Environment variables named \
like secrets (keys, tokens, secrets, passwords) are withheld from commands: do not look for \
them.";

/// The background paragraphs of the description; `{AFTER_START}` is the channel's.
const BACKGROUND_DESCRIPTION: &str = "\
For a long-running command — a build, a test suite, a dev server, a training run — set \
`run_in_background: true`. The call returns at once with a task id (such as `bash_1`) and \
the path of the task's log file, and the command keeps running while you work.

{AFTER_START}

Use `wait_task` only when your very next step needs the task's result, and `shell_kill` to \
stop a task you no longer need.

Budgets for a background task, all optional: `timeout_ms` is its wall time, \
`cpu_time_ms` the CPU time of all its processes together; when one runs out the task is \
killed and its notification says which budget ended it. `max_output_bytes` caps its log: \
later output is dropped and counted, and the task keeps running.";

/// The paragraph on detached tasks, when the context can detach them.
const DETACH_DESCRIPTION: &str = "\
Set `detach: true` (implies `run_in_background`) for a task that must outlive this \
session, such as a server you will come back to: it keeps running after this host exits, \
gets an id like `bash_d1`, `zidane ps` lists it, and the next session in this workspace can \
wait for it and is told its end once. Otherwise a background task ends with its session.";

/// The paragraph on input, when the session's tasks can take it (see
/// [`input_paragraph`]).
const INPUT_DESCRIPTION: &str = "\
A background command's stdin is closed, so one that asks a question gets end of file. To \
answer its prompts instead, start it with `stdin: \"pipe\"` and type with `shell_input`.";

/// The same, when tasks can also run in a terminal.
const TERMINAL_DESCRIPTION: &str = "\
A background command's stdin is closed, so one that asks a question gets end of file. To \
answer its prompts instead, start it with `stdin: \"pipe\"`, or with `tty: true` when it \
needs a terminal (prompts that show only on one, REPLs, full-screen programs; `rows` and \
`cols` set its size), then type with `shell_input` and read a terminal's screen with \
`shell_screen`. Prefer a non-interactive flag (`--yes`, `-y`) when the command has one.";

/// The paragraph on placement, when the context runs tasks on a fleet of workers.
const LABELS_DESCRIPTION: &str = "\
Background tasks run on a fleet of workers. Set `labels` (`[\"gpu\"]`) when a task needs a \
particular kind of machine: the least-loaded worker carrying every one of them runs it, \
and a start whose labels no worker carries is refused, naming the labels the workers \
have.";

/// Most labels one start may name.
const MAX_LABELS: usize = 16;

/// The background-only fields of the input.
const BACKGROUND_FIELDS: [&str; 10] = [
    "run_in_background",
    "detach",
    "labels",
    "notify_on",
    "cpu_time_ms",
    "max_output_bytes",
    "stdin",
    "tty",
    "rows",
    "cols",
];

/// How [`create_shell_tool`] builds a shell tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ShellToolOptions {
    /// Whether the tool offers `run_in_background`. `false`: never offered, and a forged
    /// flag is refused. `true`: offered whenever the session's
    /// [`BackgroundGate`] is open — a flag that could only fail is never shown.
    pub allow_background: bool,
}

impl ShellToolOptions {
    /// Sets whether the tool offers `run_in_background`.
    #[must_use]
    pub const fn allow_background(mut self, allow: bool) -> Self {
        self.allow_background = allow;
        self
    }
}

impl Default for ShellToolOptions {
    /// Background mode allowed, as in the builtin shell.
    fn default() -> Self {
        Self {
            allow_background: true,
        }
    }
}

/// A shell tool with explicit control over background mode.
///
/// ```
/// use zidane_tools::{ShellToolOptions, SpecView, create_shell_tool};
///
/// let shell = create_shell_tool(ShellToolOptions::default().allow_background(false));
/// let spec = shell.spec(&SpecView::default());
/// assert!(spec.input_schema["properties"].get("run_in_background").is_none());
/// ```
pub fn create_shell_tool(options: ShellToolOptions) -> std::sync::Arc<dyn Tool> {
    std::sync::Arc::new(ShellTool {
        allow_background: options.allow_background,
    })
}

/// The builtin shell: its spec follows the session's gate.
struct ShellTool {
    allow_background: bool,
}

/// "Runs a bash command (`/bin/bash`)" for a context that names its shell, else "Runs
/// a shell command": the model is told the dialect it gets. With a move budget, the
/// paragraph says what happens to a command that outlives it.
fn describe_shell(shell: Option<&str>, budget: Option<Duration>) -> String {
    let mut description = describe_dialect(shell);
    if let Some(budget) = budget {
        description.push_str(&format!(
            " A command still running after {} moves to the background: the call returns \
             with its task id and log path, the command keeps running as a background task \
             (its `timeout_ms` still ends it), and its end is told like any background \
             task's, as below.",
            crate::wait_task::limit_text(budget)
        ));
    }
    description
}

/// The first sentence and paragraph, naming the shell.
fn describe_dialect(shell: Option<&str>) -> String {
    match shell {
        Some(path) => {
            // A Windows path separates with `\` as well.
            let name = path
                .rsplit(['/', '\\'])
                .next()
                .filter(|n| !n.is_empty())
                .unwrap_or(path);
            format!("Runs a {name} command (`{path}`) {DESCRIPTION}")
        }
        None => format!("Runs a shell command {DESCRIPTION}"),
    }
}

impl ShellTool {
    /// The spec's fields for hosts, the same in every mode.
    fn metadata() -> ToolSpec {
        ToolSpec {
            title: Some(
                "Run a shell command, in the foreground or as a background task".to_owned(),
            ),
            annotations: ToolAnnotations {
                read_only: None,
                destructive: Some(true),
                idempotent: None,
                open_world: Some(true),
            },
            output_schema: Some(output_schema::<ShellData>()),
            ..ToolSpec::default()
        }
    }

    fn foreground_spec(shell: Option<&str>, sandbox: &SandboxReport) -> ToolSpec {
        let mut input_schema = input_schema::<ShellArgs>();
        if let Some(properties) = input_schema
            .get_mut("properties")
            .and_then(serde_json::Value::as_object_mut)
        {
            // Background-only fields go with the flag.
            for field in BACKGROUND_FIELDS {
                properties.remove(field);
            }
            shell_sandbox::fit_schema(properties, sandbox);
        }
        let mut description = describe_shell(shell, None);
        if let Some(paragraph) = shell_sandbox::paragraph(sandbox) {
            description.push_str(&format!("\n\n{paragraph}"));
        }
        ToolSpec {
            name: SHELL.to_owned(),
            description,
            input_schema,
            ..Self::metadata()
        }
    }

    /// The background spec; input and terminal fields (and their paragraph) only where
    /// `gate` allows them.
    fn background_spec(
        shell: Option<&str>,
        gate: &BackgroundGate,
        sandbox: &SandboxReport,
    ) -> ToolSpec {
        let mut input_schema = input_schema::<ShellArgs>();
        if let Some(properties) = input_schema
            .get_mut("properties")
            .and_then(serde_json::Value::as_object_mut)
        {
            if !gate.terminals() {
                for field in ["tty", "rows", "cols"] {
                    properties.remove(field);
                }
            }
            if !gate.task_input() {
                properties.remove("stdin");
            }
            if !gate.task_events() {
                properties.remove("notify_on");
            }
            if !gate.detach() {
                properties.remove("detach");
            }
            if !gate.placement() {
                properties.remove("labels");
            }
            shell_sandbox::fit_schema(properties, sandbox);
        }
        let background =
            BACKGROUND_DESCRIPTION.replace("{AFTER_START}", gate.exit_channel().after_start());
        let mut description = format!(
            "{}\n\n{background}",
            describe_shell(shell, gate.foreground_budget())
        );
        if gate.detach() {
            description.push_str(&format!("\n\n{DETACH_DESCRIPTION}"));
        }
        if gate.placement() {
            description.push_str(&format!("\n\n{LABELS_DESCRIPTION}"));
        }
        if gate.task_events() {
            description.push_str("\n\n");
            description.push_str(gate.exit_channel().events_paragraph());
        }
        if gate.terminals() {
            description.push_str(&format!("\n\n{TERMINAL_DESCRIPTION}"));
        } else if gate.task_input() {
            description.push_str(&format!("\n\n{INPUT_DESCRIPTION}"));
        }
        if let Some(paragraph) = shell_sandbox::paragraph(sandbox) {
            description.push_str(&format!("\n\n{paragraph}"));
        }
        ToolSpec {
            name: SHELL.to_owned(),
            description,
            input_schema,
            ..Self::metadata()
        }
    }

    fn spec_with(&self, view: &SpecView) -> ToolSpec {
        let shell = view.shell.as_deref();
        if self.allow_background && view.gate.allowed() {
            Self::background_spec(shell, &view.gate, &view.sandbox)
        } else {
            Self::foreground_spec(shell, &view.sandbox)
        }
    }

    async fn run_foreground(
        context: &ToolContext,
        command: &str,
        timeout: Option<Duration>,
        sandbox: SandboxScope,
    ) -> ToolOutput {
        let mut options = ExecOptions::new().cancel(context.cancel().clone());
        options.spec.sandbox = sandbox;
        if let Some(timeout) = timeout {
            options = options.timeout(timeout);
        }
        match context
            .execution()
            .exec(context.handle(), command, options)
            .await
        {
            Ok(output) => render_foreground(&output, timeout),
            Err(error) => ToolOutput::error(format!("{SHELL}: {error}")),
        }
    }

    async fn run_background(
        &self,
        context: &ToolContext,
        command: &str,
        budgets: TaskLimits,
        interaction: Interaction,
        notify_on: NotifyPatterns,
        outside: Outside<'_>,
    ) -> ToolOutput {
        let detach = interaction.detach;
        // The registry refuses these arguments before the call when the session's spec
        // leaves them out; a tool called directly meets the same refusals here.
        let gate = context.gate();
        let refused = |argument| {
            let reason = self.refusal(&gate, argument);
            reason.map(|reason| ToolOutput::error(format!("{SHELL}: {reason}")))
        };
        if let Some(refused) = refused("run_in_background") {
            return refused;
        }
        if detach && let Some(refused) = refused("detach") {
            return refused;
        }
        if !interaction.labels.is_empty()
            && let Some(refused) = refused("labels")
        {
            return refused;
        }
        let Some(tasks_dir) = context.background().tasks_dir.clone() else {
            return ToolOutput::error(format!(
                "{SHELL}: {}",
                background_unavailable(&GateReason::NoTasksDir.to_string(), "run_in_background")
            ));
        };
        if interaction.tty.is_some()
            && let Some(refused) = refused("tty")
        {
            return refused;
        }
        if interaction.takes_input()
            && let Some(refused) = refused("stdin")
        {
            return refused;
        }
        let events = match notify::events_for(context, &gate, &notify_on) {
            Ok(events) => events,
            Err(output) => return ToolOutput::error(format!("{SHELL}: {}", output.text)),
        };
        let sandbox = match outside.scope(context, command).await {
            Ok(sandbox) => sandbox,
            Err(output) => return output,
        };
        let mut options = BackgroundOptions::new(tasks_dir)
            .stdin(interaction.stdin)
            .detach(detach)
            .labels(interaction.labels.clone());
        options.spec.sandbox = sandbox;
        options.tty = interaction.tty;
        options.limits = budgets.or(context.background().limits);
        // With patterns, the exit waits until the follower is announced, so that the
        // session holds it for the task's events (see follow_gate.rs).
        let gate = match (&events, &context.sinks().on_exit) {
            (Some(_), Some(on_exit)) => Some(FollowGate::new(Arc::clone(on_exit))),
            _ => None,
        };
        options.on_exit = match &gate {
            Some(gate) => Some(gate.callback()),
            None => context.sinks().on_exit.clone(),
        };
        options.on_stall.clone_from(&context.sinks().on_stall);
        let started = match context
            .execution()
            .exec_background(context.handle(), command, options)
            .await
        {
            Ok(started) => started,
            Err(ContextError::Unsupported { .. }) if detach => {
                return ToolOutput::error(format!(
                    "{SHELL}: {DETACH_UNAVAILABLE} Drop `detach`, or run the task in the \
                     background of this session only."
                ));
            }
            Err(ContextError::Unsupported { .. }) => {
                return ToolOutput::error(format!(
                    "{SHELL}: background mode is not supported in this execution context. Run \
                     the command without `run_in_background`."
                ));
            }
            Err(error) => {
                return ToolOutput::error(format!(
                    "{SHELL}: could not start the background task: {error}"
                ));
            }
        };
        if let Some(on_start) = &context.sinks().on_start {
            on_start(&started, command);
        }
        notify::follow_started(context, events, started.task_id, notify_on);
        if let Some(gate) = gate {
            gate.open();
        }
        let detached = if detach {
            ", detached: keeps running after this session"
        } else {
            ""
        };
        let mut text = format!(
            "Started {} (pid {}{detached}). Output: {}\n\n{}",
            started.task_id,
            started.pid,
            started.output_path.display(),
            context.background().exit_channel.start_guidance()
        );
        if let Some(size) = interaction.tty {
            text.push_str(&format!(
                "\n\nIt runs in a {size} terminal: answer it with `shell_input`, see its screen \
                 with `shell_screen`."
            ));
        } else if interaction.takes_input() {
            text.push_str("\n\nIts stdin is open: answer it with `shell_input`.");
        }
        ToolOutput::ok(
            text,
            data::to_value(&ShellData {
                task_id: Some(started.task_id.to_string()),
                output_path: Some(started.output_path.display().to_string()),
                pid: Some(started.pid),
                ..ShellData::default()
            }),
        )
    }
}

#[async_trait]
impl Tool for ShellTool {
    fn spec(&self, view: &SpecView) -> ToolSpec {
        self.spec_with(view)
    }

    /// Every argument of the background spec under an open gate in a sandbox, whether
    /// this shell offers background mode or not: a forged `run_in_background` or
    /// `outside_sandbox` is then refused with the reason, never dropped as an argument
    /// the shell does not know.
    fn full_spec(&self) -> ToolSpec {
        let sandboxed = SandboxReport::new(SandboxPolicy::default(), SandboxStatus::Enforced);
        Self::background_spec(
            None,
            &BackgroundGate::open()
                .with_detach(true)
                .with_placement(true),
            &sandboxed,
        )
    }

    fn withheld(&self, argument: &str, view: &SpecView) -> String {
        shell_sandbox::withheld(argument)
            .or_else(|| self.refusal(&view.gate, argument))
            .unwrap_or_else(|| {
                format!("`{argument}` is not available in this session; nothing was run. Drop it.")
            })
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ShellArgs = match parse(SHELL, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        if input.command.trim().is_empty() {
            return ToolOutput::error(format!(
                "{SHELL}: `command` is empty; give the command to run"
            ));
        }
        if input.command.contains('\0') {
            return ToolOutput::error(format!(
                "{SHELL}: `command` contains a NUL byte, which no shell command can carry; \
                 remove it"
            ));
        }
        let timeout = match positive_ms("timeout_ms", input.timeout_ms) {
            Ok(timeout) => timeout,
            Err(output) => return output,
        };
        let cpu_time = match positive_ms("cpu_time_ms", input.cpu_time_ms) {
            Ok(cpu_time) => cpu_time,
            Err(output) => return output,
        };
        let max_output_bytes = match input.max_output_bytes {
            None => None,
            Some(bytes) => match u64::try_from(bytes) {
                Ok(bytes) if bytes > 0 => Some(bytes),
                _ => {
                    return ToolOutput::error(format!(
                        "{SHELL}: `max_output_bytes` must be a positive number of bytes, got \
                         {bytes}"
                    ));
                }
            },
        };
        let interaction = match Interaction::from_input(&input) {
            Ok(interaction) => interaction,
            Err(output) => return output,
        };
        let notify_on = match input.notify_on.as_ref().map(NotifyPatterns::parse) {
            None => NotifyPatterns::default(),
            Some(Ok(patterns)) => patterns,
            Some(Err(error)) => return ToolOutput::error(format!("{SHELL}: {error}")),
        };
        let outside = Outside {
            asked: input.outside_sandbox,
            justification: input.justification.as_deref(),
        };
        let detach = input.detach == Some(true);
        if detach && input.run_in_background == Some(false) {
            return ToolOutput::error(format!(
                "{SHELL}: `detach: true` starts a background task, and `run_in_background` is \
                 `false`: drop one of them (`detach` alone implies `run_in_background`)"
            ));
        }
        if input.run_in_background == Some(true) || detach {
            let budgets = TaskLimits::new()
                .max_output_bytes(max_output_bytes)
                .wall_time(timeout)
                .cpu_time(cpu_time);
            self.run_background(
                context,
                &input.command,
                budgets,
                interaction,
                notify_on,
                outside,
            )
            .await
        } else if cpu_time.is_some() || max_output_bytes.is_some() {
            ToolOutput::error(format!(
                "{SHELL}: `cpu_time_ms` and `max_output_bytes` are budgets of background \
                 tasks; a foreground command takes `timeout_ms` only. Drop them or set \
                 `run_in_background: true`."
            ))
        } else if input.notify_on.is_some() {
            ToolOutput::error(format!(
                "{SHELL}: `notify_on` tells you of lines a background task writes while it \
                 runs; a foreground command's output comes back whole when it ends. Drop it or \
                 set `run_in_background: true`."
            ))
        } else if input
            .labels
            .as_ref()
            .is_some_and(|labels| !labels.is_empty())
        {
            ToolOutput::error(format!(
                "{SHELL}: `labels` choose the worker a background task runs on; a foreground \
                 command runs where the session's commands run. Drop them or set \
                 `run_in_background: true`."
            ))
        } else if input.stdin.is_some() || input.tty.is_some() {
            ToolOutput::error(format!(
                "{SHELL}: `stdin` and `tty` are for background tasks, which you can type into \
                 with `shell_input`; a foreground command's stdin is closed. Drop them or set \
                 `run_in_background: true`."
            ))
        } else {
            let sandbox = match outside.scope(context, &input.command).await {
                Ok(sandbox) => sandbox,
                Err(output) => return output,
            };
            if let Some((budget, tasks_dir)) = self.move_budget(context, timeout)
                && let Some(output) = run_movable(
                    context,
                    &input.command,
                    timeout,
                    budget,
                    tasks_dir,
                    sandbox.clone(),
                )
                .await
            {
                return output;
            }
            Self::run_foreground(context, &input.command, timeout, sandbox).await
        }
    }
}

impl ShellTool {
    /// Why this shell cannot honour the background-only `argument` under `gate`, as the
    /// model reads it after "shell: ", or `None` when it can (or `argument` is not one
    /// of [`BACKGROUND_FIELDS`]).
    fn refusal(&self, gate: &BackgroundGate, argument: &str) -> Option<String> {
        if !BACKGROUND_FIELDS.contains(&argument) {
            return None;
        }
        if !self.allow_background {
            return Some(background_unavailable(
                "this shell tool does not offer it",
                argument,
            ));
        }
        if let Some(reason) = gate.reason() {
            return Some(background_unavailable(&reason.to_string(), argument));
        }
        match argument {
            "tty" | "rows" | "cols" if !gate.terminals() => Some(format!(
                "`{argument}` is not available: this execution context cannot run tasks in a \
                 terminal. Drop `{argument}`."
            )),
            "stdin" if !gate.task_input() => Some(
                "`stdin: \"pipe\"` is not available: this execution context cannot write to \
                 background tasks. Drop `stdin`, and pass the command its input another way (a \
                 here-string, a file, a non-interactive flag)."
                    .to_owned(),
            ),
            "notify_on" if !gate.task_events() => Some(notify::NOTIFY_ON_UNFOLLOWED.to_owned()),
            "detach" if !gate.detach() => Some(format!(
                "{DETACH_UNAVAILABLE} Drop `detach`: a background task of this session ends \
                 with it."
            )),
            "labels" if !gate.placement() => Some(
                "`labels` is not available: tasks here run on this one machine, not on a \
                 fleet of workers. Drop `labels`."
                    .to_owned(),
            ),
            _ => None,
        }
    }

    /// The move budget and tasks directory of a foreground call, when it may move to the
    /// background: the tool allows background, the session's gate is open with a budget,
    /// and `timeout_ms` (which kills) is not already within the budget.
    fn move_budget(
        &self,
        context: &ToolContext,
        timeout: Option<Duration>,
    ) -> Option<(Duration, std::path::PathBuf)> {
        if !self.allow_background {
            return None;
        }
        let budget = context.gate().foreground_budget()?;
        if timeout.is_some_and(|timeout| timeout <= budget) {
            return None;
        }
        Some((budget, context.background().tasks_dir.clone()?))
    }
}

/// Why `detach` cannot be honoured, as the model reads it after "shell: ".
const DETACH_UNAVAILABLE: &str = "`detach` is not available: this execution context cannot detach tasks (no supervisor keeps them after the host exits).";

/// Whether the model asked to run the command outside the sandbox, and why.
#[derive(Debug, Clone, Copy)]
struct Outside<'a> {
    asked: Option<bool>,
    justification: Option<&'a str>,
}

impl Outside<'_> {
    /// The sandbox the command runs in, once asked and answered: see
    /// [`shell_sandbox::scope`]. Called just before the command would start, after
    /// every other check, so that a person is never asked about a call that then fails.
    async fn scope(self, context: &ToolContext, command: &str) -> Result<SandboxScope, ToolOutput> {
        let chosen = shell_sandbox::scope(context, command, self.asked, self.justification)
            .await
            .map_err(|reason| ToolOutput::error(format!("{SHELL}: {reason}")))?;
        // Whatever zidane chose, never wider than the host's own sandbox.
        Ok(context.command_scope(chosen))
    }
}

/// A background task's input, terminal, lifetime and placement, as the model asked for
/// them.
#[derive(Debug, Clone, Default)]
struct Interaction {
    stdin: StdinMode,
    tty: Option<TtySize>,
    /// The task is to outlive the host (`detach`).
    detach: bool,
    /// The labels its worker must carry (`labels`), checked.
    labels: Vec<String>,
}

impl Interaction {
    fn takes_input(&self) -> bool {
        !self.stdin.is_closed() || self.tty.is_some()
    }

    /// `stdin`, `tty`, `rows` and `cols` checked: rows and columns only with a
    /// terminal, each within bounds.
    fn from_input(input: &ShellArgs) -> Result<Self, ToolOutput> {
        let stdin = match input.stdin {
            Some(StdinChoice::Pipe) => StdinMode::Pipe,
            Some(StdinChoice::Closed) | None => StdinMode::Closed,
        };
        let tty = input.tty == Some(true);
        if !tty && (input.rows.is_some() || input.cols.is_some()) {
            return Err(ToolOutput::error(format!(
                "{SHELL}: `rows` and `cols` are the size of a terminal; set `tty: true` too, or \
                 drop them"
            )));
        }
        if tty && stdin.is_closed() && input.stdin.is_some() {
            return Err(ToolOutput::error(format!(
                "{SHELL}: a terminal task always takes input; drop `stdin: \"closed\"` or \
                 `tty`"
            )));
        }
        let side = |field: &str, value: Option<i64>, default: u16| match value {
            None => Ok(default),
            Some(n) => u16::try_from(n)
                .ok()
                .filter(|n| (1..=TtySize::MAX_CELLS).contains(n))
                .ok_or_else(|| {
                    ToolOutput::error(format!(
                        "{SHELL}: `{field}` must be between 1 and {}, got {n}",
                        TtySize::MAX_CELLS
                    ))
                }),
        };
        let tty = if tty {
            Some(TtySize::new(
                side("rows", input.rows, TtySize::DEFAULT.rows)?,
                side("cols", input.cols, TtySize::DEFAULT.cols)?,
            ))
        } else {
            None
        };
        Ok(Self {
            stdin,
            tty,
            detach: input.detach == Some(true),
            labels: checked_labels(input.labels.as_deref().unwrap_or_default())?,
        })
    }
}

/// The labels the model gave, each a word of letters, digits, `-`, `_` or `.`, at most
/// [`MAX_LABELS`] of them; repeats dropped.
fn checked_labels(labels: &[String]) -> Result<Vec<String>, ToolOutput> {
    if labels.len() > MAX_LABELS {
        return Err(ToolOutput::error(format!(
            "{SHELL}: at most {MAX_LABELS} `labels`, got {}",
            labels.len()
        )));
    }
    let mut checked: Vec<String> = Vec::with_capacity(labels.len());
    for label in labels {
        if !zidane_context::is_label(label) {
            return Err(ToolOutput::error(format!(
                "{SHELL}: label {label:?} is not one: a label is 1 to {} ASCII letters, \
                 digits, `-`, `_` or `.`",
                zidane_context::MAX_LABEL_LEN
            )));
        }
        if !checked.contains(label) {
            checked.push(label.clone());
        }
    }
    Ok(checked)
}

/// A positive number of milliseconds the model gave for `field`, or the error.
fn positive_ms(field: &str, value: Option<i64>) -> Result<Option<Duration>, ToolOutput> {
    match value {
        None => Ok(None),
        Some(ms) => match u64::try_from(ms) {
            Ok(ms) if ms > 0 => Ok(Some(Duration::from_millis(ms))),
            _ => Err(ToolOutput::error(format!(
                "{SHELL}: `{field}` must be a positive number of milliseconds, got {ms}"
            ))),
        },
    }
}

/// The refusal of a background-only `argument` where background mode is not available,
/// for `reason`.
fn background_unavailable(reason: &str, argument: &str) -> String {
    format!("background mode is not available: {reason}. Run the command without `{argument}`.")
}

/// The model's view of a foreground run: output, then how it ended.
pub(crate) fn render_foreground(output: &ExecOutput, timeout: Option<Duration>) -> ToolOutput {
    let mut text = String::new();
    if output.truncated_bytes > 0 {
        text.push_str(&format!(
            "[{} bytes of earlier output dropped; showing the tail]\n",
            output.truncated_bytes
        ));
    }
    let body = output.output.trim_end_matches('\n');
    text.push_str(if body.is_empty() { "(no output)" } else { body });
    text.push_str("\n\n");
    let code = match output.signal {
        Some(signal) => format!("{} ({signal})", output.exit_code),
        None => output.exit_code.to_string(),
    };
    let interrupted = output.timed_out || output.cancelled;
    if output.timed_out {
        let after = timeout
            .map(|t| format!(" after {}", zidane_wire::format_duration(t)))
            .unwrap_or_default();
        text.push_str(&format!(
            "Timed out{after}: the command and every process it started were killed. Exit \
             code: {code}"
        ));
    } else if output.cancelled {
        text.push_str(&format!(
            "Cancelled: the command and every process it started were killed. Exit code: \
             {code}"
        ));
    } else {
        text.push_str(&format!("Exit code: {code}"));
    }
    let data = data::to_value(&ShellData {
        output: Some(output.output.clone()),
        exit_code: Some(output.exit_code),
        ..ShellData::default()
    });
    if interrupted {
        ToolOutput::error_with(text, data)
    } else {
        ToolOutput::ok(text, data)
    }
}

#[cfg(test)]
mod describe_tests {
    use super::describe_shell;

    #[test]
    fn the_shell_is_named_by_its_file_on_every_platform() {
        assert!(
            describe_shell(Some("/bin/bash"), None)
                .starts_with("Runs a bash command (`/bin/bash`)")
        );
        assert!(
            describe_shell(Some(r"C:\Windows\system32\cmd.exe"), None)
                .starts_with(r"Runs a cmd.exe command (`C:\Windows\system32\cmd.exe`)")
        );
    }
}
