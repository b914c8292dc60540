//! A test harness, behind the `testing` feature: a throwaway single-node Restate server
//! on loopback, what the tests, the benchmark and a first try of a worker run against.
//! It looks for the server where this workspace's `cargo xtask` installs it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::RestateError;

/// The environment variable naming the `restate-server` binary (`cargo xtask ci` sets
/// it after installing the npm package `@restatedev/restate-server`).
pub const SERVER_ENV: &str = "ZIDANE_RESTATE_SERVER";

/// Where `cargo xtask ci` installs the server, under the workspace's `target/`.
pub const SERVER_INSTALL_PATH: &str =
    "restate/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server";

/// The server's setting `worker.invoker.request-identity-private-key-pem-file`: the key
/// it signs its requests to deployments with.
const SIGNING_KEY_ENV: &str = "RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE";

/// How the error of a server that exited before it was ready begins.
const EXITED: &str = "exited before it was ready with ";

/// How long a new server may take to answer on both its admin and ingress ports.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `restate-server` is installed ([`find_server_binary`]); when it is not, the
/// reason is printed on stderr (the calling test then skips), except under CI
/// (`CI=true`), which must have it: there it panics with the reason.
#[allow(clippy::print_stderr)] // the reason a test skipped
pub fn server_installed() -> bool {
    match find_server_binary() {
        Ok(_) => true,
        Err(error) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must have restate-server: {error}"
            );
            eprintln!("skipped: {error}");
            false
        }
    }
}

/// Finds `restate-server`: [`SERVER_ENV`], else [`SERVER_INSTALL_PATH`] under the
/// workspace's `target/` (or `CARGO_TARGET_DIR`). A [`SERVER_ENV`] that names no file
/// is an error, not a reason to look elsewhere: it was set to pick that server.
pub fn find_server_binary() -> Result<PathBuf, RestateError> {
    let mut looked = Vec::new();
    if let Some(path) = std::env::var_os(SERVER_ENV).filter(|path| !path.is_empty()) {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(path);
        }
        return Err(RestateError::ServerNotFound {
            var: SERVER_ENV,
            looked: vec![path],
        });
    }
    let mut targets = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        targets.push(PathBuf::from(dir));
    }
    targets.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    for target in targets {
        let path = target.join(SERVER_INSTALL_PATH);
        if path.is_file() {
            return Ok(path);
        }
        looked.push(path);
    }
    Err(RestateError::ServerNotFound {
        var: SERVER_ENV,
        looked,
    })
}

/// A `restate-server` child on free loopback ports with its data in a fresh directory;
/// dropping it kills the server and removes the directory.
#[derive(Debug)]
pub struct RestateServer {
    child: Child,
    dir: PathBuf,
    admin: String,
    ingress: String,
}

impl RestateServer {
    /// Starts a server and waits (bounded) until its admin API and ingress answer. The
    /// ports are free when chosen but can be taken before the server binds them (tests
    /// bind ports of their own meanwhile): a server that exits at once is started again
    /// on new ports, a few times.
    pub async fn start() -> Result<Self, RestateError> {
        Self::start_with(None).await
    }

    /// Starts a server, as [`RestateServer::start`], that signs every request it sends a
    /// deployment with the ed25519 private key in `private_key_pem` (PKCS#8 PEM, as
    /// `openssl genpkey -algorithm ed25519` writes it): what workers with identity keys
    /// serve.
    pub async fn start_signing(private_key_pem: &Path) -> Result<Self, RestateError> {
        Self::start_with(Some(private_key_pem)).await
    }

    async fn start_with(private_key_pem: Option<&Path>) -> Result<Self, RestateError> {
        let mut attempts = 1;
        loop {
            match Self::start_once(private_key_pem).await {
                Err(RestateError::Server { reason })
                    if reason.starts_with(EXITED) && attempts < 3 =>
                {
                    tracing::warn!(%reason, "restate-server exited at start; again on new ports");
                    attempts += 1;
                }
                started => return started,
            }
        }
    }

    async fn start_once(private_key_pem: Option<&Path>) -> Result<Self, RestateError> {
        let binary = find_server_binary()?;
        let dir =
            std::env::temp_dir().join(format!("zidane-restate-{}", crate::ids::random_token()));
        std::fs::create_dir_all(&dir).map_err(|source| RestateError::Io {
            path: dir.clone(),
            cause: source,
        })?;
        let [admin_port, ingress_port, node_port] = free_ports()?;
        let log =
            std::fs::File::create(dir.join("server.log")).map_err(|source| RestateError::Io {
                path: dir.join("server.log"),
                cause: source,
            })?;
        let mut command = Command::new(&binary);
        if let Some(pem) = private_key_pem {
            command.env(SIGNING_KEY_ENV, pem);
        }
        let child = command
            .arg("--no-logo")
            .env("RESTATE_BASE_DIR", &dir)
            .env("RESTATE_BIND_IP", "127.0.0.1")
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("RESTATE_BIND_PORT", node_port.to_string())
            .env("RESTATE_ADMIN__BIND_PORT", admin_port.to_string())
            .env("RESTATE_INGRESS__BIND_PORT", ingress_port.to_string())
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            // Few partitions and a small cache: a test server, started often, on 2 cores.
            .env("RESTATE_DEFAULT_NUM_PARTITIONS", "2")
            .env("RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE", "256MiB")
            .env("RESTATE_LOG_FILTER", "warn")
            .env("RESTATE_LOG_DISABLE_ANSI_CODES", "true")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|source| RestateError::Io {
                path: binary.clone(),
                cause: source,
            })?;
        let mut server = Self {
            child,
            dir,
            admin: format!("http://127.0.0.1:{admin_port}"),
            ingress: format!("http://127.0.0.1:{ingress_port}"),
        };
        server.wait_ready().await?;
        Ok(server)
    }

    async fn wait_ready(&mut self) -> Result<(), RestateError> {
        let client = reqwest::Client::new();
        let started = Instant::now();
        let probes = [
            format!("{}/health", self.admin),
            format!("{}/restate/health", self.ingress),
        ];
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(self.log()).unwrap_or_default();
                let last = log.lines().rev().take(5).collect::<Vec<_>>();
                return Err(RestateError::Server {
                    reason: format!(
                        "{EXITED}{status}; its log ended: {}",
                        last.into_iter().rev().collect::<Vec<_>>().join(" | ")
                    ),
                });
            }
            let mut ready = true;
            for probe in &probes {
                let ok = client
                    .get(probe)
                    .timeout(Duration::from_secs(1))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                ready &= ok;
            }
            if ready {
                return Ok(());
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(RestateError::Server {
                    reason: format!("not ready after {READY_TIMEOUT:?}"),
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The admin API's base URL.
    pub fn admin_url(&self) -> &str {
        &self.admin
    }

    /// The ingress's base URL.
    pub fn ingress_url(&self) -> &str {
        &self.ingress
    }

    /// The server's log file.
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Three loopback ports free right now.
fn free_ports() -> Result<[u16; 3], RestateError> {
    let bind = || {
        TcpListener::bind("127.0.0.1:0").map_err(|source| RestateError::Io {
            path: PathBuf::from("127.0.0.1:0"),
            cause: source,
        })
    };
    // All held at once, so the three differ.
    let listeners = [bind()?, bind()?, bind()?];
    let mut ports = [0; 3];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener
            .local_addr()
            .map_err(|source| RestateError::Io {
                path: PathBuf::from("127.0.0.1:0"),
                cause: source,
            })?
            .port();
    }
    Ok(ports)
}
