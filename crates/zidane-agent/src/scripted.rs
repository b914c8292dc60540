//! `ScriptedModel`: a model that plays a script, for tests and examples.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use zidane_wire::ContentBlock;

use zidane_llm::{Model, ModelError, ModelRequest, ModelResponse};

type Reaction = Arc<dyn Fn(&ModelRequest) -> ModelResponse + Send + Sync>;

/// One step of a [`ScriptedModel`]'s script.
#[derive(Clone)]
#[non_exhaustive]
pub enum ScriptStep {
    /// Answer with this response, whatever the request.
    Respond(ModelResponse),
    /// Answer with what this function makes of the request — so a script can react to a
    /// `<task-notification>` it receives.
    React(Reaction),
    /// Fail with this error.
    Fail(ModelError),
}

impl fmt::Debug for ScriptStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Respond(response) => f.debug_tuple("Respond").field(response).finish(),
            Self::React(_) => f.write_str("React(Fn)"),
            Self::Fail(error) => f.debug_tuple("Fail").field(error).finish(),
        }
    }
}

#[derive(Default)]
struct Script {
    steps: VecDeque<ScriptStep>,
    served: usize,
    next_call: usize,
    /// Shared with the reaction that reads it, so recording a request copies nothing.
    requests: Vec<Arc<ModelRequest>>,
}

/// A [`Model`] that answers from a script, one step per call, and records every request.
///
/// Tool uses with an empty id get `call_<n>` (numbered over the whole script). When the
/// script runs out, the call fails with [`ModelError::ScriptExhausted`]. In a run, each
/// response reaches delta subscribers through the trait's default
/// [`stream`](Model::stream): its text blocks, its tool calls, its usage.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use zidane_agent::{Model, ModelRequest, ScriptedModel};
///
/// let model = ScriptedModel::new()
///     .tool_call("shell", serde_json::json!({ "command": "make", "run_in_background": true }))
///     .react(|request| {
///         let seen = request.notifications().len();
///         zidane_agent::ModelResponse::text(format!("{seen} tasks ended"))
///     });
/// let request = ModelRequest { system: None, turns: vec![], tools: vec![] };
/// assert!(model.complete(request.clone()).await?.has_tool_uses());
/// assert_eq!(model.complete(request.clone()).await?.joined_text(), "0 tasks ended");
/// assert!(model.complete(request).await.is_err());
/// # Ok::<(), zidane_agent::ModelError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct ScriptedModel {
    script: Arc<Mutex<Script>>,
}

impl ScriptedModel {
    /// A model with an empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a step.
    #[must_use]
    pub fn step(self, step: ScriptStep) -> Self {
        self.lock().steps.push_back(step);
        self
    }

    /// Appends a fixed response.
    #[must_use]
    pub fn respond(self, response: ModelResponse) -> Self {
        self.step(ScriptStep::Respond(response))
    }

    /// Appends a response of one text block (a step that ends the run).
    #[must_use]
    pub fn text(self, text: impl Into<String>) -> Self {
        self.respond(ModelResponse::text(text))
    }

    /// Appends a response of one tool use (its id is filled in).
    #[must_use]
    pub fn tool_call(self, name: impl Into<String>, input: serde_json::Value) -> Self {
        self.respond(ModelResponse::tool_use("", name, input))
    }

    /// Appends a step that looks at the request before answering.
    #[must_use]
    pub fn react(
        self,
        reaction: impl Fn(&ModelRequest) -> ModelResponse + Send + Sync + 'static,
    ) -> Self {
        self.step(ScriptStep::React(Arc::new(reaction)))
    }

    /// Appends a step that fails.
    #[must_use]
    pub fn fail(self, error: ModelError) -> Self {
        self.step(ScriptStep::Fail(error))
    }

    /// Appends a step to a model already shared (e.g. between a test and an agent).
    pub fn push(&self, step: ScriptStep) {
        self.lock().steps.push_back(step);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.lock()
            .requests
            .iter()
            .map(|request| ModelRequest::clone(request))
            .collect()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<ModelRequest> {
        self.lock()
            .requests
            .last()
            .map(|request| ModelRequest::clone(request))
    }

    /// Steps not played yet.
    pub fn remaining(&self) -> usize {
        self.lock().steps.len()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A panic inside a reaction only happens in a failing test; keep the script.
        zidane_context::lock(&self.script)
    }
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let script = self.lock();
        f.debug_struct("ScriptedModel")
            .field("steps", &script.steps)
            .field("served", &script.served)
            .finish()
    }
}

#[async_trait]
impl Model for ScriptedModel {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let request = Arc::new(request);
        let step = {
            let mut script = self.lock();
            script.requests.push(Arc::clone(&request));
            let served = script.served;
            let step = script
                .steps
                .pop_front()
                .ok_or(ModelError::ScriptExhausted { calls: served })?;
            script.served += 1;
            step
        };
        let mut response = match step {
            ScriptStep::Respond(response) => response,
            // The reaction runs outside the lock so it may inspect the model.
            ScriptStep::React(reaction) => reaction(&request),
            ScriptStep::Fail(error) => return Err(error),
        };
        let mut script = self.lock();
        for block in &mut response.content {
            if let ContentBlock::ToolUse { id, .. } = block
                && id.is_empty()
            {
                script.next_call += 1;
                *id = format!("call_{}", script.next_call);
            }
        }
        Ok(response)
    }
}
