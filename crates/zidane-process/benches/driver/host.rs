//! A host as the drivers set one up: a context, a handle, and every exit arriving on a
//! channel. Shared by the Unix driver and the Windows one; each names its shell
//! (`protocol_shell`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;
use zidane_context::{BackgroundOptions, ExecutionContext, ExecutionHandle, TaskExitInfo};
use zidane_process::ProcessContext;

use crate::protocol::Failure;

/// How long an op waits for any one exit.
const EXIT_WAIT: Duration = Duration::from_secs(240);

/// A context and handle as a host would set them up, exits arriving on a channel.
pub(crate) struct Host {
    pub(crate) context: ProcessContext,
    pub(crate) handle: ExecutionHandle,
    pub(crate) exits_tx: mpsc::UnboundedSender<TaskExitInfo>,
    pub(crate) exits: mpsc::UnboundedReceiver<TaskExitInfo>,
    pub(crate) dir: PathBuf,
}

impl Host {
    pub(crate) async fn new(dir: &Path, max_tasks: usize) -> Result<Self, Failure> {
        let context = ProcessContext::builder()
            .max_background_tasks(max_tasks)
            .shell(crate::protocol_shell())
            .build();
        let handle = context.create_handle().await?;
        let (exits_tx, exits) = mpsc::unbounded_channel();
        Ok(Self {
            context,
            handle,
            exits_tx,
            exits,
            dir: dir.to_owned(),
        })
    }

    pub(crate) fn options(&self) -> BackgroundOptions {
        let tx = self.exits_tx.clone();
        BackgroundOptions::new(&self.dir).on_exit(move |exit| {
            let _ = tx.send(exit);
        })
    }

    pub(crate) async fn next_exit(&mut self) -> Result<TaskExitInfo, Failure> {
        match tokio::time::timeout(EXIT_WAIT, self.exits.recv()).await {
            Ok(Some(exit)) => Ok(exit),
            Ok(None) => Err("the exit channel closed".into()),
            Err(_) => Err("timed out waiting for an exit".into()),
        }
    }
}
