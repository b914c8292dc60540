//! What every end-to-end test shares: a local agent in its own temp dir that records
//! what happens, bounded waits on events, and a probe for processes left behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tempfile::TempDir;
use tokio::sync::{Notify, mpsc};
use zidane::agent::{ModelError, TaskStart};
use zidane::prelude::*;
use zidane::wire::ContentBlock;
use zidane_test_support::live_processes_in_group;

/// Longest a test waits for something that should happen.
pub const WAIT: Duration = Duration::from_secs(20);

/// A local agent (the facade's `local_agent`) with session `e2e` in a fresh temp dir,
/// recording hook events and the live stream.
pub struct Local {
    /// The user data dir; removed when the test ends.
    pub dir: TempDir,
    pub agent: Agent,
    /// The model's script (shared with the agent's model): its requests, as received.
    pub script: ScriptedModel,
    pub exits: mpsc::UnboundedReceiver<TaskExitInfo>,
    pub starts: Arc<Mutex<Vec<TaskStart>>>,
    pub stream: Arc<Mutex<Vec<StreamEvent>>>,
}

impl Local {
    /// A local agent whose model `script` makes, given the temp dir (for gate files).
    pub fn new(script: impl FnOnce(&Path) -> ScriptedModel) -> Self {
        Self::with_model(|dir, _| {
            let script = script(dir);
            (Arc::new(script.clone()), script)
        })
    }

    /// Like [`new`](Self::new), but before its `at_call`-th call (0-based) the model
    /// waits until a task has ended — so a task can end in the middle of a run.
    pub fn waiting(script: impl FnOnce(&Path) -> ScriptedModel, at_call: usize) -> Self {
        Self::with_model(|dir, exited| {
            let script = script(dir);
            let model = WaitsForExit {
                script: script.clone(),
                at_call,
                exited,
                calls: AtomicUsize::new(0),
            };
            (Arc::new(model), script)
        })
    }

    fn with_model(
        make: impl FnOnce(&Path, Arc<Notify>) -> (Arc<dyn Model>, ScriptedModel),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let exited = Arc::new(Notify::new());
        let (model, script) = make(dir.path(), Arc::clone(&exited));
        // No orphan sweep: it would end what the orphan sweep tests (here and in
        // `zidane-process`, which may run beside these) are looking at.
        let agent = zidane::local_agent(model, dir.path())
            .session_id("e2e")
            .sweep_orphans(false)
            .build()
            .unwrap();
        let (exit_tx, exits) = mpsc::unbounded_channel();
        let starts = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&starts);
        agent.hooks().subscribe(move |event| match event {
            HookEvent::BackgroundExit(exit) => {
                let _ = exit_tx.send(exit.clone());
                exited.notify_one();
            }
            HookEvent::BackgroundStart(start) => seen.lock().unwrap().push(start.clone()),
            _ => {}
        });
        let stream = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stream);
        agent
            .hooks()
            .subscribe_stream(move |event| sink.lock().unwrap().push(event.clone()));
        Self {
            dir,
            agent,
            script,
            exits,
            starts,
            stream,
        }
    }

    /// The next `background:exit`, within [`WAIT`].
    pub async fn next_exit(&mut self) -> TaskExitInfo {
        tokio::time::timeout(WAIT, self.exits.recv())
            .await
            .expect("a task ended in time")
            .expect("the agent is alive")
    }

    /// The tasks started so far.
    pub fn starts(&self) -> Vec<TaskStart> {
        self.starts.lock().unwrap().clone()
    }

    /// The last request the model received.
    pub fn last_request(&self) -> ModelRequest {
        self.script.last_request().expect("the model was called")
    }

    /// The live stream so far.
    pub fn stream(&self) -> Vec<StreamEvent> {
        self.stream.lock().unwrap().clone()
    }

    /// A path in the temp dir (for gate files).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Destroys the agent and checks that no process of any task it started is left.
    pub async fn destroy_and_check(&self) {
        self.agent.destroy().await.unwrap();
        for start in self.starts() {
            assert_eq!(
                live_processes_in_group(start.pid),
                Vec::<u32>::new(),
                "{} left processes behind",
                start.task_id
            );
        }
    }
}

/// A background `shell` call's input.
pub fn bg(command: &str) -> serde_json::Value {
    serde_json::json!({ "command": command, "run_in_background": true })
}

/// A command that runs until `gate` exists, then prints `done <name>`.
pub fn gated(gate: &Path, name: &str) -> String {
    format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; echo 'done {name}'",
        gate.display()
    )
}

/// Opens a gate made by [`gated`].
pub fn open(gate: &Path) {
    std::fs::write(gate, b"").unwrap();
}

/// Polls `condition` until it holds, at most [`WAIT`] — for conditions no event
/// announces (what a task has written to its log).
pub async fn until(mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not met within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The text blocks of the last user turn a model was sent.
pub fn texts_of_last_user_turn(request: &ModelRequest) -> Vec<String> {
    request
        .last_user_turn()
        .map(|turn| {
            turn.content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A [`ScriptedModel`] that, before its `at_call`-th call (0-based), waits until a task
/// has ended (see [`Local::waiting`]).
struct WaitsForExit {
    script: ScriptedModel,
    at_call: usize,
    exited: Arc<Notify>,
    calls: AtomicUsize,
}

#[async_trait]
impl Model for WaitsForExit {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == self.at_call {
            tokio::time::timeout(WAIT, self.exited.notified())
                .await
                .map_err(|_| ModelError::Provider("no task ended in time".into()))?;
        }
        self.script.complete(request).await
    }
}

/// Whether this process still has a descriptor open on `path` (Linux).
pub fn has_open_descriptor(path: &Path) -> bool {
    std::fs::read_dir("/proc/self/fd")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| target == path)
}
