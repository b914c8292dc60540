//! Logs are created new with mode 0600; a created output directory is 0700.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

use zidane_context::{ContextError, ExecutionContext};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_is_never_opened_over_an_existing_file() {
    let f = Fixture::new().await;
    std::fs::create_dir(f.tasks_dir()).unwrap();
    let taken = f
        .tasks_dir()
        .join(format!("bash_1.{}.log", f.context.context_timestamp()));
    std::fs::write(&taken, "precious").unwrap();
    let refused = f
        .context
        .exec_background(f.handle, "echo clobber", f.options())
        .await;
    assert!(
        matches!(&refused, Err(ContextError::Io { path: Some(p), .. }) if *p == taken),
        "{refused:?}"
    );
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "precious");
    assert!(
        f.context
            .list_background(f.handle)
            .await
            .unwrap()
            .is_empty()
    );
}
