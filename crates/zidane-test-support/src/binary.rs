//! What every binary of the workspace answers without doing anything.

use std::process::Command;

/// Runs the binary at `path` with `--help` and with `--version` and panics unless each
/// exits 0 with its answer on stdout: the help names `name`, the version is
/// `<name> <version>`.
pub fn assert_answers_help_and_version(path: &str, name: &str, version: &str) {
    let run = |flag: &str| {
        let output = Command::new(path)
            .arg(flag)
            .output()
            .unwrap_or_else(|error| panic!("{path} {flag}: {error}"));
        assert!(
            output.status.success(),
            "{name} {flag} exited {:?}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let help = run("--help");
    assert!(
        help.contains(name) && help.contains("--help") && help.contains("--version"),
        "{name} --help:\n{help}"
    );
    assert_eq!(run("--version").trim(), format!("{name} {version}"));
}
