//! `zidane mcp`: one MCP session over stdio, or streamable HTTP with `--http`.

use std::path::PathBuf;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser};
use zidane_mcp::{
    MCP_DEFAULT_KILL_GRACE, MCP_DEFAULT_RESULT_BUDGET, MCP_MIN_RESULT_BUDGET, MoveAfter,
    ServeOptions, serve_stdio, shutdown_signal,
};

use crate::env_config::{self, EnvArgs};
use crate::error::CliError;
use crate::fleet::FleetArgs;
use crate::mcp_http::{self, HttpArgs};
use crate::sandbox_config::{self, SandboxArgs};
use crate::user_dir::user_dir;

/// Flags of `zidane mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The HTTP transport's flags (boxed: they outweigh every other command's).
    #[command(flatten)]
    http: Box<HttpArgs>,
    /// The environment tasks get.
    #[command(flatten)]
    env: EnvArgs,
    /// What tasks may touch.
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Where tasks run, when not on this machine (boxed: rarely given, and larger than
    /// every other command's flags).
    #[command(flatten)]
    fleet: Box<FleetArgs>,
    /// Where sessions keep their task logs (DIR/sessions/ID/tasks/). Default:
    /// $ZIDANE_USER_DIR, else the platform data dir, e.g. ~/.local/share/zidane.
    #[arg(long, value_name = "DIR")]
    user_dir: Option<PathBuf>,
    /// Milliseconds a killed task gets between SIGTERM and SIGKILL.
    #[arg(long, value_name = "MS", default_value_t = MCP_DEFAULT_KILL_GRACE.as_millis() as u64)]
    kill_grace_ms: u64,
    /// Most bytes of one tool result's text, task notifications included; a longer
    /// answer keeps its end and names where the rest is. Hosts cut results on their own
    /// past about 10 KiB.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = MCP_DEFAULT_RESULT_BUDGET,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(MCP_MIN_RESULT_BUDGET as u64..),
    )]
    result_budget_bytes: usize,
    /// The longest wait_task may wait, in seconds, for every client. Default: under the
    /// connected client's request ceiling where it is known (Codex, Cursor, VS Code, Zed,
    /// …), else under a minute.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    wait_cap_secs: Option<u64>,
    /// Move a foreground shell command still running after this many seconds to the
    /// background, where it runs on and its end is told (0: never). Default: the margin
    /// under the connected client's request ceiling that wait_task's cap keeps.
    #[arg(long, value_name = "SECS")]
    move_after_secs: Option<u64>,
}

/// `zidane mcp` and its flags alone: what [`check_args`] parses a host's entry with.
#[derive(Debug, Parser)]
#[command(name = "zidane mcp")]
struct McpLine {
    #[command(flatten)]
    _args: McpArgs,
}

/// Why `zidane mcp` would refuse a line of arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgsRefused {
    /// What clap says first, without its `error: ` (`unexpected argument '--bogus'
    /// found`).
    pub(crate) message: String,
    /// The argument it does not know, when that is why (`--bogus`).
    pub(crate) unknown: Option<String>,
}

/// Whether `zidane mcp ARGS` would start serving with `args` (the words after `mcp`),
/// judged by the same clap definition that parses them when a host starts it: nothing
/// is read or run. `--help` and `--version` are refused too: they print and exit.
pub(crate) fn check_args(args: &[String]) -> Result<(), ArgsRefused> {
    let line = std::iter::once("zidane mcp").chain(args.iter().map(String::as_str));
    let Err(error) = McpLine::try_parse_from(line) else {
        return Ok(());
    };
    let message = match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "it prints its help and exits".to_owned()
        }
        ErrorKind::DisplayVersion => "it prints its version and exits".to_owned(),
        _ => {
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    };
    let unknown = match (error.kind(), error.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) => Some(arg.clone()),
        _ => None,
    };
    Err(ArgsRefused { message, unknown })
}

/// Runs the server until the session ends or SIGTERM/SIGINT.
pub(crate) fn run(args: McpArgs) -> Result<(), CliError> {
    // stdout is the MCP channel on stdio: logs go to stderr, quiet unless RUST_LOG says.
    let env_policy = args.env.policy()?;
    if args.env.print_env_policy {
        return env_config::print_env_policy(&env_policy);
    }
    // The same user dir as every other command, unless the flag names one.
    let user_dir = match args.user_dir.clone() {
        Some(dir) => dir,
        None => user_dir()?,
    };
    // On a fleet, the workers' own policy applies: this machine's sandbox has nothing
    // to contain.
    let fleet = args.fleet.resolve()?;
    let sandbox = if fleet.is_some() {
        zidane::context::SandboxPolicy::off()
    } else {
        let Some(sandbox) = sandbox_config::prepare(&args.sandbox, &user_dir)? else {
            return Ok(());
        };
        sandbox
    };
    let retention = crate::clean::start_policy()?;
    // An unavailable sandbox was said once, above; every session's context would log it
    // again (the builder's only warning a checked build can reach), so not by default.
    tracing_subscriber::fmt()
        .with_env_filter(env_config::log_filter(
            "warn,zidane_process::builder=error",
        )?)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let options = ServeOptions::new(user_dir.clone())
        .env_policy(env_policy)
        .sandbox(sandbox)
        .kill_grace(Duration::from_millis(args.kill_grace_ms))
        .result_budget(args.result_budget_bytes)
        .sweep_orphans(env_config::sweep_orphans()?);
    let options = if zidane::supervisor::SUPPORTED && fleet.is_none() {
        let paths = zidane::supervisor::SupervisorPaths::for_user_dir(&options.user_dir);
        let launcher = crate::detached::launcher(&options.user_dir)?;
        options.detach(zidane::supervisor::SupervisorClient::new(paths).launcher(launcher))
    } else {
        options
    };
    let options = options.move_after(match args.move_after_secs {
        None => MoveAfter::ClientCeiling,
        Some(0) => MoveAfter::Never,
        Some(secs) => MoveAfter::Fixed(Duration::from_secs(secs)),
    });
    let options = match args.wait_cap_secs {
        Some(secs) => options.wait_cap(Duration::from_secs(secs)),
        None => options,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let served = runtime.block_on(async move {
        let contexts = match &fleet {
            Some(fleet) => Some(fleet.contexts(&user_dir).await?),
            None => None,
        };
        let options = match contexts {
            Some(contexts) => {
                tracing::info!("tasks run on {}", contexts.what);
                options.remote(contexts)
            }
            None => options,
        };
        // In the background: the server starts at once. Its sessions are held live from
        // their start, so none of them is removed.
        crate::clean::start_retention(retention, user_dir);
        Ok::<_, CliError>(match args.http.http {
            Some(addr) => mcp_http::serve(addr, *args.http, options).await,
            None => serve_stdio(options, shutdown_signal()).await,
        })
    });
    // A blocked stdin reader or a lingering connection task must not hold the exit: the
    // sessions are torn down by now.
    runtime.shutdown_background();
    Ok(served??)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn the_arguments_a_host_gives_are_judged_by_the_flags_themselves() {
        for good in [
            &[][..],
            &["--user-dir", "/tmp/z"],
            &["--sandbox", "read-only", "--network", "off"],
            &["--wait-cap-secs", "200", "--kill-grace-ms", "100"],
        ] {
            assert_eq!(check_args(&words(good)), Ok(()), "{good:?}");
        }
        let refused = check_args(&words(&["--bogus"])).unwrap_err();
        assert_eq!(refused.unknown.as_deref(), Some("--bogus"));
        assert!(refused.message.contains("--bogus"), "{refused:?}");
        let refused = check_args(&words(&["--sandbox", "strict"])).unwrap_err();
        assert!(refused.message.contains("strict"), "{refused:?}");
        assert_eq!(refused.unknown, None);
        let refused = check_args(&words(&["--wait-cap-secs", "0"])).unwrap_err();
        assert!(refused.message.contains('0'), "{refused:?}");
        let refused = check_args(&words(&["--help"])).unwrap_err();
        assert_eq!(refused.message, "it prints its help and exits");
    }
}
