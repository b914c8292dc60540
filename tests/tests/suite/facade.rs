//! The facade's `local_agent`: a session is new, or loaded by id with its history, and its
//! id never names a path outside the user dir.

use std::sync::Arc;

use zidane::agent::SessionStore;
use zidane::prelude::*;

use super::support::{Local, bg};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_agent_loads_a_stored_session_by_id() {
    let mut local = Local::new(|_| {
        ScriptedModel::new()
            .tool_call("shell", bg("echo hi"))
            .text("started")
            .text("told")
    });
    local.agent.run(RunOptions::new("go")).await.unwrap();
    local.next_exit().await;
    let told = local.agent.run(RunOptions::new("so?")).await.unwrap();
    assert_eq!(told.notified.len(), 1);
    local.agent.destroy().await.unwrap();
    let stored = local.agent.session();

    // The same user dir and id: the turns come back, and the tasks dir is the session's.
    let model = ScriptedModel::new().react(|request| {
        assert!(request.notifications().is_empty(), "{request:?}");
        ModelResponse::text(format!("{} turns before this one", request.turns.len() - 1))
    });
    let again = zidane::local_agent(Arc::new(model), local.dir.path())
        .session_id("e2e")
        .sweep_orphans(false)
        .build()
        .unwrap();
    assert_eq!(again.session(), stored);
    assert_eq!(
        again.tasks_dir(),
        Some(
            SessionStore::new(local.dir.path())
                .tasks_dir("e2e")
                .unwrap()
                .as_path()
        )
    );
    let outcome = again.run(RunOptions::new("anything new?")).await.unwrap();
    assert!(outcome.notified.is_empty());
    assert_eq!(
        outcome.text,
        format!("{} turns before this one", stored.turns.len())
    );
    again.destroy().await.unwrap();

    // A new id is a new, empty session in the same user dir.
    let fresh = zidane::local_agent(Arc::new(ScriptedModel::new()), local.dir.path())
        .session_id("other")
        .sweep_orphans(false)
        .build()
        .unwrap();
    assert!(fresh.session().turns.is_empty());
    assert!(
        zidane::local_agent(Arc::new(ScriptedModel::new()), local.dir.path())
            .session_id("../escape")
            .sweep_orphans(false)
            .build()
            .is_err(),
        "a session id never names a path outside the user dir"
    );
}
