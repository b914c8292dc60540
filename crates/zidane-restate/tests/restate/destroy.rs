//! `destroy` ends every task of the handle on every worker and forgets them.

use zidane_context::{BackgroundOptions, ExecutionContext};

use crate::support::{group_alive, list_until, session_on, until_group_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_leaves_nothing_on_any_worker() {
    let Some((_cluster, context, handle)) = session_on(&["w1", "w2"]).await else {
        return;
    };
    let other = context.create_handle().await.unwrap();
    let mut pids = Vec::new();
    for _ in 0..4 {
        let started = context
            .exec_background(
                handle,
                "sleep 1000 & sleep 1000 & wait",
                BackgroundOptions::new("/unused"),
            )
            .await
            .unwrap();
        pids.push(started.pid);
    }
    let bystander = context
        .exec_background(other, "sleep 1000", BackgroundOptions::new("/unused"))
        .await
        .unwrap();
    list_until(context.as_ref(), handle, |e| e.len() == 4).await;

    context.destroy(handle).await.unwrap();
    for pid in pids {
        until_group_gone(pid).await;
    }
    assert!(context.list_background(handle).await.unwrap().is_empty());
    assert!(
        group_alive(bystander.pid),
        "another handle's task is untouched"
    );
    context.destroy(handle).await.unwrap();
    context.destroy(other).await.unwrap();
    until_group_gone(bystander.pid).await;
}
