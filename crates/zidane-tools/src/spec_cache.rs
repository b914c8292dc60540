//! The specs of a registry's tools, built once per view.
//!
//! A tool's spec depends on the view alone ([`Tool::spec`]), yet building one derives
//! its schemas again, and a session asks for the same few views on every model request
//! and every call. So a registry keeps, per view, every tool's spec and whether it is
//! offered there; the model's request and dispatch's argument check read them from
//! here. The plain path — asking each tool — gives the same specs (tested below).
//!
//! [`Tool::spec`]: crate::Tool::spec

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::tool::{SpecView, Tool, ToolSpec};

/// The most views kept; a registry whose sessions ask for more starts over.
const MAX_VIEWS: usize = 16;

/// Every tool's spec in one view, in registration order.
#[derive(Debug)]
pub(crate) struct ViewSpecs {
    /// Each tool's spec in the view.
    pub(crate) specs: Vec<ToolSpec>,
    /// Whether each tool is offered in the view ([`Tool::offered`]).
    pub(crate) offered: Vec<bool>,
}

/// The views built so far. A clone starts empty: a cloned registry may register other
/// tools.
#[derive(Debug, Default)]
pub(crate) struct SpecCache {
    views: Mutex<HashMap<SpecView, Arc<ViewSpecs>>>,
}

impl Clone for SpecCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl SpecCache {
    /// The specs of `tools` in `view`, built now if this view is new.
    pub(crate) fn get(&self, tools: &[Arc<dyn Tool>], view: &SpecView) -> Arc<ViewSpecs> {
        if let Some(built) = zidane_context::lock(&self.views).get(view) {
            return Arc::clone(built);
        }
        // Built outside the lock: a tool's own code runs here.
        let built = Arc::new(build(tools, view));
        let mut views = zidane_context::lock(&self.views);
        if views.len() >= MAX_VIEWS {
            views.clear();
        }
        views.insert(view.clone(), Arc::clone(&built));
        built
    }

    /// Forgets every view: the tools changed.
    pub(crate) fn clear(&mut self) {
        zidane_context::lock(&self.views).clear();
    }
}

/// Every tool's spec in `view`, asked of each tool: the plain path.
fn build(tools: &[Arc<dyn Tool>], view: &SpecView) -> ViewSpecs {
    ViewSpecs {
        specs: tools.iter().map(|tool| tool.spec(view)).collect(),
        offered: tools.iter().map(|tool| tool.offered(&view.gate)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zidane_context::{SandboxPolicy, SandboxReport, SandboxStatus};

    use crate::exit_channel::ExitChannel;
    use crate::gate::{BackgroundGate, GateReason};
    use crate::shell::{ShellToolOptions, create_shell_tool};

    use super::*;

    /// Tools whose specs or offers change with the view: the shell's schema and text (its
    /// sandbox among them),
    /// the wait's text, the input tool's offer.
    fn default_tools() -> Vec<Arc<dyn Tool>> {
        vec![
            create_shell_tool(ShellToolOptions::default()),
            Arc::new(crate::wait_task::WaitTaskTool),
            Arc::new(crate::shell_input::ShellInputTool),
        ]
    }

    fn views() -> Vec<SpecView> {
        let mut views = Vec::new();
        for gate in [
            BackgroundGate::open(),
            BackgroundGate::open_without_input(),
            BackgroundGate::closed(GateReason::Disabled),
            BackgroundGate::open().with_exit_channel(ExitChannel::NextToolResult),
            BackgroundGate::open().with_foreground_budget(Some(Duration::from_secs(50))),
        ] {
            for shell in [None, Some("/bin/bash".to_owned())] {
                for sandbox in [
                    SandboxReport::off(),
                    SandboxReport::new(
                        SandboxPolicy::workspace_write("/w"),
                        SandboxStatus::Enforced,
                    ),
                ] {
                    views.push(SpecView {
                        gate,
                        shell: shell.clone(),
                        sandbox,
                    });
                }
            }
        }
        views
    }

    #[test]
    fn cached_specs_are_the_specs_each_tool_gives() {
        let tools = default_tools();
        let cache = SpecCache::default();
        for _ in 0..2 {
            for view in views() {
                let cached = cache.get(&tools, &view);
                for (index, tool) in tools.iter().enumerate() {
                    assert_eq!(cached.specs[index], tool.spec(&view), "{view:?}");
                    assert_eq!(cached.offered[index], tool.offered(&view.gate));
                }
            }
        }
    }

    #[test]
    fn more_views_than_kept_start_over_and_stay_right() {
        let tools = default_tools();
        let cache = SpecCache::default();
        for budget in 1..=(MAX_VIEWS as u64 * 2) {
            let gate =
                BackgroundGate::open().with_foreground_budget(Some(Duration::from_secs(budget)));
            let view = SpecView::new(gate);
            assert_eq!(cache.get(&tools, &view).specs[0], tools[0].spec(&view));
        }
        assert!(zidane_context::lock(&cache.views).len() <= MAX_VIEWS);
    }
}
