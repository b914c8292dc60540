//! What a host usually names, in one import: `use zidane::prelude::*;`.
//!
//! The agent and its builder, the model seam (with the `#[async_trait]` attribute an
//! implementation needs), sessions and their listing, the wake loop, the turns and
//! blocks a run appends, the hook and stream events a host paints, the painter and the
//! banner, and the context types a host sees in those events. Everything else is one
//! module away (`zidane::agent::…`, `zidane::wire::…`).

pub use zidane_agent::{
    Agent, AgentBuilder, AgentError, Behavior, HookEvent, Model, ModelError, ModelRequest,
    ModelResponse, RunOptions, RunOutcome, ScriptedModel, Session, SessionListing, SessionStore,
    SessionSummary, StopReason, WakeLoop, WakeReport, WakeTrigger, async_trait,
};
pub use zidane_context::{ExecutionContext, TaskExitInfo, TaskId, TaskStatus};
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use zidane_process::{ProcessContext, Shell};
pub use zidane_wire::{
    Banner, ContentBlock, Painter, Role, StreamEvent, TaskNotification, Tone, Turn,
};

#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use crate::{LocalAgentBuilder, local_agent};
