//! `zidane` hardens itself: a process of the same user cannot read its environment
//! (where the host's keys are) nor get a core dump of it. Tried as that user would: a
//! `zidane mcp` run as `nobody`, read by another process running as `nobody`.

use std::process::Stdio;

use tokio::process::Command;

use crate::mcp_support::BIN;

/// The unprivileged user both processes run as (`setpriv` switches to it).
const NOBODY: &str = "65534";

fn as_nobody(command: &mut Command) -> &mut Command {
    command.args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_of_the_same_user_cannot_read_zidanes_environment() {
    // Switching users needs root, which CI has; anywhere else this says so and fails
    // rather than pass without trying.
    let me = std::fs::read_to_string("/proc/self/status").unwrap();
    assert!(
        me.lines()
            .any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(1) == Some("0")),
        "this test switches to the user nobody with setpriv, which needs root"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let secret = "zidane-hardening-secret-4711";
    let mut server = as_nobody(&mut Command::new("setpriv"))
        .args([BIN, "mcp", "--user-dir"])
        .arg(dir.path().join("user"))
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("MY_SERVICE_API_KEY", secret)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = server.id().unwrap();
    // setpriv execs zidane in place: wait until the pid is zidane, hardened.
    let limits = format!("/proc/{pid}/limits");
    let deadline = std::time::Instant::now() + crate::mcp_support::WAIT;
    loop {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        let core = std::fs::read_to_string(&limits).unwrap_or_default();
        // Both halves, in the order zidane sets them: no core dumps, then not dumpable
        // (the kernel then gives the process's /proc files to root).
        let no_core = core.lines().any(|line| {
            line.starts_with("Max core file size") && line.split_whitespace().nth(4) == Some("0")
        });
        let not_dumpable = std::fs::metadata(format!("/proc/{pid}/environ"))
            .is_ok_and(|meta| std::os::unix::fs::MetadataExt::uid(&meta) == 0);
        let hardened = no_core && not_dumpable;
        if exe.is_some_and(|exe| exe.ends_with("zidane")) && hardened {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "zidane never hardened itself: {core}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let read = as_nobody(&mut Command::new("setpriv"))
        .args(["cat", &format!("/proc/{pid}/environ")])
        .output()
        .await
        .unwrap();
    assert!(!read.status.success());
    assert!(!String::from_utf8_lossy(&read.stdout).contains(secret));
    assert!(
        String::from_utf8_lossy(&read.stderr).contains("Permission denied"),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    // The same reader gets a plain process's environment: the refusal is zidane's doing.
    let mut plain = as_nobody(&mut Command::new("setpriv"))
        .args(["sleep", "30"])
        .env("MY_SERVICE_API_KEY", secret)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let plain_pid = plain.id().unwrap();
    let deadline = std::time::Instant::now() + crate::mcp_support::WAIT;
    loop {
        let read = as_nobody(&mut Command::new("setpriv"))
            .args(["cat", &format!("/proc/{plain_pid}/environ")])
            .output()
            .await
            .unwrap();
        if String::from_utf8_lossy(&read.stdout).contains(secret) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the plain process never showed its environment"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    plain.kill().await.unwrap();
    drop(server.stdin.take());
    server.kill().await.unwrap();
}
