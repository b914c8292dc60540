//! A foreground `exec` runs on a worker and returns its output; bad input is refused
//! before anything reaches Restate.

use std::time::Duration;

use zidane_context::{ContextError, ExecOptions, ExecutionContext};

use crate::support::session_on;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_command_runs_on_a_worker() {
    let Some((_cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let output = context
        .exec(handle, "echo hi; echo err >&2; exit 2", ExecOptions::new())
        .await
        .unwrap();
    assert_eq!((output.output.as_str(), output.exit_code), ("hi\nerr\n", 2));
    let timed = context
        .exec(
            handle,
            "sleep 30",
            ExecOptions::new().timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    assert!(timed.timed_out);
    let refused = context.exec(handle, "  ", ExecOptions::new()).await;
    assert!(matches!(refused, Err(ContextError::InvalidCommand { .. })));
    context.destroy(handle).await.unwrap();
}
