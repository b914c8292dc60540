use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

fn counter() -> (
    Arc<AtomicUsize>,
    impl Fn(TaskExitInfo) + Send + Sync + 'static,
) {
    let count = Arc::new(AtomicUsize::new(0));
    let sink = count.clone();
    (count, move |_| {
        sink.fetch_add(1, Ordering::SeqCst);
    })
}

async fn start(
    context: &MockContext,
    handle: ExecutionHandle,
    on_exit: impl Fn(TaskExitInfo) + Send + Sync + 'static,
) -> TaskId {
    context
        .exec_background(
            handle,
            "sleep 1",
            BackgroundOptions::new("/tasks").on_exit(on_exit),
        )
        .await
        .unwrap()
        .task_id
}

#[tokio::test]
async fn sequential_ids_and_paths() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let a = context
        .exec_background(handle, "a", BackgroundOptions::new("/t"))
        .await
        .unwrap();
    let b = context
        .exec_background(handle, "b", BackgroundOptions::new("/t"))
        .await
        .unwrap();
    assert_eq!(a.task_id.to_string(), "bash_1");
    assert_eq!(b.task_id.to_string(), "bash_2");
    assert_eq!(a.output_path, PathBuf::from("/t/bash_1.mock.log"));
}

#[tokio::test]
async fn on_exit_fires_once_and_kill_is_idempotent() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let (count, on_exit) = counter();
    let id = start(&context, handle, on_exit).await;
    let first = context.kill_background(handle, id).await.unwrap().unwrap();
    assert_eq!(first.status, TaskStatus::Killed);
    assert_eq!(first.exit_code, 143);
    assert_eq!(first.signal, Some(Signal::TERM));
    let second = context.kill_background(handle, id).await.unwrap().unwrap();
    assert_eq!(first, second);
    assert!(!context.finish(id, 0), "an ended task cannot end again");
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn unknown_task_kill_and_wait_are_none() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let id = TaskId::from_number(99);
    assert!(context.kill_background(handle, id).await.unwrap().is_none());
    let waited = context
        .wait_background(handle, id, Duration::from_secs(5), CancellationToken::new())
        .await
        .unwrap();
    assert!(waited.is_none());
}

#[tokio::test]
async fn racing_finish_and_kill_fire_on_exit_once() {
    for _ in 0..200 {
        let context = Arc::new(MockContext::new());
        let handle = context.create_handle().await.unwrap();
        let (count, on_exit) = counter();
        let id = start(&context, handle, on_exit).await;
        let finisher = {
            let context = context.clone();
            std::thread::spawn(move || context.finish(id, 0))
        };
        let killer = {
            let context = context.clone();
            tokio::spawn(async move { context.kill_background(handle, id).await })
        };
        let finished = finisher.join().unwrap();
        let killed = killer.await.unwrap().unwrap().unwrap();
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // Whichever won, kill returns the one recorded exit.
        assert_eq!(killed.status == TaskStatus::Exited, finished);
    }
}

#[tokio::test]
async fn waiters_wake_on_exit_and_time_out_otherwise() {
    let context = Arc::new(MockContext::new());
    let handle = context.create_handle().await.unwrap();
    let id = start(&context, handle, |_| {}).await;
    let timed_out = context
        .wait_background(
            handle,
            id,
            Duration::from_millis(10),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(timed_out.is_none());

    let waiter = {
        let context = context.clone();
        tokio::spawn(async move {
            context
                .wait_background(
                    handle,
                    id,
                    Duration::from_secs(10),
                    CancellationToken::new(),
                )
                .await
        })
    };
    tokio::task::yield_now().await;
    context.finish(id, 3);
    let exit = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(exit.exit_code, 3);
    // After the exit, a wait returns at once.
    let again = context
        .wait_background(
            handle,
            id,
            Duration::from_secs(10),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(again.unwrap().exit_code, 3);
}

#[tokio::test]
async fn cancel_ends_a_wait() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let id = start(&context, handle, |_| {}).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let waited = context
        .wait_background(handle, id, Duration::from_secs(10), cancel)
        .await
        .unwrap();
    assert!(waited.is_none());
}

#[tokio::test]
async fn reassign_moves_tasks_and_callbacks() {
    let context = MockContext::new();
    let child = context.create_handle().await.unwrap();
    let parent = context.create_handle().await.unwrap();
    let (child_count, child_exit) = counter();
    let (parent_count, parent_exit) = counter();
    let running = start(&context, child, child_exit).await;
    let ended = start(&context, child, |_| {}).await;
    context.finish(ended, 0);
    let moved = context
        .reassign_background_tasks(child, parent, Some(Arc::new(parent_exit)))
        .await
        .unwrap();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].task_id, running);
    assert_eq!(context.task_handle(running), Some(parent));
    context.destroy(child).await.unwrap();
    assert_eq!(context.task(running).unwrap().status(), TaskStatus::Running);
    context.finish(running, 0);
    assert_eq!(child_count.load(Ordering::SeqCst), 0);
    assert_eq!(parent_count.load(Ordering::SeqCst), 1);
    assert_eq!(context.list_background(parent).await.unwrap().len(), 1);
}

#[tokio::test]
async fn without_reassign_is_unsupported() {
    let context = MockContext::new().without_reassign();
    let a = context.create_handle().await.unwrap();
    let b = context.create_handle().await.unwrap();
    let err = context
        .reassign_background_tasks(a, b, None)
        .await
        .unwrap_err();
    assert!(matches!(err, ContextError::Unsupported { .. }));
}

#[tokio::test]
async fn destroy_kills_survivors_once_and_is_idempotent() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let (count, on_exit) = counter();
    let id = start(&context, handle, on_exit).await;
    context.destroy(handle).await.unwrap();
    context.destroy(handle).await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert!(context.task(id).is_none());
    let err = context
        .exec_background(handle, "x", BackgroundOptions::new("/t"))
        .await
        .unwrap_err();
    assert!(matches!(err, ContextError::Destroyed(h) if h == handle));
}

#[tokio::test]
async fn stall_and_output_controls() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let stalls = Arc::new(Mutex::new(Vec::new()));
    let sink = stalls.clone();
    let started = context
        .exec_background(
            handle,
            "npm init",
            BackgroundOptions::new("/t").on_stall(move |s| sink.lock().unwrap().push(s)),
        )
        .await
        .unwrap();
    assert!(context.write_output(started.task_id, b"one\ntwo\nthree\n"));
    assert!(context.stall(started.task_id, Duration::from_secs(45)));
    let stall = stalls.lock().unwrap()[0].clone();
    assert_eq!(stall.bytes_written, 14);
    let read = context
        .read_file(handle, &started.output_path, ReadRange::new(1, Some(1)))
        .await
        .unwrap();
    assert_eq!(read.lines, vec!["two".to_owned()]);
    assert_eq!((read.total_lines, read.remaining), (3, 1));
}

#[tokio::test]
async fn calls_are_recorded_and_bad_input_refused() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    assert!(matches!(
        context
            .exec_background(handle, "a\0b", BackgroundOptions::new("/t"))
            .await,
        Err(ContextError::InvalidCommand { .. })
    ));
    assert!(matches!(
        context
            .exec(ExecutionHandle::new(77), "ls", ExecOptions::new())
            .await,
        Err(ContextError::UnknownHandle(_))
    ));
    assert_eq!(context.calls()[0], MockCall::CreateHandle(handle));
}

#[tokio::test]
async fn no_background_capability_refuses() {
    let context = MockContext::new().with_detached_tasks(DetachedTasks::None);
    let handle = context.create_handle().await.unwrap();
    assert!(matches!(
        context
            .exec_background(handle, "ls", BackgroundOptions::new("/t"))
            .await,
        Err(ContextError::Unsupported { .. })
    ));
}

#[tokio::test]
async fn input_and_screens_follow_the_capabilities_and_the_task() {
    let plain = MockContext::new();
    let handle = plain.create_handle().await.unwrap();
    let id = start(&plain, handle, |_| {}).await;
    assert!(matches!(
        plain.write_input(handle, id, TaskInput::Eof).await,
        Err(ContextError::Unsupported { .. })
    ));

    let context = MockContext::new()
        .with_capabilities(Capabilities::new(DetachedTasks::ProcessLifetime).with_terminals());
    let handle = context.create_handle().await.unwrap();
    let closed = start(&context, handle, |_| {}).await;
    assert!(matches!(
        context
            .write_input(handle, closed, TaskInput::text("y\n"))
            .await,
        Err(ContextError::NoInput { .. })
    ));
    let size = crate::TtySize::new(10, 40);
    let tty = context
        .exec_background(handle, "vi", BackgroundOptions::new("/t").tty(size))
        .await
        .unwrap()
        .task_id;
    let entry = context.task(tty).unwrap();
    assert!(entry.takes_input() && entry.tty == Some(size));
    context
        .write_input(handle, tty, TaskInput::text(":q\r"))
        .await
        .unwrap()
        .unwrap();
    context
        .write_input(handle, tty, TaskInput::Eof)
        .await
        .unwrap();
    assert_eq!(context.input(tty), b":q\r\x04");
    assert_eq!(
        context
            .read_screen(handle, tty)
            .await
            .unwrap()
            .unwrap()
            .lines
            .len(),
        10
    );
    let shown = Screen::new(size, vec!["~".into()], (0, 0));
    assert!(context.set_screen(tty, shown.clone()));
    assert_eq!(context.read_screen(handle, tty).await.unwrap(), Some(shown));
    assert!(matches!(
        context.read_screen(handle, closed).await,
        Err(ContextError::NotATerminal { .. })
    ));
    context
        .resize(handle, tty, crate::TtySize::new(20, 80))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        context.task(tty).unwrap().tty,
        Some(crate::TtySize::new(20, 80))
    );
    assert!(
        context
            .write_input(handle, TaskId::from_number(99), TaskInput::Eof)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_held_task_is_unlisted_until_named_and_takes_the_next_id() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let exits = Arc::new(Mutex::new(Vec::new()));
    let sink = exits.clone();
    let held = context
        .exec_background(
            handle,
            "make",
            BackgroundOptions::new("/t")
                .held(true)
                .on_exit(move |exit| sink.lock().unwrap().push(exit)),
        )
        .await
        .unwrap();
    assert!(held.task_id.is_held());
    assert!(context.list_background(handle).await.unwrap().is_empty());
    context.write_output(held.task_id, b"first\n");
    let Some(Naming::Named(named)) = context.name_background(handle, held.task_id).await.unwrap()
    else {
        panic!("a running held task is named");
    };
    assert_eq!(named.task_id.to_string(), "bash_1");
    assert_eq!(named.output_path, PathBuf::from("/t/bash_1.mock.log"));
    let listed = context.list_background(handle).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].task_id, named.task_id);
    context.finish(named.task_id, 0);
    let told = exits.lock().unwrap().clone();
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].task_id, named.task_id);
    assert_eq!(told[0].output_path, named.output_path);
}

#[tokio::test]
async fn a_held_task_that_ended_stays_held_and_is_forgotten() {
    let context = MockContext::new();
    let handle = context.create_handle().await.unwrap();
    let held = context
        .exec_background(handle, "true", BackgroundOptions::new("/t").held(true))
        .await
        .unwrap();
    assert!(
        !context
            .forget_background(handle, held.task_id)
            .await
            .unwrap()
    );
    context.finish(held.task_id, 0);
    let Some(Naming::Ended(exit)) = context.name_background(handle, held.task_id).await.unwrap()
    else {
        panic!("an ended held task is not named");
    };
    assert_eq!(exit.task_id, held.task_id);
    assert!(
        context
            .forget_background(handle, held.task_id)
            .await
            .unwrap()
    );
    assert!(context.list_background(handle).await.unwrap().is_empty());
    let next = context
        .exec_background(handle, "true", BackgroundOptions::new("/t"))
        .await
        .unwrap();
    assert_eq!(next.task_id.to_string(), "bash_1");
}

#[tokio::test]
async fn detach_needs_the_capability_and_mints_detached_ids() {
    let context = MockContext::new();
    assert!(!context.capabilities().detach);
    let handle = context.create_handle().await.unwrap();
    let refused = context
        .exec_background(handle, "a", BackgroundOptions::new("/t").detach(true))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            ContextError::Unsupported {
                operation: "detach"
            }
        ),
        "{refused:?}"
    );

    let context = MockContext::new().with_detach();
    assert!(context.capabilities().detach);
    let handle = context.create_handle().await.unwrap();
    let plain = context
        .exec_background(handle, "a", BackgroundOptions::new("/t"))
        .await
        .unwrap();
    let detached = context
        .exec_background(handle, "b", BackgroundOptions::new("/t").detach(true))
        .await
        .unwrap();
    assert_eq!(plain.task_id.to_string(), "bash_1");
    assert_eq!(detached.task_id.to_string(), "bash_d1");
    assert_eq!(detached.output_path, PathBuf::from("/t/bash_d1.mock.log"));
    let entry = context.task(detached.task_id).unwrap();
    assert!(entry.detached && !entry.reported);
    assert!(!context.task(plain.task_id).unwrap().detached);
    assert!(context.finish(detached.task_id, 0));
    assert!(
        context
            .task(detached.task_id)
            .unwrap()
            .exit()
            .unwrap()
            .detached
    );
}

#[tokio::test]
async fn exits_told_is_recorded_and_marks_entries_reported() {
    let context = MockContext::new().with_detach();
    let handle = context.create_handle().await.unwrap();
    let id = context
        .exec_background(handle, "b", BackgroundOptions::new("/t").detach(true))
        .await
        .unwrap()
        .task_id;
    context.finish(id, 0);
    context.exits_told(handle, &[id]).await.unwrap();
    assert_eq!(context.exits_told_calls(), vec![vec![id]]);
    let listed = context.list_background(handle).await.unwrap();
    assert!(listed[0].reported);
    assert!(!context.set_reported(TaskId::from_number(99)));
}
