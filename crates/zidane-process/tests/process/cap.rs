//! The output cap: kept bytes stay, later bytes are counted and dropped, one marker
//! line is appended at settle, and the process keeps running.

use zidane_context::{BackgroundOptions, ExecutionContext, TaskLimits};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_past_the_cap_are_counted_dropped_and_marked() {
    let f = Fixture::new().await;
    let exits = Exits::snapshotting_logs();
    // 5000 `a`s without a newline, then a line; then proof that it kept running.
    let command = "head -c 5000 /dev/zero | tr '\\0' a; echo after; touch kept-running";
    let started = f
        .context
        .exec_background(f.handle, command, capped(exits.attach(f.options()), 1000))
        .await
        .unwrap();
    exits.wait_for(1).await;
    let (exit, log) = exits.with_logs().remove(0);
    assert_eq!(exit.exit_code, 0, "the cap must not kill the process");
    assert!(f.path("kept-running").exists());
    let expected = format!(
        "{}\n<output-truncated bytes-dropped=\"4006\"/>\n",
        "a".repeat(1000)
    );
    assert_eq!(String::from_utf8(log.unwrap()).unwrap(), expected);
    assert_eq!(read_log(&started.output_path), expected);
    let entry = &f.context.list_background(f.handle).await.unwrap()[0];
    assert_eq!(entry.bytes_written, 5006);
}

/// `options` with an output cap of `cap` bytes.
fn capped(options: BackgroundOptions, cap: u64) -> BackgroundOptions {
    options.limits(TaskLimits::new().max_output_bytes(cap))
}

/// The log of `command` run under an output cap of `cap` bytes, once it ended.
async fn capped_log(command: &str, cap: u64) -> String {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f
        .context
        .exec_background(f.handle, command, capped(exits.attach(f.options()), cap))
        .await
        .unwrap();
    exits.wait_for(1).await;
    read_log(&started.output_path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_on_a_line_boundary_adds_no_blank_line() {
    assert_eq!(
        capped_log("echo abc; echo def", 4).await,
        "abc\n<output-truncated bytes-dropped=\"4\"/>\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_under_the_cap_has_no_marker() {
    assert_eq!(capped_log("echo abc", 4).await, "abc\n");
}
