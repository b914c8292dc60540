//! `--restate`: running every task on a fleet of `zidane-worker`s behind a Restate
//! server instead of this machine — for `zidane mcp`, the terminal host and the
//! person's commands (`ps`, `logs`, `wait`, `kill`), from the flags, their environment
//! variables or the config file's `[fleet]` table, in that order.
//!
//! Every session of one workspace shares one handle on the fleet
//! ([`RestateContext::workspace`]): the next session there re-adopts the tasks earlier
//! ones started and is told each end once. The workspace's key is this user dir's
//! machine id ([`machine_id`]) and the workspace's path.

use std::path::Path;
use std::sync::Arc;

use clap::Args;
use zidane::context::ExecutionHandle;
use zidane::restate::RestateContext;
use zidane_mcp::{RemoteContext, RemoteContexts};

use crate::env_config::FleetFile;
use crate::error::CliError;

/// Where tasks run when they do not run on this machine.
#[derive(Debug, Clone, Args)]
pub(crate) struct FleetArgs {
    /// Run every task on the zidane-workers behind this Restate ingress
    /// (http://HOST:8080) instead of on this machine [config: [fleet] restate].
    #[arg(long, value_name = "URL", env = "ZIDANE_RESTATE")]
    restate: Option<String>,
    /// The workers to run tasks on, by id (w1,w2). Default: every worker registered
    /// with Restate's admin API (--restate-admin) [config: [fleet] workers].
    #[arg(
        long,
        value_name = "ID,…",
        value_delimiter = ',',
        env = "ZIDANE_WORKERS"
    )]
    workers: Vec<String>,
    /// Restate's admin API (http://HOST:9070), asked for the registered workers when
    /// --workers names none [config: [fleet] restate_admin].
    #[arg(long, value_name = "URL", env = "ZIDANE_RESTATE_ADMIN")]
    restate_admin: Option<String>,
}

/// A fleet to run tasks on, as the flags and the config file name it.
#[derive(Debug, Clone)]
pub(crate) struct Fleet {
    ingress: String,
    workers: Vec<String>,
    admin: Option<String>,
}

impl FleetArgs {
    /// The fleet the flags (or their variables) name, else the config file's `[fleet]`
    /// table; `None`: tasks run on this machine. Workers or an admin API named without
    /// an ingress are refused, naming what is missing.
    pub(crate) fn resolve(&self) -> Result<Option<Fleet>, CliError> {
        self.over(&crate::env_config::config_file()?.fleet)
    }

    fn over(&self, file: &FleetFile) -> Result<Option<Fleet>, CliError> {
        let workers = if self.workers.is_empty() {
            file.workers.clone()
        } else {
            self.workers.clone()
        };
        let admin = self
            .restate_admin
            .clone()
            .or_else(|| file.restate_admin.clone());
        let Some(ingress) = self.restate.clone().or_else(|| file.restate.clone()) else {
            if !workers.is_empty() || admin.is_some() {
                return Err(fleet_error(
                    "--workers and --restate-admin need --restate (or `restate` in the config \
                     file's [fleet] table): the Restate ingress the workers are behind",
                ));
            }
            return Ok(None);
        };
        Ok(Some(Fleet {
            ingress,
            workers,
            admin,
        }))
    }
}

impl Fleet {
    /// The workers: the ones named, else every one registered with the admin API.
    /// Checked: a bad id, no admin API to ask, or none registered is refused.
    pub(crate) async fn workers(&self) -> Result<Vec<String>, CliError> {
        let workers = if self.workers.is_empty() {
            let Some(admin) = &self.admin else {
                return Err(fleet_error(
                    "--restate needs the workers: name them with --workers, or give \
                     Restate's admin API with --restate-admin to find them",
                ));
            };
            let found = zidane::restate::registered_workers(admin)
                .await
                .map_err(|error| fleet_error(&format!("finding the workers: {error}")))?;
            if found.is_empty() {
                return Err(fleet_error(&format!(
                    "no zidane-worker is registered with Restate at {admin}"
                )));
            }
            found
        } else {
            self.workers.clone()
        };
        // Checked once here, so a bad id is said at the start, not at each session.
        RestateContext::new(&self.ingress, workers.iter().map(String::as_str))
            .map_err(|error| fleet_error(&error.to_string()))?;
        Ok(workers)
    }

    /// The sessions' contexts on the fleet, the workers found first when none is named.
    /// Call inside a tokio runtime.
    pub(crate) async fn contexts(&self, user_dir: &Path) -> Result<RemoteContexts, CliError> {
        let workers = self.workers().await?;
        let machine = machine_id(user_dir)?;
        let ingress = self.ingress.clone();
        let what = format!("Restate at {ingress}, workers {}", workers.join(", "));
        Ok(RemoteContexts::new(what, move |session| {
            let (context, handle) = on_workspace(
                &ingress,
                &workers,
                &machine,
                &session.workspace,
                Some(&session.session),
            )?;
            Ok(RemoteContext {
                context: Arc::new(context),
                handle,
            })
        }))
    }

    /// A context on the workspace `workspace`'s handle, and that handle: the tasks its
    /// sessions started. With `session`, it lists as that session (and is told ends);
    /// without, it only looks. Call inside a tokio runtime.
    pub(crate) async fn workspace(
        &self,
        user_dir: &Path,
        workspace: &Path,
        session: Option<&str>,
    ) -> Result<(RestateContext, ExecutionHandle), CliError> {
        let workers = self.workers().await?;
        let machine = machine_id(user_dir)?;
        on_workspace(&self.ingress, &workers, &machine, workspace, session)
            .map_err(|reason| fleet_error(&reason))
    }
}

/// A context on the handle of `workspace` of machine `machine`, as `session` (or only
/// looking), and the handle.
fn on_workspace(
    ingress: &str,
    workers: &[String],
    machine: &str,
    workspace: &Path,
    session: Option<&str>,
) -> Result<(RestateContext, ExecutionHandle), String> {
    let key = format!("{machine}:{}", workspace.display());
    let context = RestateContext::new(ingress, workers.iter().map(String::as_str))
        .map_err(|error| error.to_string())?
        .workspace(&key);
    let context = match session {
        Some(session) => context.session(session),
        None => context.looking(),
    };
    Ok((context, RestateContext::workspace_handle(&key)))
}

/// The file in the user dir that names this machine (and user) to a fleet.
const MACHINE_ID_FILE: &str = "fleet-machine-id";

/// The id this user dir's sessions give a fleet, made once and kept in the user dir:
/// two machines, or two users, whose workspaces have the same path never share their
/// tasks.
fn machine_id(user_dir: &Path) -> Result<String, CliError> {
    let path = user_dir.join(MACHINE_ID_FILE);
    if let Ok(id) = std::fs::read_to_string(&path)
        && !id.trim().is_empty()
    {
        return Ok(id.trim().to_owned());
    }
    std::fs::create_dir_all(user_dir).map_err(CliError::Io)?;
    let id = format!(
        "{}{}",
        zidane::restate::random_token(),
        zidane::restate::random_token()
    );
    // Made whole or not at all: two servers starting at once keep the first one's.
    let staged = user_dir.join(format!("{MACHINE_ID_FILE}.{}", std::process::id()));
    std::fs::write(&staged, &id).map_err(CliError::Io)?;
    let kept = match std::fs::hard_link(&staged, &path) {
        Ok(()) => id,
        Err(_) => std::fs::read_to_string(&path)
            .map_err(CliError::Io)?
            .trim()
            .to_owned(),
    };
    let _ = std::fs::remove_file(&staged);
    Ok(kept)
}

fn fleet_error(reason: &str) -> CliError {
    CliError::Fleet(reason.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(restate: Option<&str>, workers: &[&str], admin: Option<&str>) -> FleetArgs {
        FleetArgs {
            restate: restate.map(str::to_owned),
            workers: workers.iter().map(|w| (*w).to_owned()).collect(),
            restate_admin: admin.map(str::to_owned),
        }
    }

    fn file(text: &str) -> FleetFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn flags_win_over_the_config_file_and_fill_in_from_it() {
        let table = file("restate = \"http://box:8080\"\nworkers = [\"w1\", \"w2\"]");
        let from_file = args(None, &[], None).over(&table).unwrap().unwrap();
        assert_eq!(from_file.ingress, "http://box:8080");
        assert_eq!(from_file.workers, ["w1", "w2"]);
        let flags = args(Some("http://other:8080"), &["w3"], None)
            .over(&table)
            .unwrap()
            .unwrap();
        assert_eq!(
            (flags.ingress.as_str(), flags.workers.as_slice()),
            ("http://other:8080", &["w3".to_owned()][..])
        );
        assert!(
            args(None, &[], None)
                .over(&FleetFile::default())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn workers_without_an_ingress_are_refused() {
        let refused = args(None, &["w1"], None).over(&FleetFile::default());
        assert!(
            matches!(&refused, Err(CliError::Fleet(reason)) if reason.contains("--restate")),
            "{refused:?}"
        );
        let refused = args(None, &[], Some("http://a:9070")).over(&FleetFile::default());
        assert!(refused.is_err());
    }

    #[test]
    fn the_table_refuses_what_it_does_not_know() {
        assert!(toml::from_str::<FleetFile>("ingress = \"x\"").is_err());
        assert_eq!(file(""), FleetFile::default());
    }

    #[test]
    fn a_machine_id_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = machine_id(dir.path()).unwrap();
        assert_eq!(first.len(), 32);
        assert_eq!(machine_id(dir.path()).unwrap(), first);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(machine_id(other.path()).unwrap(), first);
    }
}
