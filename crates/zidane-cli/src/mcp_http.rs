//! `zidane mcp --http`: its flags, and serving with a token by default — one generated
//! and left in a private file when none is given, how to connect said on stderr.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use clap::Args;
use zidane_mcp::{
    AllowedOrigin, HttpServer, MCP_DEFAULT_SESSION_IDLE, MCP_PATH, McpHttpOptions, McpServeError,
    ServeOptions, TOKEN_ENV, TokenFile, generate_token, shutdown_signal,
};

/// The flags of the HTTP transport.
#[derive(Debug, Args)]
pub(crate) struct HttpArgs {
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8931; endpoint /mcp)
    /// instead of stdio. Loopback only unless --allow-remote. Every request needs a
    /// bearer token: without --bearer-token one is generated, written to a file only
    /// you can read, and how to connect is printed on stderr.
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) http: Option<SocketAddr>,
    /// Allow a non-loopback --http address. Requires --bearer-token (or ZIDANE_MCP_TOKEN).
    #[arg(long, requires = "http")]
    allow_remote: bool,
    /// The bearer token every HTTP request must carry (Authorization: Bearer TOKEN):
    /// non-empty, no whitespace. Prefer ZIDANE_MCP_TOKEN, which `ps` does not show.
    /// Default: a random one, generated per server.
    #[arg(long, env = TOKEN_ENV, hide_env_values = true, value_name = "TOKEN")]
    bearer_token: Option<String>,
    /// Serve HTTP without any token: every local user and every process of theirs can
    /// then run commands as you. Not with --allow-remote.
    #[arg(long, requires = "http", conflicts_with_all = ["bearer_token", "allow_remote"])]
    no_token: bool,
    /// Also accept requests from web pages of this origin, scheme://host[:port] matched
    /// exactly (e.g. http://localhost:3000); repeatable. Requests from browsers carry
    /// their page's Origin: any other than the server's own loopback ones
    /// (http://localhost:PORT, http://127.0.0.1:PORT, http://[::1]:PORT) gets 403.
    /// `*` allows every origin, so any web page you open could run commands: unsafe.
    #[arg(long, requires = "http", value_name = "ORIGIN")]
    allow_origin: Vec<AllowedOrigin>,
    /// Seconds an HTTP session may go without a request before it ends and its tasks
    /// are killed (a client that vanished without closing it).
    #[arg(long, value_name = "SECS", default_value_t = MCP_DEFAULT_SESSION_IDLE.as_secs())]
    session_idle_secs: u64,
}

/// Serves HTTP on `addr` until SIGTERM/SIGINT. A token generated here lives in a file
/// under `user_dir` while the server runs.
pub(crate) async fn serve(
    addr: SocketAddr,
    args: HttpArgs,
    options: ServeOptions,
) -> Result<(), McpServeError> {
    let mut http = McpHttpOptions::new(addr)
        .allow_remote(args.allow_remote)
        .session_idle(Duration::from_secs(args.session_idle_secs));
    for origin in args.allow_origin {
        http = http.allow_origin(origin);
    }
    // A token nobody gave is generated, except for --allow-remote: the clients of other
    // machines are to be handed one chosen for them.
    let generated = match args.bearer_token {
        Some(token) => {
            http = http.bearer_token(token);
            None
        }
        None if args.no_token => {
            http = http.no_token();
            None
        }
        None if args.allow_remote => None,
        None => {
            let token = generate_token()?;
            http = http.bearer_token(token.clone());
            Some(token)
        }
    };
    let user_dir = options.user_dir.clone();
    // Listening for SIGTERM and SIGINT before saying how to connect: a signal sent as
    // soon as the server is ready ends it cleanly, token file removed.
    let shutdown = shutdown_signal();
    let server = HttpServer::bind(options, http).await?;
    let addr = server.local_addr()?;
    let token_file = match &generated {
        Some(token) => Some(TokenFile::write(&user_dir, addr, token)?),
        None => None,
    };
    say_how_to_connect(
        addr,
        args.no_token,
        token_file.as_ref().map(TokenFile::path),
    );
    let served = server.serve(shutdown).await;
    drop(token_file);
    served
}

/// What a user (or a test that asked for port 0) needs, on stderr. The token itself is
/// not printed: stderr may end up in a log others read; its file is private.
fn say_how_to_connect(addr: SocketAddr, no_token: bool, token_file: Option<&Path>) {
    let url = format!("http://{addr}{MCP_PATH}");
    let mut lines = format!("zidane mcp: serving {url}\n");
    if let Some(path) = token_file {
        let path = path.display();
        lines.push_str(&format!(
            "zidane mcp: every request must carry the header: Authorization: Bearer <the token in {path}>\n\
             zidane mcp: the token file is removed when the server stops; e.g.\n\
             zidane mcp:   claude mcp add --transport http zidane {url} --header \"Authorization: Bearer $(cat '{path}')\"\n"
        ));
    } else if no_token {
        lines.push_str(
            "zidane mcp: no token (--no-token): every local user can run commands as you\n",
        );
    } else {
        lines.push_str(
            "zidane mcp: every request must carry the header: Authorization: Bearer <your token>\n",
        );
    }
    // A closed stderr must not stop the server.
    let _ = std::io::stderr().lock().write_all(lines.as_bytes());
}
