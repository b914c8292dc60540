//! What a host usually names, in one import: `use zidane::prelude::*;`.
//!
//! The agent and its builder, the model seam, sessions, the wake loop, the hook and
//! stream events a host paints, the banner, and the context types a host sees in those
//! events. Everything else is one module away (`zidane::agent::…`, `zidane::wire::…`).

pub use zidane_agent::{
    Agent, AgentBuilder, AgentError, Behavior, HookEvent, Model, ModelError, ModelRequest,
    ModelResponse, RunOptions, RunOutcome, ScriptedModel, Session, SessionStore, StopReason,
    WakeLoop, WakeReport, WakeTrigger,
};
pub use zidane_context::{ExecutionContext, TaskExitInfo, TaskId, TaskStatus};
#[cfg(all(feature = "process", unix))]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use zidane_process::ProcessContext;
pub use zidane_wire::{Banner, StreamEvent, TaskNotification, Tone};

#[cfg(all(feature = "process", unix))]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use crate::{LocalAgentBuilder, local_agent};
