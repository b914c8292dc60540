//! `zidane --demo`: the whole interface on a [`ScriptedModel`] with a built-in script —
//! no network, no keys. The script reads the prompt and the tools' results like a model
//! would, and every task it starts ends by itself, so `zidane --demo -p … --wait`
//! finishes.
//!
//! | the prompt mentions | the model |
//! |---|---|
//! | `server` | starts a dev server in the background (it stops by itself after a while; kill it with `ctrl+k`) |
//! | `eight` or `8` | starts eight quiet background tasks (for the idle-CPU measurement) |
//! | `slow` | runs a slow command in the foreground: a tool call in flight, to cancel with `ctrl+k` |
//! | `question` or `interactive` | starts a task in a terminal of its own that asks a question: attach to it from `ctrl+k` to answer |
//! | anything else | starts a short build in the background |
//!
//! When a task ends, the woken model answers the `<task-notification>` with its summary.

use std::sync::Arc;

use serde_json::json;
use zidane::agent::async_trait;
use zidane::agent::{Model, ModelError, ModelRequest, ModelResponse, ScriptStep, ScriptedModel};
use zidane::wire::ContentBlock;

/// The model's name in the footer.
pub const DEMO_MODEL_NAME: &str = "demo (scripted)";

/// The demo's commands, in one shell's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commands {
    /// About 1.5 s of "compiling".
    pub build: &'static str,
    /// A dev server that serves for two minutes, then stops by itself.
    pub dev_server: &'static str,
    /// A foreground command that takes half a minute.
    pub slow: &'static str,
    /// A quiet task that ends by itself after two minutes.
    pub quiet_task: &'static str,
    /// A task that asks a question in its terminal.
    pub interactive: &'static str,
}

/// The commands for a POSIX shell (bash, sh).
pub const POSIX: Commands = Commands {
    build: BUILD,
    dev_server: DEV_SERVER,
    slow: SLOW,
    quiet_task: QUIET_TASK,
    interactive: INTERACTIVE,
};

/// The commands for Windows' `cmd.exe` (`ping` waits a second between its probes).
/// Windows has no terminal tasks: the interactive one is refused, as the model is told.
pub const CMD: Commands = Commands {
    build: "(for /l %n in (1,1,7) do @echo compiling crate-%n) & ping -n 2 127.0.0.1 >nul & echo finished",
    dev_server: "echo listening on :8080 & for /l %n in (1,1,24) do @(ping -n 6 127.0.0.1 >nul & echo GET / 200)",
    slow: "ping -n 31 127.0.0.1 >nul & echo done",
    quiet_task: "ping -n 121 127.0.0.1 >nul",
    interactive: "set /p region=Deploy to which region? [eu/us] & call echo deploying to %region%",
};

/// The commands for PowerShell (`pwsh`, Windows PowerShell).
pub const POWERSHELL: Commands = Commands {
    build: "1..7 | ForEach-Object { \"compiling crate-$_\"; Start-Sleep -Milliseconds 200 }; 'finished'",
    dev_server: "'listening on :8080'; 1..24 | ForEach-Object { Start-Sleep 5; 'GET / 200' }",
    slow: "Start-Sleep 30; 'done'",
    quiet_task: "Start-Sleep 120",
    interactive: "$region = Read-Host 'Deploy to which region? [eu/us]'; \"deploying to $region\"",
};

/// The commands for the shell the `shell` tool says it runs (its description names
/// it): a model writes for the shell it is given.
pub fn commands_for(request: &ModelRequest) -> &'static Commands {
    let shell = request
        .tools
        .iter()
        .find(|tool| tool.name == "shell")
        .map(|tool| tool.description.to_ascii_lowercase())
        .unwrap_or_default();
    let first_line = shell.lines().next().unwrap_or_default();
    if first_line.contains("cmd.exe") {
        &CMD
    } else if first_line.contains("pwsh") || first_line.contains("powershell") {
        &POWERSHELL
    } else {
        &POSIX
    }
}

/// About 1.5 s of "compiling".
pub const BUILD: &str =
    "for n in 1 2 3 4 5 6 7; do echo compiling crate-$n; sleep 0.2; done; echo finished";

/// A dev server that serves for two minutes, then stops by itself.
pub const DEV_SERVER: &str =
    "echo listening on :8080; for n in $(seq 24); do sleep 5; echo GET / 200; done";

/// A foreground command that takes half a minute.
pub const SLOW: &str = "sleep 30; echo done";

/// A quiet task that ends by itself after two minutes.
pub const QUIET_TASK: &str = "sleep 120";

/// A task that asks where to deploy in its terminal, then deploys there (about a
/// second); unanswered, it gives up after two minutes.
pub const INTERACTIVE: &str = "printf 'Deploying 3 services.\\nDeploy to which region? [eu/us] '; \
     read -r -t 120 region || region=nowhere; echo \"deploying to $region\"; \
     for n in 1 2 3; do sleep 0.3; echo \"service $n/3 up\"; done; echo deployed";

/// How many tasks the `eight` prompt starts.
const EIGHT: usize = 8;

/// The demo model and its footer name.
pub fn model() -> (Arc<dyn Model>, String) {
    (Arc::new(Demo::default()), DEMO_MODEL_NAME.to_owned())
}

/// A [`ScriptedModel`] whose script never runs out: each call plays the one reacting
/// step, [`respond`], again.
#[derive(Debug, Default)]
struct Demo {
    script: ScriptedModel,
}

#[async_trait]
impl Model for Demo {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.script.remaining() == 0 {
            self.script.push(ScriptStep::React(Arc::new(respond)));
        }
        self.script.complete(request).await
    }
}

/// One step of the demo model: answer a tool result, a notification, or a prompt.
pub fn respond(request: &ModelRequest) -> ModelResponse {
    let results = request.tool_results();
    if !results.is_empty() {
        return after_tools(&results);
    }
    let ended: Vec<String> = request
        .notifications()
        .iter()
        .map(|notification| format!("{} ended: {}", notification.task_id, notification.summary))
        .collect();
    let prompt = request.prompt();
    if prompt.is_empty() {
        // A wake-up: the turn holds only the notifications.
        return ModelResponse::text(format!(
            "{}\nThe whole log is on disk if you want me to read it.",
            ended.join("\n")
        ));
    }
    let action = act_on(&prompt, commands_for(request));
    if ended.is_empty() {
        return action;
    }
    // Exits that waited (after esc) open the prompt's turn: acknowledge them first.
    let mut content = vec![ContentBlock::Text {
        text: ended.join("\n"),
    }];
    content.extend(action.content);
    ModelResponse {
        content,
        ..ModelResponse::default()
    }
}

/// What the demo does for a prompt.
fn act_on(prompt: &str, commands: &Commands) -> ModelResponse {
    let prompt = prompt.to_lowercase();
    if prompt.contains("slow") {
        ModelResponse::text("Running it in the foreground; this takes a while.").with_tool_use(
            "",
            "shell",
            json!({ "command": commands.slow }),
        )
    } else if prompt.contains("question") || prompt.contains("interactive") {
        ModelResponse::text("Starting it in a terminal of its own: it will ask you something.")
            .with_tool_use(
                "",
                "shell",
                json!({ "command": commands.interactive, "run_in_background": true, "tty": true }),
            )
    } else if prompt.contains("server") {
        ModelResponse::text("Starting the dev server in the background.").with_tool_use(
            "",
            "shell",
            json!({ "command": commands.dev_server, "run_in_background": true }),
        )
    } else if prompt.contains("eight") || prompt.split_whitespace().any(|word| word == "8") {
        (0..EIGHT).fold(
            ModelResponse::text("Starting eight quiet tasks in the background."),
            |response, _| {
                response.with_tool_use(
                    "",
                    "shell",
                    json!({ "command": commands.quiet_task, "run_in_background": true }),
                )
            },
        )
    } else {
        ModelResponse::text("Building in the background.").with_tool_use(
            "",
            "shell",
            json!({ "command": commands.build, "run_in_background": true }),
        )
    }
}

/// The answer after the tools ran: which tasks started, or what a tool said.
fn after_tools(results: &[(&str, &str, bool)]) -> ModelResponse {
    let started: Vec<&str> = results
        .iter()
        .filter_map(|(_, content, _)| content.strip_prefix("Started "))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    if started.is_empty() {
        let first = results
            .first()
            .and_then(|(_, content, _)| content.lines().next())
            .unwrap_or("nothing");
        return ModelResponse::text(format!("The tool said: {first}"));
    }
    ModelResponse::text(format!(
        "{} running in the background; I'm ending my turn and will be told when {} ends.",
        started.join(", "),
        if started.len() == 1 { "it" } else { "each" }
    ))
}

/// Whether a block is text (used by the tests to read the demo's answers).
#[cfg(test)]
fn texts(response: &ModelResponse) -> Vec<&str> {
    response
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use zidane::wire::{Role, Turn};

    fn request(content: Vec<ContentBlock>) -> ModelRequest {
        ModelRequest {
            system: None,
            turns: vec![Turn {
                role: Role::User,
                content,
            }],
            tools: vec![],
        }
    }

    fn prompt(text: &str) -> ModelRequest {
        request(vec![ContentBlock::Text { text: text.into() }])
    }

    /// `prompt` with a `shell` tool that says it runs `path`.
    fn prompt_for_shell(text: &str, path: &str) -> ModelRequest {
        let mut request = prompt(text);
        request.tools = vec![zidane::tools::ToolSpec {
            name: "shell".into(),
            description: format!("Runs a shell command (`{path}`) in the foreground.\nMore."),
            input_schema: json!({ "type": "object" }),
            aliases: Vec::new(),
            ..Default::default()
        }];
        request
    }

    #[test]
    fn the_commands_are_written_for_the_shell_the_tool_names() {
        let cmd = prompt_for_shell("build it", r"C:\Windows\system32\cmd.exe");
        assert_eq!(commands(&respond(&cmd)), [CMD.build]);
        let pwsh = prompt_for_shell(
            "start the server",
            r"C:\Program Files\PowerShell\7\pwsh.exe",
        );
        assert_eq!(commands(&respond(&pwsh)), [POWERSHELL.dev_server]);
        let bash = prompt_for_shell("something slow", "/bin/bash");
        assert_eq!(commands(&respond(&bash)), [POSIX.slow]);
    }

    fn commands(response: &ModelResponse) -> Vec<String> {
        response
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { input, .. } => input["command"].as_str().map(str::to_owned),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_prompt_starts_a_build_a_server_or_eight_tasks() {
        assert_eq!(commands(&respond(&prompt("build it"))), [BUILD]);
        assert_eq!(
            commands(&respond(&prompt("start the dev server"))),
            [DEV_SERVER]
        );
        assert_eq!(
            commands(&respond(&prompt("start eight tasks"))).len(),
            EIGHT
        );
        assert_eq!(commands(&respond(&prompt("something slow"))), [SLOW]);
        assert_eq!(
            commands(&respond(&prompt("ask me a question"))),
            [INTERACTIVE]
        );
    }

    #[test]
    fn started_tasks_end_the_turn() {
        let response = respond(&request(vec![ContentBlock::ToolResult {
            tool_use_id: "call_1".into(),
            content: "Started bash_1 (pid 7). Output: /tmp/x.log".into(),
            is_error: false,
        }]));
        assert!(!response.has_tool_uses());
        assert_eq!(
            texts(&response),
            ["bash_1 running in the background; I'm ending my turn and will be told when it ends."]
        );
    }

    #[test]
    fn the_script_never_runs_out() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (model, _) = model();
        for _ in 0..3 {
            let response = runtime.block_on(model.complete(prompt("build"))).unwrap();
            assert!(response.has_tool_uses());
        }
    }
}
