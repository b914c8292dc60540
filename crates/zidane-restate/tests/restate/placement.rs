//! Placement by labels: a worker declares what its machine is (by flag or environment
//! variable), a start names the labels it needs, and the least-loaded worker carrying
//! all of them runs it; a start no worker fits is refused, naming what each carries,
//! and nothing starts.

use zidane_context::{BackgroundOptions, ContextError, ExecutionContext, TaskStatus};

use crate::support::{cluster, under};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_runs_on_the_least_loaded_worker_carrying_its_labels() {
    let Some(mut cluster) = cluster(&[]).await else {
        return;
    };
    let listen = "127.0.0.1:0".parse().unwrap();
    // One by flag, one by its environment variable.
    let w1 = cluster.spawn_worker_with("w1", listen, |command| {
        command.args(["--label", "linux"]);
    });
    let w2 = cluster.spawn_worker_with("w2", listen, |command| {
        command.env("ZIDANE_WORKER_LABELS", "gpu,linux");
    });
    cluster.workers.extend([w1, w2]);
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    let start = |labels: &'static [&'static str]| {
        let context = context.clone();
        async move {
            context
                .exec_background(
                    handle,
                    "sleep 30",
                    BackgroundOptions::new("/unused").labels(labels.iter().copied()),
                )
                .await
        }
    };

    // Only w2 is a GPU machine.
    for _ in 0..2 {
        let gpu = start(&["gpu"]).await.unwrap();
        assert!(
            under(&gpu.output_path, &cluster.workers[1].user_dir),
            "{gpu:?}"
        );
    }
    // Both are Linux machines: w1 runs nothing, w2 two tasks, so w1 takes the next two.
    for _ in 0..2 {
        let linux = start(&["linux"]).await.unwrap();
        assert!(
            under(&linux.output_path, &cluster.workers[0].user_dir),
            "{linux:?}"
        );
    }

    // No worker is a TPU machine: refused with what each carries; nothing more runs.
    let refused = start(&["tpu", "linux"]).await.unwrap_err();
    assert!(
        matches!(refused, ContextError::NoMatchingWorker { .. }),
        "{refused:?}"
    );
    let said = refused.to_string();
    for part in ["tpu, linux", "w1: linux", "w2: gpu, linux"] {
        assert!(said.contains(part), "{said}");
    }
    let entries = context.list_background(handle).await.unwrap();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert!(entries.iter().all(|e| e.status() == TaskStatus::Running));
    context.destroy(handle).await.unwrap();
}
