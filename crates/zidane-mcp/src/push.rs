//! The informational pushes: `notifications/message` for every exit and stall (under the
//! client's `logging/setLevel`), `notifications/resources/updated` for a subscribed
//! `task://` resource, `notifications/resources/list_changed` when a task starts.
//!
//! None of them latches anything. A host may show them to the user, hand them to the
//! model, or drop them; only a tool result is sure to reach the model, so the exit stays
//! pending until it is piggybacked on one (or the model learns it by a kill, a completed
//! wait or a read of the ended task's log).

// Logging is deprecated by the 2026-07-28 protocol, which this server does not speak
// (it keeps sessions); the hosts of today still read it.
#![allow(deprecated)]

use std::sync::Weak;

use rmcp::model::{LoggingMessageNotificationParam, ResourceUpdatedNotificationParam};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use zidane_context::{StallInfo, TaskExitInfo, TaskStatus};

use crate::resources::task_uri;
use crate::session::{LEVELS, SessionCore};

/// What the agent's hooks hand the forwarder.
pub(crate) enum Push {
    Exit(TaskExitInfo),
    Stall(StallInfo),
    Started,
}

/// The name pushed log messages carry as their logger.
const LOGGER: &str = "zidane";

/// Forwards pushes to the client until the session stops them.
pub(crate) async fn forward(
    core: Weak<SessionCore>,
    mut pushes: mpsc::UnboundedReceiver<Push>,
    stop: CancellationToken,
) {
    loop {
        let push = tokio::select! {
            () = stop.cancelled() => break,
            push = pushes.recv() => match push {
                Some(push) => push,
                None => break,
            },
        };
        let Some(core) = core.upgrade() else { break };
        let Some(peer) = core.peer.get().cloned() else {
            continue;
        };
        // A client that went away makes these fail; the session's end tears it down.
        match push {
            Push::Exit(exit) => {
                let level = if exit.status == TaskStatus::Exited && exit.exit_code == 0 {
                    1
                } else {
                    3
                };
                if core.wants_level(level) {
                    let data = json!({
                        "event": "task_exit",
                        "summary": zidane_wire::exit_summary(&exit),
                        "uri": task_uri(exit.task_id),
                        "exit": exit,
                    });
                    let _ = peer.notify_logging_message(message(level, data)).await;
                }
                let uri = task_uri(exit.task_id);
                if core.is_subscribed(&uri) {
                    let _ = peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await;
                }
            }
            Push::Stall(stall) => {
                if core.wants_level(3) {
                    let data = json!({
                        "event": "task_stall",
                        "uri": task_uri(stall.task_id),
                        "stall": stall,
                    });
                    let _ = peer.notify_logging_message(message(3, data)).await;
                }
            }
            Push::Started => {
                let _ = peer.notify_resource_list_changed().await;
            }
        }
    }
}

fn message(level: usize, data: serde_json::Value) -> LoggingMessageNotificationParam {
    use rmcp::model::LoggingLevel;
    let level = match LEVELS.get(level).copied() {
        Some("debug") => LoggingLevel::Debug,
        Some("info") => LoggingLevel::Info,
        Some("notice") => LoggingLevel::Notice,
        Some("error") => LoggingLevel::Error,
        _ => LoggingLevel::Warning,
    };
    LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER)
}
