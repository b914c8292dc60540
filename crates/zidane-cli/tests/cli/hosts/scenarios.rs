//! What each host shows the model, scenario by scenario: a background exit, the same
//! exit when the next call fails, a wait, a large output, and what is left running after
//! the host exits. Each scenario runs
//! once per host (`<scenario>::claude_code`, `<scenario>::codex`, `<scenario>::opencode`,
//! `<scenario>::copilot_cli`, `<scenario>::gemini_cli`, `<scenario>::qwen_code`).
#![allow(clippy::print_stdout)]

use std::time::Duration;

use serde_json::json;
use zidane_test_support::{Step, poll_until};

use crate::hosts::host::{GONE_WAIT, Host, Sandbox, carrier_runs, describe, log_path_in};

host_tests!(
    [
        claude_code => ClaudeCode,
        codex => Codex,
        opencode => Opencode,
        copilot_cli => CopilotCli,
        gemini_cli => GeminiCli,
        qwen_code => QwenCode,
    ],
    a_background_exit_reaches_the_model_once,
    an_exit_before_a_failing_call_reaches_the_model_once,
    a_wait_answers_within_the_hosts_ceiling,
    a_large_output_shows_its_last_lines_within_budget,
    nothing_runs_after_the_host_exits,
);

/// The shortest ceiling any host is known to put on one tool call (Zed, Cline, Claude
/// Desktop): a wait here must answer well within it, whatever the host.
const SHORTEST_CEILING: Duration = Duration::from_secs(60);

/// Start `sleep 1; echo done` in the background; once it has ended, a foreground
/// `true`; then `list_tasks`. The result of `true` carries the task's notification,
/// with its id, exit code and log path, and no other result does.
async fn a_background_exit_reaches_the_model_once(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let user_dir = sandbox.user_dir();
    let background = json!({ "command": "sleep 1; echo done", "run_in_background": true });
    let steps = vec![
        Step::call(host.call("shell", background)),
        Step::call(host.call("shell", json!({ "command": "true" }))).gated(bash_1_done(&sandbox)),
        Step::call(host.call("list_tasks", json!({}))),
        Step::text("All three ran."),
    ];
    let ran = sandbox.run(steps, &[]).await;
    let requests = ran.main_requests();
    assert_eq!(requests.len(), 4, "{}", describe(&requests));

    let started = ran.result_of_step(0);
    assert!(started.contains("bash_1"), "{started}");
    let log = log_path_in(&started, &user_dir).unwrap_or_else(|| panic!("no log path: {started}"));
    let after_true = ran.result_of_step(1);
    println!("{host:?}: the result of `true` showed the model: {after_true}");
    assert!(
        blocks_of(&after_true, "bash_1") == 1
            && after_true.contains("<exit-code>0</exit-code>")
            && after_true.contains(&log),
        "{host:?} did not show the model bash_1's notification (id, exit 0, log {log}) \
         in the result of `true`:\n{after_true}"
    );
    assert_bash_1_shown_once(host, &ran.results());
}

/// Start `sleep 1; echo done` in the background; once it has ended, a `wait_task` on a
/// task that does not exist (`bash_99`, an error result); then a foreground `true`.
/// bash_1's notification reaches the model exactly once over the conversation: on the
/// error result where the host shows an error once, on the result of `true` where it
/// would show it twice (qwen-code quotes an error's content in its own message, then the
/// content again).
async fn an_exit_before_a_failing_call_reaches_the_model_once(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let background = json!({ "command": "sleep 1; echo done", "run_in_background": true });
    let steps = vec![
        Step::call(host.call("shell", background)),
        Step::call(host.call("wait_task", json!({ "task_id": "bash_99" })))
            .gated(bash_1_done(&sandbox)),
        Step::call(host.call("shell", json!({ "command": "true" }))),
        Step::text("The wait failed and `true` ran."),
    ];
    let ran = sandbox.run(steps, &[]).await;
    let requests = ran.main_requests();
    assert_eq!(requests.len(), 4, "{}", describe(&requests));

    let failed = ran.result_of_step(1);
    let after_true = ran.result_of_step(2);
    println!("{host:?}: the failing wait showed the model: {failed}");
    println!("{host:?}: the result of `true` after it showed the model: {after_true}");
    assert!(
        failed.contains("bash_99"),
        "{host:?}: the failing wait did not name bash_99:\n{failed}"
    );
    let (carrier, other) = if host == Host::QwenCode {
        (&after_true, &failed)
    } else {
        (&failed, &after_true)
    };
    assert!(
        blocks_of(carrier, "bash_1") == 1 && carrier.contains("<exit-code>0</exit-code>"),
        "{host:?} did not show the model bash_1's notification where expected:\n{carrier}"
    );
    assert_eq!(
        blocks_of(other, "bash_1"),
        0,
        "{host:?} showed bash_1's notification on the other result too:\n{other}"
    );
    assert_bash_1_shown_once(host, &ran.results());
}

/// A wait on a task that ends (`sleep 2`) returns its exit; a wait on one that does not
/// (`sleep 300`, `timeout_ms` 1000) says it is still running. Both well within the
/// host's ceiling, and the exit the wait returned is not notified again.
async fn a_wait_answers_within_the_hosts_ceiling(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let steps = vec![
        Step::call(host.call(
            "shell",
            json!({ "command": "sleep 2; echo done", "run_in_background": true }),
        )),
        Step::call(host.call("wait_task", json!({ "task_id": "bash_1" }))),
        Step::call(host.call(
            "shell",
            json!({ "command": "sleep 300", "run_in_background": true }),
        )),
        Step::call(host.call(
            "wait_task",
            json!({ "task_id": "bash_2", "timeout_ms": 1000 }),
        )),
        Step::call(host.call("list_tasks", json!({}))),
        Step::text("Waited."),
    ];
    let ran = sandbox.run(steps, &[]).await;
    let requests = ran.main_requests();
    assert_eq!(requests.len(), 6, "{}", describe(&requests));

    let exited = ran.result_of_step(1);
    println!("{host:?}: wait_task on a task that ends showed the model: {exited}");
    assert!(
        exited.contains("bash_1") && mentions_exit_code_0(&exited),
        "{host:?}: the wait did not show bash_1's exit 0:\n{exited}"
    );
    let waited = ran.round_trip(1);
    assert!(waited < SHORTEST_CEILING, "the wait took {waited:?}");

    let running = ran.result_of_step(3);
    println!("{host:?}: wait_task on a running task showed the model: {running}");
    assert!(
        running.contains("bash_2") && running.contains("still running"),
        "{host:?}: the timed-out wait did not say bash_2 is still running:\n{running}"
    );
    let timed_out = ran.round_trip(3);
    assert!(
        timed_out < Duration::from_secs(20),
        "the wait took {timed_out:?}"
    );

    let results = ran.results();
    assert!(
        results
            .iter()
            .all(|r| blocks_of(r, "bash_1") + blocks_of(r, "bash_2") == 0),
        "{host:?}: an exit the wait returned was notified again:\n{results:#?}"
    );
}

/// `seq 1 400000` in the foreground (2.6 MB): the model sees the last lines, and the
/// result stays within the host's own cap (Codex keeps about 10 KiB; Claude Code
/// replaces a result over about 25k tokens by a file path).
async fn a_large_output_shows_its_last_lines_within_budget(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let steps = vec![
        Step::call(host.call("shell", json!({ "command": "seq 1 400000" }))),
        Step::text("Counted."),
    ];
    let ran = sandbox.run(steps, &[]).await;
    let result = ran.result_of_step(0);
    let head: String = result.chars().take(300).collect();
    let tail: String = result
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    // The notes saying what was cut: zidane's, and the host's own.
    let cuts: Vec<&str> = result
        .match_indices("truncated")
        .chain(result.match_indices(" cut from "))
        .map(|(at, _)| {
            let from = result.floor_char_boundary(at.saturating_sub(60));
            let to = result.ceil_char_boundary((at + 40).min(result.len()));
            &result[from..to]
        })
        .collect();
    println!(
        "{host:?}: the large result is {} bytes; it starts: {head}\n... it ends: {tail}\nits cut notes: {cuts:?}",
        result.len()
    );
    assert!(
        result.contains("399999\n400000") || result.contains("399999\\n400000"),
        "{host:?}: the model did not see the last lines:\n{result}"
    );
    assert!(
        result.len() < 32 * 1024,
        "{host:?}: the result is {} bytes",
        result.len()
    );
}

/// `sleep 300` in the background, then the host ends its run: once it has exited, no
/// process of the run is left — not `zidane mcp`, not the task.
async fn nothing_runs_after_the_host_exits(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let steps = vec![
        Step::call(host.call(
            "shell",
            json!({ "command": "sleep 300", "run_in_background": true }),
        )),
        Step::text("Left it running."),
    ];
    let ran = sandbox.run(steps, &[]).await;
    let started = ran.result_of_step(0);
    assert!(started.contains("bash_1"), "{started}");
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        &format!(
            "{host:?}: processes of the run are left after the host exited: {:?}",
            sandbox.processes()
        ),
        || !carrier_runs(sandbox.token(), "sleep 300") && sandbox.processes().is_empty(),
    )
    .await;
}

/// A step's gate: `bash_1` (an `echo done` command) has printed `done` to its log and
/// its process is gone, so the next result is the first that may tell its end.
pub(super) fn bash_1_done(sandbox: &Sandbox) -> impl Fn() -> bool + Send + Sync + 'static {
    let user_dir = sandbox.user_dir();
    let token = sandbox.token().to_owned();
    move || task_log_ends_with(&user_dir, "bash_1", "done\n") && !carrier_runs(&token, "echo done")
}

/// Whether `task`'s log under `user_dir` ends with `tail`.
pub(super) fn task_log_ends_with(user_dir: &std::path::Path, task: &str, tail: &str) -> bool {
    let Ok(sessions) = std::fs::read_dir(user_dir.join("sessions")) else {
        return false;
    };
    sessions.flatten().any(|session| {
        std::fs::read_dir(session.path().join("tasks")).is_ok_and(|logs| {
            logs.flatten().any(|log| {
                log.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{task}."))
                    && std::fs::read_to_string(log.path()).is_ok_and(|text| text.ends_with(tail))
            })
        })
    })
}

/// Whether a result states exit code 0, as structured content (`"exit_code":0`) or as
/// text.
fn mentions_exit_code_0(result: &str) -> bool {
    result.contains("\"exit_code\":0")
        || result.contains("exit code 0")
        || result.contains("exited 0")
}

/// How many `<task-notification>` blocks of `task` a result holds, however the host
/// rendered it (the block's own text, or inside a JSON string): a block is the only
/// place a `<task-id>` element appears.
/// bash_1's notification was shown exactly once over the conversation's `results`.
fn assert_bash_1_shown_once(host: Host, results: &[String]) {
    let shown: usize = results
        .iter()
        .map(|result| blocks_of(result, "bash_1"))
        .sum();
    assert_eq!(
        shown, 1,
        "{host:?} showed the notification {shown} times over the conversation:\n{results:#?}"
    );
}

pub(super) fn blocks_of(result: &str, task: &str) -> usize {
    result
        .matches(&format!("<task-id>{task}</task-id>"))
        .count()
}
