//! What zidane takes from its own environment and the user's config file
//! (`<config dir>/zidane/config.toml`, read here; its `[sandbox]` table means what
//! [`crate::sandbox_config`] says): the environment policy of its tasks (the `[env]`
//! table, `zidane mcp`'s `--env-*` flags over it, and `--print-env-policy` to see what is
//! withheld), whether to sweep orphans at start, the retention of ended sessions (the
//! `[retention]` table, [`crate::clean`], and its two variables), and the variables whose
//! bad values stop a command before it does anything.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use zidane::context::{
    DEFAULT_ENV_EXCLUDES, EnvInherit, EnvPattern, EnvPolicy, EnvPolicyError,
    ZIDANE_SECRET_ENV_VARS, parse_env_assignment,
};
use zidane::process::EnvValueError;

use crate::error::CliError;
use crate::sandbox_config::SandboxFile;

/// The config file's path under the platform's config dir (`$XDG_CONFIG_HOME`, else
/// `~/.config`, on Linux).
pub const CONFIG_FILE: &str = "zidane/config.toml";

/// The variable tracing reads its filter from.
const LOG_VAR: &str = "RUST_LOG";

/// The flags of `zidane mcp` that set its tasks' environment, over the config file's
/// `[env]` table.
#[derive(Debug, Args)]
pub(crate) struct EnvArgs {
    /// Which of this process's environment variables tasks start from: all (the
    /// default), core (PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TERM,
    /// TMPDIR, TZ) or none. Names like *KEY*, *SECRET*, *TOKEN*, *PASSWORD* (any case)
    /// are withheld whichever, and ZIDANE_MCP_TOKEN always.
    #[arg(long, value_name = "all|core|none")]
    env_inherit: Option<EnvInherit>,
    /// Withhold variables whose names match PATTERN too (`*` any run, `?` one
    /// character, any case); repeatable. Replaces the config file's `exclude`.
    #[arg(long, value_name = "PATTERN")]
    env_exclude: Vec<EnvPattern>,
    /// Pass on only variables whose names match PATTERN (or another of these);
    /// repeatable. Replaces the config file's `include_only`.
    #[arg(long, value_name = "PATTERN")]
    env_include_only: Vec<EnvPattern>,
    /// Give every task NAME=VALUE, whatever the excludes (never ZIDANE_MCP_TOKEN);
    /// repeatable, over the config file's `set`.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env_assignment)]
    env_set: Vec<(String, String)>,
    /// Print the environment policy, the names tasks get and those withheld from them
    /// (never a value), then exit.
    #[arg(long)]
    pub(crate) print_env_policy: bool,
}

impl EnvArgs {
    /// The config file's policy with these flags over it, checked.
    pub(crate) fn policy(&self) -> Result<EnvPolicy, CliError> {
        self.over(file_policy()?)
    }

    /// `policy` with these flags over it: an inherit mode or a list given replaces the
    /// policy's, a `set` entry is added (replacing one of the same name). Checked.
    fn over(&self, mut policy: EnvPolicy) -> Result<EnvPolicy, CliError> {
        if let Some(inherit) = self.env_inherit {
            policy.inherit = inherit;
        }
        if !self.env_exclude.is_empty() {
            policy.exclude.clone_from(&self.env_exclude);
        }
        if !self.env_include_only.is_empty() {
            policy.include_only.clone_from(&self.env_include_only);
        }
        for (name, value) in &self.env_set {
            policy.set.insert(name.clone(), value.clone());
        }
        policy.validate()?;
        Ok(policy)
    }
}

/// The config file's path, where the platform has a config dir.
pub(crate) fn config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join(CONFIG_FILE))
}

/// What the config file holds: its `[env]`, `[sandbox]`, `[retention]` and `[fleet]`
/// tables, each its default where the file or the table is missing.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ConfigFile {
    /// The `[env]` table: the environment policy of tasks.
    pub(crate) env: EnvPolicy,
    /// The `[sandbox]` table: the settings the `--sandbox*` flags override.
    pub(crate) sandbox: SandboxFile,
    /// The `[retention]` table: which ended sessions are removed at start.
    pub(crate) retention: RetentionFile,
    /// The `[fleet]` table: where tasks run when the `--restate` flags say nothing.
    pub(crate) fleet: FleetFile,
}

/// The policy of the config file's `[env]` table; the default where there is no file
/// or no table. A file that cannot be read or holds what zidane does not accept is an
/// error naming it.
pub(crate) fn file_policy() -> Result<EnvPolicy, CliError> {
    Ok(config_file()?.env)
}

/// The config file's tables; the defaults where there is no file. A file that cannot be
/// read or holds what zidane does not accept is an error naming it.
pub(crate) fn config_file() -> Result<ConfigFile, CliError> {
    match config_path() {
        Some(path) => load(&path),
        None => Ok(ConfigFile::default()),
    }
}

fn load(path: &Path) -> Result<ConfigFile, CliError> {
    let config_error = |reason: String| CliError::Config {
        path: path.to_owned(),
        reason,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ConfigFile::default());
        }
        Err(error) => return Err(config_error(error.to_string())),
    };
    parse_config(&text).map_err(config_error)
}

/// The `[env]`, `[sandbox]`, `[retention]` and `[fleet]` tables of a config file's text;
/// anything else in it is refused, so a misspelt table is not silently ignored.
fn parse_config(text: &str) -> Result<ConfigFile, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|error: toml::de::Error| error.to_string())?;
    let mut config = ConfigFile::default();
    for (key, value) in table {
        match key.as_str() {
            "env" => {
                config.env = value
                    .try_into()
                    .map_err(|error: toml::de::Error| format!("[env]: {}", error.message()))?;
            }
            "sandbox" => {
                config.sandbox = value
                    .try_into()
                    .map_err(|error: toml::de::Error| format!("[sandbox]: {}", error.message()))?;
            }
            "retention" => {
                config.retention = value.try_into().map_err(|error: toml::de::Error| {
                    format!("[retention]: {}", error.message())
                })?;
            }
            "fleet" => {
                config.fleet = value
                    .try_into()
                    .map_err(|error: toml::de::Error| format!("[fleet]: {}", error.message()))?;
            }
            other => {
                return Err(format!(
                    "unknown key `{other}`: the file holds only [env], [sandbox], [retention] and [fleet] tables"
                ));
            }
        }
    }
    config
        .env
        .validate()
        .map_err(|error: EnvPolicyError| format!("[env]: {error}"))?;
    Ok(config)
}

/// Prints `policy` and what it makes of this process's environment: the names tasks
/// get, and those withheld with why. Names only: a value never leaves the process.
pub(crate) fn print_env_policy(policy: &EnvPolicy) -> Result<(), CliError> {
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "(none)".to_owned()
        } else {
            items.join(" ")
        }
    };
    let patterns =
        |patterns: &[EnvPattern]| list(patterns.iter().map(ToString::to_string).collect());
    let config = match config_path() {
        Some(path) if path.is_file() => path.display().to_string(),
        Some(path) => format!("{} (none)", path.display()),
        None => "(no config dir on this platform)".to_owned(),
    };
    let default_excludes = if policy.default_excludes {
        list(
            DEFAULT_ENV_EXCLUDES
                .iter()
                .map(ToString::to_string)
                .collect(),
        )
    } else {
        "(off)".to_owned()
    };
    let child = policy.apply_to_host();
    let mut out = String::new();
    out.push_str(&format!("config file:      {config}\n"));
    out.push_str(&format!("inherit:          {}\n", policy.inherit));
    out.push_str(&format!("default excludes: {default_excludes}\n"));
    out.push_str(&format!(
        "exclude:          {}\n",
        patterns(&policy.exclude)
    ));
    out.push_str(&format!(
        "include only:     {}\n",
        patterns(&policy.include_only)
    ));
    out.push_str(&format!(
        "set:              {}\n",
        list(policy.set.keys().cloned().collect())
    ));
    out.push_str(&format!(
        "never passed:     {}\n",
        list(
            ZIDANE_SECRET_ENV_VARS
                .iter()
                .map(ToString::to_string)
                .collect()
        )
    ));
    out.push_str(&format!("\ntasks get:\n  {}\n", list(child.names())));
    out.push_str("\nwithheld from tasks:\n");
    if child.withheld.is_empty() {
        out.push_str("  (none)\n");
    }
    let width = child
        .withheld
        .iter()
        .map(|var| var.name.len())
        .max()
        .unwrap_or(0);
    for var in &child.withheld {
        out.push_str(&format!("  {:<width$}  {}\n", var.name, var.reason));
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

/// Every environment variable zidane reads at start that can hold a bad value, checked:
/// a value it does not accept is an error naming the variable and what it accepts.
pub(crate) fn check_env() -> Result<(), CliError> {
    zidane::process::ProcessPath::from_env()?;
    sweep_orphans()?;
    retention_days()?;
    retention_max_bytes()?;
    Ok(())
}

/// The variable that sets, over the config file's `max_age_days`, after how many days
/// without a change an ended session is removed as `zidane` and `zidane mcp` start: a
/// whole number, `0` for never.
pub const RETENTION_DAYS_VAR: &str = "ZIDANE_RETENTION_DAYS";

/// The variable that sets, over the config file's `max_bytes`, how many bytes the
/// sessions may take before the oldest ended ones are removed as `zidane` and
/// `zidane mcp` start: a whole number, `0` for no cap.
pub const RETENTION_MAX_BYTES_VAR: &str = "ZIDANE_RETENTION_MAX_BYTES";

/// What [`RETENTION_DAYS_VAR`] accepts, as an error message says it.
const RETENTION_DAYS_VALUES: &str =
    "a whole number of days (0: never by age), or unset for the config file's";

/// What [`RETENTION_MAX_BYTES_VAR`] accepts, as an error message says it.
const RETENTION_MAX_BYTES_VALUES: &str =
    "a whole number of bytes (0: no cap), or unset for the config file's";

/// [`RETENTION_DAYS_VAR`], where it is set.
pub(crate) fn retention_days() -> Result<Option<u64>, EnvValueError> {
    whole_number(
        RETENTION_DAYS_VAR,
        std::env::var_os(RETENTION_DAYS_VAR),
        RETENTION_DAYS_VALUES,
    )
}

/// [`RETENTION_MAX_BYTES_VAR`], where it is set.
pub(crate) fn retention_max_bytes() -> Result<Option<u64>, EnvValueError> {
    whole_number(
        RETENTION_MAX_BYTES_VAR,
        std::env::var_os(RETENTION_MAX_BYTES_VAR),
        RETENTION_MAX_BYTES_VALUES,
    )
}

/// A variable's whole number; `None` where it is unset or empty.
fn whole_number(
    var: &'static str,
    value: Option<std::ffi::OsString>,
    accepted: &'static str,
) -> Result<Option<u64>, EnvValueError> {
    let Some(value) = value.filter(|value| !value.is_empty()) else {
        return Ok(None);
    };
    value
        .to_str()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .map(Some)
        .ok_or_else(|| EnvValueError {
            var,
            value: value.to_string_lossy().into_owned(),
            accepted,
        })
}

/// The variable that turns off the orphan sweep `zidane` and `zidane mcp` run as they
/// start: `off` (or `0`, `false`, `no`); `on` (or `1`, `true`, `yes`), empty or unset
/// keeps it.
pub const SWEEP_ORPHANS_VAR: &str = "ZIDANE_SWEEP_ORPHANS";

/// What [`SWEEP_ORPHANS_VAR`] accepts, as an error message says it.
const SWEEP_ORPHANS_VALUES: &str =
    "`on` or `off` (also 1/0, true/false, yes/no; any case), or unset for on";

/// Whether to end, at start, the tasks that crashed hosts of this user left running
/// ([`SWEEP_ORPHANS_VAR`]; default yes).
pub(crate) fn sweep_orphans() -> Result<bool, EnvValueError> {
    sweep_orphans_from(std::env::var_os(SWEEP_ORPHANS_VAR))
}

fn sweep_orphans_from(value: Option<std::ffi::OsString>) -> Result<bool, EnvValueError> {
    let Some(value) = value.filter(|value| !value.is_empty()) else {
        return Ok(true);
    };
    let on = value.to_str().map(|v| v.trim().to_ascii_lowercase());
    match on.as_deref() {
        Some("on" | "1" | "true" | "yes") => Ok(true),
        Some("off" | "0" | "false" | "no") => Ok(false),
        _ => Err(EnvValueError {
            var: SWEEP_ORPHANS_VAR,
            value: value.to_string_lossy().into_owned(),
            accepted: SWEEP_ORPHANS_VALUES,
        }),
    }
}

/// The log filter of [`LOG_VAR`], else `default`. A value tracing cannot parse is an
/// error, not a silent fallback: the user asked for logs and would get none.
pub(crate) fn log_filter(default: &str) -> Result<tracing_subscriber::EnvFilter, CliError> {
    match std::env::var(LOG_VAR) {
        Ok(value) if !value.trim().is_empty() => tracing_subscriber::EnvFilter::try_new(&value)
            .map_err(|error| CliError::LogFilter {
                value,
                reason: error.to_string(),
            }),
        Ok(_) | Err(std::env::VarError::NotPresent) => {
            Ok(tracing_subscriber::EnvFilter::new(default))
        }
        Err(std::env::VarError::NotUnicode(value)) => Err(CliError::LogFilter {
            value: value.to_string_lossy().into_owned(),
            reason: "not UTF-8".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_table_is_the_policy_and_nothing_else_is_accepted() {
        let policy = parse_config(
            "[env]\ninherit = \"core\"\nexclude = [\"AWS_*\"]\nset = { CI = \"1\" }\n",
        )
        .unwrap()
        .env;
        assert_eq!(
            policy,
            EnvPolicy::default()
                .inherit(EnvInherit::Core)
                .exclude("AWS_*")
                .set("CI", "1")
        );
        assert_eq!(parse_config("").unwrap(), ConfigFile::default());
        for (text, says) in [
            ("[envs]\n", "unknown key `envs`"),
            ("[env]\ninherit = \"some\"\n", "all, core or none"),
            ("[env]\ninherits = \"all\"\n", "inherits"),
            (
                "[env]\nset = { ZIDANE_MCP_TOKEN = \"x\" }\n",
                "zidane's own credential",
            ),
            ("[env\n", ""),
            ("[sandbox]\nmode = \"strict\"\n", "[sandbox]: "),
            ("[sandbox]\nnetwrk = \"off\"\n", "netwrk"),
        ] {
            let error = parse_config(text).unwrap_err();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn the_sweep_is_on_unless_the_variable_turns_it_off() {
        let read = |value: Option<&str>| sweep_orphans_from(value.map(Into::into));
        for on in [
            None,
            Some(""),
            Some("on"),
            Some("1"),
            Some("TRUE"),
            Some(" yes "),
        ] {
            assert_eq!(read(on), Ok(true), "{on:?}");
        }
        for off in ["off", "0", "false", "No", "OFF"] {
            assert_eq!(read(Some(off)), Ok(false), "{off}");
        }
        let error = read(Some("never")).unwrap_err();
        assert_eq!(error.var, SWEEP_ORPHANS_VAR);
        assert!(error.to_string().contains("`on` or `off`"), "{error}");
    }

    #[test]
    fn the_retention_variables_take_whole_numbers() {
        let days = |value: Option<&str>| {
            whole_number(
                RETENTION_DAYS_VAR,
                value.map(Into::into),
                RETENTION_DAYS_VALUES,
            )
        };
        assert_eq!(days(None), Ok(None));
        assert_eq!(days(Some("")), Ok(None));
        assert_eq!(days(Some("0")), Ok(Some(0)));
        assert_eq!(days(Some(" 7 ")), Ok(Some(7)));
        for bad in ["-1", "1.5", "30d", "many"] {
            let error = days(Some(bad)).unwrap_err();
            assert_eq!(error.var, RETENTION_DAYS_VAR);
            assert!(
                error.to_string().starts_with("ZIDANE_RETENTION_DAYS="),
                "{error}"
            );
            assert!(
                error.to_string().contains("whole number of days"),
                "{error}"
            );
        }
    }

    #[test]
    fn the_retention_table_is_read_and_checked() {
        let config = parse_config(
            "[retention]
enabled = false
max_age_days = 7
max_bytes = 1000
",
        )
        .unwrap();
        assert!(!config.retention.enabled);
        assert_eq!(config.retention.max_age_days, Some(7));
        assert_eq!(config.retention.max_bytes, Some(1000));
        assert!(parse_config("").unwrap().retention.enabled);
        for (text, says) in [
            (
                "[retention]
max_age = 7
",
                "max_age",
            ),
            (
                "[retention]
max_bytes = -1
",
                "[retention]: ",
            ),
            (
                "[retention]
max_bytes = \"1G\"
",
                "[retention]: ",
            ),
            (
                "[retention]
enabled = \"yes\"
",
                "[retention]: ",
            ),
        ] {
            let error = parse_config(text).unwrap_err();
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn flags_override_the_file() {
        let args = EnvArgs {
            env_inherit: Some(EnvInherit::None),
            env_exclude: vec!["X*".into()],
            env_include_only: Vec::new(),
            env_set: vec![("A".to_owned(), "1".to_owned())],
            print_env_policy: false,
        };
        let file = EnvPolicy::default()
            .exclude("Y*")
            .include_only("PATH")
            .set("A", "0")
            .set("B", "2");
        let policy = args.over(file).unwrap();
        assert_eq!(policy.inherit, EnvInherit::None);
        assert_eq!(policy.exclude, [EnvPattern::new("X*")]);
        assert_eq!(policy.include_only, [EnvPattern::new("PATH")]);
        assert_eq!(policy.set.get("A").map(String::as_str), Some("1"));
        assert_eq!(policy.set.get("B").map(String::as_str), Some("2"));
        let secret = EnvArgs {
            env_set: vec![("ZIDANE_MCP_TOKEN".to_owned(), "x".to_owned())],
            ..args
        };
        assert!(secret.over(EnvPolicy::default()).is_err());
    }
}

/// The config file's `[fleet]` table: the same three settings as the flags.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FleetFile {
    /// The Restate ingress.
    #[serde(default)]
    pub(crate) restate: Option<String>,
    /// Restate's admin API.
    #[serde(default)]
    pub(crate) restate_admin: Option<String>,
    /// The workers' ids.
    #[serde(default)]
    pub(crate) workers: Vec<String>,
}

/// The config file's `[retention]` table: every key optional, the variables over it.
#[derive(Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetentionFile {
    /// Whether `zidane` and `zidane mcp` remove old ended sessions as they start
    /// (default: yes).
    #[serde(default = "enabled_by_default")]
    pub(crate) enabled: bool,
    /// After how many days without a change an ended session is removed (default 30;
    /// 0: never for its age).
    #[serde(default)]
    pub(crate) max_age_days: Option<u64>,
    /// How many bytes the sessions may take before the oldest ended ones are removed
    /// (default 1 GiB; 0: no cap).
    #[serde(default)]
    pub(crate) max_bytes: Option<u64>,
}

impl Default for RetentionFile {
    fn default() -> Self {
        Self {
            enabled: true,
            max_age_days: None,
            max_bytes: None,
        }
    }
}

fn enabled_by_default() -> bool {
    true
}
