//! A host killed with SIGKILL while its tasks run: the tasks keep running on the
//! workers, and a new host process on the same session gets each exit exactly once.
//!
//! The crashed host is this test binary re-executed to run only
//! [`crashing_host_helper`] (ignored, and inert unless [`HOST`]'s variable is set).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use zidane_agent::{ModelResponse, RunOptions, ScriptedModel, SessionStore};
use zidane_context::{ExecutionContext, ExecutionHandle, TaskStatus};
use zidane_restate::RestateContext;
use zidane_test_support::CrashingHost;

use crate::support::{WAIT, agent, all_ended, bg, list_until, notified, session_on, status_of};

/// The helper, and the variable that gives it
/// `ingress|workers,comma,separated|handle|store dir`.
const HOST: CrashingHost = CrashingHost::new(
    "host_crash::crashing_host_helper",
    "ZIDANE_TEST_CRASHING_HOST",
);

/// Not a test: the host that crashes. Its agent starts two background tasks, its turn
/// ends (the session is saved), and it SIGKILLs itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for a_host_killed_mid_task_gets_each_exit_once_after_restart"]
async fn crashing_host_helper() {
    HOST.crash_after(async |setup| {
        let parts: Vec<&str> = setup.split('|').collect();
        let context = Arc::new(RestateContext::new(parts[0], parts[1].split(',')).unwrap());
        let handle = ExecutionHandle::new(parts[2].parse().unwrap());
        let store = SessionStore::new(parts[3]);
        let model = ScriptedModel::new()
            .respond(
                ModelResponse::tool_use("a", "shell", bg("sleep 2; echo one")).with_tool_use(
                    "b",
                    "shell",
                    bg("sleep 2.5; echo two; exit 5"),
                ),
            )
            .text("both started");
        let agent = agent(model, context, handle, &store);
        agent.run(RunOptions::new("start two")).await.unwrap();
        agent
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_killed_mid_task_gets_each_exit_once_after_restart() {
    let Some((cluster, context, handle)) = session_on(&["w1", "w2"]).await else {
        return;
    };
    let store = cluster.store();
    let setup = format!(
        "{}|w1,w2|{}|{}",
        cluster.server.ingress_url(),
        handle.id(),
        store.user_dir().display()
    );
    let mut host = HOST
        .command(&setup)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = host.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "the host did not die");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "the host died by SIGKILL");

    // A new host process (here: a new agent in this one) on the stored session.
    let model = ScriptedModel::new().text("both told").text("nothing new");
    let second = agent(model, context.clone(), handle, &store);
    let entries = list_until(context.as_ref(), handle, |e| all_ended(e, 2)).await;
    assert_eq!(
        status_of(&entries, 1),
        TaskStatus::Exited,
        "ran on after the host died"
    );
    assert_eq!(entries[1].exit_code(), Some(5));
    let told = second.run(RunOptions::new("what happened?")).await.unwrap();
    assert_eq!(notified(&told), ["bash_1", "bash_2"]);
    let again = second.run(RunOptions::new("and now?")).await.unwrap();
    assert!(again.notified.is_empty());
    drop(second);

    // And a third host: the stored session says both were told.
    let third = agent(
        ScriptedModel::new().text("nothing new"),
        cluster.context(),
        handle,
        &store,
    );
    let run = third.run(RunOptions::new("news?")).await.unwrap();
    assert!(run.notified.is_empty(), "no exit repeated");
    context.destroy(handle).await.unwrap();
}
