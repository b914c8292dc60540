//! Arguments a tool does not offer. Two kinds, told apart by the tool's own specs:
//!
//! - **Withheld**: an argument the tool defines ([`Tool::full_spec`] declares it) that
//!   this session's spec leaves out — `run_in_background` on a shell built without
//!   background mode or under a closed gate, `tty` where tasks have no terminal,
//!   `notify_on` where logs cannot be followed. A model that sends one anyway asks for
//!   something the session cannot give, and running the command without it would run it
//!   in a way the model did not ask for (a dev server in the foreground holds the turn
//!   forever). So the call is refused with the tool's reason ([`Tool::withheld`]) and
//!   nothing runs. A withheld argument sent as `false` or `null` asks for nothing (it is
//!   what leaving it out means) and is dropped without a word.
//! - **Never defined**: hosts add arguments of their own to every tool they list and
//!   pass them on in the call: Gemini CLI adds a boolean `wait_for_previous` to each
//!   tool's schema and tells its model to set it on a call that depends on an earlier
//!   one. Refusing such a call would stop every dependent command in that host, so an
//!   argument the tool never defined never stops a call, with one exception: a
//!   near-miss of an argument the tool defines (`run_in_backgroud`, `timeout`) is a
//!   misspelling the model must hear about, refused as the argument it resembles would
//!   be.
//!
//! So, for a tool whose offered schema closes its object (`additionalProperties: false`):
//! - a withheld argument (or a near-miss of one) refuses the call with the reason;
//! - a near-miss of an offered argument refuses the call, naming the argument it
//!   resembles;
//! - an argument a host is known to add is dropped silently ([`HOST_ADDED`]);
//! - any other undeclared argument is dropped, and the result ends with a note naming
//!   it, so the model learns it had no effect.
//!
//! A tool whose schema leaves its object open takes whatever it is given, as it says,
//! withheld arguments aside.
//!
//! [`Tool::full_spec`]: crate::Tool::full_spec
//! [`Tool::withheld`]: crate::Tool::withheld

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

/// The schemas [`strip`] compares a call against: what the tool offers in this
/// session, and what it defines in any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schemas<'a> {
    /// The input schema of the tool's spec in the session's view.
    pub(crate) offered: &'a Value,
    /// The input schema of the tool's full spec.
    pub(crate) defined: &'a Value,
}

/// Removes from `input` the arguments the offered schema does not declare, as the
/// module says. An error is the refusal's text: a withheld argument with the reason
/// `withheld` gives for it, or a misspelled argument and the one it resembles.
pub(crate) fn strip(
    tool: &str,
    schemas: Schemas<'_>,
    withheld: impl Fn(&str) -> String,
    input: &mut Value,
) -> Result<Stripped, String> {
    let Some(arguments) = input.as_object_mut() else {
        return Ok(Stripped::default());
    };
    let offered = properties(schemas.offered);
    let withheld_here: Map<String, Value> = properties(schemas.defined)
        .iter()
        .filter(|(name, _)| !offered.contains_key(*name))
        .map(|(name, schema)| (name.clone(), schema.clone()))
        .collect();
    let undeclared: Vec<String> = arguments
        .keys()
        .filter(|name| !offered.contains_key(*name))
        .cloned()
        .collect();
    let closed = is_closed(schemas.offered);
    let mut stripped = Stripped::default();
    for name in undeclared {
        let meant = if withheld_here.contains_key(&name) {
            Some(name.as_str())
        } else if closed && near_miss(&name, offered).is_none() {
            near_miss(&name, &withheld_here)
        } else {
            None
        };
        if let Some(meant) = meant {
            if asks_for_nothing(&arguments[&name]) {
                arguments.remove(&name);
                continue;
            }
            return Err(format!("{tool}: {}", withheld(meant)));
        }
        if !closed {
            continue;
        }
        if near_miss(&name, offered).is_some() {
            return Err(format!(
                "{} Nothing was run.",
                unknown_field_words(tool, offered, &name, &name)
            ));
        }
        arguments.remove(&name);
        if !HOST_ADDED.contains(&name.as_str()) {
            stripped.ignored.push(name);
        }
    }
    Ok(stripped)
}

/// `false` or `null`: what leaving an argument out means, so sending it asks for nothing.
fn asks_for_nothing(value: &Value) -> bool {
    matches!(value, Value::Null | Value::Bool(false))
}

/// Whether a schema allows no properties but those it declares.
fn is_closed(schema: &Value) -> bool {
    schema.get("additionalProperties") == Some(&Value::Bool(false))
}

/// The properties a schema declares (none when it declares none).
fn properties(schema: &Value) -> &Map<String, Value> {
    static NONE: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or_else(|| NONE.get_or_init(Map::new))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// Every argument of the shell tool's full spec, as far as these tests care.
    const DEFINED: [&str; 6] = [
        "command",
        "run_in_background",
        "timeout_ms",
        "tty",
        "rows",
        "notify_on",
    ];

    fn schema_of(names: &[&str]) -> Value {
        let properties: Map<String, Value> = names
            .iter()
            .map(|name| ((*name).to_owned(), json!({})))
            .collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": ["command"],
            "additionalProperties": false,
        })
    }

    fn schema() -> Value {
        schema_of(&DEFINED)
    }

    fn reason(argument: &str) -> String {
        format!("`{argument}` is withheld here.")
    }

    /// Strips `input` for a tool that offers `offered` of [`DEFINED`].
    fn strip_offering(offered: &[&str], input: &mut Value) -> Result<Stripped, String> {
        let (offered, defined) = (schema_of(offered), schema());
        let schemas = Schemas {
            offered: &offered,
            defined: &defined,
        };
        strip("shell", schemas, reason, input)
    }

    fn strip_all(input: &mut Value) -> Result<Stripped, String> {
        strip_offering(&DEFINED, input)
    }

    #[test]
    fn a_host_added_argument_is_dropped_without_a_note() {
        let mut input = json!({ "command": "make", "wait_for_previous": true });
        let stripped = strip_all(&mut input).unwrap();
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
            let error = strip_all(&mut input).unwrap_err();
            assert!(
                error.contains(&format!("`{wrong}`; did you mean `{meant}`?")),
                "{wrong}: {error}"
            );
        }
    }

    #[test]
    fn another_undeclared_argument_is_dropped_and_named_in_a_note() {
        let mut input = json!({ "command": "make", "description": "build", "color": "red" });
        let stripped = strip_all(&mut input).unwrap();
        assert_eq!(input, json!({ "command": "make" }));
        assert_eq!(
            stripped.note("shell").unwrap(),
            "Note: shell does not take the arguments `color`, `description`; they were ignored."
        );
    }

    #[test]
    fn a_withheld_argument_is_refused_with_the_tools_reason() {
        let mut input = json!({ "command": "touch f; sleep 30", "run_in_background": true });
        let error = strip_offering(&["command", "timeout_ms"], &mut input).unwrap_err();
        assert_eq!(error, "shell: `run_in_background` is withheld here.");
    }

    #[test]
    fn a_misspelling_of_a_withheld_argument_is_refused_as_that_argument() {
        let mut input = json!({ "command": "make", "run_in_backgroud": true });
        let error = strip_offering(&["command", "timeout_ms"], &mut input).unwrap_err();
        assert_eq!(error, "shell: `run_in_background` is withheld here.");
    }

    #[test]
    fn a_withheld_argument_that_asks_for_nothing_is_dropped_without_a_note() {
        let mut input = json!({ "command": "make", "run_in_background": false, "tty": null });
        let stripped = strip_offering(&["command"], &mut input).unwrap();
        assert_eq!(input, json!({ "command": "make" }));
        assert_eq!(stripped, Stripped::default());
    }

    #[test]
    fn an_open_schema_takes_everything_it_does_not_withhold() {
        let mut input = json!({ "anything": 1 });
        let open = json!({ "type": "object", "properties": {} });
        let schemas = Schemas {
            offered: &open,
            defined: &open,
        };
        assert_eq!(
            strip("t", schemas, reason, &mut input).unwrap(),
            Stripped::default()
        );
        assert_eq!(input, json!({ "anything": 1 }));
        let defined = json!({ "type": "object", "properties": { "tty": {} } });
        let schemas = Schemas {
            offered: &open,
            defined: &defined,
        };
        let mut input = json!({ "tty": true });
        assert_eq!(
            strip("t", schemas, reason, &mut input).unwrap_err(),
            "t: `tty` is withheld here."
        );
    }

    #[test]
    fn a_closed_schema_without_properties_drops_everything() {
        let mut input = json!({ "wait_for_previous": false });
        let closed = json!({ "type": "object", "additionalProperties": false });
        let schemas = Schemas {
            offered: &closed,
            defined: &closed,
        };
        assert_eq!(
            strip("t", schemas, reason, &mut input).unwrap(),
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
            let stripped = strip_all(&mut input).unwrap();
            prop_assert_eq!(input, json!({ "command": "make", "timeout_ms": 5 }));
            prop_assert_eq!(stripped.ignored, vec![extra]);
        }

        /// Whichever of the defined arguments the tool offers and whichever the model
        /// sends: a call sending one the tool withholds, with a value that asks for
        /// something, is refused naming it; otherwise the offered ones reach the tool
        /// as sent, and only arguments never defined are dropped and noted.
        #[test]
        fn withheld_arguments_refuse_and_others_pass(
            offered_mask in proptest::collection::vec(any::<bool>(), DEFINED.len() - 1),
            sent in proptest::collection::vec((0..DEFINED.len(), 0..3u8), 0..6),
            unknown in proptest::option::of("[xyzq]{6,12}"),
        ) {
            let mut offered = vec!["command"];
            offered.extend(
                DEFINED[1..].iter().zip(&offered_mask).filter(|(_, on)| **on).map(|(n, _)| *n),
            );
            let mut input = json!({ "command": "make" });
            for (index, kind) in &sent {
                let value = match kind { 0 => json!(true), 1 => json!(false), _ => json!(7) };
                input[DEFINED[*index]] = value;
            }
            if let Some(unknown) = &unknown {
                input[unknown.as_str()] = json!("x");
            }
            let sent_input = input.clone();
            let refused: Vec<&str> = sent_input
                .as_object()
                .unwrap()
                .iter()
                .filter(|(name, value)| {
                    DEFINED.contains(&name.as_str())
                        && !offered.contains(&name.as_str())
                        && !asks_for_nothing(value)
                })
                .map(|(name, _)| name.as_str())
                .collect();
            match strip_offering(&offered, &mut input) {
                Err(error) => {
                    prop_assert!(
                        refused.iter().any(|name| error == format!("shell: `{name}` is withheld here.")),
                        "refused with {} though {:?} were withheld", error, refused
                    );
                }
                Ok(stripped) => {
                    prop_assert!(refused.is_empty(), "{:?} were sent and not refused", refused);
                    for (name, value) in sent_input.as_object().unwrap() {
                        if offered.contains(&name.as_str()) {
                            prop_assert_eq!(&input[name], value);
                        } else {
                            prop_assert!(input.get(name).is_none(), "{} reached the tool", name);
                        }
                    }
                    prop_assert_eq!(stripped.ignored, unknown.into_iter().collect::<Vec<_>>());
                }
            }
        }
    }
}
