//! `on_exit` fires exactly once, whatever races: natural exit, kill, wait, destroy.

use std::collections::HashMap;

use zidane_context::{ExecutionContext, TaskStatus};
use zidane_process::ProcessContext;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exit_fires_exactly_once_under_racing_kill_and_exit() {
    let f = Fixture::with(ProcessContext::builder().max_background_tasks(64)).await;
    let exits = Exits::default();
    let rounds = 40;
    for round in 0..rounds {
        // Alternate tasks that exit at once and tasks that are mid-flight at the kill.
        let command = if round % 2 == 0 { "true" } else { "echo x" };
        let started = f.start(command, &exits).await;
        let (killed, waited) = tokio::join!(
            f.context.kill_background(f.handle, started.task_id),
            f.context
                .wait_background(f.handle, started.task_id, WAIT, Default::default()),
        );
        let killed = killed.unwrap().expect("kill returns the exit");
        let waited = waited.unwrap().expect("wait returns the exit");
        assert_eq!(killed, waited);
        // on_exit runs before kill and wait return.
        let fired: Vec<_> = exits
            .all()
            .into_iter()
            .filter(|e| e.task_id == started.task_id)
            .collect();
        assert_eq!(fired, vec![killed.clone()], "round {round}");
        match killed.status {
            TaskStatus::Killed => assert!(killed.signal.is_some() || killed.exit_code == 0),
            TaskStatus::Exited => assert_eq!(killed.exit_code, 0),
            TaskStatus::Running => panic!("a running status in an exit"),
            TaskStatus::Lost => panic!("a local task cannot lose its worker"),
        }
    }

    // A destroy racing the last kills changes nothing for settled tasks.
    let started = f.start("sleep 1000", &exits).await;
    let (killed, destroyed) = tokio::join!(
        f.context.kill_background(f.handle, started.task_id),
        f.context.destroy(f.handle),
    );
    destroyed.unwrap();
    // The kill may have lost the race to the destroy (the handle is gone then).
    if let Ok(Some(exit)) = killed {
        assert_eq!(exit.status, TaskStatus::Killed);
    }
    let all = exits.wait_for(rounds + 1).await;
    let mut per_task: HashMap<_, usize> = HashMap::new();
    for exit in &all {
        *per_task.entry(exit.task_id).or_default() += 1;
    }
    assert_eq!(per_task.len(), rounds + 1);
    assert!(per_task.values().all(|n| *n == 1), "{per_task:?}");
}
