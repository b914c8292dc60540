//! The one generator every published schema comes from, input and output alike, so a
//! field added later cannot bring a non-standard keyword with it.

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, RestrictFormats};
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The schema of `T` as standard JSON Schema 2020-12: every part inline (no `$defs`
/// for a host to resolve), without `$schema` or title.
///
/// schemars marks integers with formats of its own (`uint64`, `uint32`, `uint`) and
/// OpenAPI's (`int32`, `int64`); hosts validate with general-purpose validators that
/// warn about every format the standard does not define. Those formats go, and an
/// unsigned integer says what its format meant with `minimum: 0`; the standard formats
/// (`date-time`, …) stay.
pub(crate) fn standard_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .with_transform(RecursiveTransform(unsigned_minimum))
        // Reads the standard's formats off `$schema`, which the settings still write
        // for it; it is taken off below, as hosts need no dialect named.
        .with_transform(RestrictFormats::default())
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(root) = schema.as_object_mut() {
        root.remove("$schema");
        root.remove("title");
    }
    schema
}

/// An unsigned integer keeps its sign as `minimum: 0` once its format is gone, unless
/// a bound of its own (`range(min = 1)`) already says more.
fn unsigned_minimum(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let unsigned = object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| format.starts_with("uint"));
    if unsigned && !object.contains_key("minimum") && !object.contains_key("exclusiveMinimum") {
        object.insert("minimum".to_owned(), Value::from(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Numbers {
        count: u64,
        lines: usize,
        code: u32,
        port: Option<u16>,
        exit_code: i32,
        elapsed_ms: i64,
        #[schemars(range(min = 1))]
        limit: u64,
        items: Vec<u8>,
        #[schemars(extend("format" = "date-time"))]
        at: String,
        #[schemars(schema_with = "bare_unsigned")]
        hand_written: u64,
    }

    /// An unsigned integer written by hand, its format without a minimum.
    fn bare_unsigned(_: &mut schemars::SchemaGenerator) -> Schema {
        schemars::json_schema!({ "type": "integer", "format": "uint64" })
    }

    #[test]
    fn integers_carry_no_format_and_unsigned_ones_a_minimum() {
        let schema = standard_schema::<Numbers>();
        let properties = &schema["properties"];
        for field in ["count", "lines", "code", "port", "exit_code", "elapsed_ms"] {
            assert!(
                properties[field].get("format").is_none(),
                "{field}: {schema:#}"
            );
        }
        assert!(properties["items"]["items"].get("format").is_none());
        assert!(properties["hand_written"].get("format").is_none());
        for field in ["count", "lines", "code", "port", "hand_written"] {
            assert_eq!(properties[field]["minimum"], 0, "{field}: {schema:#}");
        }
        assert_eq!(properties["items"]["items"]["minimum"], 0);
        assert_eq!(properties["port"]["maximum"], 65535);
        assert!(properties["exit_code"].get("minimum").is_none());
        assert_eq!(properties["limit"]["minimum"], 1);
        assert_eq!(properties["at"]["format"], "date-time");
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
    }
}
