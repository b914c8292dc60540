//! `zidane` and `zidane mcp` run their commands in a sandbox by default: the working
//! directory as the workspace, zidane's own user dir hidden. The `--sandbox*` flags over
//! the config file's `[sandbox]` table set it; `--print-sandbox` shows what this machine
//! makes of it; an unavailable sandbox is said on stderr, or refused with
//! `--sandbox-required`.

use std::io::Write as _;
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::mcp_support::{StdioServer, UserDirBy};
use crate::support::{wait_bounded, zidane};

/// Bound on a run that exits by itself.
const BOUND: Duration = Duration::from_secs(60);

/// A bubblewrap that is not there.
const NO_BWRAP: (&str, &str) = ("ZIDANE_BWRAP", "/nonexistent/bwrap");

/// The directories a run is given, each its own, so its output means the same on every
/// machine once their paths are named.
struct Dirs {
    user: tempfile::TempDir,
    home: tempfile::TempDir,
    workspace: tempfile::TempDir,
    config: tempfile::TempDir,
}

impl Dirs {
    /// Each under `/tmp`, the temp directory the run is given: what the plan holds of
    /// the home (its startup files, held read-only only inside a writable directory) is
    /// then the same on every machine, whatever the tests' own `TMPDIR`.
    fn new() -> Self {
        let dir = || tempfile::tempdir_in("/tmp").unwrap();
        Self {
            user: dir(),
            home: dir(),
            workspace: dir(),
            config: dir(),
        }
    }

    /// Writes the config file.
    fn config(self, text: &str) -> Self {
        std::fs::create_dir(self.config.path().join("zidane")).unwrap();
        std::fs::write(self.config.path().join("zidane/config.toml"), text).unwrap();
        self
    }

    /// `zidane ARGS` in the workspace, with these dirs and `env`; its output.
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.run_with_input(args, env, "")
    }

    /// [`run`](Self::run) with `input` on its stdin, which is then closed.
    fn run_with_input(&self, args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
        let mut command = zidane(self.user.path(), args);
        command
            .current_dir(self.workspace.path())
            .env("HOME", self.home.path())
            .env("TMPDIR", "/tmp")
            .env("XDG_CONFIG_HOME", self.config.path())
            .env_remove("ZIDANE_BWRAP")
            .envs(env.iter().copied())
            .stdin(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        wait_bounded(child, BOUND)
    }

    /// `text` with these dirs' paths named.
    fn named(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (dir, name) in [
            (self.user.path(), "[USER_DIR]"),
            (self.home.path(), "[HOME]"),
            (self.workspace.path(), "[WORKSPACE]"),
            (self.config.path(), "[CONFIG_HOME]"),
        ] {
            text = text.replace(&dir.display().to_string(), name);
        }
        text
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The output of a run that must succeed.
fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}{}",
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

#[test]
fn zidane_mcp_is_sandboxed_by_default_and_print_sandbox_says_how() {
    let dirs = Dirs::new();
    let output = dirs.run(&["mcp", "--print-sandbox"], &[]);
    let printed = dirs.named(&succeeded(&output));
    assert!(printed.contains("status: enforced\n"), "{printed}");
    insta::assert_snapshot!("print_sandbox_default", printed);
}

#[test]
fn the_terminal_host_takes_the_same_flags() {
    let dirs = Dirs::new();
    let output = dirs.run(
        &[
            "--print-sandbox",
            "--sandbox",
            "read-only",
            "--network",
            "off",
            "--deny-read",
            "private",
        ],
        &[],
    );
    let printed = dirs.named(&succeeded(&output));
    insta::assert_snapshot!("print_sandbox_read_only_no_network", printed);
}

#[test]
fn flags_override_the_config_files_sandbox_table_and_add_to_its_paths() {
    let dirs = Dirs::new().config(
        "[sandbox]\nmode = \"read-only\"\nnetwork = \"off\"\nwritable = [\"/srv/data\"]\n\
         deny_read = [\"/srv/secret\"]\n",
    );
    let from_file = dirs.named(&succeeded(&dirs.run(&["mcp", "--print-sandbox"], &[])));
    assert!(from_file.contains("sandbox: read-only\n"), "{from_file}");
    assert!(from_file.contains("network: off\n"), "{from_file}");
    assert!(from_file.contains("  /srv/secret\n"), "{from_file}");
    assert!(
        !from_file.contains("/srv/data"),
        "read-only writes no more:\n{from_file}"
    );

    let args = [
        "mcp",
        "--print-sandbox",
        "--sandbox",
        "workspace-write",
        "--network",
        "on",
        "--writable",
        "out",
        "--deny-read",
        "/srv/other",
    ];
    let flags = dirs.named(&succeeded(&dirs.run(&args, &[])));
    assert!(flags.contains("sandbox: workspace-write\n"), "{flags}");
    assert!(flags.contains("network: on\n"), "{flags}");
    for path in [
        "[WORKSPACE]",
        "/srv/data",
        "[WORKSPACE]/out",
        "/srv/secret",
        "/srv/other",
        "[USER_DIR]",
    ] {
        assert!(flags.contains(&format!("  {path}\n")), "{path}:\n{flags}");
    }
}

#[test]
fn bad_settings_are_refused_naming_the_flag_or_the_file() {
    let dirs = Dirs::new();
    for (args, says) in [
        (
            &["mcp", "--sandbox", "strict"][..],
            "'--sandbox <workspace-write|read-only|off>'",
        ),
        (&["mcp", "--network", "maybe"], "'--network <on|off>'"),
        (&["--sandbox", "strict", "--demo", "-p", "hi"], "'--sandbox"),
    ] {
        let output = dirs.run(args, &[]);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = stderr(&output);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(stderr.contains("expected one of"), "{args:?}: {stderr}");
    }
    let dirs = Dirs::new().config("[sandbox]\nmode = \"strict\"\n");
    let output = dirs.run(&["mcp", "--print-sandbox"], &[]);
    assert!(!output.status.success());
    let stderr = dirs.named(&stderr(&output));
    assert!(
        stderr.starts_with("zidane: config file [CONFIG_HOME]/zidane/config.toml: [sandbox]: "),
        "{stderr}"
    );
    assert!(stderr.contains("strict"), "{stderr}");
}

#[test]
fn sandbox_required_refuses_to_start_without_it_naming_the_reason_and_the_setting() {
    let dirs = Dirs::new();
    for args in [
        &["mcp", "--sandbox-required"][..],
        &["--sandbox-required", "--demo", "-p", "hi"],
    ] {
        let output = dirs.run(args, &[NO_BWRAP]);
        assert!(!output.status.success(), "{args:?}");
        assert!(stdout(&output).is_empty(), "{args:?}: {}", stdout(&output));
        assert_eq!(
            stderr(&output),
            "zidane: the sandbox is required (--sandbox-required) but unavailable: bubblewrap \
             was not found at /nonexistent/bwrap (ZIDANE_BWRAP); `--sandbox off` runs \
             commands without one\n",
            "{args:?}"
        );
    }
    let dirs = Dirs::new().config("[sandbox]\nrequired = true\n");
    let output = dirs.run(&["mcp"], &[NO_BWRAP]);
    assert!(!output.status.success());
    let stderr = dirs.named(&stderr(&output));
    assert!(
        stderr.contains(
            "(`required = true` in [sandbox] of [CONFIG_HOME]/zidane/config.toml) but unavailable"
        ),
        "{stderr}"
    );
    // Off by choice is not unavailable.
    let output = dirs.run(&["mcp", "--sandbox", "off", "--print-sandbox"], &[NO_BWRAP]);
    assert!(succeeded(&output).contains("status: off"));
}

#[test]
fn an_unavailable_sandbox_is_said_on_stderr_and_printed() {
    let dirs = Dirs::new();
    let output = dirs.run(&["mcp", "--print-sandbox"], &[NO_BWRAP]);
    let printed = dirs.named(&succeeded(&output));
    insta::assert_snapshot!("print_sandbox_unavailable", printed);
    // Without a client, the server ends at once (stdin is closed): the line comes first.
    let output = dirs.run(&["--demo", "-p", "hi"], &[NO_BWRAP]);
    let said = stderr(&output);
    assert!(
        said.starts_with(
            "zidane: unsandboxed: bubblewrap was not found at /nonexistent/bwrap (ZIDANE_BWRAP)\n"
        ),
        "{said}"
    );
    // Once, however many sessions start: here one, which the client then leaves.
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "raw", "version": "0" }
        }
    });
    let output = dirs.run_with_input(&["mcp"], &[NO_BWRAP], &format!("{initialize}\n"));
    let said = stderr(&output);
    assert!(
        said.starts_with("zidane: unsandboxed: bubblewrap was not found"),
        "{said}"
    );
    assert_eq!(said.matches("unsandboxed").count(), 1, "{said}");
    assert!(
        stdout(&output).contains("\"serverInfo\""),
        "{}",
        stdout(&output)
    );
}

/// What a foreground `shell` command printed, and its exit code.
async fn shell(server: &mut StdioServer, id: u64, command: &str) -> (String, i64) {
    let result = server
        .call(id, "shell", json!({ "command": command }))
        .await;
    let output = result["structuredContent"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"))
        .to_owned();
    let code = result["structuredContent"]["exit_code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{result}"));
    (output, code)
}

#[tokio::test(flavor = "multi_thread")]
async fn by_default_a_command_cannot_write_outside_the_workspace_nor_read_zidanes_files() {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut server = StdioServer::start_configured(UserDirBy::Flag, &[], &[]).await;
    let user_dir = server._dir.path().to_owned();
    std::fs::write(user_dir.join("own.txt"), "zidane's own").unwrap();
    let (read, code) = shell(
        &mut server,
        1,
        &format!("cat {}/own.txt", user_dir.display()),
    )
    .await;
    assert_ne!(code, 0, "zidane's user dir was read: {read}");
    assert!(!read.contains("zidane's own"), "{read}");

    let target = outside.path().join("escaped");
    let (wrote, code) = shell(&mut server, 2, &format!("touch {}", target.display())).await;
    assert_ne!(code, 0, "wrote outside the workspace: {wrote}");
    assert!(!target.exists());
}
