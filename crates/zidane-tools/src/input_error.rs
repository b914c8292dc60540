//! The words of a refused tool input. serde reports what went wrong in Rust's terms
//! (`invalid type: string "x", expected u64`); the model needs the field, what it takes
//! and what it sent. This module turns serde's error categories, the field's path and
//! the tool's input schema into that sentence, once for every tool.

use serde_json::{Map, Value};

use crate::near_miss::near_miss;

/// The longest rendering of a sent value an error quotes; a longer one is cut.
const MAX_QUOTED_CHARS: usize = 80;

/// One step of the path to the field serde refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// The error text for a refused input: `tool` is the tool's name, `input` what the model
/// sent, `schema` the tool's input schema, `path` where serde stopped and `message`
/// serde's own words.
pub(crate) fn describe(
    tool: &str,
    input: &Value,
    schema: &Value,
    path: &[Step],
    message: &str,
) -> String {
    if let Some(name) = quoted_after(message, "missing field `") {
        let mut field = path.to_vec();
        field.push(Step::Key(name.to_owned()));
        let (what, _) = what_it_takes(schema, &field, None);
        return format!("{tool}: `{}` is missing: give {what}", render_path(&field));
    }
    if let Some(name) = quoted_after(message, "unknown field `") {
        // serde_path_to_error ends the path with the unknown field itself.
        let container = match path.last() {
            Some(Step::Key(last)) if last == name => &path[..path.len() - 1],
            _ => path,
        };
        return unknown_field(tool, schema, container, name);
    }
    let kind = [
        "invalid type: ",
        "invalid value: ",
        "invalid length ",
        "unknown variant ",
    ]
    .iter()
    .any(|prefix| message.starts_with(prefix));
    let field = render_path(path);
    if !kind {
        // A tool's own check inside deserialisation already speaks plainly.
        return if path.is_empty() {
            format!("{tool}: invalid input: {message}")
        } else {
            format!("{tool}: `{field}`: {message}")
        };
    }
    let sent = value_at(input, path);
    let expected = message.rsplit_once(", expected ").map(|(_, e)| e);
    let (what, states_range) = what_it_takes(schema, path, expected);
    let bound = sent.filter(|_| !states_range).and_then(|sent| {
        let floor = schema_at(schema, path)
            .and_then(|node| node.get("minimum"))
            .and_then(Value::as_i64);
        out_of_range(sent, expected?, floor)
    });
    let got = match sent {
        Some(sent) => quote(sent),
        None => unexpected_phrase(message),
    };
    let subject = if path.is_empty() {
        "the input".to_owned()
    } else {
        format!("`{field}`")
    };
    match bound {
        Some(bound) => format!("{tool}: {subject} must be {what}, {bound}, got {got}"),
        None => format!("{tool}: {subject} must be {what}, got {got}"),
    }
}

/// An argument the tool does not declare, at `container` of its input.
fn unknown_field(tool: &str, schema: &Value, container: &[Step], name: &str) -> String {
    let empty = Map::new();
    let declared = schema_at(schema, container)
        .and_then(|node| node.get("properties"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut field = container.to_vec();
    field.push(Step::Key(name.to_owned()));
    unknown_field_words(tool, declared, &render_path(&field), name)
}

/// The words for an argument `field` (named `name`) that is not among `declared`: the
/// declared one it resembles, if any, and the ones the tool takes. The registry's
/// refusal of a misspelt argument says the same.
pub(crate) fn unknown_field_words(
    tool: &str,
    declared: &Map<String, Value>,
    field: &str,
    name: &str,
) -> String {
    if declared.is_empty() {
        return format!("{tool}: unknown field `{field}`; {tool} takes no arguments.");
    }
    let fields = declared
        .keys()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match near_miss(name, declared) {
        Some(meant) => format!(
            "{tool}: unknown field `{field}`; did you mean `{meant}`? The fields are: {fields}."
        ),
        None => format!("{tool}: unknown field `{field}`. The fields are: {fields}."),
    }
}

/// What a field takes, in words: the field's own phrase where its type alone would
/// mislead, else read from its schema, else from serde's expectation; and whether the
/// words already state the field's range.
fn what_it_takes(schema: &Value, path: &[Step], expected: Option<&str>) -> (String, bool) {
    if let [Step::Key(name)] = path
        && let Some((hint, states_range)) = field_hint(name)
    {
        return (hint.to_owned(), states_range);
    }
    if let Some(node) = schema_at(schema, path)
        && let Some(words) = schema_words(node)
    {
        let states_range = node.get("maximum").is_some();
        return (words, states_range);
    }
    let words = expected.map_or_else(|| "something else".to_owned(), rust_type_words);
    (words, false)
}

/// The top-level fields whose meaning their JSON type does not tell, and whether the
/// words state the field's range; the same field means the same in every tool that
/// takes it.
fn field_hint(name: &str) -> Option<(&'static str, bool)> {
    Some(match name {
        "task_id" => ("the id `shell` returned, such as bash_1", false),
        "command" => ("the command to run, as a string", false),
        "path" => ("a file path, as a string", false),
        "timeout_ms" => ("a positive number of milliseconds", false),
        "cpu_time_ms" => ("a positive number of milliseconds of CPU time", false),
        "max_output_bytes" => ("a positive number of bytes", false),
        "rows" => ("a number of terminal rows from 1 to 1000", true),
        "cols" => ("a number of terminal columns from 1 to 1000", true),
        "offset" => ("a line number (negative counts back from the end)", false),
        "limit" => ("a positive number of lines", false),
        "text" => ("the text to type, as a string", false),
        "keys" => ("a list of key names, such as [\"enter\"]", false),
        "notify_on" => ("a regular expression or a list of them", false),
        "prompt" => ("the subagent's task, as a string", false),
        _ => return None,
    })
}

/// The schema node of the field at `path`, following properties and array items.
fn schema_at<'a>(schema: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(schema, |node, step| match step {
        Step::Key(key) => node.get("properties")?.get(key),
        Step::Index(_) => node.get("items"),
    })
}

/// A schema node in words: `one of "closed", "pipe"`, `a string`, `a whole number from
/// 1 to 1000`.
fn schema_words(node: &Value) -> Option<String> {
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        let values = values.iter().map(quote).collect::<Vec<_>>().join(", ");
        return Some(format!("one of {values}"));
    }
    if let Some(options) = node.get("anyOf").and_then(Value::as_array) {
        let words = options
            .iter()
            .map(schema_words)
            .collect::<Option<Vec<_>>>()?;
        return Some(words.join(" or "));
    }
    let words = match node.get("type")?.as_str()? {
        "string" => "a string".to_owned(),
        "boolean" => "true or false".to_owned(),
        "number" => "a number".to_owned(),
        "object" => "an object".to_owned(),
        "integer" => {
            let min = node.get("minimum").and_then(Value::as_i64);
            let max = node.get("maximum").and_then(Value::as_i64);
            match (min, max) {
                (Some(min), Some(max)) => format!("a whole number from {min} to {max}"),
                (Some(min), None) => format!("a whole number of at least {min}"),
                (None, Some(max)) => format!("a whole number of at most {max}"),
                (None, None) => "a whole number".to_owned(),
            }
        }
        "array" => match node
            .get("items")
            .and_then(|items| items.get("type"))
            .and_then(Value::as_str)
        {
            Some("string") => "a list of strings".to_owned(),
            _ => "a list".to_owned(),
        },
        _ => return None,
    };
    Some(words)
}

/// serde's expectation in JSON's words, for a field its schema does not describe.
fn rust_type_words(expected: &str) -> String {
    match integer_range(expected) {
        Some(_) => "a whole number".to_owned(),
        None => expected.to_owned(),
    }
}

/// The range of the Rust integer type serde expected, by its name.
fn integer_range(expected: &str) -> Option<(i128, i128)> {
    Some(match expected {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" => (0, u64::MAX.into()),
        "usize" => (0, usize::MAX.try_into().ok()?),
        "isize" => (isize::MIN.try_into().ok()?, isize::MAX.try_into().ok()?),
        _ => return None,
    })
}

/// The range of the field's Rust type when a whole number was refused for being larger
/// than that type holds: `at most N` when the field takes no negative number (its type
/// or its schema's `floor` says so), else `from M to N`. A number below zero is refused
/// by such a field's words ("positive", "a number of") already.
fn out_of_range(sent: &Value, expected: &str, floor: Option<i64>) -> Option<String> {
    let (min, max) = integer_range(expected)?;
    let number = sent.as_number()?;
    let value = number
        .as_u64()
        .map(i128::from)
        .or_else(|| number.as_i64().map(i128::from))?;
    if value <= max {
        return None;
    }
    let min = floor.map_or(min, |floor| min.max(floor.into()));
    Some(if min < 0 {
        format!("from {min} to {max}")
    } else {
        format!("at most {max}")
    })
}

/// The value the model sent at `path`, if the path leads to one.
fn value_at<'a>(input: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(input, |value, step| match step {
        Step::Key(key) => value.get(key),
        Step::Index(index) => value.get(index),
    })
}

/// A sent value as JSON, cut to [`MAX_QUOTED_CHARS`].
fn quote(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= MAX_QUOTED_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_QUOTED_CHARS).collect();
    format!("{cut}…")
}

/// What serde says it got (`string "x"` of `invalid type: string "x", expected …`), for
/// a path that leads to no value of the input.
fn unexpected_phrase(message: &str) -> String {
    let rest = ["invalid type: ", "invalid value: ", "unknown variant "]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .unwrap_or(message);
    rest.split_once(", expected")
        .map_or(rest, |(got, _)| got)
        .to_owned()
}

/// The name between backquotes right after `prefix`, when `message` starts with it.
fn quoted_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message
        .strip_prefix(prefix)?
        .split_once('`')
        .map(|(name, _)| name)
}

/// A path as the model wrote it: `keys[2]`, `until.port`.
fn render_path(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;
    use proptest::prelude::*;
    use serde_json::json;

    use crate::input::{
        ReadFileArgs, ShellArgs, ShellInputArgs, ShellKillArgs, ShellNotifyArgs, ShellScreenArgs,
        WaitTaskArgs, parse,
    };

    use super::*;

    /// The error text `tool`'s argument type gives for `input`, or `None` if it parses.
    fn refusal(tool: &str, input: Value) -> Option<String> {
        fn text<T>(result: Result<T, crate::ToolOutput>) -> Option<String> {
            result.err().map(|output| output.text)
        }
        match tool {
            "shell" => text(parse::<ShellArgs>(tool, input)),
            "shell_kill" => text(parse::<ShellKillArgs>(tool, input)),
            "wait_task" => text(parse::<WaitTaskArgs>(tool, input)),
            "read_file" => text(parse::<ReadFileArgs>(tool, input)),
            "shell_input" => text(parse::<ShellInputArgs>(tool, input)),
            "shell_screen" => text(parse::<ShellScreenArgs>(tool, input)),
            "shell_notify" => text(parse::<ShellNotifyArgs>(tool, input)),
            other => panic!("no argument type for {other}"),
        }
    }

    const TOOLS: &[&str] = &[
        "shell",
        "shell_kill",
        "wait_task",
        "read_file",
        "shell_input",
        "shell_screen",
        "shell_notify",
    ];

    #[test]
    fn every_refusal_names_the_tool_the_field_and_what_it_takes() {
        let cases: Vec<(&str, Value)> = vec![
            // missing fields
            ("shell", json!({})),
            ("shell_kill", json!({})),
            ("wait_task", json!({ "timeout_ms": 10 })),
            ("read_file", json!({ "offset": 2 })),
            ("shell_input", json!({ "text": "y\n" })),
            ("shell_screen", json!({})),
            ("shell_notify", json!({ "task_id": "bash_1" })),
            ("shell_notify", json!({ "notify_on": "error" })),
            // wrong types
            ("shell", json!({ "command": 42 })),
            ("shell", json!({ "command": "ls", "timeout_ms": "soon" })),
            ("shell", json!({ "command": "ls", "timeout_ms": 1.5 })),
            (
                "shell",
                json!({ "command": "ls", "run_in_background": "yes" }),
            ),
            ("shell", json!({ "command": "ls", "tty": 1 })),
            ("shell", json!({ "command": "ls", "rows": "tall" })),
            ("shell", json!({ "command": "ls", "cpu_time_ms": [] })),
            ("shell", json!({ "command": "ls", "max_output_bytes": {} })),
            ("shell", json!({ "command": "ls", "stdin": "tty" })),
            ("shell", json!({ "command": "ls", "stdin": true })),
            ("shell_kill", json!({ "task_id": 1 })),
            ("shell_screen", json!({ "task_id": null })),
            (
                "wait_task",
                json!({ "task_id": "bash_1", "timeout_ms": "1s" }),
            ),
            ("read_file", json!({ "path": ["/x"] })),
            ("read_file", json!({ "path": "/x", "offset": "last" })),
            ("read_file", json!({ "path": "/x", "limit": "all" })),
            ("read_file", json!({ "path": "/x", "limit": -1 })),
            ("shell_input", json!({ "task_id": "bash_1", "text": 5 })),
            (
                "shell_input",
                json!({ "task_id": "bash_1", "keys": "enter" }),
            ),
            (
                "shell_input",
                json!({ "task_id": "bash_1", "keys": ["enter", 7] }),
            ),
            ("shell_input", json!({ "task_id": "bash_1", "eof": "yes" })),
            // beyond what the field's type holds
            ("read_file", json!({ "path": "/x", "offset": u64::MAX })),
            ("shell", json!({ "command": "ls", "timeout_ms": u64::MAX })),
            (
                "shell",
                json!({ "command": "ls", "rows": 9_223_372_036_854_775_808_u64 }),
            ),
            // unknown fields
            ("shell", json!({ "command": "ls", "timout_ms": 5 })),
            ("shell", json!({ "command": "ls", "colour": "red" })),
            ("wait_task", json!({ "task_id": "bash_1", "timeoutMs": 10 })),
            ("read_file", json!({ "path": "/x", "Limit": 5 })),
            (
                "shell_kill",
                json!({ "task_id": "bash_1", "signal": "TERM" }),
            ),
            // a long value is cut
            (
                "shell",
                json!({ "command": "x".repeat(200).chars().collect::<Vec<_>>() }),
            ),
        ];
        let mut report = String::new();
        for (tool, input) in cases {
            let Some(text) = refusal(tool, input.clone()) else {
                panic!("{tool} {input} was accepted");
            };
            report.push_str(&format!("{tool} {input}\n  → {text}\n"));
        }
        assert_snapshot!("refusals", report);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z_]{0,12}".prop_map(Value::from),
            "bash_[0-9]{1,3}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            let field = prop_oneof![
                Just("command".to_owned()),
                Just("task_id".to_owned()),
                Just("timeout_ms".to_owned()),
                Just("path".to_owned()),
                Just("offset".to_owned()),
                Just("keys".to_owned()),
                Just("notify_on".to_owned()),
                Just("stdin".to_owned()),
                Just("until".to_owned()),
                "[a-zA-Z_]{1,12}",
            ];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(field, inner, 0..5)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_json_is_parsed_or_refused_by_a_message_naming_the_tool(
            input in json_value(),
            tool in prop::sample::select(TOOLS),
        ) {
            if let Some(text) = refusal(tool, input.clone()) {
                let prefix = format!("{tool}: ");
                prop_assert!(text.starts_with(&prefix), "{input} → {text}");
                // serde's own phrasing never reaches the model.
                prop_assert!(!text.contains("expected i64"), "{input} → {text}");
                prop_assert!(!text.contains("expected u"), "{input} → {text}");
                prop_assert!(!text.contains("invalid type"), "{input} → {text}");
            }
        }
    }
}
