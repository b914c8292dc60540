//! A task's monitor: the small process that runs one detached task and writes down its
//! end, whatever happens to the supervisor (podman's conmon does this for containers).
//!
//! The supervisor starts one per task, in a session of its own. The monitor runs the
//! command through a [`ProcessContext`] of its own — the same spawn, environment
//! policy, sandbox, budgets, log and group kill as any session task — says on its
//! stdout that the task runs, and waits. Its control socket (see [`crate::control`])
//! takes the task's input, screen, resize and kill; a SIGTERM (the supervisor's kill
//! when that socket cannot be reached) also ends the task's whole tree. Either way the exit is written to `exit.json` (whole or not at
//! all) before the supervisor is told, so a supervisor that is dead by then loses
//! nothing: the next one reads the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use zidane_context::{BackgroundOptions, ExecutionContext as _, KillReason};
use zidane_process::{ProcessContext, ProcessStamp};

use crate::error::{Result, SupervisorError};
use crate::paths::SupervisorPaths;
use crate::prepared::{Preparation, Prepared};
use crate::protocol::Request;
use crate::store::{self, MonitorSpec, Started, TaskFile, TaskRecord};

/// What a monitor says on its stdout, once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "monitor", rename_all = "snake_case")]
pub(crate) enum MonitorHello {
    /// The task runs.
    Started {
        /// The monitor and the task's pid.
        started: Started,
        /// The task's log.
        output_path: PathBuf,
    },
    /// It could not be started.
    Failed {
        /// Why.
        message: String,
    },
}

/// How long one wait for the task lasts before it is simply waited again.
const WAIT_ROUND: Duration = Duration::from_secs(24 * 60 * 60);

/// What the supervisor gives a monitor on its stdin, once: the task, and the
/// environment of the session that started it (what its policy passes, nothing more).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Assignment {
    /// What to run, and how (written to `spec.json`).
    pub(crate) spec: Box<MonitorSpec>,
    /// The task as listed (written to `task.json`).
    pub(crate) record: Box<TaskRecord>,
    /// The starting session's environment, before the task's policy.
    pub(crate) env: Vec<(String, String)>,
}

/// One line of a monitor's stdin: its task's number, at most one preparation, then its
/// task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub(crate) enum MonitorInput {
    /// The number of the task to come: its directory is made and its control socket
    /// bound while it has not come, so the start pays for neither.
    Ready {
        /// The task's number.
        number: u64,
    },
    /// Build this context while the task has not come (see [`crate::prepared`]).
    Prepare(Preparation),
    /// The task.
    Assign(Assignment),
}

/// Waits on stdin for the task the supervisor of `paths` assigns, runs it to its end,
/// records the end in the task's directory, then tells the supervisor. Call from a
/// process of its own (the `zidane` binary's hidden `supervisor monitor` command),
/// inside a tokio runtime.
///
/// The supervisor starts a monitor before it has a task for it, so that a start pays
/// for no process of zidane's own, only for the task's; a monitor whose input ends
/// before a task comes (its supervisor left) returns at once.
///
/// Errors: the assignment or the spec cannot be read, the context cannot be built, or
/// the end cannot be written. The task's own failures are its exit, not errors.
pub async fn run_monitor(paths: &SupervisorPaths) -> Result<()> {
    if let Err(error) = crate::sys::leave_host_session() {
        tracing::debug!(%error, "the monitor leads no new session");
    }
    let mut terminate = crate::sys::TerminateSignal::new()
        .map_err(|source| SupervisorError::StartFailed(format!("SIGTERM handler: {source}")))?;
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let mut prepared = None;
    let mut ready = None;
    let Assignment { spec, record, env } = loop {
        match input(&mut stdin).await? {
            None => {
                // No task came (the supervisor left): nothing of it stays.
                if let Some(ready) = ready {
                    Ready::abandon(ready, paths);
                }
                return Ok(());
            }
            Some(MonitorInput::Ready { number }) => ready = Some(Ready::make(paths, number).await?),
            Some(MonitorInput::Assign(assignment)) => break assignment,
            Some(MonitorInput::Prepare(mut preparation)) => {
                hide_supervisor(paths, &mut preparation.sandbox);
                let scratch = paths.state.join(format!("warm-up-{}", std::process::id()));
                match Prepared::new(preparation, &scratch).await {
                    Ok(ready) => prepared = Some(ready),
                    Err(error) => tracing::debug!(%error, "the monitor prepared nothing"),
                }
            }
        }
    };
    let Some(Ready {
        number,
        task_dir,
        listener,
    }) = ready
    else {
        return Err(SupervisorError::Malformed {
            what: "monitor input",
            detail: "a task came before its number".to_owned(),
        });
    };
    let task_dir = task_dir.as_path();
    let mut spec = *spec;
    hide_supervisor(paths, &mut spec.sandbox);
    let preparation = Preparation {
        env_policy: spec.env_policy.clone(),
        sandbox: spec.sandbox.clone(),
        kill_grace: spec.kill_grace,
        env,
    };
    let built = match prepared.and_then(|ready| ready.take_for(&preparation)) {
        Some(built) => Ok(built),
        None => crate::prepared::build(&preparation).await,
    };
    let started = match built {
        Ok((context, handle)) => start(context, handle, &spec, task_dir).await,
        Err(message) => Err(message),
    };
    let started = match started {
        Ok(started) => started,
        Err(message) => {
            say(&MonitorHello::Failed {
                message: message.clone(),
            });
            return Err(SupervisorError::StartFailed(message));
        }
    };
    let (context, handle, task_id, hello) = started;
    let context = Arc::new(context);
    let (kills, mut killed) = tokio::sync::mpsc::unbounded_channel();
    let control = paths.monitor_socket(number);
    // Without its control socket the task still runs and its end is still recorded; it
    // only takes no input and is killed by SIGTERM.
    if let Some(listener) = listener {
        let served = crate::control::Served {
            context: Arc::clone(&context),
            handle,
            task_id,
            id: spec.id,
        };
        tokio::spawn(crate::control::serve(listener, served, kills));
    }
    say(&hello);
    // The task's files once the supervisor has its answer: the record first, so a
    // supervisor killed from here on leaves a task the next one finds. Until
    // `started.json` is there, a task reads as starting for a while (the supervisor's
    // `may_be_starting`).
    if let MonitorHello::Started { started, .. } = &hello {
        let written = store::write(task_dir, TaskFile::Record, &*record)
            .and_then(|()| store::write(task_dir, TaskFile::Spec, &spec))
            .and_then(|()| store::write(task_dir, TaskFile::Started, started));
        if let Err(error) = written {
            tracing::warn!(%error, "the task's files could not be written");
        }
    }
    let cancel = CancellationToken::new();
    let mut by_user = false;
    let exit = loop {
        tokio::select! {
            waited = context.wait_background(handle, task_id, WAIT_ROUND, cancel.clone()) => {
                match waited {
                    Ok(Some(exit)) => break exit,
                    Ok(None) => {}
                    Err(error) => return Err(SupervisorError::StartFailed(error.to_string())),
                }
            }
            () = terminate.recv() => {
                match context.kill_background(handle, task_id).await {
                    Ok(Some(exit)) => break exit,
                    Ok(None) => {}
                    Err(error) => return Err(SupervisorError::StartFailed(error.to_string())),
                }
            }
            Some(user) = killed.recv() => {
                by_user |= user;
                match context.kill_background(handle, task_id).await {
                    Ok(Some(exit)) => break exit,
                    Ok(None) => {}
                    Err(error) => return Err(SupervisorError::StartFailed(error.to_string())),
                }
            }
        }
    };
    let _ = std::fs::remove_file(&control);
    let mut exit = exit;
    exit.task_id = spec.id;
    exit.detached = true;
    if by_user && exit.kill_reason == Some(KillReason::Requested) {
        exit.kill_reason = Some(KillReason::User);
    }
    if let Some(log) = crate::store::find_log(task_dir) {
        exit.output_path = log;
    }
    store::write(task_dir, TaskFile::Exit, &exit)?;
    // The end is on disk: telling the supervisor only spares it a rescan.
    let _ = crate::client::SupervisorClient::new(paths.clone())
        .request(&Request::Ended { id: spec.id })
        .await;
    Ok(())
}

/// A monitor given its task's number: the task's directory, and its control socket
/// (`None` where it could not be bound).
struct Ready {
    number: u64,
    task_dir: PathBuf,
    listener: Option<crate::sys::Listener>,
}

impl Ready {
    /// Makes task `number`'s directory and binds its control socket.
    async fn make(paths: &SupervisorPaths, number: u64) -> Result<Self> {
        let task_dir = paths.tasks_dir().join(number.to_string());
        store::make_private_dir(&task_dir).map_err(SupervisorError::state(&task_dir))?;
        let control = paths.monitor_socket(number);
        let listener = match crate::sys::Listener::bind(&control).await {
            Ok(listener) => Some(listener),
            Err(error) => {
                tracing::warn!(%error, "no control socket at {}", control.display());
                None
            }
        };
        Ok(Self {
            number,
            task_dir,
            listener,
        })
    }

    /// Removes what [`Ready::make`] made, for a task that never came.
    fn abandon(self, paths: &SupervisorPaths) {
        drop(self.listener);
        let _ = std::fs::remove_file(paths.monitor_socket(self.number));
        let _ = std::fs::remove_dir_all(&self.task_dir);
    }
}

/// Hides the supervisor's own directory (its socket, the monitors') in `sandbox`,
/// whatever this process's environment says its runtime directory is.
fn hide_supervisor(paths: &SupervisorPaths, sandbox: &mut zidane_context::SandboxPolicy) {
    if let Some(dir) = paths.socket.parent() {
        sandbox.deny_read.push(dir.to_path_buf());
    }
}

/// The next line of stdin; `None` when stdin ends first.
async fn input(stdin: &mut tokio::io::BufReader<tokio::io::Stdin>) -> Result<Option<MonitorInput>> {
    use tokio::io::AsyncBufReadExt as _;
    let mut line = String::new();
    let read = stdin
        .read_line(&mut line)
        .await
        .map_err(|error| SupervisorError::Malformed {
            what: "monitor input",
            detail: error.to_string(),
        })?;
    if read == 0 {
        return Ok(None);
    }
    serde_json::from_str(line.trim())
        .map(Some)
        .map_err(|error| SupervisorError::Malformed {
            what: "monitor input",
            detail: error.to_string(),
        })
}

/// Starts the command in `context`; the context, handle and id, and what to say.
async fn start(
    context: ProcessContext,
    handle: zidane_context::ExecutionHandle,
    spec: &MonitorSpec,
    task_dir: &Path,
) -> Result<
    (
        ProcessContext,
        zidane_context::ExecutionHandle,
        zidane_context::TaskId,
        MonitorHello,
    ),
    String,
> {
    let mut options = BackgroundOptions::new(task_dir)
        .spec(spec.spec.clone())
        .limits(spec.limits)
        .stdin(spec.stdin);
    options.tty = spec.tty;
    let begun = context
        .exec_background(handle, &spec.command, options)
        .await
        .map_err(|error| error.to_string())?;
    // The log is named for the detached id (`bash_d3.<time>.log`), not for the id this
    // context gave it: the task keeps writing to it, open, wherever its name goes.
    let output_path = task_dir.join(format!("{}.{}.log", spec.id, context.context_timestamp()));
    let output_path = match std::fs::rename(&begun.output_path, &output_path) {
        Ok(()) => output_path,
        Err(_) => begun.output_path.clone(),
    };
    let monitor = ProcessStamp::current()
        .ok_or_else(|| "this process has no stamp (no process table)".to_owned())?;
    let started = Started {
        monitor,
        pid: begun.pid,
    };
    Ok((
        context,
        handle,
        begun.task_id,
        MonitorHello::Started {
            started,
            output_path,
        },
    ))
}

/// One line on stdout, which the supervisor reads once.
fn say(hello: &MonitorHello) {
    use std::io::Write as _;
    if let Ok(line) = serde_json::to_string(hello) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}
