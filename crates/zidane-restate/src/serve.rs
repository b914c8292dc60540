//! Serving a worker: the Restate endpoint over HTTP/2, under the worker's own service
//! name, and its registration with Restate's admin API.
//!
//! The SDK names a service after its Rust type, fixed at compile time. Each worker needs
//! a name of its own (`ZidaneWorker_<id>`: Restate routes a service to one deployment),
//! so this layer renames it on the wire: the discovery manifest says the worker's name,
//! and invocations of that name are handed to the endpoint under the type's name.
//!
//! Request identity is checked here too, before the rename: Restate signs the path it
//! calls (`/invoke/ZidaneWorker_<id>/…`), and the SDK's own check would compare the
//! signature with the renamed path and refuse every signed call. So the SDK endpoint is
//! built without keys and this layer verifies each request with the SDK's verifier.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::endpoint::{Endpoint, ServiceOptions};
use restate_sdk::hyper::HyperEndpoint;
use restate_sdk::service::IntoServiceDefinition;
use tokio::net::TcpListener;

use crate::error::RestateError;
use crate::identity::IdentityKeys;
use crate::object::ZidaneWorker;
use crate::worker::Worker;

/// The name the SDK gives the worker object (its type's name).
const TYPE_NAME: &str = "ZidaneWorker";

/// How long Restate lets a handler run without a journal entry before asking it to
/// suspend: a foreground `exec` or a `kill` with a long grace runs that long.
const INACTIVITY_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The longest pause between Restate's retries of an invocation whose worker is down:
/// a worker that comes back is serving its queue within this.
const RETRY_MAX_INTERVAL: Duration = Duration::from_secs(2);

/// Retries of one invocation before Restate gives up on it (about ten minutes at the
/// interval above). Given up means failed, not paused: a paused invocation would hold
/// the handle's object, and every caller (host or worker) retries on its own anyway.
const RETRY_MAX_ATTEMPTS: u64 = 300;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Body = UnsyncBoxBody<Bytes, BoxError>;

/// Serves `worker` on `listener` until `shutdown` resolves. With `identity` keys, only
/// requests signed by one of them are served (see [`IdentityKeys`]); the rest are
/// answered `401` and reach no handler. With none, whoever reaches `listener` can run
/// commands on this machine: keep such a worker on loopback.
pub async fn serve(
    worker: Arc<Worker>,
    listener: TcpListener,
    identity: IdentityKeys,
    shutdown: impl Future<Output = ()>,
) -> Result<(), RestateError> {
    let service_name = worker.service_name().to_owned();
    let definition = ZidaneWorker(worker).into_service_definition().options(
        ServiceOptions::new()
            .inactivity_timeout(INACTIVITY_TIMEOUT)
            .retry_policy_max_interval(RETRY_MAX_INTERVAL)
            .retry_policy_max_attempts(RETRY_MAX_ATTEMPTS)
            .retry_policy_kill_on_max_attempts(),
    );
    let endpoint = HyperEndpoint::new(Endpoint::builder().bind(definition).build());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                // The protocol trades many small frames both ways: without this, Nagle
                // and delayed ACKs hold each exchange for tens of milliseconds.
                let _ = stream.set_nodelay(true);
                let endpoint = endpoint.clone();
                let name = service_name.clone();
                let identity = identity.clone();
                let service = service_fn(move |request: http::Request<Incoming>| {
                    let endpoint = endpoint.clone();
                    let name = name.clone();
                    let verified = identity.verify(request.headers(), request.uri().path());
                    async move {
                        Ok::<_, Infallible>(match verified {
                            Ok(()) => renamed(endpoint, name, request).await,
                            Err(reason) => unverified(request.uri().path(), &reason),
                        })
                    }
                });
                tokio::spawn(async move {
                    let connection = http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service);
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "worker connection ended");
                    }
                });
            }
            () = &mut shutdown => return Ok(()),
        }
    }
}

/// The answer to a request whose identity was not verified: nothing of it reaches the
/// endpoint.
fn unverified(path: &str, reason: &str) -> http::Response<Body> {
    tracing::warn!(%path, %reason, "refused a request not signed by a trusted Restate server");
    let mut response = http::Response::new(
        Full::new(Bytes::from(format!(
            "request identity not verified: {reason}\n"
        )))
        .map_err(|e| match e {})
        .boxed_unsync(),
    );
    *response.status_mut() = http::StatusCode::UNAUTHORIZED;
    response
}

/// Hands `request` to the endpoint with the service renamed from `name` to the type's
/// name, and renames it back in the discovery manifest.
async fn renamed(
    endpoint: HyperEndpoint,
    name: String,
    mut request: http::Request<Incoming>,
) -> http::Response<Body> {
    let path = request.uri().path().to_owned();
    let discover = path.ends_with("/discover");
    let prefix = format!("/invoke/{name}/");
    if let Some(handler) = path.strip_prefix(&prefix) {
        let rewritten = format!("/invoke/{TYPE_NAME}/{handler}");
        if let Ok(uri) = rewritten.parse() {
            *request.uri_mut() = uri;
        }
    }
    let Ok(response) = hyper::service::Service::call(&endpoint, request).await;
    let (mut parts, body) = response.into_parts();
    if !discover {
        return http::Response::from_parts(parts, body.boxed_unsync());
    }
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            tracing::warn!(%error, "discovery body unreadable");
            Bytes::new()
        }
    };
    let bytes = rename_in_manifest(&bytes, &name).unwrap_or(bytes);
    parts.headers.remove(http::header::CONTENT_LENGTH);
    http::Response::from_parts(
        parts,
        Full::new(bytes).map_err(|e| match e {}).boxed_unsync(),
    )
}

/// The manifest with the worker object's service renamed to `name`.
fn rename_in_manifest(manifest: &[u8], name: &str) -> Option<Bytes> {
    let mut value: serde_json::Value = serde_json::from_slice(manifest).ok()?;
    for service in value.get_mut("services")?.as_array_mut()? {
        if service.get("name").and_then(|n| n.as_str()) == Some(TYPE_NAME) {
            service["name"] = serde_json::Value::String(name.to_owned());
        }
    }
    serde_json::to_vec(&value).ok().map(Bytes::from)
}

/// Registers the deployment at `uri` (this worker's endpoint) with Restate's admin API
/// at `admin`, replacing an earlier registration of the same URI.
pub async fn register(admin: &str, uri: &str) -> Result<(), RestateError> {
    let target = format!("{}/deployments", admin.trim_end_matches('/'));
    let request = crate::ingress::http_client()?
        .post(&target)
        .timeout(Duration::from_secs(30));
    crate::ingress::exchange(
        request,
        &serde_json::json!({ "uri": uri, "force": true }),
        &target,
    )
    .await
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_the_worker_s_service_and_nothing_else() {
        let manifest = serde_json::json!({
            "protocolMode": "BIDI_STREAM",
            "services": [
                { "name": "ZidaneWorker", "ty": "VIRTUAL_OBJECT", "handlers": [] },
                { "name": "Other", "ty": "SERVICE", "handlers": [] },
            ],
        });
        let bytes = serde_json::to_vec(&manifest).unwrap();
        let renamed = rename_in_manifest(&bytes, "ZidaneWorker_w1").unwrap();
        let renamed: serde_json::Value = serde_json::from_slice(&renamed).unwrap();
        assert_eq!(renamed["services"][0]["name"], "ZidaneWorker_w1");
        assert_eq!(renamed["services"][1]["name"], "Other");
        assert_eq!(renamed["protocolMode"], "BIDI_STREAM");
        assert!(rename_in_manifest(b"not json", "x").is_none());
    }
}
