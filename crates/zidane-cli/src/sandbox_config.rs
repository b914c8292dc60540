//! The sandbox of the commands `zidane` and `zidane mcp` run, on by default: the config
//! file's `[sandbox]` table, the `--sandbox*` flags over it, the policy zidane builds
//! from them (the working directory as the workspace, zidane's own user dir denied),
//! `--print-sandbox` to see what this machine makes of it, `--sandbox-required` to
//! refuse to start without it, and the one line on stderr when it is unavailable.
//!
//! Both commands take the same [`SandboxArgs`] and call [`prepare`]: one
//! implementation.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;
use zidane::context::{
    ExecutionContext as _, NetworkAccess, SandboxMode, SandboxPolicy, SandboxReport, SandboxStatus,
};
use zidane::process::{ProcessContext, SandboxPlan};

use crate::env_config;
use crate::error::CliError;

/// The flags of `zidane` and `zidane mcp` that set what their commands may touch, over
/// the config file's `[sandbox]` table.
#[derive(Debug, Default, Args)]
pub(crate) struct SandboxArgs {
    /// What commands may write: workspace-write (the default: the working directory,
    /// the temp directories and the build caches), read-only (the temp directories
    /// only) or off (no sandbox: every right of the user). Either way they read
    /// everything but credential stores, zidane's own files and --deny-read paths.
    #[arg(long = "sandbox", value_name = "workspace-write|read-only|off")]
    mode: Option<SandboxMode>,
    /// Whether sandboxed commands reach the network: on (the default) or off (a
    /// loopback of their own, nothing else).
    #[arg(long, value_name = "on|off")]
    network: Option<NetworkAccess>,
    /// Let commands write DIR too (workspace-write); repeatable, added to the config
    /// file's `writable`.
    #[arg(long, value_name = "DIR")]
    writable: Vec<PathBuf>,
    /// Hide PATH from commands; repeatable, added to the config file's `deny_read`.
    #[arg(long, value_name = "PATH")]
    deny_read: Vec<PathBuf>,
    /// Refuse to start when this machine cannot build the sandbox (e.g. bubblewrap is
    /// missing), instead of running commands unsandboxed.
    #[arg(long)]
    sandbox_required: bool,
    /// Print the sandbox: its mode, network and status, and the paths commands may
    /// write, are held read-only in and may not read (or why there is none), then exit.
    #[arg(long)]
    print_sandbox: bool,
}

/// The config file's `[sandbox]` table: every key optional, the flags over it.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxFile {
    /// `workspace-write` (the default), `read-only` or `off`.
    #[serde(default)]
    mode: Option<SandboxMode>,
    /// `on` (the default) or `off`.
    #[serde(default)]
    network: Option<NetworkAccess>,
    /// More writable directories.
    #[serde(default)]
    writable: Vec<PathBuf>,
    /// More paths commands may not read.
    #[serde(default)]
    deny_read: Vec<PathBuf>,
    /// Refuse to start without the sandbox.
    #[serde(default)]
    required: bool,
}

/// The sandbox a command runs its commands in, settled from the flags and the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SandboxSettings {
    /// The policy.
    pub(crate) policy: SandboxPolicy,
    /// Which setting, if any, requires it to be enforced (`--sandbox-required`, or the
    /// config file's `required`), as an error names it.
    pub(crate) required_by: Option<String>,
}

impl SandboxArgs {
    /// The settings of these flags over `file`, for commands that run in `cwd` (the
    /// workspace of `workspace-write`), with `own` (zidane's own files) denied. A
    /// relative path is taken from `cwd`. A mode or network given replaces the
    /// file's; paths are added to the file's, so a flag cannot uncover what the file
    /// hides. `zidane doctor` settles the flagless settings with it.
    pub(crate) fn over(&self, file: &SandboxFile, cwd: &Path, own: &[PathBuf]) -> SandboxSettings {
        let mode = self.mode.or(file.mode).unwrap_or_default();
        let network = self.network.or(file.network).unwrap_or_default();
        let mut policy = match mode {
            SandboxMode::WorkspaceWrite => SandboxPolicy::workspace_write(cwd),
            SandboxMode::ReadOnly => SandboxPolicy::read_only(),
            SandboxMode::Off => SandboxPolicy::off(),
        }
        .network(network);
        for dir in file.writable.iter().chain(&self.writable) {
            policy = policy.writable(cwd.join(dir));
        }
        for path in file.deny_read.iter().chain(&self.deny_read).chain(own) {
            policy = policy.deny_read(cwd.join(path));
        }
        let required_by = if self.sandbox_required {
            Some("--sandbox-required".to_owned())
        } else if file.required {
            Some(match env_config::config_path() {
                Some(path) => format!("`required = true` in [sandbox] of {}", path.display()),
                None => "`required = true` in [sandbox] of the config file".to_owned(),
            })
        } else {
            None
        };
        SandboxSettings {
            policy,
            required_by,
        }
    }
}

/// What this machine makes of a policy: the report a context gives, and the paths of
/// its plan when it is enforced.
#[derive(Debug)]
pub(crate) struct SandboxCheck {
    /// The policy and its status here (enforced, off, or unavailable and why).
    pub(crate) report: SandboxReport,
    /// The paths it holds, when it is enforced.
    pub(crate) plan: Option<SandboxPlan>,
}

impl SandboxSettings {
    /// Checks the policy the way every context of the command will (on Linux by running
    /// bubblewrap once): on a context of its own with no lifeline and no sweep, which
    /// runs nothing. `--print-sandbox` prints it; `zidane doctor` judges it.
    pub(crate) fn check(&self) -> SandboxCheck {
        let context = ProcessContext::builder()
            .lifeline(false)
            .sandbox(self.policy.clone())
            .build();
        SandboxCheck {
            report: context.sandbox(),
            plan: context.sandbox_plan(),
        }
    }
}

/// Settles the sandbox before `zidane` or `zidane mcp` starts, from `args` over the
/// config file, with `user_dir` (sessions, task logs, the HTTP token files) denied to
/// commands. With `--print-sandbox`, prints it and gives `None`: exit. An unavailable
/// sandbox that is required stops the command with an error naming the reason and
/// the setting; one that is not is said in one line on stderr (never stdout, the MCP
/// channel). Else the policy to run commands under.
pub(crate) fn prepare(
    args: &SandboxArgs,
    user_dir: &Path,
) -> Result<Option<SandboxPolicy>, CliError> {
    let file = env_config::config_file()?.sandbox;
    let cwd = std::env::current_dir().map_err(CliError::WorkingDir)?;
    let settings = args.over(&file, &cwd, &[user_dir.to_owned()]);
    let check = settings.check();
    if args.print_sandbox {
        print_sandbox(&check)?;
        return Ok(None);
    }
    if let SandboxStatus::Unavailable(reason) = &check.report.status {
        if let Some(setting) = settings.required_by {
            return Err(CliError::SandboxRequired {
                reason: reason.clone(),
                setting,
            });
        }
        // A closed stderr must not stop the command.
        let _ = writeln!(std::io::stderr(), "zidane: unsandboxed: {reason}");
    }
    Ok(Some(settings.policy))
}

/// Prints what `check` found: the status first, then the plan's settings and paths.
fn print_sandbox(check: &SandboxCheck) -> Result<(), CliError> {
    let policy = &check.report.policy;
    let config = match env_config::config_path() {
        Some(path) if path.is_file() => path.display().to_string(),
        Some(path) => format!("{} (none)", path.display()),
        None => "(no config dir on this platform)".to_owned(),
    };
    let mut out = format!("config file: {config}\n");
    match (&check.report.status, &check.plan) {
        (SandboxStatus::Enforced, Some(plan)) => {
            out.push_str(&format!("status: enforced\n{plan}"));
        }
        (SandboxStatus::Off, _) => {
            out.push_str("status: off (commands have every right of the user)\nsandbox: off\n");
        }
        (SandboxStatus::Unavailable(reason), _) => {
            out.push_str(&format!(
                "status: unsandboxed: {reason}\nsandbox: {} (not enforced)\nnetwork: {}\n",
                policy.mode, policy.network
            ));
        }
        (SandboxStatus::Enforced, None) => {
            out.push_str(&format!(
                "status: enforced\nsandbox: {}\nnetwork: {}\n",
                policy.mode, policy.network
            ));
        }
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SandboxFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn the_default_is_workspace_write_on_the_working_directory_with_zidane_hidden() {
        let settings = SandboxArgs::default().over(
            &SandboxFile::default(),
            Path::new("/work/app"),
            &[PathBuf::from("/home/u/.local/share/zidane")],
        );
        assert_eq!(
            settings.policy,
            SandboxPolicy::workspace_write("/work/app").deny_read("/home/u/.local/share/zidane")
        );
        assert_eq!(settings.required_by, None);
    }

    #[test]
    fn flags_override_the_file_and_add_to_its_paths() {
        let file = file(
            "mode = \"read-only\"\nnetwork = \"off\"\nwritable = [\"/data\"]\n\
             deny_read = [\"secrets\"]\nrequired = true\n",
        );
        let from_file = SandboxArgs::default().over(&file, Path::new("/w"), &[]);
        assert_eq!(from_file.policy.mode, SandboxMode::ReadOnly);
        assert_eq!(from_file.policy.network, NetworkAccess::Off);
        assert_eq!(from_file.policy.deny_read, [PathBuf::from("/w/secrets")]);
        assert!(
            from_file
                .required_by
                .as_deref()
                .is_some_and(|by| by.contains("required = true")),
            "{from_file:?}"
        );
        let args = SandboxArgs {
            mode: Some(SandboxMode::WorkspaceWrite),
            network: Some(NetworkAccess::On),
            writable: vec![PathBuf::from("out")],
            deny_read: vec![PathBuf::from("/etc/shadow")],
            sandbox_required: true,
            print_sandbox: false,
        };
        let settings = args.over(&file, Path::new("/w"), &[PathBuf::from("/z")]);
        assert_eq!(
            settings.policy,
            SandboxPolicy::workspace_write("/w")
                .writable("/data")
                .writable("/w/out")
                .deny_read("/w/secrets")
                .deny_read("/etc/shadow")
                .deny_read("/z")
        );
        assert_eq!(settings.required_by.as_deref(), Some("--sandbox-required"));
    }

    #[test]
    fn the_table_refuses_what_it_does_not_know() {
        assert_eq!(file(""), SandboxFile::default());
        for text in [
            "mode = \"strict\"\n",
            "netwrk = \"off\"\n",
            "required = 1\n",
        ] {
            assert!(toml::from_str::<SandboxFile>(text).is_err(), "{text}");
        }
    }
}
