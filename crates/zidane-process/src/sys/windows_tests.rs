//! The Windows calls against real processes: `cmd.exe` tasks started suspended in a Job,
//! resumed, watched and ended. Each test creates its Job first, so that whatever fails,
//! the Job's drop (kill-on-close) ends every process the test started.

use std::io::{BufRead, BufReader, Read};
use std::os::windows::io::AsHandle;
use std::os::windows::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use std::io;

use windows_sys::Win32::System::Threading::CREATE_NO_WINDOW;

use super::windows::*;

/// How long a test waits for what it expects before it fails: a bound, not a pause.
const PATIENCE: Duration = Duration::from_secs(30);
/// Between two looks at what a test waits for.
const POLL: Duration = Duration::from_millis(20);
/// CPU time a busy loop must reach for `cpu_time` to count as growing.
const BUSY_CPU: Duration = Duration::from_millis(200);
/// A command that waits without end (for the length of any test) and can be found by
/// its executable's name.
const WAITER: &str = "ping -n 100000 127.0.0.1";
/// The executable of `WAITER`.
const WAITER_EXE: &str = "ping.exe";

/// Whether these tests run under Wine rather than Windows: its registry has a key of
/// its own.
fn running_under_wine() -> bool {
    Command::new("reg.exe")
        .args(["query", r"HKLM\Software\Wine"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `cmd.exe /d /s /c "<script>"` with a task's creation flags, so suspended.
fn task_command(script: &str) -> Command {
    let mut command = Command::new("cmd.exe");
    command
        .args(["/d", "/s", "/c"])
        .raw_arg(format!("\"{script}\""))
        .creation_flags(task_creation_flags())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Spawns `command` (suspended), puts it in `job` and resumes it.
fn start_in_job(job: &Job, command: &mut Command) -> Child {
    let mut child = command.spawn().expect("spawn cmd.exe");
    if let Err(error) = job.assign(child.as_handle()) {
        // Not in the job, so the job's drop would not end it.
        let _ = child.kill();
        panic!("assign to the job: {error}");
    }
    resume_threads(child.id()).expect("resume the task");
    child
}

/// Waits until `done` holds, failing the test after `PATIENCE`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "waited {PATIENCE:?} for {what}");
        thread::sleep(POLL);
    }
}

/// Waits for `child` to exit, failing the test after `PATIENCE`.
fn wait_for_exit(child: &mut Child) -> ExitStatus {
    let mut status = None;
    wait_until("the leader to exit", || {
        status = child.try_wait().expect("try_wait");
        status.is_some()
    });
    status.expect("an exit status")
}

/// Ends every process of `job` and waits for its leader `child`.
fn end(job: &Job, child: &mut Child) {
    job.terminate(1).unwrap();
    wait_for_exit(child);
}

/// The processes of `job` now, as the process table names them.
fn job_processes(job: &Job) -> Vec<ProcessEntry> {
    let ids = job.process_ids().expect("the job's pids");
    describe_processes(&ids).expect("describe the job's processes")
}

/// The waiters (`WAITER_EXE`) among `processes`.
fn waiters(processes: &[ProcessEntry]) -> Vec<ProcessEntry> {
    processes
        .iter()
        .filter(|process| process.exe.eq_ignore_ascii_case(WAITER_EXE))
        .cloned()
        .collect()
}

/// Whether any of `pids` still names a waiter (a pid reused by another program does not
/// count).
fn any_waiter_left(pids: &[u32]) -> bool {
    !waiters(&describe_processes(pids).expect("describe processes")).is_empty()
}

/// Starts a task whose leader waits while a `start /b` background waiter runs beside it,
/// and returns it once both waiters run.
fn start_tree(job: &Job) -> (Child, Vec<u32>) {
    let script = format!("start /b {WAITER} >nul & {WAITER} >nul");
    let child = start_in_job(job, &mut task_command(&script));
    let mut pids = Vec::new();
    wait_until("both waiters to run", || {
        pids = waiters(&job_processes(job))
            .iter()
            .map(|process| process.pid)
            .collect();
        pids.len() == 2
    });
    (child, pids)
}

#[test]
fn a_resumed_task_runs_and_its_output_arrives() {
    let job = Job::new().unwrap();
    let mut command = task_command("echo resumed");
    command.stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    job.assign(child.as_handle()).unwrap();
    // Suspended, it cannot have exited, however long it has been.
    assert!(child.try_wait().unwrap().is_none());
    let mut stdout = child.stdout.take().unwrap();
    let (sender, output) = mpsc::channel();
    thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        let _ = sender.send(text);
    });
    resume_threads(child.id()).unwrap();
    let text = output.recv_timeout(PATIENCE).expect("the task's output");
    assert_eq!(text.trim(), "resumed");
    assert!(wait_for_exit(&mut child).success());
}

#[test]
fn terminate_ends_the_whole_tree_including_a_start_b_grandchild() {
    let job = Job::new().unwrap();
    let (mut child, waiter_pids) = start_tree(&job);
    job.terminate(7).unwrap();
    assert_eq!(wait_for_exit(&mut child).code(), Some(7));
    wait_until("the job to empty", || job.process_ids().unwrap().is_empty());
    assert!(!any_waiter_left(&waiter_pids));
}

#[test]
fn dropping_the_job_ends_the_whole_tree() {
    let job = Job::new().unwrap();
    let (mut child, waiter_pids) = start_tree(&job);
    drop(job);
    wait_for_exit(&mut child);
    wait_until("the waiters to be gone", || !any_waiter_left(&waiter_pids));
}

#[test]
fn process_ids_lists_the_leader_and_a_grandchild() {
    let job = Job::new().unwrap();
    // The leader starts a second shell, which starts the waiter: a grandchild.
    let script = format!("cmd /d /c {WAITER} >nul");
    let mut child = start_in_job(&job, &mut task_command(&script));
    let leader = child.id();
    let mut processes = Vec::new();
    wait_until("the grandchild to run", || {
        processes = job_processes(&job);
        !waiters(&processes).is_empty()
    });
    let ids: Vec<u32> = processes.iter().map(|process| process.pid).collect();
    assert!(
        ids.contains(&leader),
        "leader {leader} not in {processes:?}"
    );
    // Not any child: a console host may be one too.
    let shell = processes
        .iter()
        .find(|process| {
            process.pid != leader
                && process.parent_pid == leader
                && process.exe.eq_ignore_ascii_case("cmd.exe")
        })
        .unwrap_or_else(|| panic!("no second shell in {processes:?}"));
    let grandchild = &waiters(&processes)[0];
    assert_eq!(grandchild.parent_pid, shell.pid, "{processes:?}");
    end(&job, &mut child);
}

#[test]
fn cpu_time_grows_with_a_busy_loop() {
    let job = Job::new().unwrap();
    let mut child = start_in_job(
        &job,
        &mut task_command("for /l %i in (1,1,2000000000) do @rem"),
    );
    if running_under_wine() {
        // Wine (8) leaves a job's times at zero: only the query itself can be checked.
        job.cpu_time().unwrap();
        end(&job, &mut child);
        return;
    }
    let mut last = job.cpu_time().unwrap();
    wait_until("the busy loop's CPU time", || {
        let now = job.cpu_time().unwrap();
        assert!(now >= last, "CPU time went back from {last:?} to {now:?}");
        last = now;
        now >= BUSY_CPU
    });
    end(&job, &mut child);
    // Ended processes still count.
    assert!(job.cpu_time().unwrap() >= last);
}

#[test]
fn describe_processes_names_the_leader_and_its_parent() {
    let job = Job::new().unwrap();
    let mut child = start_in_job(&job, &mut task_command(WAITER));
    let described = describe_processes(&[u32::MAX, child.id()]).unwrap();
    assert_eq!(described.len(), 1, "{described:?}");
    assert_eq!(described[0].pid, child.id());
    assert_eq!(described[0].parent_pid, std::process::id());
    assert!(
        described[0].exe.eq_ignore_ascii_case("cmd.exe"),
        "{described:?}"
    );
    end(&job, &mut child);
}

#[test]
fn resuming_a_process_that_does_not_exist_fails() {
    // Pids are multiples of 4: this one never names a process.
    let error = resume_threads(u32::MAX).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::NotFound);
}

#[test]
fn ctrl_break_stops_a_task_that_shares_our_console() {
    let job = Job::new().unwrap();
    // `find` waits on its stdin, kept open, and exits on CTRL_BREAK (`ping` would only
    // print its statistics). Named by path: another `find` may come first on the PATH.
    let mut command = task_command(r"%SystemRoot%\System32\find.exe x");
    command.stdin(Stdio::piped());
    let mut child = start_in_job(&job, &mut command);
    wait_until("find to run", || {
        job_processes(&job)
            .iter()
            .any(|process| process.exe.eq_ignore_ascii_case("find.exe"))
    });
    let sent = send_ctrl_break(child.as_handle());
    if !has_console() {
        assert!(
            sent.is_err(),
            "without a console, CTRL_BREAK cannot be sent"
        );
        assert_ne!(task_creation_flags() & CREATE_NO_WINDOW, 0);
        return;
    }
    if sent.is_err() && running_under_wine() {
        // Wine (8) refuses CTRL_BREAK to a group even on a console it shares.
        return;
    }
    sent.unwrap();
    let status = wait_for_exit(&mut child);
    assert!(!status.success(), "{status:?}");
}

/// Set in the environment of a helper host: `host_of_a_tree` then plays the host.
const HOST_ROLE: &str = "ZIDANE_WINSYS_TEST_HOST";
/// Comes before the helper host's report of its waiters' pids.
const PIDS_LINE: &str = "waiter pids:";

/// A helper host ends when its owner drops it, even when a test fails.
struct HelperHost(Child);

impl Drop for HelperHost {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn killing_the_host_ends_the_whole_tree() {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "host_of_a_tree",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HOST_ROLE, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut host = HelperHost(command.spawn().unwrap());
    let stdout = host.0.stdout.take().unwrap();
    let (sender, pids_line) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // The test harness may have begun the line with the test's name.
            if let Some(at) = line.find(PIDS_LINE) {
                let _ = sender.send(line[at + PIDS_LINE.len()..].trim().to_owned());
                break;
            }
        }
    });
    let line = pids_line
        .recv_timeout(PATIENCE)
        .expect("the helper host's pids");
    let pids: Vec<u32> = line
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{line}");
    assert!(any_waiter_left(&pids));
    // Outright, as a crash or `taskkill /f` would: no code of the host runs.
    host.0.kill().unwrap();
    wait_until("the host's waiters to be gone", || !any_waiter_left(&pids));
}

/// The helper host of `killing_the_host_ends_the_whole_tree`: starts a tree in a Job,
/// reports its waiters' pids, and waits to be killed.
#[test]
#[ignore = "run by killing_the_host_ends_the_whole_tree"]
fn host_of_a_tree() {
    if std::env::var_os(HOST_ROLE).is_none() {
        return;
    }
    let job = Job::new().unwrap();
    let (mut child, pids) = start_tree(&job);
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    println!("{PIDS_LINE} {}", pids.join(" "));
    // Killed before the waiters end; if not, the Job's drop ends them.
    let _ = child.wait();
}
