//! How a provider's events become a response: the [`Assemble`] trait the HTTP seam
//! drives, and what every provider's assembler does alike — the errors a stream's
//! content raises, a tool call's input parsed from its streamed JSON, and the response
//! handed back once the stream ends.

use serde_json::{Value, json};
use zidane_llm::{
    DeltaSink, ErrorSource, FinishReason, ModelDelta, ModelError, ModelErrorKind, ModelResponse,
    Usage,
};
use zidane_wire::ContentBlock;

use crate::http::{excerpt, request_error};

/// What a provider makes of the events of one response.
pub(crate) trait Assemble {
    /// Takes one event (its `event:` name, maybe empty, and its data).
    fn event(&mut self, name: &str, data: &str, sink: &DeltaSink) -> Result<Flow, ModelError>;
    /// The whole response, once the stream ended (`done`: with its end marker).
    fn finish(self, done: bool, sink: &DeltaSink) -> Result<ModelResponse, ModelError>;
}

/// Whether a stream goes on after an event.
pub(crate) enum Flow {
    Continue,
    Done,
}

/// An event whose data is not what the provider documents.
pub(crate) fn malformed(detail: impl Into<String>) -> ModelError {
    request_error(ModelErrorKind::MalformedStream, None, detail.into(), None)
}

/// An event whose data is not the JSON the provider documents.
pub(crate) fn malformed_json(data: &str, error: serde_json::Error) -> ModelError {
    not_json(format!("an event is not valid: {}", excerpt(data)), error)
}

/// A tool call's input, from the JSON text streamed for it; no text at all is an empty
/// object. `detail` words the error from an excerpt of the text.
pub(crate) fn tool_input(
    json: &str,
    detail: impl FnOnce(String) -> String,
) -> Result<Value, ModelError> {
    if json.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(json).map_err(|error| not_json(detail(excerpt(json)), error))
}

fn not_json(detail: String, error: serde_json::Error) -> ModelError {
    request_error(
        ModelErrorKind::MalformedStream,
        None,
        detail,
        Some(ErrorSource::new(error)),
    )
}

/// An error the provider sent in the stream instead of the rest of the response;
/// `what` names it, `message` is the provider's own words.
pub(crate) fn reported_mid_stream(kind: ModelErrorKind, what: &str, message: &str) -> ModelError {
    request_error(
        kind,
        None,
        format!(
            "the provider reported {what} mid-stream: {}",
            excerpt(message)
        ),
        None,
    )
}

/// A stream that ended before `marker`, the provider's sign that the response is whole.
pub(crate) fn ended_early(marker: &str) -> ModelError {
    request_error(
        ModelErrorKind::Transport,
        None,
        format!("the stream ended before {marker}"),
        None,
    )
}

/// The assembled response; its usage, when the provider reported one, is the last delta
/// `sink` gets.
pub(crate) fn respond(
    content: Vec<ContentBlock>,
    usage: Option<Usage>,
    finish_reason: Option<FinishReason>,
    sink: &DeltaSink,
) -> ModelResponse {
    if let Some(usage) = usage {
        sink.emit(ModelDelta::Usage(usage));
    }
    ModelResponse {
        content,
        usage,
        finish_reason,
    }
}
