use std::process::Child;
use std::time::{Duration, Instant};

use zidane_context::TaskId;

use super::*;
use crate::containment::orphan_sweep::self_and_ancestors;
use crate::containment::owner_marker::{
    MarkedWork, OWNER_MARKER_ENV, OwnerId, OwnerMarker, env_value,
};
use crate::containment::procfs::{ProcLiveness, liveness, parse_stat, start_time, thread_group};
use crate::containment::scan_plan::{PID_ORDER_TRUST, Plan, ScanBound, last_pid};

/// A `sleep 1000` with `env` added to its environment; killed and reaped on drop.
struct Sleeper(Child);

impl Sleeper {
    fn start(env: &[(&str, &str)]) -> Self {
        Self(crate::test_children::sleep_1000(env))
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn stat_fields_are_counted_from_the_last_parenthesis() {
    let text =
        "123 (a b) c) (x) S 77 123 123 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 456789 1000 200";
    let stat = parse_stat(text).unwrap();
    assert_eq!(stat.state, 'S');
    assert_eq!(stat.ppid, 77);
    assert_eq!(stat.flags, 4_194_304);
    assert!(!stat.is_ending());
    assert_eq!(stat.start_time, 456_789);
    let exiting = text.replace(" 4194304 ", " 4194308 ");
    assert!(
        parse_stat(&exiting).unwrap().is_ending(),
        "PF_EXITING is set"
    );
    assert_eq!(parse_stat("123 (x) S 1"), None);
    assert_eq!(parse_stat(""), None);
}

#[test]
fn env_value_finds_the_exact_variable() {
    let environ =
        b"ZIDANE_TASK_OWNER_X=no\0PATH=/bin\0ZIDANE_TASK_OWNER=yes\0ZIDANE_TASK_OWNER=second\0";
    assert_eq!(env_value(environ, "ZIDANE_TASK_OWNER"), Some(&b"yes"[..]));
    assert_eq!(env_value(environ, "PATH"), Some(&b"/bin"[..]));
    assert_eq!(env_value(environ, "HOME"), None);
    assert_eq!(env_value(b"", "HOME"), None);
}

#[test]
fn scan_finds_a_marked_process_with_its_details_and_skips_unmarked_ones() {
    let marker = OwnerId::for_new_context().marker(MarkedWork::Task(TaskId::from_number(9)));
    let marked = Sleeper::start(&[(OWNER_MARKER_ENV, &marker.to_string())]);
    let forged = Sleeper::start(&[(OWNER_MARKER_ENV, "z1:not-a-marker")]);
    let plain = Sleeper::start(&[]);
    let found = scan_marked().unwrap();
    let ours: Vec<_> = found.iter().filter(|p| p.marker == marker).collect();
    assert_eq!(ours.len(), 1, "{found:?}");
    assert_eq!(ours[0].pid, marked.pid());
    assert_eq!(ours[0].command_line, "sleep 1000");
    assert_eq!(Some(ours[0].start_time), start_time(marked.pid()));
    assert!(
        found
            .iter()
            .all(|p| p.pid != forged.pid() && p.pid != plain.pid())
    );
    assert!(found.iter().all(|p| p.pid != std::process::id()));
}

#[test]
fn liveness_tells_running_zombie_reaped_and_recycled_apart() {
    let mut sleeper = Sleeper::start(&[]);
    let pid = sleeper.pid();
    let start = start_time(pid).unwrap();
    assert_eq!(liveness(pid, start), ProcLiveness::Alive);
    assert_eq!(liveness(pid, start + 1), ProcLiveness::Gone);
    sleeper.0.kill().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while liveness(pid, start) != ProcLiveness::Gone {
        assert!(
            std::time::Instant::now() < deadline,
            "zombie not read as gone"
        );
        std::thread::yield_now();
    }
    sleeper.0.wait().unwrap();
    assert_eq!(liveness(pid, start), ProcLiveness::Gone);
}

#[test]
fn command_line_and_ancestry_of_this_process() {
    let me = std::process::id();
    let chain = self_and_ancestors();
    assert_eq!(chain[0], me);
    if let Some(parent) = stat(me).map(|s| s.ppid).filter(|&p| p > 1) {
        assert_eq!(chain.get(1), Some(&parent));
    }
    let line = command_line(me).unwrap();
    assert!(!line.is_empty());
    assert_eq!(command_line(u32::MAX), None);
}

/// A marker of its own for one test.
fn test_marker(number: u64) -> OwnerMarker {
    OwnerId::for_new_context().marker(MarkedWork::Task(TaskId::from_number(number)))
}

/// Starts a marked `sleep 1000` and waits until it has exec'd (its command line shows).
fn marked_sleeper(marker: OwnerMarker) -> Sleeper {
    let sleeper = Sleeper::start(&[(OWNER_MARKER_ENV, &marker.to_string())]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while command_line(sleeper.pid()).as_deref() != Some("sleep 1000") {
        assert!(Instant::now() < deadline, "sleep did not start");
        std::thread::sleep(Duration::from_millis(1));
    }
    sleeper
}

#[test]
fn a_bounded_scan_finds_what_the_full_listing_finds_since_its_bound() {
    let marker = test_marker(21);
    let sleeper = marked_sleeper(marker);
    let bound = ScanBound::spawned_now(sleeper.pid());
    let ours = |found: Vec<MarkedProcess>| -> Vec<u32> {
        found
            .into_iter()
            .filter(|p| p.marker == marker)
            .map(|p| p.pid)
            .collect()
    };
    assert_eq!(
        ours(scan_marked_bounded(Some(bound)).unwrap()),
        vec![sleeper.pid()]
    );
    assert_eq!(ours(scan_marked().unwrap()), vec![sleeper.pid()]);
}

#[test]
fn a_quick_scan_probes_a_fresh_bound_and_declines_a_wide_or_old_one() {
    let marker = test_marker(22);
    // A fresh bound is a handful of pids, unless the machine forked more than the
    // quick range between our spawn and our scan: a few tries make that moot.
    let found = (0..20).find_map(|_| {
        let sleeper = marked_sleeper(marker);
        let found = scan_marked_quick(ScanBound::spawned_now(sleeper.pid()))?;
        Some((sleeper.pid(), found))
    });
    let (pid, found) = found.expect("a fresh bound was never quick to scan");
    assert!(
        found.iter().any(|p| p.marker == marker && p.pid == pid),
        "{found:?}"
    );

    // Pids up from 2: more than the quick range on any machine that built this test.
    let wide = ScanBound::spawned_now(2);
    assert!(last_pid().unwrap() - 2 >= QUICK_RANGE);
    assert_eq!(scan_marked_quick(wide), None, "pid 2 up is no quick range");
    let long_ago = Instant::now()
        .checked_sub(PID_ORDER_TRUST + Duration::from_secs(1))
        .expect("the machine has been up longer than PID_ORDER_TRUST");
    let old = ScanBound {
        first_pid: std::process::id(),
        spawned_at: long_ago,
    };
    assert_eq!(old.plan(), Plan::List { lowest: None });
    assert_eq!(scan_marked_quick(old), None);
}

#[test]
fn a_thread_belongs_to_its_process() {
    let me = std::process::id();
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        let tid: u32 = std::fs::read_link("/proc/thread-self")
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        tid_tx.send(tid).unwrap();
        // Alive until the test has looked at it.
        let _ = done_rx.recv();
    });
    let tid = tid_rx.recv().unwrap();
    assert_ne!(tid, me);
    assert_eq!(thread_group(me), Some(me));
    assert_eq!(thread_group(tid), Some(me), "a thread id names its process");
    done_tx.send(()).unwrap();
    worker.join().unwrap();
}

/// The probe plan and the quick scan are speed tricks: whatever they find of a task's
/// processes, the plain full listing finds too, with the same details.
#[test]
fn the_probe_and_the_quick_scan_agree_with_the_full_listing() {
    let marker = test_marker(23);
    let found = (0..20).find_map(|_| {
        let sleeper = marked_sleeper(marker);
        let bound = ScanBound::spawned_now(sleeper.pid());
        let Plan::Probe { first, last } = bound.plan() else {
            return None;
        };
        let quick = scan_marked_quick(bound)?;
        let probed = scan_planned(Plan::Probe { first, last }, Patience::WaitForExec).ok()?;
        let listed = scan_planned(Plan::List { lowest: None }, Patience::WaitForExec).ok()?;
        Some((sleeper, quick, probed, listed))
    });
    let (sleeper, quick, probed, listed) = found.expect("a fresh bound was never probed");
    let ours = |found: &[MarkedProcess]| -> Vec<MarkedProcess> {
        let mut ours: Vec<_> = found
            .iter()
            .filter(|p| p.marker == marker)
            .cloned()
            .collect();
        ours.sort_by_key(|p| p.pid);
        ours
    };
    assert_eq!(ours(&listed).len(), 1, "{listed:?}");
    assert_eq!(ours(&listed)[0].pid, sleeper.pid());
    assert_eq!(ours(&probed), ours(&listed));
    assert_eq!(ours(&quick), ours(&listed));
}
