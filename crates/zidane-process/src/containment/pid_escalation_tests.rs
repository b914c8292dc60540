use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::*;

fn spawn_sh(script: &str) -> Child {
    Command::new("/bin/sh")
        .args(["-c", script])
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

fn reference(child: &Child) -> ProcessRef {
    let pid = child.id();
    ProcessRef {
        pid,
        start_time: procfs::start_time(pid).unwrap(),
    }
}

#[test]
fn term_ends_a_plain_process_well_within_the_grace() {
    let mut child = spawn_sh("exec sleep 1000");
    let target = reference(&child);
    let started = std::time::Instant::now();
    let survivors = end_processes(&[target], Duration::from_secs(30));
    assert!(survivors.is_empty());
    assert!(started.elapsed() < Duration::from_secs(10));
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(15)
    );
}

#[test]
fn a_process_that_ignores_term_gets_kill_after_the_grace() {
    // An ignored signal stays ignored across exec, so `sleep` itself ignores TERM.
    let mut child = spawn_sh("trap '' TERM; exec sleep 1000");
    let target = reference(&child);
    // Let the shell reach `exec`: until then it is the shell, with another cmdline.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while procfs::command_line(target.pid).as_deref() != Some("sleep 1000") {
        assert!(std::time::Instant::now() < deadline);
        std::thread::yield_now();
    }
    let grace = Duration::from_millis(200);
    let started = std::time::Instant::now();
    let survivors = end_processes(&[target], grace);
    let took = started.elapsed();
    assert!(survivors.is_empty());
    assert!(took >= grace, "KILL came before the grace: {took:?}");
    assert!(
        took < grace + KILL_WAIT + Duration::from_secs(5),
        "{took:?}"
    );
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
}

#[test]
fn a_recycled_pid_is_never_signalled() {
    let mut child = spawn_sh("exec sleep 1000");
    let real = reference(&child);
    let impostor = ProcessRef {
        pid: real.pid,
        start_time: real.start_time + 1,
    };
    let survivors = end_processes(&[impostor], Duration::from_millis(50));
    assert!(survivors.is_empty(), "the impostor counts as gone");
    assert_eq!(
        child.try_wait().unwrap(),
        None,
        "the live process was signalled"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn init_and_our_own_group_are_never_targets() {
    // pid 0 would be our own process group; pid 1 is init.
    let zero = ProcessRef {
        pid: 0,
        start_time: 0,
    };
    let init = ProcessRef {
        pid: 1,
        start_time: procfs::start_time(1).unwrap_or(0),
    };
    signal_each(&[zero, init], Signal::SIGTERM);
    let survivors = wait_gone(&[init], Instant::now());
    assert_eq!(survivors, vec![init]);
}
