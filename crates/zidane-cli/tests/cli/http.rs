//! `zidane mcp --http`: loopback only unless allowed, and a bearer token on every
//! request when one is set.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use crate::mcp_support::{BIN, WAIT};

/// Starts `zidane mcp --http 127.0.0.1:0` and returns it with the URL it prints.
pub async fn start_http(token: Option<&str>, dir: &std::path::Path) -> (Child, String) {
    let mut command = Command::new(BIN);
    command
        .args(["mcp", "--http", "127.0.0.1:0", "--user-dir"])
        .arg(dir)
        .env_remove("ZIDANE_MCP_TOKEN")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(token) = token {
        command.env("ZIDANE_MCP_TOKEN", token);
    }
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(WAIT, async {
        loop {
            let line = stderr.next_line().await.unwrap().expect("no URL printed");
            if let Some(url) = line.strip_prefix("zidane mcp: serving ") {
                return url.to_owned();
            }
        }
    })
    .await
    .unwrap();
    (child, url)
}

/// POSTs an `initialize` request and returns the HTTP status.
async fn post_status(url: &str, authorization: Option<&str>) -> u16 {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_must_carry_the_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = start_http(Some("s3cret"), dir.path()).await;
    assert_eq!(post_status(&url, None).await, 401);
    assert_eq!(post_status(&url, Some("Bearer wrong!")).await, 401);
    assert_eq!(post_status(&url, Some("Basic czNjcmV0")).await, 401);
    assert_eq!(post_status(&url, Some("Bearer s3cret")).await, 200);
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_without_a_token_is_open_to_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = start_http(None, dir.path()).await;
    assert_eq!(post_status(&url, None).await, 200);
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_address_needs_allow_remote_and_a_token() {
    let dir = tempfile::tempdir().unwrap();
    for (args, message) in [
        (vec!["--http", "0.0.0.0:0"], "not a loopback address"),
        (
            vec!["--http", "0.0.0.0:0", "--allow-remote"],
            "needs a non-empty bearer token",
        ),
    ] {
        let output = Command::new(BIN)
            .arg("mcp")
            .args(&args)
            .arg("--user-dir")
            .arg(dir.path())
            .env_remove("ZIDANE_MCP_TOKEN")
            .output()
            .await
            .unwrap();
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
