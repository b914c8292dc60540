//! The MCP hosts `zidane doctor` knows: where each keeps its servers on this machine
//! (under `HOME`, the config directory `XDG_CONFIG_HOME` names, the working directory's
//! project files, and the variables a host moves its home with), what it needs of
//! zidane's entry beyond the command, and the line that adds zidane to it. The formats
//! are those the hosts' own `mcp add` write (`tests/cli/hosts/setup.rs` runs them) and
//! `docs/MCP.md` gives.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::entry::{Format, NeededSettings, Place, Rules, Setting, judge};
use super::expand::Expansion;
use super::finding::{Finding, Status};
use super::here::Here;
use super::jsonc;

/// The shortest `tool_timeout_sec` that does not cut zidane's calls under Codex: zidane
/// keeps `wait_task` under 270 s for Codex, and `docs/MCP.md` asks for at least 300.
const CODEX_MIN_TOOL_TIMEOUT_SECS: u32 = 300;

/// A host whose config files `zidane doctor` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Host {
    ClaudeCode,
    Codex,
    GeminiCli,
    QwenCode,
    Opencode,
    CopilotCli,
    VsCode,
    Cursor,
    ClaudeDesktop,
}

/// Where in a file a host keeps its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Servers {
    /// The object at these keys.
    At(&'static [&'static str]),
    /// Claude Code's `~/.claude.json`: `mcpServers` (the user's) and
    /// `projects.<dir>.mcpServers` (each project's, "local" scope).
    ClaudeUser,
}

/// One config file of a host.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostFile {
    path: PathBuf,
    format: Format,
    servers: Servers,
    /// The project it belongs to, for a project's own file.
    project: Option<PathBuf>,
}

impl HostFile {
    fn user(path: PathBuf, format: Format, servers: Servers) -> Self {
        Self {
            path,
            format,
            servers,
            project: None,
        }
    }
}

impl Host {
    const ALL: [Self; 9] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::GeminiCli,
        Self::QwenCode,
        Self::Opencode,
        Self::CopilotCli,
        Self::VsCode,
        Self::Cursor,
        Self::ClaudeDesktop,
    ];

    /// What the host does with an entry.
    fn rules(self) -> Rules {
        let (check, host, expansion, settings): (_, _, _, NeededSettings) = match self {
            Self::ClaudeCode => (
                "host.claude-code",
                "Claude Code",
                Expansion::Braced,
                nothing,
            ),
            Self::Codex => ("host.codex", "Codex", Expansion::Nothing, codex),
            Self::GeminiCli => ("host.gemini-cli", "Gemini CLI", Expansion::Dollar, gemini),
            Self::QwenCode => ("host.qwen-code", "qwen-code", Expansion::Dollar, qwen),
            Self::Opencode => ("host.opencode", "opencode", Expansion::Nothing, nothing),
            Self::CopilotCli => (
                "host.copilot-cli",
                "Copilot CLI",
                Expansion::Nothing,
                nothing,
            ),
            Self::VsCode => ("host.vscode", "VS Code", Expansion::Editor, nothing),
            Self::Cursor => ("host.cursor", "Cursor", Expansion::Editor, nothing),
            Self::ClaudeDesktop => (
                "host.claude-desktop",
                "Claude Desktop",
                Expansion::Nothing,
                nothing,
            ),
        };
        Rules {
            check,
            host,
            expansion,
            settings,
        }
    }

    /// Where the host keeps servers here: its user file first (where a new entry goes),
    /// then the working directory's project files.
    fn files(self, here: &Here) -> Vec<HostFile> {
        let home = |rest: &str| here.in_home(rest);
        let moved = |var: &str, default: &str| {
            std::env::var_os(var)
                .filter(|dir| !dir.is_empty())
                .map(PathBuf::from)
                .or_else(|| home(default))
        };
        let project = |rest: &str, format, servers| {
            here.cwd.as_ref().map(|cwd| HostFile {
                path: cwd.join(rest),
                format,
                servers,
                project: Some(cwd.clone()),
            })
        };
        let user = |path: Option<PathBuf>, format, servers| {
            path.map(|path| HostFile::user(path, format, servers))
        };
        const MCP_SERVERS: Servers = Servers::At(&["mcpServers"]);
        let files = match self {
            Self::ClaudeCode => vec![
                user(
                    std::env::var_os("CLAUDE_CONFIG_DIR")
                        .filter(|dir| !dir.is_empty())
                        .map(PathBuf::from)
                        .or_else(|| here.home.clone())
                        .map(|dir| dir.join(".claude.json")),
                    Format::Json,
                    Servers::ClaudeUser,
                ),
                project(".mcp.json", Format::Json, MCP_SERVERS),
            ],
            Self::Codex => vec![user(
                moved("CODEX_HOME", ".codex").map(|dir| dir.join("config.toml")),
                Format::Toml,
                Servers::At(&["mcp_servers"]),
            )],
            Self::GeminiCli => vec![user(
                home(".gemini/settings.json"),
                Format::Jsonc,
                MCP_SERVERS,
            )],
            Self::QwenCode => vec![user(
                home(".qwen/settings.json"),
                Format::Jsonc,
                MCP_SERVERS,
            )],
            Self::Opencode => vec![
                user(
                    std::env::var_os("OPENCODE_CONFIG")
                        .filter(|path| !path.is_empty())
                        .map(PathBuf::from),
                    Format::Jsonc,
                    Servers::At(&["mcp"]),
                ),
                user(
                    here.xdg_config
                        .as_ref()
                        .map(|dir| dir.join("opencode/opencode.json")),
                    Format::Jsonc,
                    Servers::At(&["mcp"]),
                ),
            ],
            Self::CopilotCli => vec![user(
                moved("COPILOT_HOME", ".copilot").map(|dir| dir.join("mcp-config.json")),
                Format::Json,
                MCP_SERVERS,
            )],
            Self::VsCode => {
                let user_dir = here.config_dir.as_ref().map(|dir| dir.join("Code/User"));
                vec![
                    user(
                        user_dir.as_ref().map(|dir| dir.join("mcp.json")),
                        Format::Jsonc,
                        Servers::At(&["servers"]),
                    ),
                    user(
                        user_dir.as_ref().map(|dir| dir.join("settings.json")),
                        Format::Jsonc,
                        Servers::At(&["mcp", "servers"]),
                    ),
                    project(".vscode/mcp.json", Format::Jsonc, Servers::At(&["servers"])),
                ]
            }
            Self::Cursor => vec![
                user(home(".cursor/mcp.json"), Format::Jsonc, MCP_SERVERS),
                project(".cursor/mcp.json", Format::Jsonc, MCP_SERVERS),
            ],
            Self::ClaudeDesktop => vec![user(
                here.config_dir
                    .as_ref()
                    .map(|dir| dir.join("Claude/claude_desktop_config.json")),
                Format::Json,
                MCP_SERVERS,
            )],
        };
        files.into_iter().flatten().collect()
    }

    /// The line that adds zidane to the host, its entry in `file` (the user's).
    fn add_line(self, here: &Here, file: &str) -> String {
        let command = here.zidane_command();
        let word = shell_word(&command);
        let quoted = Value::from(command.as_str());
        let entry = |fields: String, servers: &str| {
            format!("in {file}, add \"zidane\": {{{fields}}} to {servers}")
        };
        match self {
            Self::ClaudeCode => format!("claude mcp add --scope user zidane -- {word} mcp"),
            Self::Codex => format!(
                "codex mcp add zidane -- {word} mcp, then set default_tools_approval_mode = \
                 \"approve\" under [mcp_servers.zidane] in {file}"
            ),
            Self::GeminiCli => format!("gemini mcp add --scope user --trust zidane {word} mcp"),
            Self::QwenCode => format!(
                "qwen mcp add --scope user --trust zidane {word} mcp, then set \
                 mcpServers.zidane.alwaysLoadTools to true in {file}"
            ),
            Self::CopilotCli => format!("copilot mcp add zidane -- {word} mcp"),
            // The fields in the order the docs write them.
            Self::Opencode => entry(
                format!("\"type\": \"local\", \"command\": [{quoted}, \"mcp\"]"),
                "mcp",
            ),
            Self::VsCode => entry(
                format!("\"type\": \"stdio\", \"command\": {quoted}, \"args\": [\"mcp\"]"),
                "servers",
            ),
            Self::Cursor | Self::ClaudeDesktop => entry(
                format!("\"command\": {quoted}, \"args\": [\"mcp\"]"),
                "mcpServers",
            ),
        }
    }
}

/// No setting needed beyond the command.
fn nothing(_entry: &Map<String, Value>) -> Vec<Setting> {
    Vec::new()
}

/// Whether `field` of `entry` is `true`.
fn is_true(entry: &Map<String, Value>, field: &str) -> bool {
    entry.get(field) == Some(&Value::Bool(true))
}

/// Gemini CLI runs an untrusted server's tools only after asking, and a headless run
/// asks nobody: it leaves them out.
fn gemini(entry: &Map<String, Value>) -> Vec<Setting> {
    if is_true(entry, "trust") {
        return Vec::new();
    }
    vec![Setting {
        status: Status::Warning,
        problem: "not trusted: `gemini -p` leaves zidane's tools out, and a session asks \
                  before each call"
            .to_owned(),
        field: "trust",
        value: Value::Bool(true),
    }]
}

/// qwen-code asks before an untrusted server's calls, and hides a server's tools behind
/// its own tool search unless `alwaysLoadTools`: then the model is never offered them.
fn qwen(entry: &Map<String, Value>) -> Vec<Setting> {
    let mut settings = Vec::new();
    if !is_true(entry, "alwaysLoadTools") {
        settings.push(Setting {
            status: Status::Broken,
            problem: "no `alwaysLoadTools`: qwen hides zidane's tools behind its tool search, \
                      and the model is never offered them"
                .to_owned(),
            field: "alwaysLoadTools",
            value: Value::Bool(true),
        });
    }
    if !is_true(entry, "trust") {
        settings.push(Setting {
            status: Status::Warning,
            problem: "not trusted: qwen asks before each call".to_owned(),
            field: "trust",
            value: Value::Bool(true),
        });
    }
    settings
}

/// Codex asks before each call of a server whose tools are not approved (and `codex
/// exec`, which asks nobody, fails them), and cuts a call at `tool_timeout_sec`.
fn codex(entry: &Map<String, Value>) -> Vec<Setting> {
    let mut settings = Vec::new();
    if entry
        .get("default_tools_approval_mode")
        .and_then(Value::as_str)
        != Some("approve")
    {
        settings.push(Setting {
            status: Status::Warning,
            problem: "its tools are not approved: Codex asks before every zidane call, and \
                      `codex exec` fails them"
                .to_owned(),
            field: "default_tools_approval_mode",
            value: json!("approve"),
        });
    }
    if let Some(secs) = entry.get("tool_timeout_sec").and_then(Value::as_f64)
        && secs < f64::from(CODEX_MIN_TOOL_TIMEOUT_SECS)
    {
        settings.push(Setting {
            status: Status::Warning,
            problem: format!(
                "`tool_timeout_sec = {secs}` cuts zidane's calls: its waits run to 270 s \
                 under Codex"
            ),
            field: "tool_timeout_sec",
            value: json!(CODEX_MIN_TOOL_TIMEOUT_SECS),
        });
    }
    settings
}

/// `word` as one shell word: as it is when it needs no quoting, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Every host's findings: each zidane entry judged, a host with config files but no
/// zidane entry with the line that adds it, and one line naming the hosts with no config
/// file here.
pub(crate) fn findings(here: &Here) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut absent = Vec::new();
    // A project file can be a user file too (the working directory is the home).
    let mut seen = HashSet::new();
    for host in Host::ALL {
        let rules = host.rules();
        let files: Vec<HostFile> = host
            .files(here)
            .into_iter()
            .filter(|file| seen.insert(file.path.clone()))
            .collect();
        let present: Vec<&HostFile> = files.iter().filter(|file| file.path.is_file()).collect();
        if present.is_empty() {
            absent.push(rules.host);
            continue;
        }
        let before = findings.len();
        for file in &present {
            findings.extend(file_findings(&rules, here, file));
        }
        if findings.len() == before {
            let shown: Vec<String> = present.iter().map(|file| here.show(&file.path)).collect();
            let user = files
                .first()
                .map_or_else(String::new, |file| here.show(&file.path));
            findings.push(
                Finding::new(
                    rules.check,
                    Status::Info,
                    format!("{}: no zidane entry in {}", rules.host, shown.join(", ")),
                )
                .fix(host.add_line(here, &user)),
            );
        }
    }
    if !absent.is_empty() {
        findings.push(Finding::new(
            "hosts",
            Status::Info,
            format!("hosts without a config file here: {}", absent.join(", ")),
        ));
    }
    findings
}

/// The findings of one file: its zidane entries judged, or why it cannot be read.
fn file_findings(rules: &Rules, here: &Here, file: &HostFile) -> Vec<Finding> {
    let shown = here.show(&file.path);
    let value = match read(file) {
        Ok(value) => value,
        Err(error) => {
            return vec![
                Finding::new(
                    rules.check,
                    Status::Warning,
                    format!("{} ({shown}): cannot be read: {error}", rules.host),
                )
                .fix(format!(
                    "repair {shown}: {} cannot read it either",
                    rules.host
                )),
            ];
        }
    };
    let mut findings = Vec::new();
    for (key, servers) in server_tables(&value, file.servers) {
        for (name, entry) in servers {
            let mut key = key.clone();
            key.push(name.clone());
            let place = Place {
                file: shown.clone(),
                format: file.format,
                key,
                project: file.project.clone(),
            };
            findings.extend(
                judge(rules, here, &place, name, entry)
                    .into_iter()
                    .flatten(),
            );
        }
    }
    findings
}

/// A config file's content as JSON, whatever its format.
fn read(file: &HostFile) -> Result<Value, String> {
    let text = std::fs::read_to_string(&file.path).map_err(|error| error.to_string())?;
    match file.format {
        Format::Json => serde_json::from_str(&text).map_err(|error| error.to_string()),
        Format::Jsonc => {
            serde_json::from_str(&jsonc::strip(&text)).map_err(|error| error.to_string())
        }
        Format::Toml => {
            let table: toml::Table = text
                .parse()
                .map_err(|error: toml::de::Error| error.to_string())?;
            serde_json::to_value(table).map_err(|error| error.to_string())
        }
    }
}

/// The tables of servers in a file's content, each with the keys that lead to it.
fn server_tables(value: &Value, servers: Servers) -> Vec<(Vec<String>, &Map<String, Value>)> {
    let at = |keys: &[&str]| -> Option<&Map<String, Value>> {
        keys.iter()
            .try_fold(value, |value, key| value.get(key))?
            .as_object()
    };
    let owned = |keys: &[&str]| keys.iter().map(|key| (*key).to_owned()).collect::<Vec<_>>();
    match servers {
        Servers::At(keys) => at(keys)
            .map(|table| (owned(keys), table))
            .into_iter()
            .collect(),
        Servers::ClaudeUser => {
            let mut tables: Vec<_> = at(&["mcpServers"])
                .map(|table| (owned(&["mcpServers"]), table))
                .into_iter()
                .collect();
            let projects = at(&["projects"]).into_iter().flatten();
            for (dir, project) in projects {
                if let Some(table) = project.get("mcpServers").and_then(Value::as_object) {
                    let keys = vec!["projects".to_owned(), dir.clone(), "mcpServers".to_owned()];
                    tables.push((keys, table));
                }
            }
            tables
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_file_holds_the_users_and_each_projects_servers() {
        let value = json!({
            "mcpServers": { "zidane": { "command": "zidane", "args": ["mcp"] } },
            "projects": {
                "/work/app": { "mcpServers": { "z": { "command": "zidane" } } },
                "/work/other": { "allowedTools": [] },
            },
        });
        let tables = server_tables(&value, Servers::ClaudeUser);
        let keys: Vec<&Vec<String>> = tables.iter().map(|(keys, _)| keys).collect();
        assert_eq!(
            keys,
            [
                &vec!["mcpServers".to_owned()],
                &vec![
                    "projects".to_owned(),
                    "/work/app".to_owned(),
                    "mcpServers".to_owned()
                ],
            ]
        );
        assert!(server_tables(&json!({"mcp": 1}), Servers::At(&["mcp"])).is_empty());
    }

    #[test]
    fn each_hosts_needs_are_its_own() {
        let entry = |value: Value| value.as_object().unwrap().clone();
        assert!(gemini(&entry(json!({"trust": true}))).is_empty());
        assert_eq!(gemini(&entry(json!({})))[0].field, "trust");
        let missing: Vec<&str> = qwen(&entry(json!({"trust": true})))
            .iter()
            .map(|setting| setting.field)
            .collect();
        assert_eq!(missing, ["alwaysLoadTools"]);
        assert_eq!(qwen(&entry(json!({})))[0].status, Status::Broken);
        let approved = entry(json!({"default_tools_approval_mode": "approve"}));
        assert!(codex(&approved).is_empty());
        let short =
            entry(json!({"default_tools_approval_mode": "approve", "tool_timeout_sec": 60}));
        assert_eq!(codex(&short)[0].value, json!(300));
    }

    #[test]
    fn a_command_with_spaces_is_quoted_for_the_shell() {
        assert_eq!(shell_word("/usr/bin/zidane"), "/usr/bin/zidane");
        assert_eq!(shell_word("/opt/my tools/zidane"), "'/opt/my tools/zidane'");
        assert_eq!(shell_word("/it's/zidane"), "'/it'\\''s/zidane'");
    }
}
