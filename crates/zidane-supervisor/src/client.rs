//! Talking to the supervisor, and starting it when no one listens.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use zidane_context::{Screen, TaskId, TaskInput, TtySize};

use crate::error::{Result, SupervisorError};
use crate::ledger::Teller;
use crate::paths::SupervisorPaths;
use crate::protocol::{HostTask, Request, Response, StartRequest, TaskView};

/// How long a client waits for a supervisor it started to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(10);

/// How a client starts the supervisor: a program and its arguments (the `zidane`
/// binary and `supervisor serve --user-dir DIR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// A client of one user dir's supervisor. Each request is a connection of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorClient {
    paths: SupervisorPaths,
    launcher: Option<Launcher>,
}

impl SupervisorClient {
    /// A client that only talks to a running supervisor.
    pub fn new(paths: SupervisorPaths) -> Self {
        Self {
            paths,
            launcher: None,
        }
    }

    /// Starts the supervisor with `launcher` when none listens.
    #[must_use]
    pub fn launcher(mut self, launcher: Launcher) -> Self {
        self.launcher = Some(launcher);
        self
    }

    /// The same client for what only looks: it starts a supervisor only when tasks are
    /// kept (the new one re-adopts them and answers for them); with none kept, no
    /// supervisor runs for nothing.
    pub fn for_looking(&self) -> Self {
        let kept =
            std::fs::read_dir(self.paths.tasks_dir()).is_ok_and(|mut tasks| tasks.next().is_some());
        Self {
            paths: self.paths.clone(),
            launcher: self.launcher.clone().filter(|_| kept),
        }
    }

    /// The supervisor's paths.
    pub fn paths(&self) -> &SupervisorPaths {
        &self.paths
    }

    /// Sends one request and reads its answer; an [`Response::Error`] becomes
    /// [`SupervisorError::Refused`].
    pub async fn request(&self, request: &Request) -> Result<Response> {
        let mut stream = self.connect().await?;
        crate::wire::send(&mut stream, request)
            .await
            .map_err(|source| self.unreachable(source))?;
        match crate::wire::receive(&mut stream, "answer").await? {
            Response::Error { message } => Err(SupervisorError::Refused(message)),
            answer => Ok(answer),
        }
    }

    /// Whether a supervisor listens: its pid and state directory.
    pub async fn ping(&self) -> Result<(u32, PathBuf)> {
        match self.request(&Request::Ping).await? {
            Response::Pong { pid, state } => Ok((pid, state)),
            other => Err(unexpected(&other)),
        }
    }

    /// Starts a detached task.
    pub async fn start(&self, start: StartRequest) -> Result<TaskView> {
        one(self.request(&Request::Start(Box::new(start))).await?)
    }

    /// Every task, or a workspace's; with `asker`, claims the ended ones it is to tell.
    pub async fn list(
        &self,
        workspace: Option<&Path>,
        asker: Option<&Teller>,
    ) -> Result<Vec<TaskView>> {
        many(
            self.request(&Request::List {
                workspace: workspace.map(Path::to_path_buf),
                asker: asker.cloned(),
                own: None,
            })
            .await?,
        )
    }

    /// A session's view: the workspace's detached tasks (the ended ones it is to tell
    /// claimed for it), and its own running tasks registered in place of those it
    /// registered before.
    pub async fn list_for_session(
        &self,
        workspace: &Path,
        asker: &Teller,
        own: Vec<HostTask>,
    ) -> Result<Vec<TaskView>> {
        many(
            self.request(&Request::List {
                workspace: Some(workspace.to_path_buf()),
                asker: Some(asker.clone()),
                own: Some(own),
            })
            .await?,
        )
    }

    /// Registers a running host's task for `zidane ps`.
    pub async fn register(&self, task: HostTask) -> Result<()> {
        self.request(&Request::Register(Box::new(task)))
            .await
            .map(drop)
    }

    /// The tasks of running hosts.
    pub async fn host_tasks(&self) -> Result<Vec<HostTask>> {
        match self.request(&Request::HostTasks).await? {
            Response::HostTasks { tasks } => Ok(tasks),
            other => Err(unexpected(&other)),
        }
    }

    /// Waits (at most [`HOST_KILLS_WAIT`](crate::HOST_KILLS_WAIT)) for the kills a person
    /// asks of `session`'s own tasks; their ids, none when the wait ran out.
    pub async fn host_kills(&self, session: &str) -> Result<Vec<TaskId>> {
        match self
            .request(&Request::HostKills {
                session: session.to_owned(),
            })
            .await?
        {
            Response::Kills { ids } => Ok(ids),
            other => Err(unexpected(&other)),
        }
    }

    /// Ends a running host's task (by its host, or its process group: TERM, then KILL
    /// after `grace`).
    pub async fn kill_host_task(&self, task: &HostTask, grace: Duration) -> Result<()> {
        self.request(&Request::KillHostTask {
            host_pid: task.host_process.map_or(0, |host| host.pid),
            id: task.id,
            grace,
        })
        .await
        .map(drop)
    }

    /// Ends a task's whole tree for a session's model; its end.
    pub async fn kill(&self, id: TaskId) -> Result<TaskView> {
        one(self.request(&Request::Kill { id, by_user: false }).await?)
    }

    /// Ends a task's whole tree for a person (`zidane kill`): its end says the user
    /// killed it.
    pub async fn kill_by_user(&self, id: TaskId) -> Result<TaskView> {
        one(self.request(&Request::Kill { id, by_user: true }).await?)
    }

    /// Writes `input` to a running task (its stdin pipe, or its terminal).
    pub async fn input(&self, id: TaskId, input: TaskInput) -> Result<()> {
        self.request(&Request::Input { id, input }).await.map(drop)
    }

    /// What a running terminal task's screen shows.
    pub async fn screen(&self, id: TaskId) -> Result<Screen> {
        match self.request(&Request::Screen { id }).await? {
            Response::Screen(screen) => Ok(*screen),
            other => Err(unexpected(&other)),
        }
    }

    /// Resizes a running task's terminal.
    pub async fn resize(&self, id: TaskId, size: TtySize) -> Result<()> {
        self.request(&Request::Resize { id, size }).await.map(drop)
    }

    /// Waits at most `timeout` for a task's end; the task (still running when the time
    /// ran out).
    pub async fn wait(&self, id: TaskId, timeout: Duration) -> Result<TaskView> {
        one(self.request(&Request::Wait { id, timeout }).await?)
    }

    /// Says `session`'s model was told these tasks' ends.
    pub async fn told(&self, session: &str, ids: Vec<TaskId>) -> Result<()> {
        self.request(&Request::Told {
            session: session.to_owned(),
            ids,
        })
        .await
        .map(drop)
    }

    /// Forgets ended tasks whose end was told, and their logs (those that ended at least
    /// `older_than` ago); with `dry_run` only lists them. Never a running or untold task.
    pub async fn clean(
        &self,
        older_than: Option<Duration>,
        dry_run: bool,
    ) -> Result<Vec<TaskView>> {
        many(
            self.request(&Request::Clean {
                older_than,
                dry_run,
            })
            .await?,
        )
    }

    /// The task a person typed: `bash_d7`, `d7` or `7`, or the start of one (an exact
    /// id wins over longer ones it begins).
    pub async fn resolve(&self, typed: &str) -> Result<TaskView> {
        let tasks = self.list(None, None).await?;
        resolve(typed, tasks)
    }

    async fn connect(&self) -> Result<crate::sys::Stream> {
        let first = match crate::sys::connect(&self.paths.socket).await {
            Ok(stream) => return Ok(stream),
            Err(error) => error,
        };
        let Some(launcher) = &self.launcher else {
            return Err(self.unreachable(first));
        };
        let mut scope = crate::sys::user_manager();
        let mut launched = launch(launcher, &self.paths, scope.as_deref())
            .map_err(|source| self.unreachable(source))?;
        let deadline = tokio::time::Instant::now() + LISTEN_WAIT;
        let outcome = loop {
            match crate::sys::connect(&self.paths.socket).await {
                Ok(stream) => break Ok(stream),
                Err(error) if tokio::time::Instant::now() >= deadline => {
                    break Err(self.unreachable(error));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
            // `systemd-run` that could not make the scope (no user bus, a refused unit)
            // exits at once: the supervisor is then started as it is elsewhere.
            if scope.is_some()
                && let Ok(Some(status)) = launched.try_wait()
                && !status.success()
            {
                tracing::debug!(%status, "systemd-run failed; the supervisor starts unscoped");
                scope = None;
                launched = match launch(launcher, &self.paths, None) {
                    Ok(child) => child,
                    Err(source) => break Err(self.unreachable(source)),
                };
            }
        };
        // Reaped by a thread of ours should it end first.
        std::thread::spawn(move || launched.wait());
        outcome
    }

    fn unreachable(&self, source: std::io::Error) -> SupervisorError {
        SupervisorError::Unreachable {
            socket: self.paths.socket.clone(),
            source,
        }
    }
}

/// What a supervisor keeps of its starter's environment: where things are, never a
/// secret. The tasks' own environments come with each start, through the policy.
const SUPERVISOR_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "RUST_LOG",
    "ZIDANE_PROCESS_PATH",
    "ZIDANE_BWRAP",
    // Windows: where the system, the shell and the profile are.
    "SystemRoot",
    "windir",
    "ComSpec",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "USERNAME",
];

/// Starts a supervisor: out of this process's group and session (it calls `setsid`
/// itself), with only [`SUPERVISOR_ENV`] of this process's environment, its stderr in
/// its log; through `systemd_run` in a scope of its own when given.
fn launch(
    launcher: &Launcher,
    paths: &SupervisorPaths,
    systemd_run: Option<&Path>,
) -> std::io::Result<std::process::Child> {
    crate::store::make_private_dir(&paths.state)?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(paths.log_file())?;
    let mut command = match systemd_run {
        Some(systemd_run) => {
            let label = paths
                .socket
                .file_stem()
                .map_or_else(|| "supervisor".into(), |stem| stem.to_string_lossy());
            let nonce = format!(
                "{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_millis()
            );
            let mut command = std::process::Command::new(systemd_run);
            command.args(crate::scope::scoped_args(
                &label,
                &nonce,
                &launcher.program,
                &launcher.args,
            ));
            command
        }
        None => {
            let mut command = std::process::Command::new(&launcher.program);
            command.args(&launcher.args);
            command
        }
    };
    command
        .env_clear()
        .envs(
            SUPERVISOR_ENV
                .iter()
                .filter_map(|name| Some((name, std::env::var_os(name)?))),
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    if systemd_run.is_some()
        && let Some(bus) = std::env::var_os("DBUS_SESSION_BUS_ADDRESS")
    {
        // Only systemd-run's way to the user manager; the supervisor ignores it.
        command.env("DBUS_SESSION_BUS_ADDRESS", bus);
    }
    crate::sys::spawn_detached_std(&mut command)
}

fn one(answer: Response) -> Result<TaskView> {
    match answer {
        Response::Task(task) => Ok(*task),
        other => Err(unexpected(&other)),
    }
}

fn many(answer: Response) -> Result<Vec<TaskView>> {
    match answer {
        Response::Tasks { tasks } => Ok(tasks),
        other => Err(unexpected(&other)),
    }
}

fn unexpected(answer: &Response) -> SupervisorError {
    SupervisorError::Malformed {
        what: "answer",
        detail: format!("unexpected {answer:?}"),
    }
}

/// The one task `typed` names among `tasks`.
pub(crate) fn resolve(typed: &str, tasks: Vec<TaskView>) -> Result<TaskView> {
    let digits = typed.trim();
    let digits = digits.strip_prefix("bash_").unwrap_or(digits);
    let digits = digits.strip_prefix('d').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SupervisorError::UnknownTask(typed.to_owned()));
    }
    let number = |task: &TaskView| {
        task.record
            .id
            .detached_number()
            .map(|n| n.to_string())
            .unwrap_or_default()
    };
    if let Some(exact) = tasks.iter().find(|task| number(task) == digits) {
        return Ok(exact.clone());
    }
    let mut matches: Vec<TaskView> = tasks
        .into_iter()
        .filter(|task| number(task).starts_with(digits))
        .collect();
    match matches.len() {
        0 => Err(SupervisorError::UnknownTask(typed.to_owned())),
        1 => Ok(matches.remove(0)),
        _ => Err(SupervisorError::Ambiguous {
            prefix: typed.to_owned(),
            matches: matches
                .iter()
                .map(|task| task.record.id.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}
