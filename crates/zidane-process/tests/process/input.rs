//! A task started with `stdin: pipe` takes input; one started without refuses it.

use zidane_context::{
    ContextError, ExecutionContext, StdinMode, TaskInput, TaskLimits, TaskStatus,
};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_on_a_pipe_is_answered_and_the_exit_reported() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).stdin(StdinMode::Pipe);
    let started = f
        .context
        .exec_background(
            f.handle,
            "printf 'name? '; read name; echo \"hello $name\"",
            options,
        )
        .await
        .unwrap();
    log_holds(&f, started.task_id, "name? ").await;
    let entry = &f.context.list_background(f.handle).await.unwrap()[0];
    assert_eq!((entry.stdin, entry.tty), (StdinMode::Pipe, None));
    type_in(&f, started.task_id, "zidane\n").await;
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    assert_eq!(read_log(&started.output_path), "name? hello zidane\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_input_is_answered_and_its_exit_notified() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).stdin(StdinMode::Pipe);
    let command = "python3 -c 'n = int(input(\"number? \")); print(n * 2)'";
    let started = f
        .context
        .exec_background(f.handle, command, options)
        .await
        .unwrap();
    log_holds(&f, started.task_id, "number? ").await;
    type_in(&f, started.task_id, "21\n").await;
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.exit_code, 0);
    assert_eq!(read_log(&started.output_path), "number? 42\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_of_input_closes_the_pipe_and_later_bytes_are_refused() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).stdin(StdinMode::Pipe);
    let started = f
        .context
        .exec_background(f.handle, "wc -l", options)
        .await
        .unwrap();
    let id = started.task_id;
    type_in(&f, id, "one\ntwo\n").await;
    f.context
        .write_input(f.handle, id, TaskInput::Eof)
        .await
        .unwrap();
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.exit_code, 0);
    assert_eq!(read_log(&started.output_path).trim(), "2");
    // Ended: a clear error, not a hang or a silent drop.
    let error = f
        .context
        .write_input(f.handle, id, TaskInput::text("three\n"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ContextError::TaskEnded { .. } | ContextError::InputClosed { .. }
        ),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_without_input_refuses_it_and_reads_end_of_file() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f
        .start(
            &format!("read line; echo \"read=$?\"; {}", wait_for_file("go")),
            &exits,
        )
        .await;
    log_holds(&f, started.task_id, "read=1").await;
    let error = f
        .context
        .write_input(f.handle, started.task_id, TaskInput::text("x\n"))
        .await
        .unwrap_err();
    assert!(matches!(error, ContextError::NoInput { .. }), "{error}");
    assert!(error.to_string().contains("stdin closed"), "{error}");
    let error = f
        .context
        .read_screen(f.handle, started.task_id)
        .await
        .unwrap_err();
    assert!(
        matches!(error, ContextError::NotATerminal { .. }),
        "{error}"
    );
    let unknown = zidane_context::TaskId::from_number(99);
    assert!(
        f.context
            .write_input(f.handle, unknown, TaskInput::Eof)
            .await
            .unwrap()
            .is_none()
    );
    f.release("go");
    exits.wait_for(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_never_reads_its_input_gets_an_error_not_a_hang() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).stdin(StdinMode::Pipe);
    let started = f
        .context
        .exec_background(f.handle, "sleep 30", options)
        .await
        .unwrap();
    // More than any pipe buffer holds.
    let flood = TaskInput::Bytes(vec![b'x'; 4 << 20]);
    let error = f
        .context
        .write_input(f.handle, started.task_id, flood)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("is not reading its input"),
        "{error}"
    );
    f.kill(started.task_id).await;
}

/// A quiet task reading the pipe its input is written to is waiting for input, and
/// the stall says so; a read of an inner pipe (`sleep | cat`) is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_on_the_input_pipe_says_it_waits_for_input() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let stalls = Stalls::default();
    let watched = |options: zidane_context::BackgroundOptions| {
        options
            .stdin(StdinMode::Pipe)
            .limits(TaskLimits::new().stall_timeout(std::time::Duration::from_millis(200)))
            .on_stall(stalls.callback())
    };
    let asking = f
        .context
        .exec_background(
            f.handle,
            "printf 'Overwrite? '; read answer",
            watched(exits.attach(f.options())),
        )
        .await
        .unwrap();
    stalls
        .wait_until("the question", |s| {
            s.task_id == asking.task_id && s.bytes_written > 0
        })
        .await;
    let stall = stalls
        .all()
        .into_iter()
        .find(|s| s.task_id == asking.task_id && s.bytes_written > 0)
        .unwrap();
    assert!(stall.takes_input && !stall.terminal);
    if cfg!(target_os = "linux") {
        let diagnosis = stall.diagnosis.unwrap();
        assert!(diagnosis.starts_with("Waiting for input. "), "{diagnosis}");
        assert!(
            diagnosis.contains("the pipe its input is written to"),
            "{diagnosis}"
        );
        assert!(diagnosis.contains("\"Overwrite? \""), "{diagnosis}");
    }
    type_in(&f, asking.task_id, "y\n").await;

    let inner = f
        .context
        .exec_background(
            f.handle,
            "echo go; sleep 30 | cat",
            watched(exits.attach(f.options())),
        )
        .await
        .unwrap();
    stalls
        .wait_until("the inner pipe", |s| {
            s.task_id == inner.task_id && s.bytes_written > 0
        })
        .await;
    let stall = stalls
        .all()
        .into_iter()
        .find(|s| s.task_id == inner.task_id && s.bytes_written > 0)
        .unwrap();
    if cfg!(target_os = "linux") {
        let diagnosis = stall.diagnosis.unwrap();
        assert!(!diagnosis.starts_with("Waiting for input"), "{diagnosis}");
        assert!(
            diagnosis.contains("is waiting to read from its stdin, a pipe"),
            "{diagnosis}"
        );
    }
    f.kill(inner.task_id).await;
    exits.wait_for(2).await;
}
