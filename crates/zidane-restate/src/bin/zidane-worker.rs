//! `zidane-worker`: runs one zidane worker behind a Restate server.
//!
//! ```text
//! zidane-worker --worker-id w1 --user-dir /var/lib/zidane \
//!     --listen 127.0.0.1:9080 --ingress http://127.0.0.1:8080 \
//!     [--admin http://127.0.0.1:9070] [--advertise http://10.0.0.5:9080] [--max-tasks 64]
//! ```
//!
//! With `--admin` it registers its endpoint (the `--advertise` URL, else
//! `http://<listen>`) with Restate and has every handle it holds tasks of mark what a
//! previous run of this worker left running as lost; then it prints
//! `ready <address> <service>` on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::sync::Arc;

use zidane_restate::{Worker, WorkerConfig, register, serve};

const USAGE: &str = "usage: zidane-worker --worker-id ID --user-dir DIR --listen ADDR \
--ingress URL [--admin URL] [--advertise URL] [--max-tasks N]";

#[derive(Default)]
struct Args {
    worker_id: Option<String>,
    user_dir: Option<String>,
    listen: Option<String>,
    ingress: Option<String>,
    admin: Option<String>,
    advertise: Option<String>,
    max_tasks: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let slot = match flag.as_str() {
            "--worker-id" => &mut args.worker_id,
            "--user-dir" => &mut args.user_dir,
            "--listen" => &mut args.listen,
            "--ingress" => &mut args.ingress,
            "--admin" => &mut args.admin,
            "--advertise" => &mut args.advertise,
            "--max-tasks" => &mut args.max_tasks,
            other => return Err(format!("unknown argument {other}")),
        };
        *slot = Some(value);
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("zidane-worker: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let args = parse_args().map_err(|e| format!("{e}\n{USAGE}"))?;
    let (Some(worker_id), Some(user_dir), Some(listen), Some(ingress)) =
        (args.worker_id, args.user_dir, args.listen, args.ingress)
    else {
        return Err(USAGE.to_owned());
    };
    std::fs::create_dir_all(&user_dir).map_err(|e| format!("{user_dir}: {e}"))?;
    let mut config = WorkerConfig::new(worker_id, user_dir, ingress);
    if let Some(max) = args.max_tasks {
        config.max_tasks = max
            .parse()
            .map_err(|_| format!("--max-tasks {max:?} is not a number"))?;
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
