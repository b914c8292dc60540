//! Running a real host: where the installed hosts are, a sandbox of temp dirs (home,
//! config, zidane's user dir), the host's configuration pointing at the scripted model
//! and at `zidane mcp`, and a bounded run that leaves no process behind.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;
use zidane_test_support::{
    Exchange, ScriptedModel, Step, TokenCleanup, ToolCall, tool_results, unique_token,
};

/// Where xtask says the hosts are installed (an npm prefix).
pub const HOSTS_ENV: &str = "ZIDANE_MCP_HOSTS";

/// Every process of a run carries `TOKEN_VAR=<token>`: the host, `zidane mcp` (given
/// it in its configured environment) and the tasks zidane starts. Found by it, nothing
/// is left behind, and a test can tell its own processes from any other. Its name is
/// not one a task's environment policy withholds (no `TOKEN`, `KEY`, `SECRET`), so the
/// tasks inherit it.
pub const TOKEN_VAR: &str = "ZIDANE_HOSTS_TEST_MARK";

/// The MCP server's name in each host's configuration: tools are `mcp__zidane__…`.
pub const SERVER: &str = "zidane";

/// Longest one host run may take, from start to exit.
pub const HOST_WAIT: Duration = Duration::from_secs(90);

/// Longest a test waits for a process to be gone.
pub const GONE_WAIT: Duration = Duration::from_secs(10);

pub use crate::mcp_support::BIN;
use crate::support::NO_SWEEP;

/// A host under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code (`@anthropic-ai/claude-code`), `claude -p`, on the Messages API.
    ClaudeCode,
    /// Codex (`@openai/codex`), `codex exec`, on the Responses API.
    Codex,
    /// opencode (`opencode-ai`), `opencode run`, on Chat Completions through a custom
    /// OpenAI-compatible provider.
    Opencode,
    /// GitHub Copilot CLI (`@github/copilot`), `copilot -p`, on Chat Completions through
    /// its own-provider (BYOK) mode, offline.
    CopilotCli,
    /// Gemini CLI (`@google/gemini-cli`), `gemini -p`, on the Gemini API.
    GeminiCli,
    /// qwen-code (`@qwen-code/qwen-code`), `qwen -p`, on Chat Completions as an
    /// OpenAI-compatible provider.
    QwenCode,
}

impl Host {
    /// The host's binary under `node_modules/.bin`.
    fn bin(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::Opencode => "opencode",
            Self::CopilotCli => "copilot",
            Self::GeminiCli => "gemini",
            Self::QwenCode => "qwen",
        }
    }

    /// A call of one of zidane's tools, named as the host lists it to the model:
    /// Claude Code prefixes `mcp__<server>__`; Codex puts a server's tools in a
    /// namespace `mcp__<server>` (a Responses API `namespace` tool) under their own names;
    /// opencode prefixes `<server>_`, Copilot CLI `<server>-`; Gemini CLI prefixes
    /// `mcp_<server>_`, qwen-code `mcp__<server>__`.
    ///
    /// Gemini CLI adds a `wait_for_previous` flag to every tool's schema and its system
    /// prompt tells the model to set it on a call that depends on an earlier one; each
    /// scripted call depends on the one before, so each carries it, and Gemini CLI passes
    /// it on to the server with the call's own arguments.
    pub fn call(self, tool: &str, arguments: Value) -> ToolCall {
        match self {
            Self::ClaudeCode => ToolCall {
                name: format!("mcp__{SERVER}__{tool}"),
                namespace: None,
                arguments,
            },
            Self::Codex => ToolCall {
                name: tool.to_owned(),
                namespace: Some(format!("mcp__{SERVER}")),
                arguments,
            },
            Self::Opencode => ToolCall {
                name: format!("{SERVER}_{tool}"),
                namespace: None,
                arguments,
            },
            Self::CopilotCli => ToolCall {
                name: format!("{SERVER}-{tool}"),
                namespace: None,
                arguments,
            },
            Self::GeminiCli => {
                let mut arguments = arguments;
                arguments["wait_for_previous"] = Value::Bool(true);
                ToolCall {
                    name: format!("mcp_{SERVER}_{tool}"),
                    namespace: None,
                    arguments,
                }
            }
            Self::QwenCode => ToolCall {
                name: format!("mcp__{SERVER}__{tool}"),
                namespace: None,
                arguments,
            },
        }
    }
}

/// The installed hosts' npm prefix, or `None` (with the reason printed) when they are
/// not installed outside CI. Under CI a missing install fails the test.
pub fn hosts_dir() -> Option<PathBuf> {
    let dir = std::env::var_os(HOSTS_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-hosts")
        });
    let bins = [
        "claude",
        "codex",
        "opencode",
        "copilot",
        "gemini",
        "qwen",
        "mcp-inspector-cli",
    ];
    if bins
        .iter()
        .all(|bin| dir.join("node_modules/.bin").join(bin).exists())
    {
        return Some(dir);
    }
    let reason = format!(
        "no MCP hosts at {} (run `cargo xtask hosts`, or set {HOSTS_ENV})",
        dir.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
    eprintln!("skipped: {reason}");
    None
}

/// The temp dirs of one host run and the token its processes carry; dropping it kills
/// whatever still carries the token and removes the dirs.
pub struct Sandbox {
    pub host: Host,
    hosts: PathBuf,
    /// Codex's own sandbox (`codex exec -s <mode>`); `None`: Codex's default.
    codex_sandbox: Option<&'static str>,
    /// More variables for `zidane mcp`'s environment, set through the host's MCP
    /// server configuration.
    server_env: Vec<(String, String)>,
    // Declared before `dir`: the processes die before their dirs go.
    cleanup: TokenCleanup,
    dir: tempfile::TempDir,
}

/// What one run gave: the model's side of it.
pub struct Ran {
    pub model: ScriptedModel,
}

impl Sandbox {
    /// A sandbox for `host`, or `None` when the hosts are not installed (see [`hosts_dir`]).
    pub fn new(host: Host) -> Option<Self> {
        Self::in_dir(host, tempfile::tempdir().unwrap())
    }

    /// A sandbox outside the temp directories (under cargo's target dir), for a test of
    /// what a sandboxed command may write: every sandbox lets a command write `/tmp`.
    pub fn outside_temp(host: Host) -> Option<Self> {
        Self::in_dir(
            host,
            tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap(),
        )
    }

    fn in_dir(host: Host, dir: tempfile::TempDir) -> Option<Self> {
        let hosts = hosts_dir()?;
        for sub in ["home", "work", "user", "codex"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        Some(Self {
            host,
            hosts,
            codex_sandbox: None,
            server_env: Vec::new(),
            cleanup: TokenCleanup::new(TOKEN_VAR, unique_token("hosts")),
            dir,
        })
    }

    /// Runs Codex with its own sandbox in `mode` (`read-only`, `workspace-write`,
    /// `danger-full-access`), which it tells zidane on every call.
    #[must_use]
    pub fn codex_sandbox(mut self, mode: &'static str) -> Self {
        self.codex_sandbox = Some(mode);
        self
    }

    /// Sets `name=value` in `zidane mcp`'s environment, through the host's MCP server
    /// configuration (as the token and the user dir are).
    #[must_use]
    pub fn server_env(mut self, name: &str, value: &str) -> Self {
        self.server_env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// zidane's user dir: `sessions/<id>/tasks/` holds the task logs.
    pub fn user_dir(&self) -> PathBuf {
        self.dir.path().join("user")
    }

    /// The token every process of the run carries.
    pub fn token(&self) -> &str {
        self.cleanup.token()
    }

    /// The root of the sandbox: `home/`, `work/`, `user/`.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The installed hosts' npm prefix.
    pub fn hosts(&self) -> &Path {
        &self.hosts
    }

    /// The live processes of this run.
    pub fn processes(&self) -> Vec<u32> {
        zidane_test_support::processes_with_env(TOKEN_VAR, self.token())
    }

    /// Runs the host on `steps` (one prompt, non-interactive) until it exits, bounded
    /// by [`HOST_WAIT`]; `zidane_args` follow `mcp` on zidane's command line.
    pub async fn run(&self, steps: Vec<Step>, zidane_args: &[&str]) -> Ran {
        self.run_within(HOST_WAIT, steps, zidane_args).await
    }

    /// [`Sandbox::run`], bounded by `bound`.
    pub async fn run_within(&self, bound: Duration, steps: Vec<Step>, zidane_args: &[&str]) -> Ran {
        let model = ScriptedModel::start(SERVER, steps).await.unwrap();
        let mut command = self.command(&model.url(), zidane_args);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = command.spawn().unwrap();
        let output = match tokio::time::timeout(bound, child.wait_with_output()).await {
            Ok(output) => output.unwrap(),
            Err(_) => panic!(
                "{:?} did not exit within {bound:?}; the model was asked {} times:\n{}",
                self.host,
                model.exchanges().len(),
                describe(&model.exchanges())
            ),
        };
        assert!(
            output.status.success(),
            "{:?} failed ({}):\nstdout: {}\nstderr: {}\nrequests:\n{}",
            self.host,
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            describe(&model.exchanges())
        );
        Ran { model }
    }

    /// `zidane mcp` as the host launches it, `zidane_args` after `mcp`: its arguments
    /// and its environment (see [`Sandbox::run`]).
    pub fn zidane_server(&self, zidane_args: &[&str]) -> (Vec<String>, Value) {
        let args = std::iter::once("mcp")
            .chain(zidane_args.iter().copied())
            .map(str::to_owned)
            .collect();
        let mut env = json!({
            "ZIDANE_USER_DIR": self.user_dir(),
            TOKEN_VAR: self.token(),
            (NO_SWEEP.0): NO_SWEEP.1,
        });
        for (name, value) in &self.server_env {
            env[name] = Value::String(value.clone());
        }
        (args, env)
    }

    fn command(&self, model_url: &str, zidane_args: &[&str]) -> Command {
        let root = self.dir.path();
        let home = root.join("home");
        let mut command = Command::new(self.hosts.join("node_modules/.bin").join(self.host.bin()));
        // Nothing of the machine's own configuration (keys, base URLs, a logged-in
        // account) reaches the host.
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env(TOKEN_VAR, self.token())
            .current_dir(root.join("work"));
        let (args, env) = self.zidane_server(zidane_args);
        let prompt = "Run the scripted steps.";
        match self.host {
            Host::ClaudeCode => {
                let config = json!({ "mcpServers": { SERVER: {
                    "type": "stdio", "command": BIN, "args": args, "env": env,
                } } });
                let config_path = root.join("mcp.json");
                std::fs::write(&config_path, config.to_string()).unwrap();
                command
                    .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
                    .env("ANTHROPIC_BASE_URL", model_url)
                    .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("DISABLE_ERROR_REPORTING", "1")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    // By default an MCP server's tools are deferred behind `ToolSearch`
                    // (listed by name in the system prompt, loaded on demand); this
                    // lists them as tools, so the script calls them at once. What a
                    // tool result looks like to the model is the same either way.
                    .env("ENABLE_TOOL_SEARCH", "false")
                    .args(["-p", prompt, "--strict-mcp-config", "--mcp-config"])
                    .arg(&config_path)
                    // Every tool of the server, without a permission prompt.
                    .args(["--allowedTools", &format!("mcp__{SERVER}")]);
            }
            Host::Codex => {
                let codex_home = root.join("codex");
                std::fs::write(
                    codex_home.join("config.toml"),
                    codex_config(model_url, &args, &env),
                )
                .unwrap();
                command
                    .env("CODEX_HOME", &codex_home)
                    .args(["exec", "--skip-git-repo-check"]);
                if let Some(mode) = self.codex_sandbox {
                    command.args(["--sandbox", mode]);
                }
                command.arg(prompt);
            }
            Host::Opencode => {
                let config_path = root.join("opencode.json");
                std::fs::write(
                    &config_path,
                    opencode_config(model_url, &args, &env).to_string(),
                )
                .unwrap();
                command
                    .env("OPENCODE_CONFIG", &config_path)
                    // Only that file: no opencode.json from a directory above the sandbox.
                    .env("OPENCODE_DISABLE_PROJECT_CONFIG", "1")
                    .env("XDG_DATA_HOME", home.join(".local/share"))
                    .env("XDG_STATE_HOME", home.join(".local/state"))
                    .env("XDG_CACHE_HOME", home.join(".cache"))
                    // No models.dev catalog: the configured provider is the only one.
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("OPENCODE_DISABLE_SHARE", "1")
                    // At start opencode installs its plugin package from npm into its
                    // config dir, in the background; offline, npm fails at once and
                    // opencode only logs it.
                    .env("npm_config_offline", "true")
                    .args(["run", prompt]);
            }
            Host::CopilotCli => {
                let config = json!({ "mcpServers": { SERVER: {
                    "type": "stdio", "command": BIN, "args": args, "env": env, "tools": ["*"],
                } } });
                let config_path = root.join("copilot-mcp.json");
                std::fs::write(&config_path, config.to_string()).unwrap();
                command
                    // The npm bin unpacks its native package (about 235 MB) into this
                    // cache on a first run: one cache for every sandbox, not a copy in
                    // each. It unpacks under a temporary name and renames, so parallel
                    // runs share it safely.
                    .env("COPILOT_PKG_CACHE_HOME", self.hosts.join("copilot-cache"))
                    // No GitHub sign-in, telemetry, web tools or update checks; the model
                    // is the provider below, on Chat Completions (the default wire API).
                    .env("COPILOT_OFFLINE", "true")
                    .env("COPILOT_PROVIDER_BASE_URL", format!("{model_url}/v1"))
                    .env("COPILOT_PROVIDER_API_KEY", "sk-scripted")
                    .env("COPILOT_MODEL", "scripted")
                    // Every tool without a permission prompt, as `-p` requires.
                    .args(["-p", prompt, "--allow-all-tools", "--additional-mcp-config"])
                    .arg(format!("@{}", config_path.display()));
            }
            Host::GeminiCli => {
                let dir = home.join(".gemini");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("settings.json"),
                    gemini_settings(&args, &env).to_string(),
                )
                .unwrap();
                command
                    // The SDK appends `/v1beta/models/<model>:<method>`.
                    .env("GOOGLE_GEMINI_BASE_URL", model_url)
                    .env("GEMINI_API_KEY", "scripted")
                    // Headless, it refuses an untrusted folder; in a trusted one a server
                    // marked `trust` runs its tools without a confirmation.
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    // A named model: the default ("auto") first asks a classifier model
                    // to route the prompt, which the script does not play.
                    .args(["-p", prompt, "--model", "gemini-2.5-pro"]);
            }
            Host::QwenCode => {
                let dir = home.join(".qwen");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("settings.json"),
                    qwen_settings(&args, &env).to_string(),
                )
                .unwrap();
                command
                    .env("OPENAI_BASE_URL", format!("{model_url}/v1"))
                    .env("OPENAI_API_KEY", "sk-scripted")
                    .env("OPENAI_MODEL", "scripted")
                    .args(["-p", prompt]);
            }
        }
        command
    }
}

/// Codex's `config.toml`: the scripted model as the provider, on the Responses API,
/// and zidane as an MCP server whose tools need no approval (`codex exec` runs with
/// approvals off, so a tool needing one would fail).
fn codex_config(model_url: &str, args: &[String], env: &Value) -> String {
    let quote = |text: &str| serde_json::to_string(text).unwrap();
    let args: Vec<String> = args.iter().map(|arg| quote(arg)).collect();
    let env: Vec<String> = env
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, value)| format!("{key} = {}", quote(value.as_str().unwrap())))
        .collect();
    format!(
        "model = \"scripted\"\n\
         model_provider = \"scripted\"\n\
         \n\
         [model_providers.scripted]\n\
         name = \"scripted\"\n\
         base_url = {base_url}\n\
         wire_api = \"responses\"\n\
         \n\
         [mcp_servers.{SERVER}]\n\
         command = {bin}\n\
         args = [{args}]\n\
         default_tools_approval_mode = \"approve\"\n\
         env = {{ {env} }}\n",
        base_url = quote(&format!("{model_url}/v1")),
        bin = quote(BIN),
        args = args.join(", "),
        env = env.join(", "),
    )
}

/// opencode's configuration: the scripted model as a custom OpenAI-compatible provider
/// (Chat Completions) and zidane as a local MCP server, its command line one array.
/// opencode lets MCP tools run without asking.
fn opencode_config(model_url: &str, args: &[String], env: &Value) -> Value {
    let command: Vec<&str> = std::iter::once(BIN)
        .chain(args.iter().map(String::as_str))
        .collect();
    json!({
        "model": "scripted/scripted",
        "autoupdate": false,
        "share": "disabled",
        "provider": { "scripted": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "scripted",
            "options": { "baseURL": format!("{model_url}/v1"), "apiKey": "sk-scripted" },
            "models": { "scripted": { "name": "scripted" } },
        } },
        "mcp": { SERVER: { "type": "local", "command": command, "environment": env } },
    })
}

/// Gemini CLI's `settings.json`: an API key (from the environment) against the base URL
/// the environment names, no telemetry or update checks, and zidane as a trusted MCP
/// server (a server not trusted offers no tools at all in a headless run).
fn gemini_settings(args: &[String], env: &Value) -> Value {
    json!({
        "security": { "auth": { "selectedType": "gemini-api-key" } },
        "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "mcpServers": { SERVER: {
            "command": BIN, "args": args, "env": env, "trust": true,
        } },
    })
}

/// qwen-code's `settings.json`: the OpenAI-compatible provider the environment names, no
/// telemetry or update checks, and zidane as a trusted MCP server (no confirmation)
/// whose tools are always listed (by default they hide behind qwen's `tool_search`).
fn qwen_settings(args: &[String], env: &Value) -> Value {
    json!({
        "security": { "auth": { "selectedType": "openai" } },
        "general": { "enableAutoUpdate": false },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "mcpServers": { SERVER: {
            "command": BIN, "args": args, "env": env, "trust": true, "alwaysLoadTools": true,
        } },
    })
}

impl Ran {
    /// The requests of the main conversation.
    pub fn main_requests(&self) -> Vec<Exchange> {
        self.model.main_requests()
    }

    /// Every tool result the model was shown, as the last request of the conversation
    /// shows them (each request carries the whole conversation so far).
    pub fn results(&self) -> Vec<String> {
        self.main_requests()
            .last()
            .map(|last| tool_results(&last.body))
            .unwrap_or_default()
    }

    /// The result of step `step`'s call as the very next request showed it: its
    /// newest tool result.
    pub fn result_of_step(&self, step: usize) -> String {
        let requests = self.main_requests();
        requests
            .get(step + 1)
            .and_then(|next| tool_results(&next.body).pop())
            .unwrap_or_else(|| panic!("no result after step {step}:\n{}", describe(&requests)))
    }

    /// The time from step `step`'s answer (the model's tool call) to the next main
    /// request (the call's result): the host's round trip through the tool.
    pub fn round_trip(&self, step: usize) -> Duration {
        let requests = self.main_requests();
        let answered = requests[step].answered;
        requests[step + 1].received.duration_since(answered)
    }
}

/// A compact listing of requests for a failure message: path, whether main, and the
/// tool results each showed.
pub fn describe(exchanges: &[Exchange]) -> String {
    exchanges
        .iter()
        .map(|e| {
            let results = tool_results(&e.body);
            format!(
                "{} {} main={} step={:?} results={results:#?}",
                e.method, e.path, e.main, e.step
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path under `user_dir` ending in `.log` in `text`: a task's log path as a
/// result gave it.
pub fn log_path_in(text: &str, user_dir: &Path) -> Option<String> {
    let prefix = user_dir.to_str()?;
    let start = text.find(prefix)?;
    let end = text[start..].find(".log")? + start + ".log".len();
    Some(text[start..end].to_owned())
}

/// Whether a live process carrying `TOKEN_VAR=token` has `needle` in its command line.
pub fn carrier_runs(token: &str, needle: &str) -> bool {
    zidane_test_support::processes_with_env(TOKEN_VAR, token)
        .into_iter()
        .any(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                String::from_utf8_lossy(&cmdline)
                    .replace('\0', " ")
                    .contains(needle)
            })
        })
}

/// The tool results one request showed the model.
pub fn results_in(exchange: &Exchange) -> Vec<String> {
    tool_results(&exchange.body)
}
