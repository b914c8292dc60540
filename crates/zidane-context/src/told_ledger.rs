//! Who tells a shared task's end: exactly one session's model, once, across sessions,
//! crashes and reloads. A task that outlives the session that started it (a detached
//! task under the per-user supervisor, a durable task on a fleet) is seen by every
//! session of its workspace; this ledger, kept beside the task wherever the task's
//! state lives, decides which one tells its model.
//!
//! The rules, for an ended task:
//! 1. Once a session said it told its model ([`ToldLedger::told`]), no session tells it
//!    again.
//! 2. The session that started it tells it while that session lives.
//! 3. Otherwise the first session that lists it claims it and tells it. The claim holds
//!    while that session lives; if it dies before saying it told, the claim lapses and
//!    the next session claims it. So with two sessions connected the one that started
//!    the task is told; failing that, the first to look.
//!
//! "Lives" is the keeper's to judge ([`ToldLedger::offer`]'s `alive`): the supervisor
//! checks the session's host process, a fleet worker the session's last visit. An end
//! is thus told at most once whatever the order of lists, crashes and reloads (the
//! ledger is stored before a claim is answered), and at least once as soon as a session
//! lives long enough to list it and say it told.
//!
//! ```
//! use zidane_context::{TellOffer, ToldLedger};
//!
//! let mut ledger = ToldLedger::<String>::default();
//! let (starter, other) = ("s1".to_owned(), "s2".to_owned());
//! // The starting session lives: it tells, not another one.
//! assert_eq!(ledger.offer(&other, &starter, |_| true), TellOffer::Leave);
//! assert_eq!(ledger.offer(&starter, &starter, |_| true), TellOffer::Tell);
//! assert!(ledger.told("s1"));
//! assert_eq!(ledger.offer(&other, &starter, |_| false), TellOffer::Leave);
//! ```

use serde::{Deserialize, Serialize};

/// A session as a [`ToldLedger`] knows it.
pub trait Claimant: Clone {
    /// The session's id.
    fn session(&self) -> &str;
}

impl Claimant for String {
    fn session(&self) -> &str {
        self
    }
}

/// The telling of one task's end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
pub struct ToldLedger<C> {
    /// The session whose model was told.
    #[serde(default)]
    pub told: Option<String>,
    /// The session telling it now.
    #[serde(default)]
    pub claim: Option<C>,
}

impl<C> Default for ToldLedger<C> {
    fn default() -> Self {
        Self {
            told: None,
            claim: None,
        }
    }
}

/// What a session listing an ended task is to do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TellOffer {
    /// Tell its model now (then say so with [`ToldLedger::told`]).
    Tell,
    /// Not tell it: it was told, or another session is telling it.
    Leave,
}

impl<C: Claimant> ToldLedger<C> {
    /// What `asker` is to do with the ended task started by `origin`; records a claim
    /// when it is to tell. `alive` says whether a session still lives.
    pub fn offer(&mut self, asker: &C, origin: &C, alive: impl Fn(&C) -> bool) -> TellOffer {
        if self.told.is_some() {
            return TellOffer::Leave;
        }
        if let Some(claim) = &self.claim {
            if claim.session() == asker.session() {
                return TellOffer::Tell;
            }
            if alive(claim) {
                return TellOffer::Leave;
            }
        }
        if origin.session() != asker.session() && alive(origin) {
            return TellOffer::Leave;
        }
        self.claim = Some(asker.clone());
        TellOffer::Tell
    }

    /// `session` told its model. False (and nothing changes) when another session was
    /// told already.
    pub fn told(&mut self, session: &str) -> bool {
        if self.told.as_deref().is_some_and(|told| told != session) {
            return false;
        }
        self.told = Some(session.to_owned());
        self.claim = None;
        true
    }

    /// Whether some session's model was told.
    pub fn is_told(&self) -> bool {
        self.told.is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    fn session(n: u8) -> String {
        format!("s{n}")
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// Session n lists the task (and, when told to tell, tells its model).
        List(u8),
        /// Session n says it told (only meaningful after it was offered Tell).
        Told(u8),
        /// Session n dies.
        Crash(u8),
        /// The keeper dies and the next one reads the ledger back.
        Reload,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u8..4).prop_map(Step::List),
            (0u8..4).prop_map(Step::Told),
            (0u8..4).prop_map(Step::Crash),
            Just(Step::Reload),
        ]
    }

    proptest! {
        #[test]
        fn an_end_is_told_at_most_once_and_always_to_a_live_session(
            origin_alive in any::<bool>(),
            steps in prop::collection::vec(step(), 0..40),
        ) {
            let mut alive: HashSet<String> = (0..4).map(session).collect();
            if !origin_alive {
                alive.remove(&session(0));
            }
            let origin = session(0);
            let mut ledger = ToldLedger::<String>::default();
            // Sessions that were offered Tell and have not crashed since.
            let mut telling: HashSet<u8> = HashSet::new();
            let mut told_by: Vec<u8> = Vec::new();
            for step in steps {
                match step {
                    Step::List(n) if alive.contains(&session(n)) => {
                        let offer = ledger.offer(&session(n), &origin, |s| alive.contains(s));
                        if offer == TellOffer::Tell {
                            // No two live sessions are ever telling at once.
                            prop_assert!(
                                telling.iter().all(|other| *other == n || !alive.contains(&session(*other))),
                                "{n} told to tell while {telling:?} are"
                            );
                            telling.insert(n);
                        }
                    }
                    Step::Told(n) if alive.contains(&session(n)) && telling.contains(&n) => {
                        if ledger.told(&session(n)) {
                            told_by.push(n);
                        }
                        telling.remove(&n);
                    }
                    Step::Crash(n) => {
                        alive.remove(&session(n));
                        telling.remove(&n);
                    }
                    Step::Reload => {
                        let text = serde_json::to_string(&ledger).unwrap();
                        ledger = serde_json::from_str(&text).unwrap();
                    }
                    _ => {}
                }
            }
            prop_assert!(told_by.len() <= 1, "told by {told_by:?}");
            // Liveness: when it is untold and a live session lists it with no other
            // live session telling, that session is told to tell.
            if told_by.is_empty()
                && let Some(n) = (0..4u8).find(|n| alive.contains(&session(*n)))
                && telling.iter().all(|other| *other == n)
                && (n == 0 || !alive.contains(&origin))
            {
                prop_assert_eq!(
                    ledger.offer(&session(n), &origin, |s| alive.contains(s)),
                    TellOffer::Tell
                );
            }
        }
    }

    #[test]
    fn the_starting_session_tells_while_it_lives() {
        let (origin, other) = (session(0), session(1));
        let mut ledger = ToldLedger::<String>::default();
        assert_eq!(ledger.offer(&other, &origin, |_| true), TellOffer::Leave);
        assert_eq!(ledger.offer(&origin, &origin, |_| true), TellOffer::Tell);
        assert!(ledger.told("s0"));
        assert_eq!(ledger.offer(&origin, &origin, |_| true), TellOffer::Leave);
        assert!(!ledger.told("s1"));
    }

    #[test]
    fn a_dead_claim_lapses() {
        let (origin, first, second) = (session(0), session(1), session(2));
        let mut ledger = ToldLedger::<String>::default();
        assert_eq!(ledger.offer(&first, &origin, |_| false), TellOffer::Tell);
        assert_eq!(ledger.offer(&second, &origin, |_| false), TellOffer::Tell);
        assert_eq!(ledger.claim.as_deref(), Some("s2"));
        assert_eq!(
            ledger.offer(&first, &origin, |s| s == "s2"),
            TellOffer::Leave
        );
    }
}
