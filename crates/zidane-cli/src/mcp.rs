//! `zidane mcp`: one MCP session over stdio, or streamable HTTP with `--http`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use zidane_mcp::{
    HttpServer, MCP_DEFAULT_KILL_GRACE, MCP_DEFAULT_RESULT_BUDGET, MCP_DEFAULT_SESSION_IDLE,
    MCP_MIN_RESULT_BUDGET, MCP_PATH, McpHttpOptions, ServeOptions, TOKEN_ENV, serve_stdio,
    shutdown_signal,
};

use crate::error::CliError;
use crate::host::user_dir;

/// Flags of `zidane mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8931; endpoint /mcp)
    /// instead of stdio. Loopback only unless --allow-remote.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Option<SocketAddr>,
    /// Allow a non-loopback --http address. Requires a bearer token.
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// The bearer token every HTTP request must carry (Authorization: Bearer TOKEN).
    #[arg(long, env = TOKEN_ENV, hide_env_values = true, value_name = "TOKEN")]
    bearer_token: Option<String>,
    /// Where sessions keep their task logs (DIR/sessions/ID/tasks/). Default:
    /// $ZIDANE_USER_DIR, else the platform data dir, e.g. ~/.local/share/zidane.
    #[arg(long, value_name = "DIR")]
    user_dir: Option<PathBuf>,
    /// Seconds an HTTP session may go without a request before it ends and its tasks
    /// are killed (a client that vanished without closing it).
    #[arg(long, value_name = "SECS", default_value_t = MCP_DEFAULT_SESSION_IDLE.as_secs())]
    session_idle_secs: u64,
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
}

/// Runs the server until the session ends or SIGTERM/SIGINT.
pub(crate) fn run(args: McpArgs) -> Result<(), CliError> {
    // stdout is the MCP channel on stdio: logs go to stderr, quiet unless RUST_LOG says.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    // The same user dir as every other command, unless the flag names one.
    let user_dir = match args.user_dir.clone() {
        Some(dir) => dir,
        None => user_dir()?,
    };
    let options = ServeOptions::new(user_dir)
        .kill_grace(Duration::from_millis(args.kill_grace_ms))
        .result_budget(args.result_budget_bytes);
    let options = match args.wait_cap_secs {
        Some(secs) => options.wait_cap(Duration::from_secs(secs)),
        None => options,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let served = runtime.block_on(async move {
        match args.http {
            Some(addr) => {
                let mut http = McpHttpOptions::new(addr)
                    .allow_remote(args.allow_remote)
                    .session_idle(Duration::from_secs(args.session_idle_secs));
                if let Some(token) = args.bearer_token {
                    http = http.bearer_token(token);
                }
                let server = HttpServer::bind(options, http).await?;
                let addr = server.local_addr()?;
                // The one line a user (or a test that asked for port 0) needs.
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("zidane mcp: serving http://{addr}{MCP_PATH}");
                }
                server.serve(shutdown_signal()).await
            }
            None => serve_stdio(options, shutdown_signal()).await,
        }
    });
    // A blocked stdin reader or a lingering connection task must not hold the exit: the
    // sessions are torn down by now.
    runtime.shutdown_background();
    Ok(served?)
}
