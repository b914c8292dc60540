//! A host that builds its shell without background mode, the session's gate open: a
//! model that sends `run_in_background` anyway gets an error result naming it, and its
//! command never runs — no file written, no turn held, no task listed.

use std::sync::Arc;
use std::time::Duration;

use zidane::prelude::*;
use zidane::tools::{ShellToolOptions, create_shell_tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_background_flag_through_the_agent_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("forged");
    let command = format!("touch '{}'; sleep 30", marker.display());
    let script = ScriptedModel::new()
        .tool_call(
            "shell",
            serde_json::json!({ "command": command, "run_in_background": true }),
        )
        .text("understood");
    let agent = zidane::local_agent(Arc::new(script.clone()), dir.path())
        .session_id("forged")
        .sweep_orphans(false)
        .configure(|builder| {
            builder.tools(vec![create_shell_tool(
                ShellToolOptions::default().allow_background(false),
            )])
        })
        .build()
        .unwrap();
    assert!(agent.background_gate().allowed());
    // Far below the command's own 30 s: a refusal answers at once, a foreground run
    // would hold the turn.
    tokio::time::timeout(Duration::from_secs(15), agent.run(RunOptions::new("go")))
        .await
        .expect("the forged call held the turn")
        .unwrap();
    let requests = script.requests();
    let results = requests.last().unwrap().tool_results();
    let [(_, text, is_error)] = results.as_slice() else {
        panic!("one tool result expected: {results:?}");
    };
    assert!(*is_error, "{text}");
    assert!(text.contains("`run_in_background`"), "{text}");
    assert!(!marker.exists(), "the forged command ran");
    let handle = agent.handle().await.unwrap();
    assert!(
        agent
            .context()
            .list_background(handle)
            .await
            .unwrap()
            .is_empty()
    );
    agent.destroy().await.unwrap();
}
