//! Output schemas: what a tool's structured data (`ToolOutput::data`) looks like, derived
//! from the type the tool fills, so the schema a host validates against cannot drift from
//! what the tool sends.

use schemars::JsonSchema;
use serde_json::Value;

/// The schema of `T` as it serialises, every part inline (no `$defs` for a host to
/// resolve), without `$schema` or title, doc comments as sentences: standard JSON
/// Schema 2020-12, with no format the standard does not define (an unsigned integer
/// says `minimum: 0` instead).
///
/// ```
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Data {
///     /// How it ended.
///     exit_code: i32,
/// }
/// let schema = zidane_tools::output_schema::<Data>();
/// assert_eq!(schema["type"], "object");
/// assert!(schema.get("$schema").is_none());
/// assert!(schema["properties"]["exit_code"].get("format").is_none());
/// ```
pub fn output_schema<T: JsonSchema>() -> Value {
    let mut schema = crate::schema_generator::standard_schema::<T>();
    unwrap_descriptions(&mut schema);
    schema
}

/// Doc comments as sentences: their line breaks become spaces, paragraphs stay apart.
fn unwrap_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        *text = text
                            .split("\n\n")
                            .map(|paragraph| {
                                paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
                            })
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    _ => unwrap_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}
