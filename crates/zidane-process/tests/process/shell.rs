//! The shell commands run under: bash (non-login, no startup files) where it exists,
//! else `/bin/sh`, or whatever the builder names — and the context says which.

use std::path::Path;

use zidane_context::{BackgroundOptions, ExecOptions, ExecutionContext};
use zidane_process::{BASH_PATH, ProcessContext, SH_PATH, Shell};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_under_bash_by_default_and_the_context_says_so() {
    if !Path::new(BASH_PATH).exists() {
        eprintln!("skipped: no {BASH_PATH} on this machine");
        return;
    }
    let f = Fixture::new().await;
    assert_eq!(f.context.shell(), &Shell::new(BASH_PATH));
    assert_eq!(
        ExecutionContext::shell(&f.context).as_deref(),
        Some(BASH_PATH)
    );
    let out = f
        .context
        .exec(
            f.handle,
            "[[ 1 == 1 ]] && echo {1..3}; echo $0",
            ExecOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.output, format!("1 2 3\n{BASH_PATH}\n"));

    // A background task too.
    let started = f
        .context
        .exec_background(
            f.handle,
            "arr=(a b); echo ${arr[1]}",
            BackgroundOptions::new(f.dir.path()),
        )
        .await
        .unwrap();
    f.ended(started.task_id).await;
    assert_eq!(
        std::fs::read_to_string(&started.output_path).unwrap(),
        "b\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_sources_no_startup_file_not_even_bash_env() {
    if !Path::new(BASH_PATH).exists() {
        eprintln!("skipped: no {BASH_PATH} on this machine");
        return;
    }
    let f = Fixture::new().await;
    let rc = f.dir.path().join("rc");
    std::fs::write(&rc, "echo sourced\n").unwrap();
    let out = f
        .context
        .exec(
            f.handle,
            "echo \"[$BASH_ENV]\"; shopt -q login_shell && echo login; echo done",
            ExecOptions::new().env("BASH_ENV", rc.display().to_string()),
        )
        .await
        .unwrap();
    assert_eq!(out.output, "[]\ndone\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_chooses_the_shell() {
    let f = Fixture::with(ProcessContext::builder().shell(Shell::new(SH_PATH))).await;
    assert_eq!(
        ExecutionContext::shell(&f.context).as_deref(),
        Some(SH_PATH)
    );
    let out = f
        .context
        .exec(f.handle, "echo $0", ExecOptions::new())
        .await
        .unwrap();
    assert_eq!(out.output, format!("{SH_PATH}\n"));
}
