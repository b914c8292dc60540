//! `zidane-worker`: runs one zidane worker behind a Restate server.
//!
//! ```text
//! zidane-worker --worker-id w1 --user-dir /var/lib/zidane \
//!     --listen 127.0.0.1:9080 --ingress http://127.0.0.1:8080 \
//!     [--admin http://127.0.0.1:9070] [--advertise http://10.0.0.5:9080] [--max-tasks 64]
//! ```
//!
//! `zidane-worker --help` says what each flag does.
//!
//! With `--admin` it registers its endpoint (the `--advertise` URL, else
//! `http://<listen>`) with Restate and has every handle it holds tasks of mark what a
//! previous run of this worker left running as lost; then it prints
//! `ready <address> <service>` on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use zidane_restate::{Worker, WorkerConfig, register, serve};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "zidane-worker",
    version,
    about = "Runs one zidane worker behind a Restate server: background tasks on this machine that outlive the host."
)]
struct Args {
    /// This worker's id (1-64 ASCII letters, digits or '_'); its service is `ZidaneWorker_<id>`.
    #[arg(long, value_name = "ID")]
    worker_id: String,
    /// Where the worker keeps its tasks' logs.
    #[arg(long, value_name = "DIR")]
    user_dir: String,
    /// The address the worker's endpoint listens on (`127.0.0.1:9080`).
    #[arg(long, value_name = "ADDR")]
    listen: String,
    /// Restate's ingress (`http://127.0.0.1:8080`).
    #[arg(long, value_name = "URL")]
    ingress: String,
    /// Restate's admin API: register the endpoint there and mark a previous run's tasks lost.
    #[arg(long, value_name = "URL")]
    admin: Option<String>,
    /// The endpoint URL Restate should call, when not `http://<listen>`.
    #[arg(long, value_name = "URL")]
    advertise: Option<String>,
    /// Most tasks running at once.
    #[arg(long, value_name = "N")]
    max_tasks: Option<usize>,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("zidane-worker: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let Args {
        worker_id,
        user_dir,
        listen,
        ingress,
        ..
    } = args;
    std::fs::create_dir_all(&user_dir).map_err(|e| format!("{user_dir}: {e}"))?;
    let mut config = WorkerConfig::new(worker_id, user_dir, ingress);
    if let Some(max) = args.max_tasks {
        config.max_tasks = max;
    }
    let worker = Worker::new(config).map_err(|e| e.to_string())?;
    let worker = Arc::new(worker);
    worker.ready().await;
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|e| format!("listen on {listen}: {e}"))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let shutdown = async {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    };
    let serving = tokio::spawn(serve(Arc::clone(&worker), listener, shutdown));
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
    println!("ready {address} {}", worker.service_name());
    match serving.await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}
