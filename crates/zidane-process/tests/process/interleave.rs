//! stdout and stderr share one pipe: the log holds them in write order, byte for byte.

use zidane_context::ExecutionContext;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdout_and_stderr_interleave_in_write_order() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let lines = 500;
    let command =
        format!("i=0; while [ $i -lt {lines} ]; do echo out$i; echo err$i >&2; i=$((i+1)); done");
    let started = f.start(&command, &exits).await;
    let exit = &exits.wait_for(1).await[0];
    assert_eq!(exit.exit_code, 0);
    let expected: String = (0..lines).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(read_log(&started.output_path), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_utf8_output_reaches_the_log_byte_for_byte() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f
        .start(r"printf '\377\376a\000b\n'; printf '\300' >&2", &exits)
        .await;
    exits.wait_for(1).await;
    assert_eq!(
        std::fs::read(&started.output_path).unwrap(),
        b"\xff\xfea\0b\n\xc0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_task_settles_while_a_long_one_runs() {
    // If the long task had inherited the short one's pipe, the short one would never
    // see end-of-file: every descriptor we create is close-on-exec.
    let f = Fixture::new().await;
    let exits = Exits::default();
    let long = f.start(&wait_for_file("go"), &exits).await;
    let short = f.start("echo quick", &exits).await;
    let exit = f
        .context
        .wait_background(f.handle, short.task_id, WAIT, Default::default())
        .await
        .unwrap()
        .expect("the short task settles");
    assert_eq!(exit.exit_code, 0);
    assert!(alive(long.pid), "the long task still runs");
    f.release("go");
    exits.wait_for(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_run_in_their_cwd_with_their_env_and_no_stdin() {
    let f = Fixture::new().await;
    std::fs::create_dir(f.path("work")).unwrap();
    let exits = Exits::default();
    let options = exits
        .attach(f.options())
        .cwd(f.path("work"))
        .env("ZIDANE_TEST_VAR", "it is set");
    let started = f
        .context
        .exec_background(
            f.handle,
            "pwd; echo \"$ZIDANE_TEST_VAR\"; cat; echo end",
            options,
        )
        .await
        .unwrap();
    exits.wait_for(1).await;
    let work = f.path("work").canonicalize().unwrap();
    assert_eq!(
        read_log(&started.output_path),
        format!("{}\nit is set\nend\n", work.display())
    );
}
