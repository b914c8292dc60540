use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn scan(text: &str) -> Option<RequestId> {
    let mut scan = IdScan::default();
    for byte in text.bytes() {
        scan.feed(byte);
    }
    scan.id()
}

#[test]
fn the_top_level_id_is_found_wherever_it_is() {
    let number = Some(RequestId::Number(7));
    assert_eq!(scan(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#), number);
    assert_eq!(
        scan(r#"{"method":"x","params":{"a":[1,{"id":9}]},"id":7}"#),
        number
    );
    assert_eq!(scan(r#"{ "id" : 7 , "method":"x"}"#), number);
    assert_eq!(
        scan(r#"{"params":{"s":"\"id\":3,"},"id":"a,b}\"c"}"#),
        Some(RequestId::String("a,b}\"c".into()))
    );
}

#[test]
fn no_id_is_read_where_there_is_none() {
    assert_eq!(
        scan(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#),
        None
    );
    assert_eq!(scan(r#"{"params":{"id":3},"method":"x"}"#), None);
    assert_eq!(scan(r#"{"i\u0064":3}"#), None);
    assert_eq!(scan(r#"{"idx":3,"xid":4}"#), None);
    assert_eq!(scan(r#"[{"id":3}]"#), None);
    assert_eq!(scan(r#"{"id":{"a":1}}"#), None);
    assert_eq!(scan("not json"), None);
    let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID_BYTES));
    assert_eq!(scan(&long), None);
}

#[test]
fn only_lines_over_the_limit_are_reported() {
    let mut lines = LineWatch::new(10);
    let mut seen = Vec::new();
    for byte in "{\"id\":1}\n{\"id\":2,\"x\":\"....\"}\n{\"id\":3}\n".bytes() {
        seen.extend(lines.feed(byte));
    }
    assert_eq!(
        seen,
        [Oversized {
            id: Some(RequestId::Number(2)),
            bytes: 20
        }]
    );
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[ -~\\\\\"\u{e9}\u{1F600}]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\"]{0,4}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        "[ -~\\\\\"]{0,12}".prop_map(|s| RequestId::String(s.into())),
    ]
}

proptest! {
    /// Whatever else the object holds, and wherever the id sits among its fields, the
    /// scan reads the id serde reads.
    #[test]
    fn the_scan_reads_the_id_serde_reads(
        id in request_id(),
        fields in prop::collection::vec(("[a-z\"]{0,4}", json_value()), 0..6),
        at in any::<prop::sample::Index>(),
        pretty in any::<bool>(),
    ) {
        let id_value = serde_json::to_value(&id).unwrap();
        let mut fields: Vec<(String, Value)> =
            fields.into_iter().filter(|(key, _)| key != "id").collect();
        let at = at.index(fields.len() + 1);
        fields.insert(at, ("id".to_owned(), id_value));
        let text = render(&fields, pretty);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(serde_json::from_value::<RequestId>(parsed["id"].clone()).ok(), Some(id.clone()));
        prop_assert_eq!(scan(&text), Some(id));
    }
}

/// An object in the given field order (a `serde_json::Map` would sort it).
fn render(fields: &[(String, Value)], pretty: bool) -> String {
    let separator = if pretty { ",\n  " } else { "," };
    let body: Vec<String> = fields
        .iter()
        .map(|(key, value)| {
            let value = if pretty {
                serde_json::to_string_pretty(value).unwrap()
            } else {
                value.to_string()
            };
            format!("{}: {value}", Value::String(key.clone()))
        })
        .collect();
    format!("{{{}}}", body.join(separator))
}
