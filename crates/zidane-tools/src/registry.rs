//! `ToolRegistry`: the tools of an agent, dispatched by name or alias.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::extra_arguments::{self, Schemas};
use crate::spec_cache::SpecCache;
use crate::tool::{SpecView, Tool, ToolOutput, ToolSpec};

/// The tools of an agent, in registration order, each reachable by its name and its
/// aliases. No two tools may claim one name or alias.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use zidane_context::{ExecutionContext, MockContext};
/// use zidane_tools::{BackgroundGate, ToolContext, ToolRegistry};
///
/// let registry = ToolRegistry::with_default_tools()?;
/// assert_eq!(
///     registry.names(),
///     ["shell", "shell_kill", "wait_task", "read_file", "shell_input", "shell_screen", "shell_notify"]
/// );
///
/// let mock = Arc::new(MockContext::new());
/// let handle = mock.create_handle().await?;
/// let context = ToolContext::new(mock, handle);
/// let output = registry.dispatch(&context, "bash_output", serde_json::json!({})).await;
/// assert!(output.is_error);
/// assert!(output.text.contains("shell, shell_kill, wait_task, read_file, shell_input"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    /// The input schema of each tool's [`full_spec`](Tool::full_spec), by index into
    /// `tools`: taken once, as it depends on no session.
    defined: Vec<Arc<serde_json::Value>>,
    /// Each tool's name, by index into `tools`.
    names: Vec<String>,
    /// Every name and alias → index into `tools`.
    by_name: HashMap<String, usize>,
    /// The tools' specs per view.
    specs: SpecCache,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding [`default_tools`](crate::default_tools).
    pub fn with_default_tools() -> Result<Self, ToolError> {
        let mut registry = Self::new();
        for tool in crate::default_tools() {
            registry.register(tool)?;
        }
        Ok(registry)
    }

    /// Adds a tool. Refused, leaving the registry unchanged, when its name or one of its
    /// aliases is empty, repeated within the tool, or already claimed by another tool.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), ToolError> {
        let spec = tool.spec(&SpecView::default());
        let mut claimed: Vec<&str> = Vec::with_capacity(1 + spec.aliases.len());
        for name in std::iter::once(&spec.name).chain(&spec.aliases) {
            let invalid = |reason| ToolError::InvalidName {
                tool: spec.name.clone(),
                name: name.clone(),
                reason,
            };
            if name.trim().is_empty() {
                return Err(invalid("a tool name cannot be empty"));
            }
            if claimed.contains(&name.as_str()) {
                return Err(invalid("the tool claims this name twice"));
            }
            if let Some(&owner) = self.by_name.get(name) {
                return Err(ToolError::NameTaken {
                    name: name.clone(),
                    owner: self.tools[owner].spec(&SpecView::default()).name,
                });
            }
            claimed.push(name);
        }
        let index = self.tools.len();
        for name in claimed {
            self.by_name.insert(name.to_owned(), index);
        }
        self.names.push(spec.name.clone());
        self.defined.push(Arc::new(tool.full_spec().input_schema));
        self.tools.push(tool);
        self.specs.clear();
        Ok(())
    }

    /// The tool answering to `name` (a name or an alias).
    pub fn resolve(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.by_name.get(name).map(|&i| Arc::clone(&self.tools[i]))
    }

    /// The specs the model sees in `view`, in registration order, of every tool
    /// [`offered`](Tool::offered) under its gate: what the agent sends the model.
    pub fn specs(&self, view: &SpecView) -> Vec<ToolSpec> {
        let built = self.specs.get(&self.tools, view);
        built
            .specs
            .iter()
            .zip(&built.offered)
            .filter(|(_, offered)| **offered)
            .map(|(spec, _)| spec.clone())
            .collect()
    }

    /// The tools' names (not aliases), in registration order.
    pub fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The name the tool answering to `name` (a name or an alias) is registered under;
    /// `None` for no such tool.
    pub fn name_of(&self, name: &str) -> Option<&str> {
        self.by_name.get(name).map(|&i| self.names[i].as_str())
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Calls the tool answering to `name`; an unknown name is an error result listing
    /// the tools there are. Arguments the tool does not offer in the context's session
    /// are handled here, once for every tool: one the tool defines but withholds here
    /// (its [`full_spec`](Tool::full_spec) has it, its spec in the session's view does
    /// not) is refused with the tool's [`withheld`](Tool::withheld) reason and nothing
    /// runs; of the others, one a host adds is dropped, a misspelling of a declared one
    /// is refused by name, any other is dropped and named in a note at the end of the
    /// result.
    pub async fn dispatch(
        &self,
        context: &ToolContext,
        name: &str,
        mut input: serde_json::Value,
    ) -> ToolOutput {
        let Some(&index) = self.by_name.get(name) else {
            return ToolOutput::error(self.unknown_tool(name));
        };
        let tool = &self.tools[index];
        let view = SpecView::in_context(context.gate(), context.execution().as_ref());
        let built = self.specs.get(&self.tools, &view);
        let spec = &built.specs[index];
        let schemas = Schemas {
            offered: &spec.input_schema,
            defined: &self.defined[index],
        };
        let withheld = |argument: &str| tool.withheld(argument, &view);
        let stripped = match extra_arguments::strip(&spec.name, schemas, withheld, &mut input) {
            Ok(stripped) => stripped,
            Err(message) => return ToolOutput::error(message),
        };
        let mut output = tool.call(context, input).await;
        if let Some(note) = stripped.note(&spec.name) {
            if !output.text.is_empty() && !output.text.ends_with('\n') {
                output.text.push('\n');
            }
            output.text.push_str(&note);
        }
        output
    }

    fn unknown_tool(&self, name: &str) -> String {
        let names = self.names();
        if names.is_empty() {
            format!("unknown tool `{name}`: no tools are available")
        } else {
            format!(
                "unknown tool `{name}`. Available tools: {}.",
                names.join(", ")
            )
        }
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}
