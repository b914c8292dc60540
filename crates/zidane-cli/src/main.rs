//! `zidane`, the terminal host of the zidane agent framework.
//!
//! A thin dispatcher: the arguments are parsed here and each command lives in its own
//! module — the interactive session in [`interactive`], print mode in [`mod@print`],
//! [`sessions`] and [`replay`], the scripted `--demo` model in [`demo`], the MCP server in [`mcp`], removing
//! ended sessions (`zidane clean`, and at start) in [`clean`]. The model comes from one
//! place, [`provider::model_from_env`].
//!
//! ```text
//! zidane [--demo] [--resume <id>]          an interactive session in the terminal
//! zidane [--demo] -p "<prompt>" [--wait]   print mode, for scripts
//! zidane sessions                          the stored sessions, newest first
//! zidane replay <id>                       paint a stored session without running it
//! zidane clean [--older-than DAYS]         remove ended sessions (--dry-run: list them)
//! zidane ps [--all] [--json]               the detached tasks (see [`detached`])
//! zidane logs [-f] [-n N] <id>             a detached task's log
//! zidane wait <id> | kill <id>             wait for one (its exit code) or end it
//! zidane top [--once]                      every task, live (see [`top`])
//! zidane mcp [--http 127.0.0.1:PORT]       serve background tasks to an MCP host
//! ```

use std::io::Write as _;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

mod attach;
mod clean;
mod demo;
mod detached;
mod dist;
mod doctor;
mod env_config;
mod error;
mod fleet;
mod fleet_tasks;
mod host;
mod interactive;
mod listing;
mod mcp;
mod mcp_http;
mod print;
mod provider;
mod replay;
mod sandbox_config;
mod sessions;
mod task_log;
mod top;
mod user_dir;

use error::CliError;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "zidane",
    version,
    about = "An agent with background shell tasks, in your terminal.",
    after_help = "Without a subcommand: an interactive session (or print mode with -p).\n\
                  Sessions live under $ZIDANE_USER_DIR, else the platform's data dir.\n\
                  No provider configured? Try `zidane --demo`."
)]
struct Cli {
    /// A subcommand; without one, a session runs.
    #[command(subcommand)]
    command: Option<Command>,
    /// Print mode: run this prompt, print the transcript, exit.
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    prompt: Option<String>,
    /// With -p: stay until every background task has ended and the model was told.
    #[arg(long, requires = "prompt")]
    wait: bool,
    /// Resume a stored session: its transcript is repainted first.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    /// Run on a built-in scripted model: no network, no keys.
    #[arg(long)]
    demo: bool,
    /// Move a foreground shell command still running after this many seconds to the
    /// background, where it runs on and its end is told (0: never; ctrl+b moves one at
    /// once).
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_MOVE_AFTER.as_secs())]
    move_after_secs: u64,
    /// What a session's commands may touch.
    #[command(flatten)]
    sandbox: sandbox_config::SandboxArgs,
    #[command(flatten)]
    fleet: fleet::FleetArgs,
}

/// How long a foreground command runs in a session before it moves to the background.
const DEFAULT_MOVE_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// List the stored sessions, newest first.
    Sessions,
    /// Paint a stored session without running it.
    Replay {
        /// The session's id (see `zidane sessions`).
        id: String,
    },
    /// Remove ended sessions (their turns and task logs); sessions in use are kept.
    Clean(clean::CleanArgs),
    /// List the detached tasks: running, ended and not yet told (--all: every one).
    Ps(detached::PsArgs),
    /// Print a detached task's log (-f: follow it until the task ends).
    Logs(detached::LogsArgs),
    /// Wait for a detached task to end; exit with its exit code.
    Wait(detached::WaitArgs),
    /// End a detached task's whole tree.
    Kill(detached::TaskArgs),
    /// Type into a detached terminal task and watch it (ctrl+] detaches).
    Attach(attach::AttachArgs),
    /// Every task, live: CPU, memory, the selected one's log; stop, attach, page, filter.
    Top(top::TopArgs),
    /// The supervisor of detached tasks and their monitors (started by zidane itself).
    #[command(subcommand, hide = true)]
    Supervisor(detached::SupervisorCommand),
    /// Serve background shell tasks over MCP (stdio by default).
    Mcp(mcp::McpArgs),
    /// Check that zidane is set up right here: the sandbox, the supervisor, each MCP
    /// host's entry, leftover tasks, the disk; each problem with the line that fixes it.
    Doctor(doctor::DoctorArgs),
    /// Print the completion script for a shell (for packagers).
    #[command(hide = true)]
    Completions(dist::CompletionsArgs),
    /// Print the man page, or write every page into a directory (for packagers).
    #[command(hide = true)]
    Man(dist::ManArgs),
}

fn main() -> ExitCode {
    // What this process holds (the host's environment, tokens) stays out of reach of
    // the commands it runs, sandboxed or not: no core dumps, not dumpable, no tracer.
    if let Err(error) = zidane::process::harden_process() {
        let _ = writeln!(
            std::io::stderr(),
            "zidane: could not harden this process: {error}"
        );
    }
    let cli = Cli::parse();
    // Bad configuration stops every command before it does anything.
    if let Err(error) = env_config::check_env() {
        return error.report();
    }
    let outcome = match cli.command {
        Some(Command::Sessions) => sessions::run(),
        Some(Command::Replay { id }) => replay::run(&id),
        Some(Command::Clean(args)) => clean::run(&args),
        Some(Command::Ps(args)) => detached::ps(&args),
        Some(Command::Logs(args)) => detached::logs(&args),
        Some(Command::Wait(args)) => detached::wait(&args),
        Some(Command::Kill(args)) => detached::kill(&args),
        Some(Command::Attach(args)) => attach::attach(&args),
        Some(Command::Doctor(args)) => doctor::run(&args),
        Some(Command::Top(args)) => top::run(&args),
        Some(Command::Supervisor(command)) => detached::supervisor(command),
        Some(Command::Completions(args)) => Ok(dist::completions(Cli::command(), &args)),
        Some(Command::Man(args)) => dist::man(Cli::command(), &args),
        Some(Command::Mcp(args)) => {
            let code = match mcp::run(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => error.report(),
            };
            // Exit now rather than wait for the runtime's blocking stdin reader, which
            // only returns on the next line of input.
            std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 })
        }
        None => session(&cli),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => error.report(),
    }
}

/// An interactive session or print mode: the model is chosen before anything is drawn.
fn session(cli: &Cli) -> Result<ExitCode, CliError> {
    let user_dir = user_dir::user_dir()?;
    let Some(sandbox) = sandbox_config::prepare(&cli.sandbox, &user_dir)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let retention = clean::start_policy()?;
    let (model, model_name) = if cli.demo {
        demo::model()
    } else {
        provider::model_from_env()?
    };
    let env_policy = env_config::file_policy()?;
    let fleet = cli.fleet.resolve()?;
    if cli.prompt.is_none() && !interactive::has_terminal() {
        return Err(CliError::NotATerminal);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(async {
        let move_after =
            (cli.move_after_secs > 0).then(|| std::time::Duration::from_secs(cli.move_after_secs));
        let remote = match &fleet {
            Some(fleet) => {
                let session = cli
                    .resume
                    .clone()
                    .unwrap_or_else(|| zidane::agent::Session::generate().id);
                let workspace = std::env::current_dir().map_err(CliError::Io)?;
                let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
                let (context, handle) = fleet
                    .workspace(&user_dir, &workspace, Some(&session))
                    .await?;
                Some(host::Remote {
                    context: std::sync::Arc::new(context),
                    handle,
                    session,
                })
            }
            None => None,
        };
        let host = host::Host::start(
            model,
            model_name,
            cli.resume.as_deref(),
            env_policy,
            sandbox,
            move_after,
            remote,
        )?;
        host.open().await?;
        // Once this session is held, so it is never among those removed.
        clean::start_retention(retention, user_dir);
        match &cli.prompt {
            Some(prompt) => print::run(host, prompt, cli.wait).await,
            None => interactive::run(host).await,
        }
    })
}
