//! The MCP server of one session: tools, resources, logging level, subscriptions.
//!
//! Tool calls go through [`Agent::call_tool`](zidane_agent::Agent::call_tool) — the run
//! loop's own dispatch — and every result is followed by
//! [`Agent::drain_notifications`](zidane_agent::Agent::drain_notifications): the
//! `<task-notification>` blocks of tasks that ended since, at the very start of the
//! result's text. That is the one channel every host passes to the model, so it is the
//! one that latches.

// `logging/setLevel` and `resources/subscribe` are deprecated by the 2026-07-28
// protocol, which this server does not speak (it keeps sessions); the hosts of today use
// them.
#![allow(deprecated)]

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams, InitializeResult,
    JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use zidane_agent::{Agent, AgentError, Notifications, ToolCall};
use zidane_tools::{
    READ_FILE, SHELL, SHELL_KILL, ToolOutput, ToolSpec, WAIT_TASK, WaitLimits,
    wait_task_description,
};

use crate::budget::keep_end;
use crate::error::McpServeError;
use crate::list_tasks::LIST_TASKS;
use crate::options::ServeOptions;
use crate::resources;
use crate::schema::{ResultText, output_schema};
use crate::session::{LEVELS, SessionCore};
use crate::waits::{fit_wait, wait_limits};

const INSTRUCTIONS: &str = "\
zidane runs shell commands for you, in the foreground or as background tasks. Start a long \
command (a build, a test suite, a dev server) with `shell` and `run_in_background: true`: the \
call returns at once with a task id and a log path. Do not poll the log and do not sleep. \
When a task ends, a <task-notification> block arrives at the start of the next tool result \
this server returns, whatever the tool; `list_tasks` shows every task. Use `wait_task` only \
when your very next step needs the result, `shell_kill` to stop a task.";

/// One MCP session's server: an [`rmcp::ServerHandler`] over a host-driven
/// [`Agent`](zidane_agent::Agent).
///
/// Dropping the last clone tears the session down in the background (every task killed);
/// [`teardown`](Self::teardown) does it and waits.
#[derive(Clone)]
pub struct McpSession {
    core: Arc<SessionCore>,
    _guard: Arc<TeardownOnDrop>,
}

/// Tears the session down when the transport drops the handler.
struct TeardownOnDrop(Arc<SessionCore>);

impl Drop for TeardownOnDrop {
    fn drop(&mut self) {
        if self.0.is_torn_down() {
            return;
        }
        let core = Arc::clone(&self.0);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { core.teardown().await });
        }
    }
}

impl McpSession {
    /// A new session: its own execution context, logs under
    /// `<user_dir>/sessions/<id>/tasks/`. Call inside a tokio runtime.
    pub fn new(options: &ServeOptions) -> Result<Self, McpServeError> {
        let core = SessionCore::start(options)?;
        Ok(Self {
            _guard: Arc::new(TeardownOnDrop(Arc::clone(&core))),
            core,
        })
    }

    /// The session's agent.
    pub fn agent(&self) -> &Agent {
        &self.core.agent
    }

    /// Ends the session and waits: every task's process group is killed. Idempotent.
    pub async fn teardown(&self) {
        self.core.teardown().await;
    }

    pub(crate) fn core(&self) -> &Arc<SessionCore> {
        &self.core
    }
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession")
            .field("agent", &self.core.agent)
            .finish_non_exhaustive()
    }
}

/// The MCP view of a tool: zidane-tools' own name, description and input schema, the
/// output schema of its structured content, and hints.
fn mcp_tool(spec: ToolSpec) -> Tool {
    let input_schema = match spec.input_schema {
        serde_json::Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let annotations = match spec.name.as_str() {
        SHELL => ToolAnnotations::new().destructive(true).open_world(true),
        SHELL_KILL => ToolAnnotations::new()
            .destructive(true)
            .idempotent(true)
            .open_world(false),
        WAIT_TASK | READ_FILE | LIST_TASKS => ToolAnnotations::new().read_only(true),
        _ => ToolAnnotations::new(),
    };
    let mut tool = Tool::new(spec.name.clone(), spec.description, Arc::new(input_schema))
        .annotate(annotations);
    if let Some(serde_json::Value::Object(schema)) = output_schema(&spec.name) {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    tool
}

/// A tool's output as an MCP result, the drained notification blocks first, fitted into
/// `budget` bytes: the blocks whole (an exit is never cut), then as much of the end of
/// the tool's answer as fits ([`keep_end`]). Hosts show the model either the text or the
/// structured content, so the structured content carries the blocks and the fitted
/// answer too ([`ResultText`]).
pub(crate) fn tool_result(
    output: ToolOutput,
    told: &Notifications,
    budget: usize,
) -> CallToolResult {
    let blocks = told.blocks();
    let mut text = String::new();
    for block in &blocks {
        text.push_str(block);
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    let mut data = match output.data {
        serde_json::Value::Object(data) => Some(data),
        _ => None,
    };
    let room = budget.saturating_sub(text.len());
    let answer = keep_end(
        &output.text,
        room,
        data.as_ref().unwrap_or(&JsonObject::new()),
    );
    text.push_str(&answer);
    let content = vec![ContentBlock::text(text)];
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Some(mut data) = data.take() {
        // A foreground command's output is in the text already: the same end of it.
        if let Some(serde_json::Value::String(full)) = data.get("output") {
            let fitted = keep_end(full, room, &data);
            data.insert("output".to_owned(), fitted.into());
        }
        ResultText {
            notifications: blocks,
            text: answer,
        }
        .add_to(&mut data);
        result.structured_content = Some(serde_json::Value::Object(data));
    }
    result
}

impl McpSession {
    /// `wait_task`'s limits for the connected client ([`wait_limits`]).
    fn wait_limits(&self, context: &RequestContext<RoleServer>) -> WaitLimits {
        let peer = context.peer.peer_info();
        wait_limits(
            peer.as_deref().map(|peer| &peer.client_info),
            self.core.wait_cap,
        )
    }
}

pub(crate) fn agent_error(error: AgentError) -> McpError {
    McpError::internal_error(format!("the session cannot serve this call: {error}"), None)
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tasks()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("zidane", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(INSTRUCTIONS)
    }

    // A session is this server's unit (one agent, one set of tasks); the 2026-07-28
    // protocol drops sessions, so the newest version served is the last one with them.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.core.remember_peer(&context.peer);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.core.remember_peer(&context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let agent = &self.core.agent;
        let limits = self.wait_limits(&context);
        let tools = agent
            .tools()
            // As the run loop asks: the shell tool names the context's shell.
            .specs_in(&agent.background_gate(), agent.context().as_ref())
            .into_iter()
            .map(|mut spec| {
                if spec.name == WAIT_TASK {
                    spec.description = wait_task_description(limits);
                }
                mcp_tool(spec)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.core.remember_peer(&context.peer);
        let mut arguments = request.arguments.unwrap_or_default();
        let agent = &self.core.agent;
        let is_wait = agent
            .tools()
            .resolve(&request.name)
            .is_some_and(|tool| tool.spec().name == WAIT_TASK);
        // Only a wait has limits to fit and progress to report.
        let limits = is_wait.then(|| self.wait_limits(&context));
        if let Some(limits) = limits {
            fit_wait(&mut arguments, limits);
        }
        let input = serde_json::Value::Object(arguments);
        let client_takes_tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        if is_wait && client_takes_tasks {
            let task =
                crate::tasks::spawn_wait(&self.core, context.id.to_string(), input, context.peer);
            return Ok(CallToolResponse::Task(task));
        }
        let call = ToolCall::new(context.id.to_string(), request.name.into_owned(), input)
            .cancel(context.ct.clone());
        let _progress = limits
            .zip(context.meta.get_progress_token())
            .map(|(limits, token)| {
                crate::waits::report_progress(context.peer.clone(), token, limits)
            });
        let output = agent.call_tool(call).await.map_err(agent_error)?;
        let told = agent.drain_notifications().await.map_err(agent_error)?;
        Ok(CallToolResponse::Complete(tool_result(
            output,
            &told,
            self.core.result_budget,
        )))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(
            self.core.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.core.tasks.cancel_task(&request.task_id)
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
        match LEVELS.iter().position(|level| *level == name) {
            Some(index) => {
                self.core.set_min_level(index);
                Ok(())
            }
            None => Err(McpError::invalid_params(
                format!("unknown log level {name:?}"),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let entries = resources::entries(&self.core).await?;
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
        let contents = resources::read(&self.core, &request.uri).await?;
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            contents,
        )))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.core.remember_peer(&context.peer);
        resources::parse_task_uri(&request.uri)?;
        self.core.subscribe(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.core.unsubscribe(&request.uri);
        Ok(())
    }
}
