//! Spawning `zidane mcp`, speaking line-delimited JSON-RPC to it, and finding what it
//! left behind.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::support::NO_SWEEP;

/// Longest a test waits for something that should happen.
pub const WAIT: Duration = Duration::from_secs(10);

pub const BIN: &str = env!("CARGO_BIN_EXE_zidane");

/// `zidane mcp` over stdio, speaking raw JSON-RPC.
pub struct StdioServer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: Lines<BufReader<ChildStdout>>,
    /// Holds the user dir for the life of the server.
    pub _dir: tempfile::TempDir,
}

/// How a test tells `zidane mcp` where its user dir is.
pub enum UserDirBy {
    /// `--user-dir DIR`.
    Flag,
    /// `ZIDANE_USER_DIR=DIR`, as every other command reads it.
    Env,
}

impl StdioServer {
    pub async fn start() -> Self {
        Self::start_with(UserDirBy::Flag).await
    }

    pub async fn start_with(by: UserDirBy) -> Self {
        Self::start_configured(by, &[], &[]).await
    }

    /// `zidane mcp ARGS` with `env` added to its environment, without the start-up sweep
    /// unless `env` turns it on ([`NO_SWEEP`](crate::support::NO_SWEEP)).
    pub async fn start_configured(by: UserDirBy, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_in(tempfile::tempdir().unwrap(), by, args, env).await
    }

    /// [`StdioServer::start_configured`] on a user dir the test prepared, held for the
    /// life of the server.
    pub async fn start_in(
        dir: tempfile::TempDir,
        by: UserDirBy,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mut command = Command::new(BIN);
        command
            .arg("mcp")
            .args(args)
            .env(NO_SWEEP.0, NO_SWEEP.1)
            .envs(env.iter().copied());
        match by {
            UserDirBy::Flag => command.arg("--user-dir").arg(dir.path()),
            UserDirBy::Env => command.env("ZIDANE_USER_DIR", dir.path()),
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut server = Self {
            child,
            stdin,
            stdout,
            _dir: dir,
        };
        let init = server
            .request(
                0,
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" }
                }),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "zidane");
        server
            .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string())
            .await;
        server
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its response (notifications in between are skipped).
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send(&request.to_string()).await;
        self.response(id).await
    }

    /// Waits for the response to `id` (notifications and other responses are skipped).
    pub async fn response(&mut self, id: u64) -> Value {
        tokio::time::timeout(WAIT, async {
            loop {
                let line = self
                    .stdout
                    .next_line()
                    .await
                    .unwrap()
                    .expect("stdout closed");
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == id {
                    return message;
                }
            }
        })
        .await
        .expect("no response")
    }

    /// Calls a tool; returns the result object.
    pub async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let response = self
            .request(
                id,
                "tools/call",
                json!({ "name": name, "arguments": arguments }),
            )
            .await;
        response["result"].clone()
    }

    /// Starts `command` in the background with the `shell` tool (request `id`); returns
    /// the result object.
    pub async fn start_background(&mut self, id: u64, command: &str) -> Value {
        self.call(
            id,
            "shell",
            json!({ "command": command, "run_in_background": true }),
        )
        .await
    }
}

/// The session still answers (request `id`), and `bash_1` (pid `pid`) still runs.
pub async fn assert_still_running(server: &mut StdioServer, id: u64, pid: u32) {
    let listed = server.call(id, "list_tasks", json!({})).await;
    assert!(
        listed["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("bash_1  running"),
        "{listed}"
    );
    assert!(
        zidane_test_support::alive(pid),
        "bash_1 (pid {pid}) no longer runs"
    );
}
