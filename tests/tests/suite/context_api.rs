//! The context crate's public API, used as a layer above it would.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zidane_context::{
    BackgroundOptions, CancellationToken, ContextError, DetachedTasks, ExecutionContext,
    MockContext, TaskId, TaskStatus,
};

#[tokio::test]
async fn a_layer_above_drives_a_task_through_dyn_context() {
    let mock = Arc::new(MockContext::new());
    let context: Arc<dyn ExecutionContext> = mock.clone();
    assert_eq!(
        context.capabilities().detached_tasks,
        DetachedTasks::ProcessLifetime
    );

    let handle = context.create_handle().await.unwrap();
    let exits = Arc::new(Mutex::new(Vec::new()));
    let sink = exits.clone();
    let started = context
        .exec_background(
            handle,
            "cargo build",
            BackgroundOptions::new("/tasks").on_exit(move |exit| sink.lock().unwrap().push(exit)),
        )
        .await
        .unwrap();
    assert_eq!(started.task_id, TaskId::parse("bash_1").unwrap());

    let listed = context.list_background(handle).await.unwrap();
    assert_eq!(listed[0].status(), TaskStatus::Running);

    mock.finish(started.task_id, 0);
    let waited = context
        .wait_background(
            handle,
            started.task_id,
            Duration::from_secs(1),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(waited.exit_code, 0);
    assert_eq!(exits.lock().unwrap().len(), 1);
    assert_eq!(exits.lock().unwrap()[0], waited);
    let json = serde_json::to_value(&waited).unwrap();
    assert_eq!(json["task_id"], "bash_1");
    assert_eq!(json["status"], "exited");

    context.destroy(handle).await.unwrap();
    let err = context.list_background(handle).await.unwrap_err();
    assert!(matches!(err, ContextError::Destroyed(_)));
}

#[test]
fn forged_task_ids_never_parse() {
    for forged in ["../etc", "bash_1/../../x", "bash_", ""] {
        assert!(matches!(
            TaskId::parse(forged),
            Err(ContextError::InvalidTaskId { .. })
        ));
    }
}
