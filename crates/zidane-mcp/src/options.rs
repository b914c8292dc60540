//! How a server runs: where sessions keep their logs, how tasks are stopped, and how the
//! HTTP transport is exposed.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use zidane_context::{EnvPolicy, ExecutionContext, ExecutionHandle, SandboxPolicy};
use zidane_supervisor::SupervisorClient;

use crate::budget::{MCP_DEFAULT_RESULT_BUDGET, MCP_MIN_RESULT_BUDGET};
use crate::error::McpServeError;
use crate::origin::AllowedOrigin;

/// How long a killed task gets between `SIGTERM` and `SIGKILL` in an MCP session. Shorter
/// than a local context's own default ([`zidane_process::DEFAULT_KILL_GRACE`]) because a
/// host closing the session expects the server gone within about a second.
pub const MCP_DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);

/// How long tearing down one MCP session may take as a whole (see
/// [`Agent::destroy`](zidane_agent::Agent::destroy)): room for the kill grace and the log
/// flush. Shorter than an agent's own default
/// ([`zidane_agent::DEFAULT_DESTROY_TIMEOUT`]), for the same reason as
/// [`MCP_DEFAULT_KILL_GRACE`].
pub const MCP_DEFAULT_DESTROY_TIMEOUT: Duration = Duration::from_secs(3);

/// How long an MCP HTTP session may go without a request or a push before it ends (and its
/// tasks are killed): a client that vanished without deleting its session. Long, because
/// a model may leave a dev server running while it does nothing else.
pub const MCP_DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(60 * 60);

/// The environment variable a bearer token may be given in, so it stays out of `ps`.
/// zidane's own credential: no task is ever given it
/// ([`ZIDANE_SECRET_ENV_VARS`](zidane_context::ZIDANE_SECRET_ENV_VARS)).
pub const TOKEN_ENV: &str = zidane_context::MCP_TOKEN_ENV;

/// When a foreground `shell` command of an MCP session moves to the background: then the
/// call returns with the task's id and log before the client gives up on it, and the
/// task's end is told like any background task's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MoveAfter {
    /// A margin under the connected client's request ceiling, the one `wait_task`'s cap
    /// keeps, where the ceiling is known; under a minute for a client not known.
    #[default]
    ClientCeiling,
    /// After this long, for every client.
    Fixed(Duration),
    /// Never: a foreground command runs to its end, or until the client gives up on the
    /// call (the command is then killed).
    Never,
}

/// What every session of a server shares.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeOptions {
    /// The user data dir: session `<id>` keeps its task logs in
    /// `<user_dir>/sessions/<id>/tasks/`.
    pub user_dir: PathBuf,
    /// Between `SIGTERM` and `SIGKILL` when a task is killed ([`MCP_DEFAULT_KILL_GRACE`]).
    pub kill_grace: Duration,
    /// Bound on one session's teardown ([`MCP_DEFAULT_DESTROY_TIMEOUT`]).
    pub destroy_timeout: Duration,
    /// Most bytes of one result's text, notification blocks included
    /// ([`MCP_DEFAULT_RESULT_BUDGET`]): a longer answer keeps its end.
    pub result_budget: usize,
    /// `wait_task`'s cap for every client; `None` sizes it to the client's known request
    /// ceiling, or under a minute for one not known.
    pub wait_cap: Option<Duration>,
    /// When a foreground `shell` command moves to the background
    /// ([`MoveAfter::ClientCeiling`] by default).
    pub move_after: MoveAfter,
    /// Which of the server's environment variables every session's tasks get
    /// ([`EnvPolicy::default`]: all but those named like a secret, never
    /// [`TOKEN_ENV`]).
    pub env_policy: EnvPolicy,
    /// Whether the server, as it starts, ends the tasks that hosts of this user left
    /// running when they died without cleaning up (default: yes). Each session's context
    /// has a lifeline that ends its tasks when the server dies, however it dies, where
    /// the platform has one (Linux); this sweep is the backstop where it has none (macOS)
    /// or it could not run. Only processes whose owner marker names a host that is gone
    /// are touched (see
    /// [`ProcessContext::sweep_orphans`](zidane_process::ProcessContext::sweep_orphans));
    /// it runs in the background, and what it ends is logged (`tracing`, `info`, target
    /// `zidane_process`).
    pub sweep_orphans: bool,
    /// What every session's commands may touch (default [`SandboxPolicy::off`], as a
    /// library's context: `zidane mcp` turns it on). A `workspace-write` policy that
    /// names no workspace takes the server's working directory. Where this machine
    /// cannot build the sandbox, commands run unsandboxed and each session's
    /// [`sandbox`](zidane_context::ExecutionContext::sandbox) report says why.
    pub sandbox: SandboxPolicy,
    /// The supervisor that runs `detach: true` tasks (default: none, and `detach` is
    /// not offered). Each session's workspace is the server's working directory: a
    /// later session started there lists its detached tasks and is told their ends.
    pub detach: Option<SupervisorClient>,
    /// Where every session's tasks run instead of this machine (default: none, this
    /// machine): each session gets its own context from it, a fleet's
    /// (`zidane mcp --restate`). Such a session has no sandbox, environment policy or
    /// roots of this machine's (the workers apply their own), and its exits, recorded
    /// rather than pushed, are swept at the context's
    /// [`sweep_interval`](zidane_context::Capabilities::sweep_interval).
    pub remote: Option<RemoteContexts>,
}

/// The session a [`RemoteContexts`] makes a context for.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteSession {
    /// The session's id.
    pub session: String,
    /// Its workspace: the server's working directory, made canonical.
    pub workspace: std::path::PathBuf,
}

/// A session's context elsewhere, and the handle its agent runs on.
pub struct RemoteContext {
    /// Where its tasks run.
    pub context: Arc<dyn ExecutionContext>,
    /// The handle, kept beyond the session: the agent never destroys it, so the
    /// session's tasks outlive it, and a later session given the same handle re-adopts
    /// them.
    pub handle: ExecutionHandle,
}

/// What makes each session's [`RemoteContext`].
type MakeRemote = dyn Fn(&RemoteSession) -> Result<RemoteContext, String> + Send + Sync;

/// Makes one session's context where its tasks run elsewhere ([`ServeOptions::remote`]).
#[derive(Clone)]
pub struct RemoteContexts {
    /// What it is, for a person (`"Restate at http://…, workers w1, w2"`).
    pub what: String,
    make: Arc<MakeRemote>,
}

impl RemoteContexts {
    /// Sessions' contexts made by `make`, described as `what`; `make`'s error is the
    /// session's [`McpServeError::Config`](crate::McpServeError::Config).
    pub fn new(
        what: impl Into<String>,
        make: impl Fn(&RemoteSession) -> Result<RemoteContext, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            what: what.into(),
            make: Arc::new(make),
        }
    }

    /// A new session's context.
    pub(crate) fn make(&self, session: &RemoteSession) -> Result<RemoteContext, String> {
        (self.make)(session)
    }
}

impl std::fmt::Debug for RemoteContexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteContexts")
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

impl PartialEq for RemoteContexts {
    fn eq(&self, other: &Self) -> bool {
        self.what == other.what && Arc::ptr_eq(&self.make, &other.make)
    }
}

impl Eq for RemoteContexts {}

impl ServeOptions {
    /// The defaults, with sessions under `user_dir`.
    pub fn new(user_dir: impl Into<PathBuf>) -> Self {
        Self {
            user_dir: user_dir.into(),
            kill_grace: MCP_DEFAULT_KILL_GRACE,
            destroy_timeout: MCP_DEFAULT_DESTROY_TIMEOUT,
            result_budget: MCP_DEFAULT_RESULT_BUDGET,
            wait_cap: None,
            move_after: MoveAfter::ClientCeiling,
            env_policy: EnvPolicy::default(),
            sweep_orphans: true,
            sandbox: SandboxPolicy::off(),
            detach: None,
            remote: None,
        }
    }

    /// Runs every session's tasks where `contexts` says, not on this machine
    /// ([`remote`](Self#structfield.remote)).
    #[must_use]
    pub fn remote(mut self, contexts: RemoteContexts) -> Self {
        self.remote = Some(contexts);
        self
    }

    /// Offers `detach: true`, run by the supervisor `client` reaches (give it a
    /// [`Launcher`](zidane_supervisor::Launcher) so the first detached start starts it).
    #[must_use]
    pub fn detach(mut self, client: SupervisorClient) -> Self {
        self.detach = Some(client);
        self
    }

    /// Sets what every session's commands may touch
    /// ([`sandbox`](Self#structfield.sandbox)).
    #[must_use]
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = policy;
        self
    }

    /// Sets whether the server ends, as it starts, what crashed hosts left running
    /// ([`sweep_orphans`](Self#structfield.sweep_orphans)).
    #[must_use]
    pub fn sweep_orphans(mut self, sweep: bool) -> Self {
        self.sweep_orphans = sweep;
        self
    }

    /// Sets the environment policy of every session's tasks.
    #[must_use]
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env_policy = policy;
        self
    }

    /// Sets `wait_task`'s cap for every client, whatever its ceiling.
    #[must_use]
    pub fn wait_cap(mut self, cap: Duration) -> Self {
        self.wait_cap = Some(cap);
        self
    }

    /// Sets when a foreground `shell` command moves to the background.
    #[must_use]
    pub fn move_after(mut self, move_after: MoveAfter) -> Self {
        self.move_after = move_after;
        self
    }

    /// Sets the result budget (at least [`MCP_MIN_RESULT_BUDGET`]; less is raised to it).
    #[must_use]
    pub fn result_budget(mut self, bytes: usize) -> Self {
        self.result_budget = bytes.max(MCP_MIN_RESULT_BUDGET);
        self
    }

    /// Sets the kill grace.
    #[must_use]
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }
}

/// How the streamable HTTP transport is exposed.
///
/// Secure by default: loopback only, a bearer token required (a server is refused
/// without one unless [`no_token`](Self::no_token) says so), and requests from web pages
/// of other origins refused.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpHttpOptions {
    /// Where to listen. Loopback unless [`allow_remote`](Self::allow_remote).
    pub addr: SocketAddr,
    /// Serve a non-loopback address. Requires a bearer token.
    pub allow_remote: bool,
    /// Every request must carry `Authorization: Bearer <token>` (401 otherwise). Non-empty,
    /// no whitespace. Required unless [`no_token`](Self::no_token).
    pub bearer_token: Option<String>,
    /// Serve without a token: any local user, and any process of theirs, can then run
    /// commands as the server's user. Refused with a token or with `allow_remote`.
    pub no_token: bool,
    /// Origins let through besides the server's own loopback ones
    /// (`http://localhost:PORT`, `http://127.0.0.1:PORT`, `http://[::1]:PORT`). A
    /// request with any other `Origin` header gets 403; one without it (not from a
    /// browser) goes on.
    pub allowed_origins: Vec<AllowedOrigin>,
    /// How long a session may be idle before it ends ([`MCP_DEFAULT_SESSION_IDLE`]).
    pub session_idle: Duration,
}

impl McpHttpOptions {
    /// Loopback on `addr`, no origin beyond loopback, and no token yet: set one with
    /// [`bearer_token`](Self::bearer_token) (e.g. [`generate_token`](crate::generate_token)),
    /// or choose [`no_token`](Self::no_token).
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            allow_remote: false,
            bearer_token: None,
            no_token: false,
            allowed_origins: Vec::new(),
            session_idle: MCP_DEFAULT_SESSION_IDLE,
        }
    }

    /// Sets how long a session may be idle before it ends.
    #[must_use]
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// Allows a non-loopback address (a token is then required).
    #[must_use]
    pub fn allow_remote(mut self, allow: bool) -> Self {
        self.allow_remote = allow;
        self
    }

    /// Requires this bearer token on every request.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Serves without a token (see [`no_token`](Self#structfield.no_token)).
    #[must_use]
    pub fn no_token(mut self) -> Self {
        self.no_token = true;
        self
    }

    /// Lets requests from `origin` through too.
    #[must_use]
    pub fn allow_origin(mut self, origin: AllowedOrigin) -> Self {
        self.allowed_origins.push(origin);
        self
    }

    /// Checks the security rules: a token that is not empty and has no whitespace; a
    /// token, or `no_token` and not both; a non-loopback address only with
    /// `allow_remote` and a token.
    pub fn validate(&self) -> Result<(), McpServeError> {
        let bad = |token: &String| {
            token.is_empty() || token.chars().any(|c| c.is_whitespace() || c.is_control())
        };
        if self.bearer_token.as_ref().is_some_and(bad) {
            return Err(McpServeError::BadToken);
        }
        if self.no_token && self.bearer_token.is_some() {
            return Err(McpServeError::NoTokenWithToken);
        }
        if self.no_token && self.allow_remote {
            return Err(McpServeError::NoTokenWithRemote);
        }
        if !self.addr.ip().is_loopback() && !self.allow_remote {
            return Err(McpServeError::RemoteWithoutToken { addr: self.addr });
        }
        match (&self.bearer_token, self.allow_remote, self.no_token) {
            (Some(_), _, _) | (None, false, true) => Ok(()),
            (None, true, _) => Err(McpServeError::MissingToken),
            (None, false, false) => Err(McpServeError::NoToken),
        }
    }
}

impl std::fmt::Debug for McpHttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpOptions")
            .field("addr", &self.addr)
            .field("allow_remote", &self.allow_remote)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("no_token", &self.no_token)
            .field("allowed_origins", &self.allowed_origins)
            .field("session_idle", &self.session_idle)
            .finish()
    }
}
