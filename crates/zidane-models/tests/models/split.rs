//! Wherever the stream is cut into chunks — inside an event, a line, a UTF-8 character —
//! the assembled response and the deltas' text are the same.

use std::time::Duration;

use proptest::prelude::*;
use zidane_llm::ModelResponse;
use zidane_models::testing::{Reply, ScriptedServer, fixtures};

use crate::support::{Provider, fast, prompt, recording_sink, streamed_text};

fn assemble(
    provider: Provider,
    stream: &str,
    cuts: &[usize],
    delay: bool,
) -> (ModelResponse, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = ScriptedServer::start().await.unwrap();
        let mut reply = Reply::sse(stream).split_at(cuts);
        if delay {
            // A pause between chunks so each reaches the client on its own.
            reply = reply.chunk_delay(Duration::from_millis(1));
        }
        server.push(reply);
        let (sink, deltas) = recording_sink();
        let http = fast().chunk_timeout(Duration::from_secs(5));
        let response = provider
            .model(&server, http)
            .stream(prompt("go"), &sink)
            .await
            .unwrap();
        let text = streamed_text(&deltas.lock().unwrap());
        (response, text)
    })
}

fn check(provider: Provider, stream: &str, cuts: &[usize]) {
    check_with(provider, stream, cuts, true);
}

fn check_with(provider: Provider, stream: &str, cuts: &[usize], delay: bool) {
    let (whole, whole_text) = assemble(provider, stream, &[], false);
    let (split, split_text) = assemble(provider, stream, cuts, delay);
    assert_eq!(split, whole);
    assert_eq!(split_text, whole_text);
    assert_eq!(split_text, whole.joined_text());
}

fn cuts(len: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1..len, 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn openai_text_is_the_same_for_every_split(cuts in cuts(fixtures::OPENAI_TEXT.len())) {
        check(Provider::OpenAi, fixtures::OPENAI_TEXT, &cuts);
    }

    #[test]
    fn openai_tool_calls_are_the_same_for_every_split(cuts in cuts(fixtures::OPENAI_TOOL_CALLS.len())) {
        check(Provider::OpenAi, fixtures::OPENAI_TOOL_CALLS, &cuts);
    }

    #[test]
    fn anthropic_text_is_the_same_for_every_split(cuts in cuts(fixtures::ANTHROPIC_TEXT.len())) {
        check(Provider::Anthropic, fixtures::ANTHROPIC_TEXT, &cuts);
    }

    #[test]
    fn anthropic_tool_use_is_the_same_for_every_split(cuts in cuts(fixtures::ANTHROPIC_TOOL_USE.len())) {
        check(Provider::Anthropic, fixtures::ANTHROPIC_TOOL_USE, &cuts);
    }
}

#[test]
fn a_cut_inside_a_multibyte_character_is_reassembled() {
    let at = fixtures::OPENAI_TEXT.find('—').unwrap() + 1;
    check(Provider::OpenAi, fixtures::OPENAI_TEXT, &[at]);
    let at = fixtures::ANTHROPIC_TEXT.find('✓').unwrap() + 2;
    check(Provider::Anthropic, fixtures::ANTHROPIC_TEXT, &[at]);
}

#[test]
fn one_byte_chunks_assemble_too() {
    let cuts: Vec<usize> = (1..fixtures::ANTHROPIC_TOOL_USE.len()).collect();
    // Thousands of chunks: sent as fast as they go.
    check_with(
        Provider::Anthropic,
        fixtures::ANTHROPIC_TOOL_USE,
        &cuts,
        false,
    );
}
