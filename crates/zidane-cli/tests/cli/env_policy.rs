//! `zidane mcp` gives its commands the environment its policy computes — the config
//! file's `[env]` table with the `--env-*` flags over it — so the secrets in its own
//! environment never reach one; `--print-env-policy` shows the user what is withheld;
//! and configuration zidane does not accept stops it before it serves.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use zidane_test_support::env_of;

use crate::mcp_support::{StdioServer, UserDirBy};
use crate::support::{wait_bounded, zidane};

/// What the server's environment holds that no command may see.
const SECRETS: [(&str, &str); 5] = [
    ("OPENAI_API_KEY", "sk-cli-secret-1"),
    ("AWS_SECRET_ACCESS_KEY", "aws-cli-secret-2"),
    ("ZIDANE_MCP_TOKEN", "mcp-cli-secret-3"),
    ("GITHUB_TOKEN", "gh-cli-secret-4"),
    ("DB_PASSWORD", "pw-cli-secret-5"),
];

/// Bound on a run that exits by itself.
const BOUND: Duration = Duration::from_secs(60);

/// A config dir (for `XDG_CONFIG_HOME`) whose `zidane/config.toml` is `text`.
fn config_home(text: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("zidane")).unwrap();
    std::fs::write(home.path().join("zidane/config.toml"), text).unwrap();
    home
}

/// What a foreground `env` and a background one printed under a `zidane mcp` started
/// with `args` and with `env` (and [`SECRETS`]) in its environment.
async fn envs_seen(args: &[&str], env: &[(&str, &str)]) -> [(&'static str, String); 2] {
    let env: Vec<(&str, &str)> = SECRETS.iter().copied().chain(env.iter().copied()).collect();
    let mut server = StdioServer::start_configured(UserDirBy::Flag, args, &env).await;
    let foreground = server.call(1, "shell", json!({ "command": "env" })).await;
    let foreground = foreground["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let started = server.start_background(2, "env").await;
    let log = started["structuredContent"]["output_path"]
        .as_str()
        .unwrap()
        .to_owned();
    // The foreground command ran as a task too (it could have moved): not `bash_1`.
    let task_id = started["structuredContent"]["task_id"].clone();
    let waited = server
        .call(3, "wait_task", json!({ "task_id": task_id }))
        .await;
    assert_eq!(
        waited["structuredContent"]["exit"]["exit_code"], 0,
        "{waited}"
    );
    let background = std::fs::read_to_string(log).unwrap();
    [("foreground", foreground), ("background", background)]
}

/// No secret, by name or by value, in what a command printed.
fn assert_no_secret(label: &str, output: &str) {
    for (name, value) in SECRETS {
        assert!(
            !output.contains(value),
            "{label}: {name}'s value:\n{output}"
        );
        assert!(
            !env_of(output).contains_key(name),
            "{label}: {name}:\n{output}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_command_of_zidane_mcp_sees_the_secrets_of_its_environment() {
    let config = config_home(
        "[env]\nexclude = [\"zidane_test_excl*\"]\nset = { FROM_FILE = \"file-value\" }\n",
    );
    let config_dir = config.path().to_str().unwrap();
    let seen = envs_seen(
        &["--env-set", "FROM_FLAG=flag-value"],
        &[
            ("XDG_CONFIG_HOME", config_dir),
            ("ZIDANE_TEST_EXCLUDED", "excluded-value"),
            ("ZIDANE_TEST_PLAIN", "plain-value"),
        ],
    )
    .await;
    let home = std::env::var("HOME").unwrap();
    for (label, output) in seen {
        assert_no_secret(label, &output);
        let env = env_of(&output);
        assert!(
            env.get("PATH").is_some_and(|path| !path.is_empty()),
            "{label}:\n{output}"
        );
        assert_eq!(env.get("HOME"), Some(&home), "{label}");
        let get = |name: &str| env.get(name).map(String::as_str);
        assert_eq!(get("FROM_FLAG"), Some("flag-value"), "{label}");
        assert_eq!(get("FROM_FILE"), Some("file-value"), "{label}");
        assert_eq!(get("ZIDANE_TEST_PLAIN"), Some("plain-value"), "{label}");
        assert_eq!(get("ZIDANE_TEST_EXCLUDED"), None, "{label}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn inherit_core_passes_only_the_core_set_and_what_is_set() {
    let seen = envs_seen(
        &["--env-inherit", "core", "--env-set", "FROM_FLAG=flag-value"],
        &[("ZIDANE_TEST_PLAIN", "plain-value")],
    )
    .await;
    for (label, output) in seen {
        assert_no_secret(label, &output);
        let env = env_of(&output);
        assert!(
            env.contains_key("PATH") && env.contains_key("HOME"),
            "{label}"
        );
        assert_eq!(env.get("FROM_FLAG").map(String::as_str), Some("flag-value"));
        assert!(!env.contains_key("ZIDANE_TEST_PLAIN"), "{label}:\n{output}");
        assert!(!env.contains_key("ZIDANE_USER_DIR"), "{label}:\n{output}");
    }
}

#[test]
fn print_env_policy_names_what_is_withheld_and_never_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let empty_config = tempfile::tempdir().unwrap();
    let mut command = zidane(
        dir.path(),
        &[
            "mcp",
            "--print-env-policy",
            "--env-exclude",
            "ZIDANE_TEST_*",
        ],
    );
    command
        .envs(SECRETS)
        .env("ZIDANE_TEST_PLAIN", "plain-value")
        .env("XDG_CONFIG_HOME", empty_config.path());
    let output = wait_bounded(command.spawn().unwrap(), BOUND);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // One line a name, its reason after it: compared with the padding squeezed.
    let withheld: Vec<String> = stdout
        .split_once("withheld from tasks:\n")
        .unwrap_or_else(|| panic!("{stdout}"))
        .1
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for (name, value) in SECRETS {
        assert!(
            withheld
                .iter()
                .any(|line| line.starts_with(&format!("{name} "))),
            "{name} not listed:\n{stdout}"
        );
        assert!(!stdout.contains(value), "{name}'s value printed:\n{stdout}");
    }
    for line in [
        "ZIDANE_TEST_PLAIN exclude ZIDANE_TEST_*",
        "ZIDANE_MCP_TOKEN zidane's own credential",
        "OPENAI_API_KEY default exclude *KEY*",
    ] {
        assert!(withheld.iter().any(|l| l == line), "{line}:\n{stdout}");
    }
    assert!(stdout.contains("inherit:          all\n"), "{stdout}");
}

/// Runs `zidane ARGS` with `env`, expecting it to fail; its exit code and stderr.
fn refused(
    args: &[&str],
    env: &[(&str, &str)],
    config_home: Option<&Path>,
) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mut command = zidane(dir.path(), args);
    command
        .env_remove("ZIDANE_MCP_TOKEN")
        .env("XDG_CONFIG_HOME", config_home.unwrap_or(empty.path()))
        .envs(env.iter().copied());
    let output = wait_bounded(command.spawn().unwrap(), BOUND);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success(),
        "{args:?} {env:?} succeeded: {stderr}"
    );
    (output.status.code(), stderr)
}

#[test]
fn a_bad_process_path_stops_every_command_naming_what_it_accepts() {
    let bogus = [("ZIDANE_PROCESS_PATH", "bogus")];
    for args in [
        &["mcp"][..],
        &["mcp", "--http", "127.0.0.1:0"],
        &["sessions"],
        &["--demo", "-p", "hi"],
    ] {
        let (code, stderr) = refused(args, &bogus, None);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr,
            "zidane: ZIDANE_PROCESS_PATH=\"bogus\" is not a valid value: ZIDANE_PROCESS_PATH \
             accepts `portable` or `fast` (any case), or unset for the platform's default\n",
            "{args:?}"
        );
    }
}

#[test]
fn a_bad_sweep_setting_stops_every_command_naming_what_it_accepts() {
    let bogus = [("ZIDANE_SWEEP_ORPHANS", "sometimes")];
    for args in [&["mcp"][..], &["sessions"], &["--demo", "-p", "hi"]] {
        let (code, stderr) = refused(args, &bogus, None);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr,
            "zidane: ZIDANE_SWEEP_ORPHANS=\"sometimes\" is not a valid value: ZIDANE_SWEEP_ORPHANS \
             accepts `on` or `off` (also 1/0, true/false, yes/no; any case), or unset for on\n",
            "{args:?}"
        );
    }
}

#[test]
fn a_bad_policy_config_file_or_log_filter_stops_zidane_mcp() {
    let bad_file = config_home("[env]\ninherit = \"some\"\n");
    let (code, stderr) = refused(&["mcp"], &[], Some(bad_file.path()));
    assert_eq!(code, Some(1), "{stderr}");
    let path = bad_file.path().join("zidane/config.toml");
    assert!(
        stderr.starts_with(&format!("zidane: config file {}: [env]: ", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("all, core or none"), "{stderr}");

    let (_, stderr) = refused(&["mcp", "--env-inherit", "some"], &[], None);
    assert!(stderr.contains("all, core or none"), "{stderr}");

    let (_, stderr) = refused(&["mcp", "--env-set", "ZIDANE_MCP_TOKEN=x"], &[], None);
    assert!(
        stderr.contains("ZIDANE_MCP_TOKEN is zidane's own credential"),
        "{stderr}"
    );

    let (_, stderr) = refused(&["mcp", "--env-set", "NO_EQUALS_SIGN"], &[], None);
    assert!(stderr.contains("is not NAME=VALUE"), "{stderr}");

    let (_, stderr) = refused(&["mcp"], &[("RUST_LOG", "info,zidane=loud")], None);
    assert!(
        stderr.starts_with("zidane: RUST_LOG=\"info,zidane=loud\" is not a valid log filter"),
        "{stderr}"
    );
}
