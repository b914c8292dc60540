//! Providers pointed at a scripted server, with short timeouts and quick retries.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zidane_llm::{DeltaSink, Model, ModelDelta, ModelRequest};
use zidane_models::testing::ScriptedServer;
use zidane_models::{Anthropic, HttpOptions, OpenAi, RetryPolicy};
use zidane_wire::{ContentBlock, Role, Turn};

/// Longest a test waits for something that should happen.
pub const WAIT: Duration = Duration::from_secs(5);

/// Short timeouts and quick retries, so error paths are tested in milliseconds.
pub fn fast() -> HttpOptions {
    HttpOptions::new()
        .first_byte_timeout(Duration::from_millis(500))
        .chunk_timeout(Duration::from_millis(300))
        .retry(
            RetryPolicy::attempts(3)
                .backoff(Duration::from_millis(10), Duration::from_millis(50))
                .max_total(Duration::from_secs(3)),
        )
}

pub fn openai(server: &ScriptedServer, http: HttpOptions) -> OpenAi {
    OpenAi::builder("gpt-test")
        .base_url(server.url("/v1"))
        .api_key("sk-test-key")
        .http_options(http)
        .build()
        .unwrap()
}

pub fn anthropic(server: &ScriptedServer, http: HttpOptions) -> Anthropic {
    Anthropic::builder("claude-test")
        .base_url(server.url(""))
        .api_key("sk-ant-test-key")
        .http_options(http)
        .build()
        .unwrap()
}

/// Which provider a test drives, for tests that run alike against both.
#[derive(Debug, Clone, Copy)]
pub enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    /// The provider, pointed at `server`.
    pub fn model(self, server: &ScriptedServer, http: HttpOptions) -> Arc<dyn Model> {
        match self {
            Provider::OpenAi => Arc::new(openai(server, http)),
            Provider::Anthropic => Arc::new(anthropic(server, http)),
        }
    }
}

/// A request of one prompt, no tools.
pub fn prompt(text: &str) -> ModelRequest {
    ModelRequest {
        system: None,
        turns: vec![Turn {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: text.to_owned(),
            }],
        }],
        tools: vec![],
    }
}

/// A sink that records every delta.
pub fn recording_sink() -> (DeltaSink, Arc<Mutex<Vec<ModelDelta>>>) {
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let seen = deltas.clone();
    let sink = DeltaSink::new(move |delta| seen.lock().unwrap().push(delta.clone()));
    (sink, deltas)
}

/// The text deltas, joined.
pub fn streamed_text(deltas: &[ModelDelta]) -> String {
    deltas
        .iter()
        .filter_map(|delta| match delta {
            ModelDelta::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
