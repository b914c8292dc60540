//! read_file over a mock: numbered windows and their footers.

use insta::assert_snapshot;
use serde_json::json;

use super::common::{Harness, show};

fn ten_lines() -> String {
    (1..=10).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn whole_file() {
    let harness = Harness::new().await;
    harness
        .mock
        .set_file("/w/notes.txt", "alpha\nbeta\n\tindented\n");
    let output = harness
        .call("read_file", json!({ "path": "/w/notes.txt" }))
        .await;
    assert_snapshot!("read_file_whole", show(&output));
}

#[tokio::test]
async fn window_with_lines_remaining() {
    let harness = Harness::new().await;
    harness.mock.set_file("/w/log.txt", ten_lines());
    let output = harness
        .call(
            "read_file",
            json!({ "path": "/w/log.txt", "offset": 3, "limit": 4 }),
        )
        .await;
    assert_snapshot!("read_file_window", show(&output));
}

#[tokio::test]
async fn last_window_reaches_the_end() {
    let harness = Harness::new().await;
    harness.mock.set_file("/w/log.txt", ten_lines());
    let output = harness
        .call(
            "read_file",
            json!({ "path": "/w/log.txt", "offset": 7, "limit": 4 }),
        )
        .await;
    assert_snapshot!("read_file_last_window", show(&output));
}

#[tokio::test]
async fn offset_past_the_end() {
    let harness = Harness::new().await;
    harness.mock.set_file("/w/log.txt", ten_lines());
    let output = harness
        .call("read_file", json!({ "path": "/w/log.txt", "offset": 50 }))
        .await;
    assert_snapshot!("read_file_past_end", show(&output));
}

#[tokio::test]
async fn empty_file() {
    let harness = Harness::new().await;
    harness.mock.set_file("/w/empty.txt", "");
    let output = harness
        .call("read_file", json!({ "path": "/w/empty.txt" }))
        .await;
    assert_snapshot!("read_file_empty", show(&output));
}

#[tokio::test]
async fn a_task_log() {
    let harness = Harness::new().await;
    let task_id = harness.start("npm run build").await;
    assert!(harness.mock.write_output(task_id, b"compiling\ndone\n"));
    let output = harness
        .call(
            "read_file",
            json!({ "path": "/session/tasks/bash_1.mock.log" }),
        )
        .await;
    assert_snapshot!("read_file_task_log", show(&output));
}

#[tokio::test]
async fn missing_file_is_an_error() {
    let harness = Harness::new().await;
    let output = harness
        .call("read_file", json!({ "path": "/w/nope.txt" }))
        .await;
    assert!(output.is_error);
    assert_snapshot!("read_file_missing", show(&output));
}

#[tokio::test]
async fn a_negative_offset_reads_the_last_lines() {
    let harness = Harness::new().await;
    harness.mock.set_file("/w/log.txt", ten_lines());
    let output = harness
        .call("read_file", json!({ "path": "/w/log.txt", "offset": -3 }))
        .await;
    assert_snapshot!("read_file_last_three", show(&output));
    let earlier = harness
        .call(
            "read_file",
            json!({ "path": "/w/log.txt", "offset": -6, "limit": 2 }),
        )
        .await;
    assert!(
        earlier.text.starts_with("     5\tline 5\n     6\tline 6\n"),
        "{}",
        earlier.text
    );
    let beyond = harness
        .call("read_file", json!({ "path": "/w/log.txt", "offset": -50 }))
        .await;
    assert!(
        beyond.text.starts_with("     1\tline 1\n"),
        "{}",
        beyond.text
    );
    assert!(beyond.text.ends_with("(end of file; 10 lines in total)"));
}
