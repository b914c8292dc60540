//! A host's way into a task's input and terminal (attaching to it): the context's
//! methods on this agent's handle, by task id, as the picker gives it.

use zidane_context::{ContextError, OutputChunk, Screen, TaskId, TaskInput, TtySize};

use crate::agent::Agent;
use crate::error::AttachError;

impl Agent {
    /// Writes input to a running task of this agent that takes it (a pipe or a
    /// terminal): for a terminal, bytes as if typed.
    ///
    /// Errors: a malformed id, no handle yet, an id this agent does not know, or the
    /// context's refusal (the task takes no input, has ended, or the context has no
    /// task input at all).
    pub async fn write_task_input(
        &self,
        task_id: &str,
        input: TaskInput,
    ) -> Result<(), AttachError> {
        let (handle, task_id) = self.task_of(task_id)?;
        known(
            task_id,
            self.context().write_input(handle, task_id, input).await,
        )
    }

    /// What a task's terminal shows now (the last screen once it has ended).
    ///
    /// Errors: as [`write_task_input`](Self::write_task_input); the context's
    /// [`ContextError::NotATerminal`] for a task without a terminal.
    pub async fn read_task_screen(&self, task_id: &str) -> Result<Screen, AttachError> {
        let (handle, task_id) = self.task_of(task_id)?;
        known(task_id, self.context().read_screen(handle, task_id).await)
    }

    /// Resizes a running task's terminal (the program is told, by `SIGWINCH`).
    ///
    /// Errors: as [`read_task_screen`](Self::read_task_screen).
    pub async fn resize_task(&self, task_id: &str, size: TtySize) -> Result<(), AttachError> {
        let (handle, task_id) = self.task_of(task_id)?;
        known(task_id, self.context().resize(handle, task_id, size).await)
    }

    /// Waits until a task's log holds bytes past `offset` or the task has ended, then
    /// returns at most `max` of them (see
    /// [`ExecutionContext::follow_output`](zidane_context::ExecutionContext::follow_output)):
    /// how a host learns, without polling, that an attached terminal changed.
    ///
    /// Errors: as [`write_task_input`](Self::write_task_input).
    pub async fn follow_task_output(
        &self,
        task_id: &str,
        offset: u64,
        max: usize,
    ) -> Result<OutputChunk, AttachError> {
        let (handle, task_id) = self.task_of(task_id)?;
        known(
            task_id,
            self.context()
                .follow_output(handle, task_id, offset, max)
                .await,
        )
    }

    fn task_of(
        &self,
        task_id: &str,
    ) -> Result<(zidane_context::ExecutionHandle, TaskId), AttachError> {
        let task_id = TaskId::parse(task_id).map_err(AttachError::InvalidId)?;
        let handle = self.current_handle().ok_or(AttachError::NoHandle)?;
        Ok((handle, task_id))
    }
}

/// The context's answer, with an unknown id as [`AttachError::Unknown`].
fn known<T>(task_id: TaskId, answer: Result<Option<T>, ContextError>) -> Result<T, AttachError> {
    match answer {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(AttachError::Unknown(task_id)),
        Err(error) => Err(AttachError::Context(error)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    use zidane_context::{
        ExecOptions, ExecOutput, ExecutionContext, ExecutionHandle, ReadRange, ReadResult,
    };

    use super::*;
    use crate::scripted::ScriptedModel;

    /// A context with one task, `bash_1`, in a terminal: it records what it is asked.
    #[derive(Default)]
    struct OneTerminal {
        asked: Mutex<Vec<String>>,
    }

    #[async_trait::async_trait]
    impl ExecutionContext for OneTerminal {
        async fn create_handle(&self) -> zidane_context::Result<ExecutionHandle> {
            Ok(ExecutionHandle::new(1))
        }
        async fn destroy(&self, _: ExecutionHandle) -> zidane_context::Result<()> {
            Ok(())
        }
        async fn exec(
            &self,
            _: ExecutionHandle,
            _: &str,
            _: ExecOptions,
        ) -> zidane_context::Result<ExecOutput> {
            Err(ContextError::unsupported("exec"))
        }
        async fn read_file(
            &self,
            _: ExecutionHandle,
            _: &Path,
            _: ReadRange,
        ) -> zidane_context::Result<ReadResult> {
            Err(ContextError::unsupported("read_file"))
        }
        async fn write_input(
            &self,
            _: ExecutionHandle,
            task_id: TaskId,
            input: TaskInput,
        ) -> zidane_context::Result<Option<()>> {
            self.asked
                .lock()
                .unwrap()
                .push(format!("{task_id} input {input:?}"));
            Ok((task_id == TaskId::from_number(1)).then_some(()))
        }
        async fn read_screen(
            &self,
            _: ExecutionHandle,
            task_id: TaskId,
        ) -> zidane_context::Result<Option<Screen>> {
            Ok((task_id == TaskId::from_number(1))
                .then(|| Screen::new(TtySize::new(2, 10), vec!["name?".into()], (0, 6))))
        }
        async fn resize(
            &self,
            _: ExecutionHandle,
            task_id: TaskId,
            size: TtySize,
        ) -> zidane_context::Result<Option<()>> {
            self.asked
                .lock()
                .unwrap()
                .push(format!("{task_id} resize {size}"));
            Err(ContextError::NotATerminal { task_id })
        }
    }

    #[tokio::test]
    async fn a_task_is_reached_by_its_id_on_the_agents_handle() {
        let context = Arc::new(OneTerminal::default());
        let agent = Agent::builder(Arc::new(ScriptedModel::new()), context.clone())
            .build()
            .unwrap();
        assert!(matches!(
            agent.read_task_screen("bash_1").await,
            Err(AttachError::NoHandle)
        ));
        agent.handle().await.unwrap();
        assert!(matches!(
            agent.write_task_input("call_1", TaskInput::Eof).await,
            Err(AttachError::InvalidId(_))
        ));
        agent
            .write_task_input("bash_1", TaskInput::text("zidane\r"))
            .await
            .unwrap();
        assert_eq!(
            agent.read_task_screen("bash_1").await.unwrap().text(),
            "name?"
        );
        assert!(matches!(
            agent.read_task_screen("bash_2").await,
            Err(AttachError::Unknown(id)) if id == TaskId::from_number(2)
        ));
        let refused = agent.resize_task("bash_1", TtySize::new(30, 100)).await;
        assert!(matches!(
            refused,
            Err(AttachError::Context(ContextError::NotATerminal { .. }))
        ));
        assert!(matches!(
            agent.follow_task_output("bash_1", 0, 1).await,
            Err(AttachError::Context(ContextError::Unsupported { .. }))
        ));
        assert_eq!(
            *context.asked.lock().unwrap(),
            [
                "bash_1 input Bytes([122, 105, 100, 97, 110, 101, 13])",
                "bash_1 resize 30x100"
            ]
        );
    }
}
