//! The MCP server: each request, served by the session it belongs to.
//!
//! Tool calls go through [`Agent::call_tool`](zidane_agent::Agent::call_tool) — the run
//! loop's own dispatch — and every result is followed by
//! [`Agent::drain_notifications`](zidane_agent::Agent::drain_notifications): the
//! `<task-notification>` blocks of tasks that ended since, at the very start of the
//! result (text and structured content). An error result is followed by it only for a
//! client that shows an error once ([`clients::blocks_ride`]); for any other the blocks
//! wait for the next successful result. A client that takes MCP tasks gets a background
//! start and `wait_task` as MCP tasks instead.
//!
//! Both protocol eras are served: 2025-11-25 and earlier (`initialize`, a session per
//! connection or per HTTP session id) and 2026-07-28 (`server/discover`, per-request
//! metadata, `subscriptions/listen`), with the client's name and capabilities read from
//! each request where it carries them.

// `logging/setLevel` and `resources/subscribe` belong to the protocol before
// 2026-07-28, which this server still serves.
#![allow(deprecated)]

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};
use zidane_agent::{Notifications, ToolCall};
use zidane_context::TaskId;
use zidane_tools::{
    ExitChannel, SHELL, SpecView, ToolSpec, WAIT_TASK, WaitLimits, wait_task_description,
};

use crate::approval::{ElicitationApprover, approval_timeout};
use crate::clients::{self, ResultShape};
use crate::error::{McpServeError, agent_error};
use crate::options::ServeOptions;
use crate::result::tool_result;
use crate::schema::output_schema;
use crate::session::McpSession;
use crate::waits::{fit_wait, move_budget, wait_limits};
use crate::{codex_sandbox, mcp_tasks, resources, roots};
use zidane_context::lock;

/// What the model reads about the server, where a host shows it (and what a host's tool
/// search matches against).
const INSTRUCTIONS: &str = "\
zidane runs shell commands for you, in the foreground or as background tasks: use it for \
long-running commands — builds, test suites, dev servers, watchers, training runs. Start one \
with `shell` and `run_in_background: true`: the call returns at once with a task id and a \
log path, and the command keeps running while you work. Do not poll the log and do not \
sleep. When a task ends you are told once, with its exit code and log path, in a \
<task-notification>: as the result of the start where this host runs tool calls in its own \
background, otherwise at the start of the next result of any zidane tool. Use `wait_task` to \
wait for a task when your next step needs its result, `read_file` to read a log (a negative \
offset reads its last lines), `shell_kill` to stop a task, `list_tasks` to see them all.";

/// The sessions of one HTTP server: one per `initialize`d HTTP session, and one shared
/// by every request of the 2026-07-28 era, which carries no session (the server is its
/// scope).
pub(crate) struct HttpSessions {
    options: ServeOptions,
    all: Mutex<Vec<Arc<McpSession>>>,
    sessionless: Mutex<Option<Arc<McpSession>>>,
}

impl HttpSessions {
    pub(crate) fn new(options: ServeOptions) -> Self {
        Self {
            options,
            all: Mutex::new(Vec::new()),
            sessionless: Mutex::new(None),
        }
    }

    /// A new session for an HTTP session that begins with `initialize`.
    fn open(&self) -> Result<Arc<McpSession>, McpServeError> {
        let session = McpSession::new(&self.options)?;
        let mut all = lock(&self.all);
        all.retain(|session| !session.is_torn_down());
        all.push(Arc::clone(&session));
        Ok(session)
    }

    /// The session every session-less request shares, made on first use.
    fn sessionless(&self) -> Result<Arc<McpSession>, McpServeError> {
        let mut shared = lock(&self.sessionless);
        if let Some(session) = shared.as_ref() {
            return Ok(Arc::clone(session));
        }
        let session = McpSession::new(&self.options)?;
        lock(&self.all).push(Arc::clone(&session));
        *shared = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Every session made, for the teardown at shutdown.
    pub(crate) fn take_all(&self) -> Vec<Arc<McpSession>> {
        lock(&self.sessionless).take();
        std::mem::take(&mut *lock(&self.all))
    }
}

/// Which session a server's requests belong to.
enum Scope {
    /// One session for the life of the connection (stdio).
    Fixed(Arc<McpSession>),
    /// One HTTP request stream: a session of its own once the client initializes, else
    /// the server's session-less one.
    Http {
        sessions: Arc<HttpSessions>,
        own: OnceLock<Arc<McpSession>>,
    },
}

/// An MCP server ([`rmcp::ServerHandler`]) over zidane's sessions.
///
/// Over stdio it serves one [`McpSession`] the caller made and tears down. Over HTTP,
/// [`serve_http`](crate::serve_http) makes one per request stream; a session it opened
/// for an `initialize` is torn down (every task killed) when the stream ends.
pub struct McpServer {
    scope: Scope,
}

impl McpServer {
    /// A server whose every request belongs to `session`.
    pub fn new(session: Arc<McpSession>) -> Self {
        Self {
            scope: Scope::Fixed(session),
        }
    }

    pub(crate) fn http(sessions: Arc<HttpSessions>) -> Self {
        Self {
            scope: Scope::Http {
                sessions,
                own: OnceLock::new(),
            },
        }
    }

    /// The session a request belongs to.
    fn session(&self) -> Result<Arc<McpSession>, McpError> {
        match &self.scope {
            Scope::Fixed(session) => Ok(Arc::clone(session)),
            Scope::Http { sessions, own } => match own.get() {
                Some(session) => Ok(Arc::clone(session)),
                None => sessions.sessionless().map_err(session_error),
            },
        }
    }

    /// The session an `initialize` begins: over HTTP, a new one of its own.
    fn session_for_initialize(&self) -> Result<Arc<McpSession>, McpError> {
        match &self.scope {
            Scope::Fixed(session) => Ok(Arc::clone(session)),
            Scope::Http { sessions, own } => {
                if let Some(session) = own.get() {
                    return Ok(Arc::clone(session));
                }
                let session = sessions.open().map_err(session_error)?;
                Ok(Arc::clone(own.get_or_init(|| session)))
            }
        }
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let Scope::Http { own, .. } = &self.scope else {
            return;
        };
        let Some(session) = own.get().filter(|session| !session.is_torn_down()) else {
            return;
        };
        let session = Arc::clone(session);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { session.teardown().await });
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let session = match &self.scope {
            Scope::Fixed(session) => Some(session),
            Scope::Http { own, .. } => own.get(),
        };
        f.debug_struct("McpServer")
            .field("session", &session)
            .finish_non_exhaustive()
    }
}

/// Asks the client for its roots, on a task of its own (bounded by
/// [`roots::ROOTS_TIMEOUT`]), and makes them the session's workspace roots.
fn refresh_roots(session: Arc<McpSession>, context: NotificationContext<RoleServer>) {
    tokio::spawn(async move {
        // Roots are this machine's paths: a session whose tasks run elsewhere has none.
        if let Some(process) = session.process() {
            roots::refresh(context.peer, process, roots::ROOTS_TIMEOUT).await;
        }
    });
}

fn session_error(error: McpServeError) -> McpError {
    McpError::internal_error(error.to_string(), None)
}

/// Whether the request's client takes MCP tasks: it declares them (in the request's
/// metadata, or at `initialize`) and is known to follow a task to its result. A client
/// that declares the extension but reads the task handle as the call's result (the
/// Inspector) would show an empty result and lose the exit.
fn takes_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks())
        && clients::handles_tasks(context.client_info().as_ref())
}

/// The shape of the structured content for the request's client.
fn result_shape(context: &RequestContext<RoleServer>) -> ResultShape {
    clients::result_shape(context.client_info().as_ref())
}

/// How a background task's end reaches the model of the request's client.
fn exit_channel(context: &RequestContext<RoleServer>) -> ExitChannel {
    if takes_tasks(context) {
        ExitChannel::HostWakes
    } else {
        ExitChannel::NextToolResult
    }
}

/// `wait_task`'s limits for the request's client ([`wait_limits`]).
fn limits(session: &McpSession, context: &RequestContext<RoleServer>) -> WaitLimits {
    wait_limits(context.client_info().as_ref(), session.wait_cap)
}

/// The MCP view of a tool: zidane-tools' own name, description and input schema, the
/// output schema of its structured content, a title and hints.
fn mcp_tool(spec: ToolSpec, shape: ResultShape) -> Tool {
    let input_schema = match spec.input_schema {
        serde_json::Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let hints = spec.annotations;
    let mut annotations = ToolAnnotations::new();
    if let Some(read_only) = hints.read_only {
        annotations = annotations.read_only(read_only);
    }
    if let Some(destructive) = hints.destructive {
        annotations = annotations.destructive(destructive);
    }
    if let Some(idempotent) = hints.idempotent {
        annotations = annotations.idempotent(idempotent);
    }
    if let Some(open_world) = hints.open_world {
        annotations = annotations.open_world(open_world);
    }
    let mut tool =
        Tool::new(spec.name, spec.description, Arc::new(input_schema)).annotate(annotations);
    if let Some(title) = spec.title {
        tool = tool.with_title(title);
    }
    if let Some(serde_json::Value::Object(schema)) = spec
        .output_schema
        .map(|schema| output_schema(schema, shape))
    {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    tool
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tasks()
            // Codex then sends its own sandbox with every call, which zidane follows.
            .enable_experimental_with(codex_sandbox::experimental_capabilities())
            .build();
        // The newest era with `initialize`: what that handshake can agree to. The
        // 2026-07-28 era is chosen per request, and `server/discover` lists every era.
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("zidane", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let session = self.session_for_initialize()?;
        context.peer.set_peer_info(request.clone());
        session.pushes.remember_peer(&context.peer);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Ok(session) = self.session() else {
            return;
        };
        session.pushes.remember_peer(&context.peer);
        let declares_roots = context
            .peer
            .peer_info()
            .is_some_and(|info| roots::declared(&info.capabilities));
        if declares_roots {
            refresh_roots(session, context);
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        if let Ok(session) = self.session() {
            refresh_roots(session, context);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let session = self.session()?;
        let agent = session.agent();
        let channel = exit_channel(&context);
        let limits = limits(&session, &context);
        let shape = result_shape(&context);
        let gate = agent
            .background_gate()
            .with_exit_channel(channel)
            .with_foreground_budget(move_budget(
                context.client_info().as_ref(),
                session.move_after,
            ));
        let tools = agent
            .tools()
            // As the run loop asks: the shell tool names the context's shell.
            .specs(&SpecView::in_context(gate, agent.context().as_ref()))
            .into_iter()
            .map(|mut spec| {
                if spec.name == WAIT_TASK {
                    spec.description = wait_task_description(limits, channel);
                }
                mcp_tool(spec, shape)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let session = self.session()?;
        let agent = session.agent();
        let mut arguments = request.arguments.unwrap_or_default();
        let tool = agent
            .tools()
            .resolve(&request.name)
            .map(|tool| tool.spec(&SpecView::default()).name);
        let is_wait = tool.as_deref() == Some(WAIT_TASK);
        let is_background_start = tool.as_deref() == Some(SHELL)
            && arguments.get("run_in_background") == Some(&serde_json::Value::Bool(true));
        // Only a wait has limits to fit and progress to report.
        let limits = is_wait.then(|| limits(&session, &context));
        if let Some(limits) = limits {
            fit_wait(&mut arguments, limits);
        }
        let input = serde_json::Value::Object(arguments);
        let takes_tasks = takes_tasks(&context);
        if is_wait && takes_tasks {
            let task = mcp_tasks::spawn_wait(&session, context.id.to_string(), input, context.peer);
            return Ok(CallToolResponse::Task(task));
        }
        let _progress = limits
            .zip(context.meta.get_progress_token())
            .map(|(limits, token)| {
                crate::waits::report_progress(context.peer.clone(), token, limits)
            });
        let output = if is_wait {
            session
                .joins
                .wait(agent, context.id.to_string(), input, context.ct.clone())
                .await
                .map_err(|error| McpError::internal_error(error, None))?
        } else {
            let mut call = ToolCall::new(context.id.to_string(), request.name.into_owned(), input)
                .cancel(context.ct.clone())
                .exit_channel(exit_channel(&context));
            // Before the client gives up on the call, a foreground command moves.
            call.foreground_budget =
                move_budget(context.client_info().as_ref(), session.move_after);
            // A command outside the sandbox is asked of the person at this client.
            call.approver = Some(Arc::new(ElicitationApprover::new(
                context.peer.clone(),
                approval_timeout(),
            )));
            // The host's own sandbox (Codex's), which this call's commands never run
            // wider than.
            call.host_sandbox = codex_sandbox::host_policy_in(&context.meta);
            agent.call_tool(call).await.map_err(agent_error)?
        };
        // A foreground command that moved is a background start too.
        let moved = output.data.get("moved_to_background") == Some(&serde_json::Value::Bool(true));
        let mut output = output;
        if tool.as_deref() == Some(SHELL) && !is_background_start && !moved {
            // A foreground answer's exit acknowledged the command's task in the agent; the
            // client's model reads the answer as before, without it.
            if let Some(data) = output.data.as_object_mut() {
                data.remove("exit");
            }
        }
        if (is_background_start || moved) && takes_tasks && !output.is_error {
            let started = output
                .data
                .get("task_id")
                .and_then(serde_json::Value::as_str)
                .and_then(|id| TaskId::parse(id).ok());
            if let Some(task_id) = started {
                let task = mcp_tasks::spawn_background(&session, task_id, &output, context.peer);
                return Ok(CallToolResponse::Task(task));
            }
        }
        let told = if clients::blocks_ride(context.client_info().as_ref(), output.is_error) {
            agent.drain_notifications().await.map_err(agent_error)?
        } else {
            // Not drained, so not latched: they stay pending for the next result they
            // ride on.
            Notifications::default()
        };
        Ok(CallToolResponse::Complete(tool_result(
            output,
            &told,
            session.result_budget,
            result_shape(&context),
        )))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let session = self.session()?;
        let task = mcp_tasks::get_task(&session, &request.task_id, &context).await?;
        Ok(GetTaskResult::new(task))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session()?.mcp_tasks.cancel_task(&request.task_id)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let name = serde_json::to_value(request.level)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        if self.session()?.pushes.set_min_level(&name) {
            Ok(())
        } else {
            Err(McpError::invalid_params(
                format!("unknown log level {name:?}"),
                None,
            ))
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let entries = resources::entries(self.session()?.agent()).await?;
        Ok(ListResourcesResult::with_all_items(
            entries.iter().map(resources::listing).collect(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            resources::template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let contents = resources::read(self.session()?.agent(), &request.uri).await?;
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            contents,
        )))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Task resources and the list of them; nothing else here changes.
        let tasks: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| resources::parse_task_uri(uri).is_ok())
            .cloned()
            .collect();
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = (!tasks.is_empty()).then_some(tasks);
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let session = self.session()?;
        let sink = context.sink().clone();
        session.pushes.listen(sink.clone());
        context.cancelled().await;
        session.pushes.unlisten(&sink);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::parse_task_uri(&request.uri)?;
        self.session()?.pushes.subscribe(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session()?.pushes.unsubscribe(&request.uri);
        Ok(())
    }
}
