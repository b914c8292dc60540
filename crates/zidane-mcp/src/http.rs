//! The streamable HTTP transport, behind one guard that every request passes first: its
//! `Origin`, when it has one, must be allowed (403 otherwise: a web page of another site
//! must not run commands through the user's browser), then its bearer token must match
//! when the server has one (401 otherwise).
//!
//! What owns the tasks: a client that begins with `initialize` (protocol 2025-11-25 and
//! earlier) gets a session of its own per MCP session id, with its own agent, torn down
//! when the session is deleted or idles out. Requests of the 2026-07-28 era carry no
//! session, so the server is their scope: all of them share one agent, whose tasks live
//! until the server stops. A server is one user's (behind a bearer token unless it was
//! told otherwise, and on loopback unless told otherwise), so that agent is that user's.

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::error::McpServeError;
use crate::options::{McpHttpOptions, ServeOptions};
use crate::origin::OriginPolicy;
use crate::server::{HttpSessions, McpServer};
use crate::startup_sweep;

/// The path the MCP endpoint is served at: `http://127.0.0.1:PORT/mcp`.
pub const MCP_PATH: &str = "/mcp";

/// How long open HTTP connections get to close after the sessions are torn down.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_millis(250);

/// A bound HTTP server, not serving yet.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: Router,
    sessions: Arc<HttpSessions>,
    cancel: CancellationToken,
}

impl HttpServer {
    /// Checks the security rules ([`McpHttpOptions::validate`]) and binds the address.
    /// Once bound, it ends what crashed hosts left running, in the background, unless
    /// [`ServeOptions::sweep_orphans`] says not to.
    pub async fn bind(options: ServeOptions, http: McpHttpOptions) -> Result<Self, McpServeError> {
        http.validate()?;
        let listener = tokio::net::TcpListener::bind(http.addr)
            .await
            .map_err(|source| McpServeError::Bind {
                addr: http.addr,
                cause: source,
            })?;
        startup_sweep::start(&options);
        let sessions = Arc::new(HttpSessions::new(options));
        let cancel = CancellationToken::new();
        let mut config =
            StreamableHttpServerConfig::default().with_cancellation_token(cancel.child_token());
        if http.allow_remote {
            // Remote clients name this host however they reach it; the bearer token,
            // required with --allow-remote, is what keeps other pages and machines out.
            config = config.disable_allowed_hosts();
        }
        let mut session_manager = LocalSessionManager::default();
        session_manager.session_config.keep_alive = Some(http.session_idle);
        let factory_sessions = Arc::clone(&sessions);
        let service = StreamableHttpService::new(
            move || Ok(McpServer::http(Arc::clone(&factory_sessions))),
            Arc::new(session_manager),
            config,
        );
        let port = listener.local_addr().map_err(McpServeError::Http)?.port();
        let guard = Guard {
            origins: OriginPolicy::new(port, &http.allowed_origins),
            token: http.bearer_token.map(Arc::from),
        };
        let router =
            Router::new()
                .nest_service(MCP_PATH, service)
                .layer(middleware::from_fn_with_state(
                    Arc::new(guard),
                    guard_request,
                ));
        Ok(Self {
            listener,
            router,
            sessions,
            cancel,
        })
    }

    /// The address it listens on (the real port when bound to port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, McpServeError> {
        self.listener.local_addr().map_err(McpServeError::Http)
    }

    /// Serves until `shutdown` resolves; then tears every session down (every task
    /// killed), gives open connections a short grace to close, and returns.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), McpServeError> {
        let Self {
            listener,
            router,
            sessions,
            cancel,
        } = self;
        let server = axum::serve(listener, router)
            .with_graceful_shutdown(cancel.clone().cancelled_owned())
            .into_future();
        tokio::pin!(server);
        let served = tokio::select! {
            served = &mut server => Some(served),
            () = shutdown => None,
        };
        cancel.cancel();
        for session in sessions.take_all() {
            session.teardown().await;
        }
        let served = match served {
            Some(served) => served,
            // An SSE stream a client keeps open would hold a graceful shutdown forever.
            None => tokio::time::timeout(SHUTDOWN_GRACE, server)
                .await
                .unwrap_or(Ok(())),
        };
        served.map_err(McpServeError::Http)
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

/// Serves streamable HTTP on `http.addr` until `shutdown` resolves.
pub async fn serve_http(
    options: ServeOptions,
    http: McpHttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), McpServeError> {
    HttpServer::bind(options, http).await?.serve(shutdown).await
}

/// What a request must pass before it reaches MCP.
struct Guard {
    origins: OriginPolicy,
    token: Option<Arc<str>>,
}

/// 403 when the request has an `Origin` that is not allowed; then 401 when the server
/// has a token and the request does not carry `Authorization: Bearer <token>`. Every
/// method and path goes through here: `POST`, the `GET` event stream, `DELETE`.
async fn guard_request(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    // Every Origin header, should a client send several: none may be foreign.
    let foreign = request
        .headers()
        .get_all(header::ORIGIN)
        .iter()
        .find(|origin| !guard.origins.allows(origin.as_bytes()));
    if let Some(origin) = foreign {
        tracing::warn!(origin = ?origin, "refused a request from an origin not allowed (--allow-origin)");
        return (
            StatusCode::FORBIDDEN,
            "this origin is not allowed (zidane mcp --allow-origin)\n",
        )
            .into_response();
    }
    let Some(token) = &guard.token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match given {
        Some(given) if same_secret(given.as_bytes(), token.as_bytes()) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a bearer token is required\n",
        )
            .into_response(),
    }
}

/// Compares without stopping at the first differing byte, so timing does not tell how
/// much of a guess was right.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}
