//! The HTTP seam both providers share: one POST whose answer streams server-sent
//! events, with timeouts, retries, size caps and typed errors; and the check of a
//! provider's base URL.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use zidane_llm::{DeltaSink, ErrorSource, ModelError, ModelErrorKind, ModelResponse};

use crate::assemble::{Assemble, Flow};
use crate::error::BuildError;
use crate::key::ApiKey;
use crate::options::HttpOptions;

/// `url` without its trailing slashes, if it is an http(s) URL.
pub(crate) fn base_url(url: &str) -> Result<&str, BuildError> {
    let trimmed = url.trim().trim_end_matches('/');
    let scheme = trimmed.starts_with("http://") || trimmed.starts_with("https://");
    if !scheme || trimmed.len() <= "https://".len() {
        return Err(BuildError::InvalidBaseUrl {
            url: url.to_owned(),
        });
    }
    Ok(trimmed)
}

/// How much of an error response's body an error keeps, in characters.
pub(crate) const BODY_EXCERPT_CHARS: usize = 500;
/// How much of an error response's body is read at most, in bytes.
const MAX_ERROR_BODY_BYTES: usize = 16 << 10;

/// The HTTP client of one provider.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    options: HttpOptions,
    /// Blanked out of every error's detail, in case a server echoes it back.
    api_key: Option<ApiKey>,
}

/// A request that failed before its stream began.
struct Failure {
    error: ModelError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl HttpClient {
    pub(crate) fn new(options: HttpOptions, api_key: Option<ApiKey>) -> Result<Self, BuildError> {
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .build()
            .map_err(BuildError::Client)?;
        Ok(Self {
            client,
            options,
            api_key,
        })
    }

    /// The error, its detail without the API key.
    fn redact(&self, mut error: ModelError) -> ModelError {
        if let (Some(key), ModelError::Request { detail, .. }) = (&self.api_key, &mut error)
            && !key.expose().is_empty()
            && detail.contains(key.expose())
        {
            *detail = detail.replace(key.expose(), "***");
        }
        error
    }

    /// POSTs `body` to `url` and assembles the streamed answer, retrying as the policy
    /// says. Dropping the future aborts the request.
    pub(crate) async fn stream<A: Assemble>(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Vec<u8>,
        assembler: A,
        sink: &DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let policy = &self.options.retry;
        let started = Instant::now();
        let mut attempt = 1;
        loop {
            let failure = match self.open(url, headers, body.clone()).await {
                Ok(response) => {
                    return self
                        .read(response, assembler, sink)
                        .await
                        .map_err(|error| self.redact(error));
                }
                Err(failure) => failure,
            };
            let error = self.redact(failure.error);
            if !failure.retryable || attempt >= policy.max_attempts {
                return Err(error);
            }
            let delay = failure
                .retry_after
                .unwrap_or_else(|| policy.backoff_delay(attempt));
            if started.elapsed() + delay > policy.max_total {
                return Err(error);
            }
            tracing::warn!(
                attempt,
                delay_ms = delay.as_millis() as u64,
                %error,
                "model request failed; retrying"
            );
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    async fn open(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Vec<u8>,
    ) -> Result<reqwest::Response, Failure> {
        let send = self
            .client
            .post(url)
            .headers(headers.clone())
            .body(body)
            .send();
        let response = match tokio::time::timeout(self.options.first_byte_timeout, send).await {
            Err(_) => {
                return Err(Failure {
                    error: request_error(
                        ModelErrorKind::Transport,
                        None,
                        format!(
                            "no answer from {url} within {:?}",
                            self.options.first_byte_timeout
                        ),
                        None,
                    ),
                    retryable: true,
                    retry_after: None,
                });
            }
            Ok(Err(error)) => {
                let retryable = !error.is_builder();
                return Err(Failure {
                    error: request_error(
                        ModelErrorKind::Transport,
                        None,
                        format!("request to {url} failed"),
                        Some(ErrorSource::new(error.without_url())),
                    ),
                    retryable,
                    retry_after: None,
                });
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let should_retry = response
            .headers()
            .get("x-should-retry")
            .and_then(|value| value.to_str().ok())
            .map(|value| value == "true");
        let excerpt = self.read_excerpt(response).await;
        let code = status.as_u16();
        let kind = classify(code, &excerpt);
        let retryable =
            should_retry.unwrap_or(matches!(code, 408 | 409 | 429) || (500..=599).contains(&code));
        Err(Failure {
            error: request_error(kind, Some(code), format!("{url}: {excerpt}"), None),
            retryable: retryable && kind != ModelErrorKind::ContextTooLong,
            retry_after,
        })
    }

    /// A short, trimmed excerpt of an error response's body.
    async fn read_excerpt(&self, mut response: reqwest::Response) -> String {
        let mut body = Vec::new();
        while body.len() < MAX_ERROR_BODY_BYTES {
            match tokio::time::timeout(self.options.chunk_timeout, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
        excerpt(&String::from_utf8_lossy(&body))
    }

    async fn read<A: Assemble>(
        &self,
        response: reqwest::Response,
        mut assembler: A,
        sink: &DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        // A server that leaves the type out gets the benefit of the doubt; one that
        // answers JSON or HTML ignored `stream: true` or is not the API.
        if !content_type.is_empty() && !content_type.contains("event-stream") {
            let status = response.status().as_u16();
            let excerpt = self.read_excerpt(response).await;
            return Err(request_error(
                ModelErrorKind::MalformedStream,
                Some(status),
                format!("expected an event stream, got {content_type:?}: {excerpt}"),
                None,
            ));
        }
        let limits = Limits {
            max_event: self.options.max_event_bytes,
            max_stream: self.options.max_stream_bytes,
        };
        // Bytes received since the last whole event: they bound what the decoder holds.
        let pending = Arc::new(AtomicUsize::new(0));
        let counted = pending.clone();
        let chunk_timeout = self.options.chunk_timeout;
        let state = (Box::pin(response.bytes_stream()), 0usize, false);
        let bytes = futures_util::stream::unfold(state, move |(mut body, total, failed)| {
            let counted = counted.clone();
            async move {
                if failed {
                    return None;
                }
                let next = match tokio::time::timeout(chunk_timeout, body.next()).await {
                    Err(_) => Err(StreamFault::Stalled(chunk_timeout)),
                    Ok(None) => return None,
                    Ok(Some(Err(error))) => Err(StreamFault::Http(error)),
                    Ok(Some(Ok(chunk))) => limits.check(&chunk, total, &counted).map(|()| chunk),
                };
                let total = total + next.as_ref().map_or(0, |chunk| chunk.len());
                let failed = next.is_err();
                Some((next, (body, total, failed)))
            }
        });
        let mut events = std::pin::pin!(bytes.eventsource());
        loop {
            let event = match events.next().await {
                None => return assembler.finish(false, sink),
                Some(Ok(event)) => event,
                Some(Err(error)) => return Err(stream_error(error)),
            };
            pending.store(0, Ordering::Relaxed);
            if let Flow::Done = assembler.event(&event.event, &event.data, sink)? {
                return assembler.finish(true, sink);
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Limits {
    max_event: usize,
    max_stream: usize,
}

impl Limits {
    /// Refuses a chunk that takes the stream, or the event being received, past its
    /// limit. `pending` counts the bytes since the last whole event.
    fn check(&self, chunk: &[u8], total: usize, pending: &AtomicUsize) -> Result<(), StreamFault> {
        if total + chunk.len() > self.max_stream {
            return Err(StreamFault::TooLarge {
                what: "stream",
                limit: self.max_stream,
            });
        }
        if pending.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > self.max_event {
            return Err(StreamFault::TooLarge {
                what: "event",
                limit: self.max_event,
            });
        }
        Ok(())
    }
}

/// Why the bytes of a stream stopped coming.
#[derive(Debug, thiserror::Error)]
enum StreamFault {
    #[error("the connection failed: {0}")]
    Http(reqwest::Error),
    #[error("the {what} is larger than {limit} bytes")]
    TooLarge { what: &'static str, limit: usize },
    #[error("the stream stalled: nothing for {0:?}")]
    Stalled(Duration),
}

fn stream_error(error: EventStreamError<StreamFault>) -> ModelError {
    match error {
        EventStreamError::Transport(StreamFault::Http(error)) => request_error(
            ModelErrorKind::Transport,
            None,
            "the stream broke off".to_owned(),
            Some(ErrorSource::new(error.without_url())),
        ),
        EventStreamError::Transport(fault @ StreamFault::Stalled(_)) => {
            request_error(ModelErrorKind::Transport, None, fault.to_string(), None)
        }
        EventStreamError::Transport(fault @ StreamFault::TooLarge { .. }) => request_error(
            ModelErrorKind::MalformedStream,
            None,
            fault.to_string(),
            None,
        ),
        EventStreamError::Utf8(error) => request_error(
            ModelErrorKind::MalformedStream,
            None,
            "the stream is not UTF-8".to_owned(),
            Some(ErrorSource::new(error)),
        ),
        EventStreamError::Parser(error) => request_error(
            ModelErrorKind::MalformedStream,
            None,
            format!(
                "the stream is not server-sent events: {}",
                excerpt(&error.input)
            ),
            None,
        ),
    }
}

/// A [`ModelError::Request`].
pub(crate) fn request_error(
    kind: ModelErrorKind,
    status: Option<u16>,
    detail: String,
    cause: Option<ErrorSource>,
) -> ModelError {
    ModelError::Request {
        kind,
        status,
        detail,
        cause,
    }
}

/// The JSON bytes of a request body.
pub(crate) fn encode(body: &serde_json::Value) -> Result<Vec<u8>, ModelError> {
    serde_json::to_vec(body).map_err(|error| {
        request_error(
            ModelErrorKind::BadRequest,
            None,
            "the request could not be encoded as JSON".to_owned(),
            Some(ErrorSource::new(error)),
        )
    })
}

/// The kind of an error status, refined by the body: providers answer 400 (OpenAI) or
/// 413 / 400 (Anthropic) when the context is too long.
pub(crate) fn classify(status: u16, body: &str) -> ModelErrorKind {
    let lower = body.to_ascii_lowercase();
    let too_long = [
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "prompt is too long",
        "too many tokens",
    ]
    .iter()
    .any(|needle| lower.contains(needle));
    match status {
        401 | 403 => ModelErrorKind::Auth,
        429 => ModelErrorKind::RateLimit,
        413 => ModelErrorKind::ContextTooLong,
        400..=499 if too_long => ModelErrorKind::ContextTooLong,
        400..=499 => ModelErrorKind::BadRequest,
        _ => ModelErrorKind::Server,
    }
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| -> Option<f64> {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value >= 0.0)
    };
    read("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| read(RETRY_AFTER.as_str()).map(Duration::from_secs_f64))
}

/// At most [`BODY_EXCERPT_CHARS`] characters of `text`, trimmed.
pub(crate) fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(BODY_EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Where one provider's requests go: its client, its URL, and the headers of a streamed
/// JSON request with the provider's own (the key among them, marked sensitive).
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    http: HttpClient,
    url: String,
    headers: HeaderMap,
}

impl Endpoint {
    /// An endpoint at `url`; `provider_headers` adds to the JSON and event-stream ones.
    pub(crate) fn new(
        options: HttpOptions,
        api_key: Option<ApiKey>,
        url: String,
        provider_headers: impl IntoIterator<Item = (HeaderName, HeaderValue)>,
    ) -> Result<Self, BuildError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.extend(provider_headers);
        Ok(Self {
            http: HttpClient::new(options, api_key)?,
            url,
            headers,
        })
    }

    /// The URL requests go to.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The headers every request carries.
    #[cfg(test)]
    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Sends `body` and assembles the streamed answer (see [`HttpClient::stream`]).
    pub(crate) async fn stream<A: Assemble>(
        &self,
        body: &serde_json::Value,
        assembler: A,
        sink: &DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let body = encode(body)?;
        self.http
            .stream(&self.url, &self.headers, body, assembler, sink)
            .await
    }
}

/// A header value that must not show up in logs or `Debug` output.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, BuildError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| BuildError::InvalidApiKey)?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_bodies_map_to_kinds() {
        assert_eq!(classify(401, ""), ModelErrorKind::Auth);
        assert_eq!(classify(403, ""), ModelErrorKind::Auth);
        assert_eq!(classify(429, ""), ModelErrorKind::RateLimit);
        assert_eq!(classify(413, ""), ModelErrorKind::ContextTooLong);
        assert_eq!(
            classify(
                400,
                r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 128000 tokens."}}"#
            ),
            ModelErrorKind::ContextTooLong
        );
        assert_eq!(
            classify(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#
            ),
            ModelErrorKind::ContextTooLong
        );
        assert_eq!(classify(400, "bad"), ModelErrorKind::BadRequest);
        assert_eq!(classify(404, ""), ModelErrorKind::BadRequest);
        assert_eq!(classify(500, ""), ModelErrorKind::Server);
        assert_eq!(classify(529, ""), ModelErrorKind::Server);
    }

    #[test]
    fn retry_after_reads_milliseconds_first_then_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        headers.insert("retry-after-ms", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn an_excerpt_is_short_and_cut_on_a_character() {
        let long = "é".repeat(BODY_EXCERPT_CHARS + 10);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), BODY_EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("  short \n"), "short");
    }
}
