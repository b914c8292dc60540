//! Sessions: layout, persistence after every turn, delete, replay equals live.

use std::sync::Arc;

use zidane_agent::{
    Agent, AgentError, ModelResponse, RunOptions, ScriptedModel, Session, SessionStore,
    delete_session, resolve_tasks_dir,
};
use zidane_context::MockContext;
use zidane_wire::{StreamEvent, events_from_turns};

use crate::support::{bg, tid};

#[tokio::test]
async fn live_events_equal_the_replay_of_the_stored_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let context = Arc::new(MockContext::new());
    let model = ScriptedModel::new()
        .tool_call("shell", bg("echo '<done>' && true"))
        .text("started")
        .tool_call("read_file", serde_json::json!({ "path": "/nope" }))
        .text("read");
    let agent = Agent::builder(Arc::new(model), context.clone())
        .store(store.clone())
        .session(Session::new("s1"))
        .build()
        .unwrap();
    let live = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = live.clone();
    agent
        .hooks()
        .subscribe_stream(move |event| sink.lock().unwrap().push(event.clone()));
    agent.run(RunOptions::new("go")).await.unwrap();
    context.finish(tid(1), 0);
    agent.run(RunOptions::drain()).await.unwrap();

    let stored = store.load("s1").unwrap();
    assert_eq!(stored, agent.session(), "saved after every turn");
    let live = live.lock().unwrap().clone();
    assert_eq!(live, events_from_turns(&stored.turns));
    assert_eq!(live, stored.events());
    let StreamEvent::TaskNotification(n) = live
        .iter()
        .find(|e| matches!(e, StreamEvent::TaskNotification(_)))
        .unwrap()
    else {
        unreachable!()
    };
    assert_eq!(
        n.command, "echo '<done>' && true",
        "escaped XML round-trips"
    );
    assert!(
        !live.iter().any(
            |e| matches!(e, StreamEvent::UserText { text } if text.contains("<task-notification>"))
        ),
        "no raw XML painted"
    );
    let tasks = agent.tasks_dir().unwrap();
    assert_eq!(tasks, resolve_tasks_dir(dir.path(), "s1").unwrap());
    assert!(tasks.starts_with(dir.path().join("sessions").join("s1")));
    agent.destroy().await.unwrap();
}

#[test]
fn deleting_a_session_removes_its_turns_and_its_task_logs() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut session = Session::new("s2");
    session.turns.push(zidane_wire::Turn::user_text("hi"));
    store.save(&session).unwrap();
    let tasks = resolve_tasks_dir(dir.path(), "s2").unwrap();
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(tasks.join("bash_1.20260523-024147-123.log"), "log").unwrap();
    assert!(delete_session(dir.path(), "s2").unwrap());
    assert!(!store.session_dir("s2").unwrap().exists());
    assert!(!delete_session(dir.path(), "s2").unwrap(), "nothing left");
}

#[test]
fn a_session_id_never_escapes_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["", ".", "..", "../x", "a/b", "a b", "x\0"] {
        assert!(
            matches!(
                resolve_tasks_dir(dir.path(), bad),
                Err(AgentError::InvalidSessionId { .. })
            ),
            "accepted {bad:?}"
        );
    }
    assert!(SessionStore::new(dir.path()).load("missing").is_err());
    assert!(Session::generate().id != Session::generate().id);
}

#[test]
fn a_corrupt_session_file_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let file = store.session_file("s3").unwrap();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{ not json").unwrap();
    assert!(matches!(
        store.load("s3"),
        Err(AgentError::SessionFormat { .. })
    ));
    let _ = ModelResponse::text("unused");
}

/// A live agent's summary knows what the stored one cannot: how many of its tasks run.
#[tokio::test]
async fn an_agents_summary_counts_its_running_tasks_and_the_listing_shows_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let context = Arc::new(MockContext::new());
    let model = ScriptedModel::new()
        .tool_call("shell", bg("npm run dev"))
        .text("serving");
    let agent = Agent::builder(Arc::new(model), context.clone())
        .store(store.clone())
        .session(Session::new("live"))
        .build()
        .unwrap();
    agent
        .run(RunOptions::new("start the dev server"))
        .await
        .unwrap();

    let summary = agent.summary().await.unwrap();
    assert_eq!(summary.id, "live");
    assert_eq!(
        summary.first_prompt.as_deref(),
        Some("start the dev server")
    );
    assert_eq!(summary.turns, 4);
    assert_eq!(summary.running_tasks, Some(1));

    context.finish(tid(1), 0);
    assert_eq!(agent.summary().await.unwrap().running_tasks, Some(0));

    let listed = store.list().unwrap();
    assert_eq!(listed.sessions.len(), 1);
    assert_eq!(listed.sessions[0].id, "live");
    assert_eq!(listed.sessions[0].turns, 4);
    assert_eq!(listed.sessions[0].running_tasks, None, "a file cannot say");
    agent.destroy().await.unwrap();
}
