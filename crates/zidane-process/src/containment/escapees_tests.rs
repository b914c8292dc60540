use std::process::{Child, Command, Stdio};
use std::time::Duration;

use zidane_context::TaskId;

use super::*;
use crate::containment::owner_marker::{MarkedWork, OWNER_MARKER_ENV, OwnerId, OwnerMarker};

fn spawn_marked(script: &str, marker: OwnerMarker) -> Child {
    Command::new("/bin/sh")
        .args(["-c", script])
        .env(OWNER_MARKER_ENV, marker.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn count_marked(marker: OwnerMarker) -> usize {
    proc_scan::scan_marked()
        .unwrap()
        .iter()
        .filter(|p| p.marker == marker)
        .count()
}

#[test]
fn ends_every_process_of_the_marker_even_outside_the_group_and_spares_others() {
    let owner = OwnerId::for_new_context();
    let target = owner.marker(MarkedWork::Task(TaskId::from_number(1)));
    let neighbour = owner.marker(MarkedWork::Task(TaskId::from_number(2)));
    let mut escaping = spawn_marked("setsid sleep 1000 & exec sleep 1000", target);
    let bound = Some(crate::containment::scan_plan::ScanBound::spawned_now(
        escaping.id(),
    ));
    let mut other = spawn_marked("exec sleep 1000", neighbour);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // Both shells must have become `sleep` (a scan may see them before their exec).
    let sleeping = |marker| {
        proc_scan::scan_marked()
            .unwrap()
            .iter()
            .filter(|p| p.marker == marker && p.command_line == "sleep 1000")
            .count()
    };
    while sleeping(target) < 2 || sleeping(neighbour) < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "processes did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    // Bounded by the leader, as a task kill is: the escapee must still be found.
    let report = end_marked(|p| p.marker == target, bound, Duration::from_secs(5)).unwrap();

    assert_eq!(report.ended.len(), 2, "{report:?}");
    assert!(report.survivors.is_empty());
    assert!(report.ended.iter().all(|p| p.command_line == "sleep 1000"));
    assert_eq!(count_marked(target), 0);
    escaping.wait().unwrap();
    assert_eq!(
        other.try_wait().unwrap(),
        None,
        "another task's process was ended"
    );
    assert_eq!(count_marked(neighbour), 1);
    other.kill().unwrap();
    other.wait().unwrap();
}

#[test]
fn nothing_selected_is_an_empty_report() {
    let report = end_marked(|_| false, None, Duration::from_secs(5)).unwrap();
    assert_eq!(report, EndReport::default());
}

#[test]
fn a_bound_skips_processes_forked_before_the_leader() {
    let owner = OwnerId::for_new_context();
    let marker = owner.marker(MarkedWork::Task(TaskId::from_number(3)));
    let mut old = spawn_marked("exec sleep 1000", marker);
    let mut leader = Command::new("sleep").arg("1000").spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while count_marked(marker) < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "process did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let bound = crate::containment::scan_plan::ScanBound::spawned_now(leader.id());
    let found = proc_scan::scan_marked_bounded(Some(bound)).unwrap();
    if old.id() < leader.id() {
        // Pids did not wrap between the two spawns: the older process is skipped.
        assert!(found.iter().all(|p| p.marker != marker), "{found:?}");
    }
    // Unbounded, it is found.
    assert!(
        proc_scan::scan_marked()
            .unwrap()
            .iter()
            .any(|p| p.marker == marker)
    );
    for child in [&mut old, &mut leader] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
