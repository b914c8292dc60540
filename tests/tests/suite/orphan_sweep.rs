//! What a crashed host left running: the next `local_agent` ends it by default (and logs
//! what it ended with `tracing`), and leaves it when told not to sweep.
//!
//! The crashed host is this test binary itself, re-executed to run only
//! [`crashing_host_helper`] (ignored, and inert unless [`HOST`]'s variable is set): a
//! local agent that starts a task, as a host would. The agents are built outside a
//! tokio runtime, where `build` runs the sweep before it returns: what is alive right
//! after `build` is what the sweep left.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

use zidane::prelude::*;
use zidane_test_support::{
    CrashingHost, TokenCleanup, processes_with_env, sweep_lock, unique_token,
};

use super::support::{WAIT, bg};

/// The helper, and the variable that gives it the token its task must carry.
const HOST: CrashingHost = CrashingHost::new(
    "suite::orphan_sweep::crashing_host_helper",
    "ZIDANE_E2E_CRASHING_HOST_TOKEN",
);

/// The variable that marks the crashed host's task, so the test finds it in `/proc`.
const TOKEN_VAR: &str = "ZIDANE_E2E_ORPHAN_TOKEN";

/// Not a test: the host that crashes. Its local agent starts one background task
/// carrying the token it was given, then the host SIGKILLs itself, so the agent never
/// runs `destroy` or `Drop`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for the orphan sweep tests"]
async fn crashing_host_helper() {
    HOST.crash_after(async |token| {
        let user_dir = tempfile::tempdir().unwrap();
        // `env` puts the token in the environment of the `sleep` the task becomes.
        let model = ScriptedModel::new()
            .tool_call(
                "shell",
                bg(&format!("exec env {TOKEN_VAR}={token} sleep 1000")),
            )
            .text("started");
        // Without a lifeline, which would end its task the moment it dies: the sweep is
        // the backstop for a host that had none (another platform, an older zidane).
        let context = zidane::process::ProcessContext::builder()
            .sweep_orphans_on_start(false)
            .lifeline(false)
            .build();
        let agent = zidane::local_agent(Arc::new(model), user_dir.path())
            .session_id("crashing")
            .context(Arc::new(context))
            .build()
            .unwrap();
        agent.run(RunOptions::new("start it")).await.unwrap();
        (user_dir, agent)
    })
    .await;
}

/// Runs the helper to its death: its task is now an orphan. Returns the orphan's pids.
fn crash_a_host(token: &str) -> Vec<u32> {
    HOST.crash(token);
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
    processes_with_env(TOKEN_VAR, token)
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
    let token = unique_token("orphan");
    let _cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
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
    let token = unique_token("orphan");
    let cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
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
