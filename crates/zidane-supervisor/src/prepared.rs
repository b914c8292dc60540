//! A monitor's context built before its task comes, for the policy the next task most
//! likely has: the last start's.
//!
//! What a monitor pays before its task runs is mostly its context — the sandbox probe
//! (bubblewrap run once) and the lifeline — and its first spawn. A monitor kept ready
//! does both while it waits: the supervisor gives it the last start's policy and
//! environment ([`Preparation`]), it builds that context and starts one `true` in it.
//! A task whose policy and environment are the same takes that context; any other
//! gets one built as without preparation, by the same [`build`].

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use zidane_context::{
    BackgroundOptions, EnvPolicy, ExecutionContext as _, ExecutionHandle, SandboxPolicy,
};
use zidane_process::ProcessContext;

/// How long the warm-up `true` may take before the monitor stops waiting for it.
const WARM_UP_WAIT: Duration = Duration::from_secs(5);

/// What a task's context is built from: its session's policy and environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Preparation {
    /// Which of the session's environment the command gets.
    pub(crate) env_policy: EnvPolicy,
    /// The sandbox, the supervisor's directory hidden already.
    pub(crate) sandbox: SandboxPolicy,
    /// Between TERM and KILL.
    pub(crate) kill_grace: Duration,
    /// The session's environment, before the policy.
    pub(crate) env: Vec<(String, String)>,
}

/// A context built, and a handle in it, for a [`Preparation`].
pub(crate) struct Prepared {
    preparation: Preparation,
    context: ProcessContext,
    handle: ExecutionHandle,
}

/// The context of `preparation`, and a handle in it: what a monitor runs its task in.
pub(crate) async fn build(
    preparation: &Preparation,
) -> Result<(ProcessContext, ExecutionHandle), String> {
    let context = ProcessContext::builder()
        .kill_grace(preparation.kill_grace)
        .env_policy(preparation.env_policy.clone())
        .host_env(preparation.env.clone())
        .sandbox(preparation.sandbox.clone())
        .sweep_orphans_on_start(false)
        .try_build()
        .map_err(|error| error.to_string())?;
    let handle = context
        .create_handle()
        .await
        .map_err(|error| error.to_string())?;
    Ok((context, handle))
}

impl Prepared {
    /// Builds `preparation`'s context and starts one `true` in it (its log in
    /// `scratch`, removed after), so the task's own start is not the process's first.
    pub(crate) async fn new(preparation: Preparation, scratch: &Path) -> Result<Self, String> {
        let (context, handle) = build(&preparation).await?;
        if std::fs::create_dir_all(scratch).is_ok() {
            if let Ok(begun) = context
                .exec_background(handle, "true", BackgroundOptions::new(scratch))
                .await
            {
                let _ = context
                    .wait_background(
                        handle,
                        begun.task_id,
                        WARM_UP_WAIT,
                        CancellationToken::new(),
                    )
                    .await;
                let _ = context.forget_background(handle, begun.task_id).await;
            }
            let _ = std::fs::remove_dir_all(scratch);
        }
        Ok(Self {
            preparation,
            context,
            handle,
        })
    }

    /// The context and handle, if they were built for `preparation`.
    pub(crate) fn take_for(
        self,
        preparation: &Preparation,
    ) -> Option<(ProcessContext, ExecutionHandle)> {
        (self.preparation == *preparation).then_some((self.context, self.handle))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preparation(who: &str) -> Preparation {
        Preparation {
            env_policy: EnvPolicy::default(),
            sandbox: SandboxPolicy::off(),
            kill_grace: Duration::from_secs(1),
            env: vec![("ZIDANE_TEST_WHO".to_owned(), who.to_owned())],
        }
    }

    #[tokio::test]
    async fn a_context_prepared_for_one_session_is_taken_only_by_a_task_of_the_same_policy() {
        let scratch = tempfile::tempdir().unwrap();
        let ready = Prepared::new(preparation("first"), &scratch.path().join("warm"))
            .await
            .unwrap();
        assert!(
            !scratch.path().join("warm").exists(),
            "the warm-up log stays"
        );
        let (context, _) = ready.take_for(&preparation("first")).unwrap();
        assert!(
            context
                .passed_env_names()
                .contains(&"ZIDANE_TEST_WHO".to_owned())
        );
        let other = Prepared::new(preparation("first"), &scratch.path().join("warm"))
            .await
            .unwrap();
        assert!(other.take_for(&preparation("second")).is_none());
    }
}
