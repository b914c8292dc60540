//! `task://<task-id>` resources: each task's status (JSON) and the tail of its log.
//!
//! Reading a resource is not the model learning an exit: a host may read resources for
//! its own UI. Only the tools (`read_file` of the log, `wait_task`, `shell_kill`)
//! acknowledge an exit.

use std::path::Path;

use rmcp::ErrorData as McpError;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use zidane_context::{ContextError, TaskEntry, TaskId};

use zidane_agent::Agent;

/// The scheme of task resources.
pub(crate) const TASK_SCHEME: &str = "task://";

/// The most log bytes a resource read returns: the log's tail. `read_file` pages
/// through the whole log.
pub(crate) const LOG_TAIL_BYTES: u64 = 64 * 1024;

/// The URI of a task's resource: `task://bash_1` (`task://bash_d1` for a detached task).
pub(crate) fn task_uri(task_id: TaskId) -> String {
    format!("{TASK_SCHEME}{task_id}")
}

/// The task a `task://` URI names.
pub(crate) fn parse_task_uri(uri: &str) -> Result<TaskId, McpError> {
    uri.strip_prefix(TASK_SCHEME)
        .and_then(|id| TaskId::parse(id).ok())
        .ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "not a task resource: {uri:?}; task resources are task://bash_<n> or \
                     task://bash_d<n>"
                ),
                None,
            )
        })
}

/// The resource template hosts can fill in.
pub(crate) fn template() -> ResourceTemplate {
    ResourceTemplate::new("task://{task_id}", "task")
        .with_description(
            "A background task of this session: its status as JSON, then the tail of its log.",
        )
        .with_mime_type("application/json")
}

/// Every task of the session, oldest first.
pub(crate) async fn entries(agent: &Agent) -> Result<Vec<TaskEntry>, McpError> {
    let Some(handle) = agent.current_handle() else {
        return Ok(Vec::new());
    };
    let mut entries = match agent.context().list_background(handle).await {
        Ok(entries) => entries,
        Err(ContextError::Unsupported { .. }) => Vec::new(),
        Err(error) => return Err(McpError::internal_error(error.to_string(), None)),
    };
    entries.sort_by_key(|entry| (entry.started_at, entry.task_id));
    Ok(entries)
}

pub(crate) fn listing(entry: &TaskEntry) -> Resource {
    Resource::new(task_uri(entry.task_id), entry.task_id.to_string())
        .with_description(format!(
            "{} — {}{}",
            zidane_wire::command_preview(&entry.command),
            entry.status(),
            if entry.detached { " (detached)" } else { "" }
        ))
        .with_mime_type("application/json")
}

/// The contents of `task://<id>`: the status, then the log's tail.
pub(crate) async fn read(agent: &Agent, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
    let task_id = parse_task_uri(uri)?;
    let entry = entries(agent)
        .await?
        .into_iter()
        .find(|entry| entry.task_id == task_id)
        .ok_or_else(|| {
            McpError::resource_not_found(format!("no task {task_id} in this session"), None)
        })?;
    let status = serde_json::to_string_pretty(&entry)
        .map_err(|error| McpError::internal_error(error.to_string(), None))?;
    let log = log_tail(&entry.output_path)
        .await
        .unwrap_or_else(|error| format!("(the log cannot be read: {error})"));
    Ok(vec![
        ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some("application/json".to_owned()),
            text: status,
            meta: None,
        },
        ResourceContents::TextResourceContents {
            uri: format!("file://{}", entry.output_path.display()),
            mime_type: Some("text/plain".to_owned()),
            text: log,
            meta: None,
        },
    ])
}

async fn log_tail(path: &Path) -> std::io::Result<String> {
    let mut file = tokio::fs::File::open(path).await?;
    let len = file.metadata().await?.len();
    let start = len.saturating_sub(LOG_TAIL_BYTES);
    file.seek(std::io::SeekFrom::Start(start)).await?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).await?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if start > 0 {
        format!("[{start} earlier bytes not shown; read the log with read_file]\n{text}")
    } else {
        text
    })
}
