//! Who tells a detached task's end: the shared rules of
//! [`ToldLedger`](zidane_context::ToldLedger), with a session known by its host process,
//! which the supervisor checks on this machine.

use serde::{Deserialize, Serialize};
use zidane_context::Claimant;
use zidane_process::ProcessStamp;

pub use zidane_context::TellOffer as Offer;

/// A session as the ledger knows it: its id and, while it runs, its host process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Teller {
    /// The session's id.
    pub session: String,
    /// Its host process; `None` for one without a stamp, which counts as gone once
    /// another session asks.
    pub host: Option<ProcessStamp>,
}

impl Claimant for Teller {
    fn session(&self) -> &str {
        &self.session
    }
}

impl Teller {
    /// Whether its host process still runs (the same process: pid and start time).
    pub fn runs(&self) -> bool {
        self.host.as_ref().is_some_and(ProcessStamp::runs)
    }
}

/// The telling of one detached task's end.
pub type Ledger = zidane_context::ToldLedger<Teller>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_whose_host_is_gone_loses_its_claim() {
        let me = ProcessStamp::current();
        let live = Teller {
            session: "live".to_owned(),
            host: me,
        };
        let gone = Teller {
            session: "gone".to_owned(),
            // This process's pid with another start time: a reused pid, not this one.
            host: me.map(|stamp| ProcessStamp {
                start_time: stamp.start_time + 1,
                ..stamp
            }),
        };
        assert!(live.runs() || me.is_none());
        assert!(!gone.runs());
        let mut ledger = Ledger::default();
        assert_eq!(ledger.offer(&gone, &gone, Teller::runs), Offer::Tell);
        assert_eq!(ledger.offer(&live, &gone, Teller::runs), Offer::Tell);
        assert_eq!(
            ledger.claim.as_ref().map(|c| c.session.as_str()),
            Some("live")
        );
        // The ledger as stored: the claimant's host stamp comes back with it.
        let text = serde_json::to_string(&ledger).unwrap();
        let back: Ledger = serde_json::from_str(&text).unwrap();
        assert_eq!(back, ledger);
    }
}
