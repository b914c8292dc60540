//! The pushes: what the server sends unasked when a task starts, stalls or ends.
//!
//! None of them latches anything. A host may show them to the user, hand them to the
//! model, or drop them; only a tool result (or an MCP task's result) is sure to reach the
//! model, so an exit stays pending until one carries it.
//!
//! - A session that began with `initialize` (protocol 2025-11-25 and earlier) gets
//!   `notifications/message` for exits, stalls and task events (at most one per task
//!   per `EVENT_COOLDOWN`: the lines themselves reach the model in a tool result) once
//!   it asked for them with
//!   `logging/setLevel`, `notifications/resources/updated` for a `task://` resource it
//!   subscribed to, and `notifications/resources/list_changed` when a task starts.
//! - A client of the 2026-07-28 protocol gets the resource changes on each open
//!   `subscriptions/listen` stream that accepted them, and no log messages: that
//!   protocol forbids unsolicited ones.

// Logging and `resources/subscribe` belong to the protocol before 2026-07-28, which
// this server still serves.
#![allow(deprecated)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ResourceListChangedNotification,
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
};
use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use zidane_agent::EVENT_COOLDOWN;
use zidane_context::{StallInfo, TaskExitInfo, TaskId, TaskStatus};
use zidane_tools::TaskEvent;

use crate::resources::task_uri;
use zidane_context::lock;

/// The MCP log levels, lowest first (`logging/setLevel` filters by this order).
pub(crate) const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Pushes waiting for the forwarder. A client that reads nothing must not make the
/// server hold every event it ever had: past this, pushes are dropped (the exits stay
/// queued for the model all the same).
pub(crate) const PUSH_QUEUE: usize = 256;

/// What the agent's hooks hand the forwarder.
pub(crate) enum Push {
    Exit(TaskExitInfo),
    Stall(StallInfo),
    Event(TaskEvent),
    Started,
}

/// Which task events are pushed: a task printing thousands of matching lines gets one
/// push per [`EVENT_COOLDOWN`], not one per line.
#[derive(Default)]
pub(crate) struct EventPushes {
    last: Mutex<HashMap<TaskId, Instant>>,
}

impl EventPushes {
    /// Whether an event of `task_id` is pushed now.
    pub(crate) fn admit(&self, task_id: TaskId) -> bool {
        let now = Instant::now();
        let mut last = lock(&self.last);
        match last.get(&task_id) {
            Some(at) if now.duration_since(*at) < EVENT_COOLDOWN => false,
            _ => {
                last.insert(task_id, now);
                true
            }
        }
    }
}

/// The name pushed log messages carry as their logger.
const LOGGER: &str = "zidane";

/// Where pushes go, and what the client asked for.
#[derive(Default)]
pub(crate) struct PushTargets {
    /// The client of a session that began with `initialize`.
    peer: OnceLock<Peer<RoleServer>>,
    /// The least level the client asked for with `logging/setLevel`, as an index into
    /// [`LEVELS`]; `None`: it did not ask, and no log message is sent.
    min_level: Mutex<Option<usize>>,
    /// `task://` URIs the client subscribed to with `resources/subscribe`.
    subscriptions: Mutex<HashSet<String>>,
    /// Open `subscriptions/listen` streams.
    listeners: Mutex<Vec<SubscriptionSink>>,
}

impl PushTargets {
    /// Remembers the client of an `initialize`d session (the first one wins).
    pub(crate) fn remember_peer(&self, peer: &Peer<RoleServer>) {
        let _ = self.peer.set(peer.clone());
    }

    /// Sets the least level of pushed log messages, by name; false for an unknown name.
    pub(crate) fn set_min_level(&self, name: &str) -> bool {
        match LEVELS.iter().position(|level| *level == name) {
            Some(index) => {
                *lock(&self.min_level) = Some(index);
                true
            }
            None => false,
        }
    }

    fn wants_level(&self, level: usize) -> bool {
        lock(&self.min_level).is_some_and(|min| level >= min)
    }

    pub(crate) fn subscribe(&self, uri: String) {
        lock(&self.subscriptions).insert(uri);
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    /// Adds an open `subscriptions/listen` stream.
    pub(crate) fn listen(&self, sink: SubscriptionSink) {
        lock(&self.listeners).push(sink);
    }

    /// Removes a stream that closed.
    pub(crate) fn unlisten(&self, sink: &SubscriptionSink) {
        lock(&self.listeners).retain(|open| open.id() != sink.id());
    }

    /// Sends `notification` on every open stream that accepted it.
    async fn to_listeners(&self, notification: ServerNotification) {
        let sinks = lock(&self.listeners).clone();
        for sink in sinks {
            // A stream that did not accept this kind refuses it; one that closed is gone.
            let _ = sink.send(notification.clone()).await;
        }
    }
}

/// The sending half the agent's hook uses; never blocks, drops a push when full.
pub(crate) fn queue() -> (mpsc::Sender<Push>, mpsc::Receiver<Push>) {
    mpsc::channel(PUSH_QUEUE)
}

/// Sends a push from a hook (which runs on whatever thread ended the task).
pub(crate) fn offer(sender: &mpsc::Sender<Push>, push: Push) {
    if sender.try_send(push).is_err() {
        tracing::debug!("a push was dropped: the client is not reading them");
    }
}

/// Forwards pushes to the client until `stop` is cancelled.
pub(crate) async fn forward(
    targets: Arc<PushTargets>,
    mut pushes: mpsc::Receiver<Push>,
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
        // A client that went away makes these fail; the session's end stops the loop.
        match push {
            Push::Exit(exit) => {
                let level = if exit.status == TaskStatus::Exited && exit.exit_code == 0 {
                    1
                } else {
                    3
                };
                let uri = task_uri(exit.task_id);
                if let Some(peer) = targets.peer.get() {
                    if targets.wants_level(level) {
                        let data = json!({
                            "event": "task_exit",
                            "summary": zidane_wire::exit_summary(&exit),
                            "uri": uri,
                            "exit": exit,
                        });
                        let _ = peer.notify_logging_message(message(level, data)).await;
                    }
                    if lock(&targets.subscriptions).contains(&uri) {
                        let _ = peer
                            .notify_resource_updated(ResourceUpdatedNotificationParam::new(
                                uri.clone(),
                            ))
                            .await;
                    }
                }
                let updated =
                    ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri));
                targets
                    .to_listeners(ServerNotification::ResourceUpdatedNotification(updated))
                    .await;
            }
            Push::Stall(stall) => {
                if let Some(peer) = targets.peer.get()
                    && targets.wants_level(3)
                {
                    let data = json!({
                        "event": "task_stall",
                        "uri": task_uri(stall.task_id),
                        "stall": stall,
                    });
                    let _ = peer.notify_logging_message(message(3, data)).await;
                }
            }
            Push::Event(event) => {
                if let Some(peer) = targets.peer.get()
                    && targets.wants_level(1)
                {
                    let data = json!({
                        "event": "task_event",
                        "uri": task_uri(event.task_id),
                        "task_event": event,
                    });
                    let _ = peer.notify_logging_message(message(1, data)).await;
                }
            }
            Push::Started => {
                if let Some(peer) = targets.peer.get() {
                    let _ = peer.notify_resource_list_changed().await;
                }
                targets
                    .to_listeners(ServerNotification::ResourceListChangedNotification(
                        ResourceListChangedNotification::default(),
                    ))
                    .await;
            }
        }
    }
}

fn message(level: usize, data: serde_json::Value) -> LoggingMessageNotificationParam {
    let level = match LEVELS.get(level).copied() {
        Some("debug") => LoggingLevel::Debug,
        Some("info") => LoggingLevel::Info,
        Some("notice") => LoggingLevel::Notice,
        Some("error") => LoggingLevel::Error,
        _ => LoggingLevel::Warning,
    };
    LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER)
}
