//! A hostile model's escapes from the sandbox, tried through `zidane mcp` by the official
//! Python MCP SDK (`sandbox_escapes.py` beside this file), each on both process paths:
//! `zidane mcp` with default settings, real processes, a fake home outside `/tmp` with
//! credentials, a `.bashrc` and build caches planted in it, a workspace outside `/tmp`
//! with a `.git`, a secret in zidane's environment and another in its client's.
//!
//! Each test names one escape and checks that it is refused (or, for what the sandbox
//! allows, that it works), by what the model is told and by what is on disk.

use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sdk_script::{run_sdk_script, sdk_python};
use crate::support::{wait_bounded, zidane};

/// Longest one escape's client may run: a few dozen tool calls, a terminal task and a
/// local server.
const ESCAPE_BOUND: Duration = Duration::from_secs(120);

/// What the fake home holds: planted where a credential, a startup file and a cache
/// live. `sandbox_escapes.py` checks for the same strings.
const PRIVATE_KEY: &str = "PRIVATE-KEY-never-read";
const AWS_KEY: &str = "aws-secret-never-read";
const NETRC_PASSWORD: &str = "netrc-password-never-read";
const BASHRC: &str = "# the user's own bashrc\n";

/// The variable holding the client's own secret; the script derives the server's from it.
const CLIENT_SECRET_ENV: &str = "ZIDANE_TEST_CLIENT_SECRET";

/// The process paths every escape is tried on.
#[derive(Debug, Clone, Copy)]
enum ProcessPath {
    Fast,
    Portable,
}

impl ProcessPath {
    const ALL: [Self; 2] = [Self::Fast, Self::Portable];

    fn env_value(self) -> &'static str {
        match self {
            Self::Fast => "fast",
            Self::Portable => "portable",
        }
    }
}

/// A fake home, a workspace and a user dir, under the build's temp dir (not `/tmp`,
/// which every sandboxed command may write); removed on drop.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("escapes-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let machine = Self { root };
        let home = machine.home();
        for (rel, content) in [
            (
                ".ssh/id_ed25519",
                format!("-----BEGIN {PRIVATE_KEY}-----\n"),
            ),
            (
                ".aws/credentials",
                format!("[default]\naws_secret_access_key = {AWS_KEY}\n"),
            ),
            (
                ".netrc",
                format!("machine example.com login me password {NETRC_PASSWORD}\n"),
            ),
            (".bashrc", BASHRC.to_owned()),
            (".cargo/registry/.keep", String::new()),
            (".npm/.keep", String::new()),
        ] {
            let path = home.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let workspace = machine.workspace();
        std::fs::create_dir_all(workspace.join(".git/hooks")).unwrap();
        std::fs::write(
            workspace.join(".git/config"),
            "[core]\n\trepositoryformatversion = 0\n",
        )
        .unwrap();
        std::fs::create_dir_all(machine.user_dir()).unwrap();
        machine
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn workspace(&self) -> PathBuf {
        self.root.path().join("work")
    }

    fn user_dir(&self) -> PathBuf {
        self.root.path().join("user")
    }
}

/// A secret no one could guess, fresh for each run.
fn random_secret() -> String {
    let state = std::collections::hash_map::RandomState::new();
    format!(
        "client-secret-{:016x}{:016x}",
        state.hash_one(std::process::id()),
        state.hash_one(std::time::SystemTime::now())
    )
}

/// Runs `escape` of `sandbox_escapes.py` on `path`, in a fresh machine; fails with what
/// the client said unless it printed `ok`.
async fn attempt(escape: &str, path: ProcessPath) {
    let Some(python) = sdk_python() else {
        return;
    };
    let machine = Machine::new();
    run_sdk_script(
        &python,
        "sandbox_escapes.py",
        escape,
        [machine.home(), machine.workspace(), machine.user_dir()],
        &[
            ("ZIDANE_PROCESS_PATH", path.env_value()),
            (CLIENT_SECRET_ENV, &random_secret()),
        ],
        ESCAPE_BOUND,
        &format!("{escape} on the {path:?} path"),
    )
    .await;
    assert_untouched(&machine.home());
}

/// The planted files are as they were planted.
fn assert_untouched(home: &Path) {
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        BASHRC
    );
    assert!(
        std::fs::read_to_string(home.join(".ssh/id_ed25519"))
            .unwrap()
            .contains(PRIVATE_KEY)
    );
}

async fn on_both_paths(escape: &str) {
    for path in ProcessPath::ALL {
        attempt(escape, path).await;
    }
}

/// `grep -rl <secret> /proc/*/environ`, `cat /proc/$PPID/environ` and the real pids'
/// `environ`, `cmdline` and `root` show neither zidane's secret nor its client's.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_reads_no_environment_of_zidane_or_its_client() {
    on_both_paths("environ").await;
}

/// `~/.ssh/id_ed25519`, `~/.aws/credentials` and `~/.netrc` read as nothing, in the
/// foreground, the background and a terminal; the model is told they are hidden.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_reads_no_planted_credential() {
    on_both_paths("credentials").await;
}

/// `echo evil >> ~/.bashrc` (and `>`, `rm`, `mv`, `sed -i`, through a symlink, a new
/// `~/.profile`, from a background task) leaves the home as it was.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_cannot_change_a_shell_startup_file() {
    on_both_paths("startup-file").await;
}

/// A refused command's result ends with the one line naming the rule it met: `.bashrc`
/// outside the writable roots, the key hidden, the hooks held read-only.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_command_is_told_which_rule_it_met() {
    on_both_paths("explanations").await;
}

/// `kill -9` and `kill -STOP` of zidane's and its client's real pids (and of `$PPID`)
/// fail, and zidane answers the next call.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_cannot_signal_zidane_or_its_client() {
    on_both_paths("kill-host").await;
}

/// `.git/hooks/pre-commit` cannot be written nor `.git/config` changed; the model is
/// told the hooks are held read-only.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_cannot_write_the_workspaces_git_hooks_or_config() {
    on_both_paths("git-hooks").await;
}

/// A host's config the workspace holds read-only (`.claude/settings.json`,
/// `.vscode/tasks.json`, `.codex/config.toml`, and `.git/hooks` where a repository has
/// none) cannot be made where it does not exist yet: each would run a command of the
/// task's choosing outside the sandbox. zidane makes the missing directories, empty,
/// so that it can hold them.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_cannot_make_a_hosts_config_the_workspace_holds_read_only() {
    on_both_paths("held-paths").await;
}

/// Nor a held *file* that does not exist yet: a project's `.mcp.json`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "hole: a held file that does not exist (.mcp.json) is skipped by bwrap's \
            --ro-bind-try, and making it empty to hold it would break the host that reads \
            it; a task can make .mcp.json in the workspace"]
async fn a_task_cannot_make_a_held_file_that_does_not_exist() {
    on_both_paths("held-files").await;
}

/// What the sandbox allows works: writing the workspace, `/tmp`, `~/.cargo/registry` and
/// `~/.npm`, and a server on localhost that `wait_task`'s `until.port` sees.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_writes_the_workspace_temp_and_caches_and_serves_on_localhost() {
    on_both_paths("allowed").await;
}

/// By default (network on) a task reaches a listener on the host's loopback.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_reaches_the_hosts_loopback_with_the_network_on() {
    on_both_paths("network-on").await;
}

/// With `--network off` it does not: by Python, bash's `/dev/tcp` nor curl, in the
/// foreground or the background.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_reaches_nothing_of_the_host_with_the_network_off() {
    on_both_paths("network-off").await;
}

/// Inside the sandbox a killed task leaves no process (`setsid` ones included), an end
/// is told once with its exit code (3), a piped stdin and a terminal work.
#[tokio::test(flavor = "multi_thread")]
async fn the_task_guarantees_hold_inside_the_sandbox() {
    on_both_paths("containment").await;
}

/// zidane's own user dir (other sessions' logs, its tokens) is hidden from tasks; the
/// session's own task logs stay readable, not writable.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_cannot_reach_zidanes_user_dir() {
    on_both_paths("user-dir").await;
}

/// The `read_file` tool reads no credential and no process's environment.
#[tokio::test(flavor = "multi_thread")]
async fn the_read_file_tool_reads_no_credential_or_environment() {
    on_both_paths("read-file").await;
}

/// With no bubblewrap the model reads `unsandboxed: …` in the shell tool's description,
/// and zidane's stderr says it too.
#[tokio::test(flavor = "multi_thread")]
async fn an_unavailable_sandbox_is_said_to_the_model_and_on_stderr() {
    on_both_paths("unavailable").await;
}

/// With no bubblewrap `zidane mcp --sandbox-required` does not start, and says why.
#[test]
fn sandbox_required_refuses_to_start_without_one() {
    let machine = Machine::new();
    for path in ProcessPath::ALL {
        let child = zidane(&machine.user_dir(), &["mcp", "--sandbox-required"])
            .env("HOME", machine.home())
            .env("ZIDANE_BWRAP", "/nonexistent/bwrap")
            .env("ZIDANE_PROCESS_PATH", path.env_value())
            .current_dir(machine.workspace())
            .spawn()
            .unwrap();
        let output = wait_bounded(child, Duration::from_secs(10));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{path:?}: it started: {stderr}");
        assert!(
            stderr.contains("/nonexistent/bwrap") && stderr.contains("sandbox"),
            "{path:?}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{path:?}: {output:?}");
    }
}
