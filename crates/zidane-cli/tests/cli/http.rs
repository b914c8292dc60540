//! `zidane mcp --http`, attacked with raw HTTP: a foreign `Origin` gets 403 and runs
//! nothing, a missing or wrong token 401; a token is generated into a private file when
//! none is given; `--no-token` serves without one; loopback only unless allowed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use crate::mcp_support::{BIN, WAIT};
use crate::support::NO_SWEEP;

/// A running `zidane mcp --http 127.0.0.1:0`.
pub struct Served {
    pub child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The generated token's file, when the server says it wrote one.
    pub token_file: Option<PathBuf>,
    /// The line after the URL: how to connect.
    pub how: String,
}

impl Served {
    /// `127.0.0.1:PORT`.
    pub fn authority(&self) -> &str {
        self.url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
    }

    pub fn port(&self) -> u16 {
        self.authority()
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// The generated token, read from its file as a user would.
    pub fn token(&self) -> String {
        let file = self.token_file.as_ref().expect("no token file printed");
        std::fs::read_to_string(file).unwrap().trim().to_owned()
    }

    /// SIGTERM, and the exit status within [`WAIT`].
    pub async fn stop(mut self) -> std::process::ExitStatus {
        let pid = i32::try_from(self.child.id().unwrap()).unwrap();
        kill(Pid::from_raw(pid), Signal::SIGTERM).unwrap();
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .unwrap()
            .unwrap()
    }
}

/// Starts `zidane mcp --http 127.0.0.1:0 ARGS`, with `ZIDANE_MCP_TOKEN` set to `token`
/// if given and no start-up sweep ([`NO_SWEEP`]), and reads what it prints up to how to
/// connect. The rest of its stderr is drained, so a later warning never meets a closed
/// pipe.
pub async fn start_http(args: &[&str], token: Option<&str>, dir: &Path) -> Served {
    start_http_with(args, token, dir, &[NO_SWEEP]).await
}

/// [`start_http`] with `env` added to the server's environment (in place of
/// [`NO_SWEEP`]).
pub async fn start_http_with(
    args: &[&str],
    token: Option<&str>,
    dir: &Path,
    env: &[(&str, &str)],
) -> Served {
    let mut command = Command::new(BIN);
    command
        .args(["mcp", "--http", "127.0.0.1:0", "--user-dir"])
        .arg(dir)
        .args(args)
        .envs(env.iter().copied())
        .env_remove("ZIDANE_MCP_TOKEN")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(token) = token {
        command.env("ZIDANE_MCP_TOKEN", token);
    }
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let (url, how) = tokio::time::timeout(WAIT, async {
        loop {
            let line = stderr.next_line().await.unwrap().expect("no URL printed");
            if let Some(url) = line.strip_prefix("zidane mcp: serving ") {
                let how = stderr
                    .next_line()
                    .await
                    .unwrap()
                    .expect("no how-to printed");
                return (url.to_owned(), how);
            }
        }
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let token_file = how
        .split_once("<the token in ")
        .map(|(_, rest)| PathBuf::from(rest.trim_end_matches('>')));
    Served {
        child,
        url,
        token_file,
        how,
    }
}

/// An HTTP answer: its status and headers (names in lower case), and its body when read.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// One request on its own connection, headers as given. A 200 answer's body is read to
/// its end only when `read_body` (an event stream the server keeps open never ends).
async fn send(
    authority: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    read_body: bool,
) -> Answer {
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n"
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    tokio::time::timeout(WAIT, async {
        let mut stream = TcpStream::connect(authority).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut received = Vec::new();
        let head_end = loop {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection closed before the head");
            received.extend_from_slice(&chunk[..n]);
            if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
        };
        let head = String::from_utf8_lossy(&received[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap()[9..12].parse().unwrap();
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let mut rest = received[head_end + 4..].to_vec();
        if status != 200 || read_body {
            stream.read_to_end(&mut rest).await.unwrap();
        }
        Answer {
            status,
            headers,
            body: String::from_utf8_lossy(&rest).into_owned(),
        }
    })
    .await
    .expect("no answer in time")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// POSTs `initialize` with `headers`; the HTTP status.
async fn initialize_status(served: &Served, headers: &[(&str, &str)]) -> u16 {
    send(served.authority(), "POST", headers, INITIALIZE, true)
        .await
        .status
}

/// An MCP session opened with `auth`, ready for tool calls; its id.
async fn open_session(served: &Served, auth: &str) -> String {
    let answer = send(
        served.authority(),
        "POST",
        &[("Authorization", auth)],
        INITIALIZE,
        true,
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let initialized = send(
        served.authority(),
        "POST",
        &[("Authorization", auth), ("Mcp-Session-Id", &session)],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        true,
    )
    .await;
    assert_eq!(initialized.status, 202, "{}", initialized.body);
    session
}

/// A `shell` call that would create `file`, in the background when `background` (so
/// that, had it run, the session would list its task).
fn touch(id: u32, file: &Path, background: bool) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "shell", "arguments": {
            "command": format!("touch '{}'", file.display()),
            "run_in_background": background,
        }}
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_origin_gets_403_on_every_method_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let served = start_http(&[], Some("s3cret"), dir.path()).await;
    let auth = "Bearer s3cret";
    let session = open_session(&served, auth).await;
    let evil = [
        ("Authorization", auth),
        ("Mcp-Session-Id", session.as_str()),
        ("Origin", "http://evil.example"),
    ];

    // Commands write in a scratch dir of their own: the user dir is hidden from them.
    let scratch = tempfile::tempdir().unwrap();
    let pwned = scratch.path().join("pwned");
    let refused = send(
        served.authority(),
        "POST",
        &evil,
        &touch(2, &pwned, true),
        true,
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("--allow-origin"), "{}", refused.body);
    // A page of the server's own loopback name on another port is another site.
    let other_port = format!("http://localhost:{}", served.port() + 1);
    let mut lookalike = evil;
    lookalike[2].1 = &other_port;
    let refused = send(
        served.authority(),
        "POST",
        &lookalike,
        &touch(3, &pwned, true),
        true,
    )
    .await;
    assert_eq!(refused.status, 403);
    for null in ["null", "http://127.0.0.1.evil.example"] {
        let mut headers = evil;
        headers[2].1 = null;
        assert_eq!(
            send(
                served.authority(),
                "POST",
                &headers,
                &touch(4, &pwned, true),
                true
            )
            .await
            .status,
            403,
            "{null}"
        );
    }
    // A foreign page cannot open the event stream, nor end the session.
    assert_eq!(
        send(served.authority(), "GET", &evil, "", false)
            .await
            .status,
        403
    );
    assert_eq!(
        send(served.authority(), "DELETE", &evil, "", true)
            .await
            .status,
        403
    );

    // The same call from a client that sends no Origin runs, in the same session (the
    // DELETE above did not end it), and answers only once the command is done.
    let legit = scratch.path().join("legit");
    let ran = send(
        served.authority(),
        "POST",
        &evil[..2],
        &touch(5, &legit, false),
        true,
    )
    .await;
    assert_eq!(ran.status, 200, "{}", ran.body);
    assert!(legit.exists(), "the allowed call did not run: {}", ran.body);
    assert!(!pwned.exists(), "a refused call ran");
    // Had a refused call reached the session, it would have a task (they start theirs
    // in the background; the allowed call ran in the foreground, which leaves none).
    let tasks = send(
        served.authority(),
        "POST",
        &evil[..2],
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}"#,
        true,
    )
    .await;
    assert_eq!(tasks.status, 200);
    assert!(tasks.body.contains(r#""result""#), "{}", tasks.body);
    assert!(!tasks.body.contains("bash_"), "{}", tasks.body);
    assert!(!tasks.body.contains("pwned"), "{}", tasks.body);
    assert!(served.stop().await.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_origins_and_allowed_ones_pass_and_still_need_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let served = start_http(
        &[
            "--allow-origin",
            "https://app.example",
            "--allow-origin",
            "http://LOCALHOST:3000",
        ],
        Some("s3cret"),
        dir.path(),
    )
    .await;
    let own = [
        format!("http://localhost:{}", served.port()),
        format!("http://127.0.0.1:{}", served.port()),
        format!("http://[::1]:{}", served.port()),
    ];
    let allowed = own.iter().map(String::as_str).chain([
        "https://app.example",
        "https://app.example:443",
        "http://localhost:3000",
    ]);
    for origin in allowed {
        let with_token = [("Authorization", "Bearer s3cret"), ("Origin", origin)];
        assert_eq!(
            initialize_status(&served, &with_token).await,
            200,
            "{origin}"
        );
        assert_eq!(
            initialize_status(&served, &with_token[1..]).await,
            401,
            "{origin}"
        );
    }
    for refused in [
        "http://app.example",
        "https://app.example:8443",
        "http://localhost:3001",
    ] {
        let headers = [("Authorization", "Bearer s3cret"), ("Origin", refused)];
        assert_eq!(initialize_status(&served, &headers).await, 403, "{refused}");
    }
    assert!(served.stop().await.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_must_carry_the_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let served = start_http(&[], Some("s3cret"), dir.path()).await;
    assert!(served.token_file.is_none(), "{}", served.how);
    assert!(served.how.contains("<your token>"), "{}", served.how);
    let status = |auth: Option<&'static str>| {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let served = &served;
        async move { initialize_status(served, &headers).await }
    };
    assert_eq!(status(None).await, 401);
    assert_eq!(status(Some("Bearer wrong!")).await, 401);
    assert_eq!(status(Some("Bearer s3cret2")).await, 401);
    assert_eq!(status(Some("Basic czNjcmV0")).await, 401);
    assert_eq!(status(Some("Bearer s3cret")).await, 200);
    // Every method, the event stream and the session's end too.
    assert_eq!(
        send(served.authority(), "GET", &[], "", false).await.status,
        401
    );
    assert_eq!(
        send(served.authority(), "DELETE", &[], "", true)
            .await
            .status,
        401
    );
    assert!(served.stop().await.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_token_one_is_generated_into_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let served = start_http(&[], None, dir.path()).await;
    let file = served.token_file.clone().expect(&served.how);
    assert_eq!(file.parent().unwrap(), dir.path().join("mcp-http"));
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let token = served.token();
    assert!(token.len() >= 32, "{token}");
    assert_eq!(initialize_status(&served, &[]).await, 401);
    assert_eq!(
        initialize_status(&served, &[("Authorization", "Bearer wrong")]).await,
        401
    );
    let auth = format!("Bearer {token}");
    assert_eq!(
        initialize_status(&served, &[("Authorization", &auth)]).await,
        200
    );
    // A second server gets a token and a file of its own.
    let second = start_http(&[], None, dir.path()).await;
    assert_ne!(second.token_file, served.token_file);
    assert_ne!(second.token(), token);
    assert_eq!(
        initialize_status(&second, &[("Authorization", &auth)]).await,
        401
    );
    // A clean stop takes the file away.
    let status = second.stop().await;
    assert!(status.success(), "{status}");
    let status = served.stop().await;
    assert!(status.success(), "{status}");
    assert!(!file.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_token_serves_without_one_but_still_checks_the_origin() {
    let dir = tempfile::tempdir().unwrap();
    let served = start_http(&["--no-token"], None, dir.path()).await;
    assert!(served.how.contains("--no-token"), "{}", served.how);
    assert!(served.token_file.is_none());
    assert!(!dir.path().join("mcp-http").exists());
    assert_eq!(initialize_status(&served, &[]).await, 200);
    assert_eq!(
        initialize_status(&served, &[("Origin", "http://evil.example")]).await,
        403
    );
    assert!(served.stop().await.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn allowing_any_origin_takes_an_explicit_star() {
    let dir = tempfile::tempdir().unwrap();
    let served = start_http(&["--allow-origin", "*"], Some("s3cret"), dir.path()).await;
    let headers = [
        ("Authorization", "Bearer s3cret"),
        ("Origin", "http://evil.example"),
    ];
    assert_eq!(initialize_status(&served, &headers).await, 200);
    assert_eq!(initialize_status(&served, &headers[1..]).await, 401);
    assert!(served.stop().await.success());
}

/// Runs `zidane mcp ARGS` with `env`, expecting it to refuse; its stderr.
async fn refused(args: &[&str], env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(BIN);
    command
        .arg("mcp")
        .args(args)
        .arg("--user-dir")
        .arg(dir.path())
        .env_remove("ZIDANE_MCP_TOKEN")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let output = tokio::time::timeout(WAIT, command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(!output.status.success(), "{args:?} {env:?}");
    assert!(!dir.path().join("mcp-http").exists(), "{args:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_address_needs_allow_remote_and_a_token() {
    for (args, wants) in [
        (
            &["--http", "0.0.0.0:0"][..],
            &["not a loopback address"][..],
        ),
        (
            &["--http", "0.0.0.0:0", "--allow-remote"],
            &["needs a non-empty bearer token"],
        ),
        (
            &["--http", "0.0.0.0:0", "--allow-remote", "--no-token"],
            &["cannot be used with", "'--no-token'", "'--allow-remote'"],
        ),
        (
            &["--http", "127.0.0.1:0", "--allow-remote", "--no-token"],
            &["cannot be used with", "'--no-token'", "'--allow-remote'"],
        ),
    ] {
        let stderr = refused(args, &[]).await;
        for want in wants {
            assert!(
                stderr.contains(want),
                "{args:?}: wants {want:?} in {stderr}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_values_name_the_flag_and_what_it_accepts() {
    let http = ["--http", "127.0.0.1:0"];
    for (args, env, wants) in [
        (
            &["--bearer-token", ""][..],
            &[][..],
            &["--bearer-token", "non-empty"][..],
        ),
        (
            &["--bearer-token", "two words"],
            &[],
            &["--bearer-token", "no whitespace"],
        ),
        (
            &[],
            &[("ZIDANE_MCP_TOKEN", " ")],
            &["ZIDANE_MCP_TOKEN", "non-empty"],
        ),
        (
            &["--allow-origin", "localhost:3000"],
            &[],
            &["--allow-origin", "scheme://host:port", "\"localhost:3000\""],
        ),
        (
            &["--allow-origin", "http://localhost:3000/app"],
            &[],
            &["--allow-origin", "no path"],
        ),
        (
            &["--no-token", "--bearer-token", "x"],
            &[],
            &["cannot be used with", "'--no-token'", "'--bearer-token"],
        ),
    ] {
        let all: Vec<&str> = http.iter().chain(args).copied().collect();
        let stderr = refused(&all, env).await;
        for want in wants {
            assert!(
                stderr.contains(want),
                "{args:?} {env:?}: wants {want:?} in {stderr}"
            );
        }
    }
}
