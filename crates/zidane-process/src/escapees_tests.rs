use std::process::{Child, Command, Stdio};
use std::time::Duration;

use zidane_context::TaskId;

use super::*;
use crate::owner_marker::{MarkedWork, OWNER_MARKER_VAR, OwnerId, OwnerMarker};

fn spawn_marked(script: &str, marker: OwnerMarker) -> Child {
    Command::new("/bin/sh")
        .args(["-c", script])
        .env(OWNER_MARKER_VAR, marker.to_string())
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
    let mut other = spawn_marked("exec sleep 1000", neighbour);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while count_marked(target) < 2 || count_marked(neighbour) < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "processes did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    let report = end_marked(|p| p.marker == target, Duration::from_secs(5)).unwrap();

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
    let report = end_marked(|_| false, Duration::from_secs(5)).unwrap();
    assert_eq!(report, EndReport::default());
}
