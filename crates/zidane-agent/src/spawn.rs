//! The `spawn` tool: the model runs a subagent and gets its final answer back.
//!
//! The tool belongs to one agent — the parent — and reaches it through a weak
//! reference, bound when the parent is built ([`AgentBuilder::spawn_tool`]) or by
//! [`create_spawn_tool`]. Weak, because the parent owns its tools: a strong reference
//! would be a cycle and the parent would never be freed. While a child runs, its task
//! holds the parent strongly; that ends with the child.
//!
//! What happens to the child's background tasks when it ends lives in
//! [`subagent`](crate::subagent).
//!
//! [`AgentBuilder::spawn_tool`]: crate::AgentBuilder::spawn_tool

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use zidane_tools::{SpecView, Tool, ToolAnnotations, ToolContext, ToolOutput, ToolSpec};

use crate::agent::Agent;
use crate::agent::Inner;
use crate::config::{AgentBuilder, Behavior};
use crate::error::Result;
use crate::run::StopReason;
use crate::subagent::{ChildReport, Subagent};
use zidane_llm::Model;

/// The name of the spawn tool.
pub const SPAWN: &str = "spawn";

/// How deep subagents may nest by default: a top-level agent is depth 0, its children
/// depth 1, and a subagent at depth 3 cannot spawn another.
pub const DEFAULT_MAX_SPAWN_DEPTH: usize = 3;

const DESCRIPTION: &str = "\
Runs a subagent: a fresh agent with your tools that works on `prompt` on its own and \
returns its final answer as the result of this call. The subagent sees nothing of this \
conversation, so make the prompt complete: the goal, the paths and facts it needs, and \
what its answer must contain. Use it for a self-contained piece of work whose details you \
do not need in your own context.

A background task the subagent starts outlives it and becomes yours: its answer names the \
task, the task is listed among yours (`shell_kill`, `wait_task` and `read_file` work on \
it), and a `<task-notification>` reaches you when it ends.";

/// Input of the `spawn` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnInput {
    /// The subagent's task, complete in itself: it sees nothing of this conversation.
    pub prompt: String,
    /// A few words on what the subagent is for (e.g. "run the test suite"), shown to the
    /// user.
    pub description: Option<String>,
}

/// How a `spawn` tool runs its subagents.
///
/// ```
/// use zidane_agent::{DEFAULT_MAX_SPAWN_DEPTH, SpawnToolOptions};
///
/// let options = SpawnToolOptions::new().max_depth(1).share_handle(true);
/// assert!(options.share_handle);
/// assert_eq!(SpawnToolOptions::new().max_depth, DEFAULT_MAX_SPAWN_DEPTH);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct SpawnToolOptions {
    /// The child's model. `None`: the parent's.
    pub model: Option<Arc<dyn Model>>,
    /// The child's tools. `None`: the parent's. Either way the child's `shell` is told
    /// that a background task outlives it, and the child gets a `spawn` tool of its own
    /// (bound to it, with these options) in place of any tool named `spawn`.
    pub tools: Option<Vec<Arc<dyn Tool>>>,
    /// Run the child on the parent's execution handle instead of its own. Its tasks are
    /// then the parent's from the start: nothing is reassigned, and the child never
    /// destroys the handle.
    pub share_handle: bool,
    /// The deepest a subagent may be (a top-level agent is 0). A spawn past it is an
    /// error result.
    pub max_depth: usize,
    /// The child's behaviour. `None`: the parent's. A behaviour without a tasks dir
    /// gets the parent's, so the child's task logs sit beside the parent's.
    pub behavior: Option<Behavior>,
}

impl Default for SpawnToolOptions {
    fn default() -> Self {
        Self {
            model: None,
            tools: None,
            share_handle: false,
            max_depth: DEFAULT_MAX_SPAWN_DEPTH,
            behavior: None,
        }
    }
}

impl SpawnToolOptions {
    /// The defaults: the parent's model, tools and behaviour, an own handle,
    /// [`DEFAULT_MAX_SPAWN_DEPTH`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the child's model.
    #[must_use]
    pub fn model(mut self, model: Arc<dyn Model>) -> Self {
        self.model = Some(model);
        self
    }

    /// Sets the child's tools.
    #[must_use]
    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Runs the child on the parent's handle (`true`) or its own (`false`, the default).
    #[must_use]
    pub fn share_handle(mut self, share: bool) -> Self {
        self.share_handle = share;
        self
    }

    /// Sets the depth cap.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets the child's behaviour.
    #[must_use]
    pub fn behavior(mut self, behavior: Behavior) -> Self {
        self.behavior = Some(behavior);
        self
    }
}

impl fmt::Debug for SpawnToolOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpawnToolOptions")
            .field("model", &self.model.as_ref().map(|_| "Model"))
            .field(
                "tools",
                &self.tools.as_ref().map(|tools| {
                    tools
                        .iter()
                        .map(|t| t.spec(&zidane_tools::SpecView::default()).name)
                        .collect::<Vec<_>>()
                }),
            )
            .field("share_handle", &self.share_handle)
            .field("max_depth", &self.max_depth)
            .field("behavior", &self.behavior)
            .finish()
    }
}

/// A `spawn` tool bound to `parent` (weakly: the tool never keeps it alive).
///
/// An agent's own spawn tool comes from [`AgentBuilder::spawn_tool`], since an agent's
/// tools are fixed when it is built; this factory is for hosts that dispatch tools
/// themselves (with a [`ToolContext`] on the parent's handle). A call after the parent
/// is gone is an error result.
///
/// [`AgentBuilder::spawn_tool`]: crate::AgentBuilder::spawn_tool
pub fn create_spawn_tool(parent: &Agent, options: SpawnToolOptions) -> Arc<dyn Tool> {
    let tool = SpawnTool::unbound(options);
    tool.bind(parent);
    tool
}

/// Builds the agent `builder` describes. The spawn tool, if it asked for one, needs the
/// agent it belongs to, which does not exist yet: it is registered unbound, after every
/// other tool, and bound (weakly) once the agent is made.
pub(crate) fn build_with_spawn_tool(mut builder: AgentBuilder) -> Result<Agent> {
    let spawn = builder.spawn.take().map(SpawnTool::unbound);
    if let Some(spawn) = &spawn {
        builder.extra_tools.push(Arc::clone(spawn) as Arc<dyn Tool>);
    }
    let agent = Agent::from_builder(builder)?;
    if let Some(spawn) = spawn {
        spawn.bind(&agent);
    }
    Ok(agent)
}

/// The spawn tool: a weak link to its parent, and the options its children inherit.
pub(crate) struct SpawnTool {
    parent: OnceLock<Weak<Inner>>,
    options: SpawnToolOptions,
    /// Children spawned so far, to number their ids.
    spawned: AtomicU64,
}

impl SpawnTool {
    /// A tool not bound to any agent yet: it answers every call with an error until
    /// [`bind`](Self::bind).
    pub(crate) fn unbound(options: SpawnToolOptions) -> Arc<Self> {
        Arc::new(Self {
            parent: OnceLock::new(),
            options,
            spawned: AtomicU64::new(0),
        })
    }

    /// Binds the tool to its parent. Only the first binding counts.
    pub(crate) fn bind(&self, parent: &Agent) {
        let _ = self.parent.set(Arc::downgrade(&parent.inner));
    }

    fn parent(&self) -> Option<Agent> {
        let inner = self.parent.get()?.upgrade()?;
        Some(Agent { inner })
    }
}

#[async_trait]
impl Tool for SpawnTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: SPAWN.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: zidane_tools::input_schema::<SpawnInput>(),
            aliases: Vec::new(),
            title: Some("Hand a task to a subagent".to_owned()),
            // The subagent runs commands of its own, as `shell` does.
            annotations: ToolAnnotations {
                read_only: None,
                destructive: Some(true),
                idempotent: None,
                open_world: Some(true),
            },
            output_schema: None,
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: SpawnInput = match parse(input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        if input.prompt.trim().is_empty() {
            return ToolOutput::error(format!(
                "{SPAWN}: `prompt` is empty; give the subagent its task"
            ));
        }
        let Some(parent) = self.parent() else {
            return ToolOutput::error(format!(
                "{SPAWN}: the agent this tool belongs to is gone; no subagent was started"
            ));
        };
        let depth = parent.depth() + 1;
        if depth > self.options.max_depth {
            return ToolOutput::error(format!(
                "{SPAWN}: cannot start a subagent at depth {depth}: subagents may nest at \
                 most {} deep. Do this work yourself.",
                self.options.max_depth
            ));
        }
        let n = self.spawned.fetch_add(1, Ordering::Relaxed) + 1;
        let child_id = format!("{}.{n}", parent.id());
        let subagent = match Subagent::build(&parent, &self.options, child_id, depth, context) {
            Ok(subagent) => subagent,
            Err(error) => {
                return ToolOutput::error(format!(
                    "{SPAWN}: could not build the subagent: {error}"
                ));
            }
        };
        let child_id = subagent.child_id().to_owned();
        tracing::debug!(%child_id, depth, description = ?input.description, "spawning a subagent");
        // The child lives in its own task: if this call is abandoned (the parent's run
        // gave up on it after a cancel), the child still hands its tasks over and is
        // destroyed, instead of leaking its handle.
        let job = tokio::spawn(subagent.run(input.prompt, context.cancel.clone()));
        match job.await {
            Ok(report) => render(&report, depth, input.description.as_deref()),
            Err(join) => ToolOutput::error_with(
                format!("{SPAWN}: the subagent {child_id} panicked: {join}"),
                json!({ "child_id": child_id, "depth": depth }),
            ),
        }
    }
}

/// The model's view of a finished child: its answer, then the tasks it left running.
fn render(report: &ChildReport, depth: usize, description: Option<&str>) -> ToolOutput {
    let tasks: Vec<serde_json::Value> = report
        .left_running
        .iter()
        .map(|task| {
            json!({
                "task_id": task.task_id.to_string(),
                "command": task.command,
                "output_path": task.output_path.display().to_string(),
                "pid": task.pid,
            })
        })
        .collect();
    let (stop, steps, answer) = match &report.outcome {
        Ok(outcome) => (stop_name(outcome.stop), outcome.steps, outcome.text.trim()),
        Err(_) => ("error", 0, ""),
    };
    let data = json!({
        "child_id": report.child_id,
        "depth": depth,
        "description": description,
        "stop": stop,
        "steps": steps,
        "shared_handle": report.shared_handle,
        "tasks": tasks,
    });
    let mut text = match &report.outcome {
        Ok(outcome) => match outcome.stop {
            StopReason::EndTurn if answer.is_empty() => {
                "(the subagent ended without an answer)".to_owned()
            }
            StopReason::EndTurn => answer.to_owned(),
            StopReason::MaxSteps => {
                format!("[the subagent stopped at its step limit; its last words follow]\n{answer}")
            }
            StopReason::Cancelled => {
                format!("{SPAWN}: the subagent was cancelled before it answered")
            }
        },
        Err(error) => format!("{SPAWN}: the subagent failed: {error}"),
    };
    if !report.left_running.is_empty() {
        text.push_str(
            "\n\nBackground tasks the subagent left running are now yours; a \
             <task-notification> reaches you when each ends:",
        );
        for task in &report.left_running {
            text.push_str(&format!(
                "\n- {} ({}) — log: {}",
                task.task_id,
                zidane_wire::command_preview(&task.command),
                task.output_path.display()
            ));
        }
    }
    let failed = match &report.outcome {
        Ok(outcome) => !matches!(outcome.stop, StopReason::EndTurn | StopReason::MaxSteps),
        Err(_) => true,
    };
    if failed {
        ToolOutput::error_with(text, data)
    } else {
        ToolOutput::ok(text, data)
    }
}

fn stop_name(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxSteps => "max_steps",
        StopReason::Cancelled => "cancelled",
    }
}

/// Deserialises the model's input, or an error result that says what to fix.
fn parse(input: serde_json::Value) -> Result<SpawnInput, ToolOutput> {
    if !input.is_object() {
        return Err(ToolOutput::error(format!(
            "{SPAWN}: invalid input: expected a JSON object like {{\"prompt\": \"…\"}}"
        )));
    }
    serde_json::from_value(input)
        .map_err(|error| ToolOutput::error(format!("{SPAWN}: invalid input: {error}")))
}
