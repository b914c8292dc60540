//! The model seam of zidane: what crosses between an agent and a language model.
//!
//! An agent (`zidane-agent`) asks a [`Model`] for one step of the conversation at a
//! time: a [`ModelRequest`] (system prompt, the session's turns, the tools the model may
//! call) goes in, a [`ModelResponse`] (text and tool uses, [`Usage`], a
//! [`FinishReason`]) comes out, and [`ModelDelta`]s reach a [`DeltaSink`] while it is
//! generated. A failure is a [`ModelError`]; a provider's says what kind of failure it
//! was ([`ModelErrorKind`]) and carries its cause as an [`ErrorSource`].
//!
//! This crate is that seam and nothing more, so a provider (`zidane-models`, or a
//! client of your own) depends on it rather than on the agent, and an agent depends on
//! no provider. Its only zidane dependency is `zidane-wire`, whose session content
//! model ([`Turn`], [`ContentBlock`]) and [`ToolSpec`] the requests and responses are
//! made of; those are re-exported here. Most users want the `zidane` facade, or
//! `zidane-agent`, which re-exports all of this under the same names.
//!
//! A model of your own is an `impl Model` with `#[async_trait]` (re-exported here):
//!
//! ```
//! use std::sync::{Arc, mpsc};
//! use zidane_llm::{
//!     async_trait, ContentBlock, DeltaSink, Model, ModelDelta, ModelError, ModelRequest,
//!     ModelResponse, Turn,
//! };
//!
//! /// Answers every request by repeating the prompt (your LLM client goes here).
//! struct Echo;
//!
//! #[async_trait]
//! impl Model for Echo {
//!     async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
//!         Ok(ModelResponse::text(format!("you said: {}", request.prompt())))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let model: Arc<dyn Model> = Arc::new(Echo);
//! let request = ModelRequest {
//!     system: None,
//!     turns: vec![Turn::user(vec![ContentBlock::text("hello")])],
//!     tools: Vec::new(),
//! };
//! // The agent streams every call; a model that only has whole responses keeps the
//! // default `stream`, which hands the finished response to the sink as deltas.
//! let (sent, seen) = mpsc::channel();
//! let sink = DeltaSink::new(move |delta: &ModelDelta| {
//!     let _ = sent.send(delta.clone());
//! });
//! let response = model.stream(request, &sink).await?;
//! assert_eq!(response.joined_text(), "you said: hello");
//! assert!(!response.has_tool_uses()); // no tool uses: the agent's run ends here
//! assert_eq!(
//!     seen.try_iter().collect::<Vec<_>>(),
//!     vec![ModelDelta::Text("you said: hello".into())]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The attribute a [`Model`] implementation needs on its `impl` block (re-exported so
/// implementors need no `async-trait` dependency of their own).
pub use async_trait::async_trait;
pub use error_chain::error_chain;
pub use model::{
    DeltaSink, ErrorSource, FinishReason, Model, ModelDelta, ModelError, ModelErrorKind,
    ModelRequest, ModelResponse, Usage,
};
/// The `zidane-wire` types requests and responses are made of, re-exported so that an
/// implementor needs no `zidane-wire` dependency of its own.
pub use zidane_wire::{ContentBlock, Role, TaskNotification, TaskStall, ToolSpec, Turn};

mod error_chain;
mod model;

/// This crate's README, run as a doc test: its example compiles with `zidane-llm`
/// alone.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
