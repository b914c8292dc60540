//! What a crashed host left running: the next `local_agent` ends it by default (and logs
//! what it ended with `tracing`), and leaves it when told not to sweep.
//!
//! The crashed host is this test binary itself, re-executed to run only
//! [`crashing_host_helper`] (ignored, and inert unless [`HELPER_TOKEN_VAR`] is set). The
//! agents are built outside a tokio runtime, where `build` runs the sweep before it
//! returns: what is alive right after `build` is what the sweep left.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

use zidane::context::BackgroundOptions;
use zidane::prelude::*;
use zidane::process::ProcessContext;

use super::support::{WAIT, sweep_lock};

/// Set (to the token its task must carry) only when the helper is meant to run.
const HELPER_TOKEN_VAR: &str = "ZIDANE_E2E_CRASHING_HOST_TOKEN";

/// The variable that marks the crashed host's task, so the test finds it in `/proc`.
const TOKEN_VAR: &str = "ZIDANE_E2E_ORPHAN_TOKEN";

/// The helper's name as libtest knows it inside this binary.
const HELPER_TEST: &str = "suite::orphan_sweep::crashing_host_helper";

/// Not a test: the host that crashes. Starts one background task carrying the token
/// it was given, then SIGKILLs itself, so its context never runs `destroy` or `Drop`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for the orphan sweep tests"]
async fn crashing_host_helper() {
    let Ok(token) = std::env::var(HELPER_TOKEN_VAR) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let context = ProcessContext::builder().cwd(dir.path()).build();
    let handle = context.create_handle().await.unwrap();
    context
        .exec_background(
            handle,
            "sleep 1000",
            BackgroundOptions::new(dir.path()).env(TOKEN_VAR, &token),
        )
        .await
        .unwrap();
    let killed = Command::new("kill")
        .args(["-KILL", &std::process::id().to_string()])
        .status();
    panic!("could not SIGKILL the helper: {killed:?}");
}

/// Runs the helper to its death: its task is now an orphan. Returns the orphan's pids.
fn crash_a_host(token: &str) -> Vec<u32> {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", HELPER_TEST, "--ignored", "--test-threads", "1"])
        .env(HELPER_TOKEN_VAR, token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the helper did not SIGKILL itself: {status}"
    );
    // A process caught inside `execve` shows an empty environment for a moment.
    let deadline = Instant::now() + WAIT;
    loop {
        let found = processes_with_token(token);
        if !found.is_empty() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "the task did not outlive its host"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Live processes whose environment holds `TOKEN_VAR=token` (a zombie's is empty).
fn processes_with_token(token: &str) -> Vec<u32> {
    let entry = format!("{TOKEN_VAR}={token}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        })
        .collect()
}

/// A token no other test uses.
fn unique_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("orphan-{}-{nanos}", std::process::id())
}

/// Kills whatever still carries the token, so a failed test leaves nothing behind.
struct TokenCleanup(String);

impl Drop for TokenCleanup {
    fn drop(&mut self) {
        for pid in processes_with_token(&self.0) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// The fields of every event of `zidane_process` (its modules are its targets).
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target().starts_with("zidane_process") {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
}

#[test]
fn local_agent_sweeps_what_a_crashed_host_left_running() {
    let _lock = sweep_lock();
    let token = unique_token();
    let _cleanup = TokenCleanup(token.clone());
    let orphans = crash_a_host(&token);

    let user_dir = tempfile::tempdir().unwrap();
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    let agent = tracing::subscriber::with_default(subscriber, || {
        zidane::local_agent(Arc::new(ScriptedModel::new()), user_dir.path())
            .session_id("after-crash")
            .build()
            .unwrap()
    });
    assert_eq!(processes_with_token(&token), Vec::<u32>::new());
    // What was swept is logged: one event per process, naming it and its task.
    let events = events.0.lock().unwrap().clone();
    for pid in orphans {
        let swept = events
            .iter()
            .find(|e| {
                e.get("pid") == Some(&pid.to_string())
                    && e["message"] == "ended an orphaned task of a host that is gone"
            })
            .unwrap_or_else(|| panic!("no event for {pid}: {events:?}"));
        assert_eq!(swept["task"], "bash_1");
        assert!(swept.contains_key("owner_pid") && swept.contains_key("command"));
    }
    assert!(
        events
            .iter()
            .any(|e| e["message"] == "the orphan sweep ended what crashed hosts left running"),
        "{events:?}"
    );
    drop(agent);
}

#[test]
fn local_agent_leaves_them_when_told_not_to_sweep() {
    let _lock = sweep_lock();
    let token = unique_token();
    let cleanup = TokenCleanup(token.clone());
    let mut orphans = crash_a_host(&token);

    let user_dir = tempfile::tempdir().unwrap();
    let agent = zidane::local_agent(Arc::new(ScriptedModel::new()), user_dir.path())
        .session_id("after-crash")
        .sweep_orphans(false)
        .build()
        .unwrap();
    let mut alive = processes_with_token(&token);
    alive.sort_unstable();
    orphans.sort_unstable();
    assert_eq!(alive, orphans);
    drop(agent);
    drop(cleanup);
    assert_eq!(processes_with_token(&token), Vec::<u32>::new());
}
