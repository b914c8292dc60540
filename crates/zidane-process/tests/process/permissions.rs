//! Logs are created new with mode 0600, never over a file we did not make; a created
//! output directory is 0700.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

use zidane_context::{ContextError, ExecutionContext, TaskId};
use zidane_process::parse_task_log_filename;

use crate::support::*;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_are_0600_and_created_directories_0700() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let nested = f.path("a/b/tasks");
    let started = f
        .context
        .exec_background(
            f.handle,
            "echo hi",
            exits.attach(zidane_context::BackgroundOptions::new(&nested)),
        )
        .await
        .unwrap();
    exits.wait_for(1).await;
    assert_eq!(mode(&started.output_path), 0o600);
    for dir in ["a", "a/b", "a/b/tasks"] {
        assert_eq!(mode(&f.path(dir)), 0o700, "{dir}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_output_directory_keeps_its_mode() {
    let f = Fixture::new().await;
    std::fs::DirBuilder::new()
        .mode(0o755)
        .create(f.tasks_dir())
        .unwrap();
    std::fs::set_permissions(f.tasks_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exits = Exits::default();
    f.start("true", &exits).await;
    exits.wait_for(1).await;
    assert_eq!(mode(&f.tasks_dir()), 0o755);
}

/// A name taken by a file we did not make (a planted symlink, a plain file) is never
/// opened or written: the task gets the next free name, and later starts go on too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_log_name_is_never_opened_and_the_next_name_is_used() {
    let f = Fixture::new().await;
    std::fs::create_dir(f.tasks_dir()).unwrap();
    let stamp = f.context.context_timestamp().to_owned();
    let name = |n: u32| f.tasks_dir().join(format!("bash_{n}.{stamp}.log"));
    let target = f.path("precious");
    std::fs::write(&target, "precious").unwrap();
    std::os::unix::fs::symlink(&target, name(1)).unwrap();
    std::fs::write(name(3), "mine").unwrap();

    let exits = Exits::default();
    let mut logs = Vec::new();
    for n in 1..=4u64 {
        let started = f.start("echo written", &exits).await;
        assert_eq!(started.task_id, TaskId::from_number(n));
        logs.push(started.output_path);
    }
    exits.wait_for(4).await;
    let suffixed = |n: u32| f.tasks_dir().join(format!("bash_{n}.{stamp}.1.log"));
    assert_eq!(logs, [suffixed(1), name(2), suffixed(3), name(4)]);
    for log in &logs {
        assert_eq!(read_log(log), "written\n");
        let file_name = log.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            parse_task_log_filename(file_name).map(|(_, ts)| ts),
            Some(stamp.clone())
        );
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(name(1)).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(name(3)).unwrap(), "mine");
}

/// When every name a task may take is taken, the start fails on the last one tried,
/// and nothing is opened or started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_whose_every_log_name_is_taken_fails_cleanly() {
    let f = Fixture::new().await;
    std::fs::create_dir(f.tasks_dir()).unwrap();
    let stamp = f.context.context_timestamp().to_owned();
    let mut taken = vec![f.tasks_dir().join(format!("bash_1.{stamp}.log"))];
    taken.extend((1..8).map(|n| f.tasks_dir().join(format!("bash_1.{stamp}.{n}.log"))));
    for path in &taken {
        std::fs::write(path, "precious").unwrap();
    }
    let refused = f
        .context
        .exec_background(f.handle, "touch ran", f.options())
        .await;
    let last = taken.last().unwrap();
    assert!(
        matches!(&refused, Err(ContextError::Io { path: Some(p), .. }) if p == last),
        "{refused:?}"
    );
    for path in &taken {
        assert_eq!(std::fs::read_to_string(path).unwrap(), "precious");
    }
    assert!(!f.path("ran").exists());
    assert!(
        f.context
            .list_background(f.handle)
            .await
            .unwrap()
            .is_empty()
    );
}
