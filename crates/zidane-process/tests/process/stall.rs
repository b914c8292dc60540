//! The stall watchdog fires once per quiet period, re-arms on output, never kills.

use std::time::Duration;

use zidane_context::{BackgroundOptions, ExecutionContext, TaskLimits};

use crate::support::*;

const WINDOW: Duration = Duration::from_millis(100);

/// `options` with a stall window of [`WINDOW`] reporting to `stalls`.
fn watched(options: BackgroundOptions, stalls: &Stalls) -> BackgroundOptions {
    options
        .limits(TaskLimits::new().stall_timeout(WINDOW))
        .on_stall(stalls.callback())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_fires_once_per_quiet_period_and_rearms_on_output() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let stalls = Stalls::default();
    let command = format!(
        "echo a; {}; echo b; {}; echo c",
        wait_for_file("go1"),
        wait_for_file("go2")
    );
    let options = watched(exits.attach(f.options()), &stalls);
    let started = f
        .context
        .exec_background(f.handle, &command, options)
        .await
        .unwrap();

    // First quiet period: after "a\n" (2 bytes).
    stalls.wait_until("after a", |s| s.bytes_written == 2).await;
    // Quiet for several more windows: still one report for this period, not an alarm.
    tokio::time::sleep(3 * WINDOW).await;
    let after_a = |s: &zidane_context::StallInfo| s.bytes_written == 2;
    assert_eq!(stalls.all().iter().filter(|s| after_a(s)).count(), 1);

    // Fresh output re-arms it.
    f.release("go1");
    stalls.wait_until("after b", |s| s.bytes_written == 4).await;
    let stall = stalls
        .all()
        .into_iter()
        .find(|s| s.bytes_written == 4)
        .unwrap();
    assert_eq!(stall.task_id, started.task_id);
    assert_eq!(stall.output_path, started.output_path);
    assert_eq!(stall.command, command);
    assert!(stall.stalled_for >= WINDOW);

    // It never killed anything: the task ends on its own.
    f.release("go2");
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.exit_code, 0);
    assert_eq!(read_log(&started.output_path), "a\nb\nc\n");
    // A slow start may add a report before "a"; never more than one per period.
    let reports: Vec<u64> = stalls.all().iter().map(|s| s.bytes_written).collect();
    assert!(
        reports == [2, 4] || reports == [0, 2, 4],
        "unexpected stall reports {reports:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_watchdog_without_a_window() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let stalls = Stalls::default();
    let options = exits.attach(f.options()).on_stall(stalls.callback());
    f.context
        .exec_background(f.handle, "sleep 0.3", options)
        .await
        .unwrap();
    exits.wait_for(1).await;
    assert!(stalls.all().is_empty());
}

/// Starts `command` with a short stall window and returns its first stall's diagnosis.
async fn diagnosis_of(f: &Fixture, command: &str) -> (String, zidane_context::TaskId) {
    let stalls = Stalls::default();
    let options = watched(f.options(), &stalls);
    let started = f
        .context
        .exec_background(f.handle, command, options)
        .await
        .unwrap();
    stalls.wait_until(command, |_| true).await;
    let diagnosis = stalls.all()[0].diagnosis.clone();
    (
        diagnosis.unwrap_or_else(|| panic!("no diagnosis for {command:?}")),
        started.task_id,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_says_what_each_process_of_the_group_is_doing() {
    let f = Fixture::new().await;
    let fifo = f.path("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();

    // Opening a FIFO nobody writes to.
    let (text, id) = diagnosis_of(
        &f,
        &format!("echo 'Waiting for the pipe:'; exec cat {}", fifo.display()),
    )
    .await;
    assert!(text.contains("(pid "), "{text}");
    assert!(
        text.contains("is opening a FIFO that has no other end yet"),
        "{text}"
    );
    assert!(
        text.ends_with("Its last output looks like a prompt: \"Waiting for the pipe:\"."),
        "{text}"
    );
    f.kill(id).await;

    // A shell waiting for its child, the child sleeping.
    let (text, id) = diagnosis_of(&f, "sleep 30; echo never").await;
    assert!(text.contains("is waiting for a child process"), "{text}");
    assert!(text.contains("sleep (pid"), "{text}");
    assert!(text.contains("is sleeping"), "{text}");
    assert!(
        !text.contains("prompt"),
        "an empty log suggests no prompt: {text}"
    );
    f.kill(id).await;

    // A reader at the end of a pipe whose writer is silent.
    let (text, id) = diagnosis_of(&f, "sleep 30 | cat").await;
    assert!(
        text.contains("cat (pid") && text.contains("is waiting to read from its stdin, a pipe"),
        "{text}"
    );
    f.kill(id).await;

    // A process stopped by a signal.
    let (text, id) = diagnosis_of(&f, "kill -STOP $$").await;
    assert!(text.contains("is stopped by a signal"), "{text}");
    f.kill(id).await;
}
