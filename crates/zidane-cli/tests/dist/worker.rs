//! The release archive's `zidane-worker`, unpacked as a user unpacks it: it answers
//! `--version` and `--help` as the worker cargo built does, then, against a real Restate
//! server, registers itself, runs a task a `RestateContext` sends it to its exit, and
//! drains on SIGTERM, leaving no process behind.

use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use zidane::context::{BackgroundOptions, CancellationToken, ExecutionContext as _, TaskStatus};
use zidane_restate::RestateContext;
use zidane_restate::testing::{RestateServer, server_installed};

use super::{WAIT, cargo_worker, host_target, package, run_ok, stripped_binaries};

/// How often a bounded wait looks again.
const POLL: Duration = Duration::from_millis(20);

/// The archive's worker in a process group of its own, killed whole when dropped, so a
/// failed test leaves nothing behind.
struct WorkerProcess {
    child: Child,
}

impl WorkerProcess {
    fn pid(&self) -> Pid {
        Pid::from_raw(i32::try_from(self.child.id()).unwrap())
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = killpg(self.pid(), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_archives_worker_answers_as_cargos_and_runs_a_task_through_restate() {
    // Not in a temp directory: every sandboxed task may write those, and a worker
    // refuses a user dir there.
    let scratch = tempfile::Builder::new()
        .prefix("dist-worker-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let binaries = stripped_binaries(scratch.path());
    let target = host_target();
    let archive = package(&binaries, &target, &scratch.path().join("out"));
    let unpacked = scratch.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    run_ok(
        Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&unpacked),
    );
    let worker = unpacked
        .join(format!("zidane-{target}"))
        .join("zidane-worker");

    for arg in ["--version", "--help"] {
        let packed = run_ok(Command::new(&worker).arg(arg));
        let built = run_ok(Command::new(cargo_worker()).arg(arg));
        assert_eq!(
            String::from_utf8_lossy(&packed.stdout),
            String::from_utf8_lossy(&built.stdout),
            "{arg}"
        );
    }

    if !server_installed() {
        return;
    }
    let server = RestateServer::start().await.unwrap();
    let user_dir = scratch.path().join("worker");
    let mut process = {
        // A starting worker sweeps this machine's orphans, which must not race the
        // tests that make orphans and sweep them.
        let _lock = zidane_test_support::sweep_lock();
        let child = Command::new(&worker)
            .args(["--worker-id", "dist", "--listen", "127.0.0.1:0"])
            .args(["--ingress", server.ingress_url()])
            .args(["--admin", server.admin_url()])
            .arg("--user-dir")
            .arg(&user_dir)
            .env_remove("ZIDANE_WORKER_IDENTITY_KEYS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut process = WorkerProcess { child };
        let line = zidane_test_support::first_line(&mut process.child, WAIT)
            .unwrap_or_else(|| panic!("the archive's worker was not ready within {WAIT:?}"));
        assert!(
            line.starts_with("ready ") && line.contains(" ZidaneWorker_dist "),
            "the archive's worker said {line:?}"
        );
        process
    };

    let context = RestateContext::new(server.ingress_url(), ["dist"]).unwrap();
    let handle = context.create_handle().await.unwrap();
    let started = context
        .exec_background(
            handle,
            "echo from the archive; exit 3",
            BackgroundOptions::new("/unused"),
        )
        .await
        .unwrap();
    assert!(started.output_path.starts_with(&user_dir), "{started:?}");
    let exit = context
        .wait_background(handle, started.task_id, WAIT, CancellationToken::new())
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("the task's exit did not come within {WAIT:?}"));
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 3));
    let log = std::fs::read_to_string(&started.output_path).unwrap();
    assert!(log.contains("from the archive"), "{log}");
    context.destroy(handle).await.unwrap();

    // SIGTERM drains it: with no task running, it leaves by itself, with success, and
    // nothing of its group stays.
    kill(process.pid(), Signal::SIGTERM).unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = process.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the worker still runs {WAIT:?} after SIGTERM"
        );
        tokio::time::sleep(POLL).await;
    };
    assert!(status.success(), "the drained worker exited {status}");
    let group = process.child.id();
    zidane_test_support::poll_until(
        WAIT,
        POLL,
        &format!("the worker's process group {group} outlives it"),
        || zidane_test_support::live_processes_in_group(group).is_empty(),
    )
    .await;
}
