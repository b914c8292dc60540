//! The person's view of detached tasks — `zidane ps`, `logs`, `wait`, `kill` (`attach`
//! is [`crate::attach`]) — and the hidden `zidane supervisor serve | monitor` the
//! supervisor and each task's monitor run as. Every command talks to the supervisor of the user dir through
//! [`zidane::supervisor::SupervisorClient`], and starts it when tasks are kept but no
//! supervisor runs (one was killed): it re-adopts them first.

use std::ffi::OsString;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use chrono::Utc;
use clap::{Args, Subcommand};
use zidane::context::TaskStatus;
use zidane::process::{ProcessTable, TreeUsage};
use zidane::supervisor::{
    HostTask, Launcher, SupervisorClient, SupervisorError, SupervisorOptions, SupervisorPaths,
    TaskView,
};
use zidane::wire::{Painter, exit_summary};

use crate::error::CliError;
use crate::fleet::FleetArgs;
use crate::fleet_tasks::FleetTasks;
use crate::user_dir::user_dir;

/// How long an idle supervisor stays (no task running, no request).
const DEFAULT_IDLE_EXIT_SECS: u64 = 10 * 60;

/// How often `logs -f` looks for more output while the task runs (it waits on the
/// task's end in between, so an end is seen at once).
const FOLLOW_EVERY: Duration = Duration::from_millis(200);

/// `zidane ps`.
#[derive(Debug, Args)]
pub struct PsArgs {
    /// Also the ended tasks whose end was told already.
    #[arg(long)]
    all: bool,
    /// One JSON array, for scripts.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    fleet: FleetArgs,
}

/// `zidane logs`.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Follow the log until the task ends.
    #[arg(short = 'f', long)]
    follow: bool,
    /// Only the last N lines (then follow, with -f).
    #[arg(short = 'n', long, value_name = "N")]
    lines: Option<usize>,
    /// The task: `bash_d7`, `d7`, `7`, or the start of one; on a fleet, `bash_3`.
    id: String,
    #[command(flatten)]
    fleet: FleetArgs,
}

/// `zidane kill`.
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// The task: `bash_d7`, `d7`, `7`, or the start of one; on a fleet, `bash_3`.
    id: String,
    #[command(flatten)]
    fleet: FleetArgs,
}

/// `zidane wait`.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The task: `bash_d7`, `d7`, `7`, or the start of one; on a fleet, `bash_3`.
    id: String,
    #[command(flatten)]
    fleet: FleetArgs,
    /// Give up after this many seconds (exit status 124); default: no limit.
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
}

/// `zidane supervisor …`: what the supervisor and the monitors run as (hidden).
#[derive(Debug, Subcommand)]
pub enum SupervisorCommand {
    /// Run the supervisor of a user dir (started on demand by zidane itself).
    Serve {
        /// The user dir whose detached tasks it owns.
        #[arg(long, value_name = "DIR")]
        user_dir: PathBuf,
        /// Leave after this many seconds with no task running and no request.
        #[arg(long, value_name = "SECS", default_value_t = DEFAULT_IDLE_EXIT_SECS)]
        idle_exit_secs: u64,
        /// Remove ended, told tasks this many days after they ended (0: never; default
        /// 30).
        #[arg(long, value_name = "DAYS")]
        retention_days: Option<u64>,
        /// Start each task's monitor at its start rather than keeping one ready (for the
        /// bench's side-by-side).
        #[arg(long, hide = true)]
        no_ready_monitor: bool,
    },
    /// Run one task's monitor (started by the supervisor, which gives the task on stdin).
    Monitor {
        /// The supervisor's socket.
        #[arg(long, value_name = "PATH")]
        socket: PathBuf,
        /// The supervisor's state directory.
        #[arg(long, value_name = "DIR")]
        state: PathBuf,
    },
}

/// How this binary starts the supervisor of `user_dir`.
pub fn launcher(user_dir: &Path) -> Result<Launcher, CliError> {
    Ok(Launcher {
        program: std::env::current_exe()?,
        args: vec![
            "supervisor".into(),
            "serve".into(),
            "--user-dir".into(),
            user_dir.as_os_str().to_owned(),
        ],
    })
}

/// Runs `zidane supervisor serve | monitor`.
pub fn supervisor(command: SupervisorCommand) -> Result<ExitCode, CliError> {
    // stdout is a monitor's channel to the supervisor: logs go to stderr (its log file).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(crate::env_config::log_filter("info")?)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let outcome = runtime.block_on(async move {
        match command {
            SupervisorCommand::Serve {
                user_dir,
                idle_exit_secs,
                retention_days,
                no_ready_monitor,
            } => {
                let program = std::env::current_exe().map_err(CliError::Io)?;
                zidane::supervisor::serve(SupervisorOptions {
                    paths: SupervisorPaths::for_user_dir(&user_dir),
                    monitor: Launcher {
                        program,
                        args: vec![OsString::from("supervisor"), OsString::from("monitor")],
                    },
                    idle_exit: Duration::from_secs(idle_exit_secs),
                    retention: retention_days.map_or(
                        Some(zidane::supervisor::DEFAULT_DETACHED_RETENTION),
                        |days| (days > 0).then(|| Duration::from_secs(days * 24 * 60 * 60)),
                    ),
                    keep_monitor_ready: !no_ready_monitor,
                })
                .await?;
                Ok(())
            }
            SupervisorCommand::Monitor { socket, state } => {
                zidane::supervisor::run_monitor(&SupervisorPaths { socket, state }).await?;
                Ok(())
            }
        }
    });
    runtime.shutdown_background();
    outcome.map(|()| ExitCode::SUCCESS)
}

/// The supervisor of the user dir, as a person's command reaches it: started if it is
/// not running while tasks are kept (it re-adopts them), never for a user dir without.
pub(crate) fn client() -> Result<SupervisorClient, CliError> {
    let user_dir = user_dir()?;
    Ok(
        SupervisorClient::new(SupervisorPaths::for_user_dir(&user_dir))
            .launcher(launcher(&user_dir)?)
            .for_looking(),
    )
}

/// Runs an async body on a small runtime.
pub(crate) fn block_on<T>(
    body: impl std::future::Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?
        .block_on(body)
}

/// The detached tasks and the running hosts' tasks, or none when no supervisor runs
/// (then none is running).
async fn tasks(client: &SupervisorClient) -> Result<(Vec<TaskView>, Vec<HostTask>), CliError> {
    let detached = match client.list(None, None).await {
        Ok(tasks) => tasks,
        Err(SupervisorError::Unreachable { .. }) => return Ok((Vec::new(), Vec::new())),
        Err(error) => return Err(error.into()),
    };
    Ok((detached, client.host_tasks().await?))
}

/// One line of `zidane ps`: a detached task or a running host's.
struct Row {
    id: String,
    kind: &'static str,
    state: String,
    exit_code: Option<i32>,
    pid: Option<u32>,
    started_at: chrono::DateTime<Utc>,
    usage: Option<TreeUsage>,
    host: String,
    session: String,
    cwd: PathBuf,
    workspace: Option<PathBuf>,
    command: String,
    output_path: Option<PathBuf>,
    told: Option<bool>,
}

impl Row {
    fn detached(task: &TaskView, table: Option<&ProcessTable>) -> Self {
        let running = task.exit.is_none();
        Self {
            id: task.record.id.to_string(),
            kind: "detached",
            state: state(task),
            exit_code: task.exit.as_ref().map(|exit| exit.exit_code),
            pid: task.pid,
            started_at: task.record.started_at,
            usage: task
                .pid
                .filter(|_| running)
                .and_then(|pid| table?.tree_usage(pid)),
            host: task.record.host.clone(),
            session: task.record.session.clone(),
            cwd: task.record.cwd.clone(),
            workspace: Some(task.record.workspace.clone()),
            command: task.record.command.clone(),
            output_path: task.output_path.clone(),
            told: Some(task.told),
        }
    }

    fn host(task: &HostTask, table: Option<&ProcessTable>) -> Self {
        Self {
            id: task.person_id(),
            kind: "session",
            state: "running".to_owned(),
            exit_code: None,
            pid: Some(task.leader.pid),
            started_at: task.started_at,
            usage: table.and_then(|table| table.tree_usage(task.leader.pid)),
            host: task.host.clone(),
            session: task.session.clone(),
            cwd: task.cwd.clone(),
            workspace: None,
            command: task.command.clone(),
            output_path: Some(task.output_path.clone()),
            told: None,
        }
    }

    /// A task of this workspace on a fleet: its host is the worker that runs it (its
    /// usage is that machine's, not read here).
    fn fleet(entry: &zidane::context::TaskEntry, worker: &str) -> Self {
        Self {
            id: entry.task_id.to_string(),
            kind: "fleet",
            state: match entry.exit_info() {
                None => "running".to_owned(),
                Some(exit) => match exit.status {
                    TaskStatus::Killed => "killed".to_owned(),
                    TaskStatus::Lost => "lost".to_owned(),
                    _ => format!("exited {}", exit.exit_code),
                },
            },
            exit_code: entry.exit_code(),
            pid: Some(entry.pid),
            started_at: entry.started_at,
            usage: None,
            host: format!("worker {worker}"),
            session: String::new(),
            cwd: entry.cwd.clone(),
            workspace: None,
            command: entry.command.clone(),
            output_path: Some(entry.output_path.clone()),
            told: Some(entry.reported),
        }
    }

    fn cells(&self) -> [String; 9] {
        [
            self.id.clone(),
            self.state.clone(),
            self.pid
                .map_or_else(|| "-".to_owned(), |pid| pid.to_string()),
            age(self.started_at),
            self.usage.map_or_else(
                || "-".to_owned(),
                |usage| format!("{:.1}s", usage.cpu.as_secs_f64()),
            ),
            self.usage
                .map_or_else(|| "-".to_owned(), |usage| mebibytes(usage.rss_bytes)),
            self.host.clone(),
            self.cwd.display().to_string(),
            self.command.lines().next().unwrap_or_default().to_owned(),
        ]
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "kind": self.kind,
            "state": self.state_word(),
            "exit_code": self.exit_code,
            "pid": self.pid,
            "command": self.command,
            "cwd": self.cwd,
            "workspace": self.workspace,
            "started_at": self.started_at,
            "cpu_ms": self.usage.map(|usage| u64::try_from(usage.cpu.as_millis()).unwrap_or(u64::MAX)),
            "rss_bytes": self.usage.map(|usage| usage.rss_bytes),
            "host": self.host,
            "session": self.session,
            "output_path": self.output_path,
            "told": self.told,
        })
    }

    /// The state without its exit code: `running`, `exited`, `killed`, `lost`.
    fn state_word(&self) -> &str {
        self.state.split(' ').next().unwrap_or_default()
    }
}

/// `zidane ps`.
pub fn ps(args: &PsArgs) -> Result<ExitCode, CliError> {
    let client = client()?;
    let fleet = args.fleet.resolve()?;
    let (mut detached, hosts, mut on_fleet) = block_on(async {
        let (detached, hosts) = tasks(&client).await?;
        let on_fleet = match &fleet {
            Some(fleet) => FleetTasks::here(fleet).await?.list().await?,
            None => Vec::new(),
        };
        Ok((detached, hosts, on_fleet))
    })?;
    if !args.all {
        detached.retain(|task| task.exit.is_none() || !task.told);
        on_fleet.retain(|(entry, _)| entry.is_running() || !entry.reported);
    }
    let table = ProcessTable::read();
    let rows: Vec<Row> = detached
        .iter()
        .map(|task| Row::detached(task, table.as_ref()))
        .chain(hosts.iter().map(|task| Row::host(task, table.as_ref())))
        .chain(
            on_fleet
                .iter()
                .map(|(entry, worker)| Row::fleet(entry, worker)),
        )
        .collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        let rows: Vec<serde_json::Value> = rows.iter().map(Row::json).collect();
        serde_json::to_writer_pretty(&mut out, &rows).map_err(std::io::Error::other)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let painter = Painter::for_stdout();
    if rows.is_empty() {
        out.write_all(painter.note("no tasks").as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let cells: Vec<[String; 9]> = rows.iter().map(Row::cells).collect();
    let heading = [
        "ID", "STATE", "PID", "AGE", "CPU", "MEM", "HOST", "CWD", "COMMAND",
    ];
    let widths: Vec<usize> = (0..8)
        .map(|column| {
            cells
                .iter()
                .map(|row| row[column].chars().count())
                .chain([heading[column].len()])
                .max()
                .unwrap_or_default()
        })
        .collect();
    let line = |row: [&str; 9]| {
        let mut text = String::new();
        for (column, cell) in row.iter().enumerate().take(8) {
            text.push_str(&format!("{cell:<width$}  ", width = widths[column]));
        }
        text.push_str(row[8]);
        text
    };
    writeln!(out, "{}", painter.heading(&line(heading)).trim_end())?;
    for row in &cells {
        writeln!(out, "{}", line(row.each_ref().map(String::as_str)))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn state(task: &TaskView) -> String {
    match &task.exit {
        None => "running".to_owned(),
        Some(exit) => match exit.status {
            TaskStatus::Killed => "killed".to_owned(),
            TaskStatus::Lost => "lost".to_owned(),
            _ => format!("exited {}", exit.exit_code),
        },
    }
}

fn age(started_at: chrono::DateTime<Utc>) -> String {
    let seconds = (Utc::now() - started_at).num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86_400 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86_400),
    }
}

/// Bytes as MiB, one decimal.
fn mebibytes(bytes: u64) -> String {
    // Display only: the precision lost in the cast does not show in one decimal.
    #[allow(clippy::cast_precision_loss)]
    let mib = bytes as f64 / (1024.0 * 1024.0);
    format!("{mib:.1}M")
}

/// `zidane logs`.
pub fn logs(args: &LogsArgs) -> Result<ExitCode, CliError> {
    let client = client()?;
    let fleet = args.fleet.resolve()?;
    block_on(async {
        if let Some(fleet) = &fleet {
            let tasks = FleetTasks::here(fleet).await?;
            if let Some(task) = tasks.find(&args.id).await? {
                return tasks.logs(&task, args.lines, args.follow).await;
            }
        }
        let task = match resolve(&client, &args.id).await? {
            Target::Detached(task) => task,
            Target::Host(task) => return host_logs(&task, args),
        };
        let Some(path) = task.output_path.clone() else {
            return Err(
                SupervisorError::StartFailed(format!("{} has no log", task.record.id)).into(),
            );
        };
        let mut out = std::io::stdout().lock();
        let (mut file, mut offset) = print_log(&path, args.lines, &mut out)?;
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
        loop {
            let waited = client.wait(task.record.id, FOLLOW_EVERY).await?;
            offset = copy_from(&mut file, offset, &mut out)?;
            if waited.exit.is_some() {
                return Ok(ExitCode::SUCCESS);
            }
        }
    })
}

/// What a person typed: a detached task (`bash_d7`, `d7`, `7`, a prefix) or a running
/// host's (`<host pid>:bash_3`, as `zidane ps` shows it).
enum Target {
    Detached(Box<TaskView>),
    Host(HostTask),
}

async fn resolve(client: &SupervisorClient, typed: &str) -> Result<Target, CliError> {
    if !typed.contains(':') {
        return Ok(Target::Detached(Box::new(client.resolve(typed).await?)));
    }
    client
        .host_tasks()
        .await?
        .into_iter()
        .find(|task| task.person_id() == typed.trim())
        .map(Target::Host)
        .ok_or_else(|| SupervisorError::UnknownTask(typed.to_owned()).into())
}

/// `zidane logs` of a running host's task: its log, followed while its leader runs.
fn host_logs(task: &HostTask, args: &LogsArgs) -> Result<ExitCode, CliError> {
    let mut out = std::io::stdout().lock();
    let (mut file, mut offset) = print_log(&task.output_path, args.lines, &mut out)?;
    while args.follow && task.leader.runs() {
        std::thread::sleep(FOLLOW_EVERY);
        offset = copy_from(&mut file, offset, &mut out)?;
    }
    copy_from(&mut file, offset, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the log at `path` (its last `lines`, or all of it); the open log and where
/// the printing stopped, to follow it from there.
fn print_log(
    path: &Path,
    lines: Option<usize>,
    out: &mut impl std::io::Write,
) -> std::io::Result<(std::fs::File, u64)> {
    let mut file = std::fs::File::open(path)?;
    let start = match lines {
        Some(n) => tail_offset(&mut file, n)?,
        None => 0,
    };
    let offset = copy_from(&mut file, start, out)?;
    Ok((file, offset))
}

/// Copies what the log holds past `offset`; the new offset.
pub(crate) fn copy_from(
    file: &mut std::fs::File,
    offset: u64,
    out: &mut impl std::io::Write,
) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    out.write_all(&bytes)?;
    out.flush()?;
    Ok(offset + bytes.len() as u64)
}

/// Where the last `n` lines of the file start.
fn tail_offset(file: &mut std::fs::File, n: usize) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let start = body
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, byte)| **byte == b'\n')
        .nth(n.saturating_sub(1))
        .map_or(0, |(at, _)| at + 1);
    Ok(if n == 0 { bytes.len() } else { start } as u64)
}

/// What `clean` found: each listed task's log size, and the tasks removed.
pub type Cleaned = (Vec<(zidane::context::TaskId, u64)>, Vec<TaskView>);

/// For `zidane clean`: the ended, told detached tasks (that ended `older_than` ago) with
/// their logs' sizes as listed first, and those removed (with `dry_run`, none are and
/// the listed ones are returned). No supervisor, no tasks kept: nothing.
pub fn clean(older_than: Option<Duration>, dry_run: bool) -> Result<Cleaned, CliError> {
    let client = client()?;
    block_on(async {
        let listed = match client.clean(older_than, true).await {
            Ok(listed) => listed,
            Err(SupervisorError::Unreachable { .. }) => return Ok((Vec::new(), Vec::new())),
            Err(error) => return Err(error.into()),
        };
        let sizes = listed
            .iter()
            .map(|task| {
                let bytes = task
                    .output_path
                    .as_ref()
                    .and_then(|path| std::fs::metadata(path).ok())
                    .map_or(0, |meta| meta.len());
                (task.record.id, bytes)
            })
            .collect();
        let removed = if dry_run {
            listed
        } else {
            client.clean(older_than, false).await?
        };
        Ok((sizes, removed))
    })
}

/// `zidane wait`: exits with the task's code.
pub fn wait(args: &WaitArgs) -> Result<ExitCode, CliError> {
    let client = client()?;
    let fleet = args.fleet.resolve()?;
    block_on(async {
        if let Some(fleet) = &fleet {
            let tasks = FleetTasks::here(fleet).await?;
            if let Some(task) = tasks.find(&args.id).await? {
                return tasks
                    .wait(&task, args.timeout.map(Duration::from_secs))
                    .await;
            }
        }
        let task = match resolve(&client, &args.id).await? {
            Target::Detached(task) => task,
            Target::Host(task) => {
                return Err(SupervisorError::Refused(format!(
                    "{} is a task of a running {} (pid {}), which waits for it; `zidane logs -f {}` follows it",
                    task.id,
                    task.host,
                    task.host_process.map_or(0, |host| host.pid),
                    task.person_id()
                ))
                .into());
            }
        };
        let limit = args.timeout.map_or(Duration::MAX, Duration::from_secs);
        let waited = client.wait(task.record.id, limit).await?;
        let Some(exit) = waited.exit else {
            writeln!(
                std::io::stderr(),
                "{}: still running after {}s",
                task.record.id,
                limit.as_secs()
            )?;
            return Ok(ExitCode::from(124));
        };
        writeln!(std::io::stdout(), "{}", exit_summary(&exit))?;
        Ok(ExitCode::from(u8::try_from(exit.exit_code).unwrap_or(255)))
    })
}

/// `zidane kill`: ends the task's whole tree.
pub fn kill(args: &TaskArgs) -> Result<ExitCode, CliError> {
    let client = client()?;
    let fleet = args.fleet.resolve()?;
    block_on(async {
        if let Some(fleet) = &fleet {
            let tasks = FleetTasks::here(fleet).await?;
            if let Some(task) = tasks.find(&args.id).await? {
                return tasks.kill(&task).await;
            }
        }
        let task = match resolve(&client, &args.id).await? {
            Target::Detached(task) => task,
            Target::Host(task) => {
                client
                    .kill_host_task(&task, zidane::process::DEFAULT_KILL_GRACE)
                    .await?;
                writeln!(
                    std::io::stdout(),
                    "{}: its process group was ended; its host tells its model",
                    task.person_id()
                )?;
                return Ok(ExitCode::SUCCESS);
            }
        };
        let killed = client.kill_by_user(task.record.id).await?;
        match killed.exit {
            Some(exit) => writeln!(std::io::stdout(), "{}", exit_summary(&exit))?,
            None => writeln!(
                std::io::stdout(),
                "{}: asked to end, still running",
                task.record.id
            )?,
        }
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_starts_at_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        assert_eq!(tail_offset(&mut file, 2).unwrap(), 2);
        assert_eq!(tail_offset(&mut file, 5).unwrap(), 0);
        assert_eq!(tail_offset(&mut file, 0).unwrap(), 6);
    }
}
