//! One server entry of a host's config file, judged: is it zidane's (its command is
//! `zidane`, a path ending in `zidane`, or `npx … zidane-mcp`), and would the host start
//! it — the command found as the host finds it, without a shell, the arguments `mcp`
//! and what `zidane mcp` accepts, the settings the host needs — each problem a finding
//! with the line that fixes it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::expand::{Expansion, expand, shell_expanded};
use super::finding::{Finding, Status};
use super::here::{Here, is_executable};
use crate::mcp::check_args;

/// The file formats hosts keep their servers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// JSON.
    Json,
    /// JSON with comments and trailing commas (VS Code, Cursor, opencode, Gemini CLI,
    /// qwen-code).
    Jsonc,
    /// TOML (Codex).
    Toml,
}

/// A setting a host needs in zidane's entry, not found there.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// How much its absence matters.
    pub(crate) status: Status,
    /// What goes wrong without it.
    pub(crate) problem: String,
    /// The entry's field to set.
    pub(crate) field: &'static str,
    /// The value to set it to.
    pub(crate) value: Value,
}

/// The settings a host needs that an entry lacks.
pub(crate) type NeededSettings = fn(&Map<String, Value>) -> Vec<Setting>;

/// What a host does with an entry: its finding's name, its name for a person, what it
/// expands in a command, and the settings it needs of an entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// The finding's `check`: `host.<id>`.
    pub(crate) check: &'static str,
    /// The host's name: `Gemini CLI`.
    pub(crate) host: &'static str,
    /// What it substitutes in a command.
    pub(crate) expansion: Expansion,
    /// The settings an entry of zidane's lacks.
    pub(crate) settings: NeededSettings,
}

/// Where an entry is: its file as a person reads it, the file's format, the keys that
/// lead to the entry (the server's name last), and the project a project file belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The file, `~/…` under the home directory.
    pub(crate) file: String,
    /// Its format.
    pub(crate) format: Format,
    /// The keys to the entry: `["mcpServers", "zidane"]`.
    pub(crate) key: Vec<String>,
    /// The project directory of a project's file (`${workspaceFolder}`).
    pub(crate) project: Option<PathBuf>,
}

impl Place {
    /// The entry as a person finds it: `~/.gemini/settings.json mcpServers.zidane`, or
    /// `~/.codex/config.toml [mcp_servers.zidane]`.
    pub(crate) fn shown(&self) -> String {
        format!("{} {}", self.file, self.key_shown())
    }

    fn key_shown(&self) -> String {
        match self.format {
            Format::Toml => format!(
                "[{}]",
                self.key
                    .iter()
                    .map(|key| toml_key(key))
                    .collect::<Vec<_>>()
                    .join(".")
            ),
            Format::Json | Format::Jsonc => json_path(&self.key),
        }
    }

    /// The line that sets `field` of the entry to `value`.
    pub(crate) fn set(&self, field: &str, value: &Value) -> String {
        match self.format {
            Format::Toml => format!(
                "in {}, set {} = {} under {}",
                self.file,
                toml_key(field),
                inline(value),
                self.key_shown()
            ),
            Format::Json | Format::Jsonc => {
                let mut key = self.key.clone();
                key.push(field.to_owned());
                format!(
                    "in {}, set {} to {}",
                    self.file,
                    json_path(&key),
                    inline(value)
                )
            }
        }
    }
}

/// `value` on one line as people write it: `["mcp", "--sandbox", "off"]`. Its text is
/// JSON, and TOML too for the strings, numbers, booleans and lists a fix sets.
pub(crate) fn inline(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(fields) => format!(
            "{{{}}}",
            fields
                .iter()
                .map(|(key, value)| format!("{}: {}", Value::from(key.as_str()), inline(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        scalar => scalar.to_string(),
    }
}

/// Keys as a path: `mcpServers.zidane`, `projects["/home/ada/app"].mcpServers.zidane`.
fn json_path(keys: &[String]) -> String {
    let mut out = String::new();
    for key in keys {
        if is_bare(key) {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(key);
        } else {
            out.push_str(&format!("[{}]", Value::from(key.as_str())));
        }
    }
    out
}

/// A TOML key: bare where it can be, else quoted.
fn toml_key(key: &str) -> String {
    if is_bare(key) {
        key.to_owned()
    } else {
        Value::from(key).to_string()
    }
}

fn is_bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// How an entry gives its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `command` a string, `args` a list (most hosts).
    Split,
    /// `command` one list, program first (opencode).
    Joined,
}

/// An entry's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    shape: Shape,
    program: String,
    args: Vec<String>,
}

impl Line {
    /// The command line of an entry; `None` when it gives none (or not as text).
    fn of(entry: &Map<String, Value>) -> Option<Self> {
        let strings = |value: &Value| -> Option<Vec<String>> {
            value
                .as_array()?
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect()
        };
        match entry.get("command")? {
            Value::String(program) => Some(Self {
                shape: Shape::Split,
                program: program.clone(),
                args: match entry.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(args) => strings(args)?,
                },
            }),
            joined @ Value::Array(_) => {
                let mut words = strings(joined)?.into_iter();
                Some(Self {
                    shape: Shape::Joined,
                    program: words.next()?,
                    args: words.collect(),
                })
            }
            _ => None,
        }
    }

    /// Where zidane's own arguments start: 0 for `zidane …`, past the package for
    /// `npx [-y] zidane-mcp …` (and `npx -p zidane-mcp zidane …`); `None`: not zidane.
    fn zidane_args_at(&self) -> Option<usize> {
        let program = program_name(&self.program);
        if program == "zidane" {
            return Some(0);
        }
        if !matches!(program, "npx" | "bunx" | "pnpx") {
            return None;
        }
        let at = self
            .args
            .iter()
            .position(|arg| arg == "zidane-mcp" || arg.starts_with("zidane-mcp@"))?;
        let by_flag = at > 0 && matches!(self.args[at - 1].as_str(), "-p" | "--package");
        let bin_next = self.args.get(at + 1).is_some_and(|arg| arg == "zidane");
        Some(if by_flag && bin_next { at + 2 } else { at + 1 })
    }

    /// The line with its program and arguments as given, in its own shape: what a fix
    /// sets.
    fn with(&self, program: &str, args: Vec<String>) -> Self {
        Self {
            shape: self.shape,
            program: program.to_owned(),
            args,
        }
    }

    /// The line that sets this line to `new` in the entry at `place`.
    fn set(&self, new: &Self, place: &Place) -> String {
        match self.shape {
            Shape::Joined => {
                let words: Vec<&str> = std::iter::once(new.program.as_str())
                    .chain(new.args.iter().map(String::as_str))
                    .collect();
                place.set("command", &json!(words))
            }
            Shape::Split if self.program != new.program && self.args != new.args => format!(
                "{}, and args to {}",
                place.set("command", &json!(new.program)),
                inline(&json!(new.args))
            ),
            Shape::Split if self.program != new.program => {
                place.set("command", &json!(new.program))
            }
            Shape::Split => place.set("args", &json!(new.args)),
        }
    }
}

/// A program's own name: its file name, without `.exe` or `.cmd`.
fn program_name(program: &str) -> &str {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name.strip_suffix(".exe")
        .or_else(|| name.strip_suffix(".cmd"))
        .unwrap_or(name)
}

/// The findings of the entry `name` = `value` at `place` of a host with `rules`; `None`
/// when it is not zidane's.
pub(crate) fn judge(
    rules: &Rules,
    here: &Here,
    place: &Place,
    name: &str,
    value: &Value,
) -> Option<Vec<Finding>> {
    let named_zidane = name.to_ascii_lowercase().contains("zidane");
    let say = |status: Status, what: String| {
        Finding::new(
            rules.check,
            status,
            format!("{} ({}): {what}", rules.host, place.shown()),
        )
    };
    let Some(entry) = value.as_object() else {
        return named_zidane.then(|| {
            vec![say(
                Status::Broken,
                "not an object: the host cannot read it".to_owned(),
            )]
        });
    };
    let Some(line) = Line::of(entry) else {
        let url = ["url", "httpUrl", "serverUrl"]
            .iter()
            .find_map(|key| entry.get(*key)?.as_str());
        return named_zidane.then(|| match url {
            Some(url) => vec![say(
                Status::Ok,
                format!("over HTTP at {url} (a server you start; doctor connects to nothing)"),
            )],
            None => vec![say(
                Status::Broken,
                "no command the host can run: `command` must be text (and `args` a list of text)"
                    .to_owned(),
            )],
        });
    };
    let Some(at) = line.zidane_args_at() else {
        return named_zidane.then(|| {
            vec![say(
                Status::Info,
                format!(
                    "runs `{}`, not zidane itself (a wrapper?): not checked",
                    line.program
                ),
            )]
        });
    };
    let mut findings = Vec::new();
    let program = judge_program(rules, here, place, &line, at);
    if let Err((status, what, fix)) = &program {
        findings.push(say(*status, what.clone()).fix(fix.clone()));
    }
    if let Some((what, fix)) = judge_args(&line, at, place) {
        findings.push(say(Status::Broken, what).fix(fix));
    }
    for setting in (rules.settings)(entry) {
        let fix = place.set(setting.field, &setting.value);
        findings.push(say(setting.status, setting.problem).fix(fix));
    }
    if entry.get("enabled") == Some(&Value::Bool(false)) {
        findings.push(
            say(
                Status::Info,
                "disabled: the host does not start it".to_owned(),
            )
            .fix(place.set("enabled", &Value::Bool(true))),
        );
    }
    if findings.is_empty()
        && let Ok(found) = program
    {
        let words = std::iter::once("zidane")
            .chain(line.args[at..].iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        findings.push(say(
            Status::Ok,
            format!("runs `{words}` ({})", here.show(&found)),
        ));
    }
    Some(findings)
}

/// A problem with an entry: how bad, what, the line that fixes it.
type Problem = (Status, String, String);

/// The program the host would start, found as it finds it; else what is wrong.
fn judge_program(
    rules: &Rules,
    here: &Here,
    place: &Place,
    line: &Line,
    at: usize,
) -> Result<PathBuf, Problem> {
    let expanded = expand(
        rules.expansion,
        &line.program,
        here,
        place.project.as_deref(),
    );
    // What to run instead: zidane itself, its arguments kept.
    let to_zidane = |program: &str| {
        let args = line.args[at..].to_vec();
        line.set(&line.with(program, args), place)
    };
    let with_program = |program: &str| line.set(&line.with(program, line.args.clone()), place);
    let replacement = || {
        let home_path = shell_expanded(&expanded, here);
        match home_path {
            Some(path) if is_executable(&path) => with_program(&path.display().to_string()),
            _ => to_zidane(&here.zidane_command()),
        }
    };
    if expanded.starts_with('~') {
        return Err((
            Status::Broken,
            format!(
                "the command `{}` starts with `~`, which {} does not expand",
                line.program, rules.host
            ),
            replacement(),
        ));
    }
    if expanded.contains('$') {
        return Err((
            Status::Broken,
            format!(
                "the command `{}` holds a `$` that {} leaves as it is",
                line.program, rules.host
            ),
            replacement(),
        ));
    }
    let path = Path::new(&expanded);
    if expanded.contains(['/', '\\']) {
        if !path.is_absolute() {
            return Err((
                Status::Warning,
                format!(
                    "the command `{expanded}` is relative: it is taken from wherever {} starts",
                    rules.host
                ),
                to_zidane(&here.zidane_command()),
            ));
        }
        if !path.exists() {
            return Err((
                Status::Broken,
                format!("the command {expanded} does not exist"),
                to_zidane(&here.zidane_command()),
            ));
        }
        if !is_executable(path) {
            return Err((
                Status::Broken,
                format!("the command {expanded} is not an executable file"),
                format!("chmod +x {expanded}"),
            ));
        }
        return Ok(path.to_owned());
    }
    here.which(&expanded).ok_or_else(|| {
        let what = if at > 0 {
            format!("`{expanded}` is not on PATH (Node.js brings it)")
        } else {
            format!(
                "`{expanded}` is not on PATH, where {} looks for it",
                rules.host
            )
        };
        (Status::Broken, what, to_zidane(&here.zidane_command()))
    })
}

/// What is wrong with the arguments zidane gets (from `at`), and the line that fixes
/// it; `None` when `zidane mcp` would serve with them.
fn judge_args(line: &Line, at: usize, place: &Place) -> Option<(String, String)> {
    let own = &line.args[at..];
    let with_own = |own: Vec<String>| {
        let args = line.args[..at].iter().cloned().chain(own).collect();
        line.set(&line.with(&line.program, args), place)
    };
    let Some(first) = own.first() else {
        return Some((
            "no arguments: `zidane` alone starts an interactive session, not the MCP server"
                .to_owned(),
            with_own(vec!["mcp".to_owned()]),
        ));
    };
    if first != "mcp" {
        let inserted: Vec<String> = std::iter::once("mcp".to_owned())
            .chain(own.iter().cloned())
            .collect();
        let fix = if check_args(&inserted[1..]).is_ok() {
            inserted
        } else {
            vec!["mcp".to_owned()]
        };
        return Some((
            format!("its arguments start with `{first}`, not `mcp`: it would not serve MCP"),
            with_own(fix),
        ));
    }
    let refused = check_args(&own[1..]).err()?;
    let what = format!("`zidane mcp` refuses its arguments: {}", refused.message);
    let without: Option<Vec<String>> = refused.unknown.as_ref().map(|unknown| {
        own.iter()
            .filter(|arg| *arg != unknown && !arg.starts_with(&format!("{unknown}=")))
            .cloned()
            .collect()
    });
    let fix = match without {
        Some(without) if check_args(&without[1..]).is_ok() => with_own(without),
        _ => "correct them: `zidane mcp --help` lists what it takes".to_owned(),
    };
    Some((what, fix))
}

#[cfg(test)]
#[cfg(unix)]
#[path = "entry_tests.rs"]
mod tests;
