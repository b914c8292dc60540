//! A scripted model provider for tests: a real HTTP server on 127.0.0.1 that answers
//! each request with the next scripted [`Reply`] and records what it was sent.
//!
//! It speaks whatever the replies say — [`fixtures`] holds streams in the OpenAI chat
//! completions and Anthropic Messages formats — and can split a stream at any byte,
//! answer an error status with `retry-after`, stall, hang before answering, or drop the
//! connection mid-stream. With nothing scripted it answers 500 and says so.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use zidane_llm::{Model, ModelRequest};
//! use zidane_models::OpenAi;
//! use zidane_models::testing::{Reply, ScriptedServer, fixtures};
//!
//! let server = ScriptedServer::start().await?;
//! server.push(Reply::sse(fixtures::openai_text("Hello there")).split_at(&[7, 30]));
//! let model = OpenAi::builder("m").base_url(server.url("/v1")).build()?;
//! let request = ModelRequest { system: None, turns: vec![], tools: vec![] };
//! assert_eq!(model.complete(request).await?.joined_text(), "Hello there");
//! assert_eq!(server.requests()[0].path, "/v1/chat/completions");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http_body_util::{BodyExt, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use zidane_context::lock;

pub mod fixtures;

/// How long the server waits before dropping a connection mid-stream.
const DISCONNECT_FLUSH: Duration = Duration::from_millis(20);

/// How a reply's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The body is complete.
    Finish,
    /// The server sends nothing more and keeps the connection open.
    Stall,
    /// The server drops the connection without ending the body.
    Disconnect,
}

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    chunks: Vec<Bytes>,
    end: End,
    hang: bool,
    chunk_delay: Option<Duration>,
}

impl Reply {
    /// A 200 `text/event-stream` reply of this body, in one chunk.
    pub fn sse(body: impl Into<String>) -> Self {
        Self::new(200, "text/event-stream", body.into())
    }

    /// A reply of this status and JSON body (an error, usually).
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Self::new(status, "application/json", body.into())
    }

    /// A reply that never comes: the server reads the request and waits.
    pub fn hang() -> Self {
        Self {
            hang: true,
            ..Self::new(200, "text/event-stream", String::new())
        }
    }

    fn new(status: u16, content_type: &str, body: String) -> Self {
        Self {
            status,
            headers: vec![("content-type".to_owned(), content_type.to_owned())],
            chunks: vec![Bytes::from(body)],
            end: End::Finish,
            hang: false,
            chunk_delay: None,
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends the body in chunks cut at these byte offsets (out-of-range and repeated
    /// offsets are ignored) — a cut may fall inside an event, a line or a character.
    #[must_use]
    pub fn split_at(mut self, offsets: &[usize]) -> Self {
        let body = self.body();
        let mut offsets: Vec<usize> = offsets
            .iter()
            .copied()
            .filter(|&offset| offset > 0 && offset < body.len())
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let mut start = 0;
        self.chunks.clear();
        for offset in offsets.into_iter().chain([body.len()]) {
            self.chunks.push(body.slice(start..offset));
            start = offset;
        }
        self
    }

    /// Keeps only the first `bytes` bytes of the body.
    #[must_use]
    pub fn truncate(mut self, bytes: usize) -> Self {
        let body = self.body();
        self.chunks = vec![body.slice(..bytes.min(body.len()))];
        self
    }

    /// Waits this long before each chunk, so each reaches the client on its own.
    #[must_use]
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = Some(delay);
        self
    }

    /// After the body, sends nothing more and keeps the connection open.
    #[must_use]
    pub fn then_stall(mut self) -> Self {
        self.end = End::Stall;
        self
    }

    /// After the body, drops the connection without ending the response.
    #[must_use]
    pub fn then_disconnect(mut self) -> Self {
        self.end = End::Disconnect;
        self
    }

    fn body(&self) -> Bytes {
        self.chunks.concat().into()
    }
}

/// A request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, usually.
    pub method: String,
    /// The path, e.g. `/v1/messages`.
    pub path: String,
    /// The headers, names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl RecordedRequest {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.body)
    }
}

struct State {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// How many response bodies are being sent (or held open by a stall).
    open: watch::Sender<usize>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            replies: Mutex::default(),
            requests: Mutex::default(),
            open: watch::channel(0).0,
        }
    }
}

/// Counts a response body as open while it lives: hyper drops it when the client goes
/// away, so a test can see that a dropped request really closed its connection.
struct OpenStream(Arc<State>);

impl OpenStream {
    fn new(state: Arc<State>) -> Self {
        state.open.send_modify(|open| *open += 1);
        Self(state)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open.send_modify(|open| *open -= 1);
    }
}

/// The scripted provider server. Stops (closing every connection) when dropped.
#[derive(Debug)]
pub struct ScriptedServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// Starts a server on a free port of 127.0.0.1.
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let task = tokio::spawn(serve(listener, state.clone()));
        Ok(Self { addr, state, task })
    }

    /// `http://127.0.0.1:PORT` followed by `path` (e.g. `/v1` for an OpenAI base URL,
    /// `""` for an Anthropic one).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Queues the reply to the next request not yet answered.
    pub fn push(&self, reply: Reply) {
        lock(&self.state.replies).push_back(reply);
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// Replies not sent yet.
    pub fn remaining(&self) -> usize {
        lock(&self.state.replies).len()
    }

    /// How many response bodies are open right now (being sent, or stalled).
    pub fn open_streams(&self) -> usize {
        *self.state.open.borrow()
    }

    /// Waits until exactly `count` response bodies are open; false if that did not
    /// happen within `timeout`.
    pub async fn wait_open_streams(&self, count: usize, timeout: Duration) -> bool {
        let mut open = self.state.open.subscribe();
        tokio::time::timeout(timeout, open.wait_for(|open| *open == count))
            .await
            .is_ok_and(|changed| changed.is_ok())
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every connection.
        self.task.abort();
    }
}

async fn serve(listener: TcpListener, state: Arc<State>) {
    let mut connections = JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, most likely: let connections finish before trying again.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let state = state.clone();
        connections.spawn(async move {
            let service = service_fn(move |request| answer(state.clone(), request));
            // A client that goes away mid-answer is part of what is tested.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        // Reap finished connections so the set does not grow with the test.
        while connections.try_join_next().is_some() {}
    }
}

type Body = BoxBody<Bytes, std::io::Error>;

async fn answer(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    lock(&state.requests).push(RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let reply = lock(&state.replies).pop_front();
    let Some(reply) = reply else {
        let mut response = Response::new(full("no scripted reply left for this request"));
        *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        return Ok(response);
    };
    if reply.hang {
        std::future::pending::<()>().await;
    }
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let (end, delay) = (reply.end, reply.chunk_delay);
    let chunks = VecDeque::from(reply.chunks);
    let open = OpenStream::new(state.clone());
    let frames = stream::unfold(
        (chunks, false, open),
        move |(mut chunks, ended, open)| async move {
            if ended {
                return None;
            }
            if let Some(chunk) = chunks.pop_front() {
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                }
                return Some((Ok(Frame::data(chunk)), (chunks, false, open)));
            }
            match end {
                End::Finish => None,
                End::Stall => {
                    std::future::pending::<()>().await;
                    None
                }
                End::Disconnect => {
                    // Let what was sent reach the client first: it should see a stream that
                    // broke off, not a request that got no answer.
                    tokio::time::sleep(DISCONNECT_FLUSH).await;
                    Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "scripted disconnect",
                        )),
                        (chunks, true, open),
                    ))
                }
            }
        },
    );
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    *response.status_mut() = status;
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(&value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    Ok(response)
}

fn full(text: &'static str) -> Body {
    BodyExt::boxed(
        http_body_util::Full::new(Bytes::from_static(text.as_bytes()))
            .map_err(|never| match never {}),
    )
}
