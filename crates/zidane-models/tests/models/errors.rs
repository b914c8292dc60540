//! Error statuses, retries, timeouts, broken and oversized streams: each a typed error
//! or a retry, never a panic or a hang.

use std::time::{Duration, Instant};

use zidane_llm::{Model, ModelError, ModelErrorKind};
use zidane_models::testing::{Reply, ScriptedServer, fixtures};
use zidane_models::{HttpOptions, RetryPolicy};

use crate::support::{anthropic, fast, openai, prompt};

const RATE_LIMITED: &str = r#"{"error":{"message":"Rate limit reached for gpt-test","type":"requests","code":"rate_limit_exceeded"}}"#;

async fn openai_error(server: &ScriptedServer, http: HttpOptions) -> ModelError {
    openai(server, http)
        .complete(prompt("go"))
        .await
        .unwrap_err()
}

async fn anthropic_error(server: &ScriptedServer, http: HttpOptions) -> ModelError {
    anthropic(server, http)
        .complete(prompt("go"))
        .await
        .unwrap_err()
}

fn status(error: &ModelError) -> Option<u16> {
    match error {
        ModelError::Request { status, .. } => *status,
        _ => None,
    }
}

#[tokio::test]
async fn a_429_is_retried_after_what_retry_after_says() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::json(429, RATE_LIMITED).header("retry-after", "0.3"));
    server.push(Reply::sse(fixtures::OPENAI_TEXT));
    let started = Instant::now();
    let response = openai(&server, fast())
        .complete(prompt("go"))
        .await
        .unwrap();
    assert!(response.joined_text().starts_with("The build passed"));
    assert_eq!(server.requests().len(), 2);
    // The backoff alone (at most 50 ms) would have retried sooner.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn retry_after_ms_wins_over_retry_after() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(
        Reply::json(503, "overloaded")
            .header("retry-after", "60")
            .header("retry-after-ms", "20"),
    );
    server.push(Reply::sse(fixtures::ANTHROPIC_TEXT));
    anthropic(&server, fast())
        .complete(prompt("go"))
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_up_to_the_attempt_limit() {
    let server = ScriptedServer::start().await.unwrap();
    for _ in 0..3 {
        server.push(Reply::json(
            500,
            r#"{"error":{"message":"The server had an error"}}"#,
        ));
    }
    server.push(Reply::sse(fixtures::OPENAI_TEXT));
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Server));
    assert_eq!(status(&error), Some(500));
    assert!(
        error.to_string().contains("The server had an error"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 3, "three attempts, then the error");
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn a_retry_after_beyond_the_time_budget_gives_up_at_once() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::json(429, RATE_LIMITED).header("retry-after", "3600"));
    let started = Instant::now();
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::RateLimit));
    assert_eq!(status(&error), Some(429));
    assert_eq!(server.requests().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn client_errors_are_typed_and_not_retried() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::json(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    ));
    let error = anthropic_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Auth));
    assert_eq!(status(&error), Some(401));
    assert!(!format!("{error} {error:?}").contains("sk-ant-test-key"));

    server.push(Reply::json(400, r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}"#));
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::ContextTooLong));

    server.push(Reply::json(
        400,
        r#"{"error":{"message":"Invalid 'messages[1].role'"}}"#,
    ));
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::BadRequest));
    assert!(
        error.to_string().starts_with("bad request (HTTP 400): "),
        "{error}"
    );
    assert_eq!(server.requests().len(), 3, "one attempt each");
}

#[tokio::test]
async fn a_key_echoed_by_the_server_is_blanked_out_of_the_error() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-test-key.","code":"invalid_api_key"}}"#,
    ));
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Auth));
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("sk-test-key"), "{shown}");
    assert!(
        shown.contains("Incorrect API key provided: ***."),
        "{shown}"
    );
}

#[tokio::test]
async fn an_error_body_is_cut_to_an_excerpt() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::json(400, "x".repeat(100_000)));
    let error = openai_error(&server, fast()).await;
    let ModelError::Request { detail, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(detail.len() < 1_000, "{} bytes", detail.len());
    assert!(detail.ends_with('…'));
}

#[tokio::test]
async fn no_answer_is_a_first_byte_timeout_and_is_retried() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::hang());
    server.push(Reply::sse(fixtures::OPENAI_TEXT));
    let response = openai(&server, fast())
        .complete(prompt("go"))
        .await
        .unwrap();
    assert!(!response.content.is_empty());
    assert_eq!(server.requests().len(), 2);

    let http = fast().retry(RetryPolicy::attempts(1));
    server.push(Reply::hang());
    let error = openai_error(&server, http).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Transport));
    assert!(error.to_string().contains("no answer"), "{error}");
}

#[tokio::test]
async fn a_stalled_stream_times_out_between_chunks() {
    let server = ScriptedServer::start().await.unwrap();
    let half = fixtures::ANTHROPIC_TEXT.len() / 2;
    server.push(
        Reply::sse(fixtures::ANTHROPIC_TEXT)
            .truncate(half)
            .then_stall(),
    );
    let started = Instant::now();
    let error = anthropic_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Transport));
    assert!(error.to_string().contains("stalled"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        server.requests().len(),
        1,
        "a stream that began is not retried"
    );
}

#[tokio::test]
async fn a_disconnect_mid_stream_is_a_transport_error() {
    let server = ScriptedServer::start().await.unwrap();
    let half = fixtures::OPENAI_TOOL_CALLS.len() / 2;
    server.push(
        Reply::sse(fixtures::OPENAI_TOOL_CALLS)
            .truncate(half)
            .then_disconnect(),
    );
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Transport));
    assert!(
        matches!(&error, ModelError::Request { cause: Some(_), .. }),
        "keeps the HTTP error"
    );
    assert_eq!(server.requests().len(), 1);

    // A clean end before the response's end is an error too.
    server.push(Reply::sse(fixtures::ANTHROPIC_TEXT).truncate(half));
    let error = anthropic_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::Transport));
    assert!(error.to_string().contains("message_stop"), "{error}");
}

#[tokio::test]
async fn malformed_json_is_a_malformed_stream_error() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::sse("data: {\"choices\": [{\"delta\": \n\n"));
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
    assert!(error.to_string().contains("not valid"), "{error}");

    server.push(Reply::sse("event: message_start\ndata: [1, 2]\n\n"));
    let error = anthropic_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
}

#[tokio::test]
async fn a_json_answer_to_a_streamed_request_is_a_malformed_stream_error() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::json(
        200,
        r#"{"choices":[{"message":{"content":"hi"}}]}"#,
    ));
    let error = openai_error(&server, fast()).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
    assert!(error.to_string().contains("application/json"), "{error}");
}

#[tokio::test]
async fn oversized_events_and_streams_are_refused() {
    let server = ScriptedServer::start().await.unwrap();
    // One event that never ends: the per-event cap stops it.
    let endless = format!("data: {{\"x\": \"{}", "a".repeat(64 << 10));
    server.push(
        Reply::sse(endless)
            .split_at(&[1000, 5000, 20_000])
            .then_stall(),
    );
    let error = openai_error(&server, fast().limits(16 << 10, 1 << 20)).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
    assert!(
        error
            .to_string()
            .contains("event is larger than 16384 bytes"),
        "{error}"
    );

    // Small events, too many of them: the stream cap stops it.
    server.push(Reply::sse(fixtures::OPENAI_TEXT));
    let error = openai_error(&server, fast().limits(16 << 10, 1000)).await;
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
    assert!(
        error
            .to_string()
            .contains("stream is larger than 1000 bytes"),
        "{error}"
    );
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_a_transport_error() {
    // A port that was free a moment ago: nothing listens there now.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let model = zidane_models::OpenAi::builder("m")
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .http_options(fast())
        .build()
        .unwrap();
    let error = model.complete(prompt("go")).await.unwrap_err();
    assert_eq!(error.kind(), Some(ModelErrorKind::Transport));
    assert_eq!(status(&error), None);
    assert!(matches!(&error, ModelError::Request { cause: Some(_), .. }));
}
