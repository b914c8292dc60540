//! A cancelled run drops its model call: the HTTP request is closed, and the session
//! keeps no half-made assistant turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane_agent::{Agent, Behavior, ModelDelta, RunOptions, StopReason};
use zidane_context::MockContext;
use zidane_models::HttpOptions;
use zidane_models::testing::{Reply, ScriptedServer, fixtures};
use zidane_wire::Role;

use crate::support::{WAIT, anthropic, openai};

async fn cancel_mid_stream(server: ScriptedServer, agent: Agent, stream: &str) {
    // Part of the answer, then nothing: the run sits in the model call.
    let cut = stream.find("no failures").unwrap();
    server.push(Reply::sse(stream).truncate(cut).then_stall());
    let options = RunOptions::new("tell me");
    let cancel = options.cancel.clone();
    let seen = Arc::new(AtomicBool::new(false));
    let seen_delta = seen.clone();
    agent.hooks().subscribe_deltas(move |delta| {
        if matches!(delta, ModelDelta::Text(_)) && !seen_delta.swap(true, Ordering::SeqCst) {
            cancel.cancel();
        }
    });
    let outcome = tokio::time::timeout(WAIT, agent.run(options))
        .await
        .expect("the run ends when cancelled")
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert!(
        seen.load(Ordering::SeqCst),
        "text arrived before the cancel"
    );
    assert!(
        server.wait_open_streams(0, WAIT).await,
        "the request's connection was closed"
    );
    let turns = agent.session().turns;
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert_eq!(turns[0].role, Role::User);
    agent.destroy().await.unwrap();
}

fn agent(model: Arc<dyn zidane_agent::Model>) -> Agent {
    Agent::builder(model, Arc::new(MockContext::new()))
        .behavior(Behavior::new().tasks_dir("/home/u/.zidane/sessions/s1/tasks"))
        .build()
        .unwrap()
}

#[tokio::test]
async fn cancelling_an_openai_run_closes_the_request() {
    let server = ScriptedServer::start().await.unwrap();
    let agent = agent(Arc::new(openai(&server, HttpOptions::new())));
    cancel_mid_stream(server, agent, fixtures::OPENAI_TEXT).await;
}

#[tokio::test]
async fn cancelling_an_anthropic_run_closes_the_request() {
    let server = ScriptedServer::start().await.unwrap();
    let agent = agent(Arc::new(anthropic(&server, HttpOptions::new())));
    cancel_mid_stream(server, agent, fixtures::ANTHROPIC_TEXT).await;
}
