//! `labels`: offered only where the context places tasks on a fleet, checked, and
//! refused clearly where it cannot work.

use insta::assert_snapshot;
use serde_json::json;
use zidane_context::MockContext;
use zidane_tools::BackgroundGate;

use super::common::{Harness, TASKS_DIR, shell_spec, show};

#[test]
fn labels_are_in_the_schema_and_description_only_on_a_fleet() {
    let with = shell_spec(BackgroundGate::open().with_placement(true));
    assert_eq!(
        with.input_schema["properties"]["labels"]["type"],
        json!("array"),
        "{}",
        with.input_schema
    );
    assert!(
        with.description.contains("`labels`"),
        "{}",
        with.description
    );

    let without = shell_spec(BackgroundGate::open());
    assert!(without.input_schema["properties"].get("labels").is_none());
    assert!(!without.description.contains("labels"));
    let closed = BackgroundGate::closed(zidane_tools::GateReason::Disabled).with_placement(true);
    assert!(!closed.placement());
}

#[tokio::test]
async fn the_gate_follows_the_contexts_capability() {
    let plain = Harness::new().await;
    assert!(!plain.context.gate().placement());
    let fleet = Harness::with(MockContext::new().with_placement(), Some(TASKS_DIR)).await;
    assert!(fleet.context.gate().placement());
}

#[tokio::test]
async fn labels_on_a_fleet_start_the_task() {
    let harness = Harness::with(MockContext::new().with_placement(), Some(TASKS_DIR)).await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "train.py", "run_in_background": true, "labels": ["gpu", "gpu"] }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(
        output.text.starts_with("Started bash_1 (pid "),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn labels_where_tasks_run_on_one_machine_are_a_clear_error() {
    let harness = Harness::new().await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "train.py", "run_in_background": true, "labels": ["gpu"] }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything());
    assert_snapshot!("shell_labels_unavailable", show(&output));
}

#[tokio::test]
async fn a_label_that_is_none_or_labels_in_the_foreground_are_refused() {
    let harness = Harness::with(MockContext::new().with_placement(), Some(TASKS_DIR)).await;
    for (args, says) in [
        (
            json!({ "command": "x", "run_in_background": true, "labels": ["two words"] }),
            "\"two words\"",
        ),
        (
            json!({ "command": "x", "run_in_background": true, "labels": [""] }),
            "label \"\"",
        ),
        (
            json!({ "command": "x", "run_in_background": true, "labels": vec!["l"; 17] }),
            "at most 16",
        ),
        (json!({ "command": "x", "labels": ["gpu"] }), "foreground"),
    ] {
        let output = harness.call("shell", args.clone()).await;
        assert!(output.is_error, "{args}: {}", output.text);
        assert!(output.text.contains(says), "{args}: {}", output.text);
    }
    assert!(!harness.ran_anything());
}
