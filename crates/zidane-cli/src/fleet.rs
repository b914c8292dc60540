//! `--restate`: running every task on a fleet of `zidane-worker`s behind a Restate
//! server instead of this machine.

use std::path::Path;
use std::sync::Arc;

use clap::Args;
use zidane::restate::RestateContext;
use zidane_mcp::{RemoteContext, RemoteContexts};

use crate::error::CliError;

/// Where tasks run when they do not run on this machine.
#[derive(Debug, Args)]
pub(crate) struct FleetArgs {
    /// Run every task on the zidane-workers behind this Restate ingress
    /// (http://HOST:8080) instead of on this machine.
    #[arg(long, value_name = "URL", env = "ZIDANE_RESTATE")]
    restate: Option<String>,
    /// The workers to run tasks on, by id (w1,w2). Default: every worker registered
    /// with Restate's admin API (--restate-admin).
    #[arg(
        long,
        value_name = "ID,…",
        value_delimiter = ',',
        env = "ZIDANE_WORKERS",
        requires = "restate"
    )]
    workers: Vec<String>,
    /// Restate's admin API (http://HOST:9070), asked for the registered workers when
    /// --workers names none.
    #[arg(
        long,
        value_name = "URL",
        env = "ZIDANE_RESTATE_ADMIN",
        requires = "restate"
    )]
    restate_admin: Option<String>,
}

impl FleetArgs {
    /// Whether tasks run on a fleet.
    pub(crate) fn is_on(&self) -> bool {
        self.restate.is_some()
    }

    /// The sessions' contexts on the fleet, the workers found first when none is named;
    /// `None` without `--restate`. Each session runs on its workspace's handle, so the
    /// next session there re-adopts its tasks: the workspace key is this user dir's
    /// machine id (see [`machine_id`]) and the workspace's path. Call inside a tokio
    /// runtime.
    pub(crate) async fn contexts(
        &self,
        user_dir: &Path,
    ) -> Result<Option<RemoteContexts>, CliError> {
        let Some(ingress) = self.restate.clone() else {
            return Ok(None);
        };
        let workers = if self.workers.is_empty() {
            let Some(admin) = &self.restate_admin else {
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
        RestateContext::new(&ingress, workers.iter().map(String::as_str))
            .map_err(|error| fleet_error(&error.to_string()))?;
        let machine = machine_id(user_dir)?;
        let what = format!("Restate at {ingress}, workers {}", workers.join(", "));
        Ok(Some(RemoteContexts::new(what, move |session| {
            let key = format!("{machine}:{}", session.workspace.display());
            let context = RestateContext::new(&ingress, workers.iter().map(String::as_str))
                .map_err(|error| error.to_string())?
                .session(session.session.clone())
                .workspace(&key);
            Ok(RemoteContext {
                context: Arc::new(context),
                handle: RestateContext::workspace_handle(&key),
            })
        })))
    }
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
