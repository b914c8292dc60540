//! Against a real OpenAI-compatible server (e.g. llama.cpp's `llama-server` with
//! SmolLM2-135M; see the crate README), when `ZIDANE_TEST_OPENAI_BASE_URL` is set. Not
//! part of CI: tiny local models answer, but rarely call tools.

#![allow(clippy::print_stderr)]

use zidane_llm::{Model, ModelDelta};
use zidane_models::{HttpOptions, OpenAi};

use crate::support::{prompt, recording_sink, streamed_text};

#[tokio::test]
async fn a_real_server_streams_text() {
    let Some(base_url) = std::env::var("ZIDANE_TEST_OPENAI_BASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
    else {
        eprintln!(
            "skipped: set ZIDANE_TEST_OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1) to run"
        );
        return;
    };
    let model_name = std::env::var("ZIDANE_TEST_OPENAI_MODEL").unwrap_or_else(|_| "local".into());
    let mut builder = OpenAi::builder(model_name)
        .base_url(base_url)
        .max_tokens(32)
        .http_options(HttpOptions::new());
    if let Ok(key) = std::env::var("ZIDANE_TEST_OPENAI_API_KEY") {
        builder = builder.api_key(key);
    }
    let model = builder.build().unwrap();
    let (sink, deltas) = recording_sink();
    let response = model
        .stream(prompt("Say hello in five words."), &sink)
        .await
        .unwrap();
    let deltas = deltas.lock().unwrap().clone();
    assert!(!response.joined_text().is_empty(), "{response:?}");
    assert_eq!(streamed_text(&deltas), response.joined_text());
    assert!(
        deltas
            .iter()
            .filter(|d| matches!(d, ModelDelta::Text(_)))
            .count()
            > 1,
        "the text came in several deltas: {deltas:?}"
    );
    eprintln!(
        "real server said: {:?}, usage {:?}",
        response.joined_text(),
        response.usage
    );
}
