//! The MCP Inspector against `zidane mcp` over stdio: its older CLI
//! (`@modelcontextprotocol/inspector-cli` 1.0.3) lists the tools and calls `shell`; the
//! Inspector 2.12 (`@modelcontextprotocol/inspector`) starts, waits for and kills a
//! background task through its CLI mode, through `mcpdo` (its CLI that keeps a
//! connection open across invocations) and through its web UI in headless Chromium
//! (driven by `inspector_web.mjs` beside this file). Every surface compiles the tools'
//! output schemas with Ajv, and none may print a warning about one.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;
use zidane_test_support::{TokenCleanup, poll_until, unique_token};

use crate::hosts::host::{BIN, GONE_WAIT, HOST_WAIT, TOKEN_VAR, carrier_runs, hosts_dir};
use crate::support::NO_SWEEP;

/// What Ajv, the validator every Inspector surface compiles a tool's output schema
/// with, prints about a schema it takes only in part: a format the standard does not
/// define (`unknown format "uint64" ignored in schema at path …`, once per field and
/// compile), or under strict mode a keyword it does not know. zidane publishes standard
/// JSON Schema only, so none of these may show.
const SCHEMA_WARNINGS: &[&str] = &[
    "unknown format",
    "ignored in schema",
    "strict mode",
    "unknown keyword",
];

/// Panics when what `what` printed (stdout and stderr) warns about a schema.
fn assert_no_schema_warning(what: &str, printed: &str) {
    let warnings: Vec<&str> = printed
        .lines()
        .filter(|line| {
            let line = line.to_lowercase();
            SCHEMA_WARNINGS.iter().any(|warning| line.contains(warning))
        })
        .collect();
    assert!(
        warnings.is_empty(),
        "{what} warned about zidane's schemas:\n{}",
        warnings.join("\n")
    );
}

/// One `--cli` invocation against `zidane mcp --user-dir <user_dir>`; its JSON answer,
/// printed without a schema warning.
async fn inspect(hosts: &Path, user_dir: &Path, token: &str, method: &[&str]) -> Value {
    let package = hosts.join("node_modules/@modelcontextprotocol/inspector-cli");
    let mut command = Command::new(hosts.join("node_modules/.bin/mcp-inspector-cli"));
    command
        // 1.0.3 checks for its `package.json` relative to the working directory but
        // imports it relative to its module: only from `build/` do the two agree.
        .current_dir(package.join("build"))
        .arg("--cli")
        .args(["-e", &format!("{TOKEN_VAR}={token}")])
        .args(["-e", &format!("{}={}", NO_SWEEP.0, NO_SWEEP.1)])
        .arg(BIN)
        .args(["mcp", "--user-dir"])
        .arg(user_dir)
        .args(method)
        .env(TOKEN_VAR, token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(HOST_WAIT, command.output())
        .await
        .expect("the inspector hung")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "inspector failed ({}):\n{stdout}\n{stderr}",
        output.status,
    );
    assert_no_schema_warning(
        &format!("the inspector's {method:?}"),
        &format!("{stdout}\n{stderr}"),
    );
    // The answer is the JSON document on stdout, after any banner lines.
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {stdout}"));
    serde_json::from_str(&stdout[start..]).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The older CLI lists the tools and calls `shell`, each without a word about a schema
/// (it compiles the output schema to check the call's structured content).
#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_lists_the_tools_and_calls_shell() {
    let Some(hosts) = hosts_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token("inspector"));
    let listed = inspect(
        &hosts,
        dir.path(),
        cleanup.token(),
        &["--method", "tools/list"],
    )
    .await;
    let mut names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "list_tasks",
            "read_file",
            "shell",
            "shell_input",
            "shell_kill",
            "shell_notify",
            "shell_screen",
            "wait_task"
        ]
    );

    let called = inspect(
        &hosts,
        dir.path(),
        cleanup.token(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "shell",
            "--tool-arg",
            "command=echo inspected",
        ],
    )
    .await;
    assert_eq!(called["isError"], Value::Bool(false), "{called}");
    let text = called["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("inspected"), "{called}");
    assert_eq!(called["structuredContent"]["exit_code"], 0, "{called}");
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        "zidane mcp outlived the inspector",
        || zidane_test_support::processes_with_env(TOKEN_VAR, cleanup.token()).is_empty(),
    )
    .await;
}

// The MCP Inspector 2.12 (`@modelcontextprotocol/inspector`): its CLI mode, `mcpdo` (its
// CLI that keeps one connection open across invocations, in a daemon) and its web UI
// in headless Chromium, each starting a background `shell`, waiting on it and killing
// it. Every surface validates a result's structured content against the tool's output
// schema (Ajv) and fails the call when it is missing or does not fit, so a call that
// succeeds here carries valid structured content.

/// The command of the background task each surface starts: long enough to outlive
/// every step, and found among the run's processes by its command line.
const BACKGROUND: &str = "sleep 30";

/// Debian's Chromium, which the web UI test drives.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The web UI's driver, next to this file.
const WEB_DRIVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/cli/hosts/inspector_web.mjs"
);

/// Whether everything `needs` names exists; otherwise prints why the test skips, or
/// fails under CI, where everything is installed by `cargo xtask ci`.
fn present(needs: &[(&Path, &str)]) -> bool {
    let missing: Vec<String> = needs
        .iter()
        .filter(|(path, _)| !path.exists())
        .map(|(path, what)| format!("{what} ({})", path.display()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let reason = format!("missing: {} (run `cargo xtask hosts`)", missing.join(", "));
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
    eprintln!("skipped: {reason}");
    false
}

/// Runs `command` to its end, bounded by [`HOST_WAIT`]: whether it succeeded, and its
/// stdout. A failure prints both streams, for the assertion that follows; a schema
/// warning in either fails the test at once.
async fn run_bounded(mut command: Command, what: &str) -> (bool, String) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(HOST_WAIT, command.output())
        .await
        .unwrap_or_else(|_| panic!("{what} hung"))
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        eprintln!("{what} failed ({}):\n{stdout}\n{stderr}", output.status);
    }
    assert_no_schema_warning(what, &format!("{stdout}\n{stderr}"));
    (output.status.success(), stdout)
}

/// Parses the one JSON document a `--format json` run prints.
fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// What a background `shell` start must show, whoever shows it: the task's id, pid and
/// log path in the structured content, and a text that names the task and its log.
/// Returns the task id and its log path.
fn assert_started(text: &str, structured: &Value) -> (String, String) {
    let task_id = structured["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no task_id: {structured}"))
        .to_owned();
    let log = structured["output_path"]
        .as_str()
        .unwrap_or_else(|| panic!("no output_path: {structured}"))
        .to_owned();
    assert!(structured["pid"].is_u64(), "{structured}");
    assert!(task_id.starts_with("bash_"), "{structured}");
    assert!(
        text.contains(&task_id) && text.contains(&log),
        "the text names neither the task nor its log: {text}"
    );
    (task_id, log)
}

/// What a `wait_task` that timed out must show: the task still runs, and the text says
/// so, naming the task and its log.
fn assert_still_running(text: &str, structured: &Value, task_id: &str, log: &str) {
    assert_eq!(structured["timed_out"], Value::Bool(true), "{structured}");
    assert_eq!(structured["task_id"], task_id, "{structured}");
    assert!(
        structured.get("exit").is_none_or(Value::is_null),
        "{structured}"
    );
    assert!(
        text.contains(task_id) && text.contains("still running") && text.contains(log),
        "wait_task's text does not say that {task_id} still runs, with its log: {text}"
    );
}

/// What a `shell_kill` must show: the task's exit, killed at the caller's request.
fn assert_killed(text: &str, structured: &Value, task_id: &str) {
    let exit = &structured["exit"];
    assert_eq!(exit["task_id"], task_id, "{structured}");
    assert_eq!(exit["status"], "killed", "{structured}");
    assert_eq!(exit["kill_reason"]["kind"], "requested", "{structured}");
    assert_eq!(exit["command"], BACKGROUND, "{structured}");
    assert!(text.contains(task_id), "{text}");
}

/// Waits until no process of the run (`TOKEN_VAR=token`) runs [`BACKGROUND`].
async fn background_gone(token: &str, why: &str) {
    poll_until(GONE_WAIT, Duration::from_millis(20), why, || {
        !carrier_runs(token, BACKGROUND)
    })
    .await;
}

/// Waits until no process of the run is left at all.
async fn nothing_left(token: &str, why: &str) {
    poll_until(GONE_WAIT, Duration::from_millis(20), why, || {
        zidane_test_support::processes_with_env(TOKEN_VAR, token).is_empty()
    })
    .await;
}

/// The content text and structured content of a `tools/call` answer, which must be a
/// success.
fn call_result(answer: &Value) -> (String, Value) {
    assert_eq!(answer["isError"], Value::Bool(false), "{answer}");
    let text = answer["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned();
    let structured = answer["structuredContent"].clone();
    assert!(structured.is_object(), "no structured content: {answer}");
    (text, structured)
}

/// The Inspector 2.12's CLI, when it is installed, with a directory and home of its own
/// and a token marking the processes of the `zidane mcp` it starts.
struct InspectorCli {
    launcher: PathBuf,
    dir: tempfile::TempDir,
    home: PathBuf,
    cleanup: TokenCleanup,
}

impl InspectorCli {
    /// `None` (the test skips, saying why) when the Inspector is not installed.
    fn new(label: &str) -> Option<Self> {
        let launcher = hosts_dir()?.join("node_modules/.bin/mcp-inspector");
        if !present(&[(&launcher, "the MCP Inspector 2.12")]) {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token(label));
        Some(Self {
            launcher,
            dir,
            home,
            cleanup,
        })
    }

    /// A `--cli` call of `shell` on a `zidane mcp` of its own; the caller adds the
    /// `--tool-arg`s.
    fn shell_call(&self) -> Command {
        let token = self.cleanup.token();
        let mut command = Command::new(&self.launcher);
        command
            .current_dir(self.dir.path())
            .env("HOME", &self.home)
            .env("MCP_INSPECTOR_SECRET_STORE", "file")
            .env(TOKEN_VAR, token)
            .args(["--cli", "--format", "json"])
            .args(["-e", &format!("{TOKEN_VAR}={token}")])
            .args(["-e", &format!("{}={}", NO_SWEEP.0, NO_SWEEP.1)])
            .arg(BIN)
            .args(["mcp", "--user-dir"])
            .arg(self.dir.path().join("user"))
            .args(["--method", "tools/call", "--tool-name", "shell"]);
        command
    }
}

/// The Inspector 2.12's CLI compiles `shell`'s output schema with Ajv to check the
/// call's structured content, and prints a line for each format it does not know: a
/// foreground `shell` call prints its answer and nothing about a schema
/// ([`run_bounded`] fails on any such line).
#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_cli_calls_shell_without_a_schema_warning() {
    let Some(cli) = InspectorCli::new("inspector-schema") else {
        return;
    };
    let token = cli.cleanup.token();
    let mut command = cli.shell_call();
    command.args(["--tool-arg", "command=echo inspected"]);
    let (ok, stdout) = run_bounded(command, "the inspector's --cli shell call").await;
    let answer = json_of(&stdout);
    assert!(ok, "{answer}");
    let (text, structured) = call_result(&answer["result"]);
    assert!(text.contains("inspected"), "{text}");
    assert_eq!(structured["exit_code"], 0, "{structured}");
    nothing_left(token, "zidane outlived the inspector's connection").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_cli_starts_a_background_task_that_ends_with_its_connection() {
    let Some(cli) = InspectorCli::new("inspector-cli") else {
        return;
    };
    let token = cli.cleanup.token();
    // Every `--cli` invocation is one connection, so one `zidane mcp` of its own: the
    // CLI cannot wait on or kill the task in a later invocation (`mcpdo` can).
    let mut command = cli.shell_call();
    command
        .args(["--tool-arg", &format!("command={BACKGROUND}")])
        .args(["--tool-arg", "run_in_background=true"]);
    let (ok, stdout) = run_bounded(command, "the inspector's --cli").await;
    let answer = json_of(&stdout);
    assert!(ok, "{answer}");
    // `--format json` wraps the call's result in `result`.
    let (text, structured) = call_result(&answer["result"]);
    assert_started(&text, &structured);
    // The CLI closed the connection when it printed the answer: zidane ended its
    // session, and the task with it.
    nothing_left(
        token,
        "the background task or zidane outlived the inspector's connection",
    )
    .await;
}

/// `mcpdo` with a daemon and catalog of the test's own, and one connection, `zidane`.
struct Mcpdo {
    bin: PathBuf,
    daemon_token: String,
    // Declared before `dir`: the daemon and zidane die before their dirs go.
    cleanup: TokenCleanup,
    dir: tempfile::TempDir,
}

impl Mcpdo {
    /// The catalog names `zidane mcp` on a user dir of its own.
    fn new(bin: PathBuf) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token("mcpdo"));
        let catalog = json!({ "mcpServers": { "zidane": {
            "command": BIN,
            "args": ["mcp", "--user-dir", dir.path().join("user")],
            "env": { TOKEN_VAR: cleanup.token(), (NO_SWEEP.0): NO_SWEEP.1 },
        } } });
        std::fs::write(dir.path().join("catalog.json"), catalog.to_string()).unwrap();
        Self {
            bin,
            daemon_token: unique_token("daemon"),
            cleanup,
            dir,
        }
    }

    /// One `mcpdo --format json ARGS`; whether it succeeded, and its JSON.
    async fn run(&self, args: &[&str]) -> (bool, Value) {
        let root = self.dir.path();
        let mut command = Command::new(&self.bin);
        command
            .current_dir(root)
            .env("HOME", root.join("home"))
            .env("MCP_CATALOG_PATH", root.join("catalog.json"))
            // The daemon's socket lives here: a short path, as sockets need.
            .env("MCP_INSPECTOR_DAEMON_DIR", root.join("d"))
            .env("MCP_INSPECTOR_DAEMON_TOKEN", &self.daemon_token)
            .env("MCP_INSPECTOR_SECRET_STORE", "file")
            .env(TOKEN_VAR, self.cleanup.token())
            .args(["--format", "json"])
            .args(args);
        let (ok, stdout) = run_bounded(command, &format!("mcpdo {args:?}")).await;
        let value = if stdout.trim().is_empty() {
            Value::Null
        } else {
            json_of(&stdout)
        };
        (ok, value)
    }

    /// `tools/call NAME ARGUMENTS` on the connection; its text and structured content.
    async fn call(&self, name: &str, arguments: Value) -> (String, Value) {
        let (ok, answer) = self
            .run(&["@zidane", "tools/call", name, &arguments.to_string()])
            .await;
        assert!(ok, "{name}: {answer}");
        call_result(&answer)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mcpdo_starts_waits_for_and_kills_a_background_task_over_one_connection() {
    let Some(hosts) = hosts_dir() else { return };
    let bin = hosts.join("node_modules/.bin/mcpdo");
    if !present(&[(&bin, "the MCP Inspector 2.12's mcpdo")]) {
        return;
    }
    let mcpdo = Mcpdo::new(bin);
    let token = mcpdo.cleanup.token().to_owned();
    let (ok, connected) = mcpdo.run(&["connect", "zidane"]).await;
    assert!(ok, "{connected}");
    assert_eq!(connected["name"], "zidane", "{connected}");

    let (ok, listed) = mcpdo.run(&["@zidane", "tools/list"]).await;
    assert!(ok, "{listed}");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    for name in ["shell", "wait_task", "shell_kill"] {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }

    let (text, structured) = mcpdo
        .call(
            "shell",
            json!({ "command": BACKGROUND, "run_in_background": true }),
        )
        .await;
    let (task_id, log) = assert_started(&text, &structured);
    // The connection outlives the invocation: the task keeps running in it. (Its
    // process may still be between fork and exec when the answer arrives.)
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        "the task is not running after the call that started it returned",
        || carrier_runs(&token, BACKGROUND),
    )
    .await;

    let (text, structured) = mcpdo
        .call(
            "wait_task",
            json!({ "task_id": task_id, "timeout_ms": 500 }),
        )
        .await;
    assert_still_running(&text, &structured, &task_id, &log);
    assert!(carrier_runs(&token, BACKGROUND), "the wait ended the task");

    let (text, structured) = mcpdo
        .call("shell_kill", json!({ "task_id": task_id }))
        .await;
    assert_killed(&text, &structured, &task_id);
    background_gone(&token, "the task outlived shell_kill").await;

    let (ok, answer) = mcpdo.run(&["disconnect", "zidane"]).await;
    assert!(ok, "{answer}");
    let (ok, answer) = mcpdo.run(&["daemon", "stop"]).await;
    assert!(ok, "{answer}");
    nothing_left(&token, "zidane or mcpdo's daemon outlived `daemon stop`").await;
}

/// The Inspector's web UI, started by its launcher on a free loopback port with an API
/// token of its own; the launcher is killed when dropped.
struct WebUi {
    child: tokio::process::Child,
    url: String,
}

impl WebUi {
    /// Starts the UI on `config`'s servers; retries on another port when the one picked
    /// was taken in between.
    async fn start(launcher: &Path, config: &Path, root: &Path, token: &str) -> Self {
        for attempt in 0..3 {
            let port = {
                let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                listener.local_addr().unwrap().port()
            };
            let api_token = unique_token("ui").replace('-', "");
            let log = root.join(format!("inspector-{attempt}.log"));
            let out = std::fs::File::create(&log).unwrap();
            let child = Command::new(launcher)
                .current_dir(root)
                .env("HOME", root.join("home"))
                .env("MCP_STORAGE_DIR", root.join("storage"))
                .env("MCP_INSPECTOR_SECRET_STORE", "file")
                .env("CLIENT_PORT", port.to_string())
                // The MCP Apps sandbox and app origin: any free port, none is used here.
                .env("MCP_SANDBOX_PORT", "0")
                .env("MCP_APP_ORIGIN_PORT", "0")
                .env("MCP_AUTO_OPEN_ENABLED", "false")
                .env("MCP_INSPECTOR_API_TOKEN", &api_token)
                .env(TOKEN_VAR, token)
                .args(["--web", "--config"])
                .arg(config)
                .stdin(Stdio::null())
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .kill_on_drop(true)
                .spawn()
                .unwrap();
            let mut ui = Self {
                child,
                url: format!("http://127.0.0.1:{port}/?MCP_INSPECTOR_API_TOKEN={api_token}"),
            };
            let printed = || std::fs::read_to_string(&log).unwrap_or_default();
            let mut exited = false;
            poll_until(
                HOST_WAIT,
                Duration::from_millis(50),
                "the Inspector's web UI did not come up",
                || {
                    exited = ui.child.try_wait().unwrap().is_some();
                    exited || printed().contains("is up and running")
                },
            )
            .await;
            if !exited {
                return ui;
            }
            let printed = printed();
            assert!(
                printed.contains("PORT IS IN USE"),
                "the Inspector's web UI exited:\n{printed}"
            );
        }
        panic!("the Inspector's web UI found no free port in three tries");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_web_ui_starts_waits_for_and_kills_a_background_task() {
    let Some(hosts) = hosts_dir() else { return };
    let launcher = hosts.join("node_modules/.bin/mcp-inspector");
    let playwright = hosts.join("node_modules/playwright-core/package.json");
    if !present(&[
        (&launcher, "the MCP Inspector 2.12"),
        (&playwright, "playwright-core"),
        (Path::new(CHROMIUM), "Debian's chromium"),
    ]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for sub in ["home", "storage", "chromium"] {
        std::fs::create_dir(root.join(sub)).unwrap();
    }
    let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token("inspector-web"));
    let token = cleanup.token();
    let config = root.join("mcp.json");
    let servers = json!({ "mcpServers": { "zidane": {
        "command": BIN,
        "args": ["mcp", "--user-dir", root.join("user")],
        "env": { TOKEN_VAR: token, (NO_SWEEP.0): NO_SWEEP.1 },
    } } });
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut ui = WebUi::start(&launcher, &config, root, token).await;

    let mut driver = Command::new("node");
    driver
        .current_dir(root)
        // Whatever Chromium keeps outside its profile stays in the run's dir too.
        .env("HOME", root.join("home"))
        .env(TOKEN_VAR, token)
        .env("CHROMIUM", CHROMIUM)
        .arg(WEB_DRIVER)
        .arg(&hosts)
        .arg(&ui.url)
        .arg(root.join("chromium"))
        .arg(BACKGROUND);
    let (ok, stdout) = run_bounded(driver, "the web UI's driver").await;
    let shown = json_of(&stdout);
    assert!(ok, "{shown:#}");

    let mut tools: Vec<&str> = shown["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{shown:#}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    tools.sort_unstable();
    assert_eq!(
        tools,
        [
            "list_tasks",
            "read_file",
            "shell",
            "shell_input",
            "shell_kill",
            "shell_notify",
            "shell_screen",
            "wait_task"
        ],
        "{shown:#}"
    );
    let panel = |tool: &str| -> (String, Value) {
        let call = &shown["calls"][tool];
        assert_eq!(call["heading"], "Results", "{tool}: {call:#}");
        let text = call["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{tool}: {call:#}"))
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        (text, call["structured"].clone())
    };
    let (text, structured) = panel("shell");
    let (task_id, log) = assert_started(&text, &structured);
    let (text, structured) = panel("wait_task");
    assert_still_running(&text, &structured, &task_id, &log);
    let (text, structured) = panel("shell_kill");
    assert_killed(&text, &structured, &task_id);
    background_gone(token, "the task outlived shell_kill in the web UI").await;
    assert!(
        carrier_runs(token, "mcp --user-dir"),
        "zidane did not outlive the kill: the task died with its session, not by shell_kill"
    );

    ui.child.kill().await.unwrap();
    nothing_left(token, "zidane or Chromium outlived the Inspector's web UI").await;
}
