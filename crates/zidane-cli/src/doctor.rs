//! `zidane doctor`: whether zidane is set up right on this machine, each thing checked a
//! finding — ok, info, warning or broken — and each one not ok with the one line that
//! fixes it. It reads and asks; it never starts, ends, writes or dials anything.
//!
//! In order: this binary and the `zidane` on `PATH`, the process path, the config file
//! ([`install`]); the sandbox this machine builds for the policy in force ([`sandbox`],
//! through the same check as `--print-sandbox`); the supervisor of detached tasks
//! ([`tasks`], asked, never started); every MCP host with a config file here and each
//! zidane entry in it ([`hosts`], each entry judged in [`entry`], its command read as the
//! host reads it in [`expand`]); the tasks of dead
//! hosts still running ([`tasks`], listed, never ended); what the user dir holds against
//! the retention. The exit status is 1 when a finding is broken, else 0; `--json` prints
//! the [`finding::Report`] (`docs/doctor.schema.json` is its schema).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;
use zidane::wire::Painter;

use crate::error::CliError;

mod entry;
mod expand;
mod finding;
mod here;
mod hosts;
mod install;
mod jsonc;
mod render;
mod sandbox;
mod tasks;

use finding::{Finding, Platform, Report, Status};
use here::Here;

/// Flags of `zidane doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// One JSON object, for scripts: `version`, `platform` and `findings` (each
    /// `check`, `status`, `summary` and, when there is something to do, `fix`).
    #[arg(long)]
    json: bool,
}

/// `zidane doctor`: checks the machine, prints what it found; status 1 when something
/// is broken.
pub(crate) fn run(args: &DoctorArgs) -> Result<ExitCode, CliError> {
    let report = examine(&Here::from_env());
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::other)?;
        writeln!(out)?;
    } else {
        out.write_all(render::human(&report, Painter::for_stdout()).as_bytes())?;
    }
    out.flush()?;
    Ok(if report.broken() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Every check, in the order printed.
fn examine(here: &Here) -> Report {
    let mut findings = vec![install::zidane(here), install::process_path()];
    let (config_finding, config) = install::config_file(here);
    findings.push(config_finding);
    match crate::user_dir::user_dir() {
        Ok(user_dir) => {
            findings.push(sandbox::sandbox(here, &config.sandbox, &user_dir));
            findings.push(tasks::supervisor(here, &user_dir));
            findings.extend(hosts::findings(here));
            findings.push(tasks::orphans());
            // A refused config file was said above: its retention is then the default.
            let retention = crate::clean::start_policy()
                .unwrap_or_else(|_| Some(zidane::agent::RetentionPolicy::new()));
            findings.push(tasks::storage(here, &user_dir, retention));
        }
        Err(error) => {
            findings.push(
                Finding::new("storage", Status::Broken, format!("user dir: {error}")).fix(format!(
                    "export {}=<a directory of yours>",
                    crate::user_dir::USER_DIR_VAR
                )),
            );
            findings.extend(hosts::findings(here));
            findings.push(tasks::orphans());
        }
    }
    Report {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        platform: Platform::here(),
        findings,
    }
}
