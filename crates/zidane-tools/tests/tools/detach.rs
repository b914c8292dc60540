//! `detach`: offered only where the context can detach tasks, passed through to the
//! context, and refused clearly where it cannot work.

use insta::{assert_json_snapshot, assert_snapshot};
use serde_json::json;
use zidane_context::MockContext;
use zidane_tools::BackgroundGate;

use super::common::{Harness, TASKS_DIR, shell_spec, show};

#[test]
fn detach_is_in_the_schema_and_description_only_where_the_gate_allows_it() {
    let with = shell_spec(BackgroundGate::open().with_detach(true));
    assert_json_snapshot!("schema_shell_detach", with.input_schema);
    assert_snapshot!("description_shell_detach", with.description);
    assert!(with.description.contains("`detach: true`"));

    let without = shell_spec(BackgroundGate::open());
    assert!(without.input_schema["properties"].get("detach").is_none());
    assert!(!without.description.contains("detach"));
    // A closed gate never offers it, whatever the context says.
    let closed = BackgroundGate::closed(zidane_tools::GateReason::Disabled).with_detach(true);
    assert!(!closed.detach());
    assert!(
        shell_spec(closed).input_schema["properties"]
            .get("detach")
            .is_none()
    );
}

#[tokio::test]
async fn the_gate_follows_the_contexts_capability() {
    let plain = Harness::new().await;
    assert!(!plain.context.gate().detach());
    let detaching = Harness::with(MockContext::new().with_detach(), Some(TASKS_DIR)).await;
    assert!(detaching.context.gate().detach());
}

#[tokio::test]
async fn a_detached_start_says_so_and_reaches_the_context() {
    let harness = Harness::with(MockContext::new().with_detach(), Some(TASKS_DIR)).await;
    let output = harness
        .call("shell", json!({ "command": "npm run dev", "detach": true }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(
        output.text.starts_with("Started bash_d1 (pid ")
            && output.text.contains(
                ", detached: keeps running after this session). Output: \
                 /session/tasks/bash_d1.mock.log"
            ),
        "{}",
        output.text
    );
    assert_snapshot!("shell_detached_started", show(&output));
    let entry = harness.mock.task("bash_d1".parse().unwrap()).unwrap();
    assert!(entry.detached);

    // With `run_in_background: true` too, the same; a normal start is unchanged.
    let both = harness
        .call(
            "shell",
            json!({ "command": "x", "detach": true, "run_in_background": true }),
        )
        .await;
    assert!(
        both.text.starts_with("Started bash_d2 (pid"),
        "{}",
        both.text
    );
    let normal = harness
        .call(
            "shell",
            json!({ "command": "y", "run_in_background": true, "detach": false }),
        )
        .await;
    assert!(
        normal.text.starts_with("Started bash_1 (pid 1"),
        "{}",
        normal.text
    );
    assert!(!normal.text.contains("detached"), "{}", normal.text);
}

#[tokio::test]
async fn detach_where_the_context_cannot_is_a_clear_error() {
    let harness = Harness::new().await;
    let output = harness
        .call("shell", json!({ "command": "npm run dev", "detach": true }))
        .await;
    assert!(output.is_error);
    assert!(output.text.contains("`detach`"), "{}", output.text);
    assert!(!harness.ran_anything());
    assert_snapshot!("shell_detach_unavailable", show(&output));
}

#[tokio::test]
async fn detach_without_background_is_a_contradiction() {
    let harness = Harness::with(MockContext::new().with_detach(), Some(TASKS_DIR)).await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "make", "detach": true, "run_in_background": false }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything());
    assert_snapshot!("shell_detach_in_the_foreground", show(&output));
}
