//! `zidane mcp` over stdio: the session ends with stdin (or a signal), and takes every
//! task with it.

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use zidane_test_support::alive;

use crate::mcp_support::{StdioServer, UserDirBy, WAIT, assert_still_running};
use crate::support::owned_processes;

async fn start_tasks(server: &mut StdioServer) -> Vec<u32> {
    let mut pids = Vec::new();
    for (id, command) in [
        (1, "sleep 60"),
        (2, "trap '' TERM; sleep 60"),
        (3, "setsid sleep 60 & sleep 60"),
    ] {
        let started = server.start_background(id, command).await;
        pids.push(u32::try_from(started["structuredContent"]["pid"].as_u64().unwrap()).unwrap());
    }
    pids
}

/// Starts `bash_1`, a `sleep 60` in the background, with request id 1; its pid.
async fn start_sleeper(server: &mut StdioServer) -> u32 {
    let started = server.start_background(1, "sleep 60").await;
    u32::try_from(started["structuredContent"]["pid"].as_u64().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_stdin_ends_the_server_within_a_second_and_kills_every_task() {
    let mut server = StdioServer::start().await;
    let owner = server.pid();
    let pids = start_tasks(&mut server).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        owned_processes(owner).len() >= 4,
        "{:?}",
        owned_processes(owner)
    );
    let closed = Instant::now();
    drop(server.stdin.take());
    let status = tokio::time::timeout(WAIT, server.child.wait())
        .await
        .unwrap()
        .unwrap();
    let took = closed.elapsed();
    assert!(status.success(), "{status}");
    assert!(
        took < Duration::from_secs(1),
        "the server took {took:?} to exit"
    );
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived the session");
    }
    assert_eq!(owned_processes(owner), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_the_server_and_kills_every_task() {
    let mut server = StdioServer::start().await;
    let owner = server.pid();
    let pids = start_tasks(&mut server).await;
    kill(
        Pid::from_raw(i32::try_from(owner).unwrap()),
        Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::time::timeout(WAIT, server.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived the server");
    }
    assert_eq!(owned_processes(owner), Vec::<u32>::new());
}

/// A server killed with SIGKILL runs no teardown at all; its context's lifeline ends
/// every task, the one that left its session included, within moments.
#[tokio::test(flavor = "multi_thread")]
async fn a_sigkilled_server_leaves_nothing_running() {
    let mut server = StdioServer::start().await;
    let owner = server.pid();
    let pids = start_tasks(&mut server).await;
    zidane_test_support::poll_until(WAIT, Duration::from_millis(5), "the escapee runs", || {
        owned_processes(owner).len() >= 4
    })
    .await;
    kill(
        Pid::from_raw(i32::try_from(owner).unwrap()),
        Signal::SIGKILL,
    )
    .unwrap();
    let _ = tokio::time::timeout(WAIT, server.child.wait()).await;
    zidane_test_support::poll_until(
        Duration::from_secs(10),
        Duration::from_millis(5),
        &format!(
            "processes of the SIGKILLed server still run: {:?}",
            owned_processes(owner)
        ),
        || owned_processes(owner).is_empty(),
    )
    .await;
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived the server");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_rpc_does_not_end_the_session() {
    let mut server = StdioServer::start().await;
    let pid = start_sleeper(&mut server).await;
    server.send("{ this is not json").await;
    server
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#)
        .await;
    server.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"shell","arguments":"rm -rf /"}}"#).await;
    assert_still_running(&mut server, 9, pid).await;
    let unknown = server.request(10, "no/such/method", json!({})).await;
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
}

/// A request over the line limit, its id after the bulk, is answered with an error
/// naming the limit; a notification over it gets no answer; the session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_too_large_is_answered_with_an_error_and_the_session_goes_on() {
    let mut server = StdioServer::start().await;
    let bulk = "x".repeat(zidane_mcp::MAX_REQUEST_BYTES);
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"reason":"{bulk}"}}}}"#
        ))
        .await;
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"shell","arguments":{{"command":"echo {bulk}"}}}},"id":11}}"#
        ))
        .await;
    let refused = server.response(11).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("request too large: ")
            && message.contains(&format!(
                "over the limit of {} bytes",
                zidane_mcp::MAX_REQUEST_BYTES
            )),
        "{message}"
    );
    let echoed = server
        .call(12, "shell", json!({ "command": "echo still here" }))
        .await;
    assert!(
        echoed["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("still here"),
        "{echoed}"
    );
}

/// `notifications/cancelled` for a wait in progress ends the wait, never the task.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_wait_leaves_the_task_running() {
    let mut server = StdioServer::start().await;
    let pid = start_sleeper(&mut server).await;
    server
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait_task","arguments":{"task_id":"bash_1","timeout_ms":40000}}}"#)
        .await;
    server
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user pressed esc"}}"#)
        .await;
    assert_still_running(&mut server, 3, pid).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn zidane_user_dir_chooses_where_the_logs_go_as_for_every_other_command() {
    let mut server = StdioServer::start_with(UserDirBy::Env).await;
    let started = server.start_background(1, "echo hi").await;
    let text = started["content"][0]["text"].as_str().unwrap().to_owned();
    let user_dir = server._dir.path().canonicalize().unwrap();
    let log = text
        .split_whitespace()
        .find(|word| word.ends_with(".log"))
        .unwrap_or_else(|| panic!("no log path in {text}"));
    let log = std::path::Path::new(log).canonicalize().unwrap();
    assert!(
        log.starts_with(&user_dir),
        "{} is not under {}",
        log.display(),
        user_dir.display()
    );
    drop(server.stdin.take());
    let status = tokio::time::timeout(WAIT, server.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}
