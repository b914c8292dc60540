//! A worker's tasks get the environment its policy computes from the worker's own: the
//! secrets in the worker's environment never reach a task, in the background or the
//! foreground, while what the policy passes and sets, and a start's own variables, do.
//! A worker whose configuration is bad stops before it does anything.

use std::collections::BTreeMap;

use zidane_context::{
    BackgroundOptions, CancellationToken, ExecOptions, ExecutionContext, TaskStatus,
};

use zidane_test_support::env_of;

use crate::support::{WAIT, cluster, worker_refuses};

/// What the worker's environment holds that no task may see.
const SECRETS: [(&str, &str); 5] = [
    ("OPENAI_API_KEY", "sk-worker-secret-1"),
    ("AWS_SECRET_ACCESS_KEY", "aws-worker-secret-2"),
    ("ZIDANE_MCP_TOKEN", "mcp-worker-secret-3"),
    ("GITHUB_TOKEN", "gh-worker-secret-4"),
    ("DB_PASSWORD", "pw-worker-secret-5"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_task_on_a_worker_sees_the_secrets_of_its_environment() {
    let Some(mut cluster) = cluster(&[]).await else {
        return;
    };
    let worker = cluster.spawn_worker_with("w1", "127.0.0.1:0".parse().unwrap(), |command| {
        command
            .envs(SECRETS)
            .env("ZIDANE_TEST_PLAIN", "plain-value")
            .env("ZIDANE_TEST_EXCLUDED", "excluded-value")
            .args(["--env-set", "FROM_FLAG=flag-value"])
            .args(["--env-exclude", "zidane_test_excl*"]);
    });
    cluster.workers.push(worker);
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    let own = BTreeMap::from([("OWN".to_owned(), "own-value".to_owned())]);

    let mut exec = ExecOptions::new();
    exec.spec.env = own.clone();
    let foreground = context.exec(handle, "env", exec).await.unwrap();
    assert_eq!(foreground.exit_code, 0, "{}", foreground.output);

    let mut options = BackgroundOptions::new(cluster.dir.path().join("unused"));
    options.spec.env = own;
    let started = context
        .exec_background(handle, "env", options)
        .await
        .unwrap();
    let exit = context
        .wait_background(handle, started.task_id, WAIT, CancellationToken::new())
        .await
        .unwrap()
        .expect("the task ends");
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    // The worker runs on this machine: its log is readable here.
    let background = std::fs::read_to_string(&started.output_path).unwrap();

    let home = std::env::var("HOME").unwrap();
    for (label, output) in [
        ("foreground", foreground.output),
        ("background", background),
    ] {
        let env = env_of(&output);
        for (name, value) in SECRETS {
            assert!(
                !output.contains(value),
                "{label}: {name}'s value:\n{output}"
            );
            assert!(!env.contains_key(name), "{label}: {name}:\n{output}");
        }
        let get = |name: &str| env.get(name).map(String::as_str);
        assert!(
            get("PATH").is_some_and(|path| !path.is_empty()),
            "{label}:\n{output}"
        );
        assert_eq!(get("HOME"), Some(home.as_str()), "{label}");
        assert_eq!(get("FROM_FLAG"), Some("flag-value"), "{label}");
        assert_eq!(get("OWN"), Some("own-value"), "{label}");
        assert_eq!(get("ZIDANE_TEST_PLAIN"), Some("plain-value"), "{label}");
        assert_eq!(get("ZIDANE_TEST_EXCLUDED"), None, "{label}");
    }
    context.destroy(handle).await.unwrap();
}

#[test]
fn bad_configuration_stops_a_worker_before_it_does_anything() {
    let stderr = worker_refuses(&[], &[("ZIDANE_PROCESS_PATH", "bogus")]);
    assert_eq!(
        stderr,
        "zidane-worker: ZIDANE_PROCESS_PATH=\"bogus\" is not a valid value: \
         ZIDANE_PROCESS_PATH accepts `portable` or `fast` (any case), or unset for the \
         platform's default\n"
    );
    let stderr = worker_refuses(&["--env-set", "ZIDANE_MCP_TOKEN=x"], &[]);
    assert!(
        stderr.contains("ZIDANE_MCP_TOKEN is zidane's own credential"),
        "{stderr}"
    );
    let stderr = worker_refuses(&["--env-inherit", "some"], &[]);
    assert!(stderr.contains("all, core or none"), "{stderr}");
    let stderr = worker_refuses(&[], &[("RUST_LOG", "info,zidane=loud")]);
    assert!(
        stderr
            .starts_with("zidane-worker: RUST_LOG=\"info,zidane=loud\" is not a valid log filter"),
        "{stderr}"
    );
}
