//! Claude Code's interactive CLI declares the MCP tasks extension (its print mode, `-p`,
//! does not): a background start is answered as an MCP task, which Claude Code moves to
//! its own background, and when the task ends Claude Code starts a turn of its own that
//! hands the model the task's result — zidane's `<task-notification>`. Driven in tmux, as
//! a person runs it.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use zidane_test_support::{Exchange, ScriptedModel, Step};

use super::host::{BIN, Host, Ran, SERVER, Sandbox, TOKEN_VAR, describe};
use crate::support::tmux_present;

/// Longest the whole exchange may take.
const BOUND: Duration = Duration::from_secs(90);

fn tmux(args: &[&str]) -> std::process::Output {
    Command::new("tmux").args(args).output().unwrap()
}

fn screen(session: &str) -> String {
    String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", session]).stdout).into_owned()
}

/// Kills the tmux session when the test ends, however it ends.
struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}

/// Plays `steps` through Claude Code's interactive CLI in tmux, as a person runs it:
/// one prompt, then every step until none is left, within `bound`. The tmux session is
/// gone when this returns; what the model was asked is in the returned run.
pub async fn interactive(sandbox: &Sandbox, steps: Vec<Step>, bound: Duration) -> Ran {
    interactive_with(sandbox, steps, &[], bound).await
}

/// [`interactive`], with `zidane_args` after `mcp` on zidane's command line.
pub async fn interactive_with(
    sandbox: &Sandbox,
    steps: Vec<Step>,
    zidane_args: &[&str],
    bound: Duration,
) -> Ran {
    let model = ScriptedModel::start(SERVER, steps).await.unwrap();
    drive_with(sandbox, &model, &[], zidane_args, bound, || false).await;
    Ran { model }
}

/// [`interactive`] on a model the caller started and still reads while Claude Code
/// plays it; `more_tools` are allowed without a prompt besides zidane's (`Bash`), and
/// after the last step Claude Code runs on while `linger` holds.
pub async fn drive(
    sandbox: &Sandbox,
    model: &ScriptedModel,
    more_tools: &[&str],
    bound: Duration,
    linger: impl Fn() -> bool,
) {
    drive_with(sandbox, model, more_tools, &[], bound, linger).await;
}

/// [`drive`], with `zidane_args` after `mcp` on zidane's command line.
async fn drive_with(
    sandbox: &Sandbox,
    model: &ScriptedModel,
    more_tools: &[&str],
    zidane_args: &[&str],
    bound: Duration,
    linger: impl Fn() -> bool,
) {
    let root = sandbox.root();
    let home = root.join("home");
    let work = root.join("work");
    let (args, env) = sandbox.zidane_server(zidane_args);
    let config = json!({ "mcpServers": { SERVER: {
        "type": "stdio", "command": BIN, "args": args, "env": env,
    } } });
    let config_path = root.join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    // No first-run dialogs: onboarding done, the folder trusted.
    let settings = json!({
        "hasCompletedOnboarding": true,
        "projects": { work.display().to_string(): { "hasTrustDialogAccepted": true } },
    });
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/.claude.json"), settings.to_string()).unwrap();
    let claude = sandbox.hosts().join("node_modules/.bin/claude");
    let command = format!(
        "env -i PATH={path} HOME={home} CLAUDE_CONFIG_DIR={home}/.claude TERM=xterm-256color \
         ANTHROPIC_BASE_URL={url} ANTHROPIC_API_KEY=sk-ant-scripted DISABLE_TELEMETRY=1 \
         DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 ENABLE_TOOL_SEARCH=false \
         {TOKEN_VAR}={token} {claude} --strict-mcp-config --mcp-config {config} \
         --allowedTools mcp__{SERVER} {more_tools}",
        path = std::env::var("PATH").unwrap_or_default(),
        home = home.display(),
        url = model.url(),
        token = sandbox.token(),
        claude = claude.display(),
        config = config_path.display(),
        more_tools = more_tools.join(" "),
    );
    let session = Session(format!("zidane-{}", sandbox.token()));
    let started = tmux(&[
        "new-session",
        "-d",
        "-s",
        &session.0,
        "-x",
        "200",
        "-y",
        "50",
        "-c",
        &work.display().to_string(),
        &command,
    ]);
    assert!(started.status.success(), "{started:?}");

    let deadline = Instant::now() + bound;
    let mut asked = false;
    while model.remaining() > 0 || linger() {
        let shown = screen(&session.0);
        if shown.contains("Do you want to use this API key?") {
            // The key is the scripted model's: use it.
            tmux(&["send-keys", "-t", &session.0, "Up", "Enter"]);
        } else if shown.contains('❯')
            && (!asked || (model.main_requests().is_empty() && shown.contains("● Done.")))
        {
            // The interactive CLI connects its MCP servers in the background: a prompt
            // sent before zidane's tools are listed is answered without them (the
            // scripted model says `Done.`), so it is asked again.
            tmux(&["send-keys", "-t", &session.0, "C-l"]);
            tmux(&[
                "send-keys",
                "-t",
                &session.0,
                "-l",
                "Run the scripted steps.",
            ]);
            tmux(&["send-keys", "-t", &session.0, "Enter"]);
            asked = true;
        }
        assert!(
            Instant::now() < deadline,
            "Claude Code did not finish the script; the screen:\n{shown}\nrequests:\n{}",
            describe(&model.exchanges())
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    drop(session);
}

/// A sandbox for Claude Code, where Claude Code and tmux are both installed.
fn claude_code_in_tmux() -> Option<Sandbox> {
    let sandbox = Sandbox::new(Host::ClaudeCode)?;
    tmux_present().then_some(sandbox)
}

/// The conversation `request` handed the model, its markup unescaped: in the turn Claude
/// Code started itself when a task ended, the task's `<task-notification>`.
fn woken_conversation(request: &Exchange) -> String {
    request.body["messages"]
        .to_string()
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

/// `conversation` tells `bash_1`'s exit, with code 0, exactly once.
fn assert_bash_1_exited_once(conversation: &str) {
    assert_eq!(
        conversation.matches("<task-id>bash_1</task-id>").count(),
        1,
        "{conversation}"
    );
    assert!(
        conversation.contains("<exit-code>0</exit-code>"),
        "{conversation}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_wakes_the_model_with_the_task_s_notification() {
    let Some(sandbox) = claude_code_in_tmux() else {
        return;
    };
    let steps = vec![
        Step::call(Host::ClaudeCode.call(
            "shell",
            json!({ "command": "sleep 1; echo done", "run_in_background": true }),
        )),
        Step::text("Started; I will hear when it ends."),
        Step::text("It ended."),
    ];
    let ran = interactive(&sandbox, steps, BOUND).await;
    let requests = ran.main_requests();
    // After the start: Claude Code's placeholder, quoting the start text zidane gave it
    // (`_meta["com.anthropic/agent-task"].modelImmediateResponse`).
    let placeholder = super::host::results_in(&requests[1]).join("\n");
    assert!(
        placeholder.contains("started server-side task")
            && placeholder.contains("<mcp-server-note>\nStarted bash_1 (pid "),
        "{placeholder}"
    );
    // The turn Claude Code started itself when the task ended: its own
    // <task-notification> whose result is zidane's, the task's id, exit code and log.
    let last = requests.last().unwrap();
    let conversation = woken_conversation(last);
    println!(
        "Claude Code handed the model: {}",
        last.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    assert_bash_1_exited_once(&conversation);
    let log = sandbox.user_dir().display().to_string();
    assert!(
        conversation.contains(&format!("<output-file>{log}")),
        "{conversation}"
    );
}

/// A foreground command past `--move-after-secs` is answered as a background start is:
/// an MCP task, which Claude Code moves to its own background with zidane's "moved"
/// text as the placeholder, and whose result, the `<task-notification>`, it hands the
/// model when the task ends.
#[tokio::test(flavor = "multi_thread")]
async fn claude_code_takes_a_moved_command_as_a_task() {
    let Some(sandbox) = claude_code_in_tmux() else {
        return;
    };
    let steps = vec![
        Step::call(Host::ClaudeCode.call(
            "shell",
            json!({ "command": "echo start; sleep 3; echo done" }),
        )),
        Step::text("It moved; I will hear when it ends."),
        Step::text("It ended."),
    ];
    let ran = interactive_with(&sandbox, steps, &["--move-after-secs", "1"], BOUND).await;
    let requests = ran.main_requests();
    let placeholder = super::host::results_in(&requests[1]).join("\n");
    assert!(
        placeholder.contains("started server-side task")
            && placeholder.contains("Still running after 1.0s: moved to the background as bash_1"),
        "{placeholder}"
    );
    let conversation = woken_conversation(requests.last().unwrap());
    assert_bash_1_exited_once(&conversation);
}
