//! Model providers for zidane agents: OpenAI-compatible chat completions and Anthropic
//! Messages, streamed, with tool calls, retries and cancellation.
//!
//! Each provider implements [`zidane_llm::Model`], the model seam (`zidane-agent`
//! re-exports it as `zidane_agent::Model`): hand it to `Agent::builder` and the agent
//! streams every model call — its hook bus's `subscribe_deltas` gets the text while it
//! is generated, each tool call as it starts, and the usage at the end.
//!
//! - [`OpenAi`] (feature `openai`): `POST {base}/chat/completions` — OpenAI,
//!   OpenRouter, vLLM, llama.cpp's `llama-server`, Ollama.
//! - [`Anthropic`] (feature `anthropic`): `POST {base}/v1/messages`, with the tool
//!   definitions and system prompt marked for prompt caching.
//! - [`from_env`]: one of them, from `ZIDANE_PROVIDER`, `ZIDANE_MODEL` and the
//!   provider's variables (their names are constants: [`PROVIDER_ENV`], [`MODEL_ENV`],
//!   …, all of them in [`PROVIDER_ENV_VARS`]); the error lists whatever is missing.
//! - `testing` (feature `testing`): a scripted provider server on 127.0.0.1 that
//!   replays fixtures in both protocols and records what it was sent.
//!
//! Requests time out (connect, first byte, between chunks), are retried with jittered
//! exponential backoff on 408/429/5xx and connection errors (honouring `retry-after`,
//! bounded in attempts and total time), and fail with a
//! [`ModelError::Request`](zidane_llm::ModelError::Request) that says what kind of
//! failure it was, with the HTTP status and a short excerpt of the body. A stream that
//! breaks the protocol, or grows past its size limits, is such an error too. Dropping a
//! call's future (a cancelled run) aborts its request. The API key never appears in
//! `Debug` output, errors or logs.
//!
//! ```
//! use std::sync::Arc;
//! use zidane_llm::Model;
//! use zidane_models::{HttpOptions, OpenAi, RetryPolicy};
//!
//! let model: Arc<dyn Model> = Arc::new(
//!     OpenAi::builder("gpt-4.1-mini")
//!         .api_key("sk-…")
//!         .http_options(HttpOptions::new().retry(RetryPolicy::attempts(3)))
//!         .build()?,
//! );
//! // zidane_agent::Agent::builder(model, context).build()? …
//! # drop(model);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "anthropic")]
#[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
pub use anthropic::{
    ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_DEFAULT_MAX_TOKENS, Anthropic, AnthropicBuilder,
};
pub use choice::ToolChoice;
pub use env::{
    ANTHROPIC_API_KEY_ENV, ANTHROPIC_BASE_URL_ENV, MODEL_ENV, OPENAI_API_KEY_ENV,
    OPENAI_BASE_URL_ENV, PROVIDER_ENV, PROVIDER_ENV_VARS, from_env,
};
pub use error::{BuildError, EnvError};
pub use key::ApiKey;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub use openai::{OPENAI_DEFAULT_BASE_URL, OpenAi, OpenAiBuilder};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(any(feature = "openai", feature = "anthropic"))))]
pub use options::{
    DEFAULT_BASE_DELAY, DEFAULT_CHUNK_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_DELAY, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RETRY_TIME,
    DEFAULT_MAX_STREAM_BYTES, HttpOptions, RetryPolicy,
};

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "http")]
mod assemble;
mod choice;
mod env;
mod error;
#[cfg(feature = "http")]
mod http;
mod key;
#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "http")]
mod options;
#[cfg(test)]
#[cfg(feature = "http")]
mod test_support;
