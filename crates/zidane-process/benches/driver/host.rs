//! A host as the drivers set one up: a context, a handle, and every exit arriving on a
//! channel. Shared by the Unix driver and the Windows one; each names its shell
//! (`protocol_shell`).
//!
//! With [`SANDBOX_ENV`] set to a sandbox mode, every context runs its commands in that
//! sandbox, the op's directory as the workspace: the sandboxed variant of every op,
//! which the side-by-side run (`cargo xtask bench --peers`) sets beside the plain one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, ExecutionContext, ExecutionHandle, SandboxMode,
    SandboxPolicy, TaskExitInfo,
};
use zidane_process::ProcessContext;

use zidane_test_support::percentiles;

use crate::protocol::{Failure, Fields, fail};

/// How long an op waits for any one exit.
const EXIT_WAIT: Duration = Duration::from_secs(240);

/// The variable that runs every task of the driver sandboxed: a sandbox mode
/// (`workspace-write`, `read-only`; network on, as a host's default), with the op's
/// directory as the workspace root. Unset, empty or `off`: no sandbox.
pub(crate) const SANDBOX_ENV: &str = "ZIDANE_BENCH_SANDBOX";

/// The sandbox [`SANDBOX_ENV`] asks for, `dir` as its workspace; an `off` policy when
/// it asks for none.
fn sandbox_policy(dir: &Path) -> Result<SandboxPolicy, Failure> {
    let mode = match std::env::var(SANDBOX_ENV) {
        Ok(value) if !value.is_empty() => value
            .parse::<SandboxMode>()
            .map_err(|error| format!("{SANDBOX_ENV}: {error}"))?,
        _ => SandboxMode::Off,
    };
    Ok(SandboxPolicy::workspace_write(dir).mode(mode))
}

/// A context and handle as a host would set them up, exits arriving on a channel.
pub(crate) struct Host {
    pub(crate) context: ProcessContext,
    pub(crate) handle: ExecutionHandle,
    pub(crate) exits_tx: mpsc::UnboundedSender<TaskExitInfo>,
    pub(crate) exits: mpsc::UnboundedReceiver<TaskExitInfo>,
    pub(crate) dir: PathBuf,
}

impl Host {
    /// The host of one op; its commands sandboxed when [`SANDBOX_ENV`] asks, and then
    /// only if the sandbox is enforced here (no unsandboxed numbers under its name).
    pub(crate) async fn new(dir: &Path, max_tasks: usize) -> Result<Self, Failure> {
        let policy = sandbox_policy(dir)?;
        let sandboxed = policy.is_on();
        let context = ProcessContext::builder()
            .max_background_tasks(max_tasks)
            .shell(crate::protocol_shell())
            .sandbox(policy)
            .build();
        let report = context.sandbox();
        if sandboxed && !report.enforced() {
            return Err(format!(
                "{SANDBOX_ENV} asks for a sandbox this machine does not enforce: {}",
                report.line().unwrap_or_default()
            )
            .into());
        }
        let handle = context.create_handle().await?;
        let (exits_tx, exits) = mpsc::unbounded_channel();
        Ok(Self {
            context,
            handle,
            exits_tx,
            exits,
            dir: dir.to_owned(),
        })
    }

    pub(crate) fn options(&self) -> BackgroundOptions {
        let tx = self.exits_tx.clone();
        BackgroundOptions::new(&self.dir).on_exit(move |exit| {
            let _ = tx.send(exit);
        })
    }

    pub(crate) async fn next_exit(&mut self) -> Result<TaskExitInfo, Failure> {
        match tokio::time::timeout(EXIT_WAIT, self.exits.recv()).await {
            Ok(Some(exit)) => Ok(exit),
            Ok(None) => Err("the exit channel closed".into()),
            Err(_) => Err("timed out waiting for an exit".into()),
        }
    }

    /// The `spawn` op: `n` times, one after another, starts `command` (with `options`
    /// applied) and times the call; then waits for every exit.
    pub(crate) async fn time_starts(
        &mut self,
        n: usize,
        command: &str,
        options: impl Fn(BackgroundOptions) -> BackgroundOptions,
    ) -> Result<Fields, Failure> {
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let options = options(self.options());
            let t0 = Instant::now();
            self.context
                .exec_background(self.handle, command, options)
                .await?;
            samples.push(t0.elapsed());
        }
        let (_, bad) = self.wait_for(n).await?;
        let fields = percentiles(&mut samples);
        if bad > 0 {
            return Err(fail(fields, format!("{bad} of {n} tasks exited non-zero")));
        }
        Ok(fields)
    }

    /// The `roundtrip` op: `n` times, starts `command` and times it until its exit is told.
    pub(crate) async fn time_roundtrips(
        &mut self,
        n: usize,
        command: &str,
    ) -> Result<Fields, Failure> {
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let options = self.options();
            let t0 = Instant::now();
            self.context
                .exec_background(self.handle, command, options)
                .await?;
            let exit = self.next_exit().await?;
            samples.push(t0.elapsed());
            if exit.exit_code != 0 {
                return Err(format!("task exited {}", exit.exit_code).into());
            }
        }
        Ok(percentiles(&mut samples))
    }

    /// Starts `command` and waits for its exit: what the start returned, the exit, and
    /// the seconds from the start call to the exit told (the `throughput` and
    /// `interleave` ops).
    pub(crate) async fn run_once(
        &mut self,
        command: &str,
    ) -> Result<(BackgroundStarted, TaskExitInfo, f64), Failure> {
        let options = self.options();
        let t0 = Instant::now();
        let started = self
            .context
            .exec_background(self.handle, command, options)
            .await?;
        let exit = self.next_exit().await?;
        Ok((started, exit, t0.elapsed().as_secs_f64()))
    }

    /// Runs `command` once to its end: the runtime's threads and the first spawn's lazily
    /// made state exist before anything is counted.
    pub(crate) async fn warm_up(&mut self, command: &str) -> Result<(), Failure> {
        self.context
            .exec_background(self.handle, command, self.options())
            .await?;
        self.next_exit().await?;
        Ok(())
    }

    /// The body of the `concurrent` op: starts `n` of `command` as fast as it can and
    /// waits for every exit; the seconds that took, and how many exited non-zero.
    pub(crate) async fn start_all(
        &mut self,
        n: usize,
        command: &str,
    ) -> Result<(f64, usize), Failure> {
        let t0 = Instant::now();
        for _ in 0..n {
            let options = self.options();
            self.context
                .exec_background(self.handle, command, options)
                .await?;
        }
        let (_, bad) = self.wait_for(n).await?;
        Ok((t0.elapsed().as_secs_f64(), bad))
    }

    /// Waits for `n` exits; how many there were, and how many were non-zero.
    async fn wait_for(&mut self, n: usize) -> Result<(usize, usize), Failure> {
        let mut bad = 0;
        for _ in 0..n {
            if self.next_exit().await?.exit_code != 0 {
                bad += 1;
            }
        }
        Ok((n, bad))
    }
}
