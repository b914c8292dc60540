//! One `zidane mcp` over stdio, driven by rmcp's client: a background start, and when
//! and how its end reached the client.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use tokio::sync::mpsc;

use crate::processes::{Dirs, STOP_WAIT};

/// Longest an exit may take to be told after the call's result.
const TOLD_WAIT: Duration = Duration::from_secs(10);

/// The client's side of a session: each `task_exit` log message, with its task id and
/// when it arrived.
#[derive(Clone)]
struct Listener {
    told: mpsc::UnboundedSender<(String, Instant)>,
}

impl ClientHandler for Listener {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let arrived = Instant::now();
        if params.data["event"] == "task_exit"
            && let Some(id) = params.data["exit"]["task_id"].as_str()
        {
            let _ = self.told.send((id.to_owned(), arrived));
        }
    }
}

/// One `zidane mcp` over stdio with rmcp's client, log messages asked for.
pub(crate) struct McpServer {
    pub(crate) name: String,
    client: Option<RunningService<RoleClient, Listener>>,
    told: mpsc::UnboundedReceiver<(String, Instant)>,
    child: tokio::process::Child,
}

/// One background start through MCP: the call, and from its result until the task's
/// end reached the client (zero when it came first or in the result), and how it came.
pub(crate) struct Timed {
    pub(crate) call: Duration,
    pub(crate) told: Duration,
    pub(crate) how: Told,
}

/// How a start's end first reached the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Told {
    /// Its `<task-notification>` opened the start's own result.
    InResult,
    /// Its log message came before the result.
    PushedFirst,
    /// Its log message came after the result.
    Pushed,
}

impl McpServer {
    /// Starts `zidane mcp` with `flags`, its user dir `user`, connects, and asks for
    /// log messages.
    pub(crate) async fn start(
        name: &str,
        binary: &Path,
        dirs: &Dirs,
        user: &str,
        flags: &[&str],
    ) -> Self {
        let mut child = dirs
            .mcp(binary)
            .arg("--user-dir")
            .arg(dirs.users.join(user))
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("{}: {error}", binary.display()));
        let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let (sender, told) = mpsc::unbounded_channel();
        let client = Listener { told: sender }
            .serve(transport)
            .await
            .unwrap_or_else(|error| panic!("{name} did not start: {error}"));
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
            .await
            .unwrap();
        Self {
            name: name.to_owned(),
            client: Some(client),
            told,
            child,
        }
    }

    /// Starts `command` in the background and waits until its end is told.
    pub(crate) async fn run_in_background(&mut self, command: &str) -> Timed {
        let arguments = serde_json::json!({ "command": command, "run_in_background": true });
        let serde_json::Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let client = self.client.as_ref().unwrap();
        let called = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new("shell").with_arguments(arguments))
            .await
            .unwrap_or_else(|error| panic!("{}: the call failed: {error}", self.name));
        let answered = Instant::now();
        assert_ne!(result.is_error, Some(true), "{}: {result:?}", self.name);
        let structured = result.structured_content.clone().unwrap_or_default();
        let id = structured["task_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no task_id in {structured}", self.name))
            .to_owned();
        let call = answered - called;
        // A task that ended while the call was answered is told in its own result: the
        // server drains the session's exits (a fleet session sweeps its workers) into
        // every result, and an exit drained there is not pushed again.
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.clone()))
            .collect();
        if text
            .iter()
            .any(|text| text.contains(&format!("<task-notification>\n<task-id>{id}</task-id>")))
        {
            return Timed {
                call,
                told: Duration::ZERO,
                how: Told::InResult,
            };
        }
        let told_at = tokio::time::timeout(TOLD_WAIT, async {
            loop {
                let (task, at) = self.told.recv().await.expect("the session is open");
                if task == id {
                    return at;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{}: {id}'s exit not told within {TOLD_WAIT:?}", self.name));
        Timed {
            call,
            told: told_at.saturating_duration_since(answered),
            how: if told_at < answered {
                Told::PushedFirst
            } else {
                Told::Pushed
            },
        }
    }

    /// Ends the session as a host does (its stdin closed) and waits for the server to
    /// exit, killing it after [`STOP_WAIT`].
    pub(crate) async fn close(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.cancel().await;
        }
        if tokio::time::timeout(STOP_WAIT, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}
