//! Bad input is a specific `ContextError` before anything is spawned: no process, no
//! file, no task id taken.

use zidane_context::{
    BackgroundOptions, ContextError, ExecOptions, ExecutionContext, ExecutionHandle, ReadRange,
    TaskId,
};

use crate::support::*;

/// Nothing was started: no log, no task listed, and the next start is still `bash_1`.
async fn assert_nothing_started(f: &Fixture) {
    let logs = std::fs::read_dir(f.tasks_dir()).map_or(0, |dir| dir.count());
    assert_eq!(logs, 0, "a log was created");
    assert!(
        f.context
            .list_background(f.handle)
            .await
            .unwrap()
            .is_empty()
    );
    let exits = Exits::default();
    let started = f.start("true", &exits).await;
    assert_eq!(
        started.task_id.to_string(),
        "bash_1",
        "a refused start took an id"
    );
    exits.wait_for(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_commands_are_refused() {
    let f = Fixture::new().await;
    for command in ["", "   \n", "echo a\0b"] {
        let refused = f
            .context
            .exec_background(f.handle, command, f.options())
            .await;
        assert!(
            matches!(refused, Err(ContextError::InvalidCommand { .. })),
            "{command:?}: {refused:?}"
        );
        let refused = f.context.exec(f.handle, command, ExecOptions::new()).await;
        assert!(
            matches!(refused, Err(ContextError::InvalidCommand { .. })),
            "{command:?}: {refused:?}"
        );
    }
    let bad_env = f.options().env("A=B", "x");
    let refused = f.context.exec_background(f.handle, "true", bad_env).await;
    assert!(
        matches!(refused, Err(ContextError::InvalidCommand { .. })),
        "{refused:?}"
    );
    assert_nothing_started(&f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_non_directory_cwd_is_refused() {
    let f = Fixture::new().await;
    std::fs::write(f.path("a-file"), "").unwrap();
    for cwd in [f.path("missing"), f.path("a-file")] {
        let refused = f
            .context
            .exec_background(f.handle, "true", f.options().cwd(&cwd))
            .await;
        assert!(
            matches!(&refused, Err(ContextError::InvalidCwd { path, .. }) if *path == cwd),
            "{refused:?}"
        );
        let refused = f
            .context
            .exec(f.handle, "true", ExecOptions::new().cwd(&cwd))
            .await;
        assert!(
            matches!(refused, Err(ContextError::InvalidCwd { .. })),
            "{refused:?}"
        );
    }
    assert_nothing_started(&f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_directory_that_cannot_be_created_is_refused() {
    let f = Fixture::new().await;
    std::fs::write(f.path("a-file"), "").unwrap();
    for dir in [f.path("a-file/tasks"), f.path("a-file")] {
        let refused = f
            .context
            .exec_background(f.handle, "touch ran", BackgroundOptions::new(&dir))
            .await;
        assert!(
            matches!(&refused, Err(ContextError::OutputDir { path, .. }) if *path == dir),
            "{refused:?}"
        );
    }
    let refused = f
        .context
        .exec_background(f.handle, "touch ran", BackgroundOptions::default())
        .await;
    assert!(
        matches!(refused, Err(ContextError::OutputDir { .. })),
        "{refused:?}"
    );
    assert!(!f.path("ran").exists(), "the command ran");
    assert_nothing_started(&f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_destroyed_handles_are_refused_everywhere() {
    let f = Fixture::new().await;
    let unknown = ExecutionHandle::new(9999);
    let destroyed = f.context.create_handle().await.unwrap();
    f.context.destroy(destroyed).await.unwrap();
    let id = TaskId::from_number(1);
    let read = ReadRange::default();
    for handle in [unknown, destroyed] {
        let expect = |error: ContextError| match error {
            ContextError::UnknownHandle(h) => assert!(h == unknown && handle == unknown),
            ContextError::Destroyed(h) => assert!(h == destroyed && handle == destroyed),
            other => panic!("{other:?}"),
        };
        expect(
            f.context
                .exec_background(handle, "touch ran", f.options())
                .await
                .unwrap_err(),
        );
        expect(
            f.context
                .exec(handle, "touch ran", ExecOptions::new())
                .await
                .unwrap_err(),
        );
        expect(f.context.list_background(handle).await.unwrap_err());
        expect(f.context.kill_background(handle, id).await.unwrap_err());
        expect(
            f.context
                .wait_background(handle, id, WAIT, Default::default())
                .await
                .unwrap_err(),
        );
        expect(
            f.context
                .read_file(handle, &f.path("x"), read)
                .await
                .unwrap_err(),
        );
    }
    // Destroy is idempotent for a destroyed handle, an error for one never made.
    f.context.destroy(destroyed).await.unwrap();
    assert!(matches!(
        f.context.destroy(unknown).await,
        Err(ContextError::UnknownHandle(_))
    ));
    assert!(!f.path("ran").exists(), "the command ran");
    assert_nothing_started(&f).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_task_ids_never_reach_a_path_and_unknown_ones_are_none() {
    let f = Fixture::new().await;
    for forged in ["../../etc/passwd", "bash_1/..", "bash_01", "bash_"] {
        assert!(matches!(
            TaskId::parse(forged),
            Err(ContextError::InvalidTaskId { .. })
        ));
    }
    let unknown = TaskId::from_number(12);
    assert_eq!(
        f.context.kill_background(f.handle, unknown).await.unwrap(),
        None
    );
    assert_eq!(
        f.context
            .wait_background(f.handle, unknown, WAIT, Default::default())
            .await
            .unwrap(),
        None
    );
    assert_nothing_started(&f).await;
}

/// A command too long for the kernel fails with the cause first and only the start of
/// the command quoted, however long it is; nothing is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_too_long_for_the_kernel_is_an_error_that_quotes_only_its_start() {
    let f = Fixture::new().await;
    let command = format!("echo {}", "x".repeat(10 << 20));
    let refused = [
        f.context
            .exec_background(f.handle, &command, f.options())
            .await
            .unwrap_err(),
        f.context
            .exec(f.handle, &command, ExecOptions::new())
            .await
            .unwrap_err(),
    ];
    for error in refused {
        assert!(matches!(error, ContextError::Spawn { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.len() < 400, "{} bytes", message.len());
        assert!(
            message.starts_with(
                "Argument list too long (os error 7): could not start the command \"echo xxx"
            ),
            "{message}"
        );
        assert!(
            message.ends_with(&format!("…\" ({} bytes)", command.len())),
            "{message}"
        );
        assert!(format!("{error:?}").len() < 600);
    }
    assert_nothing_started(&f).await;
}
