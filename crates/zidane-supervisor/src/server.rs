//! The supervisor: one per user dir, started on demand, owner of every detached task.
//!
//! It listens on a private socket (see [`SupervisorPaths`]), answers only processes of
//! its own user, and starts each task under a monitor of its own (see
//! [`run_monitor`](crate::run_monitor)). Its memory is a cache of the task
//! directories: at start it reads them back, re-adopts the tasks whose monitor still
//! runs (the same process: pid and start time), and records as lost those whose monitor
//! died before writing an end. It leaves when it has had no task running and no
//! request for its idle time.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chrono::Utc;
use tokio::io::AsyncBufReadExt as _;
use tokio::sync::watch;
use zidane_context::{LOST_EXIT_CODE, TaskExitInfo, TaskId, TaskStatus};

use crate::client::Launcher;
use crate::control::{ControlRequest, ControlResponse};
use crate::error::{Result, SupervisorError};
use crate::ledger::{Offer, Teller};
use crate::monitor::MonitorHello;
use crate::monitors::{Monitors, Waiting};
use crate::numbers::TaskNumbers;
use crate::paths::SupervisorPaths;
use crate::protocol::{HOST_KILLS_WAIT, HostTask, Request, Response, StartRequest, TaskView};
use crate::store::{self, Started, Stored, TaskFile, TaskRecord};

/// How often running tasks are checked for an end no monitor announced.
const RESCAN_EVERY: Duration = Duration::from_secs(1);

/// How long a monitor may take to say its task runs (a sandbox to build, a slow disk).
const START_WAIT: Duration = Duration::from_secs(30);

/// How long a supervisor with no task kept and no running host's task registered stays
/// after its last request: long enough for the client that started it to connect, and
/// no longer, so nothing of zidane's outlives a host that detached nothing.
const EMPTY_IDLE_EXIT: Duration = Duration::from_secs(1);

/// How long a person's kill of a running host's task waits for the host to be waiting
/// for kills (it asks again after each answer) before it signals the task itself.
const HOST_ANSWER_WAIT: Duration = Duration::from_secs(1);

/// How long a kill waits, past the grace, for the monitor to record the end.
const KILL_SLACK: Duration = Duration::from_secs(10);

/// How a supervisor runs.
#[derive(Debug, Clone)]
pub struct SupervisorOptions {
    /// Its socket and state.
    pub paths: SupervisorPaths,
    /// What runs a task's monitor; the supervisor appends `--socket SOCKET --state
    /// STATE` and gives the task on its stdin.
    pub monitor: Launcher,
    /// It leaves after this long with no task running and no request.
    pub idle_exit: Duration,
    /// Ended tasks whose end was told are removed, with their logs, this long after
    /// they ended (checked at start and every hour); `None`: kept until `zidane clean`.
    pub retention: Option<Duration>,
    /// Whether one monitor is kept started ahead of its task (the default), so a start
    /// pays only for its task's process; `false` starts each at its task's start.
    pub keep_monitor_ready: bool,
}

/// How long ended, told tasks are kept by default: as long as ended sessions.
pub const DEFAULT_DETACHED_RETENTION: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How often retention runs while the supervisor does.
const RETENTION_EVERY: Duration = Duration::from_secs(60 * 60);

/// Runs the supervisor until it has been idle for [`SupervisorOptions::idle_exit`].
/// Returns at once, successfully, when another supervisor of the same user dir runs.
///
/// Errors: the state directory or the socket cannot be made private, or the socket
/// cannot be bound.
pub async fn serve(options: SupervisorOptions) -> Result<()> {
    if let Err(error) = crate::sys::leave_host_session() {
        tracing::debug!(%error, "the supervisor leads no new session");
    }
    let paths = options.paths.clone();
    store::make_private_dir(&paths.tasks_dir()).map_err(SupervisorError::state(&paths.state))?;
    let lock_path = paths.lock_file();
    let lock = File::create(&lock_path).map_err(SupervisorError::state(&lock_path))?;
    if lock.try_lock().is_err() {
        tracing::info!("another supervisor runs for {}", paths.state.display());
        return Ok(());
    }
    let listener = match crate::sys::Listener::bind(&paths.socket).await {
        Ok(listener) => listener,
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => return Ok(()),
        Err(source) => {
            return Err(SupervisorError::Unreachable {
                socket: paths.socket.clone(),
                source,
            });
        }
    };
    let supervisor = Arc::new(Supervisor::load(options)?);
    {
        let supervisor = Arc::clone(&supervisor);
        tokio::spawn(async move {
            supervisor
                .monitors
                .refill(|| supervisor.next_number())
                .await;
        });
    }
    tracing::info!(
        tasks = supervisor.tasks().len(),
        "supervisor listening on {}",
        paths.socket.display()
    );
    let mut idle_since = tokio::time::Instant::now();
    let mut rescan = tokio::time::interval(RESCAN_EVERY);
    let mut retention = tokio::time::interval(RETENTION_EVERY);
    loop {
        tokio::select! {
            _ = retention.tick() => {
                if let Some(age) = supervisor.retention {
                    for task in supervisor.clean(Some(age), false) {
                        tracing::info!(id = %task.record.id, "retention removed an ended task");
                    }
                }
            }
            accepted = listener.accept() => {
                idle_since = tokio::time::Instant::now();
                match accepted {
                    Ok(stream) => {
                        let supervisor = Arc::clone(&supervisor);
                        tokio::spawn(async move { supervisor.answer(stream).await });
                    }
                    Err(error) => tracing::warn!(%error, "accept failed"),
                }
            }
            _ = rescan.tick() => {
                supervisor.rescan();
                if supervisor.running() > 0 || supervisor.live_hosts() > 0 {
                    idle_since = tokio::time::Instant::now();
                } else if idle_since.elapsed() >= supervisor.idle_exit
                    || (supervisor.tasks().is_empty() && idle_since.elapsed() >= EMPTY_IDLE_EXIT.min(supervisor.idle_exit))
                {
                    break;
                }
            }
        }
    }
    // Leave the socket to the next supervisor only once no one can be answered.
    let _ = std::fs::remove_file(&paths.socket);
    drop(lock);
    Ok(())
}

/// What a monitor given its task did.
enum Handed {
    /// It said whether the task runs.
    Said(Result<(Started, PathBuf)>),
    /// It ended, or was gone, before it said anything.
    Silent,
}

/// The supervisor's state: its tasks, and a version bumped at every end.
struct Supervisor {
    paths: SupervisorPaths,
    idle_exit: Duration,
    retention: Option<Duration>,
    tasks: Mutex<BTreeMap<u64, Stored>>,
    /// The running hosts' own tasks, as they registered them (in memory only: a host
    /// registers them again at its next listing).
    hosts: Mutex<Vec<HostTask>>,
    ended: watch::Sender<u64>,
    /// How task monitors are started (one kept ready, or each at its start).
    monitors: Monitors,
    /// The next task numbers (taken while `tasks` is held, so two starts never get
    /// the same one).
    numbers: Mutex<TaskNumbers>,
    /// The running hosts waiting for kills, by session.
    host_waiters: Mutex<BTreeMap<String, tokio::sync::mpsc::UnboundedSender<TaskId>>>,
}

impl Supervisor {
    /// Reads every task directory back.
    fn load(options: SupervisorOptions) -> Result<Self> {
        let dir = options.paths.tasks_dir();
        let mut tasks = BTreeMap::new();
        let entries = std::fs::read_dir(&dir).map_err(SupervisorError::state(&dir))?;
        for entry in entries.flatten() {
            let Some(n) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<u64>().ok())
            else {
                continue;
            };
            match Stored::load(&entry.path()) {
                Ok(Some(stored)) => {
                    tasks.insert(n, stored);
                }
                Ok(None) => remove_if_abandoned(&entry.path()),
                Err(error) => tracing::warn!(%error, "a task directory could not be read"),
            }
        }
        let monitors = if options.keep_monitor_ready {
            Monitors::ready(options.monitor, options.paths.clone())
        } else {
            Monitors::plain(options.monitor, options.paths.clone())
        };
        let numbers = TaskNumbers::load(&options.paths.state);
        let supervisor = Self {
            paths: options.paths,
            idle_exit: options.idle_exit,
            retention: options.retention,
            tasks: Mutex::new(tasks),
            hosts: Mutex::new(Vec::new()),
            ended: watch::Sender::new(0),
            monitors,
            numbers: Mutex::new(numbers),
            host_waiters: Mutex::new(BTreeMap::new()),
        };
        supervisor.rescan();
        Ok(supervisor)
    }

    fn tasks(&self) -> MutexGuard<'_, BTreeMap<u64, Stored>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The registered tasks of hosts still running, pruned of those that ended.
    fn hosts(&self) -> MutexGuard<'_, Vec<HostTask>> {
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        hosts.retain(HostTask::runs);
        hosts
    }

    fn live_hosts(&self) -> usize {
        self.hosts().len()
    }

    fn running(&self) -> usize {
        self.tasks()
            .values()
            .filter(|task| task.exit.is_none())
            .count()
    }

    /// Settles every running task whose end is on disk, or whose monitor is gone.
    fn rescan(&self) {
        let mut settled = false;
        for (n, task) in self.tasks().iter_mut() {
            if task.exit.is_none() {
                settled |= self.settle(*n, task);
            }
        }
        if settled {
            self.ended
                .send_modify(|version| *version = version.wrapping_add(1));
        }
    }

    /// Reads a running task's end; records it lost when its monitor died without one.
    fn settle(&self, n: u64, task: &mut Stored) -> bool {
        let dir = self.paths.tasks_dir().join(n.to_string());
        let read_exit = || {
            store::read::<TaskExitInfo>(&dir, TaskFile::Exit)
                .ok()
                .flatten()
        };
        if let Some(exit) = read_exit() {
            task.exit = Some(exit);
            return true;
        }
        match task.started {
            Some(started) if started.monitor.runs() => return false,
            None if self.may_be_starting(task) => return false,
            _ => {}
        }
        // The monitor may have written its end just before it went.
        if let Some(exit) = read_exit() {
            task.exit = Some(exit);
            return true;
        }
        let record = &task.record;
        let duration = (Utc::now() - record.started_at)
            .to_std()
            .unwrap_or_default();
        let lost = TaskExitInfo::new(
            record.id,
            record.command.clone(),
            task.output_path.clone().unwrap_or_default(),
            TaskStatus::Lost,
            LOST_EXIT_CODE,
            duration,
        )
        .detached(true);
        if let Err(error) = store::write(&dir, TaskFile::Exit, &lost) {
            tracing::warn!(%error, "a lost task's end could not be written");
        }
        task.exit = Some(lost);
        true
    }

    /// A task with no `started.json` yet is starting while its start request waits.
    fn may_be_starting(&self, task: &Stored) -> bool {
        (Utc::now() - task.record.started_at)
            .to_std()
            .unwrap_or_default()
            < START_WAIT
    }

    /// Answers one connection: one request, one answer.
    async fn answer(self: Arc<Self>, mut stream: crate::sys::Stream) {
        let answer = match crate::wire::receive::<Request>(&mut stream, "request").await {
            Ok(request) => match self.handle(request).await {
                Ok(answer) => answer,
                Err(error) => Response::Error {
                    message: error.to_string(),
                },
            },
            Err(error) => Response::Error {
                message: error.to_string(),
            },
        };
        let started = matches!(answer, Response::Task(_));
        if let Err(error) = crate::wire::send(&mut stream, &answer).await {
            tracing::debug!(%error, "a client left before its answer");
        }
        // The next monitor is started once the start is answered, not while it runs: on
        // a small machine the two would share its cores.
        if started {
            self.monitors.refill(|| self.next_number()).await;
        }
    }

    async fn handle(self: &Arc<Self>, request: Request) -> Result<Response> {
        match request {
            Request::Ping => Ok(Response::Pong {
                pid: std::process::id(),
                state: self.paths.state.clone(),
            }),
            Request::Start(start) => self.start(*start).await.map(task),
            Request::List {
                workspace,
                asker,
                own,
            } => {
                if let (Some(asker), Some(own)) = (&asker, own) {
                    let mut hosts = self.hosts();
                    hosts.retain(|task| task.session != asker.session);
                    hosts.extend(own);
                }
                Ok(Response::Tasks {
                    tasks: self.list(workspace.as_deref(), asker.as_ref()),
                })
            }
            Request::Register(task) => {
                let mut hosts = self.hosts();
                hosts.retain(|known| !(known.session == task.session && known.id == task.id));
                hosts.push(*task);
                Ok(Response::Done)
            }
            Request::HostTasks => Ok(Response::HostTasks {
                tasks: self.hosts().clone(),
            }),
            Request::HostKills { session } => Ok(Response::Kills {
                ids: self.host_kills(session).await,
            }),
            Request::KillHostTask {
                host_pid,
                id,
                grace,
            } => {
                let task = self
                    .hosts()
                    .iter()
                    .find(|task| {
                        task.id == id && task.host_process.is_some_and(|host| host.pid == host_pid)
                    })
                    .cloned()
                    .ok_or_else(|| SupervisorError::UnknownTask(format!("{host_pid}:{id}")))?;
                self.kill_host_task(&task, grace).await?;
                Ok(Response::Done)
            }
            Request::Kill { id, by_user } => self.kill(id, by_user).await.map(task),
            Request::Input { id, input } => self
                .relay(id, &ControlRequest::Input { input })
                .await
                .map(|_| Response::Done),
            Request::Screen { id } => match self.relay(id, &ControlRequest::Screen).await? {
                ControlResponse::Screen(screen) => Ok(Response::Screen(screen)),
                other => Err(SupervisorError::Malformed {
                    what: "monitor answer",
                    detail: format!("unexpected {other:?}"),
                }),
            },
            Request::Resize { id, size } => self
                .relay(id, &ControlRequest::Resize { size })
                .await
                .map(|_| Response::Done),
            Request::Wait { id, timeout } => self.wait(id, timeout).await.map(task),
            Request::Told { session, ids } => {
                self.told(&session, &ids);
                Ok(Response::Done)
            }
            Request::Ended { .. } => {
                self.rescan();
                Ok(Response::Done)
            }
            Request::Clean {
                older_than,
                dry_run,
            } => Ok(Response::Tasks {
                tasks: self.clean(older_than, dry_run),
            }),
        }
    }

    /// The next task number (taken while the tasks are held: past every one kept).
    fn next_number(&self) -> Result<u64> {
        let tasks = self.tasks();
        let last_kept = tasks.keys().next_back().copied().unwrap_or(0);
        self.numbers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next(last_kept)
    }

    async fn start(self: &Arc<Self>, start: StartRequest) -> Result<TaskView> {
        let mut spec = start.monitor;
        let env: Vec<(String, String)> = start
            .env
            .into_iter()
            .filter(|(key, _)| key != zidane_process::OWNER_MARKER_ENV)
            .collect();
        self.monitors.expect(crate::prepared::Preparation {
            env_policy: spec.env_policy.clone(),
            sandbox: spec.sandbox.clone(),
            kill_grace: spec.kill_grace,
            env: env.clone(),
        });
        // The monitor kept ready has its number already, its directory made and its
        // control socket bound; one started now is given the next number.
        let monitor = self.monitors.take(|| self.next_number()).await?;
        let n = monitor.number;
        let id = TaskId::detached(n)
            .ok_or_else(|| SupervisorError::Refused("no task ids left".to_owned()))?;
        spec.id = id;
        let record = TaskRecord {
            id,
            command: spec.command.clone(),
            cwd: spec
                .spec
                .cwd
                .clone()
                .unwrap_or_else(|| start.workspace.clone()),
            workspace: start.workspace,
            session: start.session.session,
            host: start.host,
            host_process: start.session.host,
            started_at: Utc::now(),
            stdin: spec.stdin,
            tty: spec.tty,
        };
        self.tasks().insert(
            n,
            Stored {
                record: record.clone(),
                started: None,
                exit: None,
                ledger: crate::ledger::Ledger::default(),
                output_path: None,
            },
        );
        // The monitor writes the task's files once it runs (its answer first).
        let assignment = crate::monitor::Assignment {
            spec: Box::new(spec),
            record: Box::new(record),
            env,
        };
        match self.assign(monitor, &assignment).await {
            Ok((started, output_path)) => {
                let mut tasks = self.tasks();
                let entry = tasks
                    .get_mut(&n)
                    .ok_or_else(|| SupervisorError::UnknownTask(id.to_string()))?;
                entry.started = Some(started);
                entry.output_path = Some(output_path);
                Ok(view(entry, false))
            }
            Err(error) => {
                self.tasks().remove(&n);
                let _ = std::fs::remove_dir_all(self.paths.tasks_dir().join(n.to_string()));
                Err(error)
            }
        }
    }

    /// Hands the task to `monitor` and reads its one line. A monitor kept ready may
    /// have died since it was started (killed by hand): if it took no task — it said
    /// nothing, and neither its task's log nor `started.json` is there — a new one,
    /// of the same number, takes it. (The next monitor is made ready once this start
    /// is answered: see `answer`.)
    async fn assign(
        &self,
        monitor: Waiting,
        assignment: &crate::monitor::Assignment,
    ) -> Result<(Started, PathBuf)> {
        let n = monitor.number;
        let dir = self.paths.tasks_dir().join(n.to_string());
        match self.hand(monitor, assignment).await? {
            Handed::Said(said) => said,
            Handed::Silent
                if store::read::<Started>(&dir, TaskFile::Started)?.is_none()
                    && store::find_log(&dir).is_none() =>
            {
                match self.hand(self.monitors.start(n).await?, assignment).await? {
                    Handed::Said(said) => said,
                    Handed::Silent => Err(self.silent()),
                }
            }
            Handed::Silent => Err(self.silent()),
        }
    }

    /// Gives `monitor` its task and reads its one line.
    async fn hand(
        &self,
        monitor: Waiting,
        assignment: &crate::monitor::Assignment,
    ) -> Result<Handed> {
        let Waiting {
            mut child,
            mut stdin,
            mut stdout,
            ..
        } = monitor;
        let sent = crate::wire::send(
            &mut stdin,
            &crate::monitor::MonitorInput::Assign(assignment.clone()),
        )
        .await;
        // Reaped here whenever it ends: the supervisor is its parent.
        tokio::spawn(async move {
            let _ = child.wait().await;
            drop(stdin);
        });
        if sent.is_err() {
            return Ok(Handed::Silent);
        }
        let mut line = String::new();
        match tokio::time::timeout(START_WAIT, stdout.read_line(&mut line)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(SupervisorError::StartFailed(error.to_string())),
            Err(_) => {
                return Err(SupervisorError::StartFailed(
                    "the monitor did not answer".to_owned(),
                ));
            }
        }
        if line.trim().is_empty() {
            return Ok(Handed::Silent);
        }
        Ok(Handed::Said(
            match serde_json::from_str::<MonitorHello>(line.trim()) {
                Ok(MonitorHello::Started {
                    started,
                    output_path,
                }) => Ok((started, output_path)),
                Ok(MonitorHello::Failed { message }) => Err(SupervisorError::StartFailed(message)),
                Err(error) => Err(SupervisorError::StartFailed(format!(
                    "the monitor said {:?}: {error}",
                    line.trim()
                ))),
            },
        ))
    }

    fn silent(&self) -> SupervisorError {
        SupervisorError::StartFailed(format!(
            "the monitor ended before the task ran (see {})",
            self.paths.log_file().display()
        ))
    }

    fn list(&self, workspace: Option<&std::path::Path>, asker: Option<&Teller>) -> Vec<TaskView> {
        let mut tasks = self.tasks();
        let mut views = Vec::new();
        for (n, task) in tasks.iter_mut() {
            if workspace.is_some_and(|workspace| task.record.workspace != workspace) {
                continue;
            }
            let mut tell = false;
            if let (Some(asker), Some(_)) = (asker, &task.exit) {
                let before = task.ledger.clone();
                let origin = Teller {
                    session: task.record.session.clone(),
                    host: task.record.host_process,
                };
                tell = task.ledger.offer(asker, &origin, Teller::runs) == Offer::Tell;
                if task.ledger != before {
                    let dir = self.paths.tasks_dir().join(n.to_string());
                    // A claim unwritten is a claim a crash forgets: then nobody tells.
                    if let Err(error) = store::write(&dir, TaskFile::Ledger, &task.ledger) {
                        tracing::warn!(%error, "a claim could not be written");
                        task.ledger = before;
                        tell = false;
                    }
                }
            }
            views.push(view(task, tell));
        }
        views
    }

    fn told(&self, session: &str, ids: &[TaskId]) {
        let mut tasks = self.tasks();
        for id in ids {
            let Some(n) = id.detached_number() else {
                continue;
            };
            let Some(task) = tasks.get_mut(&n) else {
                continue;
            };
            if task.ledger.told(session) {
                let dir = self.paths.tasks_dir().join(n.to_string());
                if let Err(error) = store::write(&dir, TaskFile::Ledger, &task.ledger) {
                    tracing::warn!(%error, "a told end could not be written");
                }
            }
        }
    }

    /// Holds a host's wait for kills until a person asks one of its tasks'
    /// ([`kill_host_task`](Self::kill_host_task)), or for [`HOST_KILLS_WAIT`].
    async fn host_kills(&self, session: String) -> Vec<TaskId> {
        let (send, mut receive) = tokio::sync::mpsc::unbounded_channel();
        self.host_waiters().insert(session, send);
        match tokio::time::timeout(HOST_KILLS_WAIT, receive.recv()).await {
            Ok(Some(id)) => {
                let mut ids = vec![id];
                while let Ok(more) = receive.try_recv() {
                    ids.push(more);
                }
                ids
            }
            Ok(None) | Err(_) => Vec::new(),
        }
    }

    fn host_waiters(
        &self,
    ) -> MutexGuard<'_, BTreeMap<String, tokio::sync::mpsc::UnboundedSender<TaskId>>> {
        self.host_waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends a running host's task a person asked to kill: by the host itself when it
    /// waits for kills, so its model is told the user killed it; else (or if the host
    /// does not end it in time) its process group.
    async fn kill_host_task(&self, task: &HostTask, grace: Duration) -> Result<()> {
        // A host between two waits (or whose first is on its way) is given a moment.
        let mut asked = false;
        let waited_from = tokio::time::Instant::now();
        while !asked && task.host_process.is_some_and(|host| host.runs()) {
            let waiter = self.host_waiters().remove(&task.session);
            asked = waiter.is_some_and(|waiter| waiter.send(task.id).is_ok());
            if asked || waited_from.elapsed() >= HOST_ANSWER_WAIT {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if asked {
            let deadline = tokio::time::Instant::now() + grace + KILL_SLACK;
            while task.leader.runs() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if !task.leader.runs() {
                return Ok(());
            }
        }
        crate::sys::end_group(&task.leader, grace)
            .await
            .map_err(|error| SupervisorError::Refused(error.to_string()))
    }

    /// Passes `request` to a running task's monitor.
    async fn relay(&self, id: TaskId, request: &ControlRequest) -> Result<ControlResponse> {
        let n = {
            let tasks = self.tasks();
            let task = self.find(&tasks, id)?;
            if task.exit.is_some() {
                return Err(SupervisorError::Refused(format!("{id} has ended")));
            }
            if task.started.is_none() {
                return Err(SupervisorError::Refused(format!("{id} is starting")));
            }
            id.detached_number().unwrap_or_default()
        };
        crate::control::ask(&self.paths.monitor_socket(n), request).await
    }

    async fn kill(&self, id: TaskId, by_user: bool) -> Result<TaskView> {
        let (started, grace) = {
            let tasks = self.tasks();
            let task = self.find(&tasks, id)?;
            if task.exit.is_some() {
                return Ok(view(task, false));
            }
            let dir = self.paths.task_dir(id);
            let grace = store::read::<store::MonitorSpec>(&dir, TaskFile::Spec)
                .ok()
                .flatten()
                .map_or(zidane_process::DEFAULT_KILL_GRACE, |spec| spec.kill_grace);
            (task.started, grace)
        };
        if let Some(started) = started {
            // The monitor's socket carries who asked; a signal carries only the kill.
            let asked = self.relay(id, &ControlRequest::Kill { by_user }).await;
            if asked.is_err() {
                crate::sys::terminate(&started.monitor);
            }
        }
        self.wait(id, grace + KILL_SLACK).await
    }

    async fn wait(&self, id: TaskId, timeout: Duration) -> Result<TaskView> {
        let mut ended = self.ended.subscribe();
        let deadline =
            tokio::time::Instant::now() + timeout.min(Duration::from_secs(7 * 24 * 60 * 60));
        loop {
            {
                let tasks = self.tasks();
                let task = self.find(&tasks, id)?;
                if task.exit.is_some() || tokio::time::Instant::now() >= deadline {
                    return Ok(view(task, false));
                }
            }
            let _ = tokio::time::timeout_at(
                deadline.min(tokio::time::Instant::now() + RESCAN_EVERY),
                ended.changed(),
            )
            .await;
            self.rescan();
        }
    }

    /// Removes ended, told tasks (that ended at least `older_than` ago), or with
    /// `dry_run` lists them. A running or untold task is never touched.
    fn clean(&self, older_than: Option<Duration>, dry_run: bool) -> Vec<TaskView> {
        let mut tasks = self.tasks();
        let now = Utc::now();
        let old_enough = |task: &Stored| {
            let Some(exit) = &task.exit else {
                return false;
            };
            let ended = task.record.started_at
                + chrono::Duration::from_std(exit.duration).unwrap_or_default();
            older_than.is_none_or(|age| (now - ended).to_std().unwrap_or_default() >= age)
        };
        let gone: Vec<u64> = tasks
            .iter()
            .filter(|(_, task)| task.ledger.is_told() && old_enough(task))
            .map(|(n, _)| *n)
            .collect();
        let mut removed = Vec::new();
        for n in gone {
            if dry_run {
                removed.extend(tasks.get(&n).map(|task| view(task, false)));
                continue;
            }
            let dir = self.paths.tasks_dir().join(n.to_string());
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => removed.extend(tasks.remove(&n).map(|task| view(&task, false))),
                Err(error) => tracing::warn!(%error, "{} could not be removed", dir.display()),
            }
        }
        removed
    }

    fn find<'a>(&self, tasks: &'a BTreeMap<u64, Stored>, id: TaskId) -> Result<&'a Stored> {
        id.detached_number()
            .and_then(|n| tasks.get(&n))
            .ok_or_else(|| SupervisorError::UnknownTask(id.to_string()))
    }
}

/// Removes a task directory a monitor made ready and never used (it was killed before
/// its task came): empty, and older than any start still under way.
fn remove_if_abandoned(dir: &std::path::Path) {
    let empty = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
    let old = std::fs::metadata(dir)
        .and_then(|meta| meta.modified())
        .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age >= START_WAIT));
    if empty && old {
        let _ = std::fs::remove_dir(dir);
    }
}

fn view(task: &Stored, tell: bool) -> TaskView {
    TaskView {
        record: task.record.clone(),
        pid: task.started.map(|started| started.pid),
        output_path: task.output_path.clone(),
        exit: task.exit.clone(),
        told: task.ledger.is_told(),
        tell,
    }
}

fn task(view: TaskView) -> Response {
    Response::Task(Box::new(view))
}
