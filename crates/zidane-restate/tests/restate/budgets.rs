//! A call's budgets travel with the start to the worker, which enforces them.

use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::{ExecutionContext, KillReason, TaskStatus};

use crate::support::{agent, all_ended, list_until, notified, session_on, until_group_gone};

const WALL_TIME: KillReason = KillReason::WallTime {
    budget: std::time::Duration::from_millis(400),
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_enforces_the_output_cap_and_the_wall_time_budget() {
    let Some((cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            serde_json::json!({
                "command": "head -c 5000 /dev/zero | tr '\\0' a; sleep 1000 & sleep 1000",
                "run_in_background": true,
                "timeout_ms": 400,
                "max_output_bytes": 1000,
            }),
        )
        .text("started")
        .text("told");
    let agent = agent(model, context.clone(), handle, &cluster.store());
    agent.run(RunOptions::new("start")).await.unwrap();

    let entries = list_until(context.as_ref(), handle, |e| all_ended(e, 1)).await;
    assert_eq!(entries[0].status(), TaskStatus::Killed);
    assert_eq!(entries[0].kill_reason(), Some(WALL_TIME));
    until_group_gone(entries[0].pid).await;
    let log = std::fs::read_to_string(&entries[0].output_path).unwrap();
    assert_eq!(
        log,
        format!(
            "{}\n<output-truncated bytes-dropped=\"4000\"/>\n",
            "a".repeat(1000)
        ),
        "the worker kept only the capped bytes"
    );

    let told = agent.run(RunOptions::new("status?")).await.unwrap();
    assert_eq!(notified(&told), ["bash_1"]);
    assert_eq!(told.notified[0].kill_reason, Some(WALL_TIME));
    agent.destroy().await.unwrap();
    context.destroy(handle).await.unwrap();
}
