//! A monitor's control socket: how a running detached task is typed into, read as a
//! screen, resized and killed, whichever supervisor or session asks.
//!
//! The task's stdin and terminal belong to its monitor (they must outlive the host and
//! any supervisor), so the monitor listens on a socket of its own beside the
//! supervisor's: as private (its directory `0700`, the peer's uid checked) and as hidden
//! from sandboxed tasks. The supervisor relays to it; nothing else connects.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use zidane_context::{ExecutionContext as _, ExecutionHandle, Screen, TaskId, TaskInput, TtySize};
use zidane_process::ProcessContext;

use crate::error::{Result, SupervisorError};

/// A request to a monitor.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum ControlRequest {
    /// Write to the task's input.
    Input {
        /// What to write.
        input: TaskInput,
    },
    /// What the task's terminal shows.
    Screen,
    /// Resize the task's terminal.
    Resize {
        /// The new size.
        size: TtySize,
    },
    /// End the task's whole tree.
    Kill {
        /// A person asked (`zidane kill`), not a session's model.
        by_user: bool,
    },
}

/// A monitor's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub(crate) enum ControlResponse {
    /// Done (for a kill: begun; the end is recorded as every end is).
    Done,
    /// The screen.
    Screen(Box<Screen>),
    /// Refused, and why.
    Error {
        /// Why, for a person.
        message: String,
    },
}

/// Sends `request` to the monitor listening on `socket`; its answer, an error
/// answer made [`SupervisorError::Refused`].
pub(crate) async fn ask(socket: &Path, request: &ControlRequest) -> Result<ControlResponse> {
    let mut stream =
        crate::sys::connect(socket)
            .await
            .map_err(|source| SupervisorError::Unreachable {
                socket: socket.to_path_buf(),
                source,
            })?;
    crate::wire::send(&mut stream, request)
        .await
        .map_err(|source| SupervisorError::Unreachable {
            socket: socket.to_path_buf(),
            source,
        })?;
    match crate::wire::receive(&mut stream, "monitor answer").await? {
        ControlResponse::Error { message } => Err(SupervisorError::Refused(message)),
        answer => Ok(answer),
    }
}

/// The task a monitor serves: its context, handle and id there.
#[derive(Clone)]
pub(crate) struct Served {
    /// The monitor's context.
    pub(crate) context: Arc<ProcessContext>,
    /// The handle the task runs under.
    pub(crate) handle: ExecutionHandle,
    /// Its id in that context.
    pub(crate) task_id: TaskId,
    /// Its detached id, for messages.
    pub(crate) id: TaskId,
}

/// Answers control connections until the listener fails; kills are passed to `kills`
/// (the monitor's own loop records the end).
pub(crate) async fn serve(
    listener: crate::sys::Listener,
    served: Served,
    kills: mpsc::UnboundedSender<bool>,
) {
    loop {
        let mut stream = match listener.accept().await {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%error, "the control socket stopped accepting");
                return;
            }
        };
        let served = served.clone();
        let kills = kills.clone();
        tokio::spawn(async move {
            let answer = match crate::wire::receive(&mut stream, "control request").await {
                Ok(request) => answer(&served, &kills, request).await,
                Err(error) => ControlResponse::Error {
                    message: error.to_string(),
                },
            };
            if let Err(error) = crate::wire::send(&mut stream, &answer).await {
                tracing::debug!(%error, "a control client left before its answer");
            }
        });
    }
}

async fn answer(
    served: &Served,
    kills: &mpsc::UnboundedSender<bool>,
    request: ControlRequest,
) -> ControlResponse {
    let Served {
        context,
        handle,
        task_id,
        id,
    } = served;
    let ended = || ControlResponse::Error {
        message: format!("{id} has ended"),
    };
    let refused = |error: zidane_context::ContextError| ControlResponse::Error {
        // The monitor's own id for the task means nothing to whoever asked.
        message: error
            .to_string()
            .replace(&task_id.to_string(), &id.to_string()),
    };
    match request {
        ControlRequest::Input { input } => {
            match context.write_input(*handle, *task_id, input).await {
                Ok(Some(())) => ControlResponse::Done,
                Ok(None) => ended(),
                Err(error) => refused(error),
            }
        }
        ControlRequest::Screen => match context.read_screen(*handle, *task_id).await {
            Ok(Some(screen)) => ControlResponse::Screen(Box::new(screen)),
            Ok(None) => ended(),
            Err(error) => refused(error),
        },
        ControlRequest::Resize { size } => match context.resize(*handle, *task_id, size).await {
            Ok(Some(())) => ControlResponse::Done,
            Ok(None) => ended(),
            Err(error) => refused(error),
        },
        ControlRequest::Kill { by_user } => match kills.send(by_user) {
            Ok(()) => ControlResponse::Done,
            Err(_) => ended(),
        },
    }
}
