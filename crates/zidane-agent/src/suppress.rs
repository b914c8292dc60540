//! Suppression: what a finished tool call tells the model about a task's exit, read from
//! the tool's structured `data`.
//!
//! | call | acknowledges |
//! |---|---|
//! | `shell` with `{"exit": …}` (a foreground command run as a task that ended in time) | that task's exit |
//! | `shell_kill` with `{"exit": …}` | that task's exit |
//! | `wait_task` with `{"exit": …}` | that task's exit |
//! | `wait_task` with `{"timed_out": true}` | nothing (the task still runs) |
//! | `read_file` of a path | the exit of the task whose log it is, if the task had ended before the read began |

use std::path::PathBuf;

use zidane_context::{TaskExitInfo, TaskId};
use zidane_tools::{READ_FILE, SHELL, SHELL_KILL, ToolOutput, WAIT_TASK};

/// What a tool call may have told the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Acknowledgement {
    /// The call reported this task's exit.
    Exit(TaskId),
    /// The call read this file (a task log, maybe).
    Read(PathBuf),
}

/// Reads the acknowledgement of a call to the tool named `tool` (its own name, aliases
/// resolved). Anything unexpected in `data` acknowledges nothing.
pub(crate) fn acknowledgement(tool: &str, output: &ToolOutput) -> Option<Acknowledgement> {
    match tool {
        SHELL | SHELL_KILL | WAIT_TASK => exit_of(&output.data).map(Acknowledgement::Exit),
        READ_FILE if !output.is_error => output
            .data
            .get("path")
            .and_then(serde_json::Value::as_str)
            .map(|path| Acknowledgement::Read(PathBuf::from(path))),
        _ => None,
    }
}

fn exit_of(data: &serde_json::Value) -> Option<TaskId> {
    let exit = data.get("exit")?;
    serde_json::from_value::<TaskExitInfo>(exit.clone())
        .ok()
        .map(|exit| exit.task_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exit_json(id: &str) -> serde_json::Value {
        json!({
            "task_id": id, "status": "exited", "exit_code": 0, "signal": null,
            "output_path": "/t/bash_1.log", "duration_ms": 5, "command": "make"
        })
    }

    #[test]
    fn kill_and_completed_wait_acknowledge_the_exit() {
        let id = TaskId::parse("bash_1").ok();
        for tool in [SHELL, SHELL_KILL, WAIT_TASK] {
            let output = ToolOutput::ok("done", json!({ "exit": exit_json("bash_1") }));
            assert_eq!(
                acknowledgement(tool, &output),
                id.map(Acknowledgement::Exit)
            );
        }
    }

    #[test]
    fn timed_out_wait_and_errors_acknowledge_nothing() {
        let timed_out = ToolOutput::ok(
            "wait_task: timed out after 1s",
            json!({ "timed_out": true, "task_id": "bash_1", "output_path": "/t/x.log" }),
        );
        assert_eq!(acknowledgement(WAIT_TASK, &timed_out), None);
        assert_eq!(
            acknowledgement(SHELL_KILL, &ToolOutput::error("no such task")),
            None
        );
        let forged = ToolOutput::ok("x", json!({ "exit": { "task_id": "../etc" } }));
        assert_eq!(acknowledgement(SHELL_KILL, &forged), None);
        let failed_read = ToolOutput::error("not found");
        assert_eq!(acknowledgement(READ_FILE, &failed_read), None);
    }

    #[test]
    fn a_read_names_its_path_and_other_tools_nothing() {
        let read = ToolOutput::ok("1 line", json!({ "path": "/t/bash_1.log", "offset": 0 }));
        assert_eq!(
            acknowledgement(READ_FILE, &read),
            Some(Acknowledgement::Read("/t/bash_1.log".into()))
        );
        assert_eq!(acknowledgement(SHELL, &read), None);
    }
}
