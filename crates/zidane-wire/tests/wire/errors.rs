//! Malformed blocks: each is a typed error, never a panic, never a partial result.

use zidane_wire::{WireError, parse};

use crate::support::{notification, stall};

fn valid() -> String {
    notification(1, "npm run build", 4200, 0, None).render()
}

/// Every way of breaking a block, with the error it gives.
#[test]
fn malformed_blocks_are_errors() {
    let valid = valid();
    let cases: Vec<(&str, String)> = vec![
        ("unclosed", valid.replace("</task-notification>", "")),
        ("opening tag alone", "see <task-stall> above".to_owned()),
        (
            "missing element",
            valid.replace("<status>exited</status>\n", ""),
        ),
        (
            "elements out of order",
            valid.replace(
                "<task-id>bash_1</task-id>\n<status>exited</status>",
                "<status>exited</status>\n<task-id>bash_1</task-id>",
            ),
        ),
        (
            "indented element",
            valid.replace("<command>", "  <command>"),
        ),
        ("crlf line breaks", valid.replace('\n', "\r\n")),
        (
            "unknown entity",
            valid.replace("npm run build<", "npm &nbsp; build<"),
        ),
        ("bare ampersand", valid.replace("npm run build<", "a & b<")),
        (
            "raw markup",
            valid.replace("<command>npm", "<command><b>npm"),
        ),
        (
            "raw greater-than",
            valid.replace("npm run build<", "a > b<"),
        ),
        (
            "surrogate reference",
            valid.replace("npm run build<", "&#xD800;<"),
        ),
        ("bad task id", valid.replace("bash_1<", "bash_01<")),
        ("path-like task id", valid.replace("bash_1<", "../etc<")),
        ("unknown status", valid.replace(">exited<", ">running-ish<")),
        ("padded exit code", valid.replace(">0</exit", ">00</exit")),
        ("signed exit code", valid.replace(">0</exit", ">+0</exit")),
        (
            "unknown signal",
            valid.replace("</exit-code>\n", "</exit-code>\n<signal>SIGNOPE</signal>\n"),
        ),
        (
            "numbered named signal",
            valid.replace("</exit-code>\n", "</exit-code>\n<signal>SIG15</signal>\n"),
        ),
        (
            "overflowing duration",
            valid.replace(">4200<", ">99999999999999999999<"),
        ),
        (
            "stall missing hint",
            stall(1, "npm init", 45_000, 128)
                .render()
                .split("<hint>")
                .next()
                .unwrap()
                .to_owned()
                + "</task-stall>",
        ),
    ];
    let mut report = String::new();
    for (name, text) in cases {
        let err = parse(&text).expect_err(name);
        report.push_str(&format!("{name}: {err}\n"));
    }
    insta::assert_snapshot!("malformed_blocks", report);
}

#[test]
fn errors_carry_absolute_offsets() {
    let text = format!(
        "prefix text\n{}",
        valid().replace("npm run build<", "a&zz;<")
    );
    let err = parse(&text).unwrap_err();
    let WireError::BadReference { offset, .. } = err else {
        panic!("{err:?}");
    };
    assert_eq!(&text[offset..offset + 4], "&zz;");
}

#[test]
fn numeric_references_of_any_form_are_accepted() {
    let text = valid().replace("npm run build<", "&#x6E;&#112;&#x006d; run build<");
    assert_eq!(parse(&text).unwrap()[0].render(), valid());
}

#[test]
fn text_without_blocks_parses_to_nothing() {
    for text in [
        "",
        "hello",
        "<task-id>bash_1</task-id>",
        "<task-notifications>",
        "</task-stall>",
    ] {
        assert_eq!(parse(text).unwrap(), vec![], "{text:?}");
    }
}
