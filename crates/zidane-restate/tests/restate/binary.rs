//! The `zidane-worker` binary answers `--help` and `--version`.

#[test]
fn zidane_worker_answers_help_and_version() {
    zidane_test_support::assert_answers_help_and_version(
        env!("CARGO_BIN_EXE_zidane-worker"),
        "zidane-worker",
        env!("CARGO_PKG_VERSION"),
    );
}
