//! The `Tool` trait and what crosses it: `ToolSpec` in, `ToolOutput` out.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use zidane_context::{ExecutionContext, SandboxReport};

use crate::context::ToolContext;
use crate::gate::BackgroundGate;

/// What a model is told of a tool: plain data, so it lives with the other model-facing
/// formats in `zidane-wire`, and the crates that only carry it need no tools.
pub use zidane_wire::{ToolAnnotations, ToolSpec};

/// What a tool's spec may depend on: the session's [`BackgroundGate`], the shell its
/// context runs commands under and the sandbox it runs them in. [`SpecView::default`]
/// is "no session": an open gate, no shell named, no sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SpecView {
    /// What background mode the session allows.
    pub gate: BackgroundGate,
    /// The shell commands run under ([`ExecutionContext::shell`]), when the context
    /// names one.
    pub shell: Option<String>,
    /// What the context's sandbox enforces ([`ExecutionContext::sandbox`]): the shell
    /// states it, and offers `outside_sandbox` where there is one.
    pub sandbox: SandboxReport,
}

impl Default for SpecView {
    fn default() -> Self {
        Self::new(BackgroundGate::open())
    }
}

impl SpecView {
    /// The view under `gate`, naming no shell, with no sandbox.
    pub fn new(gate: BackgroundGate) -> Self {
        Self {
            gate,
            shell: None,
            sandbox: SandboxReport::off(),
        }
    }

    /// The view under `gate` for commands run in `context`: what the agent shows the
    /// model.
    pub fn in_context(gate: BackgroundGate, context: &dyn ExecutionContext) -> Self {
        Self {
            gate,
            shell: context.shell(),
            sandbox: context.sandbox(),
        }
    }
}

/// A tool the model can call.
///
/// Used as `Arc<dyn Tool>` in a [`ToolRegistry`](crate::ToolRegistry). A call never
/// panics and never fails out of band: bad input, a refused operation or a context error
/// all come back as a [`ToolOutput`] with [`is_error`](ToolOutput::is_error) set and a
/// text that tells the model what to fix.
#[async_trait]
pub trait Tool: Send + Sync {
    /// What the tool is called, what it does and what input it takes, as the model sees
    /// it in `view`: under which background gate, with commands run under which shell.
    ///
    /// Most tools ignore the view. The builtin shell drops `run_in_background` and its
    /// paragraphs when the gate is closed, names the view's shell, so the model writes
    /// for the right dialect, and states its sandbox; `wait_task` says how a task's end reaches the model. A
    /// host's own tool — even one named `shell` — keeps its spec.
    fn spec(&self, view: &SpecView) -> ToolSpec;

    /// The spec with every argument the tool takes in some session, whatever a view
    /// offers. The registry tells by it an argument the tool withholds in a session
    /// (refused, with [`withheld`](Self::withheld)'s reason, and nothing runs) from one
    /// it never had (dropped with a note). The default is the spec in the widest view,
    /// [`SpecView::default`]; a tool that leaves arguments out in every view of some
    /// configuration (a shell built without background mode) says here what it left out.
    fn full_spec(&self) -> ToolSpec {
        self.spec(&SpecView::default())
    }

    /// Why the tool does not take `argument` in `view`: an argument its
    /// [`full_spec`](Self::full_spec) declares and its spec in `view` leaves out. The
    /// text is the refusal the model reads after the tool's name: the reason, then what
    /// to do instead.
    fn withheld(&self, argument: &str, view: &SpecView) -> String {
        let _ = view;
        format!("`{argument}` is not available in this session; nothing was run. Drop it.")
    }

    /// Whether the model is offered this tool at all under `gate`. The default is
    /// `true`; the tools that only work on a running background task that takes input
    /// (`shell_input`) or has a terminal (`shell_screen`) are left out when the gate
    /// says the session cannot have such a task.
    fn offered(&self, gate: &BackgroundGate) -> bool {
        let _ = gate;
        true
    }

    /// Runs the tool on `input` (the JSON the model sent).
    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput;
}

/// What a tool call returns: text for the model, structured data for hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model reads.
    pub text: String,
    /// Whether the call failed (the model sees it as an error result).
    pub is_error: bool,
    /// Structured data for hosts and hooks (`null` when there is none).
    pub data: serde_json::Value,
}

impl ToolOutput {
    /// A successful result with structured data.
    pub fn ok(text: impl Into<String>, data: serde_json::Value) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            data,
        }
    }

    /// An error result with no data.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            data: serde_json::Value::Null,
        }
    }

    /// An error result that still carries structured data.
    pub fn error_with(text: impl Into<String>, data: serde_json::Value) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            data,
        }
    }
}
