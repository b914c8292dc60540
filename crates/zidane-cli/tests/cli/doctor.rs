//! `zidane doctor` on fake machines: a temporary `HOME` (its `XDG_CONFIG_HOME`, user
//! dir and a project as the working directory under it), a `PATH` whose `zidane` is the
//! binary under test, and a fake bubblewrap (`ZIDANE_BWRAP`) that either builds the
//! sandbox or fails the way bubblewrap fails where user namespaces are refused. Each
//! host's entry is written as that host writes it, right or wrong; the findings, their
//! fixes and the exit status are checked, every `--json` against the checked-in schema,
//! and one fake home's lines are a snapshot.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use zidane_test_support::alive;

use crate::mcp_support::BIN;
use crate::orphan_sweep::{a_host_dead_without_its_lifeline, lock};
use crate::support::wait_bounded;

/// Bound on one run of `zidane doctor`.
const BOUND: Duration = Duration::from_secs(60);

/// A bubblewrap that builds every sandbox (it runs nothing: the check only probes).
const BWRAP_OK: &str = "#!/bin/sh\nexit 0\n";

/// A bubblewrap on a machine that refuses unprivileged user namespaces, saying what the
/// real one says there.
const BWRAP_NO_USERNS: &str = "#!/bin/sh\n\
    echo 'bwrap: No permissions to create new namespace, likely because the kernel does \
    not allow non-privileged user namespaces.' >&2\nexit 1\n";

/// A fake machine: a home with a project in it, a `PATH` holding `zidane` (a link to the
/// binary under test) and a fake `bwrap`.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    /// A machine whose bubblewrap is `bwrap` (a script's text).
    fn new(bwrap: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let machine = Self { root };
        for dir in ["home/work/app", "bin", "run"] {
            std::fs::create_dir_all(machine.root.path().join(dir)).unwrap();
        }
        std::fs::set_permissions(
            machine.root.path().join("run"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        std::os::unix::fs::symlink(BIN, machine.root.path().join("bin/zidane")).unwrap();
        machine.script("bwrap", bwrap);
        machine
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The working directory: a project in the home.
    fn project(&self) -> PathBuf {
        self.home().join("work/app")
    }

    /// Writes an executable script `bin/NAME`.
    fn script(&self, name: &str, text: &str) {
        let path = self.root.path().join("bin").join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Writes `text` to `path`: `~/…` in the home, `./…` in the project.
    fn write(&self, path: &str, text: &str) {
        let path = self.resolve(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn resolve(&self, path: &str) -> PathBuf {
        match (path.strip_prefix("~/"), path.strip_prefix("./")) {
            (Some(rest), _) => self.home().join(rest),
            (_, Some(rest)) => self.project().join(rest),
            _ => PathBuf::from(path),
        }
    }

    /// `zidane doctor ARGS` on this machine, with `env` over its environment: nothing
    /// of the tests' own (no host's variables, no `ZIDANE_*`).
    fn doctor(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let root = self.root.path();
        let mut command = Command::new(BIN);
        command
            .arg("doctor")
            .args(args)
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", root.join("bin").display()),
            )
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_RUNTIME_DIR", root.join("run"))
            .env("ZIDANE_USER_DIR", self.home().join(".local/share/zidane"))
            .env("ZIDANE_BWRAP", root.join("bin/bwrap"))
            .envs(env.iter().copied())
            .current_dir(self.project())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        wait_bounded(command.spawn().unwrap(), BOUND)
    }

    /// `zidane doctor --json`, checked against the schema: the report and the exit
    /// status.
    fn report(&self, env: &[(&str, &str)]) -> (Value, Option<i32>) {
        let output = self.doctor(&["--json"], env);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let report: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}{output:?}"));
        let errors: Vec<String> = schema()
            .iter_errors(&report)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}\nin {report:#}");
        (report, output.status.code())
    }
}

/// The checked-in schema of `--json` (the unit tests hold it to the report's types).
fn schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/doctor.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

/// The findings of `check` in a report.
fn findings<'a>(report: &'a Value, check: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["check"] == check)
        .collect()
}

/// The one finding of `check`.
fn finding<'a>(report: &'a Value, check: &str) -> &'a Value {
    let found = findings(report, check);
    assert_eq!(found.len(), 1, "{check}: {found:#?}\nin {report:#}");
    found[0]
}

/// How a host writes zidane's entry: its file and the entry's text for `command` and
/// `args`; `complete` adds the settings the host needs beyond them.
struct HostEntry {
    check: &'static str,
    /// The file, `~/…` or `./…`, as the finding shows it (the project under `~`).
    file: &'static str,
    /// The entry's key, as a fix names it.
    key: &'static str,
    write: fn(&str, &[&str], bool) -> String,
}

/// `{"mcpServers": {"zidane": ENTRY}}`.
fn mcp_servers(entry: Value) -> String {
    json!({ "mcpServers": { "zidane": entry } }).to_string()
}

const HOSTS: &[HostEntry] = &[
    HostEntry {
        check: "host.claude-code",
        file: "~/.claude.json",
        key: "mcpServers.zidane",
        write: |command, args, _| {
            json!({
                "numStartups": 3,
                "mcpServers": { "zidane": {
                    "type": "stdio", "command": command, "args": args, "env": {}
                } },
            })
            .to_string()
        },
    },
    HostEntry {
        check: "host.codex",
        file: "~/.codex/config.toml",
        key: "[mcp_servers.zidane]",
        write: |command, args, complete| {
            let mut text = format!(
                "model = \"o4\"\n\n[mcp_servers.zidane]\ncommand = {}\nargs = {}\n",
                json!(command),
                json!(args)
            );
            if complete {
                text.push_str(
                    "tool_timeout_sec = 300\ndefault_tools_approval_mode = \"approve\"\n",
                );
            }
            text
        },
    },
    HostEntry {
        check: "host.gemini-cli",
        file: "~/.gemini/settings.json",
        key: "mcpServers.zidane",
        write: |command, args, complete| {
            mcp_servers(json!({ "command": command, "args": args, "trust": complete }))
        },
    },
    HostEntry {
        check: "host.qwen-code",
        file: "~/.qwen/settings.json",
        key: "mcpServers.zidane",
        write: |command, args, complete| {
            let mut entry = json!({ "command": command, "args": args, "trust": true });
            if complete {
                entry["alwaysLoadTools"] = json!(true);
            }
            mcp_servers(entry)
        },
    },
    HostEntry {
        check: "host.opencode",
        file: "~/.config/opencode/opencode.json",
        key: "mcp.zidane",
        write: |command, args, _| {
            let words: Vec<&str> = std::iter::once(command)
                .chain(args.iter().copied())
                .collect();
            json!({ "$schema": "https://opencode.ai/config.json",
                    "mcp": { "zidane": { "type": "local", "command": words } } })
            .to_string()
        },
    },
    HostEntry {
        check: "host.copilot-cli",
        file: "~/.copilot/mcp-config.json",
        key: "mcpServers.zidane",
        write: |command, args, _| {
            mcp_servers(
                json!({ "tools": ["*"], "type": "local", "command": command, "args": args }),
            )
        },
    },
    HostEntry {
        check: "host.vscode",
        file: "./.vscode/mcp.json",
        key: "servers.zidane",
        write: |command, args, _| {
            format!(
                "{{\n  // zidane, for this project\n  \"servers\": {{\n    \
                 \"zidane\": {},\n  }},\n}}\n",
                json!({ "type": "stdio", "command": command, "args": args })
            )
        },
    },
    HostEntry {
        check: "host.cursor",
        file: "~/.cursor/mcp.json",
        key: "mcpServers.zidane",
        write: |command, args, _| mcp_servers(json!({ "command": command, "args": args })),
    },
    HostEntry {
        check: "host.claude-desktop",
        file: "~/.config/Claude/claude_desktop_config.json",
        key: "mcpServers.zidane",
        write: |command, args, _| mcp_servers(json!({ "command": command, "args": args })),
    },
];

impl HostEntry {
    /// The file as a finding shows it.
    fn shown(&self) -> String {
        match self.file.strip_prefix("./") {
            Some(rest) => format!("~/work/app/{rest}"),
            None => self.file.to_owned(),
        }
    }

    /// The fix that points the entry's command at `zidane`, the one on `PATH`.
    fn command_fix(&self) -> String {
        let file = self.shown();
        match self.check {
            "host.codex" => format!("in {file}, set command = \"zidane\" under {}", self.key),
            "host.opencode" => format!(
                "in {file}, set {}.command to [\"zidane\", \"mcp\"]",
                self.key
            ),
            _ => format!("in {file}, set {}.command to \"zidane\"", self.key),
        }
    }
}

/// A machine with every host's entry written as `command mcp`.
fn machine_with_every_host(command: &str, complete: bool) -> Machine {
    let machine = Machine::new(BWRAP_OK);
    for host in HOSTS {
        machine.write(host.file, &(host.write)(command, &["mcp"], complete));
    }
    machine
}

#[test]
fn every_hosts_right_entry_is_ok_and_nothing_is_broken() {
    let machine = machine_with_every_host("zidane", true);
    let (report, code) = machine.report(&[]);
    let on_path = format!(
        "): runs `zidane mcp` ({}/bin/zidane)",
        machine.root.path().display()
    );
    for host in HOSTS {
        let found = finding(&report, host.check);
        assert_eq!(found["status"], "ok", "{found:#}");
        let summary = found["summary"].as_str().unwrap();
        assert!(summary.ends_with(&on_path), "{found:#}");
        assert!(summary.contains(&host.shown()), "{found:#}");
        assert_eq!(found.get("fix"), None, "{found:#}");
    }
    assert!(findings(&report, "hosts").is_empty(), "{report:#}");
    for check in [
        "zidane",
        "process-path",
        "config-file",
        "sandbox",
        "supervisor",
        "storage",
    ] {
        assert_eq!(finding(&report, check)["status"], "ok", "{report:#}");
    }
    assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(report["platform"]["os"], "linux");
    assert_eq!(code, Some(0), "{report:#}");
}

#[test]
fn an_entry_whose_command_does_not_exist_is_broken_with_the_command_that_does() {
    let machine = machine_with_every_host("/opt/gone/zidane", true);
    let (report, code) = machine.report(&[]);
    for host in HOSTS {
        let found = finding(&report, host.check);
        assert_eq!(found["status"], "broken", "{found:#}");
        assert!(
            found["summary"]
                .as_str()
                .unwrap()
                .ends_with("the command /opt/gone/zidane does not exist"),
            "{found:#}"
        );
        assert_eq!(found["fix"], host.command_fix(), "{found:#}");
    }
    assert_eq!(code, Some(1));
}

#[test]
fn a_tilde_in_the_command_is_broken_for_hosts_expand_nothing() {
    let machine = machine_with_every_host("~/.local/bin/zidane", true);
    let (report, code) = machine.report(&[]);
    for host in HOSTS {
        let found = finding(&report, host.check);
        assert_eq!(found["status"], "broken", "{found:#}");
        assert!(
            found["summary"]
                .as_str()
                .unwrap()
                .contains("the command `~/.local/bin/zidane` starts with `~`"),
            "{found:#}"
        );
        // Nothing at ~/.local/bin/zidane: the fix is the `zidane` on PATH.
        assert_eq!(found["fix"], host.command_fix(), "{found:#}");
    }
    assert_eq!(code, Some(1));
    // Where the person's path exists, the fix is that path, spelt out.
    let installed = machine.home().join(".local/bin/zidane");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(BIN, &installed).unwrap();
    let (report, _) = machine.report(&[]);
    let gemini = finding(&report, "host.gemini-cli");
    assert_eq!(
        gemini["fix"],
        format!(
            "in ~/.gemini/settings.json, set mcpServers.zidane.command to \"{}\"",
            installed.display()
        )
    );
}

#[test]
fn the_settings_a_host_needs_are_named_with_the_key_that_sets_them() {
    let machine = machine_with_every_host("zidane", false);
    let (report, code) = machine.report(&[]);
    let gemini = finding(&report, "host.gemini-cli");
    assert_eq!(gemini["status"], "warning");
    assert!(
        gemini["summary"].as_str().unwrap().contains("not trusted"),
        "{gemini:#}"
    );
    assert_eq!(
        gemini["fix"],
        "in ~/.gemini/settings.json, set mcpServers.zidane.trust to true"
    );
    let qwen = finding(&report, "host.qwen-code");
    assert_eq!(qwen["status"], "broken");
    assert!(
        qwen["summary"]
            .as_str()
            .unwrap()
            .contains("alwaysLoadTools"),
        "{qwen:#}"
    );
    assert_eq!(
        qwen["fix"],
        "in ~/.qwen/settings.json, set mcpServers.zidane.alwaysLoadTools to true"
    );
    let codex = finding(&report, "host.codex");
    assert_eq!(codex["status"], "warning");
    assert_eq!(
        codex["fix"],
        "in ~/.codex/config.toml, set default_tools_approval_mode = \"approve\" under \
         [mcp_servers.zidane]"
    );
    // qwen without `alwaysLoadTools` never offers the tools: broken.
    assert_eq!(code, Some(1));
}

#[test]
fn bad_arguments_are_refused_as_zidane_mcp_would_refuse_them() {
    let machine = Machine::new(BWRAP_OK);
    let copilot = &HOSTS[5];
    machine.write(
        copilot.file,
        &(copilot.write)("zidane", &["mcp", "--bogus", "--sandbox", "off"], true),
    );
    let claude = &HOSTS[0];
    machine.write(claude.file, &(claude.write)("zidane", &[], true));
    let (report, code) = machine.report(&[]);
    let found = finding(&report, "host.copilot-cli");
    assert!(
        found["summary"].as_str().unwrap().contains("'--bogus'"),
        "{found:#}"
    );
    assert_eq!(
        found["fix"],
        "in ~/.copilot/mcp-config.json, set mcpServers.zidane.args to \
         [\"mcp\", \"--sandbox\", \"off\"]"
    );
    let found = finding(&report, "host.claude-code");
    assert!(
        found["summary"]
            .as_str()
            .unwrap()
            .contains("interactive session"),
        "{found:#}"
    );
    assert_eq!(
        found["fix"],
        "in ~/.claude.json, set mcpServers.zidane.args to [\"mcp\"]"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_host_without_zidane_gets_the_line_that_adds_it_and_hosts_not_here_are_named() {
    let machine = Machine::new(BWRAP_OK);
    machine.write("~/.gemini/settings.json", "{\"theme\": \"dark\"}");
    machine.write(
        "~/.claude.json",
        &json!({ "mcpServers": { "fetch": { "command": "uvx", "args": ["mcp-server-fetch"] } } })
            .to_string(),
    );
    let (report, code) = machine.report(&[]);
    let gemini = finding(&report, "host.gemini-cli");
    assert_eq!(gemini["status"], "info");
    assert_eq!(
        gemini["fix"],
        "gemini mcp add --scope user --trust zidane zidane mcp"
    );
    let claude = finding(&report, "host.claude-code");
    assert_eq!(
        claude["fix"],
        "claude mcp add --scope user zidane -- zidane mcp"
    );
    let absent = finding(&report, "hosts")["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        absent.contains("Codex") && absent.contains("Cursor"),
        "{absent}"
    );
    assert!(!absent.contains("Gemini"), "{absent}");
    assert_eq!(code, Some(0));
}

#[test]
fn a_machine_without_user_namespaces_says_why_and_the_line_that_allows_them() {
    let machine = Machine::new(BWRAP_NO_USERNS);
    let (report, code) = machine.report(&[]);
    let sandbox = finding(&report, "sandbox");
    assert_eq!(sandbox["status"], "broken");
    let summary = sandbox["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(
            "sandbox: unavailable, commands run unsandboxed: bubblewrap cannot build a \
             sandbox here: bwrap: No permissions to create new namespace"
        ),
        "{summary}"
    );
    // Which line depends on what refuses them on the machine running the test: a sysctl,
    // or a container's policy.
    let fix = sandbox["fix"].as_str().unwrap();
    assert!(
        fix.contains("sudo sysctl -w") || fix.contains("seccomp=unconfined"),
        "{fix}"
    );
    assert_eq!(code, Some(1));

    // Required by the config file: zidane refuses to start, and says so.
    machine.write(
        "~/.config/zidane/config.toml",
        "[sandbox]\nrequired = true\n",
    );
    let (report, _) = machine.report(&[]);
    let summary = finding(&report, "sandbox")["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        summary.contains("`zidane` and `zidane mcp` refuse to start (`required = true`"),
        "{summary}"
    );
    // Off by choice is not broken.
    machine.write(
        "~/.config/zidane/config.toml",
        "[sandbox]\nmode = \"off\"\n",
    );
    let (report, code) = machine.report(&[]);
    assert_eq!(finding(&report, "sandbox")["status"], "info");
    assert_eq!(code, Some(0));
}

#[test]
fn a_missing_bubblewrap_is_installed_or_pointed_at() {
    let machine = Machine::new(BWRAP_OK);
    let (report, _) = machine.report(&[("ZIDANE_BWRAP", "/nonexistent/bwrap")]);
    let sandbox = finding(&report, "sandbox");
    assert!(
        sandbox["summary"]
            .as_str()
            .unwrap()
            .contains("(ZIDANE_BWRAP)"),
        "{sandbox:#}"
    );
    assert_eq!(
        sandbox["fix"],
        "unset ZIDANE_BWRAP, or point it at bubblewrap (`command -v bwrap`)"
    );
    // None named, none on PATH.
    let empty = machine.root.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let path = empty.display().to_string();
    let (report, _) = machine.report(&[("ZIDANE_BWRAP", ""), ("PATH", &path)]);
    let fix = finding(&report, "sandbox")["fix"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fix.contains("bubblewrap"), "{fix}");
}

#[test]
fn a_refused_config_file_is_broken_and_named() {
    let machine = Machine::new(BWRAP_OK);
    machine.write(
        "~/.config/zidane/config.toml",
        "[sandbox]\nmode = \"strict\"\n",
    );
    let (report, code) = machine.report(&[]);
    let config = finding(&report, "config-file");
    assert_eq!(config["status"], "broken");
    assert!(
        config["summary"]
            .as_str()
            .unwrap()
            .starts_with("config file: ~/.config/zidane/config.toml: [sandbox]: "),
        "{config:#}"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn sessions_over_the_retention_cap_are_a_warning_with_the_clean_that_frees_them() {
    let machine = Machine::new(BWRAP_OK);
    machine.write(
        "~/.local/share/zidane/sessions/s-1/session.json",
        &"x".repeat(4096),
    );
    let (report, code) = machine.report(&[("ZIDANE_RETENTION_MAX_BYTES", "1024")]);
    let storage = finding(&report, "storage");
    assert_eq!(storage["status"], "warning", "{storage:#}");
    let summary = storage["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(
            "storage: ~/.local/share/zidane: 4.0 KiB in 1 session, 0 B of detached tasks; \
             retention at start: 30 days, 1.0 KiB"
        ),
        "{summary}"
    );
    assert!(
        summary.ends_with("the sessions are over 1.0 KiB"),
        "{summary}"
    );
    assert_eq!(
        storage["fix"],
        "zidane clean (every ended session; --dry-run lists them first)"
    );
    assert_eq!(code, Some(0));
    let (report, _) = machine.report(&[]);
    let storage = finding(&report, "storage");
    assert_eq!(storage["status"], "ok", "{storage:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tasks_of_a_dead_host_are_listed_and_left_running() {
    let _lock = lock().await;
    let (dead, orphans, _leftovers) = a_host_dead_without_its_lifeline().await;
    let machine = Machine::new(BWRAP_OK);
    let (report, code) = tokio::task::spawn_blocking(move || {
        let found = machine.report(&[]);
        drop(machine);
        found
    })
    .await
    .unwrap();
    let found = finding(&report, "orphans");
    assert_eq!(found["status"], "warning", "{found:#}");
    let summary = found["summary"].as_str().unwrap();
    assert!(summary.contains(&format!("(host {dead}")), "{summary}");
    let fix = found["fix"].as_str().unwrap();
    let listed: Vec<&str> = fix
        .strip_prefix("kill ")
        .unwrap()
        .split(" (")
        .next()
        .unwrap()
        .split(' ')
        .collect();
    for pid in &orphans {
        assert!(
            listed.contains(&pid.to_string().as_str()),
            "{pid} not in {fix}"
        );
    }
    assert!(
        fix.ends_with("(or start `zidane` or `zidane mcp`, which end them as they start)"),
        "{fix}"
    );
    // Listed, never ended: the leftovers end them when this test does.
    for pid in &orphans {
        assert!(alive(*pid), "zidane doctor ended {pid}");
    }
    // Warnings do not fail the run.
    assert_eq!(code, Some(0), "{report:#}");
}

#[test]
fn one_fake_homes_lines() {
    let machine = Machine::new(BWRAP_OK);
    let project = machine.project().display().to_string();
    machine.write(
        "~/.claude.json",
        &json!({
            "mcpServers": {
                "zidane": { "type": "stdio", "command": "zidane", "args": ["mcp"], "env": {} },
                "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"] },
            },
            "projects": { project: { "mcpServers": {
                "zidane-dev": {
                    "type": "stdio", "command": "/opt/zidane/bin/zidane", "args": ["mcp"],
                },
            } } },
        })
        .to_string(),
    );
    machine.write(
        "./.mcp.json",
        &mcp_servers(json!({ "command": "zidane", "args": ["mcp", "--sandbox", "read-only"] })),
    );
    machine.write(
        "~/.codex/config.toml",
        "[mcp_servers.zidane]\ncommand = \"zidane\"\nargs = [\"mcp\"]\ntool_timeout_sec = 60\n",
    );
    machine.write(
        "~/.gemini/settings.json",
        &(HOSTS[2].write)("zidane", &["mcp"], false),
    );
    machine.write(
        "~/.qwen/settings.json",
        &mcp_servers(json!({ "command": "~/.cargo/bin/zidane", "args": ["mcp"], "trust": true })),
    );
    machine.write(
        "~/.config/opencode/opencode.json",
        &(HOSTS[4].write)("zidane", &["mcp"], true),
    );
    machine.write(
        "~/.copilot/mcp-config.json",
        &(HOSTS[5].write)("zidane", &["mcp", "--bogus"], true),
    );
    machine.write(
        "~/.config/Code/User/settings.json",
        "{\n  // the editor's own\n  \"editor.fontSize\": 14,\n}\n",
    );
    let output = machine.doctor(&[], &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let canonical = std::fs::canonicalize(BIN).unwrap().display().to_string();
    let root = machine.root.path().display().to_string();
    let (bin, root, version) = (
        regex_escape(&canonical),
        regex_escape(&root),
        regex_escape(env!("CARGO_PKG_VERSION")),
    );
    insta::with_settings!({ filters => vec![
        (bin.as_str(), "[BIN]"),
        (root.as_str(), "[ROOT]"),
        (version.as_str(), "[VERSION]"),
        (r"\(linux [a-z0-9_]+\)", "(linux [ARCH])"),
        // Whatever dead hosts left on the machine running the test.
        (r"(?m)^[✓!·] orphans: .*\n(    → .*\n)?", "[orphans]\n"),
        (r"(?m)^·· .*$", "·· [tally]"),
    ] }, {
        insta::assert_snapshot!("doctor_fake_home", printed);
    });
}

/// `text` as a regular expression that matches it literally.
fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect()
}
