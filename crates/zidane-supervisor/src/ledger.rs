//! Who tells a detached task's end: exactly one session's model, once, across sessions,
//! supervisor crashes and reloads.
//!
//! The rules, for an ended task of workspace W:
//! 1. Once a session said it told its model (`told`), no session tells it again.
//! 2. The session that started it tells it while that session's host runs: its exit
//!    is pushed to it as any task's.
//! 3. Otherwise the first session of W that lists it claims it and tells it. The claim
//!    holds while that session's host runs; if the host dies before saying it told, the
//!    claim lapses and the next session of W claims it. So with two sessions connected
//!    the one that started the task is told; failing that, the first to look.
//!
//! An end is thus told at most once whatever the order of lists, crashes and reloads
//! (the ledger is on disk before a claim is answered), and at least once as soon as a
//! session of the workspace lives long enough to list it and say it told.

use serde::{Deserialize, Serialize};
use zidane_process::ProcessStamp;

/// A session as the ledger knows it: its id and, while it runs, its host process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Teller {
    /// The session's id.
    pub session: String,
    /// Its host process; `None` for one without a stamp, which counts as gone once
    /// another session asks.
    pub host: Option<ProcessStamp>,
}

/// The telling of one task's end.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// The session whose model was told.
    #[serde(default)]
    pub told: Option<String>,
    /// The session telling it now.
    #[serde(default)]
    pub claim: Option<Teller>,
}

/// What a session listing an ended task is to do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Tell its model now (then say so with `told`).
    Tell,
    /// Not tell it: it was told, or another session is telling it.
    Leave,
}

impl Ledger {
    /// What `asker` is to do with the ended task started by `origin`; records a claim
    /// when it is to tell. `runs` says whether a host process still runs.
    pub fn offer(
        &mut self,
        asker: &Teller,
        origin: &Teller,
        runs: impl Fn(&ProcessStamp) -> bool,
    ) -> Offer {
        if self.told.is_some() {
            return Offer::Leave;
        }
        let alive = |teller: &Teller| teller.host.as_ref().is_some_and(&runs);
        if let Some(claim) = &self.claim {
            if claim.session == asker.session {
                return Offer::Tell;
            }
            if alive(claim) {
                return Offer::Leave;
            }
        }
        if origin.session != asker.session && alive(origin) {
            return Offer::Leave;
        }
        self.claim = Some(asker.clone());
        Offer::Tell
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

    fn teller(n: u8, alive: bool, generation: u64) -> Teller {
        Teller {
            session: format!("s{n}"),
            host: Some(ProcessStamp {
                pid: u32::from(n) + 1,
                start_time: generation * 2 + u64::from(!alive),
            }),
        }
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// Session n lists the task (and, when told to tell, tells its model).
        List(u8),
        /// Session n says it told (only meaningful after it was offered Tell).
        Told(u8),
        /// Session n's host dies.
        Crash(u8),
        /// The supervisor dies and the next one reads the ledger back.
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
            let mut alive: HashSet<u8> = (0..4).collect();
            if !origin_alive {
                alive.remove(&0);
            }
            let generation = 7;
            let runs = |alive: &HashSet<u8>| {
                let alive = alive.clone();
                move |stamp: &ProcessStamp| {
                    stamp.start_time == generation * 2
                        && alive.contains(&u8::try_from(stamp.pid - 1).unwrap())
                }
            };
            let origin = teller(0, true, generation);
            let mut ledger = Ledger::default();
            // Sessions that were offered Tell and have not crashed since.
            let mut telling: HashSet<u8> = HashSet::new();
            let mut told_by: Vec<u8> = Vec::new();
            for step in steps {
                match step {
                    Step::List(n) if alive.contains(&n) => {
                        let me = teller(n, true, generation);
                        if ledger.offer(&me, &origin, runs(&alive)) == Offer::Tell {
                            // No two live sessions are ever telling at once.
                            prop_assert!(
                                telling.iter().all(|other| *other == n || !alive.contains(other)),
                                "{n} told to tell while {telling:?} are"
                            );
                            telling.insert(n);
                        }
                    }
                    Step::Told(n) if alive.contains(&n) && telling.contains(&n) => {
                        if ledger.told(&format!("s{n}")) {
                            told_by.push(n);
                        }
                        telling.remove(&n);
                    }
                    Step::Crash(n) => {
                        alive.remove(&n);
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
                && let Some(n) = (0..4u8).find(|n| alive.contains(n))
                && telling.iter().all(|other| *other == n)
                && (n == 0 || !alive.contains(&0))
            {
                let me = teller(n, true, generation);
                prop_assert_eq!(ledger.offer(&me, &origin, runs(&alive)), Offer::Tell);
            }
        }
    }

    #[test]
    fn the_starting_session_tells_while_it_runs() {
        let origin = teller(0, true, 1);
        let other = teller(1, true, 1);
        let mut ledger = Ledger::default();
        let runs = |_: &ProcessStamp| true;
        assert_eq!(ledger.offer(&other, &origin, runs), Offer::Leave);
        assert_eq!(ledger.offer(&origin, &origin, runs), Offer::Tell);
        assert!(ledger.told("s0"));
        assert_eq!(ledger.offer(&origin, &origin, runs), Offer::Leave);
        assert!(!ledger.told("s1"));
    }

    #[test]
    fn a_dead_claim_lapses() {
        let origin = teller(0, true, 1);
        let first = teller(1, true, 1);
        let second = teller(2, true, 1);
        let mut ledger = Ledger::default();
        let none_run = |_: &ProcessStamp| false;
        assert_eq!(ledger.offer(&first, &origin, none_run), Offer::Tell);
        assert_eq!(ledger.offer(&second, &origin, none_run), Offer::Tell);
        assert_eq!(
            ledger.claim.as_ref().map(|c| c.session.as_str()),
            Some("s2")
        );
        let only_second = |stamp: &ProcessStamp| stamp.pid == 3;
        assert_eq!(ledger.offer(&first, &origin, only_second), Offer::Leave);
    }
}
