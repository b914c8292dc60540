//! The `zidane` binary answers `--help` and `--version`.

#[test]
fn zidane_answers_help_and_version() {
    zidane_test_support::assert_answers_help_and_version(
        crate::support::bin(),
        "zidane",
        env!("CARGO_PKG_VERSION"),
    );
}
