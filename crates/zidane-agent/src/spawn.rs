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
//! [`AgentBuilder::build`] lives here too, since building an agent binds its spawn tool.
//!
//! [`AgentBuilder::spawn_tool`]: crate::AgentBuilder::spawn_tool

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use zidane_tools::{SpecView, Tool, ToolAnnotations, ToolContext, ToolOutput, ToolSpec};

use crate::agent::Agent;
use crate::agent::Inner;
use crate::config::AgentBuilder;
use crate::error::Result;
use crate::run::StopReason;
use crate::spawn_options::{SPAWN, SpawnToolOptions};
use crate::subagent::{ChildReport, Subagent};

const DESCRIPTION: &str = "\
Runs a subagent: a fresh agent with your tools that works on `prompt` on its own and \
returns its final answer as the result of this call. The subagent sees nothing of this \
conversation, so make the prompt complete: the goal, the paths and facts it needs, and \
what its answer must contain. Use it for a self-contained piece of work whose details you \
do not need in your own context.

A background task the subagent starts outlives it and becomes yours: its answer names the \
task, the task is listed among yours (`shell_kill`, `wait_task` and `read_file` work on \
it), and a `<task-notification>` reaches you when it ends.";

/// The arguments of the `spawn` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    /// The subagent's task, complete in itself: it sees nothing of this conversation.
    pub prompt: String,
    /// A few words on what the subagent is for (e.g. "run the test suite"), shown to the
    /// user.
    pub description: Option<String>,
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

impl AgentBuilder {
    /// Builds the agent. Fails when two tools claim one name or alias, or when the
    /// session id cannot name a directory while a store is set.
    ///
    /// It is built here, beside the spawn tool, because that tool, if the builder asked
    /// for one, needs the agent it belongs to, which does not exist yet: it is
    /// registered unbound, after every other tool, and bound (weakly) once the agent is
    /// made.
    pub fn build(mut self) -> Result<Agent> {
        let spawn = self.spawn.take().map(SpawnTool::unbound);
        if let Some(spawn) = &spawn {
            self.extra_tools.push(Arc::clone(spawn) as Arc<dyn Tool>);
        }
        let agent = Agent::from_builder(self)?;
        if let Some(spawn) = spawn {
            spawn.bind(&agent);
        }
        Ok(agent)
    }
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
            input_schema: zidane_tools::input_schema::<SpawnArgs>(),
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
        let input: SpawnArgs = match parse(input) {
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
        let job = tokio::spawn(subagent.run(input.prompt, context.cancel().clone()));
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
fn parse(input: serde_json::Value) -> Result<SpawnArgs, ToolOutput> {
    if !input.is_object() {
        return Err(ToolOutput::error(format!(
            "{SPAWN}: invalid input: expected a JSON object like {{\"prompt\": \"…\"}}"
        )));
    }
    zidane_tools::parse_input(SPAWN, input)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_bad_input_names_the_field_and_what_it_takes() {
        for (input, expected) in [
            (
                json!({}),
                "spawn: `prompt` is missing: give the subagent's task, as a string",
            ),
            (
                json!({ "prompt": 5 }),
                "spawn: `prompt` must be the subagent's task, as a string, got 5",
            ),
            (
                json!({ "prompt": "go", "description": ["tests"] }),
                "spawn: `description` must be a string, got [\"tests\"]",
            ),
            (
                json!({ "prompt": "go", "promt": "go" }),
                "spawn: unknown field `promt`; did you mean `prompt`? The fields are: \
                 `description`, `prompt`.",
            ),
            (
                json!("go"),
                "spawn: invalid input: expected a JSON object like {\"prompt\": \"…\"}",
            ),
        ] {
            let refused = parse(input.clone()).expect_err("accepted a bad input");
            assert_eq!(refused.text, expected, "{input}");
            assert!(refused.is_error);
        }
    }
}
