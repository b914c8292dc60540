//! The person's view of detached tasks — `zidane ps`, `logs`, `wait`, `kill` (`attach`
//! is [`crate::attach`], `top` [`crate::top`]; what they list, [`crate::listing`]) — and
//! the hidden `zidane supervisor serve | monitor` the supervisor and each task's monitor
//! run as. Every command talks to the supervisor of the user dir through
//! [`zidane::supervisor::SupervisorClient`], and starts it when tasks are kept but no
//! supervisor runs (one was killed): it re-adopts them first.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use chrono::Utc;
use clap::{Args, Subcommand};
use zidane::supervisor::{
    HostTask, Launcher, SupervisorClient, SupervisorError, SupervisorOptions, SupervisorPaths,
    TaskView,
};
use zidane::wire::{Painter, exit_summary};

use crate::error::CliError;
use crate::fleet::FleetArgs;
use crate::fleet_tasks::FleetTasks;
use crate::listing::{self, Row};
use crate::task_log::{copy_from, print_log};
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

/// `zidane ps`.
pub fn ps(args: &PsArgs) -> Result<ExitCode, CliError> {
    let client = client()?;
    let fleet = args.fleet.resolve()?;
    let (mut rows, mut on_fleet) = block_on(async {
        let rows = listing::local_rows(&client, |task| {
            args.all || task.exit.is_none() || !task.told
        })
        .await?;
        let on_fleet = match &fleet {
            Some(fleet) => FleetTasks::here(fleet).await?.list().await?,
            None => Vec::new(),
        };
        Ok((rows, on_fleet))
    })?;
    if !args.all {
        on_fleet.retain(|(entry, _)| entry.is_running() || !entry.reported);
    }
    rows.extend(
        on_fleet
            .iter()
            .map(|(entry, worker)| Row::fleet(entry, worker)),
    );
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
    let now = Utc::now();
    let cells: Vec<[String; 9]> = rows.iter().map(|row| row.cells(now)).collect();
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
pub(crate) enum Target {
    Detached(Box<TaskView>),
    Host(HostTask),
}

/// The task a person typed, as [`Target`] reads it.
pub(crate) async fn resolve(client: &SupervisorClient, typed: &str) -> Result<Target, CliError> {
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
        let target = resolve(&client, &args.id).await?;
        writeln!(std::io::stdout(), "{}", stop(&client, target).await?.said())?;
        Ok(ExitCode::SUCCESS)
    })
}

/// What a person's stop did.
pub(crate) enum Stopped {
    /// A detached task, as the supervisor's kill left it: ended, or still running.
    Detached(Box<TaskView>),
    /// A running host's task (`<host pid>:bash_3`): its host ends it and tells its model.
    Host(String),
}

impl Stopped {
    /// What `zidane kill` prints of it.
    pub(crate) fn said(&self) -> String {
        match self {
            Self::Detached(task) => match &task.exit {
                Some(exit) => exit_summary(exit),
                None => format!("{}: asked to end, still running", task.record.id),
            },
            Self::Host(id) => {
                format!("{id}: its process group was ended; its host tells its model")
            }
        }
    }
}

/// Ends a task of this machine as a person asks (`zidane kill`, `zidane top`): a
/// detached task's whole tree, by its supervisor; a running host's, by its host (or its
/// process group).
pub(crate) async fn stop(client: &SupervisorClient, target: Target) -> Result<Stopped, CliError> {
    match target {
        Target::Detached(task) => Ok(Stopped::Detached(Box::new(
            client.kill_by_user(task.record.id).await?,
        ))),
        Target::Host(task) => {
            client
                .kill_host_task(&task, zidane::process::DEFAULT_KILL_GRACE)
                .await?;
            Ok(Stopped::Host(task.person_id()))
        }
    }
}
