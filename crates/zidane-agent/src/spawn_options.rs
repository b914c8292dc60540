//! How a `spawn` tool runs its subagents ([`SpawnToolOptions`]), and the tool's name.
//! The agent's builder holds these options; the tool itself lives in
//! [`spawn`](crate::spawn).

use std::fmt;
use std::sync::Arc;

use zidane_tools::Tool;

use crate::config::Behavior;
use zidane_llm::Model;

/// The name of the spawn tool.
pub const SPAWN: &str = "spawn";

/// How deep subagents may nest by default: a top-level agent is depth 0, its children
/// depth 1, and a subagent at depth 3 cannot spawn another.
pub const DEFAULT_MAX_SPAWN_DEPTH: usize = 3;

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
