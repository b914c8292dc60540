//! `destroy` kills every surviving task, leaves no process and no descriptor behind,
//! closes complete logs, and is idempotent.

use zidane_context::{ContextError, ExecOptions, ExecutionContext, TaskStatus};
use zidane_process::ProcessContext;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_leaves_no_process_no_descriptor_and_complete_logs() {
    let f = Fixture::exclusive().await;
    let exits = Exits::snapshotting_logs();
    // The first spawn of the process opens the two spawn slots it keeps for good
    // (`/dev/null` twice, see vfork_spawn.rs): count after it.
    f.context
        .exec(f.handle, "true", ExecOptions::new())
        .await
        .unwrap();
    let fds_before = open_fds();

    let family = f
        .start(
            "sleep 1000 & sh -c 'sleep 1000 & wait' & echo family; wait",
            &exits,
        )
        .await;
    let stubborn = f
        .start(
            "trap '' TERM; echo stubborn; while :; do sleep 1; done",
            &exits,
        )
        .await;
    let chatty = f
        .start(
            "i=0; while [ $i -lt 300 ]; do echo line$i; i=$((i+1)); done; sleep 1000",
            &exits,
        )
        .await;
    let finished = f.start("echo done", &exits).await;
    log_lines(&family.output_path, 1).await;
    log_lines(&stubborn.output_path, 1).await;
    log_lines(&chatty.output_path, 300).await;
    f.context
        .wait_background(f.handle, finished.task_id, WAIT, Default::default())
        .await
        .unwrap()
        .unwrap();
    eventually("the family is up", || group_members(family.pid).len() >= 4).await;

    f.context.destroy(f.handle).await.unwrap();

    let all = exits.with_logs();
    assert_eq!(all.len(), 4, "one on_exit per task");
    for started in [&family, &stubborn, &chatty] {
        assert_eq!(
            group_members(started.pid),
            Vec::<u32>::new(),
            "{}",
            started.task_id
        );
        let (exit, log) = all
            .iter()
            .find(|(e, _)| e.task_id == started.task_id)
            .unwrap();
        assert_eq!(exit.status, TaskStatus::Killed);
        assert_eq!(
            log.as_deref(),
            Some(std::fs::read(&started.output_path).unwrap().as_slice())
        );
    }
    let chatty_log: String = (0..300).map(|i| format!("line{i}\n")).collect();
    assert_eq!(read_log(&chatty.output_path), chatty_log);
    assert_eq!(read_log(&stubborn.output_path), "stubborn\n");

    // Tests waiting for the lock may have built their tokio runtime meanwhile (epoll and
    // eventfd descriptors); everything else must be exactly as before.
    let ours = |fds: Vec<String>| {
        let mut fds: Vec<String> = fds
            .into_iter()
            .filter(|fd| {
                !matches!(
                    fd.as_str(),
                    "anon_inode:[eventpoll]" | "anon_inode:[eventfd]"
                )
            })
            .collect();
        fds.sort();
        fds
    };
    let (fds_before, fds_after) = (ours(fds_before), ours(open_fds()));
    assert_eq!(fds_after, fds_before, "descriptors left open");

    // Idempotent, and the handle is gone for everything else.
    f.context.destroy(f.handle).await.unwrap();
    assert!(matches!(
        f.context.list_background(f.handle).await,
        Err(ContextError::Destroyed(_))
    ));
    assert_eq!(exits.all().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_only_touches_its_own_handle() {
    let f = Fixture::new().await;
    let other = f.context.create_handle().await.unwrap();
    let exits = Exits::default();
    let mine = f.start(&wait_for_file("never"), &exits).await;
    let theirs = f
        .context
        .exec_background(other, &wait_for_file("go"), exits.attach(f.options()))
        .await
        .unwrap();
    f.context.destroy(f.handle).await.unwrap();
    assert_eq!(exits.all().len(), 1);
    assert_eq!(exits.all()[0].task_id, mine.task_id);
    assert!(alive(theirs.pid));
    f.release("go");
    exits.wait_for(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_context_kills_its_tasks() {
    let f = Fixture::new().await;
    let context = ProcessContext::builder().cwd(f.dir.path()).build();
    let handle = context.create_handle().await.unwrap();
    let started = context
        .exec_background(handle, "sleep 1000", f.options())
        .await
        .unwrap();
    drop(context);
    eventually("the task dies with its context", || !alive(started.pid)).await;
}
