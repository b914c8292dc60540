//! Arguments a tool does not declare. Hosts add arguments of their own to every tool
//! they list and pass them on in the call: Gemini CLI adds a boolean `wait_for_previous`
//! to each tool's schema and tells its model to set it on a call that depends on an
//! earlier one. Refusing such a call would stop every dependent command in that host, so
//! an argument the tool does not declare never stops a call, with one exception: a
//! near-miss of an argument the tool does declare (`run_in_backgroud`, `timeout`) is a
//! misspelling the model must hear about, since ignoring it would run the command in a
//! way the model did not ask for.
//!
//! So, for a tool whose schema closes its object (`additionalProperties: false`):
//! - an argument a host is known to add is dropped silently ([`HOST_ADDED`]);
//! - a near-miss of a declared argument refuses the call, naming the argument it
//!   resembles; nothing runs;
//! - any other undeclared argument is dropped, and the result ends with a note naming
//!   it, so the model learns it had no effect.
//!
//! A tool whose schema leaves its object open takes whatever it is given, as it says.

use serde_json::{Map, Value};

use crate::input_error::unknown_field_words;
use crate::near_miss::near_miss;

/// Arguments hosts add to every tool they list, dropped without a note: the model set
/// them because its host told it to.
pub(crate) const HOST_ADDED: &[&str] = &[
    // Gemini CLI: "wait for the previous call to finish before this one starts".
    "wait_for_previous",
];

/// What [`strip`] left out of a call's arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Stripped {
    /// Undeclared arguments that are neither host-added nor near-misses, by name: the
    /// result names them.
    pub(crate) ignored: Vec<String>,
}

impl Stripped {
    /// The note that ends the result of a call that had ignored arguments, or `None`.
    pub(crate) fn note(&self, tool: &str) -> Option<String> {
        if self.ignored.is_empty() {
            return None;
        }
        let names = self
            .ignored
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let (noun, verb) = if self.ignored.len() == 1 {
            ("argument", "it was")
        } else {
            ("arguments", "they were")
        };
        Some(format!(
            "Note: {tool} does not take the {noun} {names}; {verb} ignored."
        ))
    }
}

/// Removes from `input` the arguments `schema` does not declare, as the module says; an
/// error names a misspelled argument and the one it resembles.
pub(crate) fn strip(tool: &str, schema: &Value, input: &mut Value) -> Result<Stripped, String> {
    let (Some(arguments), Some(declared)) = (input.as_object_mut(), closed_properties(schema))
    else {
        return Ok(Stripped::default());
    };
    let undeclared: Vec<String> = arguments
        .keys()
        .filter(|name| !declared.contains_key(*name))
        .cloned()
        .collect();
    let mut stripped = Stripped::default();
    for name in undeclared {
        if near_miss(&name, declared).is_some() {
            return Err(format!(
                "{} Nothing was run.",
                unknown_field_words(tool, declared, &name, &name)
            ));
        }
        arguments.remove(&name);
        if !HOST_ADDED.contains(&name.as_str()) {
            stripped.ignored.push(name);
        }
    }
    Ok(stripped)
}

/// The declared properties of a schema that allows no others.
fn closed_properties(schema: &Value) -> Option<&Map<String, Value>> {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    static NONE: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    Some(
        schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or_else(|| NONE.get_or_init(Map::new)),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {}, "run_in_background": {}, "timeout_ms": {}, "tty": {}, "rows": {}
            },
            "required": ["command"],
            "additionalProperties": false,
        })
    }

    #[test]
    fn a_host_added_argument_is_dropped_without_a_note() {
        let mut input = json!({ "command": "make", "wait_for_previous": true });
        let stripped = strip("shell", &schema(), &mut input).unwrap();
        assert_eq!(input, json!({ "command": "make" }));
        assert_eq!(stripped.note("shell"), None);
    }

    #[test]
    fn a_misspelling_of_a_declared_argument_is_refused_by_name() {
        for (wrong, meant) in [
            ("run_in_backgroud", "run_in_background"),
            ("runInBackground", "run_in_background"),
            ("timeout", "timeout_ms"),
            ("Command", "command"),
            ("row", "rows"),
        ] {
            let mut input = json!({ "command": "make", wrong: true });
            let error = strip("shell", &schema(), &mut input).unwrap_err();
            assert!(
                error.contains(&format!("`{wrong}`; did you mean `{meant}`?")),
                "{wrong}: {error}"
            );
        }
    }

    #[test]
    fn another_undeclared_argument_is_dropped_and_named_in_a_note() {
        let mut input = json!({ "command": "make", "description": "build", "color": "red" });
        let stripped = strip("shell", &schema(), &mut input).unwrap();
        assert_eq!(input, json!({ "command": "make" }));
        assert_eq!(
            stripped.note("shell").unwrap(),
            "Note: shell does not take the arguments `color`, `description`; they were ignored."
        );
    }

    #[test]
    fn an_open_schema_takes_everything() {
        let mut input = json!({ "anything": 1 });
        let open = json!({ "type": "object", "properties": {} });
        assert_eq!(strip("t", &open, &mut input).unwrap(), Stripped::default());
        assert_eq!(input, json!({ "anything": 1 }));
    }

    #[test]
    fn a_closed_schema_without_properties_drops_everything() {
        let mut input = json!({ "wait_for_previous": false });
        let closed = json!({ "type": "object", "additionalProperties": false });
        assert_eq!(
            strip("t", &closed, &mut input).unwrap(),
            Stripped::default()
        );
        assert_eq!(input, json!({}));
    }

    proptest! {
        /// Whatever a host adds that resembles no declared argument, the declared ones
        /// reach the tool untouched and the call is never refused.
        #[test]
        fn declared_arguments_survive_any_unrelated_addition(
            extra in "[xyzq]{6,12}",
            value in any::<i64>(),
        ) {
            let mut input = json!({ "command": "make", "timeout_ms": 5, extra.clone(): value });
            let stripped = strip("shell", &schema(), &mut input).unwrap();
            prop_assert_eq!(input, json!({ "command": "make", "timeout_ms": 5 }));
            prop_assert_eq!(stripped.ignored, vec![extra]);
        }
    }
}
