//! A strict check that a schema zidane publishes is standard JSON Schema 2020-12, the
//! dialect MCP names: hosts validate tool input and structured results against these
//! schemas with general-purpose validators, which warn about (or refuse) what the
//! standard does not define.

use serde_json::{Value, json};

/// The `format` values JSON Schema 2020-12 defines (Validation, section 7.3). Anything
/// else — schemars' `uint64`, OpenAPI's `int32` — is a custom format a host's
/// validator does not know.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The 2020-12 meta-schema with no room for other keywords: it takes the standard
/// meta-schema whole and refuses any property it did not evaluate. Its
/// `$dynamicAnchor` puts it outermost in the dynamic scope, so the standard
/// meta-schema's `$dynamicRef: "#meta"` lands back here for every subschema, and the
/// refusal holds at every depth, not only at the root.
fn strict_meta_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:zidane:strict-2020-12",
        "$dynamicAnchor": "meta",
        "$ref": "https://json-schema.org/draft/2020-12/schema",
        "unevaluatedProperties": false
    })
}

/// What keeps `schema` from being standard JSON Schema 2020-12, one line per problem;
/// empty when it is standard.
///
/// Three checks: the schema validates against the 2020-12 meta-schema; it uses no
/// keyword the 2020-12 vocabularies do not define, at any depth; and every `format` in
/// it is one of [`STANDARD_FORMATS`] (the validator is built asserting formats and
/// refusing unknown ones, as a strict host's is).
pub fn standard_schema_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
        problems.push(format!(
            "not valid against the 2020-12 meta-schema at {}: {error}",
            error.instance_path()
        ));
    }
    match jsonschema::draft202012::new(&strict_meta_schema()) {
        Ok(strict) => {
            for error in strict.iter_errors(schema) {
                problems.push(format!(
                    "a keyword 2020-12 does not define, at {}: {error}",
                    error.instance_path()
                ));
            }
        }
        Err(error) => problems.push(format!("the strict meta-schema did not build: {error}")),
    }
    let mut formats = Vec::new();
    formats_in(schema, "", &mut formats);
    for (path, format) in formats {
        if !STANDARD_FORMATS.contains(&format.as_str()) {
            problems.push(format!("a custom format at {path}: {format:?}"));
        }
    }
    if let Err(error) = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(schema)
    {
        problems.push(format!("a strict validator refuses it: {error}"));
    }
    problems
}

/// Panics with every problem [`standard_schema_problems`] finds in `schema`, `what`
/// naming it (`"shell output schema"`).
pub fn assert_standard_schema(what: &str, schema: &Value) {
    let problems = standard_schema_problems(schema);
    assert!(
        problems.is_empty(),
        "{what} is not standard JSON Schema 2020-12:\n  {}\nin {schema:#}",
        problems.join("\n  ")
    );
}

/// Every `format` keyword's value in `schema`, with its JSON pointer. A property named
/// `format` is a name, not the keyword, so `properties` maps are walked by their
/// values only.
fn formats_in(schema: &Value, path: &str, found: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                let here = format!("{path}/{key}");
                match (key.as_str(), value) {
                    ("format", Value::String(format)) => {
                        found.push((here, format.clone()));
                    }
                    ("properties" | "patternProperties" | "$defs" | "dependentSchemas", _) => {
                        for (name, subschema) in value.as_object().into_iter().flatten() {
                            formats_in(subschema, &format!("{here}/{name}"), found);
                        }
                    }
                    // Data, not schemas: a `format` inside is a value.
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => formats_in(value, &here, found),
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                formats_in(item, &format!("{path}/{index}"), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check can fail: each kind of non-standard schema is caught, nested too.
    #[test]
    fn custom_formats_and_unknown_keywords_are_refused() {
        let standard = json!({
            "type": "object",
            "properties": {
                "format": { "type": "string", "format": "date-time" },
                "count": { "type": "integer", "minimum": 0 },
                "kind": { "enum": [{ "format": "uint64" }] }
            },
            "required": ["count"]
        });
        assert_eq!(standard_schema_problems(&standard), Vec::<String>::new());
        let uint = json!({
            "type": "object",
            "properties": { "count": { "type": "integer", "format": "uint64", "minimum": 0 } }
        });
        let problems = standard_schema_problems(&uint);
        assert!(
            problems.iter().any(|p| p.contains("\"uint64\"")),
            "{problems:?}"
        );
        let unknown = json!({
            "type": "object",
            "properties": {
                "list": { "type": "array", "items": { "type": "string", "nullable": true } }
            }
        });
        let problems = standard_schema_problems(&unknown);
        assert!(
            problems.iter().any(|p| p.contains("nullable")),
            "{problems:?}"
        );
        let invalid = json!({ "type": "integer", "minimum": "zero" });
        let problems = standard_schema_problems(&invalid);
        assert!(
            problems.iter().any(|p| p.contains("meta-schema")),
            "{problems:?}"
        );
    }
}
