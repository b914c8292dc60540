//! A worker's health endpoint, for a load balancer, a container's health check or a
//! person with `curl`: `GET /health` answers `200 serving` while the worker takes tasks
//! and `503 draining` once it drains, over plain HTTP/1.1 on an address of its own (the
//! Restate endpoint speaks HTTP/2 only, to Restate).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::worker::Worker;

/// Serves `worker`'s health on `listener` until `shutdown` resolves.
pub async fn serve_health(
    worker: Arc<Worker>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let worker = Arc::clone(&worker);
                let service = service_fn(move |request: http::Request<Incoming>| {
                    let answer = answer(&worker, request.method(), request.uri().path());
                    async move { Ok::<_, Infallible>(answer) }
                });
                tokio::spawn(async move {
                    if let Err(error) = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await
                    {
                        tracing::debug!(%error, "health connection ended");
                    }
                });
            }
            () = &mut shutdown => return,
        }
    }
}

/// The answer to `method path`.
fn answer(worker: &Worker, method: &http::Method, path: &str) -> http::Response<Full<Bytes>> {
    let (status, body) = match (method, path) {
        (&http::Method::GET | &http::Method::HEAD, "/health") if worker.is_draining() => {
            (http::StatusCode::SERVICE_UNAVAILABLE, "draining\n")
        }
        (&http::Method::GET | &http::Method::HEAD, "/health") => {
            (http::StatusCode::OK, "serving\n")
        }
        _ => (http::StatusCode::NOT_FOUND, "not found: GET /health\n"),
    };
    let mut response = http::Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}
