//! The tools' argument types, the schemas derived from them, and the one place model input
//! is deserialised.

use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use zidane_context::{DETACHED_TASK_ID_PREFIX, TASK_ID_PREFIX, TaskId};

use serde_path_to_error::Segment;

use crate::input_error::{self, Step};
use crate::tool::ToolOutput;

/// The arguments of the `shell` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// The command to run, in the shell the tool's description names.
    pub command: String,
    /// Kill the command's process group after this many milliseconds. For a background
    /// task: its wall-time budget.
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<i64>,
    /// Start the command as a background task and return at once with its id and log
    /// path. Use for long-running commands (builds, test suites, servers).
    pub run_in_background: Option<bool>,
    /// Keep the task running after this session's host exits (implies
    /// `run_in_background`): it gets an id like `bash_d1`, `zidane ps` lists it, and the
    /// next session in this workspace can wait for it and is told its end once.
    pub detach: Option<bool>,
    /// Background only: the labels the worker that runs the task must carry (`["gpu"]`):
    /// the least-loaded worker carrying all of them runs it.
    pub labels: Option<Vec<String>>,
    /// Background only: kill the task once its processes together have used this much
    /// CPU time, in milliseconds.
    #[schemars(range(min = 1))]
    pub cpu_time_ms: Option<i64>,
    /// Background only: keep at most this many bytes of the task's output in its log;
    /// later output is dropped and counted, and the task keeps running.
    #[schemars(range(min = 1))]
    pub max_output_bytes: Option<i64>,
    /// Background only: `"pipe"` keeps the task's stdin open, so you can answer what
    /// it asks with `shell_input`. Default `"closed"`: a read gets end of file at once.
    #[serde(default)]
    #[schemars(schema_with = "stdin_schema")]
    pub stdin: Option<StdinChoice>,
    /// Background only: run the command in a terminal (`TERM=xterm-256color`), for
    /// programs that need one: prompts that only show on a terminal (`read -p`,
    /// passwords), REPLs, full-screen programs (`less`, `top`, `vi`). Its input is open
    /// (`shell_input`) and its screen can be read (`shell_screen`). Output in the log
    /// is what the terminal got, escape sequences included.
    pub tty: Option<bool>,
    /// With `tty`: the terminal's rows (default 24).
    #[schemars(range(min = 1, max = 1000))]
    pub rows: Option<i64>,
    /// With `tty`: the terminal's columns (default 80).
    #[schemars(range(min = 1, max = 1000))]
    pub cols: Option<i64>,
    /// Background only: a regular expression (Rust regex syntax), or a list of them.
    /// Every new line of the task's log that matches one is pushed to you as a
    /// `<task-event>` block, without polling: errors, warnings, "listening on", test
    /// failures. Change them later with `shell_notify`.
    #[serde(default)]
    #[schemars(schema_with = "notify_on_schema")]
    pub notify_on: Option<serde_json::Value>,
    /// Run this one command outside the sandbox, for what the sandbox forbids and the
    /// task needs (writing outside the writable places, a credential store). A person is
    /// asked first, shown the command and `justification`; nothing runs unless they
    /// approve.
    pub outside_sandbox: Option<bool>,
    /// With `outside_sandbox`: why this command must run outside the sandbox, in a
    /// sentence for the person asked to approve it.
    pub justification: Option<String>,
}

/// The schema of `notify_on` (and `shell_notify`'s): a string or a list of strings.
fn notify_on_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "type": "string" } }
        ]
    })
}

/// The arguments of the `shell_notify` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellNotifyArgs {
    /// The running background task, as returned by `shell`, e.g. `bash_1`.
    #[schemars(pattern(r"^bash_(0|[1-9][0-9]*|d[1-9][0-9]*)$"))]
    pub task_id: String,
    /// The task's new patterns: a regular expression or a list of them, replacing the
    /// ones it had; `[]` clears them.
    #[schemars(schema_with = "notify_on_schema")]
    pub notify_on: serde_json::Value,
}

/// The schema of `shell`'s `stdin`: a plain string enum (the derived one wraps each
/// value in its own documented alternative, which says nothing the field does not).
fn stdin_schema(_: &mut SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["closed", "pipe"]
    })
}

/// What a background task's stdin is, as the `shell` tool takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StdinChoice {
    /// Closed: a read gets end of file at once.
    Closed,
    /// A pipe kept open for `shell_input`.
    Pipe,
}

/// The arguments of the `shell_input` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellInputArgs {
    /// The running background task to write to, as returned by `shell`, e.g. `bash_1`.
    #[schemars(pattern(r"^bash_(0|[1-9][0-9]*|d[1-9][0-9]*)$"))]
    pub task_id: String,
    /// Text to type, written as is (add `"keys": ["enter"]`, or end it with a newline
    /// on a pipe, to submit a line).
    pub text: Option<String>,
    /// Keys to press after `text`, in order: `enter`, `tab`, `escape`, `backspace`,
    /// `delete`, `up`, `down`, `left`, `right`, `home`, `end`, `page-up`, `page-down`,
    /// `space`, and `ctrl-a` … `ctrl-z` (`ctrl-c` interrupts, `ctrl-d` ends input, `ctrl-z`
    /// suspends: terminal tasks only).
    pub keys: Option<Vec<String>>,
    /// After `text` and `keys`: end the input (a pipe is closed; a terminal gets ctrl-d).
    pub eof: Option<bool>,
}

/// The arguments of the `shell_screen` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellScreenArgs {
    /// The background task started with `tty: true`, e.g. `bash_1`.
    #[schemars(pattern(r"^bash_(0|[1-9][0-9]*|d[1-9][0-9]*)$"))]
    pub task_id: String,
}

/// The arguments of the `shell_kill` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellKillArgs {
    /// The background task to kill, as returned by `shell`, e.g. `bash_1`.
    #[schemars(pattern(r"^bash_(0|[1-9][0-9]*|d[1-9][0-9]*)$"))]
    pub task_id: String,
}

/// The arguments of the `wait_task` tool.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitTaskArgs {
    /// The background task to wait for, as returned by `shell`, e.g. `bash_1`.
    #[schemars(pattern(r"^bash_(0|[1-9][0-9]*|d[1-9][0-9]*)$"))]
    pub task_id: String,
    /// How long to wait, in milliseconds (the default and the cap are in the tool's
    /// description; larger values are capped). The task keeps running if the wait times
    /// out.
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<i64>,
    /// Wait until the task is ready instead of until it ends: `{"pattern": "<regex>"}`
    /// (a line of its log matches; `"from": "now"` skips lines already written),
    /// `{"port": 8080}` (127.0.0.1 accepts a TCP connection) or
    /// `{"url": "http://127.0.0.1:8080/health"}` (a GET answers 2xx or 3xx). Returns at
    /// once if the task ends first. Use it right after starting a server in the
    /// background, instead of `sleep` or re-reading the log.
    #[serde(default)]
    #[schemars(schema_with = "crate::readiness::until_schema")]
    pub until: Option<serde_json::Value>,
}

/// The arguments of the `read_file` tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file to read, e.g. a background task's output path exactly as `shell`
    /// returned it.
    pub path: String,
    /// Lines to skip before the window starts (0 = from the first line). Negative
    /// counts from the end: -100 starts 100 lines before the end, so the last 100 lines,
    /// read from the end of the file however large it is.
    pub offset: Option<i64>,
    /// Most lines to return (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

/// The input schema of `T`, as a tool spec carries it: a plain object schema without
/// `$schema`, title or root description, optional fields typed without `null`, doc
/// comments unwrapped into sentences. It is standard JSON Schema 2020-12: no format the
/// standard does not define (an unsigned integer says `minimum: 0` instead). Derive the
/// schema of a tool's input with this and deserialise the same type, so the two cannot
/// drift.
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args {
///     /// What to greet.
///     name: String,
/// }
/// let schema = zidane_tools::input_schema::<Args>();
/// assert_eq!(schema["required"][0], "name");
/// ```
pub fn input_schema<T: JsonSchema>() -> serde_json::Value {
    let mut value = crate::schema_generator::standard_schema::<T>();
    if let Some(root) = value.as_object_mut() {
        root.remove("description");
        if let Some(properties) = root
            .get_mut("properties")
            .and_then(serde_json::Value::as_object_mut)
        {
            for property in properties.values_mut() {
                // `#[serde(default)]` on an optional field says nothing the model needs.
                if let Some(object) = property.as_object_mut()
                    && object.get("default") == Some(&serde_json::Value::Null)
                {
                    object.remove("default");
                }
                strip_null_type(property);
                unwrap_description(property);
            }
        }
    }
    value
}

/// `"type": ["integer", "null"]` → `"type": "integer"`: an optional field is one the
/// model may leave out, which `required` already says.
fn strip_null_type(property: &mut serde_json::Value) {
    let Some(types) = property
        .get_mut("type")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return;
    };
    types.retain(|t| t != "null");
    if types.len() == 1 {
        let single = types.remove(0);
        property["type"] = single;
    }
}

/// Doc comments wrap at 90 columns; the model should read sentences, so single line
/// breaks become spaces (paragraph breaks stay).
fn unwrap_description(property: &mut serde_json::Value) {
    if let Some(description) = property
        .get("description")
        .and_then(serde_json::Value::as_str)
    {
        let unwrapped = description
            .split("\n\n")
            .map(|paragraph| {
                paragraph
                    .split('\n')
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        property["description"] = serde_json::Value::String(unwrapped);
    }
}

/// Deserialises a tool's input, or an error result that tells the model what to fix:
/// the field, what it takes and what was sent, in one translation of serde's errors for every tool.
///
/// ```
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct Args {
///     /// How long to wait.
///     timeout_ms: i64,
/// }
/// let error = zidane_tools::parse_input::<Args>("t", serde_json::json!({ "timeout_ms": "soon" }))
///     .unwrap_err();
/// assert_eq!(
///     error.text,
///     "t: `timeout_ms` must be a positive number of milliseconds, got \"soon\""
/// );
/// ```
pub fn parse_input<T: DeserializeOwned + JsonSchema>(
    tool: &str,
    input: serde_json::Value,
) -> Result<T, ToolOutput> {
    if !input.is_object() {
        return Err(ToolOutput::error(format!(
            "{tool}: invalid input: expected a JSON object of arguments, got {}",
            json_kind(&input)
        )));
    }
    serde_path_to_error::deserialize(&input).map_err(|error| {
        let path: Vec<Step> = error
            .path()
            .iter()
            .filter_map(|segment| match segment {
                Segment::Seq { index } => Some(Step::Index(*index)),
                Segment::Map { key } => Some(Step::Key(key.clone())),
                Segment::Enum { .. } | Segment::Unknown => None,
            })
            .collect();
        let message = error.into_inner().to_string();
        let schema = input_schema::<T>();
        ToolOutput::error(input_error::describe(
            tool, &input, &schema, &path, &message,
        ))
    })
}

/// [`parse_input`], for this crate's tools.
pub(crate) fn parse<T: DeserializeOwned + JsonSchema>(
    tool: &str,
    input: serde_json::Value,
) -> Result<T, ToolOutput> {
    parse_input(tool, input)
}

/// Parses a task id the model sent, or an error result explaining the `bash_<n>` and
/// `bash_d<n>` forms.
pub(crate) fn parse_task_id(tool: &str, input: &str) -> Result<TaskId, ToolOutput> {
    TaskId::parse(input).map_err(|_| {
        ToolOutput::error(format!(
            "{tool}: invalid task_id {input:?}: a task id is `{TASK_ID_PREFIX}` followed by a \
             number, e.g. `{TASK_ID_PREFIX}1`, or a detached task's \
             `{DETACHED_TASK_ID_PREFIX}` followed by a number, e.g. \
             `{DETACHED_TASK_ID_PREFIX}7`, exactly as `shell` returned it"
        ))
    })
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
