//! Waits sized to the host. An MCP client gives up on a request after its own ceiling
//! (Codex at 300 s; Zed, Cline, Claude Desktop and opencode at 60 s; Cursor, VS Code and
//! goose at about 5 minutes), and a wait it gave up on answers nobody. So under MCP
//! `wait_task`'s default and cap stay below the connected client's ceiling, known by the
//! name in its `clientInfo`, or below 60 s for a client not known here.

use std::time::Duration;

use rmcp::model::{Implementation, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Map, Value};
use tokio::task::JoinHandle;
use zidane_tools::{DEFAULT_WAIT_TIMEOUT, WaitLimits};

use crate::options::MoveAfter;

/// The cap for a client whose ceiling is not known: under the shortest common one.
pub const MCP_UNKNOWN_CLIENT_WAIT_CAP: Duration = Duration::from_secs(50);

/// How often a wait that carried a `progressToken` says it is still waiting, at most:
/// well within any client's ceiling, and several times within a short cap.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Ends its progress reports when dropped, with the call.
pub(crate) struct Progress(JoinHandle<()>);

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends `notifications/progress` for `token` every few seconds, the seconds waited so
/// far as the progress, until dropped: a client that resets its request timeout on
/// progress then keeps the wait.
pub(crate) fn report_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    limits: WaitLimits,
) -> Progress {
    let gap = PROGRESS_EVERY
        .min(limits.max / 5)
        .max(Duration::from_millis(50));
    Progress(tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        let mut every = tokio::time::interval_at(started + gap, gap);
        loop {
            every.tick().await;
            let waited = started.elapsed();
            let mut param = ProgressNotificationParam::new(token.clone(), waited.as_secs_f64());
            param.message = Some(format!(
                "still waiting after {}",
                zidane_wire::format_duration(waited)
            ));
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
    }))
}

/// A margin under the client's known request ceiling, else
/// [`MCP_UNKNOWN_CLIENT_WAIT_CAP`]: how long one call of this client may safely run.
fn under_ceiling(client: Option<&Implementation>) -> Duration {
    crate::clients::known(client)
        .and_then(|known| known.ceiling)
        .map_or(MCP_UNKNOWN_CLIENT_WAIT_CAP, |ceiling| {
            ceiling.saturating_sub((ceiling / 10).max(Duration::from_secs(10)))
        })
}

/// The wait limits for a client: the cap `cap` when the server was given one, else a
/// margin under the client's known ceiling, else [`MCP_UNKNOWN_CLIENT_WAIT_CAP`]; the
/// default is the usual one when it fits under the cap.
pub(crate) fn wait_limits(client: Option<&Implementation>, cap: Option<Duration>) -> WaitLimits {
    let cap = cap.unwrap_or_else(|| under_ceiling(client));
    WaitLimits {
        default: DEFAULT_WAIT_TIMEOUT.min(cap),
        max: cap,
    }
}

/// How long a foreground `shell` command of `client` runs before it moves to the
/// background: the same margin under its ceiling as a wait's cap, unless the server says
/// otherwise; `None` when it never moves.
pub(crate) fn move_budget(
    client: Option<&Implementation>,
    move_after: MoveAfter,
) -> Option<Duration> {
    match move_after {
        MoveAfter::ClientCeiling => Some(under_ceiling(client)),
        MoveAfter::Fixed(after) => Some(after),
        MoveAfter::Never => None,
    }
}

/// `wait_task`'s input with `timeout_ms` set within `limits` ([`WaitLimits::apply`]):
/// the default when absent, the cap when over it. A value that is not a number of
/// milliseconds is left for the tool to refuse in its own words.
pub(crate) fn fit_wait(input: &mut Map<String, Value>, limits: WaitLimits) {
    let asked = match input.get("timeout_ms") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_u64() {
            Some(ms) => Some(ms),
            None => return,
        },
    };
    let fitted = limits.apply(asked).as_millis();
    input.insert(
        "timeout_ms".to_owned(),
        Value::from(u64::try_from(fitted).unwrap_or(u64::MAX)),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn client(name: &str) -> Implementation {
        Implementation::new(name, "1.0")
    }

    #[test]
    fn known_clients_get_a_margin_under_their_ceiling_and_others_under_a_minute() {
        let codex = wait_limits(Some(&client("codex-mcp-client")), None);
        assert_eq!(codex.max, Duration::from_secs(270));
        assert_eq!(codex.default, DEFAULT_WAIT_TIMEOUT);
        let zed = wait_limits(Some(&client("Zed")), None);
        assert_eq!(zed.max, Duration::from_secs(50));
        assert_eq!(zed.default, Duration::from_secs(50));
        let unknown = wait_limits(Some(&client("my-host")), None);
        assert_eq!(unknown.max, MCP_UNKNOWN_CLIENT_WAIT_CAP);
        assert!(wait_limits(None, None).max < Duration::from_secs(60));
        let flagged = wait_limits(Some(&client("Zed")), Some(Duration::from_secs(600)));
        assert_eq!(flagged.max, Duration::from_secs(600));
    }

    #[test]
    fn a_foreground_command_moves_under_the_clients_ceiling_as_a_wait_is_capped() {
        let budget = |name: &str, after| move_budget(Some(&client(name)), after);
        assert_eq!(
            budget("codex-mcp-client", MoveAfter::ClientCeiling),
            Some(Duration::from_secs(270))
        );
        assert_eq!(
            budget("opencode", MoveAfter::ClientCeiling),
            Some(Duration::from_secs(50))
        );
        assert_eq!(
            budget("my-host", MoveAfter::ClientCeiling),
            Some(MCP_UNKNOWN_CLIENT_WAIT_CAP)
        );
        assert_eq!(
            move_budget(None, MoveAfter::ClientCeiling),
            Some(MCP_UNKNOWN_CLIENT_WAIT_CAP)
        );
        assert_eq!(
            budget("codex", MoveAfter::Fixed(Duration::from_secs(1))),
            Some(Duration::from_secs(1))
        );
        assert_eq!(budget("codex", MoveAfter::Never), None);
    }

    #[test]
    fn a_wait_is_fitted_into_the_limits_and_bad_values_are_left_alone() {
        let limits = WaitLimits {
            default: Duration::from_secs(20),
            max: Duration::from_secs(50),
        };
        let fitted = |input: Value| {
            let mut input = input.as_object().unwrap().clone();
            fit_wait(&mut input, limits);
            input["timeout_ms"].clone()
        };
        assert_eq!(fitted(json!({})), 20_000);
        assert_eq!(fitted(json!({ "timeout_ms": 1000 })), 1000);
        assert_eq!(fitted(json!({ "timeout_ms": 600_000 })), 50_000);
        assert_eq!(fitted(json!({ "timeout_ms": -5 })), -5);
        assert_eq!(fitted(json!({ "timeout_ms": "soon" })), "soon");
    }
}
