//! `reassign_background_tasks` moves running tasks and their exit callback to another
//! handle; ended tasks stay where they were.

use zidane_context::{ContextError, ExecutionContext, ExecutionHandle, TaskStatus};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_tasks_move_with_a_new_callback() {
    let f = Fixture::new().await;
    let child = f.context.create_handle().await.unwrap();
    let parent = f.handle;
    let child_exits = Exits::default();
    let parent_exits = Exits::default();

    let ended = f
        .context
        .exec_background(child, "true", child_exits.attach(f.options()))
        .await
        .unwrap();
    child_exits.wait_for(1).await;
    let running = f
        .context
        .exec_background(child, &wait_for_file("go"), child_exits.attach(f.options()))
        .await
        .unwrap();

    let moved = f
        .context
        .reassign_background_tasks(
            child,
            parent,
            Some(std::sync::Arc::new(parent_exits.callback())),
        )
        .await
        .unwrap();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].task_id, running.task_id);
    assert_eq!(moved[0].status(), TaskStatus::Running);

    let ids = |entries: Vec<zidane_context::TaskEntry>| {
        entries.into_iter().map(|e| e.task_id).collect::<Vec<_>>()
    };
    assert_eq!(
        ids(f.context.list_background(child).await.unwrap()),
        [ended.task_id]
    );
    assert_eq!(
        ids(f.context.list_background(parent).await.unwrap()),
        [running.task_id]
    );

    // The child's handle no longer owns it: destroying it leaves the task running.
    f.context.destroy(child).await.unwrap();
    assert!(alive(running.pid));
    assert_eq!(
        f.context
            .kill_background(child, running.task_id)
            .await
            .unwrap_err()
            .to_string(),
        ContextError::Destroyed(child).to_string()
    );

    f.release("go");
    let exit = parent_exits.wait_for(1).await.remove(0);
    assert_eq!(
        (exit.task_id, exit.status),
        (running.task_id, TaskStatus::Exited)
    );
    assert_eq!(child_exits.all().len(), 1, "the old callback must not fire");
    assert_eq!(
        f.context
            .wait_background(parent, running.task_id, WAIT, Default::default())
            .await
            .unwrap(),
        Some(exit)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reassign_needs_two_live_handles() {
    let f = Fixture::new().await;
    let gone = f.context.create_handle().await.unwrap();
    f.context.destroy(gone).await.unwrap();
    let unknown = ExecutionHandle::new(4242);
    assert!(matches!(
        f.context.reassign_background_tasks(f.handle, gone, None).await,
        Err(ContextError::Destroyed(h)) if h == gone
    ));
    assert!(matches!(
        f.context.reassign_background_tasks(unknown, f.handle, None).await,
        Err(ContextError::UnknownHandle(h)) if h == unknown
    ));
}
