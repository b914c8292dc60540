//! A task started with a `tty` runs in a terminal of its own: a session whose
//! controlling terminal it is, of the size asked for; its screen reads back as text;
//! ctrl-c reaches its foreground job; nothing it started outlives it.

use zidane_context::{
    ExecutionContext, Signal, StdinMode, TaskInput, TaskLimits, TaskStatus, TtySize,
};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tty_reports_a_terminal_only_when_one_was_asked_for() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let plain = f.start("tty", &exits).await;
    let options = exits.attach(f.options()).tty(TtySize::DEFAULT);
    let terminal = f
        .context
        .exec_background(f.handle, "tty; echo \"TERM=$TERM\"", options)
        .await
        .unwrap();
    exits.wait_for(2).await;
    assert_eq!(read_log(&plain.output_path), "not a tty\n");
    let log = read_log(&terminal.output_path);
    assert!(log.starts_with("/dev/"), "{log:?}");
    assert!(log.contains("TERM=xterm-256color\r\n"), "{log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stty_size_reports_the_size_asked_for_and_a_resize() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).tty(TtySize::new(30, 100));
    let command = "stty size; read _; stty size";
    let started = f
        .context
        .exec_background(f.handle, command, options)
        .await
        .unwrap();
    let id = started.task_id;
    log_holds(&f, id, "30 100\r\n").await;
    let entry = &f.context.list_background(f.handle).await.unwrap()[0];
    assert_eq!(
        (entry.stdin, entry.tty),
        (StdinMode::Pipe, Some(TtySize::new(30, 100)))
    );
    f.context
        .resize(f.handle, id, TtySize::new(40, 120))
        .await
        .unwrap()
        .unwrap();
    type_in(&f, id, "\r").await;
    log_holds(&f, id, "40 120\r\n").await;
    assert_eq!(
        f.context
            .read_screen(f.handle, id)
            .await
            .unwrap()
            .unwrap()
            .rows,
        40
    );
    exits.wait_for(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_prompt_in_a_terminal_is_answered() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).tty(TtySize::DEFAULT);
    let command = "read -p 'Project name: ' name; echo \"created $name\"";
    let started = f
        .context
        .exec_background(f.handle, command, options)
        .await
        .unwrap();
    log_holds(&f, started.task_id, "Project name: ").await;
    type_in(&f, started.task_id, "demo\r").await;
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    // The terminal echoes what was typed, as a terminal does.
    assert_eq!(
        read_log(&started.output_path),
        "Project name: demo\r\ncreated demo\r\n"
    );
    let screen = f
        .context
        .read_screen(f.handle, started.task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(screen.text(), "Project name: demo\ncreated demo");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_repl_is_driven_over_several_inputs() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).tty(TtySize::DEFAULT);
    let started = f
        .context
        .exec_background(f.handle, "python3 -q -i", options)
        .await
        .unwrap();
    let id = started.task_id;
    log_holds(&f, id, ">>> ").await;
    type_in(&f, id, "x = 6 * 7\r").await;
    type_in(&f, id, "print(f'answer={x}')\r").await;
    log_holds(&f, id, "answer=42").await;
    type_in(&f, id, "print('do' + 'ne')\r").await;
    // Typed only at the next prompt, as a person would: a ctrl-d that reaches the
    // terminal between two reads of the REPL's line editor (the terminal back in its
    // cooked mode) is not the editor's end of input.
    log_holds(&f, id, "done\r\n>>> ").await;
    f.context
        .write_input(f.handle, id, TaskInput::Eof)
        .await
        .unwrap();
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_reaches_the_foreground_job_and_ends_it() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).tty(TtySize::DEFAULT);
    let started = f
        .context
        .exec_background(f.handle, "echo ready; sleep 300; echo survived", options)
        .await
        .unwrap();
    log_holds(&f, started.task_id, "ready").await;
    type_in(&f, started.task_id, "\x03").await;
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(
        exit.status,
        TaskStatus::Exited,
        "ended by the terminal, not a kill"
    );
    assert_eq!(exit.signal, Some(Signal::INT), "{exit:?}");
    assert!(!read_log(&started.output_path).contains("survived"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_screen_program_reads_back_as_its_screen_shows() {
    let f = Fixture::new().await;
    let lines: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    std::fs::write(f.path("numbers.txt"), lines).unwrap();
    let exits = Exits::default();
    let options = exits
        .attach(f.options())
        .tty(TtySize::new(10, 40))
        .env("LESS", "")
        .env("LESSHISTFILE", "-");
    let started = f
        .context
        .exec_background(f.handle, "less numbers.txt", options)
        .await
        .unwrap();
    let id = started.task_id;
    log_holds(&f, id, "line 9").await;
    let screen = wait_for_screen(&f, id, |s| s.lines[8] == "line 9").await;
    assert!(screen.alternate, "less draws on the alternate screen");
    assert_eq!(screen.lines[0], "line 1");
    assert_eq!(screen.lines.len(), 10);
    assert!(screen.lines[9].starts_with("numbers.txt") || screen.lines[9].starts_with(':'));
    // A page down, then quit.
    type_in(&f, id, " ").await;
    let screen = wait_for_screen(&f, id, |s| s.lines[0] == "line 10").await;
    assert_eq!(screen.lines[8], "line 18");
    type_in(&f, id, "q").await;
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.exit_code, 0);
}

/// Waits (bounded) until the screen of `id` satisfies `done`.
async fn wait_for_screen(
    f: &Fixture,
    id: zidane_context::TaskId,
    done: impl Fn(&zidane_context::Screen) -> bool,
) -> zidane_context::Screen {
    let mut offset = 0;
    let wait = async {
        loop {
            let screen = f.context.read_screen(f.handle, id).await.unwrap().unwrap();
            if done(&screen) {
                return screen;
            }
            // The screen changes only when output arrives: wait for the next bytes.
            let chunk = f
                .context
                .follow_output(f.handle, id, offset, 1 << 20)
                .await
                .unwrap()
                .unwrap();
            offset = chunk.offset + chunk.bytes.len() as u64;
            assert!(
                !chunk.ended || !chunk.bytes.is_empty(),
                "{id} ended: {screen:?}"
            );
        }
    };
    tokio::time::timeout(WAIT, wait)
        .await
        .unwrap_or_else(|_| panic!("the screen of {id} never showed what was expected"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_on_a_terminal_prompt_is_diagnosed_and_then_answered() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let stalls = Stalls::default();
    let options = exits
        .attach(f.options())
        .tty(TtySize::DEFAULT)
        .limits(TaskLimits::new().stall_timeout(std::time::Duration::from_millis(200)))
        .on_stall(stalls.callback());
    let command = "read -p 'Continue? [y/n] ' answer; echo \"answer=$answer\"";
    let started = f
        .context
        .exec_background(f.handle, command, options)
        .await
        .unwrap();
    stalls
        .wait_until("the prompt", |s| s.bytes_written > 0)
        .await;
    let stall = stalls
        .all()
        .into_iter()
        .find(|s| s.bytes_written > 0)
        .unwrap();
    if cfg!(target_os = "linux") {
        let diagnosis = stall.diagnosis.unwrap_or_default();
        assert!(
            diagnosis.contains("waiting for input from a terminal"),
            "{diagnosis}"
        );
        assert!(diagnosis.contains("Continue? [y/n]"), "{diagnosis}");
    }
    type_in(&f, started.task_id, "y\r").await;
    exits.wait_for(1).await;
    assert!(read_log(&started.output_path).ends_with("answer=y\r\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_terminal_task_started_outlives_destroy() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let options = exits.attach(f.options()).tty(TtySize::DEFAULT);
    let started = f
        .context
        .exec_background(
            f.handle,
            "sleep 300 & echo \"child=$!\"; python3 -q -i",
            options,
        )
        .await
        .unwrap();
    let log = log_holds(&f, started.task_id, ">>> ").await;
    let child: u32 = log
        .split("child=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .unwrap();
    assert!(alive(child) && alive(started.pid));
    f.context.destroy(f.handle).await.unwrap();
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.status, TaskStatus::Killed);
    eventually("the terminal task's processes are gone", || {
        !alive(child) && !alive(started.pid)
    })
    .await;
}
