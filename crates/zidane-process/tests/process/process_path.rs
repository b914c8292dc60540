//! The two process paths — Linux's fast one and the portable one every Unix has — behave
//! the same: a task's output, cap, exit and a foreground command's result match.
//! (`cargo xtask ci` also runs this whole suite with `ZIDANE_PROCESS_PATH=portable`.)

use zidane_context::{ExecOptions, ExecutionContext, TaskLimits, TaskStatus};
use zidane_process::{ProcessContext, ProcessPath};

use crate::support::*;

/// What one path made of the same work.
#[derive(Debug, PartialEq)]
struct Outcome {
    log: Vec<u8>,
    status: TaskStatus,
    exit_code: i32,
    foreground: String,
}

async fn run_on(path: ProcessPath) -> Outcome {
    let f = Fixture::with(ProcessContext::builder().process_path(path)).await;
    assert_eq!(f.context.process_path(), path);
    let limits = TaskLimits::new().max_output_bytes(100_000);
    // More than a pipe holds, on stdout and stderr, past the cap; then a failure.
    let started = f
        .context
        .exec_background(
            f.handle,
            "head -c 300000 /dev/zero | tr '\\0' a; echo; echo err >&2; exit 3",
            f.options().limits(limits),
        )
        .await
        .unwrap();
    let exit = f.ended(started.task_id).await;
    let foreground = f
        .context
        .exec(f.handle, "echo one; echo two >&2", ExecOptions::new())
        .await
        .unwrap()
        .output;
    let outcome = Outcome {
        log: std::fs::read(&started.output_path).unwrap(),
        status: exit.status,
        exit_code: exit.exit_code,
        foreground,
    };
    f.context.destroy(f.handle).await.unwrap();
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fast_and_the_portable_path_give_the_same_task_and_command() {
    let fast = run_on(ProcessPath::Fast).await;
    let portable = run_on(ProcessPath::Portable).await;
    assert_eq!((fast.status, fast.exit_code), (TaskStatus::Exited, 3));
    let marker = b"\n<output-truncated bytes-dropped=\"200005\"/>\n";
    assert!(fast.log.starts_with(&[b'a'; 100_000]));
    assert_eq!(&fast.log[100_000..], marker);
    assert_eq!(fast.foreground, "one\ntwo\n");
    assert_eq!(portable, fast);
}

#[test]
fn the_path_is_named_portable_or_fast() {
    assert_eq!(ProcessPath::parse("portable"), Some(ProcessPath::Portable));
    assert_eq!(ProcessPath::parse(" FAST\n"), Some(ProcessPath::Fast));
    assert_eq!(ProcessPath::parse("slow"), None);
    let expected = if cfg!(target_os = "linux") {
        ProcessPath::Fast
    } else {
        ProcessPath::Portable
    };
    assert_eq!(ProcessPath::platform_default(), expected);
}
