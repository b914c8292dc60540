//! Commands in the macOS sandbox (`sandbox-exec` with the generated Seatbelt profile):
//! the workspace writable, the rest not, a hidden path unreadable, a held path not
//! writable even where it does not exist yet. Run by the `macos` job of the CI
//! workflow; type-checked everywhere else.
#![cfg(target_os = "macos")]

use zidane_context::{ExecOptions, ExecutionContext, SandboxPolicy, SandboxStatus};
use zidane_process::ProcessContext;

use crate::support::*;

fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

async fn run(f: &Fixture, command: &str, cwd: &std::path::Path) -> (i32, String) {
    let output = f
        .context
        .exec(f.handle, command, ExecOptions::new().cwd(cwd))
        .await
        .unwrap();
    (output.exit_code, output.output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seatbelt_holds_the_plan() {
    let workspace = outside();
    let elsewhere = outside();
    let secret = elsewhere.path().join("secret");
    std::fs::write(&secret, "PRIVATE").unwrap();
    let f = Fixture::with(
        ProcessContext::builder()
            .sandbox(SandboxPolicy::workspace_write(workspace.path()).deny_read(&secret)),
    )
    .await;
    assert_eq!(f.context.sandbox().status, SandboxStatus::Enforced);
    let (code, _) = run(&f, "echo x > inside.txt", workspace.path()).await;
    assert_eq!(code, 0);
    assert!(workspace.path().join("inside.txt").exists());
    let target = elsewhere.path().join("x");
    let (code, _) = run(
        &f,
        &format!("echo x > '{}'", target.display()),
        workspace.path(),
    )
    .await;
    assert_ne!(code, 0);
    assert!(!target.exists());
    let (_, output) = run(&f, &format!("cat '{}'", secret.display()), workspace.path()).await;
    assert!(!output.contains("PRIVATE"), "{output}");
    let (code, _) = run(&f, "echo '{}' > .mcp.json", workspace.path()).await;
    assert_ne!(code, 0);
    assert!(!workspace.path().join(".mcp.json").exists());
    let host = std::process::id();
    let (code, _) = run(&f, &format!("kill -0 {host}"), workspace.path()).await;
    assert_ne!(code, 0, "a sandboxed command signalled its host");
}
