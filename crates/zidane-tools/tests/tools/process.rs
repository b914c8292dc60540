//! The tools over a real `ProcessContext`: a tempdir per test, bounded waits on events,
//! the handle destroyed at the end.
#![cfg(unix)]

use std::sync::Arc;
use std::time::Duration;

use insta::assert_snapshot;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::mpsc;
use zidane_context::{ExecutionContext, TaskExitInfo, TaskStatus};
use zidane_process::ProcessContext;
use zidane_tools::{BackgroundSinks, ToolContext, ToolOutput, ToolRegistry};

/// The longest any event of these tests may take.
const BOUND: Duration = Duration::from_secs(20);

pub(super) struct Session {
    pub(super) context: ToolContext,
    registry: ToolRegistry,
    pub(super) exits: mpsc::UnboundedReceiver<TaskExitInfo>,
    pub(super) dir: TempDir,
}

impl Session {
    pub(super) async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let process = Arc::new(
            ProcessContext::builder()
                .kill_grace(Duration::from_millis(500))
                .cwd(dir.path())
                .build(),
        );
        let handle = process.create_handle().await.unwrap();
        let (sender, exits) = mpsc::unbounded_channel();
        let sinks = BackgroundSinks {
            on_exit: Some(Arc::new(move |exit| {
                let _ = sender.send(exit);
            })),
            ..BackgroundSinks::default()
        };
        let context = ToolContext::new(process, handle)
            .with_tasks_dir(dir.path().join("tasks"))
            .with_sinks(sinks);
        Self {
            context,
            registry: ToolRegistry::with_default_tools().unwrap(),
            exits,
            dir,
        }
    }

    pub(super) async fn call(&self, tool: &str, input: Value) -> ToolOutput {
        tokio::time::timeout(BOUND, self.registry.dispatch(&self.context, tool, input))
            .await
            .unwrap_or_else(|_| panic!("{tool} took longer than {BOUND:?}"))
    }

    pub(super) async fn start(&self, command: &str) -> String {
        let output = self
            .call(
                "shell",
                json!({ "command": command, "run_in_background": true }),
            )
            .await;
        assert!(!output.is_error, "{}", output.text);
        output.data["task_id"].as_str().unwrap().to_owned()
    }

    pub(super) async fn next_exit(&mut self) -> TaskExitInfo {
        tokio::time::timeout(BOUND, self.exits.recv())
            .await
            .expect("an exit within the bound")
            .expect("the exit sink is alive")
    }

    pub(super) async fn close(self) {
        let handle = self.context.handle();
        tokio::time::timeout(BOUND, self.context.execution().destroy(handle))
            .await
            .unwrap()
            .unwrap();
    }
}

pub(super) fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// A snapshot with the temp dir, pids, log timestamps and durations made stable.
macro_rules! assert_stable_snapshot {
    ($session:expr, $name:expr, $text:expr) => {{
        let dir = $session.dir.path().display().to_string();
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(&regex_escape(&dir), "[TMP]");
        settings.add_filter(r"\(pid \d+\)", "(pid [PID])");
        settings.add_filter(r"\.\d{8}-\d{6}-\d{3}\.log", ".[TS].log");
        settings.add_filter(r"\(\d+(\.\d)?s\)|\(\d+ms\)", "([DURATION])");
        settings.add_filter(r"after \d+(\.\d)?s\.|after \d+ms\.", "after [DURATION].");
        settings.add_filter(r"\) after (\d+(\.\d)?s|\d+ms);", ") after [DURATION];");
        settings.add_filter(r"started (\d+(\.\d)?s|\d+ms) ago", "started [DURATION] ago");
        settings.bind(|| assert_snapshot!($name, $text));
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_exit_codes() {
    let session = Session::new().await;
    let ok = session
        .call("shell", json!({ "command": "echo hello" }))
        .await;
    assert!(!ok.is_error);
    assert_eq!(ok.data, json!({ "output": "hello\n", "exit_code": 0 }));
    assert_eq!(ok.text, "hello\n\nExit code: 0");

    let failed = session
        .call("shell", json!({ "command": "echo oops >&2; exit 3" }))
        .await;
    assert!(
        !failed.is_error,
        "a nonzero exit is a result, not a tool error"
    );
    assert_eq!(failed.data, json!({ "output": "oops\n", "exit_code": 3 }));
    assert_eq!(failed.text, "oops\n\nExit code: 3");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_timeout_kills_the_group() {
    let session = Session::new().await;
    let output = session
        .call(
            "shell",
            json!({ "command": "echo started; sleep 30 & sleep 30", "timeout_ms": 300 }),
        )
        .await;
    assert!(output.is_error);
    assert_ne!(output.data["exit_code"], 0);
    assert!(
        output.text.contains(
            "Timed out after 300ms: the command and every process it started were killed."
        ),
        "{}",
        output.text
    );
    assert!(output.text.starts_with("started\n"), "{}", output.text);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_exit_reaches_the_exit_sink() {
    let mut session = Session::new().await;
    let output = session
        .call(
            "shell",
            json!({ "command": "echo built; exit 4", "run_in_background": true }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_stable_snapshot!(session, "process_background_started", &output.text);
    let exit = session.next_exit().await;
    assert_eq!(exit.task_id.to_string(), "bash_1");
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 4));
    assert_eq!(
        exit.output_path.display().to_string(),
        output.data["output_path"].as_str().unwrap()
    );
    assert!(
        exit.output_path
            .starts_with(session.dir.path().join("tasks"))
    );
    let log = session
        .call("read_file", json!({ "path": output.data["output_path"] }))
        .await;
    assert_eq!(log.text, "     1\tbuilt\n(end of file; 1 line in total)");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_task_returns_the_exit_summary() {
    let mut session = Session::new().await;
    let task_id = session.start("sleep 0.2; exit 7").await;
    let output = session
        .call("wait_task", json!({ "task_id": task_id }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.data["exit"]["exit_code"], 7);
    assert_stable_snapshot!(session, "process_wait_exited", &output.text);
    assert_eq!(session.next_exit().await.exit_code, 7);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_task_times_out_and_the_task_keeps_running() {
    let mut session = Session::new().await;
    let task_id = session.start("sleep 30").await;
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": task_id, "timeout_ms": 200 }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.data["timed_out"], true);
    assert_stable_snapshot!(session, "process_wait_timed_out", &output.text);
    assert!(
        session.exits.try_recv().is_err(),
        "the task is still running"
    );
    let killed = session
        .call("shell_kill", json!({ "task_id": task_id }))
        .await;
    assert!(!killed.is_error, "{}", killed.text);
    assert_eq!(session.next_exit().await.status, TaskStatus::Killed);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_kill_is_idempotent() {
    let mut session = Session::new().await;
    let task_id = session.start("sleep 30").await;
    let first = session
        .call("shell_kill", json!({ "task_id": task_id }))
        .await;
    let second = session
        .call("shell_kill", json!({ "task_id": task_id }))
        .await;
    assert!(!first.is_error, "{}", first.text);
    assert_eq!(first, second, "a second kill returns the cached exit");
    assert_eq!(first.data["exit"]["status"], "killed");
    assert_stable_snapshot!(session, "process_shell_kill", &first.text);
    let exit = session.next_exit().await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert!(session.exits.try_recv().is_err(), "on_exit fired once");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_windows_over_a_task_log() {
    let mut session = Session::new().await;
    let output = session
        .call(
            "shell",
            json!({ "command": "seq 1 10", "run_in_background": true }),
        )
        .await;
    let path = output.data["output_path"].clone();
    session.next_exit().await;

    let window = session
        .call(
            "read_file",
            json!({ "path": path, "offset": 3, "limit": 4 }),
        )
        .await;
    assert_eq!(
        window.text,
        "     4\t4\n     5\t5\n     6\t6\n     7\t7\n(3 more lines; continue with offset 7)"
    );
    assert_eq!(
        window.data,
        json!({ "path": path, "offset": 3, "lines": 4, "total_lines": 10, "remaining": 3 })
    );
    let last = session
        .call("read_file", json!({ "path": path, "offset": 7 }))
        .await;
    assert_eq!(
        last.text,
        "     8\t8\n     9\t9\n    10\t10\n(end of file; 10 lines in total)"
    );

    let relative = session
        .call(
            "shell",
            json!({ "command": "printf 'a\\nb\\n' > notes.txt" }),
        )
        .await;
    assert!(!relative.is_error, "{}", relative.text);
    let notes = session
        .call("read_file", json!({ "path": "notes.txt" }))
        .await;
    assert_eq!(
        notes.text,
        "     1\ta\n     2\tb\n(end of file; 2 lines in total)"
    );

    let missing = session
        .call("read_file", json!({ "path": "nope.txt" }))
        .await;
    assert!(missing.is_error);
    session.close().await;
}

/// A kill that ends what a task left running after its shell exited says `killed`,
/// with the shell's own exit beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_kill_after_the_shell_exited_says_killed() {
    let mut session = Session::new().await;
    let task_id = session.start("sleep 300 & echo started").await;
    let log = session.dir.path().join("tasks");
    let deadline = tokio::time::Instant::now() + BOUND;
    // The shell printed its line and exited; its `sleep` holds the log open.
    loop {
        let entries = session
            .context
            .execution()
            .list_background(session.context.handle())
            .await
            .unwrap();
        let started = std::fs::read_dir(&log)
            .unwrap()
            .any(|e| std::fs::read_to_string(e.unwrap().path()).unwrap() == "started\n");
        let shell_gone = !std::path::Path::new(&format!("/proc/{}/cmdline", entries[0].pid))
            .exists()
            || std::fs::read_to_string(format!("/proc/{}/cmdline", entries[0].pid))
                .unwrap_or_default()
                .is_empty();
        if started && shell_gone {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the shell never exited"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let killed = session
        .call("shell_kill", json!({ "task_id": task_id }))
        .await;
    assert!(!killed.is_error, "{}", killed.text);
    assert_stable_snapshot!(
        session,
        "process_shell_kill_after_the_shell_exited",
        &killed.text
    );
    assert_eq!(killed.data["exit"]["signal"], "SIGTERM");
    assert_eq!(session.next_exit().await.status, TaskStatus::Killed);
    session.close().await;
}

/// `read_file` on a FIFO nobody writes to answers at once with what it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_refuses_a_fifo_at_once() {
    let session = Session::new().await;
    let fifo = session.dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let output = session
        .call("read_file", json!({ "path": fifo.display().to_string() }))
        .await;
    assert!(output.is_error);
    assert!(
        output
            .text
            .ends_with("is a FIFO (named pipe); only regular files can be read"),
        "{}",
        output.text
    );
    session.close().await;
}

/// The last lines of a 1 GiB log are reached by seeking from its end, and a pointer back
/// into it (the offset the footer gives) is followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_lines_of_a_huge_log_are_read_from_its_end() {
    let session = Session::new().await;
    let path = session.dir.path().join("huge.log");
    {
        use std::io::Write as _;
        let file = std::fs::File::create(&path).unwrap();
        // Sparse: a gigabyte of zero bytes, one very long first line, then real lines.
        file.set_len(1 << 30).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for i in 1..=5 {
            writeln!(file, "tail line {i}").unwrap();
        }
    }
    let path = path.display().to_string();
    let tail = session
        .call("read_file", json!({ "path": path, "offset": -2 }))
        .await;
    assert!(!tail.is_error, "{}", tail.text);
    assert_stable_snapshot!(session, "read_file_huge_log_tail", &tail.text);
    let back = session
        .call(
            "read_file",
            json!({ "path": path, "offset": -4, "limit": 2 }),
        )
        .await;
    assert!(
        back.text
            .starts_with("    -4\ttail line 2\n    -3\ttail line 3\n"),
        "{}",
        back.text
    );
    session.close().await;
}

/// A wait that times out says how long the task has run and quotes the end of its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_wait_quotes_the_last_lines_of_the_log() {
    let mut session = Session::new().await;
    let task_id = session
        .start("seq 1 20; echo compiling crate 7 of 9; exec sleep 30")
        .await;
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": task_id, "until": { "pattern": "compiling crate 7" } }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": task_id, "timeout_ms": 100 }),
        )
        .await;
    assert!(
        output
            .text
            .contains("Last lines of its log:\n  17\n  18\n  19\n  20\n  compiling crate 7 of 9\n"),
        "{}",
        output.text
    );
    assert_eq!(output.data["last_lines"][4], "compiling crate 7 of 9");
    session
        .call("shell_kill", json!({ "task_id": task_id }))
        .await;
    assert_eq!(session.next_exit().await.status, TaskStatus::Killed);
    session.close().await;
}

/// A terminal prompt, waited for with `wait_task`'s `until` (which reads the log that
/// the terminal's output goes to), answered with `shell_input`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_prompt_is_awaited_answered_and_its_exit_delivered() {
    let mut session = Session::new().await;
    let started = session
        .call(
            "shell",
            json!({
                "command": "read -p 'Project name: ' name; echo \"created $name\"",
                "run_in_background": true,
                "tty": true,
            }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    assert_stable_snapshot!(session, "process_terminal_started", &started.text);
    let ready = session
        .call(
            "wait_task",
            json!({ "task_id": "bash_1", "until": { "pattern": "Project name: $" } }),
        )
        .await;
    assert!(!ready.is_error, "{}", ready.text);
    let screen = session
        .call("shell_screen", json!({ "task_id": "bash_1" }))
        .await;
    assert_stable_snapshot!(session, "process_screen_prompt", &screen.text);
    let answered = session
        .call(
            "shell_input",
            json!({ "task_id": "bash_1", "text": "demo", "keys": ["enter"] }),
        )
        .await;
    assert!(!answered.is_error, "{}", answered.text);
    assert_stable_snapshot!(session, "process_input_answered", &answered.text);
    let exit = session.next_exit().await;
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    let again = session
        .call(
            "shell_input",
            json!({ "task_id": "bash_1", "text": "more" }),
        )
        .await;
    assert!(again.is_error);
    assert_snapshot!("process_input_after_the_end", &again.text);
    session.close().await;
}

/// A pipe: a line answered, then end of input ends the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_stdin_takes_lines_and_end_of_input() {
    let mut session = Session::new().await;
    let started = session
        .call(
            "shell",
            json!({
                "command": "read -r first; echo \"first=$first\"; wc -l",
                "run_in_background": true,
                "stdin": "pipe",
            }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    assert!(
        started.text.contains("Its stdin is open"),
        "{}",
        started.text
    );
    let answered = session
        .call(
            "shell_input",
            json!({ "task_id": "bash_1", "text": "one", "keys": ["enter"] }),
        )
        .await;
    assert_stable_snapshot!(session, "process_input_pipe_line", &answered.text);
    let ended = session
        .call(
            "shell_input",
            json!({ "task_id": "bash_1", "text": "two\nthree\n", "eof": true }),
        )
        .await;
    assert!(!ended.is_error, "{}", ended.text);
    assert!(ended.data["eof"].as_bool().unwrap());
    assert_eq!(session.next_exit().await.exit_code, 0);
    let refused = session
        .call(
            "shell_input",
            json!({ "task_id": "bash_1", "keys": ["ctrl-c"] }),
        )
        .await;
    assert!(refused.is_error);
    session.close().await;
}

/// What a task without input or a terminal says to the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_and_screen_refusals_say_what_to_do() {
    let session = Session::new().await;
    let task_id = session.start("sleep 30").await;
    let input = session
        .call("shell_input", json!({ "task_id": task_id, "text": "y\n" }))
        .await;
    let screen = session
        .call("shell_screen", json!({ "task_id": task_id }))
        .await;
    let nothing = session
        .call("shell_input", json!({ "task_id": task_id }))
        .await;
    let unknown_key = session
        .call(
            "shell_input",
            json!({ "task_id": task_id, "keys": ["f13"] }),
        )
        .await;
    let foreground = session
        .call("shell", json!({ "command": "cat", "tty": true }))
        .await;
    let rows_alone = session
        .call(
            "shell",
            json!({ "command": "cat", "run_in_background": true, "rows": 10 }),
        )
        .await;
    for output in [&input, &screen, &nothing, &foreground, &rows_alone] {
        assert!(output.is_error, "{}", output.text);
    }
    assert!(unknown_key.is_error);
    let texts = [input, screen, nothing, foreground, rows_alone]
        .map(|output| output.text)
        .join("\n");
    assert_snapshot!("process_input_refusals", texts);
    session.close().await;
}

/// A full-screen program's screen, read back as it shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_of_a_full_screen_program() {
    let mut session = Session::new().await;
    let numbers: String = (1..=50).map(|n| format!("line {n}\n")).collect();
    std::fs::write(session.dir.path().join("numbers.txt"), numbers).unwrap();
    let started = session
        .call(
            "shell",
            json!({
                "command": "LESSHISTFILE=- LESS= less numbers.txt",
                "run_in_background": true,
                "tty": true,
                "rows": 6,
                "cols": 30,
            }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    let ready = session
        .call(
            "wait_task",
            // less draws its prompt, the file's name, last.
            json!({ "task_id": "bash_1", "until": { "pattern": "numbers\\.txt" } }),
        )
        .await;
    assert!(!ready.is_error, "{}", ready.text);
    // The output pump feeds the screen before the log's readers hear of the bytes.
    let screen = session
        .call("shell_screen", json!({ "task_id": "bash_1" }))
        .await;
    assert_snapshot!("process_screen_less", &screen.text);
    assert_eq!(screen.data["alternate"], true);
    let quit = session
        .call("shell_input", json!({ "task_id": "bash_1", "text": "q" }))
        .await;
    assert!(!quit.is_error, "{}", quit.text);
    assert_eq!(session.next_exit().await.exit_code, 0);
    session.close().await;
}
