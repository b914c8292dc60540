//! `zidane mcp --restate` in real hosts, each in its default mode (Claude Code's print
//! mode, Codex's `exec` with its own default sandbox): the model's background task runs
//! on a `zidane-worker` behind a real Restate server, its log on that worker's disk, and
//! its end reaches the model once; a task that ends after the host exited is told once
//! to the next run of the host in the same project dir — after the lease of the run that
//! started it is over — and not again to the run after.
//!
//! Each test has a fleet of its own (`fleet_support`): a server and workers `w1`, `w2`,
//! each with a `--user-dir` of its own. The workers carry the sandbox's token, so every
//! task they run does too and nothing of the test outlives it, however it ends.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zidane_test_support::{Step, poll_until};

use crate::fleet_support::{Fleet, WORKERS, fleet_with};
use crate::hosts::host::{GONE_WAIT, Host, Ran, Sandbox, TOKEN_VAR, carrier_runs, describe};
use crate::hosts::scenarios::blocks_of;

host_tests!(
    [claude_code => ClaudeCode, codex => Codex],
    a_background_task_runs_on_a_worker_and_its_end_is_told_once,
    an_end_after_the_host_exited_is_told_once_to_the_next_runs,
);

/// How long a fleet session counts as alive after its last list (the workers' lease).
const LEASE: Duration = zidane_restate::SESSION_LEASE;

/// What a test allows past [`LEASE`] before it expects the next session to have claimed
/// an end: a sweep of that session (every 500 ms) and the time its result takes.
const LEASE_MARGIN: Duration = Duration::from_millis(1500);

/// A pause between two `list_tasks` of a run that waits for an end: a few sweeps.
const SWEEPS: Duration = Duration::from_secs(1);

/// The first task of a workspace.
const TASK: &str = "bash_1";

/// A host's sandbox on a fleet of its own; `zidane mcp` runs with
/// `--restate <ingress> --workers w1,w2`.
struct OnFleet {
    // Declared first: its cleanup ends the host, `zidane mcp`, the workers and their
    // tasks (all carry its token) before the fleet stops the server and removes the
    // workers' disks.
    sandbox: Sandbox,
    fleet: Fleet,
}

impl OnFleet {
    /// `None` when the hosts or `restate-server` are not installed (outside CI).
    async fn new(host: Host) -> Option<Self> {
        let sandbox = Sandbox::new(host)?;
        let token = sandbox.token().to_owned();
        let fleet = fleet_with(move |worker| {
            worker.env(TOKEN_VAR, &token);
        })
        .await?;
        Some(Self { sandbox, fleet })
    }

    fn host(&self) -> Host {
        self.sandbox.host
    }

    /// A host run of `steps`, in the same project dir every time.
    async fn run(&self, steps: Vec<Step>) -> Ran {
        let ingress = self.fleet.server().ingress_url();
        self.sandbox
            .run(steps, &["--restate", ingress, "--workers", WORKERS])
            .await
    }

    /// Waits (bounded) until the run's `zidane mcp` is gone, and says when that was:
    /// its session's last list of its tasks was no later.
    async fn server_gone(&self) -> Instant {
        let host = self.host();
        let token = self.sandbox.token().to_owned();
        poll_until(
            GONE_WAIT,
            Duration::from_millis(20),
            &format!("{host:?}: zidane mcp outlived its host"),
            || !carrier_runs(&token, "mcp --restate"),
        )
        .await;
        Instant::now()
    }

    /// The workers' disks.
    fn worker_dirs(&self) -> Vec<PathBuf> {
        ["w1", "w2"]
            .into_iter()
            .map(|id| self.fleet.worker_dir(id))
            .collect()
    }

    /// Asserts `log` is on a worker's disk, not under the host's user dir.
    fn assert_on_a_worker(&self, log: &Path) -> &'static str {
        let host = self.host();
        assert!(
            !log.starts_with(self.sandbox.user_dir()),
            "{host:?}: {TASK}'s log is on this machine's user dir: {}",
            log.display()
        );
        self.fleet.worker_of(log).unwrap_or_else(|| {
            panic!(
                "{host:?}: {TASK}'s log {} is on no worker's disk under {}",
                log.display(),
                self.fleet.dir().display()
            )
        })
    }
}

/// The first JSON object in a result: its structured content, as each host shows it
/// (Codex after a line of its own), whatever follows it (a `<task-notification>`).
fn structured(result: &str) -> Option<Value> {
    let json = &result[result.find('{')?..];
    serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// The log path a start's result gave.
fn started_log(result: &str) -> Option<PathBuf> {
    let start = structured(result)?;
    (start["task_id"] == TASK).then_some(())?;
    Some(PathBuf::from(start["output_path"].as_str()?))
}

/// The entry of [`TASK`] in a `list_tasks` result.
fn listed(result: &str) -> Option<Value> {
    structured(result)?["tasks"]
        .as_array()?
        .iter()
        .find(|task| task["task_id"] == TASK)
        .cloned()
}

/// The `<task-notification>` blocks of [`TASK`] over the tool results of `results`.
fn told(results: &[String]) -> usize {
    results.iter().map(|result| blocks_of(result, TASK)).sum()
}

/// A step's gate: a log of `task` on one of `dirs` (searched all the way down) ends
/// with `tail`.
fn log_ends_with(
    dirs: Vec<PathBuf>,
    task: &'static str,
    tail: &'static str,
) -> impl Fn() -> bool + Send + Sync + 'static {
    move || dirs.iter().any(|dir| any_log_ends_with(dir, task, tail))
}

fn any_log_ends_with(dir: &Path, task: &str, tail: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            return any_log_ends_with(&path, task, tail);
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.starts_with(&format!("{task}."))
            && name.ends_with(".log")
            && std::fs::read_to_string(&path).is_ok_and(|text| text.ends_with(tail))
    })
}

/// A step's gate: `pause` has passed since it was first asked, that is since the
/// request it answers came.
fn after(pause: Duration) -> impl Fn() -> bool + Send + Sync + 'static {
    let first = OnceLock::new();
    move || first.get_or_init(Instant::now).elapsed() >= pause
}

/// A step's gate: it is `at` or later.
fn not_before(at: Instant) -> impl Fn() -> bool + Send + Sync + 'static {
    move || Instant::now() >= at
}

/// A background task (`sleep 1; echo done`) runs on a worker: its log is on that
/// worker's disk and says `done`. With no wait asked, a later result tells its end —
/// one `<task-notification>` over the conversation, with its exit 0 and that log.
async fn a_background_task_runs_on_a_worker_and_its_end_is_told_once(host: Host) {
    let Some(machine) = OnFleet::new(host).await else {
        return;
    };
    let steps = vec![
        Step::call(host.call(
            "shell",
            json!({ "command": "sleep 1; echo done", "run_in_background": true }),
        )),
        Step::call(host.call("list_tasks", json!({}))).gated(log_ends_with(
            machine.worker_dirs(),
            TASK,
            "done\n",
        )),
        Step::call(host.call("list_tasks", json!({}))).gated(after(SWEEPS)),
        Step::call(host.call("list_tasks", json!({}))).gated(after(SWEEPS)),
        Step::text("It ran on the fleet."),
    ];
    let ran = machine.run(steps).await;
    let requests = ran.main_requests();
    assert_eq!(requests.len(), 5, "{}", describe(&requests));

    let started = ran.result_of_step(0);
    println!("{host:?}: the start showed the model: {started}");
    let log = started_log(&started)
        .unwrap_or_else(|| panic!("{host:?}: no start of {TASK} with a log:\n{started}"));
    let worker = machine.assert_on_a_worker(&log);
    println!(
        "{host:?}: {TASK} ran on {worker}; its log is {}",
        log.display()
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text, "done\n", "{host:?}: {TASK}'s log on {worker}");

    let results = ran.results();
    let told_in: Vec<&String> = results
        .iter()
        .filter(|result| blocks_of(result, TASK) > 0)
        .collect();
    println!("{host:?}: the end was shown to the model in: {told_in:#?}");
    assert_eq!(
        told(&results),
        1,
        "{host:?}: {TASK}'s end was not told exactly once over the conversation:\n{results:#?}"
    );
    let carrier = told_in[0];
    assert!(
        carrier.contains("<exit-code>0</exit-code>")
            && carrier.contains(&format!("<output-file>{}</output-file>", log.display())),
        "{host:?}: the notification does not give exit 0 and the worker's log:\n{carrier}"
    );
    assert!(
        blocks_of(&ran.result_of_step(0), TASK) == 0,
        "{host:?}: the end was told in the start's own result"
    );
}

/// A task that ticks until the test creates its gate file, started in the background by
/// a first run of the host: it runs on its worker after the host and its `zidane mcp`
/// are gone, and ends (exit 3) once the gate is there. The next run of the host in the
/// same project dir lists it and, once the first run's session is past its lease, is
/// told its end in a result — once: a `wait_task` after it gives the exit without a
/// notification, and a third run, past the second's lease too, is not told again.
async fn an_end_after_the_host_exited_is_told_once_to_the_next_runs(host: Host) {
    let Some(machine) = OnFleet::new(host).await else {
        return;
    };
    let go = machine.fleet.dir().join("go");
    let ticker = format!(
        "while [ ! -e {go} ]; do echo tick; sleep 0.1; done; echo finishing; exit 3",
        go = go.display()
    );
    let first = machine
        .run(vec![
            Step::call(host.call(
                "shell",
                json!({ "command": ticker, "run_in_background": true }),
            )),
            Step::text("Left it running."),
        ])
        .await;
    let first_gone = machine.server_gone().await;
    let started = first.result_of_step(0);
    println!("{host:?}: the start in the first run showed the model: {started}");
    let log = started_log(&started)
        .unwrap_or_else(|| panic!("{host:?}: no start of {TASK} with a log:\n{started}"));
    let worker = machine.assert_on_a_worker(&log);
    println!(
        "{host:?}: {TASK} runs on {worker}; its log is {}",
        log.display()
    );

    // It runs on with nobody connected, and it carries the token (so a failed test
    // leaves it behind neither).
    let ticks = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("tick")
            .count()
    };
    let before = ticks();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        ticks() > before,
        "{host:?}: {TASK}'s log does not grow after the host exited"
    );
    let token = machine.sandbox.token().to_owned();
    let gate = go.display().to_string();
    assert!(
        carrier_runs(&token, &gate),
        "{host:?}: {TASK} runs without the workers' token"
    );
    std::fs::write(&go, "").unwrap();
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        &format!("{host:?}: {TASK} did not end once its gate was there"),
        || {
            std::fs::read_to_string(&log).is_ok_and(|text| text.ends_with("finishing\n"))
                && !carrier_runs(&token, &gate)
        },
    )
    .await;

    let second = machine
        .run(vec![
            Step::call(host.call("list_tasks", json!({}))),
            Step::call(host.call("list_tasks", json!({})))
                .gated(not_before(first_gone + LEASE + LEASE_MARGIN)),
            Step::call(host.call("wait_task", json!({ "task_id": TASK }))),
            Step::call(host.call("list_tasks", json!({}))),
            Step::text("It ended."),
        ])
        .await;
    let second_gone = machine.server_gone().await;
    let requests = second.main_requests();
    assert_eq!(requests.len(), 5, "{}", describe(&requests));
    let listing = second.result_of_step(0);
    println!("{host:?}: list_tasks in the second run showed the model: {listing}");
    let entry = listed(&listing)
        .unwrap_or_else(|| panic!("{host:?}: the second run does not list {TASK}:\n{listing}"));
    println!("{host:?}: the second run lists {TASK} as {entry}");
    let by_lease = [second.result_of_step(0), second.result_of_step(1)];
    println!(
        "{host:?}: list_tasks past the first run's lease showed the model: {}",
        by_lease[1]
    );
    assert_eq!(
        told(&by_lease),
        1,
        "{host:?}: the second run was not told {TASK}'s end once the first run's lease was \
         over:\n{by_lease:#?}"
    );
    let carrier = by_lease.iter().find(|r| blocks_of(r, TASK) > 0).unwrap();
    assert!(
        carrier.contains("<exit-code>3</exit-code>"),
        "{host:?}: the notification does not give exit 3:\n{carrier}"
    );
    let waited = second.result_of_step(2);
    println!("{host:?}: wait_task showed the model: {waited}");
    assert!(
        structured(&waited).is_some_and(|wait| wait["exit"]["exit_code"] == 3),
        "{host:?}: wait_task did not give {TASK}'s exit 3:\n{waited}"
    );

    let third = machine
        .run(vec![
            Step::call(host.call("list_tasks", json!({}))),
            Step::call(host.call("list_tasks", json!({})))
                .gated(not_before(second_gone + LEASE + LEASE_MARGIN)),
            Step::text("Nothing new."),
        ])
        .await;
    let listing = third.result_of_step(1);
    println!(
        "{host:?}: list_tasks in the third run, past the second's lease, showed the model: {listing}"
    );
    assert!(
        listed(&listing).is_some(),
        "{host:?}: the third run does not list {TASK}:\n{listing}"
    );
    assert_eq!(
        told(&second.results()) + told(&third.results()),
        1,
        "{host:?}: {TASK}'s end was not told exactly once over the second and third runs:\n\
         {:#?}\n{:#?}",
        second.results(),
        third.results()
    );
}
