//! Unit tests of readiness conditions and line splitting.

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn parse(value: Value) -> Result<Until, String> {
    Until::parse(&value, false)
}

#[test]
fn each_condition_parses_and_describes_itself() {
    let Ok(Until::Pattern { regex, from }) = parse(json!({ "pattern": "listening on (\\d+)" }))
    else {
        panic!("pattern")
    };
    assert_eq!(regex.as_str(), "listening on (\\d+)");
    assert_eq!(from, PatternFrom::Start);
    let Ok(Until::Pattern { from, .. }) = parse(json!({ "pattern": "x", "from": "now" })) else {
        panic!("from now")
    };
    assert_eq!(from, PatternFrom::Now);
    assert!(matches!(
        parse(json!({ "port": 8080 })),
        Ok(Until::Port(8080))
    ));
    let Ok(until @ Until::Url { .. }) = parse(json!({ "url": "http://localhost:3000/health" }))
    else {
        panic!("url")
    };
    assert_eq!(
        until.describe(),
        "GET http://localhost:3000/health to answer 2xx or 3xx"
    );
}

#[test]
fn bad_conditions_say_what_is_wrong() {
    let cases = [
        (json!("ready"), "must be an object"),
        (
            json!({}),
            "exactly one of `pattern`, `port` or `url`, got none",
        ),
        (
            json!({ "port": 1, "url": "http://127.0.0.1" }),
            "got port and url",
        ),
        (json!({ "pattern": "(" }), "not a valid regular expression"),
        (json!({ "pattern": 5 }), "must be a string"),
        (
            json!({ "pattern": "x", "from": "end" }),
            "\"start\" or \"now\"",
        ),
        (json!({ "pattern": "x", "port": 2 }), "got pattern and port"),
        (json!({ "port": 8080, "host": "a" }), "unknown field `host`"),
        (json!({ "port": 0 }), "from 1 to 65535"),
        (json!({ "port": 70000 }), "from 1 to 65535"),
        (
            json!({ "url": "https://127.0.0.1/" }),
            "must start with http://",
        ),
        (
            json!({ "url": "http://example.com/" }),
            "IP address or localhost",
        ),
        (
            json!({ "url": "http://10.0.0.1:80/" }),
            "must point at this machine",
        ),
        (json!({ "url": "http://127.0.0.1:http/" }), "bad port"),
    ];
    for (value, expected) in cases {
        let error = parse(value.clone()).expect_err(&value.to_string());
        assert!(error.contains(expected), "{value}: {error}");
    }
}

#[test]
fn loopback_urls_resolve_and_remote_ones_need_permission() {
    assert_eq!(
        loopback_addr("http://127.0.0.1:8080/health", false).unwrap(),
        "127.0.0.1:8080".parse().unwrap()
    );
    assert_eq!(
        loopback_addr("http://[::1]:9000", false).unwrap(),
        "[::1]:9000".parse().unwrap()
    );
    assert_eq!(
        loopback_addr("http://localhost?x=1", false).unwrap(),
        "127.0.0.1:80".parse().unwrap()
    );
    assert!(loopback_addr("http://192.168.1.2:80/", false).is_err());
    assert!(loopback_addr("http://192.168.1.2:80/", true).is_ok());
}

#[test]
fn lines_are_cut_at_newlines_and_lose_their_carriage_returns() {
    let mut lines = Lines::default();
    assert_eq!(lines.feed(b"one\r\ntw", false), vec![b"one".to_vec()]);
    assert_eq!(lines.feed(b"o\nthree", false), vec![b"two".to_vec()]);
    assert_eq!(lines.feed(b"", true), vec![b"three".to_vec()]);
    assert!(lines.feed(b"", true).is_empty());
}

#[test]
fn a_huge_line_is_kept_only_up_to_its_bound() {
    let mut lines = Lines::default();
    let huge = vec![b'x'; MAX_MATCHED_LINE * 2];
    assert!(lines.feed(&huge, false).is_empty());
    let out = lines.feed(b"tail\nnext\n", false);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].len(), MAX_MATCHED_LINE);
    assert_eq!(out[1], b"next");
}

proptest! {
    /// However the log arrives in pieces, the same lines come out.
    #[test]
    fn lines_do_not_depend_on_how_the_bytes_arrive(
        text in "[a-c\r\n]{0,200}",
        cuts in proptest::collection::vec(0usize..200, 0..10),
    ) {
        let bytes = text.as_bytes();
        let mut whole = Lines::default();
        let expected = whole.feed(bytes, true);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.sort_unstable();
        let mut pieces = Lines::default();
        let mut got = Vec::new();
        let mut start = 0;
        for cut in cuts {
            got.extend(pieces.feed(&bytes[start..cut], false));
            start = cut;
        }
        got.extend(pieces.feed(&bytes[start..], true));
        prop_assert_eq!(got, expected);
    }
}
