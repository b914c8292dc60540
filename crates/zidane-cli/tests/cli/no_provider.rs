//! Without a provider, `zidane` says which variables to set and mentions `--demo`,
//! before anything is drawn — with stdin not a terminal too.

use zidane::models::{
    ANTHROPIC_API_KEY_ENV, MODEL_ENV, OPENAI_API_KEY_ENV, OPENAI_BASE_URL_ENV, PROVIDER_ENV,
};

use crate::support::zidane;

/// The variables the message names (the base URL of Anthropic is optional and unnamed).
const NAMED: [&str; 5] = [
    PROVIDER_ENV,
    MODEL_ENV,
    OPENAI_BASE_URL_ENV,
    OPENAI_API_KEY_ENV,
    ANTHROPIC_API_KEY_ENV,
];

#[test]
fn without_a_provider_every_variable_and_the_demo_are_named_before_any_screen() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&[][..], &["-p", "hello"][..], &["--resume", "s1"][..]] {
        let out = zidane(dir.path(), args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            out.stdout.is_empty(),
            "nothing drawn: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let stderr = String::from_utf8(out.stderr).unwrap();
        for var in NAMED {
            assert!(stderr.contains(var), "{var} not named: {stderr}");
        }
        assert!(stderr.contains("zidane --demo"), "{stderr}");
        assert!(!stderr.contains('\x1b'), "no escape sequence: {stderr:?}");
    }
}

#[test]
fn an_incomplete_provider_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = zidane(dir.path(), &["-p", "hello"])
        .env(PROVIDER_ENV, "anthropic")
        .env(MODEL_ENV, "m")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("set {ANTHROPIC_API_KEY_ENV}\n")),
        "{stderr}"
    );
}

#[test]
fn the_interactive_session_without_a_terminal_points_to_print_mode() {
    let dir = tempfile::tempdir().unwrap();
    let out = zidane(dir.path(), &["--demo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing drawn");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("needs a terminal; for scripts use -p"),
        "{stderr}"
    );
}

/// The sample in `docs/CLI.md` is what the binary prints, byte for byte.
#[test]
fn the_message_without_a_provider_is_the_one_the_docs_show() {
    let dir = tempfile::tempdir().unwrap();
    let out = zidane(dir.path(), &["-p", "hello"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    insta::assert_snapshot!(stderr);

    let docs = include_str!("../../../../docs/CLI.md");
    let sample = docs
        .split_once("```text\n$ zidane -p hello\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(sample, _)| sample)
        .expect("docs/CLI.md shows `$ zidane -p hello` in a text block");
    assert_eq!(
        sample, stderr,
        "docs/CLI.md's sample differs from the output"
    );
}
