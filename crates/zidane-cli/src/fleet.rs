//! `--restate`: running every task on a fleet of `zidane-worker`s behind a Restate
//! server instead of this machine.

use std::sync::Arc;

use clap::Args;
use zidane::restate::RestateContext;
use zidane_mcp::RemoteContexts;

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
    /// `None` without `--restate`. Call inside a tokio runtime.
    pub(crate) async fn contexts(&self) -> Result<Option<RemoteContexts>, CliError> {
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
        let what = format!("Restate at {ingress}, workers {}", workers.join(", "));
        Ok(Some(RemoteContexts::new(what, move || {
            RestateContext::new(&ingress, workers.iter().map(String::as_str))
                .map(|context| Arc::new(context) as _)
                .map_err(|error| error.to_string())
        })))
    }
}

fn fleet_error(reason: &str) -> CliError {
    CliError::Fleet(reason.to_owned())
}
