//! The person's commands on a fleet's tasks: `zidane ps`, `logs`, `wait` and `kill`
//! with `--restate` (or the config file's `[fleet]` table) reach the tasks the sessions
//! of this directory's workspace started on the fleet — the same workspace handle a
//! `zidane mcp` or `zidane` started here uses ([`crate::fleet`]). They only look: a
//! person's `ps` claims no end a session is to tell.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use zidane::context::{
    CancellationToken, ExecutionContext as _, ExecutionHandle, ReadRange, TaskEntry, TaskId,
};
use zidane::restate::RestateContext;
use zidane::wire::exit_summary;

use crate::error::CliError;
use crate::fleet::Fleet;

/// How many lines one read of a log asks a worker for.
const READ_LINES: usize = 2000;

/// How often `logs -f` looks for more output while the task runs.
const FOLLOW_EVERY: Duration = Duration::from_millis(200);

/// How long one wait on a worker lasts before it is asked again.
const WAIT_ROUND: Duration = Duration::from_secs(60);

/// This directory's workspace on `fleet`, looking.
pub(crate) struct FleetTasks {
    context: RestateContext,
    handle: ExecutionHandle,
}

impl FleetTasks {
    /// The tasks of the working directory's workspace on `fleet`. Call inside a tokio
    /// runtime.
    pub(crate) async fn here(fleet: &Fleet) -> Result<Self, CliError> {
        let user_dir = crate::user_dir::user_dir()?;
        let workspace = std::env::current_dir().map_err(CliError::Io)?;
        let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
        let (context, handle) = fleet.workspace(&user_dir, &workspace, None).await?;
        Ok(Self { context, handle })
    }

    /// Every task, each with the id of the worker that runs it.
    pub(crate) async fn list(&self) -> Result<Vec<(TaskEntry, String)>, CliError> {
        let entries = self.context.list_background(self.handle).await?;
        Ok(entries
            .into_iter()
            .map(|entry| {
                let worker = self
                    .context
                    .worker_of(self.handle, entry.task_id)
                    .unwrap_or_default();
                (entry, worker)
            })
            .collect())
    }

    /// The task a person typed (`bash_3`); `None` when what was typed is no fleet
    /// task's id (a detached task's, `bash_d7`, or a host's), an error naming it when it
    /// is one but this workspace has no such task on the fleet.
    pub(crate) async fn find(&self, typed: &str) -> Result<Option<TaskEntry>, CliError> {
        let Ok(task_id) = TaskId::parse(typed.trim()) else {
            return Ok(None);
        };
        if task_id.is_detached() {
            return Ok(None);
        }
        self.list()
            .await?
            .into_iter()
            .map(|(entry, _)| entry)
            .find(|entry| entry.task_id == task_id)
            .map(Some)
            .ok_or_else(|| {
                CliError::Fleet(format!(
                    "no task {task_id} of this directory's workspace on the fleet (`zidane ps` lists them)"
                ))
            })
    }

    /// `zidane logs`: the task's log, read through the worker that holds it (its last
    /// `lines`, or all of it), then followed until the task ends.
    pub(crate) async fn logs(
        &self,
        task: &TaskEntry,
        lines: Option<usize>,
        follow: bool,
    ) -> Result<ExitCode, CliError> {
        let mut out = std::io::stdout().lock();
        let mut next = match lines {
            // Counted from the start: a window read from the end does not say where it
            // lies, and following goes on from a line's index.
            Some(n) => {
                let counted = self.read(task, ReadRange::new(0, Some(0))).await?;
                counted.total_lines.saturating_sub(n)
            }
            None => 0,
        };
        loop {
            let ended = !follow || self.ended(task.task_id).await?;
            // While it runs, its last line may still grow: it is printed once whole.
            next = self.print_from(task, next, ended, &mut out).await?;
            if ended {
                return Ok(ExitCode::SUCCESS);
            }
            tokio::time::sleep(FOLLOW_EVERY).await;
        }
    }

    /// Prints the log's lines from line `from`, all of them or all but the last; the
    /// first line not printed.
    async fn print_from(
        &self,
        task: &TaskEntry,
        mut from: usize,
        to_the_end: bool,
        out: &mut impl std::io::Write,
    ) -> Result<usize, CliError> {
        loop {
            let window = self
                .read(task, ReadRange::new(from, Some(READ_LINES)))
                .await?;
            let last_window = window.remaining == 0;
            let shown = if last_window && !to_the_end {
                window.lines.len().saturating_sub(1)
            } else {
                window.lines.len()
            };
            for line in &window.lines[..shown] {
                writeln!(out, "{line}")?;
            }
            out.flush()?;
            from = window.offset + shown;
            if last_window || window.lines.is_empty() {
                return Ok(from);
            }
        }
    }

    async fn read(
        &self,
        task: &TaskEntry,
        range: ReadRange,
    ) -> Result<zidane::context::ReadResult, CliError> {
        Ok(self
            .context
            .read_file(self.handle, &task.output_path, range)
            .await?)
    }

    async fn ended(&self, task_id: TaskId) -> Result<bool, CliError> {
        Ok(self
            .list()
            .await?
            .iter()
            .any(|(entry, _)| entry.task_id == task_id && !entry.is_running()))
    }

    /// `zidane wait`: exits with the task's code (124 past `limit`).
    pub(crate) async fn wait(
        &self,
        task: &TaskEntry,
        limit: Option<Duration>,
    ) -> Result<ExitCode, CliError> {
        let deadline = limit.map(|limit| tokio::time::Instant::now() + limit);
        let exit = loop {
            let round = deadline.map_or(WAIT_ROUND, |deadline| {
                deadline
                    .saturating_duration_since(tokio::time::Instant::now())
                    .min(WAIT_ROUND)
            });
            let waited = self
                .context
                .wait_background(self.handle, task.task_id, round, CancellationToken::new())
                .await?;
            if let Some(exit) = waited {
                break exit;
            }
            if deadline.is_some_and(|deadline| tokio::time::Instant::now() >= deadline) {
                writeln!(
                    std::io::stderr(),
                    "{}: still running after {}s",
                    task.task_id,
                    limit.unwrap_or_default().as_secs()
                )?;
                return Ok(ExitCode::from(124));
            }
        };
        writeln!(std::io::stdout(), "{}", exit_summary(&exit))?;
        Ok(ExitCode::from(u8::try_from(exit.exit_code).unwrap_or(255)))
    }

    /// `zidane kill`: ends the task's whole tree on its worker.
    pub(crate) async fn kill(&self, task: &TaskEntry) -> Result<ExitCode, CliError> {
        match self
            .context
            .kill_background(self.handle, task.task_id)
            .await?
        {
            Some(exit) => writeln!(std::io::stdout(), "{}", exit_summary(&exit))?,
            None => writeln!(
                std::io::stdout(),
                "{}: asked to end, still running",
                task.task_id
            )?,
        }
        Ok(ExitCode::SUCCESS)
    }
}
