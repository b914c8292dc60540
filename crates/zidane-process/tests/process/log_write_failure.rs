//! A log that could not be written says so: on a full file system the rest of the
//! output is drained and counted, the exit carries the count and the OS error, and a
//! marker line is appended where the file still takes it.
//!
//! The full file system is a real one: a 2 MiB tmpfs, mounted for the test. That
//! needs root; elsewhere the test says why it skips.

use std::path::PathBuf;

use zidane_context::{ExecutionContext, TaskStatus};
use zidane_test_support::Tmpfs;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_reported_in_the_exit_and_marked_in_the_log() {
    let Some(tmpfs) = Tmpfs::mount("2m") else {
        return;
    };
    // Space the test frees once the disk is full, so the marker line fits.
    let ballast = tmpfs.path().join("ballast");
    std::fs::write(&ballast, vec![0u8; 256 << 10]).unwrap();
    let tasks: PathBuf = tmpfs.path().join("tasks");

    let f = Fixture::new().await;
    let exits = Exits::default();
    let total: u64 = 10_000_000;
    let command = format!(
        "yes 0123456789abcdef | head -c {total}; touch written; {}",
        wait_for_file("go")
    );
    let started = f
        .context
        .exec_background(
            f.handle,
            &command,
            exits.attach(zidane_context::BackgroundOptions::new(&tasks)),
        )
        .await
        .unwrap();
    eventually("the task wrote everything", || f.path("written").exists()).await;
    // Every byte left the pipe (the disk filled long before).
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.context.list_background(f.handle).await.unwrap()[0].bytes_written < total {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the output was not drained"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    std::fs::remove_file(&ballast).unwrap();
    f.release("go");

    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    let failure = exit
        .log_write_failure
        .clone()
        .expect("the failure is reported");
    assert_eq!(failure.error, "No space left on device (os error 28)");
    let log = std::fs::read(&started.output_path).unwrap();
    let marker = format!(
        "<log-write-failed bytes-dropped=\"{}\" error=\"No space left on device (os error 28)\"/>\n",
        failure.bytes_dropped
    );
    // What the disk took is the start of the output, to the byte; the marker gets a
    // line of its own.
    assert!(failure.bytes_dropped > total / 2, "{failure:?}");
    let kept = usize::try_from(total - failure.bytes_dropped).unwrap();
    let output = "0123456789abcdef\n".repeat(usize::try_from(total).unwrap() / 17 + 1);
    let separator = if output[..kept].ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let expected = format!("{}{separator}{marker}", &output[..kept]);
    assert!(
        String::from_utf8(log).unwrap() == expected,
        "the log is not the kept output and the marker"
    );
    let entry = &f.context.list_background(f.handle).await.unwrap()[0];
    assert_eq!(entry.log_write_failure(), Some(&failure));
    assert_eq!(entry.bytes_written, total);
}
