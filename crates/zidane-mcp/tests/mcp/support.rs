//! A server on one end of an in-memory pipe, rmcp's client on the other, and a client
//! handler that records what the server pushes.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    LoggingMessageNotificationParam, ResourceUpdatedNotificationParam,
    TaskStatusNotificationParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use zidane_mcp::{McpServeError, ServeOptions, serve_io};
use zidane_test_support::{alive, poll_until};

/// Longest a test waits for something that should happen.
pub const WAIT: Duration = Duration::from_secs(10);

/// Something the server pushed.
#[derive(Debug, Clone, PartialEq)]
pub enum Pushed {
    /// `notifications/message`: its level and data.
    Log(String, Value),
    /// `notifications/resources/updated`: the URI.
    Updated(String),
    /// `notifications/tasks`: the MCP task's id and status.
    TaskStatus(String, String),
    /// `notifications/progress`: the progress and the message.
    Progress(f64, String),
}

/// Records pushes; declares the MCP tasks extension when `tasks` is set, and names
/// itself `name` when set (the server shapes results and offers tasks by that name).
#[derive(Clone)]
pub struct Recorder {
    sender: mpsc::UnboundedSender<Pushed>,
    tasks: bool,
    name: Option<&'static str>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        if self.tasks {
            config.capabilities = ClientCapabilities::builder().enable_tasks().build();
        }
        if let Some(name) = self.name {
            config.client_info = rmcp::model::Implementation::new(name, "1.0");
        }
        config
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        let status = serde_json::to_value(params.task.status()).unwrap();
        let _ = self.sender.send(Pushed::TaskStatus(
            params.task.task.task_id,
            status.as_str().unwrap().to_owned(),
        ));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        let _ = self
            .sender
            .send(Pushed::Log(level.as_str().unwrap().to_owned(), params.data));
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.sender.send(Pushed::Progress(
            params.progress,
            params.message.unwrap_or_default(),
        ));
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.sender.send(Pushed::Updated(params.uri));
    }
}

pub struct Harness {
    pub client: RunningService<RoleClient, Recorder>,
    pub pushed: mpsc::UnboundedReceiver<Pushed>,
    pub server: tokio::task::JoinHandle<Result<(), McpServeError>>,
    pub stop: Arc<Notify>,
    pub dir: tempfile::TempDir,
}

pub async fn start() -> Harness {
    start_client(false, None, |options| options).await
}

/// A client that declares the MCP tasks extension and is one known to follow a task
/// to its result (Claude Code, by its name).
pub async fn start_with_tasks() -> Harness {
    start_client(true, Some("claude-code"), |options| options).await
}

/// A client that declares the MCP tasks extension under the name `name`.
pub async fn start_with_tasks_as(name: &'static str) -> Harness {
    start_client(true, Some(name), |options| options).await
}

/// A client named `name`, as a host names itself in `clientInfo`.
pub async fn start_as(name: &'static str) -> Harness {
    start_client(false, Some(name), |options| options).await
}

/// A server with options of its own.
pub async fn start_with(options: impl FnOnce(ServeOptions) -> ServeOptions) -> Harness {
    start_client(false, None, options).await
}

async fn start_client(
    tasks: bool,
    name: Option<&'static str>,
    options: impl FnOnce(ServeOptions) -> ServeOptions,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let stop = Arc::new(Notify::new());
    let stopped = Arc::clone(&stop);
    // No start-up sweep: it would end the orphans other tests (in other processes,
    // under nextest) make and look at; `zidane mcp`'s own tests cover it.
    let options = options(ServeOptions::new(dir.path()).sweep_orphans(false));
    let server = tokio::spawn(async move {
        serve_io(options, server_read, server_write, async move {
            stopped.notified().await;
        })
        .await
    });
    let (sender, pushed) = mpsc::unbounded_channel();
    let (client_read, client_write) = tokio::io::split(client_end);
    let client = Recorder {
        sender,
        tasks,
        name,
    }
    .serve((client_read, client_write))
    .await
    .unwrap();
    Harness {
        client,
        pushed,
        server,
        stop,
        dir,
    }
}

impl Harness {
    pub async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        tokio::time::timeout(
            WAIT,
            self.client
                .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)),
        )
        .await
        .expect("the call timed out")
        .unwrap()
    }

    /// Closes the client end and waits for the server to finish its teardown.
    pub async fn close(self) -> tempfile::TempDir {
        let Self {
            client,
            server,
            dir,
            ..
        } = self;
        client.cancel().await.unwrap();
        tokio::time::timeout(WAIT, server)
            .await
            .expect("the server did not stop")
            .unwrap()
            .unwrap();
        dir
    }

    /// The next push, within [`WAIT`].
    pub async fn next_push(&mut self) -> Pushed {
        tokio::time::timeout(WAIT, self.pushed.recv())
            .await
            .expect("nothing was pushed")
            .expect("the push channel closed")
    }
}

/// The text of a result (its one text block).
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

pub fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

/// How many `<task-notification>` blocks open the text, and for which tasks.
pub fn notified(result: &CallToolResult) -> Vec<String> {
    let text = text(result);
    let mut ids = Vec::new();
    let mut rest = text.as_str();
    while let Some(block) = rest.strip_prefix("<task-notification>") {
        let id = block
            .split("<task-id>")
            .nth(1)
            .and_then(|s| s.split("</task-id>").next())
            .unwrap()
            .to_owned();
        ids.push(id);
        let end = block.find("</task-notification>").unwrap() + "</task-notification>".len();
        rest = block[end..].trim_start_matches('\n');
    }
    ids
}

/// Waits until `pid` is gone, at most [`WAIT`].
pub async fn until_dead(pid: u32) {
    let failure = format!("pid {pid} still alive");
    poll_until(WAIT, Duration::from_millis(10), &failure, || !alive(pid)).await;
}

/// Starts `command` in the background and returns (task id, pid, log path).
pub async fn start_task(harness: &Harness, command: &str) -> (String, u32, String) {
    let started = harness
        .call(
            "shell",
            serde_json::json!({ "command": command, "run_in_background": true }),
        )
        .await;
    assert!(!is_error(&started), "{}", text(&started));
    let data = structured(&started);
    (
        data["task_id"].as_str().unwrap().to_owned(),
        u32::try_from(data["pid"].as_u64().unwrap()).unwrap(),
        data["output_path"].as_str().unwrap().to_owned(),
    )
}

/// Waits for the task to end, without telling the model (a resource read does not count).
pub async fn until_ended(harness: &Harness, task_id: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let listing = harness.client.list_resources(None).await.unwrap().resources;
        let ended = listing.iter().any(|r| {
            r.name == task_id
                && r.description
                    .as_deref()
                    .is_some_and(|d| !d.ends_with("running"))
        });
        if ended {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{task_id} did not end"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A background start as an MCP task: the task's id and pid (from the status message a
/// host shows the model) and the MCP task's id.
pub async fn start_as_mcp_task(harness: &Harness, command: &str) -> (String, u32, String) {
    let Value::Object(arguments) = json!({ "command": command, "run_in_background": true }) else {
        unreachable!()
    };
    let response = harness
        .client
        .call_tool_once(CallToolRequestParams::new("shell").with_arguments(arguments))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("expected an MCP task, got {response:?}")
    };
    let message = created.task.status_message.clone().unwrap_or_default();
    // `Started bash_1 (pid 123). Output: …`, one line.
    let rest = message.strip_prefix("Started ").expect(&message);
    let (id, rest) = rest.split_once(" (pid ").expect(&message);
    let (pid, _) = rest.split_once(')').expect(&message);
    assert!(!message.contains('\n'), "{message}");
    (id.to_owned(), pid.parse().unwrap(), created.task.task_id)
}
