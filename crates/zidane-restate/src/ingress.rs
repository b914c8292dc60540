//! A small client of Restate's HTTP ingress: call a handler and wait for its answer, or
//! send one and return once Restate has accepted it.

use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::RestateError;

/// Restate's ingress at one base URL.
#[derive(Debug, Clone)]
pub(crate) struct Ingress {
    http: reqwest::Client,
    base: String,
}

impl Ingress {
    pub(crate) fn new(base: &str) -> Result<Self, RestateError> {
        let http = http_client()?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
        })
    }

    /// Calls `service/key/handler` with `body` and decodes its answer; `timeout`
    /// bounds the whole exchange.
    pub(crate) async fn call<Req: Serialize + ?Sized, Res: DeserializeOwned>(
        &self,
        service: &str,
        key: &str,
        handler: &str,
        body: &Req,
        timeout: Duration,
    ) -> Result<Res, RestateError> {
        let url = format!("{}/{service}/{key}/{handler}", self.base);
        let target = format!("{service}/{key}/{handler}");
        let request = self.http.post(&url).timeout(timeout);
        let bytes = exchange(request, &to_json(body, &target)?, &target).await?;
        // A handler without output answers with an empty body.
        let bytes: &[u8] = if bytes.is_empty() { b"null" } else { &bytes };
        serde_json::from_slice(bytes).map_err(|source| RestateError::Decode {
            target,
            cause: source,
        })
    }

    /// Sends `body` to `service/key/handler` without waiting for the handler; once
    /// this returns, Restate has the invocation durably. The idempotency key makes a
    /// repeated send the same invocation.
    pub(crate) async fn send<Req: Serialize + ?Sized>(
        &self,
        service: &str,
        key: &str,
        handler: &str,
        body: &Req,
        idempotency_key: &str,
    ) -> Result<(), RestateError> {
        let url = format!("{}/{service}/{key}/{handler}/send", self.base);
        let target = format!("{service}/{key}/{handler}/send");
        let request = self
            .http
            .post(&url)
            .header("idempotency-key", idempotency_key)
            .timeout(Duration::from_secs(10));
        exchange(request, &to_json(body, &target)?, &target).await?;
        Ok(())
    }
}

/// `body` as JSON; `target` names the call in the error.
fn to_json<T: Serialize + ?Sized>(
    body: &T,
    target: &str,
) -> Result<serde_json::Value, RestateError> {
    serde_json::to_value(body).map_err(|source| RestateError::Decode {
        target: target.to_owned(),
        cause: source,
    })
}

/// An HTTP client for Restate's ingress or admin API.
pub(crate) fn http_client() -> Result<reqwest::Client, RestateError> {
    reqwest::Client::builder()
        .build()
        .map_err(|source| RestateError::Client { cause: source })
}

/// Sends `request` with `body` (none when `null`) and returns the answer's body. A
/// status other than success is [`RestateError::Handler`] with the message of Restate's
/// error body; `target` names the call in errors.
pub(crate) async fn exchange(
    request: reqwest::RequestBuilder,
    body: &serde_json::Value,
    target: &str,
) -> Result<Bytes, RestateError> {
    // A handler without input takes an empty body, not `null`.
    let request = if body.is_null() {
        request
    } else {
        request.json(body)
    };
    let http = |source| RestateError::Http {
        target: target.to_owned(),
        cause: source,
    };
    let response = request.send().await.map_err(http)?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(http)?;
    if !status.is_success() {
        return Err(RestateError::Handler {
            target: target.to_owned(),
            status: status.as_u16(),
            message: error_message(&bytes),
        });
    }
    Ok(bytes)
}

/// The `message` of Restate's JSON error body, or the body itself.
fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
}
