//! The README's first command, run as a test: `cargo run --example quickstart`, then
//! `cargo run --example replay` on the session it saved.
//!
//! Why spawn `cargo run` rather than call the example's code: the test then runs exactly
//! what a newcomer runs — argument handling, output and exit status included — and the
//! example stays a plain `main` with no test scaffolding in it. It is safe to nest: by
//! the time a test runs, the outer `cargo test` (or nextest) has finished building and
//! released the build lock. The inner `cargo run -p zidane` selects one package, so its
//! feature set can differ from the whole workspace's and cargo may build the example's
//! dependency chain once more in the same target dir (a one-off; both builds stay fresh
//! afterwards). The example's own waits are bounded, so the test cannot hang on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use zidane::agent::{SESSION_FILE, SESSIONS_DIR};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_owned()
}

fn cargo_run_example(name: &str, args: &[&Path]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["run", "-q", "-p", "zidane", "--example", name, "--"])
        .args(args)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "`cargo run --example {name}` failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn cargo_run_example_quickstart_then_replay() {
    // The example's `local_agent` sweeps orphans, as a host's should: not while an
    // orphan sweep test looks at its own.
    let _lock = zidane_test_support::sweep_lock();
    let user_dir = tempfile::tempdir().unwrap();
    let output = cargo_run_example("quickstart", &[user_dir.path()]);
    let transcript = String::from_utf8(output.stdout).unwrap();

    // Every step of the story, in order.
    let steps = [
        "user dir   ",
        "   you › Build the workspace in the background.",
        " model → shell ",
        "·· hook background:start bash_1 (pid ",
        "  tool ← Started bash_1 (pid ",
        "·· the run returned; the agent is idle (running: false) with 1 task(s) still running: bash_1",
        "·· hook background:exit bash_1 exited (0)",
        "⌁ bash_1 exited (0) ",
        " model → read_file ",
        "Finished `dev` profile",
        "The whole log is there: 6 crates compiled, one warning, finished: true.",
        // The block the model read, shown once (dimmed on a terminal).
        "What the model read at the head of its turn",
        "         <task-notification>\n         <task-id>bash_1</task-id>\n",
        "         </task-notification>\n",
        "·· hook background:start bash_2 (pid ",
        "  tool ← wait_task: timed out after 500ms; bash_2 is still running (started ",
        "dev server listening on http://127.0.0.1:8080",
        " model → shell_kill {\"task_id\":\"bash_2\"}",
        "  tool ← Killed bash_2: killed (SIGTERM) after ",
        "·· shell_kill told the model the outcome: no notification is pending",
        "·· destroy DestroyHandle: Done",
        "·· bash_1: no process left in the group of pid ",
        "·· bash_2: no process left in the group of pid ",
        "no process left (2 tasks checked); finished after ",
    ];
    let mut rest = transcript.as_str();
    for step in steps {
        let at = rest
            .find(step)
            .unwrap_or_else(|| panic!("missing, or out of order: {step:?}\n{transcript}"));
        rest = &rest[at + step.len()..];
    }
    assert_eq!(
        transcript.matches("<task-id>").count(),
        1,
        "the raw block is shown once, never painted as a transcript event:\n{transcript}"
    );
    assert_eq!(transcript.matches('⌁').count(), 2, "{transcript}");

    // The session it says it saved is there, and replays with the same banner.
    let sessions: Vec<PathBuf> = std::fs::read_dir(user_dir.path().join(SESSIONS_DIR))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].join(SESSION_FILE).is_file());
    assert!(transcript.contains(&sessions[0].display().to_string()));

    let replay = cargo_run_example("replay", &[&sessions[0]]);
    let replayed = String::from_utf8(replay.stdout).unwrap();
    assert!(replayed.contains("⌁ bash_1 exited (0) "), "{replayed}");
    assert!(replayed.contains("1 task notification(s)."), "{replayed}");
    assert!(
        !replayed.contains("<task-id>"),
        "raw XML painted:\n{replayed}"
    );
}

/// Every value that varies between two runs of the quickstart (temp dir, session id,
/// timestamps, pids, durations) is covered by the `testing` filters: two runs snapshot
/// to the same text.
#[test]
fn two_quickstart_runs_agree_under_the_testing_filters() {
    let transcripts: Vec<String> = (0..2)
        .map(|_| {
            let user_dir = tempfile::tempdir().unwrap();
            let output = cargo_run_example("quickstart", &[user_dir.path()]);
            String::from_utf8(output.stdout).unwrap()
        })
        .collect();
    assert_ne!(transcripts[0], transcripts[1], "the raw runs differ");
    let _guard = zidane::wire::testing::settings().bind_to_scope();
    for transcript in &transcripts {
        insta::assert_snapshot!("quickstart_transcript", transcript);
    }
}

/// `cargo run --example replay | head -1`: the reader goes away, the replay stops
/// quietly (exit 0, no panic) instead of dying on the broken pipe.
#[test]
fn replay_into_a_closed_pipe_exits_quietly() {
    let user_dir = tempfile::tempdir().unwrap();
    cargo_run_example("quickstart", &[user_dir.path()]);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["run", "-q", "-p", "zidane", "--example", "replay"])
        .env("ZIDANE_USER_DIR", user_dir.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before the replay writes a byte: its first write fails with EPIPE.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
