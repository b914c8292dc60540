//! `wait_task` with `until`, on real processes: ready on a log line, a port or a URL;
//! fails fast when the task ends first; says what it last saw when it times out.
#![cfg(unix)]

use serde_json::json;

use super::process::Session;

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_returns_the_matching_line_and_its_groups_while_the_task_runs() {
    let session = Session::new().await;
    let id = session
        .start("echo starting; sleep 0.2; echo 'Listening on port 4321'; sleep 30")
        .await;
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": id, "until": { "pattern": "Listening on port (\\d+)" } }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(
        output
            .text
            .starts_with("wait_task: bash_1 is ready: line 2 matched: Listening on port 4321 (groups: 1=\"4321\")"),
        "{}",
        output.text
    );
    assert_eq!(output.data["ready"], true);
    assert_eq!(output.data["groups"], json!(["4321"]));
    assert_eq!(output.data["line_number"], 2);
    assert!(output.data.get("exit").is_none(), "the task still runs");
    let kill = session.call("shell_kill", json!({ "task_id": id })).await;
    assert!(kill.text.contains("killed"), "{}", kill.text);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_now_skips_what_was_already_written() {
    let session = Session::new().await;
    let id = session.start("echo ready; sleep 30").await;
    let from_start = session
        .call(
            "wait_task",
            json!({ "task_id": id, "until": { "pattern": "^ready$" } }),
        )
        .await;
    assert!(from_start.text.contains("is ready"), "{}", from_start.text);
    let from_now = session
        .call(
            "wait_task",
            json!({ "task_id": id, "timeout_ms": 300, "until": { "pattern": "^ready$", "from": "now" } }),
        )
        .await;
    assert!(!from_now.is_error, "{}", from_now.text);
    assert!(
        from_now.text.starts_with(
            "wait_task: timed out after 300ms waiting for a line matching `^ready$`; bash_1 is still running."
        ),
        "{}",
        from_now.text
    );
    assert_eq!(from_now.data["timed_out"], true);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ends_first_fails_fast_with_its_exit_and_last_lines() {
    let session = Session::new().await;
    let id = session
        .start("echo 'compiling'; echo 'error: port 3000 in use' >&2; exit 3")
        .await;
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": id, "timeout_ms": 60000, "until": { "pattern": "Listening" } }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("exited 3"), "{}", output.text);
    assert!(
        output.text.starts_with(
            "bash_1 ended before it was ready (waiting for a line matching `Listening`): "
        ),
        "{}",
        output.text
    );
    assert!(
        output
            .text
            .contains(".log Last lines of its log:\n  compiling\n  error: port 3000 in use"),
        "{}",
        output.text
    );
    assert_eq!(
        output.data["exit"]["exit_code"], 3,
        "the exit is reported, so it counts as known"
    );
    assert_eq!(output.data["ready"], false);
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_and_a_url_are_ready_once_the_server_answers() {
    let session = Session::new().await;
    let port = free_port();
    let id = session
        .start(&format!(
            "sleep 0.3; exec python3 -m http.server {port} --bind 127.0.0.1"
        ))
        .await;
    let by_port = session
        .call(
            "wait_task",
            json!({ "task_id": id, "until": { "port": port } }),
        )
        .await;
    assert!(
        by_port.text.starts_with(&format!(
            "wait_task: bash_1 is ready: 127.0.0.1:{port} accepted a connection after"
        )),
        "{}",
        by_port.text
    );
    let url = format!("http://127.0.0.1:{port}/");
    let by_url = session
        .call(
            "wait_task",
            json!({ "task_id": id, "until": { "url": url } }),
        )
        .await;
    assert!(
        by_url
            .text
            .contains(&format!("GET {url} answered 200 after")),
        "{}",
        by_url.text
    );
    assert_eq!(by_url.data["status"], 200);
    session.call("shell_kill", json!({ "task_id": id })).await;
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_that_never_opens_times_out_with_the_last_connection_error() {
    let session = Session::new().await;
    let port = free_port();
    let id = session.start("sleep 30").await;
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": id, "timeout_ms": 400, "until": { "port": port } }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(
        output.text.contains("bash_1 is still running"),
        "{}",
        output.text
    );
    assert!(
        output.text.contains(&format!(
            "Last probe: connect to 127.0.0.1:{port}: Connection refused"
        )),
        "{}",
        output.text
    );
    assert!(
        output.data["last_error"]
            .as_str()
            .unwrap()
            .contains("refused")
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_until_is_a_clear_error_and_waits_for_nothing() {
    let session = Session::new().await;
    let id = session.start("sleep 30").await;
    let output = session
        .call(
            "wait_task",
            json!({ "task_id": id, "until": { "url": "http://example.com/" } }),
        )
        .await;
    assert!(output.is_error);
    assert_eq!(
        output.text,
        "wait_task: invalid input: `until.url` needs an IP address or localhost as its host, got \"example.com\""
    );
    session.close().await;
}

/// A context that cannot reach its tasks' machine cannot check a port there: the wait
/// says so at once and points at the log-line form, which every context can follow.
#[tokio::test]
async fn a_context_that_cannot_probe_says_so_and_offers_a_log_line() {
    let harness = crate::common::Harness::new().await;
    let id = harness.start("serve").await;
    let output = harness
        .call(
            "wait_task",
            json!({ "task_id": id.to_string(), "until": { "port": 8080 } }),
        )
        .await;
    assert!(output.is_error, "{}", output.text);
    assert_eq!(
        output.text,
        "wait_task: this execution context cannot check a port or a URL where its tasks run; \
         wait for a line of the task's log instead, with `until: {\"pattern\": …}`"
    );
}
