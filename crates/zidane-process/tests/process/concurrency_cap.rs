//! At most `max_background_tasks` tasks run at once; starting works again after one
//! settles.

use zidane_context::{ContextError, ExecutionContext};
use zidane_process::{DEFAULT_MAX_BACKGROUND_TASKS, ProcessContext};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_refuses_the_next_start_until_a_task_settles() {
    let f = Fixture::with(ProcessContext::builder().max_background_tasks(2)).await;
    let exits = Exits::default();
    let first = f.start(&wait_for_file("go1"), &exits).await;
    let _second = f.start(&wait_for_file("go2"), &exits).await;

    let refused = f
        .context
        .exec_background(f.handle, "true", exits.attach(f.options()))
        .await;
    assert!(
        matches!(refused, Err(ContextError::TooManyTasks { limit: 2 })),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_dir(f.tasks_dir()).unwrap().count(),
        2,
        "no log for it"
    );

    // A kill settles one: the next start works, and takes the next id.
    f.kill(first.task_id).await;
    let third = f.start("true", &exits).await;
    assert_eq!(third.task_id.to_string(), "bash_3");

    // A natural exit frees a slot too.
    exits.wait_for(2).await;
    let fourth = f.start(&wait_for_file("go4"), &exits).await;
    assert_eq!(fourth.task_id.to_string(), "bash_4");
    assert!(matches!(
        f.context
            .exec_background(f.handle, "true", f.options())
            .await,
        Err(ContextError::TooManyTasks { .. })
    ));
    f.release("go2");
    f.release("go4");
    exits.wait_for(4).await;
}

#[tokio::test]
async fn the_default_cap_is_eight() {
    assert_eq!(DEFAULT_MAX_BACKGROUND_TASKS, 8);
    assert_eq!(ProcessContext::new().max_background_tasks(), 8);
}
