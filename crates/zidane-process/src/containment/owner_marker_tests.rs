use proptest::prelude::*;

use super::*;

fn owner(pid: u32, start_time: u64, nonce: u64) -> OwnerId {
    OwnerId {
        pid,
        start_time,
        nonce,
    }
}

#[test]
fn token_has_the_documented_shape() {
    let marker = owner(4242, 987_654, 0x00c0_ffee_1234_5678)
        .marker(MarkedWork::Task(TaskId::from_number(3)));
    assert_eq!(marker.to_string(), "z1:4242:987654:00c0ffee12345678:bash_3");
    let exec = owner(1, 2, 3).marker(MarkedWork::Exec(7));
    assert_eq!(exec.to_string(), "z1:1:2:0000000000000003:exec_7");
    assert_eq!(exec.work.task_id(), None);
}

#[test]
fn malformed_tokens_are_not_ours() {
    for bad in [
        "",
        "z1",
        "z2:1:2:0000000000000001:bash_1",
        "z1:1:2:0000000000000001",
        "z1:1:2:0000000000000001:bash_1:extra",
        "z1:01:2:0000000000000001:bash_1",
        "z1:-1:2:0000000000000001:bash_1",
        "z1:4294967296:2:0000000000000001:bash_1",
        "z1:1::0000000000000001:bash_1",
        "z1:1:2:1:bash_1",
        "z1:1:2:000000000000000g:bash_1",
        "z1:1:2:0000000000000001:bash_01",
        "z1:1:2:0000000000000001:../x",
        " z1:1:2:0000000000000001:bash_1",
        "z1:1:2:0000000000000001:exec_",
        "z1:1:2:0000000000000001:exec_01",
        "z1:1:2:0000000000000001:exec_x",
    ] {
        assert_eq!(OwnerMarker::parse(bad), None, "accepted {bad:?}");
    }
}

#[test]
fn each_context_gets_its_own_nonce_and_this_process_as_owner() {
    let a = OwnerId::for_new_context();
    let b = OwnerId::for_new_context();
    assert_ne!(a.nonce, b.nonce);
    assert_eq!(a.pid, std::process::id());
    assert_eq!((a.pid, a.start_time), (b.pid, b.start_time));
    assert_ne!(a.start_time, 0, "start time read from /proc/self/stat");
    assert!(a.is_alive());
}

#[test]
fn a_dead_owner_and_a_recycled_pid_read_as_dead() {
    let mut child = crate::test_children::sleep_1000(&[]);
    let pid = child.id();
    let start_time = crate::containment::procfs::start_time(pid).unwrap();
    let live = owner(pid, start_time, 1);
    assert!(live.is_alive());
    // Same pid, other start time: what a recycled pid looks like.
    assert!(!owner(pid, start_time + 1, 1).is_alive());
    child.kill().unwrap();
    // Before the reap it is a zombie, and a zombie owner is dead.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while live.is_alive() {
        assert!(
            std::time::Instant::now() < deadline,
            "zombie still read as alive"
        );
        std::thread::yield_now();
    }
    child.wait().unwrap();
    assert!(!live.is_alive());
}

proptest! {
    #[test]
    fn format_parse_round_trip(pid in any::<u32>(), start in any::<u64>(), nonce in any::<u64>(), n in any::<u64>(), exec in any::<bool>()) {
        let work = if exec { MarkedWork::Exec(n) } else { MarkedWork::Task(TaskId::from_number(n)) };
        let marker = owner(pid, start, nonce).marker(work);
        prop_assert_eq!(OwnerMarker::parse(&marker.to_string()), Some(marker));
    }

    #[test]
    fn parse_accepts_only_what_format_writes(s in "z1:[0-9]{1,3}:[0-9]{1,3}:[0-9a-f]{14,17}:(bash|exec)_[0-9]{1,3}") {
        if let Some(marker) = OwnerMarker::parse(&s) {
            prop_assert_eq!(marker.to_string(), s);
        }
    }
}
