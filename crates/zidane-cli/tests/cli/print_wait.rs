//! `zidane --demo -p … --wait` stays until the task ended and the model was told, then
//! exits 0 with nothing of the session left running.

use std::time::Duration;

use crate::support::{owned_processes, wait_bounded, zidane};

#[test]
fn print_mode_waits_for_the_task_and_the_woken_reply() {
    let dir = tempfile::tempdir().unwrap();
    let child = zidane(dir.path(), &["--demo", "-p", "build it", "--wait"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = wait_bounded(child, Duration::from_secs(60));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = stdout.find("Started bash_1").expect(&stdout);
    let banner = stdout.find("⌁ bash_1 exited (0)").expect(&stdout);
    let woken = stdout.find("model › bash_1 ended:").expect(&stdout);
    assert!(started < banner && banner < woken, "{stdout}");
    assert!(!stdout.contains("<task-id>"), "never raw XML: {stdout}");
    assert!(!stdout.contains('\x1b'), "plain text into a pipe");
    assert_eq!(owned_processes(pid), Vec::<u32>::new());
}

#[test]
fn print_mode_without_wait_returns_after_the_turn_and_kills_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let child = zidane(dir.path(), &["--demo", "-p", "start the dev server"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = wait_bounded(child, Duration::from_secs(60));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("Started bash_1"), "{stdout}");
    assert!(!stdout.contains("⌁ bash_1"), "it did not wait: {stdout}");
    assert_eq!(
        owned_processes(pid),
        Vec::<u32>::new(),
        "destroy killed the server"
    );
}

#[test]
fn a_signal_ends_print_mode_with_nothing_left_running() {
    use std::io::{BufRead as _, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut child = zidane(
        dir.path(),
        &["--demo", "-p", "start the dev server", "--wait"],
    )
    .spawn()
    .unwrap();
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // The server started (the line is printed after the task exists).
    assert!(lines.any(|line| line.unwrap().contains("Started bash_1")));
    // Its processes show in the process table a moment after the line, on a busy machine.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while owned_processes(pid).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the server never ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(owned_processes(pid), Vec::<u32>::new());
}
