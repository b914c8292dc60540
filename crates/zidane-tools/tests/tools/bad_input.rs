//! Every kind of bad input: an error result telling the model what to fix, nothing run,
//! no panic.

use insta::assert_snapshot;
use serde_json::{Value, json};

use super::common::Harness;

#[tokio::test]
async fn bad_inputs_are_error_results_and_run_nothing() {
    let cases: Vec<(&str, Value)> = vec![
        // not an object
        ("shell", Value::Null),
        ("shell", json!("ls")),
        ("read_file", json!(["/etc/hosts"])),
        // missing fields
        ("shell", json!({})),
        ("shell_kill", json!({})),
        ("wait_task", json!({ "timeout_ms": 10 })),
        ("read_file", json!({ "offset": 2 })),
        // wrong types
        ("shell", json!({ "command": 42 })),
        ("shell", json!({ "command": "ls", "timeout_ms": "soon" })),
        (
            "shell",
            json!({ "command": "ls", "run_in_background": "yes" }),
        ),
        ("shell_kill", json!({ "task_id": 1 })),
        (
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": 1.5 }),
        ),
        ("read_file", json!({ "path": "/x", "offset": "last" })),
        ("read_file", json!({ "path": "/x", "limit": "all" })),
        // misspellings of declared arguments
        (
            "shell",
            json!({ "command": "ls", "run_in_backgroud": true }),
        ),
        ("shell", json!({ "command": "ls", "timeout": 1000 })),
        ("wait_task", json!({ "task_id": "bash_1", "timeoutMs": 10 })),
        ("read_file", json!({ "path": "/x", "Limit": 5 })),
        // invalid values
        ("shell", json!({ "command": "" })),
        ("shell", json!({ "command": "  \n" })),
        ("shell", json!({ "command": "echo a\u{0}b" })),
        ("shell", json!({ "command": "ls", "timeout_ms": 0 })),
        ("shell", json!({ "command": "ls", "timeout_ms": -5 })),
        ("shell_kill", json!({ "task_id": "../etc" })),
        ("shell_kill", json!({ "task_id": "bash_01" })),
        ("wait_task", json!({ "task_id": "bash_1/.." })),
        ("wait_task", json!({ "task_id": "bash_1", "timeout_ms": 0 })),
        (
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": -1 }),
        ),
        ("read_file", json!({ "path": "" })),
        ("read_file", json!({ "path": "/x\u{0}y" })),
        ("read_file", json!({ "path": "/x", "limit": 0 })),
        // unknown tools
        ("bash", json!({ "command": "ls" })),
        ("shell_output", json!({ "task_id": "bash_1" })),
        ("", json!({})),
    ];
    let harness = Harness::new().await;
    let mut report = String::new();
    for (tool, input) in cases {
        let output = harness.call(tool, input.clone()).await;
        assert!(
            output.is_error,
            "{tool} {input} was accepted: {}",
            output.text
        );
        report.push_str(&format!("{tool} {input}\n  → {}\n", output.text));
    }
    assert!(!harness.ran_anything(), "bad input ran something");
    assert_snapshot!("bad_inputs", report);
}

/// Arguments a tool does not declare and that resemble none it does: one a host adds to
/// every tool (Gemini CLI's `wait_for_previous`) runs the call as if it were absent;
/// any other runs it too, and the result ends by naming what was ignored.
#[tokio::test]
async fn arguments_a_host_adds_never_stop_a_call() {
    let harness = Harness::new().await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "echo ran", "wait_for_previous": true }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(harness.ran_anything(), "the call did not run");
    assert!(
        !output.text.contains("wait_for_previous"),
        "{}",
        output.text
    );

    let output = harness
        .call("shell", json!({ "command": "echo ran", "cwd": "/tmp" }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_snapshot!("an_ignored_argument", output.text);
}
