//! `zidane-worker`: runs one zidane worker behind a Restate server.
//!
//! ```text
//! zidane-worker --worker-id w1 --user-dir /var/lib/zidane \
//!     --listen 127.0.0.1:9080 --ingress http://127.0.0.1:8080 \
//!     [--admin http://127.0.0.1:9070] [--advertise http://10.0.0.5:9080] [--max-tasks 64] \
//!     [--label gpu --label linux-x86_64] \
//!     [--identity-key publickeyv1_… | --identity-key-file PATH | --insecure-no-identity] \
//!     [--env-inherit all|core|none] [--env-exclude PATTERN] [--env-include-only PATTERN] \
//!     [--env-set NAME=VALUE]
//! ```
//!
//! `zidane-worker --help` says what each flag does; every flag is also an environment
//! variable (`ZIDANE_WORKER_ID`, `ZIDANE_WORKER_LABELS`, …), for containers and units.
//!
//! A worker runs the shell commands it is sent, so it serves only requests signed by the
//! Restate servers whose public keys it is given (`--identity-key`,
//! `--identity-key-file`, `ZIDANE_WORKER_IDENTITY_KEYS`). Without keys it listens only on
//! loopback, unless `--insecure-no-identity` says something else guards the port.
//!
//! With `--admin` it registers its endpoint (the `--advertise` URL, else
//! `http://<listen>`) with Restate and has every handle it holds tasks of mark what a
//! previous run of this worker left running as lost; then it prints
//! `ready <address> <service> identity: <what it verifies>` on stdout.
//!
//! Its tasks get the worker's environment as its `--env-*` flags filter it: by default
//! all of it but the variables named like secrets (keys, tokens, secrets, passwords),
//! as `zidane_context::EnvPolicy` says.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use zidane_context::{
    EnvInherit, EnvPattern, EnvPolicy, ExecutionContext as _, NetworkAccess, SandboxMode,
    SandboxPolicy, SandboxStatus, parse_env_assignment,
};
use zidane_restate::{IdentityKeys, Worker, WorkerOptions, register, serve, serve_health};

/// The environment variable holding identity keys (separated by commas or whitespace),
/// added to those of the flags.
const KEYS_ENV: &str = "ZIDANE_WORKER_IDENTITY_KEYS";

/// What `--help` adds after the flags.
const SECURITY_HELP: &str = "\
Security:
  A worker runs the shell commands it is sent. Give it the public key of your Restate
  server's request-identity key and it serves only requests that server signed:
    restate-server: [worker.invoker] request-identity-private-key-pem-file = \"key.pem\"
                    (openssl genpkey -algorithm ed25519 -out key.pem); at start it
                    logs `Loaded request identity key` with the public key as `kid`
    zidane-worker:  --identity-key publickeyv1_… (or a file, or the variable)
  Keys from all three sources are accepted together: list the old and the new key while
  rotating. Without keys the worker listens only on a loopback address (any local
  process can then call it); a non-loopback --listen without keys is refused unless
  --insecure-no-identity is given. Signatures authenticate Restate, they do not encrypt:
  across machines, put TLS in front (docs/DURABLE.md, Security).

Environment:
  ZIDANE_WORKER_IDENTITY_KEYS  identity keys, separated by commas or whitespace
  Every flag is also the variable shown beside it ([env: …]); a flag given wins.";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "zidane-worker",
    version,
    about = "Runs one zidane worker behind a Restate server: background tasks on this machine that outlive the host.",
    after_help = SECURITY_HELP
)]
struct Args {
    /// This worker's id (1-64 ASCII letters, digits or '_'); its service is `ZidaneWorker_<id>`.
    #[arg(long, value_name = "ID", env = "ZIDANE_WORKER_ID")]
    worker_id: String,
    /// Where the worker keeps its tasks' logs.
    #[arg(long, value_name = "DIR", env = "ZIDANE_WORKER_USER_DIR")]
    user_dir: String,
    /// The address the worker's endpoint listens on (`127.0.0.1:9080`).
    #[arg(long, value_name = "ADDR", env = "ZIDANE_WORKER_LISTEN")]
    listen: String,
    /// Restate's ingress (`http://127.0.0.1:8080`).
    #[arg(long, value_name = "URL", env = "ZIDANE_WORKER_INGRESS")]
    ingress: String,
    /// Restate's admin API: register the endpoint there and mark a previous run's tasks lost.
    #[arg(long, value_name = "URL", env = "ZIDANE_WORKER_ADMIN")]
    admin: Option<String>,
    /// The endpoint URL Restate should call, when not `http://<listen>`.
    #[arg(long, value_name = "URL", env = "ZIDANE_WORKER_ADVERTISE")]
    advertise: Option<String>,
    /// Most tasks running at once.
    #[arg(long, value_name = "N", env = "ZIDANE_WORKER_MAX_TASKS")]
    max_tasks: Option<usize>,
    /// What this machine is (`gpu`, `linux-x86_64`): a start that names labels runs on
    /// the least-loaded worker carrying all of them. Repeatable, or comma-separated.
    #[arg(
        long = "label",
        value_name = "LABEL",
        value_delimiter = ',',
        env = "ZIDANE_WORKER_LABELS"
    )]
    labels: Vec<String>,
    /// Serve `GET /health` on this address (plain HTTP/1.1): `200 serving`, or `503
    /// draining` once the worker drains.
    #[arg(long, value_name = "ADDR", env = "ZIDANE_WORKER_HEALTH")]
    health: Option<String>,
    /// On SIGTERM the worker drains: it takes no new task, lets its running tasks end
    /// and their exits be recorded, then exits. Past this many seconds it ends the
    /// tasks still running (their exits recorded too). A second SIGTERM stops at once.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 300,
        env = "ZIDANE_WORKER_DRAIN_TIMEOUT"
    )]
    drain_timeout: u64,
    /// Serve only requests signed by the Restate server with this public key
    /// (`publickeyv1_…`); repeat for several (key rotation, several servers).
    #[arg(long, value_name = "KEY")]
    identity_key: Vec<String>,
    /// Like --identity-key, for each key in FILE (separated by newlines, commas or
    /// spaces; `#` starts a comment); repeatable.
    #[arg(long, value_name = "FILE", env = "ZIDANE_WORKER_IDENTITY_KEY_FILE")]
    identity_key_file: Vec<PathBuf>,
    /// Listen on a non-loopback address without identity keys: anyone who reaches the
    /// port can run commands as this user. Only when something else (a private network
    /// that only Restate reaches, an authenticating proxy) guards it.
    #[arg(long, env = "ZIDANE_WORKER_INSECURE_NO_IDENTITY")]
    insecure_no_identity: bool,
    /// Which of this process's environment variables tasks start from: all (the
    /// default), core (PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TERM,
    /// TMPDIR, TZ) or none. Names like *KEY*, *SECRET*, *TOKEN*, *PASSWORD* (any case)
    /// are withheld whichever, and ZIDANE_MCP_TOKEN always.
    #[arg(long, value_name = "all|core|none", env = "ZIDANE_WORKER_ENV_INHERIT")]
    env_inherit: Option<EnvInherit>,
    /// Withhold variables whose names match PATTERN too (`*` any run, `?` one
    /// character, any case); repeatable.
    #[arg(long, value_name = "PATTERN", env = "ZIDANE_WORKER_ENV_EXCLUDE")]
    env_exclude: Vec<EnvPattern>,
    /// Pass on only variables whose names match PATTERN (or another of these);
    /// repeatable.
    #[arg(long, value_name = "PATTERN", env = "ZIDANE_WORKER_ENV_INCLUDE_ONLY")]
    env_include_only: Vec<EnvPattern>,
    /// Give every task NAME=VALUE, whatever the excludes (never ZIDANE_MCP_TOKEN);
    /// repeatable.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env_assignment, env = "ZIDANE_WORKER_ENV_SET")]
    env_set: Vec<(String, String)>,
    /// What tasks may touch: workspace-write (the default: each task writes only in its
    /// session's directory on this worker, the temp directories and the build caches;
    /// credential stores hidden), read-only, or off. Where the sandbox cannot be built,
    /// tasks run unsandboxed and the worker says so, unless --sandbox-required.
    #[arg(
        long,
        value_name = "workspace-write|read-only|off",
        default_value = "workspace-write",
        env = "ZIDANE_WORKER_SANDBOX"
    )]
    sandbox: SandboxMode,
    /// Whether sandboxed tasks reach the network: on (the default) or off.
    #[arg(
        long,
        value_name = "on|off",
        default_value = "on",
        env = "ZIDANE_WORKER_NETWORK"
    )]
    network: NetworkAccess,
    /// A directory sandboxed tasks may also write; repeatable.
    #[arg(
        long,
        value_name = "DIR",
        env = "ZIDANE_WORKER_WRITABLE",
        value_delimiter = ','
    )]
    writable: Vec<PathBuf>,
    /// A path no task may read, beside the credential stores; repeatable.
    #[arg(
        long,
        value_name = "PATH",
        env = "ZIDANE_WORKER_DENY_READ",
        value_delimiter = ','
    )]
    deny_read: Vec<PathBuf>,
    /// Refuse to start when the sandbox cannot be built here, rather than run tasks
    /// unsandboxed.
    #[arg(long, env = "ZIDANE_WORKER_SANDBOX_REQUIRED")]
    sandbox_required: bool,
}

impl Args {
    /// The sandbox policy of the sandbox flags (its workspace is each task's session
    /// directory, set by the worker).
    fn sandbox_policy(&self) -> SandboxPolicy {
        let mut policy = match self.sandbox {
            SandboxMode::Off => SandboxPolicy::off(),
            SandboxMode::ReadOnly => SandboxPolicy::read_only(),
            SandboxMode::WorkspaceWrite => SandboxPolicy::workspace_write(PathBuf::new()),
        }
        .network(self.network);
        for dir in &self.writable {
            policy = policy.writable(dir);
        }
        for path in &self.deny_read {
            policy = policy.deny_read(path);
        }
        policy
    }

    /// The environment policy of the `--env-*` flags, checked.
    fn env_policy(&self) -> Result<EnvPolicy, String> {
        let mut policy = EnvPolicy::default();
        if let Some(inherit) = self.env_inherit {
            policy.inherit = inherit;
        }
        policy.exclude.clone_from(&self.env_exclude);
        policy.include_only.clone_from(&self.env_include_only);
        policy.set.extend(self.env_set.iter().cloned());
        policy.validate().map_err(|e| e.to_string())?;
        Ok(policy)
    }
}

/// `RUST_LOG`'s filter, else `warn`; a value tracing cannot parse is an error, not a
/// silent fallback.
fn log_filter() -> Result<tracing_subscriber::EnvFilter, String> {
    match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => tracing_subscriber::EnvFilter::try_new(&value)
            .map_err(|e| format!("RUST_LOG={value:?} is not a valid log filter: {e}")),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok("warn".into()),
        Err(std::env::VarError::NotUnicode(_)) => Err("RUST_LOG is not UTF-8".to_owned()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let filter = match log_filter() {
        Ok(filter) => filter,
        Err(message) => {
            eprintln!("zidane-worker: {message}");
            return ExitCode::FAILURE;
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("zidane-worker: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The keys of `--identity-key`, `--identity-key-file` and [`KEYS_ENV`], each checked;
/// an error names the flag, file or variable of the key it refuses.
fn identity_keys(args: &Args, env: Option<String>) -> Result<IdentityKeys, String> {
    let mut keys = IdentityKeys::none();
    for key in &args.identity_key {
        keys.add(key, "--identity-key").map_err(|e| e.to_string())?;
    }
    for path in &args.identity_key_file {
        let source = format!("--identity-key-file {}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| format!("{source}: {e}"))?;
        if keys.add_all(&text, &source).map_err(|e| e.to_string())? == 0 {
            return Err(format!("{source}: no key in it"));
        }
    }
    if let Some(text) = env {
        keys.add_all(&text, KEYS_ENV).map_err(|e| e.to_string())?;
    }
    Ok(keys)
}

/// Where the worker may listen with these keys, and what its ready line says of its
/// identity check.
fn exposure(
    listen: &str,
    addresses: &[SocketAddr],
    keys: &IdentityKeys,
    insecure: bool,
) -> Result<String, String> {
    let exposed = addresses
        .iter()
        .find(|address| !address.ip().to_canonical().is_loopback());
    match (keys.keys().len(), exposed) {
        (0, None) if !insecure => {
            Ok("identity: none (loopback only: any local process can call this worker)".into())
        }
        (0, Some(address)) if !insecure => Err(format!(
            "refusing to listen on {listen}{} without identity keys: it is not a \
             loopback address, and anyone who reaches it could run commands on this machine. \
             Give the public key of the Restate server that calls this worker \
             (--identity-key, --identity-key-file or {KEYS_ENV}), listen on 127.0.0.1, or \
             pass --insecure-no-identity if something else guards this port",
            if address.to_string() == listen {
                String::new()
            } else {
                format!(" ({address})")
            }
        )),
        (0, _) => Ok(
            "identity: NONE (--insecure-no-identity: anyone who reaches this port can run commands)"
                .into(),
        ),
        (_, _) if insecure => Err(format!(
            "--insecure-no-identity contradicts the identity keys given (--identity-key, \
             --identity-key-file or {KEYS_ENV}): drop one or the other"
        )),
        (1, _) => Ok("identity: verified (1 key)".into()),
        (n, _) => Ok(format!("identity: verified ({n} keys)")),
    }
}

async fn run(args: Args) -> Result<(), String> {
    // What this process holds (its environment, the keys it was given) stays out of
    // reach of the commands it runs, sandboxed or not: no core dumps, not dumpable.
    if let Err(error) = zidane_process::harden_process() {
        eprintln!("zidane-worker: could not harden this process: {error}");
    }
    // Bad configuration stops the worker before it sweeps, creates or binds anything.
    zidane_process::ProcessPath::from_env().map_err(|e| e.to_string())?;
    let env_policy = args.env_policy()?;
    let keys = identity_keys(&args, std::env::var(KEYS_ENV).ok())?;
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host(&args.listen)
        .await
        .map_err(|e| format!("listen on {}: {e}", args.listen))?
        .collect();
    // Checked before anything is swept, created or bound: a refused worker does nothing.
    let identity = exposure(&args.listen, &addresses, &keys, args.insecure_no_identity)?;
    if args.insecure_no_identity {
        eprintln!("zidane-worker: warning: {identity}");
    }
    let sandbox = args.sandbox_policy();
    // Checked the way the worker's context will (on Linux by running bubblewrap once),
    // on a context of its own that runs nothing, before anything is created.
    let probe = zidane_process::ProcessContext::builder()
        .lifeline(false)
        .sandbox(Worker::context_sandbox(&sandbox, Path::new(&args.user_dir)))
        .build();
    if let Some(plan) = probe.sandbox_plan() {
        Worker::check_sandbox_plan(&plan, Path::new(&args.user_dir)).map_err(|e| e.to_string())?;
    }
    match probe.sandbox().status {
        SandboxStatus::Unavailable(reason) if args.sandbox_required => {
            return Err(format!(
                "--sandbox-required: the sandbox cannot be built here: {reason}"
            ));
        }
        SandboxStatus::Unavailable(reason) => {
            eprintln!("zidane-worker: unsandboxed: {reason}");
        }
        SandboxStatus::Enforced | SandboxStatus::Off => {}
    }
    drop(probe);
    let Args {
        worker_id,
        user_dir,
        listen,
        ingress,
        ..
    } = args;
    std::fs::create_dir_all(&user_dir).map_err(|e| format!("{user_dir}: {e}"))?;
    let mut config = WorkerOptions::new(worker_id, user_dir, ingress);
    if let Some(max) = args.max_tasks {
        config.max_tasks = max;
    }
    config.env_policy = env_policy;
    config.labels = args.labels.clone();
    config.sandbox = sandbox;
    let worker = Worker::new(config).map_err(|e| e.to_string())?;
    let worker = Arc::new(worker);
    worker.ready().await;
    let listener = tokio::net::TcpListener::bind(addresses.as_slice())
        .await
        .map_err(|e| format!("listen on {listen}: {e}"))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let health = match &args.health {
        Some(health) => Some(
            tokio::net::TcpListener::bind(health)
                .await
                .map_err(|e| format!("--health {health}: {e}"))?,
        ),
        None => None,
    };
    let (stop_serving, stopped) = tokio::sync::watch::channel(false);
    let until_stopped = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    let serving = tokio::spawn(serve(
        Arc::clone(&worker),
        listener,
        keys,
        until_stopped(stopped.clone()),
    ));
    let health_address = match health {
        Some(listener) => {
            let address = listener.local_addr().map_err(|e| e.to_string())?;
            tokio::spawn(serve_health(
                Arc::clone(&worker),
                listener,
                until_stopped(stopped),
            ));
            Some(address)
        }
        None => None,
    };
    if let Some(admin) = args.admin {
        let uri = args
            .advertise
            .unwrap_or_else(|| format!("http://{address}"));
        register(&admin, &uri).await.map_err(|e| e.to_string())?;
        // Not fatal: hosts' calls mark lost tasks too, only later.
        if let Err(error) = worker.sweep_lost(&admin).await {
            eprintln!("zidane-worker: could not sweep for lost tasks: {error}");
        }
    }
    match health_address {
        Some(health) => println!(
            "ready {address} {} {identity} health: http://{health}/health",
            worker.service_name()
        ),
        None => println!("ready {address} {} {identity}", worker.service_name()),
    }
    let mut stops = Stops::new();
    let mut serving = serving;
    tokio::select! {
        () = stops.next() => {}
        served = &mut serving => return finished(served),
    }
    let deadline = Duration::from_secs(args.drain_timeout);
    eprintln!(
        "zidane-worker: draining: no new tasks; waiting up to {}s for the running ones \
         (a second stop ends them now)",
        deadline.as_secs()
    );
    tokio::select! {
        () = drain(&worker, deadline) => {}
        () = stops.next() => eprintln!("zidane-worker: stopping now: the running tasks end"),
    }
    let _ = stop_serving.send(true);
    finished(serving.await)
}

/// What the endpoint's task ended with.
fn finished(
    served: Result<Result<(), zidane_restate::RestateError>, tokio::task::JoinError>,
) -> Result<(), String> {
    match served {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// How often a draining worker looks at what is left.
const DRAIN_POLL: Duration = Duration::from_millis(100);

/// How long ended tasks' exits may take to be recorded after a drain's deadline.
const RECORD_WAIT: Duration = Duration::from_secs(30);

/// Drains `worker`: no new task, the running ones left to end for `deadline` and then
/// ended, until every exit is recorded in the worker's tables; then, for at most
/// [`SESSION_LEASE`](zidane_restate::SESSION_LEASE), until a session was told each.
async fn drain(worker: &Worker, deadline: Duration) {
    worker.drain();
    let until = tokio::time::Instant::now() + deadline;
    while !worker.drained().await {
        if tokio::time::Instant::now() >= until {
            eprintln!("zidane-worker: drain deadline passed: ending the tasks still running");
            worker.end_tasks().await;
            break;
        }
        tokio::time::sleep(DRAIN_POLL).await;
    }
    let recorded_by = tokio::time::Instant::now() + RECORD_WAIT;
    while !(worker.drained().await && worker.recorded().await) {
        if tokio::time::Instant::now() >= recorded_by {
            eprintln!(
                "zidane-worker: some exits are not recorded yet: Restate delivers them once a worker with this id is back"
            );
            return;
        }
        tokio::time::sleep(DRAIN_POLL).await;
    }
    // Its tables are read through it: it serves them a while longer, so that a session
    // still connected lists the ends and tells them before the worker is gone.
    let told_by = tokio::time::Instant::now() + zidane_restate::SESSION_LEASE;
    while !worker.told().await {
        if tokio::time::Instant::now() >= told_by {
            eprintln!(
                "zidane-worker: drained: every task ended and its exit recorded; ends no session was told are told once a worker with this id is back"
            );
            return;
        }
        tokio::time::sleep(DRAIN_POLL).await;
    }
    eprintln!("zidane-worker: drained: every task ended, its exit recorded and told");
}

/// The stop requests: SIGTERM or ctrl-c (ctrl-c only on Windows, which has no SIGTERM).
struct Stops {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Stops {
    fn new() -> Self {
        Self {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    /// The next stop request.
    async fn next(&mut self) {
        #[cfg(unix)]
        if let Some(term) = &mut self.term {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
