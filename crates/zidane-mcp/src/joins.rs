//! A repeated wait on the same task joins the one in progress: a host that gave up on a
//! wait and asks again, or two calls at once, get one wait on the task, not two.
//!
//! The wait itself is the agent's own `wait_task` call, run once for everyone who waits
//! on that task with no `until`; it stops when the last of them stops waiting (a
//! cancelled request), never the task. Every waiter gets its answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zidane_agent::{Agent, ToolCall};
use zidane_tools::{ToolOutput, WAIT_TASK};

use zidane_context::lock;

/// The waits in progress, by the task they wait on.
#[derive(Default)]
pub(crate) struct Joins {
    waits: Mutex<HashMap<String, InProgress>>,
    generations: AtomicU64,
}

#[derive(Clone)]
struct InProgress {
    answer: Shared<BoxFuture<'static, Answer>>,
    /// Those waiting on it now.
    waiters: Arc<Mutex<usize>>,
    /// Stops the wait (not the task).
    stop: CancellationToken,
    generation: u64,
}

type Answer = Result<ToolOutput, String>;

impl Joins {
    /// Waits as `wait_task` with `input` does, joining a wait on the same task already in
    /// progress. `cancel` is this request's: it stops this caller's waiting, and the wait
    /// itself once nobody else waits. `Err` is the agent's failure, as text.
    pub(crate) async fn wait(
        &self,
        agent: &Agent,
        call_id: String,
        input: Value,
        cancel: CancellationToken,
    ) -> Answer {
        let Some(task) = joinable(&input) else {
            // A readiness wait (`until`) or a malformed one: its own call.
            return agent
                .call_tool(ToolCall::new(call_id, WAIT_TASK, input).cancel(cancel))
                .await
                .map_err(|error| error.to_string());
        };
        let wait = self.join_or_start(agent, call_id, &task, input);
        *lock(&wait.waiters) += 1;
        let _leaving = Leaving {
            joins: self,
            task: &task,
            wait: &wait,
        };
        tokio::select! {
            answer = wait.answer.clone() => answer,
            () = cancel.cancelled() => Ok(ToolOutput::error("cancelled: the call was aborted")),
        }
    }

    fn join_or_start(
        &self,
        agent: &Agent,
        call_id: String,
        task: &str,
        input: Value,
    ) -> InProgress {
        let mut waits = lock(&self.waits);
        if let Some(wait) = waits.get(task) {
            tracing::debug!(task, "a wait joins the one in progress");
            return wait.clone();
        }
        let stop = CancellationToken::new();
        let agent = agent.clone();
        let call = ToolCall::new(call_id, WAIT_TASK, input).cancel(stop.clone());
        let running = tokio::spawn(async move { agent.call_tool(call).await });
        let answer = async move {
            match running.await {
                Ok(answer) => answer.map_err(|error| error.to_string()),
                Err(error) => Err(format!("the wait failed: {error}")),
            }
        }
        .boxed()
        .shared();
        let wait = InProgress {
            answer,
            waiters: Arc::new(Mutex::new(0)),
            stop,
            generation: self.generations.fetch_add(1, Ordering::Relaxed),
        };
        waits.insert(task.to_owned(), wait.clone());
        wait
    }
}

/// One waiter leaving: the last one takes the wait out of the table, and stops it if it
/// has not ended.
struct Leaving<'a> {
    joins: &'a Joins,
    task: &'a str,
    wait: &'a InProgress,
}

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        let mut waiters = lock(&self.wait.waiters);
        *waiters = waiters.saturating_sub(1);
        if *waiters > 0 {
            return;
        }
        drop(waiters);
        let mut waits = lock(&self.joins.waits);
        if waits
            .get(self.task)
            .is_some_and(|wait| wait.generation == self.wait.generation)
        {
            waits.remove(self.task);
        }
        self.wait.stop.cancel();
    }
}

/// The task a plain wait waits on; `None` for a readiness wait or a malformed input.
fn joinable(input: &Value) -> Option<String> {
    if input.get("until").is_some_and(|until| !until.is_null()) {
        return None;
    }
    input
        .get("task_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
}
