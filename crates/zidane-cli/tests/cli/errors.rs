//! How the binary says an error: `zidane: ` and the error's whole chain, once, on stderr.

use std::time::Duration;

use zidane::models::{MODEL_ENV, OPENAI_API_KEY_ENV, OPENAI_BASE_URL_ENV, PROVIDER_ENV};

use crate::support::{wait_bounded, zidane};

/// Bound on a run that fails.
const BOUND: Duration = Duration::from_secs(60);

/// Runs `zidane ARGS` with `env`; its exit status and stderr.
fn fails(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = zidane(dir.path(), args);
    command.env_remove("ZIDANE_MCP_TOKEN");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = wait_bounded(command.spawn().unwrap(), BOUND);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn mcp_on_a_remote_address_without_a_token_says_why() {
    let (code, stderr) = fails(&["mcp", "--http", "0.0.0.0:0"], &[]);
    assert_eq!(code, Some(1));
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_model_request_that_cannot_connect_prints_the_clients_chain() {
    // A port that was free a moment ago: nothing listens there now.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let (code, stderr) = fails(
        &["-p", "hi"],
        &[
            (PROVIDER_ENV, "openai"),
            (MODEL_ENV, "scripted"),
            (OPENAI_BASE_URL_ENV, &base_url),
            (OPENAI_API_KEY_ENV, "test"),
        ],
    );
    assert_eq!(code, Some(1));
    // The port, and the errno that differs between Unixes.
    let filters = vec![
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[port]"),
        (r"os error \d+", "os error [errno]"),
    ];
    insta::with_settings!({ filters => filters }, {
        insta::assert_snapshot!(stderr);
    });
}
